"""The cost of storing a match after each action (docs/performance.md §2 and §11).

Plays seeded random matches (``--length`` points, random legal plays, the cube offered
now and then and mostly taken) and after every action times two ways of making what the
server would store before it announces the action:

* ``save``: :meth:`server.tables.matches.LiveMatch.next_save`, as the server saves a running
  match: the state without the events, and the events since the last save as rows to
  append (docs/database.md);
* ``whole``: :meth:`server.tables.matches.LiveMatch.snapshot`, the whole match as one text, as
  the server stored it after every action before (serialized whole before §2, from
  cached event texts from §2 to §11) and as it still stores a finished match's record.

``save_bytes`` and ``whole_bytes`` are the characters each way stores per action. The
saves are checked: put back together (:func:`server.tables.matches.whole_snapshot`) at the
end of each match, they must give the whole text. Prints one JSON object.

Run: ``python benchmarks/snapshot.py [--length 25] [--matches 3] [--seed 1]``.
Times are wall-clock (``time.perf_counter_ns``) of single calls on an otherwise idle
loop; other processes on the machine disturb them, so compare figures of one run.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from backgammon.dice import SeededDice
from backgammon.events import WinKind
from backgammon.match import Action, Match, MatchOptions
from db.records import SavedEvents, SavedMatch
from server.tables.matches import LiveMatch, whole_snapshot


def act(match: Match, rng: random.Random) -> bool:
    """One random action by whoever must act (or the next game); False when over."""
    player = match.to_act
    if player is None:
        if Action.START_GAME not in match.allowed(0):
            return False
        match.start_game()
        return True
    allowed = match.allowed(player)
    if Action.ACCEPT_RESIGNATION in allowed:
        match.accept_resignation(player)
    elif Action.TAKE in allowed:
        match.take(player) if rng.random() < 0.8 else match.drop(player)
    elif Action.REDOUBLE in allowed and rng.random() < 0.3:
        match.redouble(player)  # instant redoubles of unlimited matches
    elif Action.DOUBLE in allowed and rng.random() < 0.03:
        match.double(player)
    elif Action.ROLL in allowed:
        match.roll(player)
    elif Action.RESIGN in allowed and rng.random() < 0.002:
        match.resign(player, WinKind.SINGLE)
    else:
        match.move(player, rng.choice(match.legal_plays()).moves)
    return True


def play(seed: int, length: int, save: bool) -> tuple[list[int], list[int], LiveMatch]:
    """Play one seeded match, storing it after every action one way (``save``: as the
    server saves a running match; otherwise the whole text). Returns the nanoseconds and
    the characters of each store, and the match at its end."""
    rng = random.Random(seed)
    match = Match(MatchOptions(length=length), SeededDice(seed))
    live = LiveMatch(("alice", "bob"), match, started_at=1_700_000_000)
    times: list[int] = []
    sizes: list[int] = []
    rows: list[SavedEvents] = []
    state = ""
    while act(live.match, rng):
        started = time.perf_counter_ns()
        if save:
            plan = live.next_save()
            live.saved(plan)
            times.append(time.perf_counter_ns() - started)
            state = plan.state
            rows = rows + list(plan.events) if plan.append else list(plan.events)
            sizes.append(len(state) + sum(len(row.events) for row in plan.events))
        else:
            text = live.snapshot()
            times.append(time.perf_counter_ns() - started)
            sizes.append(len(text))
    if save:
        rows.sort(key=lambda row: (row.game, row.first_event))
        saved = SavedMatch(live.table_id, "alice", "bob", length, 0, 0, state, 0, tuple(rows))
        if whole_snapshot(saved) != json.loads(live.snapshot()):
            raise SystemExit(f"the saves do not give the whole match back (seed {seed})")
    return times, sizes, live


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/snapshot.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--length", type=int, default=25, help="match length in points")
    parser.add_argument("--matches", type=int, default=3, help="how many matches to play")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    saves: list[int] = []
    save_sizes: list[int] = []
    wholes: list[int] = []
    whole_sizes: list[int] = []
    for n in range(args.matches):
        seed = args.seed + n
        # The same seeded match twice, each way alone, so neither disturbs the other's
        # timing (the whole texts' garbage would set off collections in the saves).
        times, sizes, saved = play(seed, args.length, save=True)
        times_whole, sizes_whole, whole = play(seed, args.length, save=False)
        if saved.snapshot() != whole.snapshot():
            raise SystemExit(f"the two ways played different matches (seed {seed})")
        saves += times
        save_sizes += sizes
        wholes += times_whole
        whole_sizes += sizes_whole

    def summary(values: list[int]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "mean_us": round(statistics.fmean(values) / 1000, 1),
            "p50_us": round(ordered[len(ordered) // 2] / 1000, 1),
            "p99_us": round(ordered[int(len(ordered) * 0.99)] / 1000, 1),
            "max_us": round(ordered[-1] / 1000, 1),
            "total_ms": round(sum(values) / 1e6, 1),
        }

    def size_summary(values: list[int]) -> dict[str, int]:
        return {"mean": round(statistics.fmean(values)), "max": max(values)}

    print(
        json.dumps(
            {
                "length": args.length,
                "matches": args.matches,
                "actions": len(saves),
                "save_bytes": size_summary(save_sizes),
                "whole_bytes": size_summary(whole_sizes),
                "save": summary(saves),
                "whole": summary(wholes),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
