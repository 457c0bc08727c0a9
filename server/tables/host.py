"""What the tables run on: the services they use and the state they own.

The table modules (:mod:`server.tables.match_lifecycle`, :mod:`server.tables.match_flow`,
:mod:`server.tables.settle`, :mod:`server.tables.announce`,
:mod:`server.tables.match_timers`) take a :class:`TableHost`, never the App: so the
tables sit below the App that wires them (``SERVER_LAYERS`` in
``tests/test_architecture.py``), and an owner of tables on another node needs only these
services, not a whole process's state. :class:`server.tables.local.LocalTables` is the
host of this process's tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from backgammon.dice import DiceRoller
from db.repository import Database
from server.analysis.pool import Analyses
from server.clock import Timer
from server.config import Settings
from server.doors.admission import OutageLog
from server.tables.chouette_table import LiveChouette
from server.tables.dice_stats import DiceStats
from server.tables.matches import Invitation, LiveMatch
from server.tables.updates import TableUpdate
from server.world.presence import Presence


class TableServices(Protocol):
    """The services of the process that the tables use (the App keeps them)."""

    @property
    def presence(self) -> Presence:
        """Who is online and the lines to them (:mod:`server.world.presence`)."""
        ...

    @property
    def db(self) -> Database:
        """Where every action is saved before it is announced."""
        ...

    @property
    def settings(self) -> Settings: ...

    @property
    def clock(self) -> Callable[[], float]:
        """Unix time (a match's start)."""
        ...

    @property
    def timer(self) -> Timer:
        """Monotonic time: the match clock (D55)."""
        ...

    @property
    def dice(self) -> Callable[[], DiceRoller] | None:
        """None: every match's dice are committed and proven
        (:mod:`server.tables.dice_proof`); else what makes each match's roller (tests:
        seeded or scripted dice, without proof)."""
        ...

    @property
    def entropy(self) -> Callable[[int], bytes]:
        """The CSPRNG the dice's seeds are drawn from."""
        ...

    @property
    def coin(self) -> Callable[[], int]:
        """Picks who plays O in a new match's first game (§3.2)."""
        ...

    @property
    def dice_stats(self) -> DiceStats:
        """Every roll since the start, for ``dicetest``."""
        ...

    @property
    def stopping(self) -> bool:
        """The server is stopping: matches leave the table without status notices."""
        ...

    @property
    def outage_log(self) -> OutageLog:
        """Where the database failing for the moment is logged, once a minute at most
        and without a traceback (D296)."""
        ...

    @property
    def analyses(self) -> Analyses:
        """Where a finished match goes to be analysed (:mod:`server.analysis`)."""
        ...


class TableHost(TableServices, Protocol):
    """The services, the tables' own state (the running matches and invitations), and
    where their updates go."""

    @property
    def node(self) -> str:
        """This node's name, as it takes a table in the database (its owner row, the
        fencing token: docs/cluster.md)."""
        ...

    @property
    def matches(self) -> dict[str, LiveMatch]:
        """Running matches by each player's name."""
        ...

    @property
    def invitations(self) -> dict[str, Invitation]:
        """The one outstanding invitation of each inviter (§4.3)."""
        ...

    @property
    def chouettes(self) -> dict[str, LiveChouette]:
        """The chouette tables by the name of each player at one (docs/chouette.md)."""
        ...

    def deliver(self, update: TableUpdate) -> None:
        """An action's outcome, after its save, to everyone at the table (the edges)."""
        ...

    def table_opened(self, live: LiveMatch) -> None:
        """A table is seated: its match started or resumed (its players are playing)."""
        ...

    def table_closed(self, table: str) -> None:
        """A table left the world: its match finished or stopped."""
        ...

    def chouettes_changed(self) -> None:
        """The chouette tables of this node changed: one opened, closed or left the
        process, or someone sat down, left, or a game began or ended (an owner of
        tables on several nodes publishes who sits where, D438)."""
        ...
