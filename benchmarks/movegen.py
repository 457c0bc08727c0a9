"""Legal-play generation speed, ours against GNU Backgammon's C generator.

Builds a fixed, seeded mix of positions and rolls from random self-play (played with
gnubg's generator so the mix does not depend on ours), then times, on the same cases
in the same run: ``gnubg_nn.moves`` (gnubg's C code) and ``backgammon.legal_plays``
(every distinct play with its moves and resulting position). Also times validating
one submitted move, both from scratch (generating the roll's plays included) and as the
server does it (the plays were generated when the dice were rolled). Prints one JSON
object. Target (issue 2): our rate at least a
tenth of gnubg's, and a validation well under 1 ms.

``match_us_per_call`` is the server's own workload: every roll of seeded 1-point
matches between random players (:class:`backgammon.match.Match` calls
``legal_plays`` once per roll), timed the same way, in microseconds per call.

Run: ``python benchmarks/movegen.py [--games N] [--matches M] [--repeat R]``
(``pip install -e .[bench]``).
CPU time (``time.process_time``) is measured, best of ``--repeat`` runs, so other
processes on the machine disturb the figures less.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

import gnubg_nn

from backgammon.board import Player, Position
from backgammon.dice import Roll, SeededDice
from backgammon.events import DiceRolled
from backgammon.match import Action, Match, MatchOptions
from backgammon.moves import Move, legal_plays, legal_results
from backgammon.validate import validate_play

START_ID = "4HPwATDgc/ABMA"
GnubgCase = tuple[list[list[int]], int, int]


def make_cases(games: int, seed: int) -> list[GnubgCase]:
    """Positions and rolls met in ``games`` games of seeded random self-play."""
    rng = random.Random(seed)
    start = gnubg_nn.board_from_position_id(START_ID)
    cases: list[GnubgCase] = []
    for _ in range(games):
        board = [list(start[0]), list(start[1])]
        for _ply in range(200):
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
            cases.append((board, d1, d2))
            keys = sorted(gnubg_nn.moves(board, d1, d2))
            if keys:
                opp, me = gnubg_nn.board_from_position_key(rng.choice(keys))
                board = [list(opp), list(me)]
            if not any(board[1]):
                break
            board = [board[1], board[0]]
    return cases


def make_match_cases(matches: int, seed: int) -> list[tuple[Position, Player, Roll]]:
    """The position, player and roll of every roll in ``matches`` seeded 1-point matches
    between players who pick a random legal play (no cube, no resignations)."""
    cases: list[tuple[Position, Player, Roll]] = []
    for n in range(matches):
        rng = random.Random(seed + n)
        match = Match(MatchOptions(length=1), SeededDice(seed + n))
        while True:
            player = match.to_act
            before = match.position
            if player is None:
                if Action.START_GAME not in match.allowed(0):
                    break
                events = match.start_game()
            elif Action.ROLL in match.allowed(player):
                events = match.roll(player)
            else:
                match.move(player, rng.choice(match.legal_plays()).moves)
                continue
            # A roll that cannot be played passes the turn at once; any other waits.
            cases.extend(
                (before, e.player, e.roll)
                for e in events
                if isinstance(e, DiceRolled) and not e.moves
            )
            if match.dice is not None:
                cases.append((match.position, match.turn, match.dice))
    return cases


def best_rate(count: int, run: Callable[[], object], repeat: int) -> float:
    """Cases per CPU second, best of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/movegen.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    cases = make_cases(args.games, args.seed)
    ours = [(Position.from_counts(b[1], b[0]), Roll(d1, d2)) for b, d1, d2 in cases]

    def run_gnubg() -> None:
        for board, d1, d2 in cases:
            gnubg_nn.moves(board, d1, d2)

    def run_ours() -> None:
        for position, roll in ours:
            legal_plays(position, 0, roll)

    gnubg_rate = best_rate(len(cases), run_gnubg, args.repeat)
    our_rate = best_rate(len(cases), run_ours, args.repeat)

    match_cases = make_match_cases(args.matches, args.seed)

    def run_match_cases() -> None:
        for position, player, roll in match_cases:
            legal_plays(position, player, roll)

    match_rate = best_rate(len(match_cases), run_match_cases, args.repeat)

    # Validation: a submitted move of every case that has one, reversed (any order works).
    submissions = []
    for position, roll in ours:
        plays = legal_plays(position, 0, roll)
        if plays:
            submissions.append((position, roll, tuple(reversed(plays[-1].moves))))

    def run_validate() -> None:
        for position, roll, moves in submissions:
            validate_play(position, 0, roll, moves)

    validate_rate = best_rate(len(submissions), run_validate, args.repeat)

    def worst_of(check: Callable[[Position, Roll, tuple[Move, ...]], object]) -> float:
        """The slowest submission, each timed best of three (a scheduler hiccup is not
        the figure)."""
        worst = 0.0
        for position, roll, moves in submissions:
            single = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                check(position, roll, moves)
                single = min(single, time.perf_counter() - started)
            worst = max(worst, single)
        return worst

    # From scratch: generating every play of the roll is part of the check.
    worst = worst_of(lambda p, r, m: validate_play(p, 0, r, m))
    # As the server does it: the legal results were made when the dice were rolled (to
    # say "Please move N pieces") and are kept by the match, so only the check remains.
    cached = {id(m): legal_results(p, 0, r) for p, r, m in submissions}
    worst_cached = worst_of(lambda p, r, m: validate_play(p, 0, r, m, cached[id(m)]))

    print(
        json.dumps(
            {
                "cases": len(cases),
                "doubles": sum(1 for _, d1, d2 in cases if d1 == d2),
                "gnubg_cases_per_s": round(gnubg_rate),
                "ours_cases_per_s": round(our_rate),
                "ratio": round(our_rate / gnubg_rate, 4),
                "us_per_call": round(1e6 / our_rate, 2),
                "match_cases": len(match_cases),
                "match_doubles": sum(1 for _, _, roll in match_cases if roll.is_double),
                "match_us_per_call": round(1e6 / match_rate, 2),
                "target_ratio": 0.1,
                "validate_ms_mean": round(1000 / validate_rate, 4),
                "validate_ms_worst": round(worst * 1000, 4),
                "validate_ms_worst_plays_cached": round(worst_cached * 1000, 4),
                "target_validate_ms": 1.0,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
