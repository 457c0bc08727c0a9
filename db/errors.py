"""Errors the repository raises; callers never see SQLAlchemy's exceptions for these cases."""

from __future__ import annotations

__all__ = [
    "ConstraintViolation",
    "DatabaseError",
    "DatabaseOutage",
    "DatabaseUnavailable",
    "MigrationError",
    "StaleRatingError",
    "TableFencedError",
    "UnknownMatchError",
    "UnknownUserError",
    "UserExistsError",
]


class DatabaseError(Exception):
    """Base of the repository's own errors."""


class DatabaseUnavailable(DatabaseError):
    """The database cannot be opened: a PostgreSQL server that does not answer, a
    database or role that does not exist, an SQLite file whose folder does not exist (or,
    for a read-only tool, an SQLite file that does not exist).

    Its text is one line for the operator: which database (the URL with its password
    hidden, an SQLite path made absolute), what is wrong, and what to do.
    """


class DatabaseOutage(DatabaseError):
    """The database could not do it now, through no fault of the request: PostgreSQL
    restarting, shut down or unreachable, a connection cut, the disk full, the file
    locked. The same request may well succeed a moment later; nothing of it was done
    (or, for a write whose connection broke at its commit, nothing is known of it).

    :ivar disk_full: the cause is a full disk (SQLite's ``SQLITE_FULL``, PostgreSQL's
        ``disk_full`` class 53).
    """

    def __init__(self, message: str, *, disk_full: bool = False) -> None:
        super().__init__(message)
        self.disk_full = disk_full


class MigrationError(DatabaseError):
    """The schema cannot be brought to the wanted revision.

    Typically the database is at a revision this code does not know: a newer server
    version already upgraded it.
    """


class UserExistsError(DatabaseError):
    """``create_user`` with a name that is already registered: exactly, or one that
    differs only in case (D269, unless the caller allows look-alikes)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"user {name!r} already exists")
        self.name = name


class MessageLimitError(DatabaseError):
    """``store_message`` over a bound (D270): the recipient has as many stored messages
    as allowed (``by_sender`` False), or the sender has (``by_sender`` True)."""

    def __init__(self, *, by_sender: bool) -> None:
        super().__init__("the sender's" if by_sender else "the recipient's")
        self.by_sender = by_sender


class UnknownUserError(DatabaseError, LookupError):
    """An operation named a user that is not registered.

    :ivar name: the name as given, or ``None`` if the database could not tell which of
        several names was unknown.
    """

    def __init__(self, name: str | None) -> None:
        super().__init__(f"no user {name!r}" if name is not None else "unknown user")
        self.name = name


class StaleRatingError(DatabaseError):
    """A match's end was rated from ratings that are no longer the stored ones: nothing
    was written (``record_finished_match`` with ``RatingUpdate.before``).

    :ivar current: the stored rating and experience of each rated player, to rate the
        match again from.
    """

    def __init__(self, current: dict[str, tuple[float, int]]) -> None:
        super().__init__(f"ratings changed meanwhile: {sorted(current)!r}")
        self.current = current


class TableFencedError(DatabaseError):
    """A save or the end of a table by a node that no longer owns it: another node has
    taken the table since (a higher epoch in ``table_owners``), or it has ended there.
    Nothing was written (docs/cluster.md, "Fencing")."""

    def __init__(self, table_id: str, epoch: int) -> None:
        super().__init__(f"table {table_id} is no longer ours at epoch {epoch}")
        self.table_id = table_id
        self.epoch = epoch


class UnknownMatchError(DatabaseError, LookupError):
    """No finished match record has this id."""

    def __init__(self, match_id: int) -> None:
        super().__init__(f"no match record {match_id}")
        self.match_id = match_id


class ConstraintViolation(DatabaseError):
    """A statement broke a constraint (unique key, foreign key, check) that no more
    specific error above describes."""
