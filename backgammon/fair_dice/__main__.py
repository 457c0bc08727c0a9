"""Command line: check a match's dice, or compute one roll (docs/dice.md).

``python -m backgammon.fair_dice verify FILE``
    ``FILE`` is a match record as JSON (``export <id> json`` in the server, or
    ``python -m server export <id> --json``; ``-`` reads standard input). Prints the
    commitment the record's server seed gives (SHA-256 of it: the player compares it with
    the one they were told at the start), the seed and the players' seeds, then
    recomputes every roll and compares it with the record. Exit status 0: verified; 1: a
    roll differs, or the record has no proof; 2: the file cannot be read.

``python -m backgammon.fair_dice roll SERVER_SEED P0 P1 [P2 ...] N``
    The dice of roll ``N`` from a server seed (64 hex digits) and the player seeds (a
    match's two, a chouette game's all), with the HMAC message and block that give them:
    to check a roll by hand.

``python -m backgammon.fair_dice dice SERVER_SEED P0 P1 [P2 ...] COUNT``
    The first ``COUNT`` dice drawn one at a time, in order, on one line: a chouette
    game's dice as its lines showed them (the first draw's one die a player, then each
    roll's two), to compare with what the table was told.

Standard library only, like the rest of :mod:`backgammon`: a player can run it anywhere
Python 3.11 runs, with nothing installed but this package.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from itertools import count
from typing import Any, TextIO

from backgammon.events import Event
from backgammon.fair_dice import (
    DiceSeeds,
    FairDice,
    Verdict,
    dice_from,
    record_games,
    record_proof,
    verify,
)

EXIT_VERIFIED, EXIT_NOT_VERIFIED, EXIT_UNREADABLE = 0, 1, 2


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    """Run the command ``argv`` (default: the process's arguments); the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m backgammon.fair_dice",
        description="Dice anyone can verify (fibs-dice/1, docs/dice.md).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("verify", help="check every roll of a match record (JSON)")
    check.add_argument("file", help="the match record as JSON ('-': standard input)")
    one = commands.add_parser("roll", help="the dice of one roll, from the seeds")
    many = commands.add_parser("dice", help="the first dice drawn, from the seeds")
    for sub, last, last_help in (
        (one, "number", "the roll's number, from 0"),
        (many, "count", "how many dice"),
    ):
        sub.add_argument("server_seed", help="the server seed, 64 hex digits")
        sub.add_argument("seeds", nargs="+", help="the player seeds, player 0's first")
        sub.add_argument(last, type=int, help=last_help)
    args = parser.parse_args(argv)
    if args.command in ("roll", "dice"):
        try:
            seeds = DiceSeeds(bytes.fromhex(args.server_seed), tuple(args.seeds))
        except ValueError as exc:
            parser.error(str(exc))
        if args.command == "dice":
            if args.count < 0:
                parser.error("a count of dice is 0 or more")
            print(" ".join(map(str, seeds.dice(args.count))), file=out)
            return EXIT_VERIFIED
        if args.number < 0:
            parser.error("a roll's number is 0 or more")
        _print_roll(seeds, args.number, out)
        return EXIT_VERIFIED
    try:
        names, dice, games = _read_record(args.file)
    except (OSError, ValueError) as exc:  # SnapshotError and JSON errors are ValueErrors
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    if dice is None:
        print(
            "NOT verified: the record holds no dice proof (its dice were not committed)", file=out
        )
        return EXIT_NOT_VERIFIED
    verdict = verify(dice, games)
    _print_proof(names, dice, out)
    return _print_verdict(verdict, out)


def _read_record(path: str) -> tuple[tuple[str, str], FairDice | None, list[list[Event]]]:
    """The players' names, the proof (None: the record has none) and every game's events
    of the match record in ``path`` (:func:`~backgammon.fair_dice.record_proof`).

    :raises OSError: the file cannot be read.
    :raises ValueError: it is not such a record.
    """
    if path == "-":
        data: Any = json.load(sys.stdin)
    else:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    names, dice = record_proof(data)
    return names, dice, record_games(data)


def _print_proof(names: tuple[str, str], dice: FairDice, out: TextIO) -> None:
    """The proof as a player checks it: the commitment first, to compare with theirs."""
    seeds = dice.seeds
    print(f"commitment:   {seeds.commitment} (the server seed's SHA-256)", file=out)
    print(f"server seed:  {seeds.server_seed.hex()}", file=out)
    for name, seed in zip(names, seeds.player_seeds, strict=True):
        print(f"seed of {name}: {seed}", file=out)


def _print_verdict(verdict: Verdict, out: TextIO) -> int:
    """One line: verified, or the first roll that differs, or the dice missing; the exit
    status that goes with it."""
    mismatch = verdict.mismatch
    if mismatch is not None:
        recorded = "-".join(map(str, mismatch.recorded))
        derived = "-".join(map(str, mismatch.derived))
        print(
            f"NOT verified: roll {mismatch.number} is {recorded} in the record,"
            f" the seeds give {derived}",
            file=out,
        )
        return EXIT_NOT_VERIFIED
    if not verdict.verified:
        print(
            f"NOT verified: the record has {verdict.rolls} rolls ({2 * verdict.rolls} dice),"
            f" the proof says {verdict.drawn} dice were drawn",
            file=out,
        )
        return EXIT_NOT_VERIFIED
    print(f"verified: all {verdict.rolls} rolls are the ones the seeds give", file=out)
    return EXIT_VERIFIED


def _print_roll(seeds: DiceSeeds, number: int, out: TextIO) -> None:
    """Roll ``number``: each block's message and HMAC until two dice, then the dice."""
    blocks: list[bytes] = []
    for block in count():
        blocks.append(seeds.block(number, block))
        print(f"message:      {seeds.message(number, block).decode('ascii')}", file=out)
        print(f"HMAC-SHA-256: {blocks[-1].hex()}", file=out)
        try:
            first, second = dice_from(blocks)
        except ValueError:  # fewer than two bytes below 252 so far: the next block
            continue
        print(f"dice:         {first} {second}", file=out)
        return


if __name__ == "__main__":
    raise SystemExit(main())
