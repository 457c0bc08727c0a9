"""legal_plays: the exact output (plays, their order, their moves), and hits by checkers
landing on the same blot.

Seeded replays (bots, tests, benchmarks) pick plays by index, so the order of the plays
and the moves of each are part of the contract, not only the set of results that
``test_perft.py`` checks against gnubg. The digest below pins them; it was taken from
the generator before it was made faster, and must not change unless the order is
changed on purpose (then every seeded replay changes too).
"""

from __future__ import annotations

import hashlib
import random

from backgammon.board import BAR, Position
from backgammon.dice import Roll
from backgammon.moves import Move, Play, legal_plays
from tests.backgammon.helpers import position

ROLLS = [Roll(d1, d2) for d1 in range(1, 7) for d2 in range(1, 7) if d1 >= d2]
EXPECTED_DIGEST = "ac3ba634359b5a7367d920f5a33603307b1ee974ed9e2a547992fb891c8cf3af"
EXPECTED_CASES = 11_151


def _text(plays: list[Play]) -> str:
    return ";".join(
        " ".join(f"{m.src}/{m.dst}" for m in p.moves) + f"={p.result.side0:x},{p.result.side1:x}"
        for p in plays
    )


def _self_play(games: int, seed: int) -> tuple[int, str, dict[str, int]]:
    """Every roll in every position of seeded random self-play, hashed in order."""
    rng = random.Random(seed)
    digest = hashlib.sha256()
    cases = 0
    seen = {"bar_double": 0, "bar_two_dice": 0, "bear_off": 0, "hit": 0}
    for _ in range(games):
        pos = Position.start()
        player = 0
        for _ply in range(300):
            for roll in ROLLS:
                plays = legal_plays(pos, player, roll)
                digest.update(_text(plays).encode())
                digest.update(b"\n")
                cases += 1
                if pos.bar(player):
                    seen["bar_double" if roll.is_double else "bar_two_dice"] += 1
                if pos.off(player):
                    seen["bear_off"] += 1
                if any(p.result.bar(1 - player) > pos.bar(1 - player) for p in plays):
                    seen["hit"] += 1
            plays = legal_plays(pos, player, Roll(rng.randint(1, 6), rng.randint(1, 6)))
            if plays:
                pos = rng.choice(plays).result
            if pos.off(player) == 15:
                break
            player = 1 - player
    return cases, digest.hexdigest(), seen


def test_output_and_order_unchanged() -> None:
    cases, digest, seen = _self_play(games=6, seed=2024)
    assert min(seen.values()) >= 100, seen
    assert (cases, digest) == (EXPECTED_CASES, EXPECTED_DIGEST)


def _hits(plays: list[Play]) -> dict[tuple[Move, ...], int]:
    """The opponent's checkers on the bar after each play (player 0 moves)."""
    return {p.moves: p.result.bar(1) for p in plays}


def test_second_checker_on_a_hit_blot_does_not_hit_again() -> None:
    # Player 0 has checkers on 13 and 11, player 1 a blot on player 0's point 8.
    pos = position({13: 2, 11: 2, 6: 11}, {25 - 8: 1, 6: 14})
    plays = legal_plays(pos, 0, Roll(5, 3))
    both = [p for p in plays if sorted(m.dst for m in p.moves) == [8, 8]]
    assert len(both) == 1
    assert both[0].result.bar(1) == 1
    # Every play that lands on 8 puts exactly one checker on the bar.
    for moves, on_bar in _hits(plays).items():
        assert on_bar == (1 if any(m.dst == 8 for m in moves) else 0), moves


def test_double_onto_a_blot_hits_once() -> None:
    # 6-6 with two checkers on 13 and a blot on 7: both may land there, one hit.
    pos = position({13: 4, 6: 11}, {25 - 7: 1, 6: 14})
    plays = legal_plays(pos, 0, Roll(6, 6))
    assert plays
    for moves, on_bar in _hits(plays).items():
        assert on_bar == (1 if any(m.dst == 7 for m in moves) else 0), moves
    assert any(sum(m.dst == 7 for m in p.moves) >= 2 for p in plays)


def test_entering_checkers_hit_once() -> None:
    # Two on the bar and 4-4: both enter on 21, where the opponent has a blot.
    pos = position({13: 5, 6: 8}, {25 - 21: 1, 6: 14}, my_bar=2)
    plays = legal_plays(pos, 0, Roll(4, 4))
    assert plays
    for p in plays:
        assert p.moves[:2] == (Move(BAR, 21), Move(BAR, 21))
        assert p.result.bar(1) == 1
