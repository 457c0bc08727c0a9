"""The running server: settings, database, who is online, and start/stop.

One :class:`App` per server process. Connections get it through
:class:`server.context.Context`; nothing else is global.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from backgammon.dice import DiceRoller, SystemDice
from db.repository import Database
from protocol import replies
from server import telnet
from server.config import Settings
from server.dice_stats import DiceStats
from server.matches import Invitation, LiveMatch
from server.passwords import ScryptCost, shutdown_hashing
from server.presence import Presence
from server.registry import LocalPresence

log = logging.getLogger(__name__)

STOP_GRACE = 2.0
"""Seconds :meth:`App.stop` lets the connections send their last lines before it aborts them."""


class App:
    """Everything a connection needs that outlives it."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        clock: Callable[[], float] = time.time,
        dice: Callable[[], DiceRoller] = SystemDice,
        coin: Callable[[], int] | None = None,
    ):
        self.settings = settings
        self.db = db
        self.clock = clock
        self.registry = LocalPresence(settings.status_interval, clock)
        """This process's logged-in sessions (start and stop reach them all)."""
        self.presence: Presence = self.registry
        """How a session reaches the others (:mod:`server.presence`): who is online,
        status notices, lines to other users. The same object as :attr:`registry` while
        the server is one node; a bus back end (several nodes) takes its place here."""
        self.started_at = clock()
        self.cost = ScryptCost(settings.scrypt_n, settings.scrypt_r, settings.scrypt_p)
        self.motd = settings.motd()
        self._failures: dict[str, tuple[int, float]] = {}
        self._server: Any = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = settings.port
        self.dice = dice
        """Makes the dice roller of each new or resumed match (seeded in tests)."""
        chooser = random.SystemRandom()
        self.coin = coin or (lambda: chooser.randint(0, 1))
        """Picks who plays O in a new match's first game (§3.2)."""
        self.matches: dict[str, LiveMatch] = {}
        """Running matches by each player's name."""
        self.invitations: dict[str, Invitation] = {}
        """The one outstanding invitation of each inviter (§4.3)."""
        self.stopping = False
        """True once :meth:`stop` began: sessions then end without logout broadcasts."""
        self.dice_stats = DiceStats()
        """Every roll of every match since the start, for ``dicetest``."""

    # -- login throttling --------------------------------------------------------------

    def login_delay(self, host: str) -> float:
        """Seconds to wait before answering a login from ``host`` (doubles per failure)."""
        count, when = self._failures.get(host, (0, 0.0))
        if not count or self.clock() - when > 600:
            return 0.0
        return min(self.settings.login_delay * 2.0 ** (count - 1), 30.0)

    def login_failed(self, host: str) -> None:
        count, when = self._failures.get(host, (0, 0.0))
        if self.clock() - when > 600:
            count = 0
        self._failures[host] = (count + 1, self.clock())
        if len(self._failures) > 10_000:  # bound the table: forget the oldest half
            for key, _ in sorted(self._failures.items(), key=lambda kv: kv[1][1])[:5_000]:
                del self._failures[key]

    def login_succeeded(self, host: str) -> None:
        self._failures.pop(host, None)

    # -- start and stop ----------------------------------------------------------------

    async def start(self) -> None:
        """Listen for connections."""
        from server.connection import serve_connection

        async def shell(lines: telnet.LineReader, output: telnet.TelnetOutput) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._connections.add(task)
            try:
                await serve_connection(self, lines, output)
            finally:
                self._connections.discard(task)

        self._server = await telnet.start_server(self.settings, shell)
        self.port = telnet.bound_port(self._server)
        log.info("listening on %s:%d", self.settings.host, self.port)

    async def stop(self, *, warning: str | None = None) -> None:
        """Tell everyone, close every connection (each saves its state), stop listening,
        stop the password hashing pool.

        While stopping, a closing session tells nobody it left: everyone is leaving, and
        with N users online those notices would be N*N lines (docs/performance.md).
        """
        self.stopping = True
        for session in self.registry:
            session.send(warning or replies.shutdown_warning(0, restart=False))
        if self._server is not None:
            self._server.close()
        for session in self.registry:
            session.output.close()
        if self._connections:
            _, pending = await asyncio.wait(self._connections, timeout=STOP_GRACE)
            if pending:
                # A client that stopped reading never lets close() finish: drop it.
                for session in self.registry:
                    session.output.abort()
                await asyncio.wait(pending, timeout=10)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        # Every connection is gone: hashes still queued are for nobody, and the exit
        # must not wait for them (the interpreter joins the pool's threads).
        shutdown_hashing()
