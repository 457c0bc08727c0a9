"""``python -m server`` (console script ``fibs-server``): run the FIBS server.

Reads ``fibs.conf`` from the working directory (or ``--config PATH``); ``--host``,
``--port`` and ``--database URL`` override it. The schema is created or upgraded at
start. SIGINT/SIGTERM tell every user, close every connection (saving what must be
saved) and stop. A bad configuration stops the start with one line naming the setting.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from db.errors import MigrationError
from db.repository import Database
from protocol import replies
from server.app import App
from server.config import ConfigError, Settings, load
from server.dispatch import load_handlers

log = logging.getLogger("server")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="fibs-server", description="A FIBS-compatible server.")
    parser.add_argument("--config", type=Path, help="configuration file (default ./fibs.conf)")
    parser.add_argument("--host", help="address to listen on")
    parser.add_argument("--port", type=int, help="port to listen on (0: any free port)")
    parser.add_argument("--database", help="SQLAlchemy URL, e.g. sqlite+aiosqlite:///fibs.db")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING...")
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    path = args.config
    if path is None and Path("fibs.conf").is_file():
        path = Path("fibs.conf")
    return load(path, host=args.host, port=args.port, database=args.database)


async def run(settings: Settings) -> None:
    """Serve until SIGINT or SIGTERM."""
    load_handlers()
    db = await Database.open(settings.database)
    app = App(settings, db)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await app.start()
        print(f"fibs-server listening on {settings.host}:{app.port}", flush=True)
        await stop.wait()
        log.info("shutting down")
        await app.stop(warning=replies.shutdown_warning(0, restart=False))
    finally:
        await db.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = settings_from(args)
    except ConfigError as exc:
        print(f"fibs-server: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(run(settings))
    except MigrationError as exc:
        print(f"fibs-server: database error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"fibs-server: cannot listen on {settings.host}:{settings.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
