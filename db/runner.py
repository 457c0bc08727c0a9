"""Where the repository's transactions run: one thread for SQLite, the pool for PostgreSQL.

The repository (:mod:`db.repository`) writes each operation as a plain synchronous
function of a :class:`Transaction`, a *job*. A runner executes jobs and hands their
results back to the event loop:

* :class:`SqliteRunner` owns one standard-library ``sqlite3`` connection in a dedicated
  thread. A whole job (every statement of it) runs in that thread, so the event loop
  pays one hand-over per operation instead of one per statement. Write jobs are
  **group-committed**: all the writes waiting when the thread gets to them run in one
  ``BEGIN IMMEDIATE`` transaction, each inside its own savepoint (a failing job is rolled
  back alone), and one ``COMMIT`` (one ``fsync``) makes them all durable. Every caller is
  answered only after that commit, so "persist, then announce" still holds. Reads run on
  the same thread, each in its own (deferred) transaction, after the pending writes.
* :class:`AlchemyRunner` runs a job on a pooled SQLAlchemy connection of an async engine
  (PostgreSQL through asyncpg) with ``AsyncConnection.run_sync``: each write job is one
  transaction, and jobs run concurrently as the database allows.

Statements are SQLAlchemy Core constructs built once (:mod:`db.statements`). For SQLite
they are compiled once to SQL text with named parameters and cached; the ``sqlite3``
module caches the prepared statements in turn.
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar, cast

from sqlalchemy import Connection
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ClauseElement, Executable

from db.engine import sqlite_pragmas
from db.errors import ConstraintViolation, DatabaseError

__all__ = [
    "AlchemyRunner",
    "Job",
    "Row",
    "Runner",
    "SqliteRunner",
    "Transaction",
]

_T = TypeVar("_T")

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

    async def write(self, job: Job[_T], *, abandonable: bool = False) -> _T:
        """Run a job in a write transaction; return once it is committed.

        :param abandonable: the job may be skipped if its caller was cancelled before it
            started (for a job whose result is useless, or harmful, without its caller).
        """
        ...

    async def close(self) -> None:
        """Finish the jobs already submitted, then release the connections."""
        ...


# -- SQLite ---------------------------------------------------------------------------------

_SQLITE_DIALECT: Final = sqlite_dialect.dialect(paramstyle="named")
"""Compiles statements to SQLite text with ``:name`` parameters, as ``sqlite3`` takes them."""


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


def _sqlite_value(value: Any) -> Any:
    """A parameter as ``sqlite3`` stores it: JSON columns (dicts, lists) become text."""
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


class _SqliteTransaction:
    """:class:`Transaction` on the runner thread's ``sqlite3`` connection."""

    def __init__(self, connection: sqlite3.Connection, cache: dict[int, _Compiled]):
        self._connection = connection
        self._cache = cache

    def execute(self, statement: Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        _, text, defaults = _sqlite_compiled(statement, self._cache)
        merged = {**defaults, **params} if params else defaults
        values = {key: _sqlite_value(value) for key, value in merged.items()}
        try:
            return self._connection.execute(text, values).fetchall()
        except sqlite3.IntegrityError as exc:
            raise ConstraintViolation(str(exc)) from exc


@dataclass(eq=False)
class _Request:
    """A job waiting for the runner thread, and the future its caller awaits."""

    job: Job[Any]
    future: asyncio.Future[Any]
    write: bool
    abandonable: bool = False
    outcome: tuple[Any, BaseException | None] = field(default=(None, None))


_STOP: Final = object()
"""Queued by :meth:`SqliteRunner.close`: finish what came before, then end the thread."""


def _settle(requests: Sequence[_Request]) -> None:
    """On the event loop: hand each caller its job's result or error."""
    for request in requests:
        if request.future.done():  # the caller was cancelled and nobody waits
            continue
        value, error = request.outcome
        if error is None:
            request.future.set_result(value)
        else:
            request.future.set_exception(error)


class SqliteRunner:
    """One thread with one ``sqlite3`` connection; writes are group-committed.

    :param path: the database file, or ``":memory:"`` (then reads and writes share the
        one connection, as they must).
    :param busy_timeout: seconds to wait for another process's write lock.
    :param prepare: run in the thread on the new connection before any job (migrations).
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
        self._queue: queue.SimpleQueue[_Request | object] = queue.SimpleQueue()
        self._cache: dict[int, _Compiled] = {}
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Future[None] | None = None
        self._closing = False
        self.commits = 0
        """Write transactions committed so far (each holds one or more write jobs)."""
        self.writes = 0
        """Write jobs run so far; ``writes / commits`` is the mean group size."""

    async def start(self) -> None:
        """Open the connection in a new thread and run ``prepare``.

        :raises Exception: whatever opening or ``prepare`` raised (the thread has ended).
        """
        loop = asyncio.get_running_loop()
        started: asyncio.Future[None] = loop.create_future()
        self._stopped = loop.create_future()
        self._thread = threading.Thread(
            target=self._main, args=(loop, started), name="fibs-sqlite", daemon=True
        )
        self._thread.start()
        await started

    async def read(self, job: Job[_T]) -> _T:
        return await self._submit(job, write=False, abandonable=True)

    async def write(self, job: Job[_T], *, abandonable: bool = False) -> _T:
        return await self._submit(job, write=True, abandonable=abandonable)

    async def _submit(self, job: Job[_T], *, write: bool, abandonable: bool) -> _T:
        if self._closing or self._thread is None:
            raise DatabaseError("the database is closed")
        future: asyncio.Future[_T] = asyncio.get_running_loop().create_future()
        self._queue.put(_Request(job, future, write, abandonable))
        return await future

    async def close(self) -> None:
        """Run every job already queued, then close the connection and end the thread."""
        if self._closing or self._thread is None or self._stopped is None:
            return
        self._closing = True
        self._queue.put(_STOP)
        await self._stopped

    # -- the thread -------------------------------------------------------------------------

    def _main(self, loop: asyncio.AbstractEventLoop, started: asyncio.Future[None]) -> None:
        try:
            connection = self._connect()
        except BaseException as exc:  # reported to start(); the thread ends
            loop.call_soon_threadsafe(_fail_future, started, exc)
            return
        loop.call_soon_threadsafe(_finish_future, started)
        try:
            self._serve(connection, loop)
        finally:
            connection.close()
            assert self._stopped is not None
            loop.call_soon_threadsafe(_finish_future, self._stopped)

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; every job's BEGIN is explicit.
        connection = sqlite3.connect(
            self._path, timeout=self._busy_timeout, isolation_level=None, cached_statements=256
        )
        try:
            for pragma in sqlite_pragmas(self._busy_timeout):
                connection.execute(pragma)
            if self._prepare is not None:
                self._prepare(connection)
        except BaseException:
            connection.close()
            raise
        return connection

    def _serve(self, connection: sqlite3.Connection, loop: asyncio.AbstractEventLoop) -> None:
        """Take everything queued, run its writes in one transaction, then its reads."""
        transaction = _SqliteTransaction(connection, self._cache)
        while True:
            items = [self._queue.get()]
            while True:
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in items)
            requests = [item for item in items if isinstance(item, _Request)]
            live = [r for r in requests if not (r.abandonable and r.future.cancelled())]
            writes = [r for r in live if r.write]
            if writes:
                self.commits += _run_writes(connection, transaction, writes)
                self.writes += len(writes)
            for request in live:
                if not request.write:
                    request.outcome = _run_read(connection, transaction, request.job)
            if live:
                loop.call_soon_threadsafe(_settle, live)
            if stop:
                return


def _run_writes(
    connection: sqlite3.Connection, transaction: _SqliteTransaction, writes: list[_Request]
) -> bool:
    """All of ``writes`` in one transaction, each in a savepoint; set each outcome.

    Returns whether the transaction was committed.

    ``BEGIN IMMEDIATE`` takes the write lock at once, so the busy timeout applies (a
    deferred transaction that upgrades its lock later fails at once if another process
    committed meanwhile).
    """
    try:
        connection.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        for request in writes:
            request.outcome = (None, DatabaseError(f"cannot start a write: {exc}"))
        return False
    try:
        for request in writes:
            connection.execute("SAVEPOINT job")
            try:
                request.outcome = (request.job(transaction), None)
            except Exception as exc:
                connection.execute("ROLLBACK TO job")
                request.outcome = (None, exc)
            connection.execute("RELEASE job")
        connection.execute("COMMIT")
        return True
    except BaseException as exc:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        error = exc if isinstance(exc, Exception) else DatabaseError(repr(exc))
        for request in writes:
            request.outcome = (None, DatabaseError(f"the write was not committed: {error}"))
        return False


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


def _finish_future(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _fail_future(future: asyncio.Future[None], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


# -- PostgreSQL (and any SQLAlchemy async engine) --------------------------------------------


class _AlchemyTransaction:
    """:class:`Transaction` on a SQLAlchemy connection (inside ``run_sync``)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def execute(self, statement: Executable, params: Mapping[str, Any] | None = None) -> list[Row]:
        try:
            result = self._connection.execute(statement, dict(params or {}))
        except IntegrityError as exc:
            raise ConstraintViolation(str(exc.orig)) from exc
        return [tuple(row) for row in result] if result.returns_rows else []


class AlchemyRunner:
    """Jobs on the pooled connections of an async engine, one transaction each."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def read(self, job: Job[_T]) -> _T:
        async with self._engine.connect() as connection:
            return await connection.run_sync(lambda sync: job(_AlchemyTransaction(sync)))

    async def write(self, job: Job[_T], *, abandonable: bool = False) -> _T:
        async with self._engine.begin() as connection:
            return await connection.run_sync(lambda sync: job(_AlchemyTransaction(sync)))

    async def close(self) -> None:
        await self._engine.dispose()
