"""The CPU a finished match's analysis costs the server's own process (docs/performance.md
§22): the same matches analysed by gnubg at 0-ply, once as the server did it before the
worker processes (in its own process: the ``.mat`` built, gnubg started from it, its JSON
read in a thread and turned into the stored text) and once as it does now (the match's
data sent to a long-lived worker process, the stored text read back).

Counts this process's CPU (``time.process_time``: every thread, no child), so the machine's
load moves it little; gnubg's and the worker's CPU are not in it. ``--ballast-mb`` gives
this process about the server's memory, which a fork copies the page tables of.

Run: ``python benchmarks/analysis_cost.py [--matches 20] [--ballast-mb 150]``; prints one
JSON object. Needs ``/usr/games/gnubg``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backgammon.dice import SeededDice
from backgammon.match import Action, Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from protocol.analysis import analysis_to_json
from protocol.mat_export import snapshot_to_mat
from server.analysis.gnubg import analyse_mat
from server.analysis.workers import ANALYSIS, Workers

GNUBG = "/usr/games/gnubg"


def random_match(seed: int) -> str:
    """A 1-point match of random plays (no cube), as a match record's moves."""
    rng = random.Random(seed)
    match = Match(MatchOptions(length=1), SeededDice(seed), o_player=0)
    while match.phase is not Phase.MATCH_OVER:
        player = match.to_act
        if player is None:
            match.start_game()
        elif Action.ROLL in match.allowed(player):
            match.roll(player)
        else:
            match.move(player, rng.choice(match.legal_plays()).moves)
    data = {"version": 1, "players": ["alice", "bob"], "started_at": 1_700_000_000}
    return json.dumps({**data, "match": match_to_json(match)})


async def inline(moves: str) -> str:
    """The analysis as the server made it before the worker processes."""
    mat = snapshot_to_mat(moves, site="fibs.test", started_at=1_700_000_000)
    return analysis_to_json(await analyse_mat(mat, ply=0, binary=GNUBG, timeout=600))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20)
    parser.add_argument("--ballast-mb", type=int, default=150)
    args = parser.parse_args()
    ballast = bytearray(args.ballast_mb << 20)
    for at in range(0, len(ballast), 4096):
        ballast[at] = 1  # touched: mapped and resident, as the server's heap
    matches = [random_match(seed) for seed in range(args.matches)]
    result: dict[str, Any] = {"matches": args.matches, "ballast_mb": args.ballast_mb}

    before = time.process_time()
    texts = [await inline(moves) for moves in matches]
    result["inline_ms_per_match"] = round((time.process_time() - before) * 1000 / len(matches), 3)

    workers = Workers(1)
    base = {"kind": ANALYSIS, "site": "fibs.test", "started_at": 1_700_000_000}
    base |= {"rules": "{}", "length": 1, "ply": 0, "binary": GNUBG}
    try:
        before = time.process_time()
        first = await workers.run({**base, "moves": matches[0]}, 600)
        result["worker_start_and_first_ms"] = round((time.process_time() - before) * 1000, 3)
        before = time.process_time()
        replies = [await workers.run({**base, "moves": moves}, 600) for moves in matches]
        spent = time.process_time() - before
    finally:
        await workers.close()
    result["worker_ms_per_match"] = round(spent * 1000 / len(matches), 3)
    result["same_bytes"] = first.text == texts[0] and [r.text for r in replies] == texts
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
