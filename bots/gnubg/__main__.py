"""``python -m bots.gnubg --host H --port P --name N --password W [--count K] [--plies 0|1|2]``.

All accounts of one command share one gnubg process (its requests are serialised).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bots import runner
from bots.gnubg import GnubgEngine, GnubgStrategy
from bots.strategy import Strategy


def _extend(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--plies", type=int, default=1, choices=(0, 1, 2), help="gnubg lookahead (default 1)"
    )
    p.add_argument("--gnubg", metavar="PATH", help="the gnubg binary (default /usr/games/gnubg)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per gnubg answer")
    p.add_argument(
        "--gnubg-port",
        type=int,
        default=0,
        metavar="PORT",
        help="local port for gnubg's external socket (default 0: any free port)",
    )


async def _factory(args: argparse.Namespace) -> tuple[runner.StrategyFactory, runner.Closer]:
    engine = GnubgEngine(
        plies=args.plies, binary=args.gnubg, timeout=args.timeout, port=args.gnubg_port
    )
    await engine.start()

    def make(index: int, name: str) -> Strategy:
        return GnubgStrategy(engine)

    return make, engine.close


def main(argv: Sequence[str] | None = None) -> int:
    description = "A bot that lets GNU Backgammon decide (gnubg runs as a separate process)."
    return runner.main(
        argv, description, "Gnubg Bot", _factory, _extend, prog="python -m bots.gnubg"
    )


if __name__ == "__main__":
    sys.exit(main())
