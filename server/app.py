"""The server's shared state: settings, database, clocks, who is online, the tables.

One :class:`App` per server process. Connections get it through
:class:`server.handlers.context.Context`; nothing else is global. Starting and stopping the
server (listening, the connections' tasks) is :mod:`server.service`'s.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable

from backgammon.dice import BlockEntropy, DiceRoller
from db.repository import Database
from server.analysis.pool import Analyses
from server.clock import LoopTimer, Timer
from server.config import Settings
from server.doors.admission import (
    OUTAGE_LOG_INTERVAL,
    REFUSAL_LOG_INTERVAL,
    AddressCounts,
    Networks,
    OutageLog,
    PreLogin,
    QuietLog,
    Registrations,
    address_key,
    open_file_limit,
)
from server.doors.output import Output
from server.doors.throttle import Attempt, LoginThrottle
from server.tables.dice_stats import DiceStats
from server.tables.local import LocalTables
from server.tables.seam import Tables
from server.world import names
from server.world.pace import Pace
from server.world.passwords import Client, PasswordChecks, ScryptCost, hash_password
from server.world.presence import Peer, Presence
from server.world.registry import LocalPresence

log = logging.getLogger(__name__)


class App:
    """Everything a connection needs that outlives it."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        clock: Callable[[], float] = time.time,
        timer: Timer | None = None,
        dice: Callable[[], DiceRoller] | None = None,
        entropy: Callable[[int], bytes] | None = None,
        coin: Callable[[], int] | None = None,
        presence: Callable[[LocalPresence], Presence] | None = None,
        tables: Callable[[LocalTables], Tables] | None = None,
    ):
        """``presence`` and ``tables`` build the world's presence and tables around this
        node's own (its sessions, its matches): a back end for several nodes wraps them.
        None: this node is the whole world."""
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
        self.presence: Presence = self.registry if presence is None else presence(self.registry)
        """How a session reaches the others (:mod:`server.world.presence`): who is online,
        status notices, lines to other users. The same object as :attr:`registry` while
        the server is one node; a bus back end (several nodes) takes its place here.
        Every handler and the match modules use only this one."""
        self.started_at = clock()
        self.cost = ScryptCost(settings.scrypt_n, settings.scrypt_r, settings.scrypt_p)
        self.motd = settings.motd()
        self.trusted = Networks(settings.trusted_networks)
        """``[limits] trusted_networks``: no per-address caps or throttling there."""
        self.throttle = LoginThrottle(self.timer, settings.login_delay)
        """Login attempts per address and account name (:mod:`server.doors.throttle`)."""
        self.passwords = PasswordChecks(self.timer.now)
        """Password checks and new hashes, waiting for the hashing pool fairly between
        client addresses (:mod:`server.world.passwords`, D330)."""
        self.pre_login = PreLogin(
            settings.max_pre_login,
            settings.max_pre_login_per_address,
            self.trusted,
            open_file_limit(),
            settings.max_pre_login_per_trusted_address,
        )
        """The connections that have not logged in (:mod:`server.doors.admission`)."""
        self.visitor_addresses = AddressCounts(settings.max_visitors_per_address, self.trusted)
        """The visitors of each address (``[limits] max_visitors_per_address``, D268)."""
        self.registrations = Registrations(
            settings.registrations_per_minute,
            settings.registrations_per_address,
            self.trusted,
            self.timer.now,
        )
        """The accounts registered in the last minute, in all and per address (D267)."""
        self.shout_pace = Pace(settings.shouts_per_minute, self.timer.now)
        """Each user's shouts in the last minute (D300)."""
        self.invitation_pace = Pace(settings.invitations_per_minute, self.timer.now)
        """Each user's invitations to each other user in the last minute (D301)."""
        self.refusal_log = QuietLog(log, REFUSAL_LOG_INTERVAL, self.timer.now)
        self.outage_log = OutageLog(log, OUTAGE_LOG_INTERVAL, self.timer.now)
        """The log of the database failing for the moment (D296): one line a minute."""
        """The log of connections refused by those caps: one line per interval at most."""
        self._dummy_hash: str | None = None
        self.port = settings.port
        """The port the server listens on: the configured one until
        :meth:`server.service.Service.start` has bound it (``port = 0``: any free one)."""
        self.dice = dice
        """None (production): every match's dice are committed before its first roll and
        proven after its last (:mod:`server.tables.dice_proof`). Tests that need exact
        rolls give a factory of rollers (seeded or scripted dice): their matches carry
        no proof."""
        self.entropy = entropy or BlockEntropy()
        """The CSPRNG the dice's seeds are drawn from (``os.urandom`` read in blocks;
        tests fix it)."""
        flips = BlockEntropy(block=256)
        self.coin = coin or (lambda: flips(1)[0] & 1)
        """Picks who plays O in a new match's first game (§3.2)."""
        self.local_tables = LocalTables(self)
        """This process's running matches and invitations: tests look inside; everything
        else reaches them through :attr:`tables`."""
        self.tables: Tables = self.local_tables if tables is None else tables(self.local_tables)
        """The table seam (:mod:`server.tables.seam`): every handler asks the tables
        through this one; an owner of tables on several nodes takes its place here."""
        self.stopping = False
        """True once :meth:`server.service.Service.stop` began: sessions then end without
        logout broadcasts."""
        self.dice_stats = DiceStats()
        """Every roll of every match since the start, for ``dicetest``."""
        self.analyses = Analyses(settings, db)
        """Finished matches analysed by gnubg in the background (:mod:`server.analysis`);
        started and stopped with the service."""

    # -- logging in -------------------------------------------------------------------

    def login_attempt(self, host: str, name: str) -> Attempt:
        """A login attempt from ``host`` at the account ``name``, as the login throttle
        counts it (:mod:`server.doors.throttle`)."""
        return Attempt(address_key(host), name, trusted=host in self.trusted)

    def password_client(self, output: Output) -> Client:
        """Whose password check this is, for :attr:`passwords`: the connection's
        address as limits count it, there until the client has gone (a reset is seen
        even while the connection's reading is paused, :meth:`Output.peer_gone`)."""
        return Client(address_key(output.host), lambda: not output.peer_gone())

    # -- naming users ------------------------------------------------------------------

    async def complete(self, prefix: str) -> Peer:
        """The online user ``prefix`` names, never a look-alike reached by its case
        (:func:`server.world.names.complete`, D269).

        :raises Reply: nobody (``** There is no one called x``) or several candidates.
        """
        return await names.complete(self.presence, self.db, prefix)

    async def find(self, prefix: str) -> Peer | None:
        """:meth:`Presence.find` with :meth:`complete`'s rule
        (:func:`server.world.names.find`)."""
        return await names.find(self.presence, self.db, prefix)

    async def dummy_hash(self) -> str:
        """A hash of a random password at the configured cost, made once: what an
        unknown name's password is checked against, so that checking it costs what
        checking a real one costs (a reply's timing does not tell which names exist)."""
        if self._dummy_hash is None:
            self._dummy_hash = await hash_password(secrets.token_hex(16), self.cost)
        return self._dummy_hash
