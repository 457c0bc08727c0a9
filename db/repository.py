"""The async persistence API the server uses: :class:`Database`.

Every method takes and returns plain values (``str``, ``int``, the frozen dataclasses of
:mod:`db.records`); no SQLAlchemy object leaves this module. Every write runs in its own
transaction and is committed (on disk) when the awaited call returns, so the server can
announce a change right after it. Names are exact, case-sensitive matches, as on FIBS.

Cancellation: a write that has started is finished even if the awaiting task is cancelled
(for example the connection task of a player who just dropped, whose match is being saved);
the caller still gets its ``CancelledError`` at once, and :meth:`Database.close` waits for
such writes. Only :meth:`Database.take_messages` is not shielded: a cancelled caller could
not deliver what it took, so it is better rolled back.

Concurrency: many coroutines may call one :class:`Database` at once. On SQLite, writes
of one process are queued on an :class:`asyncio.Lock` (SQLite has a single writer anyway;
queueing in the event loop is fairer and cheaper than every connection polling the file
lock) and each write transaction starts with ``BEGIN IMMEDIATE`` to stay safe against other
processes. On PostgreSQL writes run concurrently; each method is one atomic statement or
one transaction, so no update is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import (
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Mapping,
    Sequence,
)
from types import TracebackType
from typing import Any, Concatenate, Final, ParamSpec, Self, TypeVar

from sqlalchemy import ColumnElement, and_, delete, func, literal, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession
from sqlalchemy.orm import QueryableAttribute

from db.engine import create_engine, create_session_factory, migrate_engine, write_engine
from db.errors import UnknownUserError, UserExistsError
from db.models import BlindRow, GagRow, MatchRecordRow, MessageRow, SavedMatchRow, UserRow
from db.records import (
    DEFAULT_RATING,
    MatchRecord,
    RatingEntry,
    RatingUpdate,
    SavedMatch,
    StoredMessage,
    User,
    UserSettings,
)

__all__ = ["RATING_LIST_EXPERIENCE", "Database"]

RATING_LIST_EXPERIENCE: Final = 50
"""Only players with *more* experience than this are on the ``ratings`` list (spec §4.14)."""

Clock = Callable[[], float]
"""Returns the current Unix time; injected so tests control every stored timestamp."""

_ListRow = type[GagRow] | type[BlindRow]

_log = logging.getLogger(__name__)

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _durable(
    method: Callable[Concatenate[Database, _P], Coroutine[Any, Any, _T]],
) -> Callable[Concatenate[Database, _P], Coroutine[Any, Any, _T]]:
    """Run a write method as its own task that a cancelled caller does not abort."""

    @functools.wraps(method)
    async def shielded(self: Database, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        task = asyncio.ensure_future(method(self, *args, **kwargs))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(_report_orphaned_write)
            raise

    return shielded


def _report_orphaned_write(task: asyncio.Future[Any]) -> None:
    """Log a write that failed after its caller was cancelled: nobody else will see it."""
    if not task.cancelled() and (error := task.exception()) is not None:
        _log.error("a write failed after its caller was cancelled", exc_info=error)


class Database:
    """One open database: an engine, its session factories and the repository methods.

    Create it with :meth:`open` and release it with :meth:`close` (or ``async with``).
    """

    def __init__(self, engine: AsyncEngine, *, clock: Clock = time.time) -> None:
        """Wrap an engine made by :func:`db.engine.create_engine` (prefer :meth:`open`)."""
        self._engine = engine
        self._clock = clock
        self._dialect = engine.dialect.name
        self._read_sessions = create_session_factory(engine)
        self._write_sessions = create_session_factory(write_engine(engine))
        # SQLite has one writer at a time; see the module docstring.
        self._write_lock = asyncio.Lock() if self._dialect == "sqlite" else None
        # An in-memory SQLite database lives in one connection (a StaticPool) that every
        # session shares, so even reads must take turns: two open transactions on one
        # connection would mix.
        self._read_lock = self._write_lock if _is_sqlite_memory(engine) else None
        self._pending: set[asyncio.Future[Any]] = set()
        """Shielded writes still running (see :func:`_durable`)."""
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str | URL,
        *,
        schema: str | None = None,
        migrate: bool = True,
        clock: Clock = time.time,
    ) -> Self:
        """Connect to ``url`` and, unless ``migrate`` is false, bring its schema up to date.

        :param schema: PostgreSQL only: the (existing) schema to work in.
        :raises ValueError: unsupported URL.
        :raises MigrationError: the schema is at a revision this code does not know.
        """
        engine = create_engine(url, schema=schema)
        try:
            if migrate:
                await migrate_engine(engine)
        except BaseException:
            await engine.dispose()
            raise
        return cls(engine, clock=clock)

    async def close(self) -> None:
        """Wait for writes still in flight, then close every pooled connection.

        Calling it again does nothing.
        """
        if not self._closed:
            self._closed = True
            while self._pending:
                await asyncio.wait(set(self._pending))
            await self._engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def backend(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._dialect

    # -- plumbing -------------------------------------------------------------------------

    def _now(self, at: float | None) -> int:
        """``at`` or the clock's time, as whole Unix seconds."""
        return int(self._clock() if at is None else at)

    @contextlib.asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
        """A session for reads; its transaction is rolled back at the end."""
        lock = self._read_lock if self._read_lock is not None else contextlib.nullcontext()
        async with lock, self._read_sessions() as session:
            yield session

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncSession]:
        """A session whose transaction commits when the block ends without an error."""
        lock = self._write_lock if self._write_lock is not None else contextlib.nullcontext()
        async with lock, self._write_sessions.begin() as session:
            yield session

    def _insert(
        self, table: type[UserRow] | _ListRow | type[SavedMatchRow]
    ) -> postgresql.Insert | sqlite.Insert:
        """An INSERT that supports ``ON CONFLICT`` on the current back end."""
        if self._dialect == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    def _name_order(
        self, column: ColumnElement[str] | QueryableAttribute[str]
    ) -> ColumnElement[str] | QueryableAttribute[str]:
        """``column`` for ORDER BY/comparisons in code-point order on both back ends.

        SQLite's default BINARY collation already is; PostgreSQL needs ``COLLATE "C"``
        instead of the database's locale collation.
        """
        return column.collate("C") if self._dialect == "postgresql" else column

    async def _update_user(self, name: str, **values: object) -> None:
        """Set columns of one user.

        :raises UnknownUserError: no such user.
        """
        statement = (
            update(UserRow).where(UserRow.name == name).values(**values).returning(UserRow.name)
        )
        async with self._write() as session:
            if (await session.execute(statement)).scalar_one_or_none() is None:
                raise UnknownUserError(name)

    # -- users ----------------------------------------------------------------------------

    @_durable
    async def create_user(
        self,
        name: str,
        password_hash: str,
        *,
        toggles: Mapping[str, bool] | None = None,
        settings: UserSettings | None = None,
        address: str | None = None,
        is_bot: bool = False,
        rating: float = DEFAULT_RATING,
        experience: int = 0,
        created_at: float | None = None,
    ) -> User:
        """Register a new account and return it as stored.

        :param toggles: the toggle values to store (the server's defaults for new users).
        :raises UserExistsError: the exact name is taken.
        :raises ValueError: an empty name, negative experience, or a toggle value that is
            not a bool.
        """
        if not name:
            raise ValueError("a user name cannot be empty")
        _check_experience(experience)
        settings = settings if settings is not None else UserSettings()
        row = UserRow(
            name=name,
            password_hash=password_hash,
            created_at=self._now(created_at),
            last_login_at=None,
            last_login_host=None,
            last_logout_at=None,
            rating=float(rating),
            experience=experience,
            toggles=_checked_toggles(toggles or {}),
            address=address,
            is_bot=is_bot,
            **_settings_values(settings),
        )
        try:
            async with self._write() as session:
                session.add(row)
        except IntegrityError as exc:
            raise UserExistsError(name) from exc
        return _user(row, (), ())

    async def get_user(self, name: str) -> User | None:
        """The account called exactly ``name``, with its gag and blind lists, or ``None``."""
        async with self._read() as session:
            row = await session.get(UserRow, name)
            if row is None:
                return None
            gagged = await self._targets(session, GagRow, name)
            blinded = await self._targets(session, BlindRow, name)
        return _user(row, gagged, blinded)

    async def user_exists(self, name: str) -> bool:
        """Whether an account called exactly ``name`` exists."""
        async with self._read() as session:
            found = await session.scalar(select(UserRow.name).where(UserRow.name == name))
        return found is not None

    @_durable
    async def update_login(self, name: str, host: str, *, at: float | None = None) -> None:
        """Record a login from ``host`` (read :meth:`get_user` first for the previous one).

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, last_login_at=self._now(at), last_login_host=host)

    @_durable
    async def update_logout(self, name: str, *, at: float | None = None) -> None:
        """Record a logout (or dropped connection).

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, last_logout_at=self._now(at))

    @_durable
    async def save_settings(
        self, name: str, toggles: Mapping[str, bool], settings: UserSettings
    ) -> None:
        """Replace the stored toggles and ``set`` variables of a user.

        :raises UnknownUserError: no such user.
        :raises ValueError: a toggle value that is not a bool.
        """
        await self._update_user(
            name, toggles=_checked_toggles(toggles), **_settings_values(settings)
        )

    @_durable
    async def set_password_hash(self, name: str, password_hash: str) -> None:
        """Replace the stored password hash.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, password_hash=password_hash)

    @_durable
    async def set_address(self, name: str, address: str | None) -> None:
        """Store (or with ``None`` clear) the e-mail address.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, address=address)

    @_durable
    async def set_bot(self, name: str, is_bot: bool) -> None:
        """Mark or unmark the account as a bot.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, is_bot=is_bot)

    @_durable
    async def update_rating(self, name: str, rating: float, experience: int) -> None:
        """Store a new rating and experience.

        :raises UnknownUserError: no such user.
        :raises ValueError: negative experience.
        """
        _check_experience(experience)
        await self._update_user(name, rating=float(rating), experience=experience)

    # -- gag and blind lists ----------------------------------------------------------------

    @_durable
    async def add_gag(self, owner: str, target: str) -> bool:
        """Add ``target`` to ``owner``'s gag list; ``False`` if it was already there.

        :raises UnknownUserError: either user does not exist.
        """
        return await self._add_to_list(GagRow, owner, target)

    @_durable
    async def remove_gag(self, owner: str, target: str) -> bool:
        """Remove ``target`` from ``owner``'s gag list; ``False`` if it was not there."""
        return await self._remove_from_list(GagRow, owner, target)

    async def list_gags(self, owner: str) -> tuple[str, ...]:
        """``owner``'s gag list in the order it was built (empty for an unknown owner)."""
        async with self._read() as session:
            return await self._targets(session, GagRow, owner)

    @_durable
    async def add_blind(self, owner: str, target: str) -> bool:
        """Add ``target`` to ``owner``'s blind list; ``False`` if it was already there.

        :raises UnknownUserError: either user does not exist.
        """
        return await self._add_to_list(BlindRow, owner, target)

    @_durable
    async def remove_blind(self, owner: str, target: str) -> bool:
        """Remove ``target`` from ``owner``'s blind list; ``False`` if it was not there."""
        return await self._remove_from_list(BlindRow, owner, target)

    async def list_blinds(self, owner: str) -> tuple[str, ...]:
        """``owner``'s blind list in the order it was built (empty for an unknown owner)."""
        async with self._read() as session:
            return await self._targets(session, BlindRow, owner)

    async def _add_to_list(self, table: _ListRow, owner: str, target: str) -> bool:
        statement = (
            self._insert(table)
            .values(owner=owner, target=target)
            .on_conflict_do_nothing(index_elements=["owner", "target"])
            .returning(table.id)
        )
        try:
            async with self._write() as session:
                added = (await session.execute(statement)).scalar_one_or_none()
        except IntegrityError as exc:  # a foreign key: one of the names is not a user
            raise UnknownUserError(await self._first_unknown(owner, target)) from exc
        return added is not None

    async def _remove_from_list(self, table: _ListRow, owner: str, target: str) -> bool:
        statement = (
            delete(table).where(table.owner == owner, table.target == target).returning(table.id)
        )
        async with self._write() as session:
            return (await session.execute(statement)).first() is not None

    @staticmethod
    async def _targets(session: AsyncSession, table: _ListRow, owner: str) -> tuple[str, ...]:
        result = await session.scalars(
            select(table.target).where(table.owner == owner).order_by(table.id)
        )
        return tuple(result)

    async def _first_unknown(self, *names: str) -> str | None:
        """The first of ``names`` that is not a user (to name it in an error)."""
        for name in names:
            if not await self.user_exists(name):
                return name
        return None

    # -- stored messages ------------------------------------------------------------------

    @_durable
    async def store_message(
        self, recipient: str, sender: str, text: str, *, sent_at: float | None = None
    ) -> StoredMessage:
        """Store a message until ``recipient`` next logs in.

        :raises UnknownUserError: the recipient does not exist.
        """
        row = MessageRow(recipient=recipient, sender=sender, sent_at=self._now(sent_at), text=text)
        try:
            async with self._write() as session:
                session.add(row)
        except IntegrityError as exc:
            raise UnknownUserError(recipient) from exc
        return _message(row)

    async def take_messages(self, recipient: str) -> list[StoredMessage]:
        """Return and delete every message stored for ``recipient``, oldest first.

        One ``DELETE ... RETURNING`` statement: two concurrent calls never both get a
        message, and a message stored meanwhile is either returned now or kept.
        """
        statement = (
            delete(MessageRow)
            .where(MessageRow.recipient == recipient)
            .returning(
                MessageRow.id,
                MessageRow.recipient,
                MessageRow.sender,
                MessageRow.sent_at,
                MessageRow.text,
            )
        )
        async with self._write() as session:
            rows = (await session.execute(statement)).all()
        messages = [StoredMessage(*row) for row in rows]
        messages.sort(key=lambda message: (message.sent_at, message.id))
        return messages

    async def count_messages(self, recipient: str) -> int:
        """How many messages wait for ``recipient``."""
        async with self._read() as session:
            count = await session.scalar(
                select(func.count()).where(MessageRow.recipient == recipient)
            )
        return count or 0

    # -- saved matches ----------------------------------------------------------------------

    @_durable
    async def save_match(
        self,
        player_a: str,
        player_b: str,
        snapshot: str,
        *,
        match_length: int | None,
        score_a: int,
        score_b: int,
        at: float | None = None,
    ) -> SavedMatch:
        """Store (insert or replace) the saved match of a pair of players.

        The players may come in either order; each score goes with its player.

        :param snapshot: the rules core's JSON text, stored verbatim.
        :param match_length: points to win, or ``None`` for an unlimited match.
        :raises UnknownUserError: either player does not exist.
        :raises ValueError: both names are the same, or a length that is not positive.
        """
        _check_length(match_length)
        player1, player2 = _pair(player_a, player_b)
        score1, score2 = (score_a, score_b) if player1 == player_a else (score_b, score_a)
        saved = SavedMatch(
            player1=player1,
            player2=player2,
            match_length=match_length,
            score1=score1,
            score2=score2,
            snapshot=snapshot,
            updated_at=self._now(at),
        )
        values = {
            "match_length": saved.match_length,
            "score1": saved.score1,
            "score2": saved.score2,
            "snapshot": saved.snapshot,
            "updated_at": saved.updated_at,
        }
        statement = (
            self._insert(SavedMatchRow)
            .values(player1=player1, player2=player2, **values)
            .on_conflict_do_update(index_elements=["player1", "player2"], set_=values)
        )
        try:
            async with self._write() as session:
                await session.execute(statement)
        except IntegrityError as exc:
            raise UnknownUserError(await self._first_unknown(player_a, player_b)) from exc
        return saved

    async def load_match(self, player_a: str, player_b: str) -> SavedMatch | None:
        """The saved match of the pair (names in either order), or ``None``."""
        if player_a == player_b:
            return None
        async with self._read() as session:
            row = await session.get(SavedMatchRow, _pair(player_a, player_b))
        return None if row is None else _saved_match(row)

    @_durable
    async def delete_match(self, player_a: str, player_b: str) -> bool:
        """Delete the saved match of the pair; ``False`` if there was none."""
        if player_a == player_b:
            return False
        player1, player2 = _pair(player_a, player_b)
        statement = (
            delete(SavedMatchRow)
            .where(SavedMatchRow.player1 == player1, SavedMatchRow.player2 == player2)
            .returning(SavedMatchRow.player1)
        )
        async with self._write() as session:
            return (await session.execute(statement)).first() is not None

    async def list_saved_matches(self, name: str) -> list[SavedMatch]:
        """Every saved match ``name`` plays in, ordered by opponent name (code point)."""
        async with self._read() as session:
            rows = await session.scalars(
                select(SavedMatchRow).where(
                    or_(SavedMatchRow.player1 == name, SavedMatchRow.player2 == name)
                )
            )
            matches = [_saved_match(row) for row in rows]
        matches.sort(key=lambda match: match.opponent_of(name))
        return matches

    async def count_saved_matches(self, name: str) -> int:
        """How many saved matches ``name`` plays in (``show savedcount``)."""
        async with self._read() as session:
            count = await session.scalar(
                select(func.count()).where(
                    or_(SavedMatchRow.player1 == name, SavedMatchRow.player2 == name)
                )
            )
        return count or 0

    # -- finished matches -------------------------------------------------------------------

    @_durable
    async def record_finished_match(
        self,
        *,
        player1: str,
        player2: str,
        match_length: int | None,
        score1: int,
        score2: int,
        winner: str | None,
        started_at: float,
        ended_at: float | None = None,
        rules: str,
        moves: str,
        rating_updates: Sequence[RatingUpdate] = (),
        delete_saved: bool = True,
    ) -> MatchRecord:
        """Store a finished match and, in the same transaction, its consequences.

        Either everything below is stored or nothing is:

        * the match record;
        * each of ``rating_updates`` (new rating and experience of a player);
        * with ``delete_saved``, the pair's saved match is removed (the match that was
          resumed has ended).

        :param rules: JSON text of the match rules, stored verbatim.
        :param moves: JSON text of the move record, stored verbatim.
        :raises UnknownUserError: a rating update names an unknown user.
        :raises ValueError: the winner is not one of the players, both are the same, or a
            length that is not positive.
        """
        _check_length(match_length)
        if player1 == player2:
            raise ValueError(f"a match needs two different players, got {player1!r} twice")
        if winner is not None and winner not in (player1, player2):
            raise ValueError(f"winner {winner!r} is not {player1!r} or {player2!r}")
        row = MatchRecordRow(
            player1=player1,
            player2=player2,
            match_length=match_length,
            score1=score1,
            score2=score2,
            winner=winner,
            started_at=int(started_at),
            ended_at=self._now(ended_at),
            rules=rules,
            moves=moves,
        )
        async with self._write() as session:
            session.add(row)
            for change in rating_updates:
                statement = (
                    update(UserRow)
                    .where(UserRow.name == change.name)
                    .values(rating=float(change.rating), experience=change.experience)
                    .returning(UserRow.name)
                )
                if (await session.execute(statement)).scalar_one_or_none() is None:
                    raise UnknownUserError(change.name)
            if delete_saved:
                pair = _pair(player1, player2)
                await session.execute(
                    delete(SavedMatchRow).where(
                        SavedMatchRow.player1 == pair[0], SavedMatchRow.player2 == pair[1]
                    )
                )
            await session.flush()
        return _match_record(row)

    async def get_match_record(self, record_id: int) -> MatchRecord | None:
        """The finished match with this id, or ``None``."""
        async with self._read() as session:
            row = await session.get(MatchRecordRow, record_id)
        return None if row is None else _match_record(row)

    async def list_match_records(self, name: str, *, limit: int | None = None) -> list[MatchRecord]:
        """Finished matches ``name`` played, newest first (at most ``limit``)."""
        statement = (
            select(MatchRecordRow)
            .where(or_(MatchRecordRow.player1 == name, MatchRecordRow.player2 == name))
            .order_by(MatchRecordRow.ended_at.desc(), MatchRecordRow.id.desc())
            .limit(limit)
        )
        async with self._read() as session:
            return [_match_record(row) for row in await session.scalars(statement)]

    # -- rating list ------------------------------------------------------------------------

    async def rating_list(
        self,
        *,
        start: int = 1,
        count: int = 20,
        experience_above: int = RATING_LIST_EXPERIENCE,
    ) -> list[RatingEntry]:
        """Ranks ``start`` to ``start + count - 1`` of the ``ratings`` list.

        The list holds players with experience above ``experience_above``, ordered by
        rating (highest first), then experience (highest first), then name (code point).

        :raises ValueError: ``start`` < 1 or ``count`` < 0.
        """
        if start < 1 or count < 0:
            raise ValueError(f"invalid rating list range: start={start!r}, count={count!r}")
        statement = (
            select(UserRow.name, UserRow.rating, UserRow.experience)
            .where(UserRow.experience > experience_above)
            .order_by(
                UserRow.rating.desc(),
                UserRow.experience.desc(),
                self._name_order(UserRow.name),
            )
            .offset(start - 1)
            .limit(count)
        )
        async with self._read() as session:
            rows = (await session.execute(statement)).all()
        return [
            RatingEntry(rank=start + index, name=name, rating=rating, experience=experience)
            for index, (name, rating, experience) in enumerate(rows)
        ]

    async def rating_entry(
        self, name: str, *, experience_above: int = RATING_LIST_EXPERIENCE
    ) -> RatingEntry | None:
        """``name``'s line for ``ratings <name>``, or ``None`` for an unknown user.

        The rank is 1 + the number of listed players ahead of ``name`` in the list's order,
        so a player not (yet) on the list gets the rank they would have on it.
        """
        async with self._read() as session:
            row = await session.get(UserRow, name)
            if row is None:
                return None
            name_column = self._name_order(UserRow.name)
            ahead = or_(
                UserRow.rating > row.rating,
                and_(UserRow.rating == row.rating, UserRow.experience > row.experience),
                and_(
                    UserRow.rating == row.rating,
                    UserRow.experience == row.experience,
                    name_column < self._name_order(literal(row.name)),
                ),
            )
            ahead_count = await session.scalar(
                select(func.count()).where(
                    UserRow.experience > experience_above, UserRow.name != name, ahead
                )
            )
        return RatingEntry(
            rank=(ahead_count or 0) + 1,
            name=row.name,
            rating=row.rating,
            experience=row.experience,
        )

    async def count_rated_players(self, *, experience_above: int = RATING_LIST_EXPERIENCE) -> int:
        """How many players are on the ``ratings`` list."""
        async with self._read() as session:
            count = await session.scalar(
                select(func.count()).where(UserRow.experience > experience_above)
            )
        return count or 0


# -- helpers ------------------------------------------------------------------------------------


def _is_sqlite_memory(engine: AsyncEngine) -> bool:
    """Whether ``engine`` is an in-memory SQLite database (``sqlite+aiosqlite://``)."""
    url = engine.url
    return url.get_backend_name() == "sqlite" and (
        url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"
    )


def _check_length(match_length: int | None) -> None:
    """:raises ValueError: a match length that is neither ``None`` (unlimited) nor positive."""
    if match_length is not None and match_length < 1:
        raise ValueError(f"match length {match_length!r} is not positive or None")


def _check_experience(experience: int) -> None:
    """:raises ValueError: negative experience."""
    if experience < 0:
        raise ValueError(f"experience {experience!r} is negative")


def _pair(player_a: str, player_b: str) -> tuple[str, str]:
    """The canonical (code point) order of a pair of distinct names.

    :raises ValueError: both names are the same.
    """
    if player_a == player_b:
        raise ValueError(f"a saved match needs two different players, got {player_a!r} twice")
    return (player_a, player_b) if player_a < player_b else (player_b, player_a)


def _checked_toggles(toggles: Mapping[str, bool]) -> dict[str, bool]:
    """A plain dict of the toggles, each value checked to be a real bool.

    :raises ValueError: a key that is not a string or a value that is not a bool.
    """
    for key, value in toggles.items():
        if not isinstance(key, str) or not isinstance(value, bool):
            raise ValueError(f"toggle {key!r} must map a name to a bool, got {value!r}")
    return dict(toggles)


def _settings_values(settings: UserSettings) -> dict[str, object]:
    """The :class:`UserRow` columns of a :class:`UserSettings`."""
    return {
        "boardstyle": settings.boardstyle,
        "linelength": settings.linelength,
        "pagelength": settings.pagelength,
        "redoubles": settings.redoubles,
        "sortwho": settings.sortwho,
        "timezone": settings.timezone,
    }


def _user(row: UserRow, gagged: Iterable[str], blinded: Iterable[str]) -> User:
    return User(
        name=row.name,
        password_hash=row.password_hash,
        created_at=row.created_at,
        last_login_at=row.last_login_at,
        last_login_host=row.last_login_host,
        last_logout_at=row.last_logout_at,
        rating=row.rating,
        experience=row.experience,
        toggles=dict(row.toggles),
        settings=UserSettings(
            boardstyle=row.boardstyle,
            linelength=row.linelength,
            pagelength=row.pagelength,
            redoubles=row.redoubles,
            sortwho=row.sortwho,
            timezone=row.timezone,
        ),
        address=row.address,
        gagged=tuple(gagged),
        blinded=tuple(blinded),
        is_bot=row.is_bot,
    )


def _message(row: MessageRow) -> StoredMessage:
    return StoredMessage(
        id=row.id, recipient=row.recipient, sender=row.sender, sent_at=row.sent_at, text=row.text
    )


def _saved_match(row: SavedMatchRow) -> SavedMatch:
    return SavedMatch(
        player1=row.player1,
        player2=row.player2,
        match_length=row.match_length,
        score1=row.score1,
        score2=row.score2,
        snapshot=row.snapshot,
        updated_at=row.updated_at,
    )


def _match_record(row: MatchRecordRow) -> MatchRecord:
    return MatchRecord(
        id=row.id,
        player1=row.player1,
        player2=row.player2,
        match_length=row.match_length,
        score1=row.score1,
        score2=row.score2,
        winner=row.winner,
        started_at=row.started_at,
        ended_at=row.ended_at,
        rules=row.rules,
        moves=row.moves,
    )
