"""Plain frozen values the repository returns; callers never touch ORM objects.

Times are whole Unix seconds. A ``match_length`` of ``None`` means an unlimited match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from backgammon.rating import INITIAL_RATING

__all__ = [
    "DEFAULT_RATING",
    "ONE_NODE",
    "SORTWHO_VALUES",
    "ChouetteRecord",
    "ChouetteStanding",
    "MatchRecord",
    "RatingEntry",
    "RatingUpdate",
    "SavedChouette",
    "SavedEvents",
    "SavedMatch",
    "StoredAnalysis",
    "StoredMessage",
    "User",
    "UserSettings",
]

DEFAULT_RATING: Final = INITIAL_RATING
"""Every new account starts at 1500.00 with experience 0 (spec §5.1)."""

ONE_NODE: Final = "local"
"""The node name of a server that is one process, not a cluster: it takes no table in
``table_owners`` (nobody to fence out)."""

SORTWHO_VALUES: Final = ("login", "name", "rating", "rrating")
"""The values ``set sortwho`` accepts (spec §4.14, §4.16)."""


@dataclasses.dataclass(frozen=True, slots=True)
class UserSettings:
    """The ``set`` variables of spec §4.16.

    :raises ValueError: a value outside the range ``set`` accepts.
    """

    boardstyle: int = 3
    """1 and 2: ASCII boards; 3: ``board:`` lines."""
    linelength: int = 0
    """0..999, 0 = no limit."""
    pagelength: int = 0
    """0..999, 0 = no limit."""
    redoubles: int | None = 0
    """Redouble limit in unlimited matches: 0 = ``none``, 1..99, or ``None`` = ``unlimited``."""
    sortwho: str = "login"
    """``login``, ``name``, ``rating`` or ``rrating``."""
    timezone: str = "UTC"
    """An IANA time zone name; the server validates it."""

    def __post_init__(self) -> None:
        if not 1 <= self.boardstyle <= 3:
            raise ValueError(f"boardstyle {self.boardstyle!r} is not 1, 2 or 3")
        if not 0 <= self.linelength <= 999:
            raise ValueError(f"linelength {self.linelength!r} is not in 0..999")
        if not 0 <= self.pagelength <= 999:
            raise ValueError(f"pagelength {self.pagelength!r} is not in 0..999")
        if self.redoubles is not None and not 0 <= self.redoubles <= 99:
            raise ValueError(f"redoubles {self.redoubles!r} is not None or in 0..99")
        if self.sortwho not in SORTWHO_VALUES:
            raise ValueError(f"sortwho {self.sortwho!r} is not one of {SORTWHO_VALUES}")


def _frozen_toggles(toggles: Mapping[str, bool]) -> Mapping[str, bool]:
    """A read-only copy, so a frozen :class:`User` stays unchanged."""
    return MappingProxyType(dict(toggles))


@dataclasses.dataclass(frozen=True, slots=True)
class User:
    """A registered account as stored (the client-side ``away`` state is not stored)."""

    name: str
    password_hash: str
    created_at: int
    last_login_at: int | None
    """Time of the latest *recorded* login: read it before calling ``update_login``
    to get the "last login" that CLIP 1 shows."""
    last_login_host: str | None
    last_logout_at: int | None
    rating: float
    experience: int
    toggles: Mapping[str, bool]
    """Stored toggle values by name; a name that is missing means the server's default."""
    settings: UserSettings
    address: str | None
    """E-mail address, or ``None`` if never given."""
    gagged: tuple[str, ...]
    """Users this user gagged, in the order they were added."""
    blinded: tuple[str, ...]
    """Users this user blinded, in the order they were added."""
    is_bot: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "toggles", _frozen_toggles(self.toggles))


@dataclasses.dataclass(frozen=True, slots=True)
class StoredMessage:
    """A ``message`` stored for a user who was not logged in (CLIP 9 on delivery)."""

    id: int
    recipient: str
    sender: str
    sent_at: int
    text: str


@dataclasses.dataclass(frozen=True, slots=True)
class SavedEvents:
    """Events a save added to one game of a saved match (a ``saved_match_events`` row)."""

    game: int
    """The game's index in the match, from 0."""
    first_event: int
    """The index in that game of the first of these events."""
    events: str
    """The events as JSON array text, returned exactly as it was saved."""


@dataclasses.dataclass(frozen=True, slots=True)
class SavedMatch:
    """The saved match of one pair of players, ``player1 < player2`` by code point, keyed
    by its table's id."""

    table_id: str
    """The id of the table that plays it, the same across interruptions and resumes."""
    player1: str
    player2: str
    match_length: int | None
    score1: int
    score2: int
    snapshot: str
    """The server's JSON text, returned exactly as it was saved."""
    updated_at: int
    events: tuple[SavedEvents, ...] = ()
    """The event rows saved with it, ordered by game and first event. Only
    :meth:`db.repository.Database.load_match` reads them: listings leave them out."""

    def opponent_of(self, name: str) -> str:
        """The other player of the pair.

        :raises ValueError: ``name`` is not one of the two players.
        """
        if name == self.player1:
            return self.player2
        if name == self.player2:
            return self.player1
        raise ValueError(f"{name!r} is not a player of this saved match")

    def scores_for(self, name: str) -> tuple[int, int]:
        """``(name's score, the opponent's score)``, as ``show saved`` prints them.

        :raises ValueError: ``name`` is not one of the two players.
        """
        if name == self.player1:
            return self.score1, self.score2
        if name == self.player2:
            return self.score2, self.score1
        raise ValueError(f"{name!r} is not a player of this saved match")


@dataclasses.dataclass(frozen=True, slots=True)
class MatchRecord:
    """A finished match, players in the order the server recorded them."""

    id: int
    table_id: str
    """The id of the table that played it (its saved match's)."""
    player1: str
    player2: str
    match_length: int | None
    score1: int
    score2: int
    winner: str | None
    started_at: int
    ended_at: int
    rules: str
    """JSON text of the match rules, as given."""
    moves: str
    """JSON text of every game's moves, dice and cube actions, as given."""


@dataclasses.dataclass(frozen=True, slots=True)
class StoredAnalysis:
    """A finished match's analysis by GNU Backgammon: requested, done or failed."""

    match_id: int
    state: str
    """``queued`` (waiting for a worker, or being analysed), ``done`` or ``failed``."""
    ply: int
    queued_at: int
    finished_at: int | None
    rate1: float | None
    """The match's first player's rate (``done`` only)."""
    rate2: float | None
    result: str | None
    """The analysis as JSON text (``done``), or why it failed (``failed``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class RatingUpdate:
    """A player's new rating and experience after a rated match.

    :raises ValueError: negative experience.
    """

    name: str
    rating: float
    experience: int
    before: tuple[float, int] | None = None
    """The rating and experience it was computed from: the update is written only if
    they are still the stored ones, in the same transaction (else
    :class:`~db.errors.StaleRatingError`); None: written as it is."""

    def __post_init__(self) -> None:
        if self.experience < 0:
            raise ValueError(f"experience {self.experience!r} is negative")


@dataclasses.dataclass(frozen=True, slots=True)
class RatingEntry:
    """One line of the ``ratings`` list."""

    rank: int
    """1-based position on the list (ties broken by experience, then name)."""
    name: str
    rating: float
    experience: int


@dataclasses.dataclass(frozen=True, slots=True)
class SavedChouette:
    """A saved chouette table (D362): its id, who opened it, the core's JSON text."""

    table_id: str
    host: str
    snapshot: str


@dataclasses.dataclass(frozen=True, slots=True)
class ChouetteStanding:
    """One player's line in a chouette table's standings (D363)."""

    name: str
    games: int
    """Finished games in which they won or lost something at the table."""
    points: int


@dataclasses.dataclass(frozen=True, slots=True)
class ChouetteRecord:
    """One player's chouette games over every table (D363)."""

    name: str
    tables: int
    games: int
    points: int
