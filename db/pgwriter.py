"""The PostgreSQL runner: writes on asyncpg connections of its own, reads on a pool.

:class:`PgRunner` runs the repository's jobs (:mod:`db.runner`) on PostgreSQL:

* **Reads** (logins, an invitation's look for a saved match, ``show saved``,
  ``ratings``) run on a pool of asyncpg connections, each on a connection of its own,
  concurrently, in a greenlet like the writer's jobs: each statement one awaited asyncpg
  call, outside any transaction (each statement sees the database as committed when it
  starts, as it did in the READ COMMITTED transaction of SQLAlchemy's pool). Taking a
  connection and giving it back costs no round trip: the connection is not pinged
  (a read on a connection found broken, after a restart of PostgreSQL, is run once
  more on a new one) and not reset (reads change nothing in a session). Against
  SQLAlchemy's pool (``pool_pre_ping``, a transaction per read) a read costs a quarter
  of the CPU (docs/performance.md §11).
* **Writes** go to a writer: a task with one asyncpg connection of its own, outside the
  pool. Everything queued when a batch starts runs in one transaction, and one
  ``COMMIT`` makes it durable; each caller is answered after that commit, so "persist,
  then announce" holds. Jobs that arrive meanwhile form the next batch.

Round trips are what a writer waits for, each one also a turn of the busy event loop,
so a batch makes few of them:

* Statements are compiled once to PostgreSQL text with ``$n`` parameters; asyncpg
  prepares each text once per connection and keeps it (its statement cache).
* A *single-statement write* (:meth:`PgRunner.write_statement`, the save of a running
  match: its state and its new events in one statement) needs no Python between its
  statements, so consecutive ones of a batch go to the server as one pipelined
  ``executemany`` (``fetchmany`` when each returns a row, as saves and ends do). A
  batch of nothing else (the usual one under load) is that call alone, without
  ``BEGIN`` or ``COMMIT``: PostgreSQL runs it in one implicit transaction committed at
  its ``Sync``, one round trip in all. A batch of
  such statements that all have a replay form (saves and match ends) runs as one such
  round trip per statement (:func:`_trips`).
* Other jobs are plain synchronous functions of a :class:`~db.runner.Transaction`; they
  run in a greenlet (SQLAlchemy's ``greenlet_spawn``) whose every statement is one
  awaited asyncpg call.
* No savepoint in the usual case: ``BEGIN``, the writes, ``COMMIT``. If a job fails, the
  transaction is rolled back and the batch is run again with a savepoint per job, so the
  failing job alone is undone and its caller alone gets the error.

Failures that are not the job's are retried, never reported as the job's:

* a deadlock or serialization failure: the batch is rolled back and run again;
* the connection is lost (PostgreSQL restarted, ``pg_terminate_backend``, the network):
  before ``COMMIT`` was sent nothing was committed, so the batch runs again on a new
  connection. If the connection broke while ``COMMIT`` was under way, the outcome is
  read back from PostgreSQL on the new connection (``pg_xact_status`` of the
  transaction's id, taken at its start): committed, the callers get their results;
  otherwise the batch runs again. A batch of one round trip has no id: it is run again
  with each write's *replay* statement, which has the same effect whether or not the
  first attempt was committed. Only when PostgreSQL cannot be reached for
  ``retry_seconds`` are the batch's callers given a :class:`~db.errors.DatabaseError`:
  their actions are reported as failed, nothing is announced that was not committed.

Several writers (``writers`` > 1) each have their own connection and queue; a write goes
to the writer of its *key* (the table of a saved match, the user of a user update), so
the writes of one key stay in the order they were submitted. docs/performance.md §11
measured one writer against 2, 4 and 8: one is the default.

Every minute with writes, the writers' and the pool's figures are logged at INFO.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Final, TypeVar, cast

import asyncpg
from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect
from sqlalchemy.engine import URL
from sqlalchemy.sql import ClauseElement, Executable
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import await_only, greenlet_spawn

from db.engine import POSTGRESQL_POOL_SIZE
from db.errors import ConstraintViolation, DatabaseError, DatabaseOutage
from db.runner import Job, Row, _Request, _settle

__all__ = ["DEFAULT_WRITERS", "PgRunner"]

_T = TypeVar("_T")

_log = logging.getLogger(__name__)

POOL_LOG_INTERVAL: Final = 60.0
"""Seconds between two of asyncpg's pool warnings about PostgreSQL being away."""


class _QuietPoolLog(logging.Filter):
    """asyncpg's pool, keeping its floor of connections while PostgreSQL is away
    (restarting, shutting down, unreachable), warns with a traceback at every retry:
    12 tracebacks of ``CannotConnectNowError`` in 13 restarts (issue 34). A known
    transient condition is one line: this keeps such a warning without its traceback,
    its cause in the text, at most one every :data:`POOL_LOG_INTERVAL` seconds (D296).
    Anything else asyncpg logs passes unchanged."""

    def __init__(self) -> None:
        super().__init__()
        self._last = -POOL_LOG_INTERVAL
        self._held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or not isinstance(error, (*_LOST, asyncpg.PostgresError)):
            return True
        now = time.monotonic()
        if now - self._last < POOL_LOG_INTERVAL:
            self._held += 1
            return False
        held = f" (and {self._held} more like it)" if self._held else ""
        record.msg = f"postgresql: {record.getMessage()}: {error}{held}"
        record.args = None
        record.exc_info = None
        record.exc_text = None
        self._last, self._held = now, 0
        return True


_POOL_LOG_FILTER: Final = _QuietPoolLog()

DEFAULT_WRITERS: Final = 1
"""Writer connections. One, with pipelined batches, kept up with every load measured;
2, 4 and 8 did not do better (docs/performance.md §11)."""

RETRY_SECONDS: Final = 30.0
"""How long a batch whose connection broke is tried again before its callers are failed."""

REPORT_INTERVAL: Final = 60.0
"""Seconds between two INFO lines of figures (only when there were writes)."""

STATEMENT_CACHE_SIZE: Final = 256
"""Prepared statements asyncpg keeps per connection (the repository has ~40)."""

_DIALECT: Final = asyncpg_dialect.dialect()  # type: ignore[no-untyped-call]
"""Compiles statements to PostgreSQL text with ``$n`` parameters, as asyncpg takes them."""


@dataclass(frozen=True)
class _Compiled:
    statement: Executable
    """Kept so that its ``id``, the cache's key, is never reused."""
    text: str
    names: tuple[str, ...]
    """The parameter of each ``$n``, in order."""
    defaults: dict[str, Any]
    """The values of the statement's literals."""

    def args(self, params: Mapping[str, Any] | None) -> list[Any]:
        """The positional arguments for ``params``."""
        merged = {**self.defaults, **params} if params else self.defaults
        return [_value(merged[name]) for name in self.names]


def _value(value: Any) -> Any:
    """A parameter as asyncpg sends it: the JSON column (a dict) becomes text; lists are
    arrays."""
    if isinstance(value, dict):
        return json.dumps(value)
    return value


class _Statements:
    """Compiled statements, each compiled once."""

    def __init__(self) -> None:
        self._cache: dict[int, _Compiled] = {}

    def __call__(self, statement: Executable) -> _Compiled:
        compiled = self._cache.get(id(statement))
        if compiled is None:
            clause = cast(ClauseElement, statement).compile(dialect=_DIALECT)
            names = cast(SQLCompiler, clause).positiontup or ()
            compiled = _Compiled(statement, str(clause), tuple(names), dict(clause.params))
            self._cache[id(statement)] = compiled
        return compiled


# -- what can go wrong --------------------------------------------------------------------


class _JobFailed(Exception):
    """A job of the batch failed: run the batch again, a savepoint per job."""


class _Lost(Exception):
    """The connection broke; ``committing``: while ``COMMIT`` was under way."""

    def __init__(self, cause: BaseException, *, committing: bool = False) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.committing = committing


_LOST: Final = (
    asyncpg.InterfaceError,  # "connection is closed", ConnectionDoesNotExistError
    asyncpg.InternalClientError,  # "another operation is in progress" after a cut
    asyncpg.PostgresConnectionError,  # class 08
    asyncpg.exceptions.OperatorInterventionError,  # class 57: terminated, shutting down
    OSError,
    asyncio.TimeoutError,
)
"""Errors after which the connection is not used again."""

_RETRY: Final = (
    asyncpg.exceptions.DeadlockDetectedError,
    asyncpg.exceptions.SerializationError,
)
"""Errors after which the batch is run again as it is."""


def _infrastructure(error: BaseException) -> bool:
    """The error is the connection's or the server's, not the job's."""
    return isinstance(error, _LOST + _RETRY)


class _PgTransaction:
    """:class:`~db.runner.Transaction` on an asyncpg connection (a writer's, or a read's
    from the pool), inside a greenlet."""

    def __init__(self, connection: asyncpg.Connection, statements: _Statements) -> None:
        self._connection = connection
        self._statements = statements

    def execute(self, statement: Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        compiled = self._statements(statement)
        try:
            records = await_only(self._connection.fetch(compiled.text, *compiled.args(params)))
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise ConstraintViolation(str(exc)) from exc
        return [tuple(record) for record in records]


@dataclass(eq=False)
class _Write(_Request):
    """A write: a job, or one statement with its parameters (``statement`` set)."""

    statement: Executable | None = None
    params: Mapping[str, Any] | None = None
    replay: Executable | None = None
    """A statement with the same effect as ``statement`` whether or not that one was
    committed: run instead when a first attempt's outcome is unknown."""
    returns_row: bool = False
    """The statement returns exactly one row: the caller's result."""
    key: Hashable = None
    """What the write writes (see :meth:`PgRunner.write`)."""
    submitted: float = 0.0

    def sent(self, replaying: bool) -> Executable | None:
        """The statement to run (``None`` for a job)."""
        if replaying and self.replay is not None:
            return self.replay
        return self.statement


def _trips(writes: list[_Write]) -> list[list[_Write]]:
    """The batch's writes in the groups that run as one transaction each, in turn.

    A batch of single statements that all have a replay form (the saves of running
    matches and the ends of matches) runs as one group per statement: each group is
    one ``executemany`` in one round trip, without ``BEGIN`` or ``COMMIT`` (see
    :meth:`_Writer._attempt`), so saves and an end waiting together take two round
    trips, not a transaction of several. The groups keep the writes of each key in
    order: if a key's writes would fall into two groups, the groups are the runs of
    consecutive writes with the same statement instead. Any other batch (jobs among the
    writes) is one transaction.
    """
    if len(writes) < 2 or not all(w.statement is not None and w.replay is not None for w in writes):
        return [writes]
    groups: dict[int, list[_Write]] = {}
    group_of_key: dict[Hashable, int] = {}
    for write in writes:
        statement = id(write.statement)
        if group_of_key.setdefault(write.key, statement) != statement:
            return [list(run) for _, run in groupby(writes, key=lambda w: id(w.statement))]
        groups.setdefault(statement, []).append(write)
    return list(groups.values())


# -- figures ----------------------------------------------------------------------------------


@dataclass
class _Figures:
    """What the writers did since the last report."""

    writes: int = 0
    batches: int = 0
    largest: int = 0
    busy: float = 0.0
    """Seconds the writers spent in batches, in all."""
    slowest: float = 0.0
    waited: float = 0.0
    """The longest a write waited for its commit, from its submission."""
    retries: int = 0
    reconnects: int = 0
    failed: int = 0

    def batch(self, size: int, seconds: float, waited: float) -> None:
        self.writes += size
        self.batches += 1
        self.largest = max(self.largest, size)
        self.busy += seconds
        self.slowest = max(self.slowest, seconds)
        self.waited = max(self.waited, waited)


# -- the writer -------------------------------------------------------------------------------


class _Writer:
    """One connection, its queue, and the task that runs its batches."""

    def __init__(self, runner: PgRunner, index: int) -> None:
        self._runner = runner
        self.index = index
        self.queue: deque[_Write] = deque()
        self.task: asyncio.Task[None] | None = None
        self.connection: asyncpg.Connection | None = None
        self.commits = 0
        self._xid: str | None = None
        """The id of the transaction being committed (to read its outcome if the answer
        to its ``COMMIT`` is lost)."""

    def submit(self, request: _Write) -> None:
        self.queue.append(request)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._run())

    async def close(self) -> None:
        while self.task is not None and not self.task.done():
            await asyncio.wait({self.task})
        if self.connection is not None:
            connection, self.connection = self.connection, None
            try:
                await asyncio.wait_for(connection.close(), 5)
            except Exception:  # already broken: nothing to close cleanly
                connection.terminate()

    async def connect(self) -> asyncpg.Connection:
        """The writer's connection, opened again if it was lost.

        :raises Exception: what connecting raised.
        """
        if self.connection is not None and self.connection.is_closed():
            self.drop("closed while idle")
        if self.connection is None:
            self.connection = await self._runner.connect()
        return self.connection

    def drop(self, cause: str) -> None:
        """Forget a broken connection (the next batch opens a new one)."""
        if self.connection is not None:
            _log.warning("postgresql: writer %d lost its connection (%s)", self.index, cause)
            self.connection.terminate()
            self.connection = None
            self._runner.figures.reconnects += 1

    async def _run(self) -> None:
        while self.queue:
            writes = list(self.queue)
            self.queue.clear()
            trips = _trips(writes)
            for index, trip in enumerate(trips):
                try:
                    await self._batch(trip)
                except asyncio.CancelledError:  # the batch's callers were told; the rest's
                    for rest in trips[index + 1 :]:
                        self._fail(rest, DatabaseError("the write was not committed: cancelled"))
                    raise

    async def _batch(self, writes: list[_Write]) -> None:
        """One transaction for ``writes``; each caller is answered after its commit."""
        figures = self._runner.figures
        started = time.monotonic()
        careful = False
        replaying = False
        xid: str | None = None
        while True:
            try:
                if xid is not None:
                    committed = await self._committed(xid, started)
                    if committed is None:
                        self._fail(writes, DatabaseOutage("the write's outcome is unknown"))
                        return
                    xid = None
                    if committed:
                        break
                connection = await self.connect()
                await self._attempt(connection, writes, careful=careful, replaying=replaying)
                break
            except _JobFailed:
                careful = True
                await self._roll_back()
            except _Lost as exc:
                self.drop(str(exc))
                if exc.committing and self._xid is not None:
                    xid = self._xid
                elif exc.committing:  # a batch of one round trip, without its id
                    if not all(r.replay is not None for r in writes):
                        error = DatabaseOutage(f"the write's outcome is unknown: {exc}")
                        self._fail(writes, error)
                        return
                    replaying = True
                if not self._retry_allowed(started, writes, exc, unknown=exc.committing):
                    return
                await asyncio.sleep(0.05)
            except _RETRY:
                figures.retries += 1
                await self._roll_back()
            except (*_LOST, asyncpg.exceptions.CannotConnectNowError) as exc:
                # Connecting failed: PostgreSQL is down or starting.
                unknown = xid is not None or replaying
                if not self._retry_allowed(started, writes, exc, unknown=unknown):
                    return
                await asyncio.sleep(0.2)
            except asyncio.CancelledError:
                self._fail(writes, DatabaseError("the write was not committed: cancelled"))
                raise
            except Exception as exc:
                await self._roll_back()
                if isinstance(exc, asyncpg.exceptions.InsufficientResourcesError):
                    self._fail(writes, _outage(f"the write was not committed: {exc}", exc))
                else:
                    self._fail(writes, DatabaseError(f"the write was not committed: {exc}"))
                return
        self.commits += 1
        ended = time.monotonic()
        figures.batch(len(writes), ended - started, ended - min(r.submitted for r in writes))
        _settle(writes)

    def _retry_allowed(
        self, started: float, writes: list[_Write], error: BaseException, *, unknown: bool
    ) -> bool:
        """Whether the batch may be tried again; if not, its callers are failed.

        :param unknown: the batch may have been committed (its outcome is unknown).
        """
        if time.monotonic() - started < self._runner.retry_seconds:
            return True
        what = "the write's outcome is unknown" if unknown else "the write was not committed"
        self._fail(writes, _outage(f"{what}: {error}", error))
        return False

    def _fail(self, writes: list[_Write], error: DatabaseError) -> None:
        if isinstance(error, DatabaseOutage):  # PostgreSQL down or cut: no fault of ours
            _log.warning("postgresql: %d writes failed: %s", len(writes), error)
        else:
            _log.error("postgresql: %d writes failed: %s", len(writes), error)
        self._runner.figures.failed += len(writes)
        for request in writes:
            request.outcome = (None, error)
        _settle(writes)

    async def _roll_back(self) -> None:
        connection = self.connection
        if connection is None or connection.is_closed():
            return
        try:
            if connection.is_in_transaction():
                await connection.execute("ROLLBACK")
        except Exception as exc:
            self.drop(f"rolling back: {exc}")

    async def _committed(self, xid: str, started: float) -> bool | None:
        """Whether transaction ``xid`` committed (read on a new connection); ``None`` if
        it is still in progress when the batch's time to retry is over."""
        connection = await self.connect()
        while True:
            status = await connection.fetchval("SELECT pg_xact_status(CAST($1 AS xid8))", xid)
            if status != "in progress":  # its old backend may still be ending
                return bool(status == "committed")
            if time.monotonic() - started >= self._runner.retry_seconds:
                return None
            await asyncio.sleep(0.05)

    async def _attempt(
        self,
        connection: asyncpg.Connection,
        writes: Sequence[_Write],
        *,
        careful: bool,
        replaying: bool,
    ) -> None:
        """Run the batch in one transaction and commit it.

        :param replaying: run each write's ``replay`` statement, if it has one.
        :raises _JobFailed: a job failed (not ``careful``): the batch is to run again.
        :raises _Lost: the connection broke.
        """
        statements = self._runner.statements
        self._xid = None
        first = writes[0].sent(replaying)
        if not careful and first is not None and all(r.sent(replaying) is first for r in writes):
            await self._run_in_one_trip(connection, writes, statements(first))
            return
        try:
            await connection.execute("BEGIN")
            self._xid = await connection.fetchval("SELECT CAST(pg_current_xact_id() AS text)")
            if careful:
                await self._run_careful(connection, writes, replaying)
            else:
                await self._run_optimistic(connection, writes, statements, replaying)
        except _LOST as exc:
            raise _Lost(exc) from exc
        try:
            await connection.execute("COMMIT")
        except _LOST as exc:
            raise _Lost(exc, committing=True) from exc

    async def _run_in_one_trip(
        self, connection: asyncpg.Connection, writes: Sequence[_Write], compiled: _Compiled
    ) -> None:
        """The same statement for every write: one ``executemany`` outside any explicit
        transaction. asyncpg sends every execution, then one ``Sync``: one round trip,
        and PostgreSQL runs them all in one implicit transaction, committed at the
        ``Sync``. If the connection breaks meanwhile, the outcome is unknown (the
        caller replays the batch)."""
        try:
            await _execute_together(connection, compiled, writes)
        except _LOST as exc:
            raise _Lost(exc, committing=True) from exc
        except asyncpg.PostgresError as exc:
            if _infrastructure(exc):
                raise
            raise _JobFailed from exc

    async def _run_optimistic(
        self,
        connection: asyncpg.Connection,
        writes: Sequence[_Write],
        statements: _Statements,
        replaying: bool,
    ) -> None:
        """Every write in turn, consecutive single statements as one ``executemany``."""
        transaction = _PgTransaction(connection, statements)
        index = 0
        while index < len(writes):
            request = writes[index]
            statement = request.sent(replaying)
            if statement is None:
                request.outcome = await _run_job(request, transaction)
                if request.outcome[1] is not None:
                    raise _JobFailed
                index += 1
                continue
            end = index + 1
            while end < len(writes) and writes[end].sent(replaying) is statement:
                end += 1
            try:
                await _execute_together(connection, statements(statement), writes[index:end])
            except asyncpg.PostgresError as exc:
                if _infrastructure(exc):
                    raise
                raise _JobFailed from exc
            index = end

    async def _run_careful(
        self, connection: asyncpg.Connection, writes: Sequence[_Write], replaying: bool
    ) -> None:
        """Every write under a savepoint of its own: a failing one is undone alone."""
        transaction = _PgTransaction(connection, self._runner.statements)
        for request in writes:
            await connection.execute("SAVEPOINT job")
            statement = request.sent(replaying)
            if statement is None:
                request.outcome = await _run_job(request, transaction)
            else:
                compiled = self._runner.statements(statement)
                try:
                    await _execute_together(connection, compiled, [request])
                except asyncpg.PostgresError as exc:
                    if _infrastructure(exc):
                        raise
                    request.outcome = (None, _job_error(exc))
            if request.outcome[1] is not None:
                await connection.execute("ROLLBACK TO SAVEPOINT job")
            await connection.execute("RELEASE SAVEPOINT job")


async def _execute_together(
    connection: asyncpg.Connection, compiled: _Compiled, writes: Sequence[_Write]
) -> None:
    """Run the same statement for each of ``writes``, pipelined (one ``Sync``: in one
    implicit transaction unless one is open), and set each one's outcome: its row, if
    the statement returns one.

    :raises asyncpg.PostgresError: a write failed (none of them is done).
    """
    args = [compiled.args(request.params) for request in writes]
    if writes[0].returns_row:
        rows = await connection.fetchmany(compiled.text, args)
        if len(rows) != len(writes):  # a statement that does not return one row each time
            error = DatabaseError(f"{len(rows)} rows for {len(writes)} writes of one row each")
            for request in writes:
                request.outcome = (None, error)
            return
        for request, row in zip(writes, rows, strict=True):
            request.outcome = (tuple(row), None)
        return
    if len(args) == 1:
        await connection.execute(compiled.text, *args[0])
    else:
        await connection.executemany(compiled.text, args)
    for request in writes:
        request.outcome = (None, None)


def _job_error(error: BaseException) -> BaseException:
    """What a job's caller gets for an error of PostgreSQL."""
    if isinstance(error, asyncpg.IntegrityConstraintViolationError):
        return ConstraintViolation(str(error))
    if isinstance(error, (*_LOST, asyncpg.exceptions.InsufficientResourcesError)):
        return _outage(str(error), error)
    if isinstance(error, asyncpg.PostgresError):
        return DatabaseError(str(error))
    return error


def _outage(message: str, error: BaseException) -> DatabaseOutage:
    """A failure of the moment (a restart, a cut, a full disk: class 53 ``disk_full``)."""
    disk_full = isinstance(error, asyncpg.exceptions.DiskFullError)
    return DatabaseOutage(message, disk_full=disk_full)


async def _run_job(
    request: _Write, transaction: _PgTransaction
) -> tuple[Any, BaseException | None]:
    """Run a job in a greenlet; its result, or its own error.

    :raises: an error of the connection or the server (not the job's).
    """
    try:
        return await greenlet_spawn(request.job, transaction), None
    except Exception as exc:
        if _infrastructure(exc):
            raise
        return None, _job_error(exc)


def _no_job(_transaction: object) -> None:
    """The job of a single-statement write (never run: the statement is)."""


async def _keep_session(_connection: asyncpg.Connection) -> None:
    """The reads' pool gives a connection back as it is: reads open no transaction and
    set nothing (asyncpg's default reset is a round trip per read)."""


# -- the runner -------------------------------------------------------------------------------


class PgRunner:
    """Reads on a pool of asyncpg connections; writes group-committed by writers of their
    own.

    :param url: the database's URL (the writers and the reads connect to it with asyncpg).
    :param schema: the schema to work in (the connections' ``search_path``), if any.
    :param writers: writer connections (see the module's docstring).
    :param retry_seconds: how long a batch is tried again while the database cannot be
        reached before its callers get an error.
    """

    def __init__(
        self,
        url: URL,
        *,
        schema: str | None = None,
        writers: int = DEFAULT_WRITERS,
        retry_seconds: float = RETRY_SECONDS,
    ) -> None:
        if writers < 1:
            raise ValueError(f"a runner needs at least one writer, got {writers}")
        self._url = url
        self._schema = schema
        self.retry_seconds = retry_seconds
        self.statements = _Statements()
        self.figures = _Figures()
        self._writers = [_Writer(self, index) for index in range(writers)]
        self._read_pool: asyncpg.Pool | None = None
        self._closing = False
        self._reporter: asyncio.Task[None] | None = None
        self._reads = 0

    @property
    def commits(self) -> int:
        """Write transactions committed so far (each holds one or more writes)."""
        return sum(writer.commits for writer in self._writers)

    async def connect(self) -> asyncpg.Connection:
        """A new writer connection.

        :raises Exception: what ``asyncpg.connect`` raised.
        """
        # Generic plans: the writer's statements are few and prepared once; a custom plan
        # per execution would plan the whole match write (db.statements.Statements.
        # pair_write) every time, since its parts not asked for are cheaper to leave out
        # at planning than to skip by their one-time filters (docs/database.md).
        return await asyncpg.connect(
            **self._connect_options("fibs-writer", plan_cache_mode="force_generic_plan")
        )

    def _connect_options(self, application: str, **settings: str) -> dict[str, Any]:
        """``asyncpg.connect``'s arguments for a connection named ``application`` with
        these server ``settings``, in the runner's schema."""
        url = self._url
        server_settings = {"application_name": application, **settings}
        if self._schema is not None:
            server_settings["search_path"] = '"' + self._schema.replace('"', '""') + '"'
        return {
            "host": url.host,
            "port": url.port,
            "user": url.username,
            "password": url.password,
            "database": url.database,
            "server_settings": server_settings,
            "statement_cache_size": STATEMENT_CACHE_SIZE,
            "timeout": 10,
        }

    async def start(self) -> None:
        """Open the writers' connections and the reads' pool, and start the reports.

        :raises Exception: what connecting raised.
        """
        try:
            for writer in self._writers:
                await writer.connect()
            self._read_pool = await asyncpg.create_pool(
                min_size=1,
                max_size=POSTGRESQL_POOL_SIZE,
                reset=_keep_session,
                **self._connect_options("fibs-reader"),
            )
        except BaseException:
            for writer in self._writers:
                if writer.connection is not None:
                    writer.connection.terminate()
            raise
        pool_log = logging.getLogger("asyncpg.pool")
        if _POOL_LOG_FILTER not in pool_log.filters:
            pool_log.addFilter(_POOL_LOG_FILTER)
        self._reporter = asyncio.ensure_future(self._report_every_minute())

    async def read(self, job: Job[_T]) -> _T:
        """Run ``job`` on a connection of the pool; once more on another if the one it
        got turns out broken (PostgreSQL restarted since it was last used).

        :raises DatabaseError: the database is closed or cannot be reached, or a
            statement failed (:class:`ConstraintViolation` for a constraint).
        """
        pool = self._read_pool
        if self._closing or pool is None:
            raise DatabaseError("the database is closed")
        self._reads += 1
        for attempt in range(2):
            try:
                async with pool.acquire() as connection:
                    transaction = _PgTransaction(connection, self.statements)
                    return cast(_T, await greenlet_spawn(job, transaction))
            except _LOST as exc:
                if attempt or self._closing:
                    raise DatabaseOutage(f"the database cannot be reached: {exc}") from exc
            except asyncpg.PostgresError as exc:
                raise _job_error(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def write(self, job: Job[_T], *, key: Hashable = None) -> _T:
        return cast(_T, await self._submit(_Write(job, self._future(), True), key))

    async def write_statement(
        self,
        statement: Executable,
        params: Mapping[str, Any],
        *,
        key: Hashable = None,
        replay: Executable | None = None,
        returns_row: bool = False,
    ) -> Row | None:
        """Run one statement as a write; with ``returns_row``, the statement returns
        exactly one row, which is returned.

        Consecutive ones of a batch with the same statement are sent together (one
        ``executemany``, or ``fetchmany`` for their rows); a batch of them alone is one
        round trip (no ``BEGIN``, no ``COMMIT``), whose outcome is unknown if the
        connection breaks meanwhile: it is then run again with each write's ``replay``
        statement (the same effect whether or not the first attempt was committed), or
        failed if one has none.

        :raises ConstraintViolation: the statement broke a constraint.
        """
        request = _Write(
            _no_job,
            self._future(),
            True,
            statement=statement,
            params=params,
            replay=replay,
            returns_row=returns_row,
        )
        return cast(Row | None, await self._submit(request, key))

    def _future(self) -> asyncio.Future[Any]:
        if self._closing:
            raise DatabaseError("the database is closed")
        return asyncio.get_running_loop().create_future()

    async def _submit(self, request: _Write, key: Hashable) -> Any:
        request.submitted = time.monotonic()
        request.key = key
        writers = self._writers
        writer = writers[hash(key) % len(writers)] if key is not None else writers[0]
        writer.submit(request)
        return await request.future

    async def close(self) -> None:
        """Run every write already queued, then close the connections."""
        if self._closing:
            return
        self._closing = True
        for writer in self._writers:
            await writer.close()
        if self._reporter is not None:
            self._reporter.cancel()
            await asyncio.gather(self._reporter, return_exceptions=True)
        self.report()
        if self._read_pool is not None:
            await self._read_pool.close()

    async def _report_every_minute(self) -> None:
        while True:
            await asyncio.sleep(REPORT_INTERVAL)
            self.report()

    def report(self) -> None:
        """Log the figures since the last report at INFO, if there were writes."""
        figures, self.figures = self.figures, _Figures()
        reads, self._reads = self._reads, 0
        if not (figures.writes or figures.failed or figures.reconnects):
            return
        pool = self._read_pool
        size = POSTGRESQL_POOL_SIZE if pool is None else pool.get_max_size()
        checked_out = 0 if pool is None else pool.get_size() - pool.get_idle_size()
        batches = max(figures.batches, 1)
        _log.info(
            "postgresql: %d writes in %d batches (%.1f a batch, at most %d), "
            "batch mean %.1f ms, max %.1f ms, longest wait for a commit %.1f ms; "
            "%d retried, %d reconnects, %d writes failed; %d writers; "
            "%d reads, pool %d connections, %d in use",
            figures.writes,
            figures.batches,
            figures.writes / batches,
            figures.largest,
            figures.busy / batches * 1000,
            figures.slowest * 1000,
            figures.waited * 1000,
            figures.retries,
            figures.reconnects,
            figures.failed,
            len(self._writers),
            reads,
            size,
            checked_out,
        )
