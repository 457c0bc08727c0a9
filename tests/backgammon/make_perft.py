"""Regenerate tests/backgammon/data/perft.txt from GNU Backgammon (``pip install gnubg-nn``).

Each line: ``POSITION_ID ROLL COUNT DIGEST CATEGORY``: the position (player on roll as
gnubg sees it), the roll, gnubg's number of distinct legal results, the first 16 hex
digits of SHA-256 over the sorted result Position IDs joined by spaces (results seen
from the same player, not swapped), and why the case was chosen. The rules core's
tests compare against this file, so they run without gnubg.

Cases come from seeded random self-play and from seeded random positions built to
hit the rare rules: checkers on the bar against closed or nearly closed boards,
primes, bear-offs, plays where one die or part of a double cannot be played.

Run: ``python tests/backgammon/make_perft.py`` (deterministic for a gnubg version).
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import gnubg_nn

START_ID = "4HPwATDgc/ABMA"
OUT = Path(__file__).parent / "data" / "perft.txt"
QUOTA = {
    "opening": 36,
    "contact": 700,
    "double": 400,
    "bar": 300,
    "closed": 150,
    "prime": 200,
    "bearoff": 400,
    "one_die": 250,
    "partial_double": 250,
    "no_move": 120,
}

Board = list[list[int]]


def results(board: Board, d1: int, d2: int) -> list[str]:
    """gnubg's distinct results as Position IDs seen from the mover."""
    ids = []
    for key in gnubg_nn.moves(board, d1, d2):
        opp, me = gnubg_nn.board_from_position_key(key)
        ids.append(gnubg_nn.position_id([list(opp), list(me)]))
    return sorted(ids)


def digest(ids: list[str]) -> str:
    return hashlib.sha256(" ".join(ids).encode()).hexdigest()[:16]


def categories(board: Board, d1: int, d2: int, ids: list[str]) -> list[str]:
    opp, me = board
    cats = []
    if not ids:
        cats.append("no_move")
    if me[24]:
        cats.append("bar")
        if sum(1 for p in range(18, 24) if opp[23 - p] >= 2) >= 5:
            cats.append("closed")
    run = best = 0
    for p in range(24):
        run = run + 1 if opp[p] >= 2 else 0
        best = max(best, run)
    if best >= 5:
        cats.append("prime")
    if not me[24] and not any(me[6:24]):
        cats.append("bearoff")
    cats.append("double" if d1 == d2 else "contact")
    return cats


def random_structured(rng: random.Random) -> Board:
    """A random legal position biased toward blocks, bar checkers and bear-offs."""
    while True:
        opp = [0] * 25
        me = [0] * 25
        kind = rng.choice(["closed", "prime", "bearoff", "bar", "scatter"])
        left_opp = 15
        if kind == "closed":
            for p in range(6):
                opp[p] = 2
            left_opp -= 12
            me[24] = rng.randint(1, 3)
        elif kind == "prime":
            start = rng.randint(0, 18)
            for p in range(start, start + rng.randint(5, 6)):
                opp[p] = 2
            left_opp -= sum(opp)
        while left_opp:
            p = rng.randint(0, 23)
            opp[p] += 1
            left_opp -= 1
        left_me = 15 - me[24]
        if kind == "bar":
            extra = rng.randint(1, 2)
            me[24] += extra
            left_me -= extra
        bear = kind == "bearoff"
        left_me -= rng.randint(0, 10) if bear else 0
        while left_me > 0:
            p = rng.randint(0, 5) if bear else rng.randint(0, 23)
            me[p] += 1
            left_me -= 1
        # No point may hold both colours: opp's point p is my point 23 - p.
        if all(not (me[p] and opp[23 - p]) for p in range(24)):
            return [opp, me]


def main() -> None:
    rng = random.Random(20261122)
    got: dict[str, list[str]] = {k: [] for k in QUOTA}
    seen: set[tuple[str, int, int]] = set()

    def consider(board: Board, d1: int, d2: int, forced: str | None = None) -> None:
        pid = gnubg_nn.position_id(board)
        if (pid, d1, d2) in seen:
            return
        keys = gnubg_nn.moves(board, d1, d2, 1)
        ids = results(board, d1, d2)
        cats = categories(board, d1, d2, ids)
        if keys:
            steps = len(keys[0][1])
            cats = [c for c in cats if c not in ("one_die", "partial_double")]
            if d1 != d2 and steps == 1:
                cats.insert(0, "one_die")
            if d1 == d2 and steps < 4:
                cats.insert(0, "partial_double")
        if forced:
            cats = [forced]
        for cat in cats:
            if len(got[cat]) < QUOTA[cat]:
                seen.add((pid, d1, d2))
                got[cat].append(f"{pid} {d1}{d2} {len(ids)} {digest(ids)} {cat}")
                return

    start = gnubg_nn.board_from_position_id(START_ID)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            consider([list(start[0]), list(start[1])], d1, d2, "opening")
    for _ in range(4000):
        board = [list(start[0]), list(start[1])]
        for _ply in range(120):
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
            consider(board, d1, d2)
            keys = sorted(gnubg_nn.moves(board, d1, d2))
            if keys:
                opp, me = gnubg_nn.board_from_position_key(rng.choice(keys))
                board = [list(opp), list(me)]
            if not any(board[1]):
                break
            board = [board[1], board[0]]
        board = random_structured(rng)
        for _ in range(4):
            consider(board, rng.randint(1, 6), rng.randint(1, 6))
        if all(len(got[k]) >= QUOTA[k] for k in QUOTA):
            break
    lines = [line for cat in QUOTA for line in got[cat]]
    header = "# POSITION_ID ROLL COUNT DIGEST CATEGORY -- made by make_perft.py from gnubg-nn\n"
    OUT.write_text(header + "\n".join(lines) + "\n")
    print({k: len(v) for k, v in got.items()})


if __name__ == "__main__":
    main()
