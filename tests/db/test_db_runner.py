"""The runners: whole jobs, group commit, a failing job rolled back alone.

SQLite: one connection, the statements on the loop, the commits on one thread.
PostgreSQL: the same batches on a writer's own asyncpg connection (db/pgwriter.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import bindparam, insert, select, text

from db.engine import create_engine, migrate_engine, migrate_sqlite, normalize_url
from db.errors import ConstraintViolation, DatabaseError
from db.models import MessageRow, UserRow
from db.pgwriter import PgRunner
from db.runner import SqliteRunner, Transaction

if TYPE_CHECKING:
    from tests.conftest import DbTarget

_ADD_USER = insert(UserRow).values(
    name=bindparam("name"),
    password_hash="h",
    created_at=0,
    rating=1500.0,
    experience=0,
    toggles="{}",
    boardstyle=3,
    linelength=0,
    pagelength=0,
    sortwho="login",
    timezone="UTC",
    is_bot=False,
)
_ADD_MESSAGE = insert(MessageRow).values(
    recipient=bindparam("recipient"), sender="x", sent_at=0, text="t"
)
_NAMES = select(UserRow.name).order_by(UserRow.name)


@pytest.fixture
async def runner(tmp_path: Path) -> AsyncIterator[SqliteRunner]:
    runner = SqliteRunner(str(tmp_path / "fibs.db"), busy_timeout=5.0, prepare=migrate_sqlite)
    await runner.start()
    try:
        yield runner
    finally:
        await runner.close()


def _add(name: str) -> Callable[[Transaction], str]:
    def job(tx: Transaction) -> str:
        tx.execute(_ADD_USER, {"name": name})
        return name

    return job


class _Gate:
    """Holds the runner's commit thread until the test opens it: the batch whose commit
    waits behind the gate keeps the runner busy, so new jobs queue for the next batch."""

    def __init__(self, runner: SqliteRunner) -> None:
        self.opened = threading.Event()
        self.entered = threading.Event()
        runner._thread.submit(self._hold)

    def _hold(self) -> None:
        self.entered.set()
        assert self.opened.wait(10), "the test never opened the gate"

    def open(self) -> None:
        self.opened.set()


async def test_writes_waiting_together_share_one_commit(
    runner: SqliteRunner, tmp_path: Path
) -> None:
    commits_before = runner.commits
    names = [f"u{i:02}" for i in range(20)]
    assert await asyncio.gather(*(runner.write(_add(name)) for name in names)) == names
    assert runner.commits - commits_before == 1
    # Committed (on disk) before the callers were answered: another connection sees them.
    other = sqlite3.connect(tmp_path / "fibs.db")
    try:
        assert other.execute("SELECT count(*) FROM users").fetchone() == (20,)
    finally:
        other.close()


async def test_writes_made_during_a_commit_form_the_next_batch(runner: SqliteRunner) -> None:
    commits_before = runner.commits
    gate = _Gate(runner)
    first = asyncio.ensure_future(runner.write(_add("first")))
    await asyncio.sleep(0.05)  # its batch ran; its commit waits behind the gate
    later = [asyncio.ensure_future(runner.write(_add(f"u{i:02}"))) for i in range(20)]
    await asyncio.sleep(0.05)
    assert not first.done() and not any(write.done() for write in later)
    gate.open()
    assert await first == "first"
    assert await asyncio.gather(*later) == [f"u{i:02}" for i in range(20)]
    assert runner.commits - commits_before == 2


async def test_a_failing_job_is_rolled_back_alone(runner: SqliteRunner) -> None:
    await _check_a_failing_job_is_rolled_back_alone(runner)


async def _check_a_failing_job_is_rolled_back_alone(runner: SqliteRunner | PgRunner) -> None:
    """Five jobs in one batch, two failing: those two are undone, the others committed."""

    def half_then_fail(tx: Transaction) -> None:
        tx.execute(_ADD_USER, {"name": "half"})
        tx.execute(_ADD_MESSAGE, {"recipient": "nobody"})  # foreign key

    def plain_error(tx: Transaction) -> None:
        tx.execute(_ADD_USER, {"name": "also-half"})
        raise ValueError("refused")

    commits_before = runner.commits
    jobs: list[Callable[[Transaction], object]] = [
        _add("a"),
        half_then_fail,
        _add("b"),
        plain_error,
        _add("c"),
    ]
    results = await asyncio.gather(*(runner.write(job) for job in jobs), return_exceptions=True)
    assert runner.commits - commits_before == 1
    assert results[0::2] == ["a", "b", "c"]
    assert isinstance(results[1], ConstraintViolation)
    assert isinstance(results[3], ValueError)
    names = await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["a", "b", "c"]


async def test_an_abandoned_job_that_has_not_started_is_skipped(runner: SqliteRunner) -> None:
    gate = _Gate(runner)
    first = asyncio.ensure_future(runner.write(_add("first")))
    await asyncio.sleep(0.05)  # the runner is busy with its commit
    abandoned = asyncio.ensure_future(runner.write(_add("skipped"), abandonable=True))
    kept = asyncio.ensure_future(runner.write(_add("kept")))
    await asyncio.sleep(0)
    abandoned.cancel()
    gate.open()
    await first
    assert await kept == "kept"
    with pytest.raises(asyncio.CancelledError):
        await abandoned
    names = await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["first", "kept"]


async def test_a_write_waits_for_another_process_holding_the_lock(
    runner: SqliteRunner, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "fibs.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        write = asyncio.ensure_future(runner.write(_add("waited")))
        await asyncio.sleep(0.2)
        assert not write.done()  # waiting on the thread; the loop runs on
        other.execute("COMMIT")
        assert await asyncio.wait_for(write, 5) == "waited"
    finally:
        other.close()


async def test_close_finishes_queued_jobs_then_refuses(tmp_path: Path) -> None:
    runner = SqliteRunner(str(tmp_path / "x.db"), busy_timeout=5.0, prepare=migrate_sqlite)
    await runner.start()
    writes = [asyncio.ensure_future(runner.write(_add(f"u{i}"))) for i in range(5)]
    await asyncio.sleep(0)
    await runner.close()
    assert [await write for write in writes] == [f"u{i}" for i in range(5)]
    with pytest.raises(DatabaseError, match="closed"):
        await runner.read(lambda tx: tx.execute(_NAMES))


async def test_a_database_that_cannot_open_fails_at_start(tmp_path: Path) -> None:
    runner = SqliteRunner(str(tmp_path / "missing" / "x.db"), busy_timeout=1.0)
    with pytest.raises(sqlite3.OperationalError):
        await runner.start()


async def test_the_connection_is_durable_wal_with_foreign_keys(runner: SqliteRunner) -> None:
    def pragmas(tx: Transaction) -> list[object]:
        names = ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        return [tx.execute(text(f"PRAGMA {name}"))[0][0] for name in names]

    # synchronous 2 is FULL. The busy timeout is 0 on the loop: a locked database is
    # waited for on the thread (test_a_write_waits_for_another_process_holding_the_lock).
    assert await runner.read(pragmas) == ["wal", 2, 1, 0]


# -- the PostgreSQL runner (PgRunner): the same group commit on a writer's connection ------


async def _pg_runner(db_target: DbTarget, *, writers: int = 1, retry_seconds: float = 30.0) -> PgRunner:
    engine = create_engine(db_target.url, schema=db_target.schema)
    await migrate_engine(engine)
    runner = PgRunner(
        engine,
        normalize_url(db_target.url),
        schema=db_target.schema,
        writers=writers,
        retry_seconds=retry_seconds,
    )
    await runner.start()
    return runner


@pytest.fixture
async def pg_runner(db_target: DbTarget) -> AsyncIterator[PgRunner]:
    if db_target.backend != "postgresql":
        pytest.skip("the PostgreSQL runner")
    runner = await _pg_runner(db_target)
    try:
        yield runner
    finally:
        await runner.close()


async def test_postgresql_writes_waiting_together_share_one_commit(
    pg_runner: PgRunner,
) -> None:
    names = [f"u{i:02}" for i in range(20)]
    assert await asyncio.gather(*(pg_runner.write(_add(name)) for name in names)) == names
    assert pg_runner.commits == 1
    # Writes made while a batch runs form the next one.
    first = asyncio.ensure_future(pg_runner.write(_add("first")))
    await asyncio.sleep(0)
    later = [pg_runner.write(_add(f"v{i:02}")) for i in range(10)]
    await first
    assert await asyncio.gather(*later) == [f"v{i:02}" for i in range(10)]
    assert pg_runner.commits == 3
    names = await pg_runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert len(names) == 31


async def test_postgresql_a_failing_job_is_rolled_back_alone(pg_runner: PgRunner) -> None:
    await _check_a_failing_job_is_rolled_back_alone(pg_runner)


async def test_postgresql_a_cancelled_callers_write_still_commits(
    pg_runner: PgRunner,
) -> None:
    kept = asyncio.ensure_future(pg_runner.write(_add("kept")))
    abandoned = asyncio.ensure_future(pg_runner.write(_add("skipped"), abandonable=True))
    await asyncio.sleep(0)  # both queued; the writer has not started
    kept.cancel()
    abandoned.cancel()
    await pg_runner.write(_add("after"))
    for write in (kept, abandoned):
        with pytest.raises(asyncio.CancelledError):
            await write
    names = await pg_runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["after", "kept"]


async def test_postgresql_close_finishes_queued_jobs_then_refuses(db_target: DbTarget) -> None:
    if db_target.backend != "postgresql":
        pytest.skip("the PostgreSQL runner")
    runner = await _pg_runner(db_target)
    writes = [asyncio.ensure_future(runner.write(_add(f"u{i}"))) for i in range(5)]
    await asyncio.sleep(0)
    await runner.close()
    assert [await write for write in writes] == [f"u{i}" for i in range(5)]
    with pytest.raises(DatabaseError, match="closed"):
        await runner.write(_add("late"))
