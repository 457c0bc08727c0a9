"""Engines, sessions and schema migrations for the server's database.

Two back ends are supported, chosen by the URL:

* SQLite through aiosqlite (``sqlite+aiosqlite:///path/to/fibs.db``), the embedded
  default. Every connection gets WAL journaling, foreign keys, ``synchronous=FULL`` and a
  busy timeout; SQLAlchemy (not the ``sqlite3`` module) emits ``BEGIN`` so that reads are
  repeatable and DDL is transactional, and write transactions use ``BEGIN IMMEDIATE`` so
  that a write never fails half way with "database is locked".
* PostgreSQL through asyncpg (``postgresql+asyncpg://user@host:5432/dbname``), optionally in
  a named schema (``search_path``).

The shorter forms ``sqlite:///...`` and ``postgresql://...`` are accepted and mapped to the
async drivers. :func:`migrate` brings a database to the newest schema with the Alembic
revisions in ``db/migrations``; it needs no ``alembic.ini`` and runs inside the caller's
event loop (Alembic's synchronous API runs through ``AsyncConnection.run_sync``).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, event
from sqlalchemy import create_engine as _create_sync_engine
from sqlalchemy.engine import URL, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from db.errors import DatabaseUnavailable, MigrationError

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "MIGRATIONS_DIR",
    "SQLITE_WRITE_OPTION",
    "alembic_config",
    "cannot_open",
    "create_engine",
    "current_revision",
    "display_url",
    "head_revision",
    "migrate",
    "migrate_engine",
    "migrate_sqlite",
    "normalize_url",
    "require_sqlite_file",
    "run_alembic",
    "sqlite_path",
    "sqlite_pragmas",
    "write_engine",
]

MIGRATIONS_DIR: Final = Path(__file__).resolve().parent / "migrations"
"""Where the Alembic environment (``env.py``) and the revisions (``versions/``) live."""

DEFAULT_BUSY_TIMEOUT: Final = 10.0
"""Seconds an SQLite connection waits for another process's write lock before failing."""

POSTGRESQL_POOL_SIZE: Final = 16
"""Connections a PostgreSQL engine keeps open, and the most it opens (no overflow); also
the most the server's pool of read connections opens (:mod:`db.pgwriter`).

SQLAlchemy's default (5 kept, 10 more opened under load) closed each extra connection
when it was returned and opened another a moment later: at the load benchmark's maximum
rate about 18 new PostgreSQL connections a second (a backend process each), and 500
matches did 661 actions a second instead of 888 (docs/performance.md §11). With no
overflow a job that finds every connection busy waits for one instead."""

SQLITE_WRITE_OPTION: Final = "fibs_sqlite_begin_immediate"
"""Execution option that makes the SQLite ``begin`` hook emit ``BEGIN IMMEDIATE``.

A deferred transaction that reads first and writes later must upgrade its lock, and SQLite
refuses that upgrade at once (no busy wait) if another connection committed meanwhile.
Taking the write lock at ``BEGIN`` lets the busy timeout do its job instead.
"""

_ASYNC_DRIVERS: Final = {
    "sqlite": "sqlite+aiosqlite",
    "sqlite+aiosqlite": "sqlite+aiosqlite",
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "postgresql+asyncpg": "postgresql+asyncpg",
}


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL and select the async driver of its back end.

    :raises ValueError: the URL does not parse or names an unsupported back end.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # ArgumentError for text that is not a URL at all
        shown = re.sub(r":[^:/@]*@", ":***@", str(url))  # no password in the message
        raise ValueError(
            f"invalid database URL {shown!r}: {exc}; "
            "use sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER@HOST:PORT/DB"
        ) from exc
    driver = _ASYNC_DRIVERS.get(parsed.drivername)
    if driver is None:
        shown = parsed.render_as_string(hide_password=True)
        raise ValueError(
            f"unsupported database URL {shown!r}: "
            "use sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER@HOST/DB"
        )
    return parsed.set(drivername=driver)


def create_engine(
    url: str | URL,
    *,
    schema: str | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    echo: bool = False,
) -> AsyncEngine:
    """Create an async engine for ``url`` with the connection set-up this project relies on.

    :param schema: PostgreSQL only: the schema to use (it becomes the ``search_path``, so
        tables and Alembic's version table live there). It must already exist.
    :param busy_timeout: SQLite only: seconds to wait for another writer's lock.
    :raises ValueError: unsupported URL, or a schema given for SQLite.
    """
    parsed = normalize_url(url)
    connect_args: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if schema is not None:
            raise ValueError("a schema can only be given for PostgreSQL")
        engine = _create_async_engine(parsed, echo=echo, connect_args=connect_args)
        _install_sqlite_hooks(engine, busy_timeout)
        return engine
    if schema is not None:
        # Quoted, so the name is used exactly (PostgreSQL would fold it to lower case).
        quoted = '"' + schema.replace('"', '""') + '"'
        connect_args["server_settings"] = {"search_path": quoted}
    return _create_async_engine(
        parsed,
        echo=echo,
        connect_args=connect_args,
        pool_pre_ping=True,
        pool_size=POSTGRESQL_POOL_SIZE,
        max_overflow=0,
    )


def write_engine(engine: AsyncEngine) -> AsyncEngine:
    """The same engine (and pool), marked so that SQLite write transactions begin IMMEDIATE.

    On PostgreSQL the option is ignored, so callers need not care about the back end.
    """
    return engine.execution_options(**{SQLITE_WRITE_OPTION: True})


def sqlite_pragmas(busy_timeout: float) -> tuple[str, ...]:
    """The PRAGMAs every SQLite connection of this project runs first.

    WAL: readers never block the writer and the writer never blocks readers (an in-memory
    database answers "memory" and stays as it is). ``synchronous = FULL``: a commit is on
    disk before it returns, so it survives power loss, not only a crash of the server
    process (architecture: durable, then announce). ``journal_size_limit``: after each
    checkpoint (every 1,000 pages, SQLite's default) the WAL file is cut back to at most
    :data:`WAL_SIZE_LIMIT` bytes instead of keeping the size of its largest burst (issue
    34 item 10: the WAL is bounded, D302).
    """
    return (
        f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}",
        "PRAGMA foreign_keys = ON",
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = FULL",
        f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}",
    )


WAL_SIZE_LIMIT = 4 * 1024 * 1024
"""Bytes an SQLite WAL file is cut back to after a checkpoint (``journal_size_limit``)."""


def _install_sqlite_hooks(engine: AsyncEngine, busy_timeout: float) -> None:
    """Per-connection PRAGMAs, and SQLAlchemy-controlled BEGIN (see the module docstring)."""

    def on_connect(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
        # Stop the sqlite3 module from issuing its own (lazy, DML-only) BEGIN; the
        # "begin" hook below issues it for every transaction instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            for pragma in sqlite_pragmas(busy_timeout):
                cursor.execute(pragma)
        finally:
            cursor.close()

    def on_begin(connection: Connection) -> None:
        if connection.get_execution_options().get(SQLITE_WRITE_OPTION):
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        else:
            connection.exec_driver_sql("BEGIN")

    event.listen(engine.sync_engine, "connect", on_connect)
    event.listen(engine.sync_engine, "begin", on_begin)


def alembic_config() -> Config:
    """An Alembic configuration built in code: no ``alembic.ini`` is read or needed."""
    config = Config()
    # ConfigParser interpolation: a literal "%" in the path must be doubled.
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    return config


def head_revision() -> str:
    """The newest revision in ``db/migrations/versions``."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:  # pragma: no cover - the package always ships revisions
        raise RuntimeError("db/migrations has no revisions")
    return head


async def current_revision(engine: AsyncEngine) -> str | None:
    """The revision a database is at, or ``None`` for an empty (never migrated) database."""

    def read(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    async with engine.connect() as connection:
        return await connection.run_sync(read)


async def migrate_engine(engine: AsyncEngine, revision: str = "head") -> None:
    """Upgrade the database behind ``engine`` to ``revision`` in one transaction.

    Running it again at the target revision does nothing. On PostgreSQL, ``env.py``
    holds an advisory lock so two servers starting together do not both migrate.

    :raises MigrationError: the database is at a revision unknown here (or ``revision``
        is unknown); nothing was changed.
    """
    try:
        await run_alembic(engine, lambda config: command.upgrade(config, revision))
    except CommandError as exc:
        raise MigrationError(f"cannot migrate the database: {exc}") from exc


async def run_alembic(engine: AsyncEngine, action: Callable[[Config], object]) -> None:
    """Run a synchronous Alembic command against ``engine`` inside one transaction.

    ``env.py`` picks the connection up from ``config.attributes["connection"]``.
    """

    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        action(config)

    async with write_engine(engine).begin() as connection:
        await connection.run_sync(run)


def sqlite_path(url: URL) -> str:
    """The file of an SQLite URL for :func:`sqlite3.connect` (``":memory:"`` for none).

    :raises ValueError: a URL with query options (``?mode=...``), which are not supported.
    """
    if url.query:
        raise ValueError(f"SQLite URL options are not supported: {dict(url.query)!r}")
    return url.database or ":memory:"


class _BorrowedConnection:
    """A ``sqlite3`` connection lent to SQLAlchemy for a migration: it must not close it."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)

    def close(self) -> None:
        """The owner closes the connection, not the borrowing pool."""


def migrate_sqlite(connection: sqlite3.Connection, revision: str = "head") -> None:
    """Upgrade the database of an open ``sqlite3`` connection in one transaction.

    For :class:`db.runner.SqliteRunner`, whose thread owns the connection (an in-memory
    database exists only in it). The connection must be in autocommit mode
    (``isolation_level=None``); SQLAlchemy emits ``BEGIN IMMEDIATE`` itself.

    :raises MigrationError: see :func:`migrate_engine`.
    """
    borrowed = _BorrowedConnection(connection)
    engine = _create_sync_engine("sqlite://", creator=lambda: borrowed, poolclass=StaticPool)
    event.listen(engine, "begin", lambda c: c.exec_driver_sql("BEGIN IMMEDIATE"))

    try:
        with engine.begin() as sync_connection:
            config = alembic_config()
            config.attributes["connection"] = sync_connection
            command.upgrade(config, revision)
    except CommandError as exc:
        raise MigrationError(f"cannot migrate the database: {exc}") from exc
    finally:
        engine.dispose()


async def migrate(
    url: str | URL,
    *,
    schema: str | None = None,
    revision: str = "head",
) -> None:
    """Create or upgrade the schema of the database at ``url`` (called at server start).

    :raises ValueError: unsupported URL.
    :raises MigrationError: see :func:`migrate_engine`.
    """
    engine = create_engine(url, schema=schema)
    try:
        await migrate_engine(engine, revision)
    finally:
        await engine.dispose()


# -- start-up errors in one line -------------------------------------------------------------

_MISSING_DATABASE: Final = "3D000"
"""PostgreSQL's SQLSTATE ``invalid_catalog_name``: the database does not exist."""
_MISSING_ROLE: Final = "28000"
"""SQLSTATE ``invalid_authorization_specification``: the role does not exist (or may not
log in)."""
_BAD_PASSWORD: Final = "28P01"
"""SQLSTATE ``invalid_password``."""


def display_url(url: str | URL) -> str:
    """``url`` as an operator should read it: the password hidden, an SQLite path made
    absolute (relative paths are taken from the working directory, as SQLite does)."""
    parsed = make_url(url) if isinstance(url, str) else url
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        parsed = parsed.set(database=str(Path(parsed.database).resolve()))
    return parsed.render_as_string(hide_password=True)


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a driver error, through SQLAlchemy's wrapper (``orig``)."""
    for candidate in (getattr(exc, "orig", None), exc):
        code = getattr(candidate, "sqlstate", None) or getattr(candidate, "pgcode", None)
        if isinstance(code, str):
            return code
    return None


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "orig", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def cannot_open(url: URL, exc: BaseException) -> DatabaseUnavailable | None:
    """The one-line error for a failure to open the database at ``url``, or ``None``
    when ``exc`` is not a failure to open it (a bug, say: it then propagates as it is).

    The line names the database (:func:`display_url`), says what is wrong and what to do.
    """
    shown = display_url(url)
    if url.get_backend_name() == "sqlite":
        if not isinstance(exc, sqlite3.Error):
            return None
        path = Path(sqlite_path(url)).resolve()
        if not path.parent.is_dir():
            return DatabaseUnavailable(
                f"cannot open {shown}: the folder {path.parent} does not exist; "
                "create it or give another path"
            )
        return DatabaseUnavailable(f"cannot open {shown}: {_first_line(exc)}")
    host = url.host or "localhost"
    port = url.port or 5432
    where = f"-h {host} -p {port}"
    state = _sqlstate(exc)
    if state == _MISSING_DATABASE:
        owner = f" -O {url.username}" if url.username not in (None, "postgres") else ""
        return DatabaseUnavailable(
            f"cannot open {shown}: database {url.database!r} does not exist; create it "
            f"with: createdb {where} -U postgres{owner} {url.database}"
        )
    if state == _MISSING_ROLE:
        return DatabaseUnavailable(
            f"cannot open {shown}: {_first_line(exc)}; create the role with: "
            f"createuser {where} -U postgres {url.username}, or give another user in the URL"
        )
    if state == _BAD_PASSWORD:
        return DatabaseUnavailable(
            f"cannot open {shown}: {_first_line(exc)}; check the user and password in the URL"
        )
    if isinstance(exc, OSError | TimeoutError):
        return DatabaseUnavailable(
            f"cannot open {shown}: no PostgreSQL server answers at {host}:{port} "
            f"({_first_line(exc)}); start it, or correct the host and port in the URL"
        )
    if state is not None:  # any other refusal of the server: its own words
        return DatabaseUnavailable(f"cannot open {shown}: {_first_line(exc)}")
    return None


def require_sqlite_file(url: URL) -> None:
    """For the read-only tools: an SQLite URL must name a file that exists (opening a
    missing one would create it, empty).

    :raises DatabaseUnavailable: the file does not exist.
    """
    if url.get_backend_name() != "sqlite":
        return
    path = sqlite_path(url)
    if path != ":memory:" and not Path(path).is_file():
        raise DatabaseUnavailable(
            f"there is no database at {display_url(url)}: the file does not exist "
            "(the server creates it at its first start; check --database or fibs.conf)"
        )
