"""The async persistence API the server uses: :class:`Database`.

Every method takes and returns plain values (``str``, ``int``, the frozen dataclasses of
:mod:`db.records`); no SQLAlchemy object leaves this module. Every write runs in its own
transaction and is committed (on disk) when the awaited call returns, so the server can
announce a change right after it. Names are exact, case-sensitive matches, as on FIBS.

Each method is a *job*, a synchronous function of a :class:`db.runner.Transaction` that
runs the prepared statements of :mod:`db.statements`, and a runner executes it: on SQLite
one ``sqlite3`` connection whose statements run on the event loop and whose commits, one
per batch of the writes waiting together, run on a thread (:class:`db.runner.SqliteRunner`);
on PostgreSQL asyncpg connections, a pool for the reads and one connection per writer
(:class:`db.pgwriter.PgRunner`); SQLAlchemy's engine only migrates the schema. See
docs/database.md.

Cancellation: a write that has been submitted is finished even if the awaiting task is
cancelled (for example the connection task of a player who just dropped, whose match is
being saved); the caller still gets its ``CancelledError`` at once, and
:meth:`Database.close` waits for such writes. The runner keeps this promise
(:mod:`db.runner`): every method here makes exactly one write. (Stored messages are
read, not taken: they are deleted only once their delivery is confirmed, D270, so a
cancelled reader loses none.)

Concurrency: many coroutines may call one :class:`Database` at once. On SQLite the
runner's batches run in turn (SQLite has a single writer anyway), and each write
transaction starts with ``BEGIN IMMEDIATE`` to stay safe against other processes. On
PostgreSQL writes run concurrently; each method is one atomic statement or one
transaction, so no update is lost.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Self, cast

from sqlalchemy.engine import URL

from db.engine import (
    DEFAULT_BUSY_TIMEOUT,
    cannot_open,
    create_engine,
    current_revision,
    migrate_engine,
    migrate_sqlite,
    normalize_url,
    require_sqlite_file,
    sqlite_path,
)
from db.errors import (
    ConstraintViolation,
    MessageLimitError,
    StaleRatingError,
    TableFencedError,
    UnknownMatchError,
    UnknownUserError,
    UserExistsError,
)
from db.pgwriter import PgRunner
from db.records import (
    DEFAULT_RATING,
    ChouetteRecord,
    ChouetteStanding,
    MatchRecord,
    RatingEntry,
    RatingUpdate,
    SavedChouette,
    SavedEvents,
    SavedMatch,
    StoredAnalysis,
    StoredMessage,
    User,
    UserSettings,
)
from db.runner import Row, Runner, SqliteRunner, Transaction
from db.statements import (
    ANALYSIS_COLUMNS,
    MESSAGE_COLUMNS,
    RECORD_COLUMNS,
    SAVED_COLUMNS,
    USER_COLUMNS,
    ListStatements,
    Statements,
)

__all__ = ["RATING_LIST_EXPERIENCE", "Database"]

RATING_LIST_EXPERIENCE: Final = 50
"""Only players with *more* experience than this are on the ``ratings`` list (spec §4.14)."""

MAX_RECORD_ID: Final = 2**31 - 1
"""The largest id a match record can have: its column is a 32-bit INTEGER in
PostgreSQL (db/models.py); SQLite's would go to 2**63 - 1, but an id past either
bound reaches the database as an error, not as "no such record"."""
NO_LIMIT: Final = 2**62
"""A ``LIMIT`` that limits nothing (SQLite and PostgreSQL read ``NULL`` differently)."""

Clock = Callable[[], float]
"""Returns the current Unix time; injected so tests control every stored timestamp."""


class Database:
    """One open database: a runner, the back end's statements and the repository methods.

    Create it with :meth:`open` and release it with :meth:`close` (or ``async with``).
    """

    def __init__(
        self, runner: Runner, backend: str, *, clock: Clock = time.time, path: str | None = None
    ) -> None:
        """Wrap a started runner for ``backend`` (``"sqlite"``/``"postgresql"``; ``path``:
        SQLite's file); prefer :meth:`open`."""
        self._runner = runner
        self._backend = backend
        self._path = path
        self._sql = Statements(backend)
        self._clock = clock
        self._closed = False

    @classmethod
    async def open(
        cls,
        url: str | URL,
        *,
        schema: str | None = None,
        migrate: bool = True,
        clock: Clock = time.time,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        existing: bool = False,
    ) -> Self:
        """Connect to ``url`` and, unless ``migrate`` is false, bring its schema up to date.

        :param schema: PostgreSQL only: the (existing) schema to work in.
        :param busy_timeout: SQLite only: seconds to wait for another process's write lock.
        :param existing: SQLite only: the file must exist already (the read-only tools,
            which must not leave an empty database file behind).
        :raises ValueError: unsupported URL.
        :raises DatabaseUnavailable: the database cannot be opened (its text is one line
            saying why and what to do).
        :raises MigrationError: the schema is at a revision this code does not know.
        """
        parsed = normalize_url(url)
        try:
            return await cls._open(parsed, schema, migrate, clock, busy_timeout, existing)
        except Exception as exc:
            unavailable = cannot_open(parsed, exc)
            if unavailable is None:
                raise
            raise unavailable from exc

    @classmethod
    async def _open(
        cls,
        parsed: URL,
        schema: str | None,
        migrate: bool,
        clock: Clock,
        busy_timeout: float,
        existing: bool,
    ) -> Self:
        if parsed.get_backend_name() == "sqlite":
            if schema is not None:
                raise ValueError("a schema can only be given for PostgreSQL")
            if existing:
                require_sqlite_file(parsed)
            runner = SqliteRunner(
                sqlite_path(parsed),
                busy_timeout=busy_timeout,
                prepare=migrate_sqlite if migrate else None,
            )
            await runner.start()
            return cls(runner, "sqlite", clock=clock, path=sqlite_path(parsed))
        engine = create_engine(parsed, schema=schema)
        try:
            if migrate:
                await migrate_engine(engine)
            else:
                await current_revision(engine)  # connects: a failure shows here, not later
        finally:
            await engine.dispose()  # the runner has asyncpg connections of its own
        pg_runner = PgRunner(parsed, schema=schema)
        await pg_runner.start()
        return cls(pg_runner, "postgresql", clock=clock)

    async def close(self) -> None:
        """Wait for writes still in flight, then close the connections.

        Calling it again does nothing.
        """
        if not self._closed:
            self._closed = True
            await self._runner.close()

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
        return self._backend

    def free_bytes(self) -> int | None:
        """Bytes the server may still write beside the SQLite file (its folder's file
        system, as an unprivileged process sees it); None for PostgreSQL (its disk is
        its server's, watched there) and an in-memory database."""
        if self._path is None or self._path == ":memory:" or not self._path:
            return None
        folder = os.path.dirname(os.path.abspath(self._path))
        try:
            stats = os.statvfs(folder)
        except OSError:
            return None
        return stats.f_bavail * stats.f_frsize

    # -- plumbing -------------------------------------------------------------------------

    def _now(self, at: float | None) -> int:
        """``at`` or the clock's time, as whole Unix seconds."""
        return int(self._clock() if at is None else at)

    async def _update_user(self, name: str, **values: object) -> None:
        """Set columns of one user.

        :raises UnknownUserError: no such user.
        """
        statement = self._sql.update_user(values)
        params = {"who": name, **values}

        def job(tx: Transaction) -> None:
            if not tx.execute(statement, params):
                raise UnknownUserError(name)

        await self._runner.write(job, key=name)

    async def _first_unknown(self, *names: str) -> str | None:
        """The first of ``names`` that is not a user (to name it in an error)."""
        for name in names:
            if not await self.user_exists(name):
                return name
        return None

    async def _scalar(self, statement: Any, **params: Any) -> int:
        """A read that counts something."""
        rows = await self._runner.read(lambda tx: tx.execute(statement, params))
        return int(rows[0][0] or 0) if rows else 0

    # -- users ----------------------------------------------------------------------------

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
        allow_look_alikes: bool = False,
    ) -> User:
        """Register a new account and return it as stored.

        :param toggles: the toggle values to store (the server's defaults for new users).
        :param allow_look_alikes: register the name even when another that differs only
            in case is registered (accounts from before D269, tests); by default that
            name counts as taken.
        :raises UserExistsError: the name is taken, exactly or (unless allowed) without
            regard to case.
        :raises ValueError: an empty name, negative experience, or a toggle value that is
            not a bool.
        """
        if not name:
            raise ValueError("a user name cannot be empty")
        _check_experience(experience)
        settings = settings if settings is not None else UserSettings()
        values: dict[str, Any] = {
            "name": name,
            "password_hash": password_hash,
            "created_at": self._now(created_at),
            "last_login_at": None,
            "last_login_host": None,
            "last_logout_at": None,
            "rating": float(rating),
            "experience": experience,
            "toggles": _checked_toggles(toggles or {}),
            "address": address,
            "is_bot": is_bot,
            **_settings_values(settings),
        }
        insert, names_like = self._sql.insert_user, self._sql.names_like

        def job(tx: Transaction) -> bool:
            if not allow_look_alikes and tx.execute(names_like, {"name": name}):
                return False
            tx.execute(insert, values)
            return True

        try:  # keyed by the lower case: look-alikes registered at once run one after the other
            created = await self._runner.write(job, key=name.lower())
        except ConstraintViolation as exc:
            raise UserExistsError(name) from exc
        if not created:
            raise UserExistsError(name)
        return _user(tuple(values[key] for key in USER_COLUMNS), (), ())

    async def get_user(self, name: str) -> User | None:
        """The account called exactly ``name``, with its gag and blind lists, or ``None``."""
        sql = self._sql

        def job(tx: Transaction) -> User | None:
            rows = tx.execute(sql.user, {"name": name})
            if not rows:
                return None
            owner = {"owner": name}
            gagged = [target for (target,) in tx.execute(sql.gags.targets, owner)]
            blinded = [target for (target,) in tx.execute(sql.blinds.targets, owner)]
            return _user(rows[0], gagged, blinded)

        return await self._runner.read(job)

    async def user_exists(self, name: str) -> bool:
        """Whether an account called exactly ``name`` exists."""
        statement = self._sql.user_exists
        return bool(await self._runner.read(lambda tx: tx.execute(statement, {"name": name})))

    async def names_like(self, name: str) -> list[str]:
        """Every registered name equal to ``name`` without regard to case (``name``
        itself among them when registered), in code-point order (D269)."""
        statement = self._sql.names_like
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"name": name}))
        return [found for (found,) in rows]

    async def update_login(self, name: str, host: str, *, at: float | None = None) -> None:
        """Record a login from ``host`` (read :meth:`get_user` first for the previous one).

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, last_login_at=self._now(at), last_login_host=host)

    async def update_logout(self, name: str, *, at: float | None = None) -> None:
        """Record a logout (or dropped connection).

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, last_logout_at=self._now(at))

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

    async def set_password_hash(self, name: str, password_hash: str) -> None:
        """Replace the stored password hash.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, password_hash=password_hash)

    async def set_address(self, name: str, address: str | None) -> None:
        """Store (or with ``None`` clear) the e-mail address.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, address=address)

    async def set_bot(self, name: str, is_bot: bool) -> None:
        """Mark or unmark the account as a bot.

        :raises UnknownUserError: no such user.
        """
        await self._update_user(name, is_bot=is_bot)

    async def update_rating(self, name: str, rating: float, experience: int) -> None:
        """Store a new rating and experience.

        :raises UnknownUserError: no such user.
        :raises ValueError: negative experience.
        """
        _check_experience(experience)
        await self._update_user(name, rating=float(rating), experience=experience)

    # -- gag and blind lists ----------------------------------------------------------------

    async def add_gag(self, owner: str, target: str) -> bool:
        """Add ``target`` to ``owner``'s gag list; ``False`` if it was already there.

        :raises UnknownUserError: either user does not exist.
        """
        return await self._add_to_list(self._sql.gags, owner, target)

    async def remove_gag(self, owner: str, target: str) -> bool:
        """Remove ``target`` from ``owner``'s gag list; ``False`` if it was not there."""
        return await self._remove_from_list(self._sql.gags, owner, target)

    async def list_gags(self, owner: str) -> tuple[str, ...]:
        """``owner``'s gag list in the order it was built (empty for an unknown owner)."""
        return await self._targets(self._sql.gags, owner)

    async def add_blind(self, owner: str, target: str) -> bool:
        """Add ``target`` to ``owner``'s blind list; ``False`` if it was already there.

        :raises UnknownUserError: either user does not exist.
        """
        return await self._add_to_list(self._sql.blinds, owner, target)

    async def remove_blind(self, owner: str, target: str) -> bool:
        """Remove ``target`` from ``owner``'s blind list; ``False`` if it was not there."""
        return await self._remove_from_list(self._sql.blinds, owner, target)

    async def list_blinds(self, owner: str) -> tuple[str, ...]:
        """``owner``'s blind list in the order it was built (empty for an unknown owner)."""
        return await self._targets(self._sql.blinds, owner)

    async def _add_to_list(self, sql: ListStatements, owner: str, target: str) -> bool:
        params = {"owner": owner, "target": target}
        try:
            added = await self._runner.write(lambda tx: tx.execute(sql.add, params), key=owner)
        except ConstraintViolation as exc:  # a foreign key: one of the names is not a user
            raise UnknownUserError(await self._first_unknown(owner, target)) from exc
        return bool(added)

    async def _remove_from_list(self, sql: ListStatements, owner: str, target: str) -> bool:
        params = {"owner": owner, "target": target}
        removed = await self._runner.write(lambda tx: tx.execute(sql.remove, params), key=owner)
        return bool(removed)

    async def _targets(self, sql: ListStatements, owner: str) -> tuple[str, ...]:
        rows = await self._runner.read(lambda tx: tx.execute(sql.targets, {"owner": owner}))
        return tuple(target for (target,) in rows)

    # -- stored messages ------------------------------------------------------------------

    async def store_message(
        self,
        recipient: str,
        sender: str,
        text: str,
        *,
        sent_at: float | None = None,
        max_for_recipient: int | None = None,
        max_from_sender: int | None = None,
    ) -> StoredMessage:
        """Store a message until ``recipient`` has confirmed its delivery (D270).

        :param max_for_recipient: refuse it when ``recipient`` has this many stored.
        :param max_from_sender: refuse it when ``sender`` has this many stored (for
            anyone). Both are counted in the same transaction as the insert.
        :raises UnknownUserError: the recipient does not exist.
        :raises MessageLimitError: a bound is reached; nothing is stored.
        """
        values: dict[str, Any] = {
            "recipient": recipient,
            "sender": sender,
            "sent_at": self._now(sent_at),
            "text": text,
        }
        sql = self._sql

        def over(tx: Transaction, statement: Any, bound: int | None, **params: str) -> bool:
            return bound is not None and int(tx.execute(statement, params)[0][0]) >= bound

        def job(tx: Transaction) -> int:
            if over(tx, sql.count_messages, max_for_recipient, recipient=recipient):
                raise MessageLimitError(by_sender=False)
            if over(tx, sql.count_messages_from, max_from_sender, sender=sender):
                raise MessageLimitError(by_sender=True)
            return int(tx.execute(sql.insert_message, values)[0][0])

        try:
            message_id = await self._runner.write(job, key=recipient)
        except ConstraintViolation as exc:
            raise UnknownUserError(recipient) from exc
        return StoredMessage(id=message_id, **values)

    async def messages_for(self, recipient: str) -> list[StoredMessage]:
        """The messages stored for ``recipient``, oldest first; they stay stored until
        :meth:`delete_messages` (the server calls it once their delivery is confirmed)."""
        statement = self._sql.messages_for
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"recipient": recipient}))
        return [StoredMessage(**dict(zip(MESSAGE_COLUMNS, row, strict=True))) for row in rows]

    async def delete_messages(self, recipient: str, ids: Iterable[int]) -> int:
        """Delete the messages ``ids`` of ``recipient`` (delivered and confirmed); how
        many were still there. Ids of other recipients' messages are left alone."""
        statement = self._sql.delete_message
        params = [{"id": message_id, "recipient": recipient} for message_id in ids]

        def job(tx: Transaction) -> int:
            return sum(len(tx.execute(statement, each)) for each in params)

        return await self._runner.write(job, key=recipient)

    async def count_messages(self, recipient: str) -> int:
        """How many messages wait for ``recipient``."""
        return await self._scalar(self._sql.count_messages, recipient=recipient)

    # -- the web page's session tokens (D320-D329) -----------------------------------------

    async def issue_web_token(
        self,
        name: str,
        digest: str,
        *,
        lifetime: int,
        keep: int,
        replaces: str | None = None,
        at: float | None = None,
    ) -> int:
        """Store the token whose SHA-256 is ``digest`` for ``name``, valid ``lifetime``
        seconds from now; the time it expires (Unix seconds).

        In the same transaction the user's expired tokens go, and ``replaces`` (a digest:
        the token this one takes the place of, if it is the user's), and the oldest
        beyond ``keep`` in all: a user cannot fill the table.

        :raises UnknownUserError: no such user.
        """
        now = self._now(at)
        sql = self._sql
        row = {"digest": digest, "user_name": name, "issued_at": now, "expires_at": now + lifetime}

        def job(tx: Transaction) -> None:
            if replaces is not None:
                tx.execute(sql.delete_token, {"digest": replaces, "user_name": name})
            rows = tx.execute(sql.tokens_of, {"user_name": name})
            for kept, (old, expires_at) in enumerate(rows, start=1):
                if expires_at <= now or kept >= keep:
                    tx.execute(sql.delete_token, {"digest": old, "user_name": name})
            tx.execute(sql.insert_token, row)

        try:
            await self._runner.write(job, key=name)
        except ConstraintViolation as exc:
            raise UnknownUserError(name) from exc
        return now + lifetime

    async def web_token_user(self, digest: str, *, at: float | None = None) -> str | None:
        """The user of the token whose SHA-256 is ``digest``, if it has not expired."""
        params = {"digest": digest, "now": self._now(at)}
        statement = self._sql.user_of_token
        rows = await self._runner.read(lambda tx: tx.execute(statement, params))
        return str(rows[0][0]) if rows else None

    async def revoke_web_token(self, name: str, digest: str) -> bool:
        """Delete the token ``digest`` of ``name``; whether it was there."""
        statement, params = self._sql.delete_token, {"digest": digest, "user_name": name}
        return bool(await self._runner.write(lambda tx: tx.execute(statement, params), key=name))

    async def revoke_web_tokens(self, name: str) -> int:
        """Delete every token of ``name`` (a password change); how many there were."""
        statement, params = self._sql.delete_tokens_of, {"user_name": name}
        return len(await self._runner.write(lambda tx: tx.execute(statement, params), key=name))

    # -- saved matches ----------------------------------------------------------------------

    async def save_match(
        self,
        table_id: str,
        player_a: str,
        player_b: str,
        snapshot: str,
        *,
        match_length: int | None,
        score_a: int,
        score_b: int,
        events: Sequence[SavedEvents] = (),
        append: bool = False,
        epoch: int | None = None,
        at: float | None = None,
    ) -> SavedMatch:
        """Store the saved match of a table, in one transaction.

        The players may come in either order; each score goes with its player. The
        table's row is replaced by these values; its event rows are replaced by
        ``events``, or, with ``append``, ``events`` are added to those stored (a running
        match saves only the events of its last action: docs/database.md). Without
        ``append`` (a table's first save), a saved match of the same pair but another
        table is deleted first: the pair keeps one saved match, the newest (§4.9).

        :param table_id: the table's id (the key; the same at each save of the table).
        :param snapshot: the server's JSON text, stored verbatim.
        :param match_length: points to win, or ``None`` for an unlimited match.
        :param events: event rows, stored verbatim.
        :param epoch: the writer's fencing token (:meth:`claim_table`), checked in the
            same transaction; ``None``: not checked.
        :returns: the table's row as stored, without events (:meth:`load_match` reads them).
        :raises TableFencedError: the table's epoch is no longer ``epoch`` (another node
            took it, or it ended): nothing was written.
        :raises UnknownUserError: either player does not exist.
        :raises ConstraintViolation: an appended event row is already stored, or (with
            ``append``) the pair has a saved match of another table.
        :raises ValueError: both names are the same, or a length that is not positive.
        """
        _check_length(match_length)
        player1, player2 = _pair(player_a, player_b)
        score1, score2 = (score_a, score_b) if player1 == player_a else (score_b, score_a)
        saved = SavedMatch(
            table_id=table_id,
            player1=player1,
            player2=player2,
            match_length=match_length,
            score1=score1,
            score2=score2,
            snapshot=snapshot,
            updated_at=self._now(at),
        )
        params = {key: getattr(saved, key) for key in SAVED_COLUMNS}
        table = {"table_id": table_id}
        sql = self._sql
        try:
            if self._backend == "postgresql":
                # One statement: the writer sends a batch's saves in one round trip.
                whole = {
                    **params,
                    "append": append,
                    "games": [chunk.game for chunk in events],
                    "first_events": [chunk.first_event for chunk in events],
                    "events": [chunk.events for chunk in events],
                    "epoch": epoch,
                }
                row = await self._runner.write_statement(
                    sql.save_match_with_events,
                    whole,
                    key=table_id,
                    replay=sql.save_match_replayed,
                    returns_row=True,
                )
                if not cast(Row, row)[0]:
                    raise TableFencedError(table_id, cast(int, epoch))
            else:
                rows = [{**table, **_saved_events_values(chunk)} for chunk in events]

                def job(tx: Transaction) -> None:
                    _check_fence(tx, sql.table_epoch, table_id, epoch)
                    if not append:
                        tx.execute(sql.displace_saved, params)
                    # The table's row first: the event rows refer to it.
                    tx.execute(sql.save_match, params)
                    if not append:
                        tx.execute(sql.delete_saved_events, table)
                    for row in rows:
                        tx.execute(sql.insert_saved_events, row)

                await self._runner.write(job)
        except ConstraintViolation as exc:
            unknown = await self._first_unknown(player_a, player_b)
            if unknown is None:
                raise
            raise UnknownUserError(unknown) from exc
        return saved

    async def load_match(self, player_a: str, player_b: str) -> SavedMatch | None:
        """The saved match of the pair (names in either order) with its event rows, or
        ``None``."""
        if player_a == player_b:
            return None
        player1, player2 = _pair(player_a, player_b)
        params = {"player1": player1, "player2": player2}
        sql = self._sql

        def job(tx: Transaction) -> SavedMatch | None:
            rows = tx.execute(sql.load_match, params)
            if not rows:
                return None
            saved = _saved_match(rows[0])
            events = tx.execute(sql.saved_events, {"table_id": saved.table_id})
            return dataclasses.replace(saved, events=tuple(SavedEvents(*row) for row in events))

        return await self._runner.read(job)

    async def delete_match(self, table_id: str) -> bool:
        """Delete the saved match of the table, with its event rows and its owner row
        (a node still running it can no longer write it); ``False`` if there was no
        saved match."""
        params = {"table_id": table_id}
        sql = self._sql

        def job(tx: Transaction) -> list[Row]:
            tx.execute(sql.release_table, params)
            return tx.execute(sql.delete_match, params)

        return bool(await self._runner.write(job, key=table_id))

    async def claim_table(self, table_id: str, node: str, *, at: float | None = None) -> int:
        """``node`` takes the table ``table_id`` (a match starts or resumes there): its
        epoch goes up by one (1 for a table never taken) in one statement, and is
        returned: the fencing token of every later save and of the end
        (:meth:`save_match`, :meth:`record_finished_match`). A node that took it before
        can no longer write it."""
        params = {"table_id": table_id, "node": node, "claimed_at": self._now(at)}
        statement = self._sql.claim_table
        rows = await self._runner.write(lambda tx: tx.execute(statement, params), key=table_id)
        return int(rows[0][0])

    async def list_saved_matches(self, name: str) -> list[SavedMatch]:
        """Every saved match ``name`` plays in, ordered by opponent name (code point)."""
        statement = self._sql.saved_matches_of
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"name": name}))
        matches = [_saved_match(row) for row in rows]
        matches.sort(key=lambda match: match.opponent_of(name))
        return matches

    async def count_saved_matches(self, name: str) -> int:
        """How many saved matches ``name`` plays in (``show savedcount``)."""
        return await self._scalar(self._sql.count_saved_matches, name=name)

    # -- chouette tables (D362, D363) -------------------------------------------------------

    async def save_chouette(
        self,
        table_id: str,
        host: str,
        players: Iterable[str],
        snapshot: str,
        *,
        finished: tuple[int, Iterable[tuple[str, str, int]]] | None = None,
        epoch: int | None = None,
        at: float | None = None,
    ) -> None:
        """Store a chouette table (its row replaced) with the players at it now, and the
        results (``name, seat, points``) of the game it ``finished`` (its number first),
        in one transaction; with no player left, the table is deleted instead, with its
        owner row (D439).

        :param epoch: the writer's fencing token (:meth:`claim_table`), checked in the
            same transaction, the owner row locked until its end; ``None``: not checked.
        :raises TableFencedError: the table's epoch is no longer ``epoch`` (another node
            took it, or it was deleted): nothing was written.
        :raises UnknownUserError: a player does not exist.
        :raises ConstraintViolation: the finished game is stored already.
        """
        names = tuple(players)
        now = self._now(at)
        row = {"table_id": table_id, "host": host, "snapshot": snapshot, "updated_at": now}
        table = {"table_id": table_id}
        results = []
        if finished is not None:
            game, rows = finished
            results = [
                {**table, "game": game, "name": n, "seat": seat, "points": points}
                for n, seat, points in rows
            ]
        sql = self._sql

        def job(tx: Transaction) -> None:
            # FOR UPDATE on PostgreSQL: a claim at the same moment waits, or is waited for
            _check_fence(tx, sql.table_epoch_locked, table_id, epoch)
            for result in results:
                tx.execute(sql.insert_chouette_result, {**result, "finished_at": now})
            tx.execute(sql.delete_chouette_players, table)
            if not names:
                tx.execute(sql.delete_chouette, table)
                tx.execute(sql.release_table, table)
                return
            tx.execute(sql.save_chouette, row)
            for name in names:
                tx.execute(sql.insert_chouette_player, {**table, "name": name})

        try:
            await self._runner.write(job, key=table_id)
        except ConstraintViolation as exc:
            unknown = await self._first_unknown(*names)
            if unknown is None:
                raise
            raise UnknownUserError(unknown) from exc

    async def load_chouette_of(self, name: str) -> SavedChouette | None:
        """The saved chouette table ``name`` is at (the newest, should there be two)."""
        statement = self._sql.chouette_of
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"name": name}))
        return SavedChouette(*rows[0]) if rows else None

    async def chouette_standings(self, table_id: str) -> list[ChouetteStanding]:
        """Every player's games and points at a table, the highest total first."""
        statement = self._sql.chouette_standings
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"table_id": table_id}))
        return [ChouetteStanding(name, games, int(points)) for name, games, points in rows]

    async def chouette_record(self, name: str) -> ChouetteRecord:
        """``name``'s chouette games over every table (all zero when none)."""
        statement = self._sql.chouette_record
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"name": name}))
        tables, games, points = rows[0]
        return ChouetteRecord(name, tables, games, int(points))

    # -- finished matches -------------------------------------------------------------------

    async def record_finished_match(
        self,
        *,
        table_id: str,
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
        epoch: int | None = None,
    ) -> MatchRecord:
        """Store a finished match and, in the same transaction, its consequences.

        Either everything below is stored or nothing is:

        * the match record;
        * each of ``rating_updates`` (new rating and experience of a player), read and
          compared first where the update says what it was computed from
          (``RatingUpdate.before``): the ratings a match is rated from are the stored
          ones, checked in the transaction that stores the new ones;
        * with ``delete_saved``, the table's saved match is removed (the match that was
          resumed has ended);
        * the table's owner row (:meth:`claim_table`) is removed, after checking, with
          ``epoch``, that it still has the writer's epoch.

        :param table_id: the table that played it (the key of its saved match).
        :param rules: JSON text of the match rules, stored verbatim.
        :param moves: JSON text of the move record, stored verbatim.
        :raises UnknownUserError: a rating update names an unknown user.
        :raises TableFencedError: the table's epoch is no longer ``epoch``: nothing was
            written.
        :raises StaleRatingError: a rating update's ``before`` is not what is stored
            (``current`` has the stored values); nothing was written.
        :raises ValueError: the winner is not one of the players, both are the same, or a
            length that is not positive.
        """
        _check_length(match_length)
        if player1 == player2:
            raise ValueError(f"a match needs two different players, got {player1!r} twice")
        if winner is not None and winner not in (player1, player2):
            raise ValueError(f"winner {winner!r} is not {player1!r} or {player2!r}")
        values: dict[str, Any] = {
            "table_id": table_id,
            "player1": player1,
            "player2": player2,
            "match_length": match_length,
            "score1": score1,
            "score2": score2,
            "winner": winner,
            "started_at": int(started_at),
            "ended_at": self._now(ended_at),
            "rules": rules,
            "moves": moves,
        }
        sql = self._sql
        table = {"table_id": table_id}
        if self._backend == "postgresql":
            # One statement, like a save: the ends waiting together are one round trip.
            whole = {
                **table,
                **{f"record_{k}": values[k] for k in ("player1", "player2", "score1", "score2")},
                "record_length": match_length,
                **{k: values[k] for k in ("winner", "started_at", "ended_at", "rules", "moves")},
                "rated": [change.name for change in rating_updates],
                "ratings": [float(change.rating) for change in rating_updates],
                "experiences": [change.experience for change in rating_updates],
                "ratings_before": [_before(change)[0] for change in rating_updates],
                "experiences_before": [_before(change)[1] for change in rating_updates],
                "delete_saved": delete_saved,
                "epoch": epoch,
            }
            row = await self._runner.write_statement(
                sql.end_match, whole, key=table_id, replay=sql.end_match_replayed, returns_row=True
            )
            stored_id, written, owned, current = cast(Row, row)
            if not owned:
                raise TableFencedError(table_id, cast(int, epoch))
            if not written and current:  # rated from other ratings: nothing was written
                raise StaleRatingError(_ratings_of(current, rating_updates))
            if not written:  # a rated player is not a user: nothing was written
                names = [change.name for change in rating_updates]
                unknown = await self._first_unknown(*names)
                raise UnknownUserError(unknown if unknown is not None else names[0])
            return MatchRecord(id=int(stored_id), **values)
        rate = sql.update_user(("rating", "experience"))

        def job(tx: Transaction) -> int:
            _check_fence(tx, sql.table_epoch, table_id, epoch)
            _check_ratings(tx, sql.rating_of, rating_updates)
            (record_id,) = tx.execute(sql.insert_record, values)[0]
            for change in rating_updates:
                params = {
                    "who": change.name,
                    "rating": float(change.rating),
                    "experience": change.experience,
                }
                if not tx.execute(rate, params):
                    raise UnknownUserError(change.name)
            if delete_saved:
                tx.execute(sql.delete_match, table)
            tx.execute(sql.release_table, table)
            return int(record_id)

        record_id = await self._runner.write(job, key=table_id)
        return MatchRecord(id=record_id, **values)

    async def get_match_record(self, record_id: int) -> MatchRecord | None:
        """The finished match with this id, or ``None`` (also for an id no record can
        have: outside the id column's range, which PostgreSQL and SQLite would refuse)."""
        if not 0 < record_id <= MAX_RECORD_ID:
            return None
        statement = self._sql.record
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"id": record_id}))
        return _match_record(rows[0]) if rows else None

    async def list_match_records(self, name: str, *, limit: int | None = None) -> list[MatchRecord]:
        """Finished matches ``name`` played, newest first (at most ``limit``)."""
        params = {"name": name, "offset": 0, "limit": NO_LIMIT if limit is None else limit}
        statement = self._sql.records_of
        rows = await self._runner.read(lambda tx: tx.execute(statement, params))
        return [_match_record(row) for row in rows]

    # -- analyses of finished matches ----------------------------------------------------

    async def queue_analysis(self, match_id: int, ply: int, *, at: float | None = None) -> None:
        """Ask for the analysis of a finished match at ``ply`` (again, if it had one):
        the row is ``queued`` until :meth:`finish_analysis` (docs/analysis.md).

        :raises UnknownMatchError: no such match record.
        """
        sql = self._sql
        values = {
            "match_id": match_id,
            "state": "queued",
            "ply": ply,
            "queued_at": self._now(at),
            "finished_at": None,
            "rate1": None,
            "rate2": None,
            "result": None,
        }

        def job(tx: Transaction) -> None:
            if not tx.execute(sql.record, {"id": match_id}):
                raise UnknownMatchError(match_id)
            tx.execute(sql.delete_analysis, {"match_id": match_id})
            tx.execute(sql.insert_analysis, values)

        await self._runner.write(job, key=("analysis", match_id))

    async def drop_queued_analysis(self, match_id: int) -> bool:
        """Forget a request not yet analysed (the queue was over its bound); False when
        there was none."""
        statement = self._sql.drop_queued_analysis

        def job(tx: Transaction) -> bool:
            return bool(tx.execute(statement, {"match_id": match_id}))

        return await self._runner.write(job, key=("analysis", match_id))

    async def finish_analysis(
        self,
        match_id: int,
        *,
        result: str,
        rates: tuple[float, float] | None,
        at: float | None = None,
    ) -> bool:
        """Store a queued analysis's outcome: done with ``result`` (the analysis as JSON
        text) and both players' ``rates``, or failed (``rates`` None, ``result`` why).
        False when the request is no longer queued (dropped, or asked again meanwhile
        and already finished)."""
        params = {
            "match_id": match_id,
            "state": "failed" if rates is None else "done",
            "finished_at": self._now(at),
            "rate1": None if rates is None else float(rates[0]),
            "rate2": None if rates is None else float(rates[1]),
            "result": result,
        }
        statement = self._sql.finish_analysis

        def job(tx: Transaction) -> bool:
            return bool(tx.execute(statement, params))

        return await self._runner.write(job, key=("analysis", match_id))

    async def get_analysis(self, match_id: int) -> StoredAnalysis | None:
        """The analysis (or its request) of a finished match, None when never asked."""
        if not 0 < match_id <= MAX_RECORD_ID:
            return None
        statement = self._sql.analysis
        rows = await self._runner.read(lambda tx: tx.execute(statement, {"match_id": match_id}))
        return _analysis(rows[0]) if rows else None

    async def queued_analyses(self) -> list[StoredAnalysis]:
        """The requests not yet analysed, oldest first (the workers' queue at a start)."""
        statement = self._sql.queued_analyses
        rows = await self._runner.read(lambda tx: tx.execute(statement, {}))
        return [_analysis(row) for row in rows]

    async def recent_rates(self, name: str, *, last: int) -> list[float]:
        """``name``'s error rates in their ``last`` analysed matches, newest first."""
        params = {"name": name, "offset": 0, "limit": last}
        statement = self._sql.rates_of
        rows = await self._runner.read(lambda tx: tx.execute(statement, params))
        return [
            float(rate1 if player1 == name else rate2)
            for player1, rate1, rate2 in rows
            if (rate1 if player1 == name else rate2) is not None
        ]

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
        params = {"experience_above": experience_above, "offset": start - 1, "limit": count}
        statement = self._sql.rating_list
        rows = await self._runner.read(lambda tx: tx.execute(statement, params))
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
        sql = self._sql

        def job(tx: Transaction) -> RatingEntry | None:
            rows = tx.execute(sql.rating_of, {"name": name})
            if not rows:
                return None
            found, rating, experience = rows[0]
            params = {
                "name": found,
                "rating": rating,
                "experience": experience,
                "experience_above": experience_above,
            }
            ahead = tx.execute(sql.count_ahead, params)[0][0] or 0
            return RatingEntry(rank=ahead + 1, name=found, rating=rating, experience=experience)

        return await self._runner.read(job)

    async def count_users(self) -> int:
        """How many accounts are registered (``stat``)."""
        return await self._scalar(self._sql.count_users)

    async def count_rated_players(self, *, experience_above: int = RATING_LIST_EXPERIENCE) -> int:
        """How many players are on the ``ratings`` list."""
        return await self._scalar(self._sql.count_rated, experience_above=experience_above)


# -- helpers ------------------------------------------------------------------------------------


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


def _user(row: Row, gagged: Iterable[str], blinded: Iterable[str]) -> User:
    """A :class:`User` from a row of :data:`USER_COLUMNS` and the user's lists."""
    values = dict(zip(USER_COLUMNS, row, strict=True))
    toggles = values["toggles"]
    return User(
        name=values["name"],
        password_hash=values["password_hash"],
        created_at=values["created_at"],
        last_login_at=values["last_login_at"],
        last_login_host=values["last_login_host"],
        last_logout_at=values["last_logout_at"],
        rating=values["rating"],
        experience=values["experience"],
        # SQLite returns the JSON column as text; SQLAlchemy (PostgreSQL) already decoded it.
        toggles=dict(json.loads(toggles) if isinstance(toggles, str) else toggles),
        settings=UserSettings(
            boardstyle=values["boardstyle"],
            linelength=values["linelength"],
            pagelength=values["pagelength"],
            redoubles=values["redoubles"],
            sortwho=values["sortwho"],
            timezone=values["timezone"],
        ),
        address=values["address"],
        gagged=tuple(gagged),
        blinded=tuple(blinded),
        is_bot=bool(values["is_bot"]),
    )


def _before(change: RatingUpdate) -> tuple[float | None, int | None]:
    """What ``change`` was computed from, or (None, None): not checked."""
    return change.before if change.before is not None else (None, None)


def _check_fence(tx: Transaction, read: Any, table_id: str, epoch: int | None) -> None:
    """SQLite: raise :class:`TableFencedError` unless the table's owner row has ``epoch``
    (``None``: not checked). The writes are one at a time, so the check holds until the
    transaction's end."""
    if epoch is None:
        return
    rows = tx.execute(read, {"table_id": table_id})
    if not rows or rows[0][0] != epoch:
        raise TableFencedError(table_id, epoch)


def _check_ratings(tx: Transaction, read: Any, updates: Sequence[RatingUpdate]) -> None:
    """In the transaction that stores ``updates``: the ratings they were computed from
    are the stored ones.

    :raises StaleRatingError: one is not (with every rated player's stored values).
    :raises UnknownUserError: a rated player is not a user.
    """
    if all(change.before is None for change in updates):
        return
    current: dict[str, tuple[float, int]] = {}
    for change in updates:
        rows = tx.execute(read, {"name": change.name})
        if not rows:
            raise UnknownUserError(change.name)
        _, rating, experience = rows[0]
        current[change.name] = (float(rating), int(experience))
    if any(u.before is not None and current[u.name] != u.before for u in updates):
        raise StaleRatingError(current)


def _ratings_of(
    current: Sequence[Any], updates: Sequence[RatingUpdate]
) -> dict[str, tuple[float, int]]:
    """PostgreSQL's end statement's stored ratings (pairs of rating and experience, in
    the order of ``updates``) by name."""
    return {
        change.name: (float(pair[0]), int(pair[1]))
        for change, pair in zip(updates, current, strict=True)
    }


def _saved_match(row: Row) -> SavedMatch:
    return SavedMatch(**dict(zip(SAVED_COLUMNS, row, strict=True)))


def _saved_events_values(chunk: SavedEvents) -> dict[str, Any]:
    return {"game": chunk.game, "first_event": chunk.first_event, "events": chunk.events}


def _analysis(row: Row) -> StoredAnalysis:
    return StoredAnalysis(**dict(zip(ANALYSIS_COLUMNS, row, strict=True)))


def _match_record(row: Row) -> MatchRecord:
    return MatchRecord(**dict(zip(RECORD_COLUMNS, row, strict=True)))
