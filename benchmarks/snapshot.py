"""The cost of storing a match after each action (docs/performance.md §2 and §11).

Plays seeded random matches (``--length`` points, random legal plays, the cube offered
now and then and mostly taken) and after every action times three ways of making what
the server stores before it announces the action:

* ``save``: :meth:`server.matches.LiveMatch.next_save`, as the server saves now: the
  state without the events, and the events since the last save as rows to append;
* ``snapshot``: :meth:`server.matches.LiveMatch.snapshot`, the whole match as one text,
  built incrementally (the stored form of sessions 2 to 4; still the match records' form);
* ``full_serialization``: ``json.dumps`` of the whole ``Match.to_json()``, as before the
  snapshot became incremental. It must give the same text as ``snapshot``; the
  benchmark checks it on every action.

``save_bytes`` and ``snapshot_bytes`` are the characters each way stores per action.
Prints one JSON object.

Run: ``python benchmarks/snapshot.py [--length 25] [--matches 3] [--seed 1]``.
Times are wall-clock (``time.perf_counter_ns``) of single calls on an otherwise idle
loop; other processes on the machine disturb them, so compare figures of one run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import time
from collections.abc import Callable

from backgammon.dice import SeededDice
from backgammon.events import WinKind
from backgammon.match import Action, Match, MatchOptions
from server.matches import LiveMatch


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


def play(
    seed: int, length: int, way: Callable[[LiveMatch], str]
) -> tuple[list[int], list[tuple[int, bytes]]]:
    """Play one seeded match; after every action, time ``way`` of making the stored
    text. Returns the nanoseconds of each call and each text's length and digest (the
    texts themselves would take tens of megabytes)."""
    rng = random.Random(seed)
    live = LiveMatch(("alice", "bob"), Match(MatchOptions(length=length), SeededDice(seed)))
    live.started_at = 1_700_000_000  # the same in both runs of a match: the texts compare
    times: list[int] = []
    texts: list[tuple[int, bytes]] = []
    while act(live.match, rng):
        started = time.perf_counter_ns()
        text = way(live)
        times.append(time.perf_counter_ns() - started)
        texts.append((len(text), hashlib.sha256(text.encode()).digest()))
    return times, texts


def play_saves(seed: int, length: int) -> tuple[list[int], list[int]]:
    """Play one seeded match, saving after every action as the server does; the
    nanoseconds of each :meth:`LiveMatch.next_save` and the characters it stores."""
    rng = random.Random(seed)
    live = LiveMatch(("alice", "bob"), Match(MatchOptions(length=length), SeededDice(seed)))
    times: list[int] = []
    sizes: list[int] = []
    while act(live.match, rng):
        started = time.perf_counter_ns()
        save = live.next_save()
        live.saved(save)
        times.append(time.perf_counter_ns() - started)
        sizes.append(len(save.state) + sum(len(row.events) for row in save.events))
    return times, sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=25, help="match length in points")
    parser.add_argument("--matches", type=int, default=3, help="how many matches to play")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    incremental: list[int] = []
    full: list[int] = []
    sizes: list[int] = []
    saves: list[int] = []
    save_sizes: list[int] = []
    for n in range(args.matches):
        seed = args.seed + n
        # The same seeded match twice, each way alone, so neither disturbs the other's
        # timing (the full way's garbage would set off collections in the other's calls).
        times, texts = play(seed, args.length, LiveMatch.snapshot)
        times_full, expected = play(seed, args.length, LiveMatch.full_snapshot)
        if texts != expected:
            raise SystemExit(f"snapshot differs from the full serialization (seed {seed})")
        times_save, sizes_save = play_saves(seed, args.length)
        if len(times_save) != len(times):
            raise SystemExit(f"the saves played another match (seed {seed})")
        saves += times_save
        save_sizes += sizes_save
        incremental += times
        full += times_full
        sizes += [size for size, _ in texts]

    def summary(values: list[int]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "mean_us": round(statistics.fmean(values) / 1000, 1),
            "p50_us": round(ordered[len(ordered) // 2] / 1000, 1),
            "p99_us": round(ordered[int(len(ordered) * 0.99)] / 1000, 1),
            "max_us": round(ordered[-1] / 1000, 1),
            "total_ms": round(sum(values) / 1e6, 1),
        }

    print(
        json.dumps(
            {
                "length": args.length,
                "matches": args.matches,
                "actions": len(sizes),
                "save_bytes": {
                    "mean": round(statistics.fmean(save_sizes)),
                    "max": max(save_sizes),
                },
                "snapshot_bytes": {"mean": round(statistics.fmean(sizes)), "max": max(sizes)},
                "save": summary(saves),
                "snapshot": summary(incremental),
                "full_serialization": summary(full),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
