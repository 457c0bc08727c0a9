"""``python -m bots.random --host H --port P --name N --password W [--count K] [--seed S]``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bots import runner
from bots.random import RandomStrategy
from bots.strategy import Strategy


def _extend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", help="seed the dice-independent choices (reproducible play)")


async def _factory(
    args: argparse.Namespace,
) -> tuple[runner.StrategyFactory, runner.Closer]:
    def make(index: int, name: str) -> Strategy:
        return RandomStrategy(None if args.seed is None else f"{args.seed}:{name}")

    return make, runner.nothing


def main(argv: Sequence[str] | None = None) -> int:
    return runner.main(
        argv,
        "A bot that plays uniformly random legal moves.",
        "Random Bot",
        _factory,
        _extend,
        prog="python -m bots.random",
    )


if __name__ == "__main__":
    sys.exit(main())
