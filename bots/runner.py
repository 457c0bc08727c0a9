"""The command line every bot shares: ``--host --port --name --password [--count K]``.

``--count K`` logs in K accounts from one command; each plays at most one match at a time
(one match per login, as on FIBS), so K bounds the simultaneous matches. Account names
are ``N``, ``N_b``, ``N_c``, ... ``N_z``, ``N_ba``, ...: FIBS names hold letters and ``_``
only (§1.7), so no digits. All accounts share the password and are created on first use.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import string
from collections.abc import Awaitable, Callable, Sequence

from bots.backoff import Backoff
from bots.chouette import ChouetteClient
from bots.client import ClientConfig, FibsClient
from bots.login import LoginError, bot_client_name
from bots.strategy import Strategy

log = logging.getLogger(__name__)

StrategyFactory = Callable[[int, str], Strategy]
"""Makes the strategy of account ``index`` (0-based) named ``name``."""
Closer = Callable[[], Awaitable[None]]
"""Releases what a bot's strategies share (called once, after every client stopped)."""
Factory = Callable[[argparse.Namespace], Awaitable[tuple[StrategyFactory, Closer]]]


async def nothing() -> None:
    """A :data:`Closer` for bots that share nothing."""


def account_names(name: str, count: int) -> list[str]:
    """``name``, then ``name_b``, ``name_c`` ... for ``count`` accounts.

    >>> account_names("Bot", 3)
    ['Bot', 'Bot_b', 'Bot_c']
    """
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    return [name if i == 0 else f"{name}_{_letters(i)}" for i in range(count)]


def _letters(n: int) -> str:
    """``n`` in base 26 with the digits a..z (1 -> b, 26 -> ba)."""
    digits = ""
    while True:
        n, rest = divmod(n, 26)
        digits = string.ascii_lowercase[rest] + digits
        if n == 0:
            return digits


def parser(description: str, prog: str | None = None) -> argparse.ArgumentParser:
    """The options shared by every bot; a bot adds its own. ``prog`` is how the bot is
    run (``python -m bots.random``), shown by ``--help``."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("--host", default="127.0.0.1", help="server host (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=4321, help="server port (default 4321)")
    p.add_argument("--name", required=True, help="account name (letters and _ only)")
    p.add_argument("--password", required=True, help="account password (created if new)")
    p.add_argument("--count", type=int, default=1, help="accounts to run: N, N_b, N_c, ...")
    p.add_argument("--invite", metavar="NAME", help="invite NAME whenever both are free")
    p.add_argument("--length", type=int, default=1, help="match length for --invite (0: unlimited)")
    p.add_argument("--matches", type=int, help="log out after this many finished matches")
    p.add_argument(
        "--chouette", action="store_true", help="join the chouette tables the bot is invited to"
    )
    p.add_argument("--no-register", action="store_true", help="never create the account")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    return p


def configs(args: argparse.Namespace, client_name: str) -> list[ClientConfig]:
    """One :class:`ClientConfig` per account named by ``args``."""
    return [
        ClientConfig(
            host=args.host,
            port=args.port,
            name=name,
            password=args.password,
            client_name=client_name,
            register=not args.no_register,
            backoff=Backoff(),
            invite=args.invite,
            invite_length=args.length or None,
            max_matches=args.matches,
        )
        for name in account_names(args.name, args.count)
    ]


async def run_clients(clients: Sequence[FibsClient]) -> int:
    """Run every client until all stop; SIGINT/SIGTERM stop them cleanly. Exit status."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    async def stopper() -> None:
        await stop.wait()
        log.info("stopping %d bot(s)", len(clients))
        await asyncio.gather(*(c.stop() for c in clients))

    watcher = asyncio.create_task(stopper())
    try:
        results = await asyncio.gather(*(c.run() for c in clients), return_exceptions=True)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
    status = 0
    for client, result in zip(clients, results, strict=True):
        if isinstance(result, BaseException):
            log.error("%s stopped: %s", client.config.name, result)
            status = max(status, 2 if isinstance(result, LoginError) else 1)
    return status


def main(
    argv: Sequence[str] | None,
    description: str,
    real_name: str,
    factory: Factory,
    extend: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    prog: str | None = None,
) -> int:
    """Parse the command line and run the bots.

    ``factory(args)`` returns the per-account strategy factory and an async ``close``
    called when every client has stopped (a bot's shared resources, e.g. gnubg).
    ``real_name`` goes into the bot marker (:func:`bots.login.bot_client_name`).
    """
    p = parser(description, prog)
    if extend is not None:
        extend(p)
    args = p.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )

    async def go() -> int:
        make, close = await factory(args)
        try:
            kind = ChouetteClient if args.chouette else FibsClient
            clients = [
                kind(cfg, make(i, cfg.name))
                for i, cfg in enumerate(configs(args, bot_client_name(real_name)))
            ]
            return await run_clients(clients)
        finally:
            await close()

    return asyncio.run(go())
