"""The cost of the per-action boards (server/tables/match_boards.py ``BoardFrame.lines``).

Plays seeded random matches (a 7-point match and an unlimited one with instant
redoubles) and at every state times :func:`protocol.match_view.board_state` (once per
state on the server) and :func:`protocol.match_view.board_lines` for each style, both
perspectives, ``you`` true and false (once per distinct viewer kind on the server).
Also prints a digest of every line rendered, so two versions of the renderer can be
checked to give the same bytes.

Run: ``python benchmarks/boards.py [--matches 2] [--repeat 3] [--seed 1]``.
Wall-clock (``time.perf_counter_ns``) per call, averaged over all states, best of
``--repeat`` rounds; other processes disturb the figures, compare figures of one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time

from snapshot import act  # the same random actions as benchmarks/snapshot.py

from backgammon.board import Colour
from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions
from protocol.board_view import BoardState
from protocol.match_view import board_lines, board_state

NAMES = ("alice", "bob")
CALLS = 5
"""Calls per state and measurement (the state does not change in between)."""
GAMES = 4
"""Games per match at most (an unlimited match never ends by itself)."""
VIEWS = [(c, s, y) for s in (1, 2, 3) for c in (Colour.O, Colour.X) for y in (True, False)]


def matches(count: int, seed: int) -> list[Match]:
    """Fresh seeded matches: 7-point ones and unlimited ones with one instant redouble."""
    out = []
    for i in range(count):
        options = MatchOptions(length=7) if i % 2 == 0 else MatchOptions(instant_redoubles=1)
        out.append(Match(options, SeededDice(seed + i)))
    return out


def run(count: int, seed: int, digest: hashlib._Hash | None) -> tuple[int, dict[str, float]]:
    """Play the matches, timing every state; the number of states and ns per call."""
    totals = {"board_state": 0, "style 1": 0, "style 2": 0, "style 3": 0}
    states = 0
    clock = time.perf_counter_ns
    for i, match in enumerate(matches(count, seed)):
        rng = random.Random(seed + i)
        while len(match.history) < GAMES and act(match, rng):
            match.legal_plays()  # the server generates them when the dice are rolled
            states += 1
            t0 = clock()
            for _ in range(CALLS):
                state: BoardState = board_state(match, NAMES)
            totals["board_state"] += clock() - t0
            for colour, style, you in VIEWS:
                t0 = clock()
                for _ in range(CALLS):
                    lines = board_lines(state, colour, style, you=you)
                totals[f"style {style}"] += clock() - t0
                if digest is not None:
                    digest.update("\n".join(lines).encode() + b"\n\n")
    per_call = {
        "board_state": totals["board_state"] / (states * CALLS),
        **{k: v / (states * CALLS * 4) for k, v in totals.items() if k != "board_state"},
    }
    return states, per_call


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/boards.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--matches", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    digest = hashlib.sha256()
    best: dict[str, float] = {}
    states = 0
    for r in range(args.repeat):
        states, per_call = run(args.matches, args.seed, digest if r == 0 else None)
        best = {k: min(v, best.get(k, v)) for k, v in per_call.items()}
    us = {k: round(v / 1000, 2) for k, v in best.items()}
    # The server's cost of one action: one state, then (typically) four boards.
    action = us["board_state"] + 2 * us["style 3"] + 2 * us["style 1"]
    report = {
        "states": states,
        "us_per_call": us,
        "us_per_action_state_plus_2_raw_2_ascii": round(action, 2),
        "sha256_of_lines": digest.hexdigest(),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
