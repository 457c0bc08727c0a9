"""The server's shared state: settings, database, clocks, who is online, the matches.

One :class:`App` per server process. Connections get it through
:class:`server.context.Context`; nothing else is global. Starting and stopping the
server (listening, the connections' tasks) is :mod:`server.service`'s.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from backgammon.dice import DiceRoller, SystemDice
from db.repository import Database
from server.clock import LoopTimer, Timer
from server.config import Settings
from server.dice_stats import DiceStats
from server.matches import Invitation, LiveMatch
from server.passwords import ScryptCost
from server.presence import Presence
from server.registry import LocalPresence


class App:
    """Everything a connection needs that outlives it."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        clock: Callable[[], float] = time.time,
        timer: Timer | None = None,
        dice: Callable[[], DiceRoller] = SystemDice,
        coin: Callable[[], int] | None = None,
    ):
        self.settings = settings
        self.db = db
        self.clock = clock
        """Unix time, for what users see as dates and times."""
        self.timer: Timer = timer or LoopTimer()
        """Monotonic time and the waits measured in it: idle time, time-outs, rates."""
        self.registry = LocalPresence(settings.status_interval, clock, self.timer)
        """This process's logged-in sessions: only start and stop (:mod:`server.service`)
        use it, to reach every session of this process (and tests, to look inside);
        everything else reaches other users through :attr:`presence`."""
        self.presence: Presence = self.registry
        """How a session reaches the others (:mod:`server.presence`): who is online,
        status notices, lines to other users. The same object as :attr:`registry` while
        the server is one node; a bus back end (several nodes) takes its place here.
        Every handler and the match modules use only this one."""
        self.started_at = clock()
        self.cost = ScryptCost(settings.scrypt_n, settings.scrypt_r, settings.scrypt_p)
        self.motd = settings.motd()
        self._failures: dict[str, tuple[int, float]] = {}
        self.port = settings.port
        """The port the server listens on: the configured one until
        :meth:`server.service.Service.start` has bound it (``port = 0``: any free one)."""
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
        """True once :meth:`server.service.Service.stop` began: sessions then end without
        logout broadcasts."""
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
