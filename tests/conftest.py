"""Fixtures shared by the test packages: databases on SQLite, and on PostgreSQL when asked.

Set ``FIBS_TEST_DATABASE_URL`` (e.g. ``postgresql+asyncpg://postgres@127.0.0.1:5432/test``)
to run each database-backed test a second time on PostgreSQL. Each PostgreSQL run gets a
fresh schema that is dropped afterwards, so runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Final

import asyncpg
import pytest
import uvloop
from sqlalchemy import text
from sqlalchemy.engine import make_url

from db.engine import create_engine
from db.repository import Database

PG_URL_VARIABLE = "FIBS_TEST_DATABASE_URL"
EVENT_LOOP_VARIABLE = "FIBS_TEST_EVENT_LOOP"
"""``asyncio`` runs the tests on the standard library's event loop; by default they run
on uvloop, the server's default ([server] event_loop, docs/server.md)."""

GNUBG_MISSING: Final = (
    "GNU Backgammon is not installed (no gnubg on PATH or at /usr/games/gnubg); "
    "install it (Debian/Ubuntu: apt-get install gnubg) to run this test"
)
"""The skip reason of every test that needs the gnubg program."""


BOTH_EVENT_LOOPS: Final = frozenset(
    {"test_telnet_input.py", "test_input_flow.py", "test_broadcast.py", "test_abuse.py"}
)
"""The tests of the telnet transport's reading, flow control and writing, which run on
both event loops (their names end in ``[uvloop]`` and ``[asyncio]``)."""


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """The event loop of every test (pytest-asyncio's hook): the one the server runs on
    by default, uvloop, unless :data:`EVENT_LOOP_VARIABLE` asks for asyncio's; both for
    :data:`BOTH_EVENT_LOOPS`."""
    chosen = os.environ.get(EVENT_LOOP_VARIABLE, "uvloop")
    if item.path.name in BOTH_EVENT_LOOPS and chosen != "asyncio":
        return {"uvloop": uvloop.new_event_loop, "asyncio": asyncio.new_event_loop}
    if chosen == "asyncio":
        return {"asyncio": asyncio.new_event_loop}
    return {"uvloop": uvloop.new_event_loop}


def only_on(backend: str, target: DbTarget, what: str) -> None:
    """Skip unless ``target`` is on ``backend`` (``"sqlite"`` or ``"postgresql"``),
    saying why and, for PostgreSQL, how to run it."""
    if target.backend == backend:
        return
    if backend == "sqlite":
        pytest.skip(f"{what}: SQLite only (this is the PostgreSQL run)")
    if os.environ.get(PG_URL_VARIABLE):
        pytest.skip(f"{what}: PostgreSQL only (this is the SQLite run)")
    pytest.skip(
        f"{what}: PostgreSQL only; set {PG_URL_VARIABLE}=postgresql+asyncpg://USER@HOST:PORT/DB "
        "to run it (README, 'Tests')"
    )


START_TIME = 1_700_000_000
"""The fake clock's first reading (2023-11-14 22:13:20 UTC)."""


class FakeClock:
    """A clock the test moves by hand, so every stored timestamp is known."""

    def __init__(self, now: float = START_TIME) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock forward."""
        self.now += seconds


@dataclasses.dataclass(frozen=True)
class DbTarget:
    """Where one test's database lives: enough to open it again (restart tests)."""

    backend: str
    url: str
    schema: str | None = None

    async def open(self, *, clock: FakeClock | None = None, migrate: bool = True) -> Database:
        """Open (and by default migrate) a :class:`Database` on this target."""
        return await Database.open(
            self.url, schema=self.schema, migrate=migrate, clock=clock or FakeClock()
        )


def _backends() -> list[str]:
    return ["sqlite", "postgresql"] if os.environ.get(PG_URL_VARIABLE) else ["sqlite"]


@pytest.fixture(params=_backends())
async def db_target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[DbTarget]:
    """An empty database: an SQLite file, or a fresh PostgreSQL schema dropped afterwards."""
    backend: str = request.param
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("db") / "fibs.db"
        yield DbTarget(backend, f"sqlite+aiosqlite:///{path}")
        return
    url = os.environ[PG_URL_VARIABLE]
    schema = f"FibsTest_{uuid.uuid4().hex}"  # mixed case: names are quoted
    admin = create_engine(url)
    try:
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        yield DbTarget(backend, url, schema)
    finally:
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        await admin.dispose()


async def _admin_connection(url: str) -> asyncpg.Connection:
    """A plain asyncpg connection to the database of a PostgreSQL ``url``."""
    parsed = make_url(url)
    return await asyncpg.connect(
        host=parsed.host,
        port=parsed.port,
        user=parsed.username,
        password=parsed.password,
        database=parsed.database,
        timeout=10,
    )


@contextlib.asynccontextmanager
async def postgres_database(url: str) -> AsyncIterator[str]:
    """A new, empty database on the PostgreSQL server of ``url``, dropped afterwards
    (with any connection still open to it); its URL (for a server, whose URL names a
    database, not a schema)."""
    name = f"fibs_test_{uuid.uuid4().hex[:16]}"
    admin = await _admin_connection(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(url).set(database=name).render_as_string(hide_password=False)
        finally:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def terminate_backends(url: str, where: str = "datname = current_database()") -> int:
    """``pg_terminate_backend`` every other connection to the PostgreSQL server of
    ``url`` that matches the SQL condition ``where`` on ``pg_stat_activity`` (by default:
    those to the URL's database), once they have ended; how many there were."""
    admin = await _admin_connection(url)
    try:
        terminated = await admin.fetch(
            # With a timeout, each call returns once its backend has ended.
            "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
            f"WHERE pid <> pg_backend_pid() AND ({where})"
        )
    finally:
        await admin.close()
    return len(terminated)


@pytest.fixture
def clock() -> FakeClock:
    """The clock the ``database`` fixture uses."""
    return FakeClock()


@pytest.fixture(autouse=True)
def no_error_logs(
    caplog: pytest.LogCaptureFixture, request: pytest.FixtureRequest
) -> Iterator[None]:
    """Fail a test that logged at ERROR or above, unless it is marked ``logs_errors``."""
    yield
    if request.node.get_closest_marker("logs_errors"):
        return
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR]
    assert not errors, [f"{r.name}: {r.getMessage()}" for r in errors]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """With tests in parallel (pytest-xdist, the README's command), a test marked
    ``alone`` runs while no other test does, and the others wait for it: the tests whose
    assertions hold a time limit (a stop within 2 s, a login within 1 s) measure the
    server, not the tests beside it on the machine's two cores; and a test that would
    make others fail (a PostgreSQL tablespace filled to its last byte fails every
    checkpoint of the server, so every other test's CREATE or DROP DATABASE) runs with
    none beside it.

    The lock is held around a test's whole run, its module's and session's fixtures
    included (an autouse fixture would leave out those of a wider scope: a worker
    starting the next module's servers beside an ``alone`` test made a SIGTERM take
    2.7 s). A readers-writer lock on two files every worker sees (the parent of each
    worker's ``--basetemp``, which xdist sets): every test takes ``alone.lock`` shared,
    an ``alone`` test exclusively; a test that waits for it holds ``alone.turnstile``,
    through which every test passes first, so the others cannot keep it waiting for
    ever."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    shared = Path(item.config.option.basetemp).parent  # pytest-N, above each popen-gwK
    with (
        open(shared / "alone.turnstile", "a") as turnstile,
        open(shared / "alone.lock", "a") as lock,
    ):
        if item.get_closest_marker("alone") is not None:
            fcntl.flock(turnstile, fcntl.LOCK_EX)
            fcntl.flock(lock, fcntl.LOCK_EX)
        else:
            fcntl.flock(turnstile, fcntl.LOCK_EX)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
