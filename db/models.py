"""The ORM tables. Only ``db`` sees these; the server gets frozen dataclasses instead.

Conventions (see docs/database.md):

* Times are whole Unix seconds (``BIGINT``), the unit FIBS itself sends (CLIP 1, 5, 9).
* A user's name is the primary key, compared exactly (case-sensitive, as on FIBS) on both
  back ends, and other tables refer to users by name; an index on its lower case finds
  the names that differ only in case (new ones are refused, D269).
* A match length of ``NULL`` means an unlimited match.
* JSON produced by the rules core (saved-match snapshots, rules, move records) is stored as
  opaque text, byte for byte; only the toggles column is interpreted (a JSON object).
* Every constraint has a fixed name (:data:`NAMING_CONVENTION`), so later migrations can
  refer to them on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "NAMING_CONVENTION",
    "Base",
    "BlindRow",
    "ChouetteResultRow",
    "GagRow",
    "MatchAnalysisRow",
    "MatchRecordRow",
    "MessageRow",
    "SavedChouettePlayerRow",
    "SavedChouetteRow",
    "SavedEventsRow",
    "SavedMatchRow",
    "UserRow",
    "WebTokenRow",
]

NAMING_CONVENTION: Final = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Deterministic constraint names, so migrations can address them by name."""

_CASCADE: Final = "CASCADE"
USERS_NAME_LOWER: Final = "ix_users_name_lower"
"""The index of the users' names in lower case (an expression: named by hand)."""


def _user_fk() -> ForeignKey:
    """A reference to a user by name; the row goes when the user goes."""
    return ForeignKey("users.name", ondelete=_CASCADE)


class Base(DeclarativeBase):
    """Declarative base carrying the shared :class:`~sqlalchemy.MetaData`."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class UserRow(Base):
    """One registered account, with everything that survives a logout."""

    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint("experience >= 0", name="experience"),
        CheckConstraint("boardstyle BETWEEN 1 AND 3", name="boardstyle"),
        CheckConstraint("linelength BETWEEN 0 AND 999", name="linelength"),
        CheckConstraint("pagelength BETWEEN 0 AND 999", name="pagelength"),
        CheckConstraint("redoubles IS NULL OR redoubles BETWEEN 0 AND 99", name="redoubles"),
        CheckConstraint("sortwho IN ('login', 'name', 'rating', 'rrating')", name="sortwho"),
    )

    name: Mapped[str] = mapped_column(String, primary_key=True)
    """Login name, exactly as registered (FIBS names are case-sensitive)."""
    password_hash: Mapped[str] = mapped_column(String)
    """The server's salted hash string; the database never sees a password."""
    created_at: Mapped[int] = mapped_column(BigInteger)
    last_login_at: Mapped[int | None] = mapped_column(BigInteger)
    last_login_host: Mapped[str | None] = mapped_column(String)
    last_logout_at: Mapped[int | None] = mapped_column(BigInteger)
    rating: Mapped[float] = mapped_column(Float)
    experience: Mapped[int] = mapped_column(Integer)
    toggles: Mapped[dict[str, bool]] = mapped_column(JSON)
    """Toggle name -> value, for the toggles the server chose to store (spec §4.15)."""
    boardstyle: Mapped[int] = mapped_column(Integer)
    linelength: Mapped[int] = mapped_column(Integer)
    pagelength: Mapped[int] = mapped_column(Integer)
    redoubles: Mapped[int | None] = mapped_column(Integer)
    """Redouble limit for unlimited matches: 0 = none, NULL = unlimited (spec §4.16)."""
    sortwho: Mapped[str] = mapped_column(String)
    timezone: Mapped[str] = mapped_column(String)
    address: Mapped[str | None] = mapped_column(String)
    """E-mail address from the ``address`` command."""
    is_bot: Mapped[bool] = mapped_column(Boolean)


Index(USERS_NAME_LOWER, func.lower(UserRow.name))
"""Names without regard to case (revision 0003): a new name is refused when one that
differs only in case is registered, and ``whois`` names the look-alikes (D269). Not
unique: look-alikes registered before stay."""


class GagRow(Base):
    """``owner`` does not want to hear ``target`` (the ``gag`` command)."""

    __tablename__ = "gags"
    __table_args__ = (UniqueConstraint("owner", "target"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Insertion order, so the list reads back in the order it was built."""
    owner: Mapped[str] = mapped_column(String, _user_fk())
    target: Mapped[str] = mapped_column(String, _user_fk(), index=True)


class BlindRow(Base):
    """``owner`` does not want to be watched by ``target`` (the ``blind`` command)."""

    __tablename__ = "blinds"
    __table_args__ = (UniqueConstraint("owner", "target"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    owner: Mapped[str] = mapped_column(String, _user_fk())
    target: Mapped[str] = mapped_column(String, _user_fk(), index=True)


class MessageRow(Base):
    """A ``message`` waiting for its recipient; deleted once its delivery is confirmed
    (the recipient's connection sent a line after it, D270)."""

    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    recipient: Mapped[str] = mapped_column(String, _user_fk(), index=True)
    sender: Mapped[str] = mapped_column(String, index=True)
    """Plain name, not a reference: a message outlives its sender's account. Indexed
    (revision 0004): a sender's stored messages are counted at each store (D270)."""
    sent_at: Mapped[int] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)


class SavedMatchRow(Base):
    """The one saved (interrupted) match of a pair of players (spec §4.9), keyed by its
    table's id (revision 0005; docs/database.md).

    The table id stays the same across interruptions and resumes, and goes into the match
    record when the match ends. The pair is stored in a canonical order (``player1 <
    player2`` by code point) and is unique: FIBS keeps one saved match per pair, found by
    the pair when the two meet again (``invite``/``join``).
    """

    __tablename__ = "saved_matches"
    __table_args__ = (
        CheckConstraint("player1 <> player2", name="distinct_players"),
        CheckConstraint("match_length IS NULL OR match_length > 0", name="match_length"),
        UniqueConstraint("player1", "player2"),
        Index(None, "player2"),
    )

    table_id: Mapped[str] = mapped_column(String, primary_key=True)
    """The table's id: 32 lower-case hexadecimal digits (a UUID's), made by the server."""
    player1: Mapped[str] = mapped_column(String, _user_fk())
    player2: Mapped[str] = mapped_column(String, _user_fk())
    match_length: Mapped[int | None] = mapped_column(Integer)
    score1: Mapped[int] = mapped_column(Integer)
    score2: Mapped[int] = mapped_column(Integer)
    snapshot: Mapped[str] = mapped_column(Text)
    """The server's JSON text of the match, stored verbatim: the whole match, or (as the
    server saves it now) the state without the events, kept in :class:`SavedEventsRow`."""
    updated_at: Mapped[int] = mapped_column(BigInteger)


class SavedEventsRow(Base):
    """Events of a saved match, appended as it is played (docs/database.md).

    Each save of a running match adds the events of its action, so a save writes a few
    hundred bytes however long the match is. A row holds the events one save added to
    one game of the match: ``events`` is the JSON array text of the rules core's events,
    ``first_event`` the index in that game of the first of them. The rows go with their
    saved match.
    """

    __tablename__ = "saved_match_events"
    __table_args__ = (CheckConstraint("game >= 0 AND first_event >= 0", name="position"),)

    table_id: Mapped[str] = mapped_column(
        String, ForeignKey("saved_matches.table_id", ondelete=_CASCADE), primary_key=True
    )
    game: Mapped[int] = mapped_column(Integer, primary_key=True)
    """The game's index in the match, from 0."""
    first_event: Mapped[int] = mapped_column(Integer, primary_key=True)
    events: Mapped[str] = mapped_column(Text)


class MatchRecordRow(Base):
    """A finished match, for ``oldmoves``-style listings and ``.mat`` export.

    Player names are plain text, not references: the record outlives the accounts.
    """

    __tablename__ = "match_records"
    __table_args__ = (
        CheckConstraint("match_length IS NULL OR match_length > 0", name="match_length"),
        Index(None, "player1", "ended_at"),
        Index(None, "player2", "ended_at"),
        Index(None, "table_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(String)
    """The id of the table that played it (its saved match's, kept across resumes);
    records stored before revision 0005 were each given one of their own."""
    player1: Mapped[str] = mapped_column(String)
    player2: Mapped[str] = mapped_column(String)
    match_length: Mapped[int | None] = mapped_column(Integer)
    score1: Mapped[int] = mapped_column(Integer)
    score2: Mapped[int] = mapped_column(Integer)
    winner: Mapped[str | None] = mapped_column(String)
    started_at: Mapped[int] = mapped_column(BigInteger)
    ended_at: Mapped[int] = mapped_column(BigInteger)
    rules: Mapped[str] = mapped_column(Text)
    """The match rules as the rules core's JSON text."""
    moves: Mapped[str] = mapped_column(Text)
    """Every game's moves, dice and cube actions as the rules core's JSON text."""


class MatchAnalysisRow(Base):
    """GNU Backgammon's analysis of a finished match (issue 29; docs/analysis.md).

    A row is the request (``state`` ``queued``: the queue of the analysis workers, which
    survives a restart) and then its outcome (``done`` with the analysis, or ``failed``).
    The players' rates are columns of their own, for a player's average over their last
    matches; everything else is the analysis as JSON text (:mod:`protocol.analysis`).
    """

    __tablename__ = "match_analyses"
    __table_args__ = (
        CheckConstraint("state IN ('queued', 'done', 'failed')", name="state"),
        Index(None, "state", "queued_at"),
    )

    match_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("match_records.id", ondelete=_CASCADE), primary_key=True
    )
    state: Mapped[str] = mapped_column(String)
    ply: Mapped[int] = mapped_column(Integer)
    queued_at: Mapped[int] = mapped_column(BigInteger)
    finished_at: Mapped[int | None] = mapped_column(BigInteger)
    rate1: Mapped[float | None] = mapped_column(Float)
    """The first player's (``match_records.player1``) rate, when done."""
    rate2: Mapped[float | None] = mapped_column(Float)
    result: Mapped[str | None] = mapped_column(Text)
    """The analysis as JSON text (``done``), or why it failed (``failed``)."""


class WebTokenRow(Base):
    """A session token of the web page (revision 0008, D320-D329; docs/web.md): the page
    logs in again with it after a dropped WebSocket, without a stored password.

    Only the token's SHA-256 is stored (``digest``, 64 hex digits): a copy of the database
    logs no one in. A row goes when it expires (deleted at the user's next issue), when
    the page replaces or ends it, at a password change, and with its user.
    """

    __tablename__ = "web_tokens"

    digest: Mapped[str] = mapped_column(String, primary_key=True)
    user_name: Mapped[str] = mapped_column(String, _user_fk(), index=True)
    issued_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int] = mapped_column(BigInteger)


class SavedChouetteRow(Base):
    """A chouette table, saved after every action (revision 0010, D362; docs/chouette.md):
    the rules core's JSON of the table without its events, stored verbatim."""

    __tablename__ = "saved_chouettes"

    table_id: Mapped[str] = mapped_column(String, primary_key=True)
    host: Mapped[str] = mapped_column(String)
    """Who opened it: the table's name."""
    snapshot: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[int] = mapped_column(BigInteger)


class SavedChouettePlayerRow(Base):
    """A player at a saved chouette table (those who have not left it): how a returning
    player finds their table."""

    __tablename__ = "saved_chouette_players"

    table_id: Mapped[str] = mapped_column(
        String, ForeignKey("saved_chouettes.table_id", ondelete=_CASCADE), primary_key=True
    )
    name: Mapped[str] = mapped_column(String, _user_fk(), primary_key=True, index=True)


class ChouetteResultRow(Base):
    """What one player won or lost in one finished chouette game (revision 0010, D363):
    the standings per table and per player are sums of these. Names are plain text, as
    in ``match_records``: the record outlives the accounts."""

    __tablename__ = "chouette_results"

    table_id: Mapped[str] = mapped_column(String, primary_key=True)
    game: Mapped[int] = mapped_column(Integer, primary_key=True)
    """The game's number at its table, from 1."""
    name: Mapped[str] = mapped_column(String, primary_key=True, index=True)
    seat: Mapped[str] = mapped_column(String)
    """Where they sat: ``box``, ``partner`` or ``line`` (as in ``show chouette``)."""
    points: Mapped[int] = mapped_column(Integer)
    finished_at: Mapped[int] = mapped_column(BigInteger)


class TableOwnerRow(Base):
    """Which node runs a match's table, with its fencing token (revision 0011, issue 32).

    ``epoch`` goes up by one each time a node takes the table (a new match, a resume,
    another node resuming it after its owner was lost); every save and the end of the
    table are written only while the row still has the epoch the writer took it with
    (checked in the write itself), so an old owner that wakes cannot write
    (docs/cluster.md, "Fencing"). The row goes with the match's end."""

    __tablename__ = "table_owners"

    table_id: Mapped[str] = mapped_column(String, primary_key=True)
    node: Mapped[str] = mapped_column(String)
    """The name of the node that took it last (for people reading the database)."""
    epoch: Mapped[int] = mapped_column(Integer)
    claimed_at: Mapped[int] = mapped_column(BigInteger)
