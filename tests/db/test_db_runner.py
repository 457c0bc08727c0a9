"""The SQLite runner: one thread, whole jobs, group commit with a savepoint per job."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy import bindparam, insert, select, text

from db.engine import migrate_sqlite
from db.errors import ConstraintViolation, DatabaseError
from db.models import MessageRow, UserRow
from db.runner import SqliteRunner, Transaction

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
    """A job that holds the runner's thread until the test opens the gate."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()

    def __call__(self, tx: Transaction) -> None:
        self.entered.set()
        assert self.opened.wait(10), "the test never opened the gate"

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, 10)


async def test_waiting_writes_share_one_commit(runner: SqliteRunner, tmp_path: Path) -> None:
    gate = _Gate()
    first = asyncio.ensure_future(runner.write(gate))
    await gate.wait_entered()
    writes = [asyncio.ensure_future(runner.write(_add(f"u{i:02}"))) for i in range(20)]
    await asyncio.sleep(0)  # every write is queued behind the gate
    commits_before = runner.commits
    gate.opened.set()
    assert await asyncio.gather(*writes) == [f"u{i:02}" for i in range(20)]
    await first
    assert runner.commits - commits_before == 2  # the gate's batch, then all 20 together
    # Committed (on disk) before the callers were answered: another connection sees them.
    other = sqlite3.connect(tmp_path / "fibs.db")
    try:
        assert other.execute("SELECT count(*) FROM users").fetchone() == (20,)
    finally:
        other.close()


async def test_a_failing_job_is_rolled_back_alone(runner: SqliteRunner) -> None:
    gate = _Gate()
    first = asyncio.ensure_future(runner.write(gate))
    await gate.wait_entered()

    def half_then_fail(tx: Transaction) -> None:
        tx.execute(_ADD_USER, {"name": "half"})
        tx.execute(_ADD_MESSAGE, {"recipient": "nobody"})  # foreign key

    def plain_error(tx: Transaction) -> None:
        tx.execute(_ADD_USER, {"name": "also-half"})
        raise ValueError("refused")

    jobs: list[Callable[[Transaction], object]] = [
        _add("a"),
        half_then_fail,
        _add("b"),
        plain_error,
        _add("c"),
    ]
    futures = [asyncio.ensure_future(runner.write(job)) for job in jobs]
    await asyncio.sleep(0)
    gate.opened.set()
    await first
    results = await asyncio.gather(*futures, return_exceptions=True)
    assert results[0::2] == ["a", "b", "c"]
    assert isinstance(results[1], ConstraintViolation)
    assert isinstance(results[3], ValueError)
    names = await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["a", "b", "c"]


async def test_an_abandoned_job_that_has_not_started_is_skipped(runner: SqliteRunner) -> None:
    gate = _Gate()
    first = asyncio.ensure_future(runner.write(gate))
    await gate.wait_entered()
    abandoned = asyncio.ensure_future(runner.write(_add("skipped"), abandonable=True))
    kept = asyncio.ensure_future(runner.write(_add("kept")))
    await asyncio.sleep(0)
    abandoned.cancel()
    gate.opened.set()
    await first
    assert await kept == "kept"
    with pytest.raises(asyncio.CancelledError):
        await abandoned
    names = await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["kept"]


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

    # synchronous 2 is FULL; the busy timeout is in milliseconds.
    assert await runner.read(pragmas) == ["wal", 2, 1, 5000]
