"""Where the repository's transactions run: the loop and a commit thread for SQLite; for
PostgreSQL, :mod:`db.pgwriter`.

The repository (:mod:`db.repository`) writes each operation as a plain synchronous
function of a :class:`Transaction`, a *job*. A runner executes jobs and hands their
results back to the event loop:

* :class:`SqliteRunner` owns one standard-library ``sqlite3`` connection. The jobs'
  statements run on the event loop itself (microseconds each, from a warm page cache),
  and only each batch's ``COMMIT``, which waits for the disk, runs on a dedicated thread.
  Write jobs are **group-committed**: all the writes queued when a batch starts run in
  one ``BEGIN IMMEDIATE`` transaction (a failing job is rolled back alone: the batch is
  then run again with a savepoint per job), and one ``COMMIT`` (one ``fsync``) makes them
  all durable; jobs that arrive during that commit form the next batch. Every caller is
  answered only after its commit, so "persist, then announce" still holds. Reads run
  first in each batch, each in its own (deferred) transaction.
* :class:`db.pgwriter.PgRunner` runs the reads on a pool of asyncpg connections, each
  on a connection of its own, and the writes group-committed as here, on asyncpg
  connections of its own.

Cancellation: a write job, once submitted, runs to its commit even if the task awaiting
it is cancelled (for example the connection task of a player who just dropped, whose
match is being saved): the runner, not the caller, runs it. The caller gets its
``CancelledError`` at once, ``close`` waits for such jobs, and a failure nobody awaits
any more is logged. Only a read is skipped if its caller was cancelled before it
started (its result would be for nobody).

Statements are SQLAlchemy Core constructs built once (:mod:`db.statements`). For SQLite
they are compiled once to SQL text with named parameters and cached; the ``sqlite3``
module caches the prepared statements in turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections import deque
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar, cast

from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.sql import ClauseElement, Executable

from db.engine import sqlite_pragmas
from db.errors import ConstraintViolation, DatabaseError, DatabaseOutage

__all__ = [
    "Job",
    "Row",
    "Runner",
    "SqliteRunner",
    "Transaction",
]

_T = TypeVar("_T")

_log = logging.getLogger(__name__)

Row = tuple[Any, ...]
"""A result row: the values of the selected or returned columns, in order."""


class Transaction(Protocol):
    """What a job sees: statements executed in one transaction."""

    def execute(self, statement: Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Run ``statement`` with ``params``; the rows it selects or returns (or none).

        :raises ConstraintViolation: the statement broke a constraint.
        """
        ...


Job = Callable[[Transaction], _T]
"""One repository operation: every statement it runs is in one transaction."""


class Runner(Protocol):
    """Runs jobs for the event loop."""

    async def read(self, job: Job[_T]) -> _T:
        """Run a job that only reads, in a transaction that sees one snapshot."""
        ...

    async def write(self, job: Job[_T], *, key: Hashable = None) -> _T:
        """Run a job in a write transaction; return once it is committed.

        The job runs to its commit even if the caller is cancelled meanwhile.

        :param key: what the job writes (a table, a user): writes of one key
            are run in the order they were submitted (every write is, on one writer).
        """
        ...

    async def write_statement(
        self,
        statement: Executable,
        params: Mapping[str, Any],
        *,
        key: Hashable = None,
        replay: Executable | None = None,
        returns_row: bool = False,
    ) -> Row | None:
        """Run one statement as a write (see :meth:`write`); with ``returns_row`` the
        statement returns exactly one row, which is returned (otherwise ``None``).

        :param replay: a statement with the same effect whether or not ``statement`` was
            already committed, run instead if the outcome of a first attempt is unknown
            (PostgreSQL: a connection lost mid-way).
        :raises ConstraintViolation: the statement broke a constraint.
        """
        ...

    async def close(self) -> None:
        """Finish the jobs already submitted, then release the connections."""
        ...


def _report_orphaned_write(error: BaseException) -> None:
    """Log a write that failed after its caller was cancelled: nobody else will see it."""
    _log.error("a write failed after its caller was cancelled", exc_info=error)


# -- SQLite ---------------------------------------------------------------------------------

_SQLITE_DIALECT: Final = sqlite_dialect.dialect(paramstyle="named")
"""Compiles statements to SQLite text with ``:name`` parameters, as ``sqlite3`` takes them."""


_JSON_TYPES: Final = (dict, list)
"""Parameter values ``sqlite3`` gets as JSON text (JSON columns). A tuple made once: the
union ``dict | list`` written in the check would be made and asked anew for every
parameter of every statement (docs/performance.md §24)."""

_Compiled = tuple[Executable, str, dict[str, Any]]
"""A statement (kept so its ``id`` stays unique), its SQLite text, its default parameters."""


def _sqlite_compiled(statement: Executable, cache: dict[int, _Compiled]) -> _Compiled:
    """The SQLite text of ``statement`` and the values of its literals, compiled once.

    Statements are long-lived objects (:class:`db.statements.Statements`); the cache keys
    them by ``id`` and holds each one, so the ``id`` is never reused.
    """
    compiled = cache.get(id(statement))
    if compiled is None:
        clause = cast(ClauseElement, statement).compile(dialect=_SQLITE_DIALECT)
        # Literals in the statement (``values(x=0)``) become generated parameters whose
        # values the compiled form carries; the caller's parameters come on top.
        compiled = (statement, str(clause), dict(clause.params))
        cache[id(statement)] = compiled
    return compiled


class _SqliteTransaction:
    """:class:`Transaction` on the :class:`SqliteRunner`'s ``sqlite3`` connection."""

    def __init__(self, connection: sqlite3.Connection, cache: dict[int, _Compiled]):
        self._connection = connection
        self._cache = cache

    def execute(self, statement: Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        _, text, defaults = _sqlite_compiled(statement, self._cache)
        merged = {**defaults, **params} if params else defaults
        # A parameter as sqlite3 stores it: JSON columns (dicts, lists) become text.
        values = {
            key: json.dumps(value) if isinstance(value, _JSON_TYPES) else value
            for key, value in merged.items()
        }
        try:
            return self._connection.execute(text, values).fetchall()
        except sqlite3.IntegrityError as exc:
            raise ConstraintViolation(str(exc)) from exc
        except sqlite3.OperationalError as exc:
            if is_outage(exc):
                raise sqlite_error("the statement failed", exc) from exc
            raise


_OUTAGE_CODES: Final = frozenset(
    {
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_NOMEM,
        sqlite3.SQLITE_READONLY,
    }
)
"""SQLite's result codes (primary) for failures of the moment, not of the statement."""


def is_outage(error: BaseException) -> bool:
    """Whether ``error`` from sqlite3 is a failure of the moment (disk full, I/O, locked)."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.Error) and code is not None and code & 0xFF in _OUTAGE_CODES


def sqlite_error(what: str, error: BaseException) -> DatabaseError:
    """What a write's caller gets for ``error`` of sqlite3: a :class:`DatabaseOutage`
    (``disk_full`` for ``SQLITE_FULL``) for a failure of the moment, else a
    :class:`DatabaseError`."""
    if is_outage(error):
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF
        return DatabaseOutage(f"{what}: {error}", disk_full=code == sqlite3.SQLITE_FULL)
    return DatabaseError(f"{what}: {error}")


@dataclass(eq=False)
class _Request:
    """A job waiting for its batch, and the future its caller awaits."""

    job: Job[Any]
    future: asyncio.Future[Any]
    write: bool
    abandonable: bool = False
    outcome: tuple[Any, BaseException | None] = field(default=(None, None))


def _settle(requests: Sequence[_Request]) -> None:
    """Hand each caller its job's result or error."""
    for request in requests:
        value, error = request.outcome
        if request.future.done():  # the caller was cancelled and nobody waits
            if error is not None and request.write:
                _report_orphaned_write(error)
            continue
        if error is None:
            request.future.set_result(value)
        else:
            request.future.set_exception(error)


class SqliteRunner:
    """One ``sqlite3`` connection; its statements run on the event loop, each batch's
    ``COMMIT`` (the ``fsync``) on a thread; writes are group-committed.

    Why the statements run on the loop: a statement of a small transaction takes
    microseconds, but a thread that runs them must take the GIL back after every one of
    them, and a busy event loop lets it go only every few milliseconds (the switch
    interval). A write thread was starved that way under load (docs/performance.md §1).
    Only the commit waits for the disk, so only the commit goes to the thread: one
    hand-over per batch. While it runs, new jobs queue and become the next batch.

    ``BEGIN IMMEDIATE`` on the loop does not wait for a lock another process holds (the
    connection's busy timeout is 0 there); if the database is locked, the batch waits for
    the lock on the thread, up to ``busy_timeout``.

    :param path: the database file, or ``":memory:"``.
    :param busy_timeout: seconds to wait for another process's write lock.
    :param prepare: run on the new connection before any job (migrations), in the thread.
    """

    def __init__(
        self,
        path: str,
        *,
        busy_timeout: float,
        prepare: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._prepare = prepare
        self._queue: deque[_Request] = deque()
        self._cache: dict[int, _Compiled] = {}
        self._connection: sqlite3.Connection | None = None
        self._transaction: _SqliteTransaction | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fibs-sqlite")
        self._scheduled = False
        """A batch is scheduled on the loop."""
        self._busy = False
        """A batch waits for the thread (its commit, or the lock of another process)."""
        self._drained: asyncio.Event | None = None
        self._closing = False
        self.commits = 0
        """Write transactions committed so far (each holds one or more write jobs)."""

    async def start(self) -> None:
        """Open the connection and run ``prepare`` (in the thread).

        :raises Exception: whatever opening or ``prepare`` raised.
        """
        loop = asyncio.get_running_loop()
        try:
            self._connection = await loop.run_in_executor(self._thread, self._connect)
        except BaseException:
            self._thread.shutdown(wait=False)
            raise
        self._transaction = _SqliteTransaction(self._connection, self._cache)
        self._drained = asyncio.Event()
        self._drained.set()

    async def read(self, job: Job[_T]) -> _T:
        return await self._submit(job, write=False, abandonable=True)

    async def write(self, job: Job[_T], *, key: Hashable = None) -> _T:
        return await self._submit(job, write=True, abandonable=False)

    async def write_statement(
        self,
        statement: Executable,
        params: Mapping[str, Any],
        *,
        key: Hashable = None,
        replay: Executable | None = None,
        returns_row: bool = False,
    ) -> Row | None:
        rows = await self._submit(
            lambda tx: tx.execute(statement, params), write=True, abandonable=False
        )
        return rows[0] if returns_row else None

    async def _submit(self, job: Job[_T], *, write: bool, abandonable: bool) -> _T:
        if self._closing or self._drained is None:
            raise DatabaseError("the database is closed")
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(job, future, write, abandonable))
        self._drained.clear()
        self._schedule()
        return await future

    async def close(self) -> None:
        """Run every job already queued, then close the connection and end the thread."""
        if self._closing or self._drained is None or self._connection is None:
            return
        self._closing = True
        await self._drained.wait()
        self._connection.close()
        self._thread.shutdown(wait=True)

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; every BEGIN is explicit. The
        # connection is used by the loop and, for commits, by the thread: never both at
        # once (a batch runs only while the thread has nothing of it).
        connection = sqlite3.connect(
            self._path,
            timeout=self._busy_timeout,
            isolation_level=None,
            cached_statements=256,
            check_same_thread=False,
        )
        try:
            for pragma in sqlite_pragmas(self._busy_timeout):
                connection.execute(pragma)
            if self._prepare is not None:
                self._prepare(connection)
            connection.execute("PRAGMA busy_timeout = 0")  # the loop never waits for a lock
        except BaseException:
            connection.close()
            raise
        return connection

    # -- batches ------------------------------------------------------------------------------

    def _schedule(self) -> None:
        """Run a batch on a next turn of the loop, unless one is scheduled or running."""
        if not (self._scheduled or self._busy):
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._run_batch)

    def _after_batch(self) -> None:
        if self._queue:
            self._schedule()
        elif not self._busy and not self._scheduled and self._drained is not None:
            self._drained.set()

    def _run_batch(self) -> None:
        """Everything queued: the reads at once, the writes in one transaction."""
        self._scheduled = False
        connection, transaction = self._connection, self._transaction
        assert connection is not None and transaction is not None
        requests = [r for r in self._queue if not (r.abandonable and r.future.cancelled())]
        self._queue.clear()
        reads = [r for r in requests if not r.write]
        for request in reads:
            request.outcome = _run_read(connection, transaction, request.job)
        _settle(reads)
        writes = [r for r in requests if r.write]
        if not writes:
            self._after_batch()
            return
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # another process writes: wait for it on the thread
            self._in_thread(self._begin_waiting, writes, self._write_and_commit)
            return
        self._write_and_commit(writes, None)

    def _begin_waiting(self) -> None:
        """On the thread: ``BEGIN IMMEDIATE``, waiting up to the busy timeout."""
        assert self._connection is not None
        self._connection.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        try:
            self._connection.execute("BEGIN IMMEDIATE")
        finally:
            self._connection.execute("PRAGMA busy_timeout = 0")

    def _write_and_commit(self, writes: list[_Request], error: BaseException | None) -> None:
        """Run the write jobs (each failing one rolled back alone), then commit on the thread."""
        connection, transaction = self._connection, self._transaction
        assert connection is not None and transaction is not None
        if error is not None:
            self._fail(writes, sqlite_error("cannot start a write", error))
            return
        try:
            # Optimistic: the jobs one after another, with one savepoint for the batch.
            # Only if one fails is the batch undone and run again with a savepoint per
            # job, so the failing job is rolled back alone (two statements fewer per job
            # in the usual case, docs/performance.md §10).
            connection.execute("SAVEPOINT batch")
            if not all(_run_write(transaction, request) for request in writes):
                connection.execute("ROLLBACK TO batch")
                for request in writes:
                    connection.execute("SAVEPOINT job")
                    if not _run_write(transaction, request):
                        connection.execute("ROLLBACK TO job")
                    connection.execute("RELEASE job")
        except sqlite3.Error as exc:  # the transaction itself broke
            self._fail(writes, sqlite_error("the write was not committed", exc))
            return
        self._in_thread(lambda: connection.execute("COMMIT"), writes, self._committed)

    def _committed(self, writes: list[_Request], error: BaseException | None) -> None:
        if error is not None:
            self._fail(writes, sqlite_error("the write was not committed", error))
            return
        self.commits += 1
        _settle(writes)
        self._after_batch()

    def _fail(self, writes: list[_Request], error: DatabaseError) -> None:
        """Roll back what the batch did and give every write of it ``error``."""
        assert self._connection is not None
        if self._connection.in_transaction:
            try:
                self._connection.execute("ROLLBACK")
            except sqlite3.Error as exc:  # SQLite rolled back by itself (disk full, I/O)
                _log.debug("rollback after a failed write: %s", exc)
        for request in writes:
            request.outcome = (None, error)
        _settle(writes)
        self._after_batch()

    def _in_thread(
        self,
        work: Callable[[], object],
        writes: list[_Request],
        then: Callable[[list[_Request], BaseException | None], None],
    ) -> None:
        """Run ``work`` on the thread, then ``then(writes, its error)`` on the loop."""
        self._busy = True

        def done(future: asyncio.Future[object]) -> None:
            self._busy = False
            then(writes, future.exception())

        asyncio.get_running_loop().run_in_executor(self._thread, work).add_done_callback(done)


def _run_write(transaction: Transaction, request: _Request) -> bool:
    """Run a write job in the open transaction and keep its outcome; False if it failed."""
    try:
        request.outcome = (request.job(transaction), None)
    except Exception as exc:
        request.outcome = (None, exc)
        return False
    return True


def _run_read(
    connection: sqlite3.Connection, transaction: _SqliteTransaction, job: Job[Any]
) -> tuple[Any, BaseException | None]:
    """A read job in its own deferred transaction (one consistent snapshot)."""
    connection.execute("BEGIN")
    try:
        return job(transaction), None
    except Exception as exc:
        return None, exc
    finally:
        connection.execute("ROLLBACK")
