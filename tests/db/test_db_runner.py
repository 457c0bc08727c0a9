"""The runners: whole jobs, group commit, a failing job rolled back alone.

SQLite: one connection, the statements on the loop, the commits on one thread.
PostgreSQL: the same batches on a writer's own asyncpg connection (db/pgwriter.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import bindparam, insert, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from db.engine import create_engine, migrate_engine, migrate_sqlite, normalize_url
from db.errors import ConstraintViolation, DatabaseError
from db.models import MessageRow, UserRow
from db.pgwriter import PgRunner, _PgTransaction, _trips, _Write
from db.runner import SqliteRunner, Transaction
from tests.conftest import DbTarget, only_on, postgres_database, terminate_backends

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


async def test_a_cancelled_read_that_has_not_started_is_skipped(runner: SqliteRunner) -> None:
    """A read whose caller is gone is not run; a write whose caller is gone is."""
    gate = _Gate(runner)
    first = asyncio.ensure_future(runner.write(_add("first")))
    await asyncio.sleep(0.05)  # the runner is busy with its commit
    ran: list[str] = []
    abandoned = asyncio.ensure_future(runner.read(lambda tx: ran.append("read")))
    kept = asyncio.ensure_future(runner.write(_add("kept")))
    await asyncio.sleep(0)
    abandoned.cancel()
    kept.cancel()
    gate.open()
    await first
    for cancelled in (abandoned, kept):
        with pytest.raises(asyncio.CancelledError):
            await cancelled
    names = await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["first", "kept"] and ran == []


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
        names = (
            "journal_mode",
            "synchronous",
            "foreign_keys",
            "busy_timeout",
            "journal_size_limit",
        )
        return [tx.execute(text(f"PRAGMA {name}"))[0][0] for name in names]

    # synchronous 2 is FULL. The busy timeout is 0 on the loop: a locked database is
    # waited for on the thread (test_a_write_waits_for_another_process_holding_the_lock).
    # The WAL is cut back to 4 MB after each checkpoint (D302).
    assert await runner.read(pragmas) == ["wal", 2, 1, 0, 4 * 1024 * 1024]


# -- the PostgreSQL runner (PgRunner): the same group commit on a writer's connection ------


async def _pg_runner(
    db_target: DbTarget, *, writers: int = 1, retry_seconds: float = 30.0
) -> PgRunner:
    engine = create_engine(db_target.url, schema=db_target.schema)
    await migrate_engine(engine)
    await engine.dispose()
    runner = PgRunner(
        normalize_url(db_target.url),
        schema=db_target.schema,
        writers=writers,
        retry_seconds=retry_seconds,
    )
    await runner.start()
    return runner


@pytest.fixture
async def pg_runner(db_target: DbTarget) -> AsyncIterator[PgRunner]:
    only_on("postgresql", db_target, "the PostgreSQL runner")
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
    await asyncio.sleep(0)  # queued; the writer has not started
    kept.cancel()
    await pg_runner.write(_add("after"))
    with pytest.raises(asyncio.CancelledError):
        await kept
    names = await pg_runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])
    assert names == ["after", "kept"]


async def test_postgresql_close_finishes_queued_jobs_then_refuses(db_target: DbTarget) -> None:
    only_on("postgresql", db_target, "the PostgreSQL runner")
    runner = await _pg_runner(db_target)
    writes = [asyncio.ensure_future(runner.write(_add(f"u{i}"))) for i in range(5)]
    await asyncio.sleep(0)
    await runner.close()
    assert [await write for write in writes] == [f"u{i}" for i in range(5)]
    with pytest.raises(DatabaseError, match="closed"):
        await runner.write(_add("late"))


# -- the PostgreSQL writer: single statements, several writers, failures that are not the job's


_SET_RATING = text("UPDATE users SET rating = :rating WHERE name = :name")


async def _names(runner: PgRunner) -> list[str]:
    return await runner.read(lambda tx: [name for (name,) in tx.execute(_NAMES)])


async def test_postgresql_single_statements_of_a_batch_go_together(pg_runner: PgRunner) -> None:
    """Consecutive single statements of a batch are one ``executemany``; jobs between
    them run in order; a failing one is undone alone and its caller alone is told."""
    commits_before = pg_runner.commits
    writes = [
        *(pg_runner.write_statement(_ADD_USER, {"name": f"s{i}"}) for i in range(5)),
        pg_runner.write(_add("job")),
        pg_runner.write_statement(_ADD_MESSAGE, {"recipient": "s1"}),
        pg_runner.write_statement(_ADD_MESSAGE, {"recipient": "nobody"}),  # foreign key
        pg_runner.write_statement(_ADD_MESSAGE, {"recipient": "job"}),
    ]
    results = await asyncio.gather(*writes, return_exceptions=True)
    assert results[:7] == [None] * 5 + ["job", None]
    assert isinstance(results[7], ConstraintViolation)
    assert results[8] is None
    assert pg_runner.commits - commits_before == 1
    assert await _names(pg_runner) == ["job", "s0", "s1", "s2", "s3", "s4"]
    recipients = select(MessageRow.recipient).order_by(MessageRow.recipient)
    stored = await pg_runner.read(lambda tx: [r for (r,) in tx.execute(recipients)])
    assert stored == ["job", "s1"]


async def test_postgresql_several_writers_keep_each_keys_order(db_target: DbTarget) -> None:
    only_on("postgresql", db_target, "the PostgreSQL runner")
    runner = await _pg_runner(db_target, writers=3)
    try:
        names = [f"k{i}" for i in range(6)]
        await asyncio.gather(*(runner.write(_add(name), key=name) for name in names))
        # Each user's ratings in order, all keys at once: the last one submitted stays.
        writes = [
            runner.write_statement(_SET_RATING, {"name": name, "rating": float(step)}, key=name)
            for step in range(10)
            for name in names
        ]
        await asyncio.gather(*writes)
        ratings = select(UserRow.rating).order_by(UserRow.name)
        stored = await runner.read(lambda tx: [r for (r,) in tx.execute(ratings)])
        assert stored == [9.0] * 6
        assert runner.commits >= 3  # the writers committed separately
    finally:
        await runner.close()


async def test_postgresql_reads_go_on_after_their_connections_are_terminated(
    db_target: DbTarget,
) -> None:
    """The reads' connections are terminated (as by a restart of PostgreSQL): the reads
    that follow, at once and together, all succeed on new connections. On a database of
    the test's own, so that only this runner's readers are cut (tests run in parallel)."""
    only_on("postgresql", db_target, "the PostgreSQL runner")
    async with postgres_database(db_target.url) as own:
        runner = await _pg_runner(DbTarget("postgresql", own))
        try:
            await runner.write(_add("before"))
            await asyncio.gather(*(_names(runner) for _ in range(4)))
            name = make_url(own).database
            readers = f"datname = '{name}' AND application_name = 'fibs-reader'"
            assert await terminate_backends(db_target.url, readers) >= 1
            results = await asyncio.gather(*(_names(runner) for _ in range(20)))
            assert results == [["before"]] * 20
        finally:
            await runner.close()


async def test_postgresql_a_read_on_a_broken_connection_runs_once_more(
    pg_runner: PgRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read whose connection turns out broken is run again on another one; if that
    one is broken too, the read fails with a :class:`DatabaseError`."""
    await pg_runner.write(_add("before"))
    original = _PgTransaction.execute
    breaks = 1

    def execute(self: _PgTransaction, *args: Any) -> list[tuple[Any, ...]]:
        nonlocal breaks
        if breaks:
            breaks -= 1
            raise asyncpg.ConnectionDoesNotExistError("connection was closed")
        return original(self, *args)

    monkeypatch.setattr(_PgTransaction, "execute", execute)
    assert await _names(pg_runner) == ["before"]
    breaks = 2
    with pytest.raises(DatabaseError, match="cannot be reached"):
        await _names(pg_runner)
    assert await _names(pg_runner) == ["before"]


async def test_postgresql_a_lost_connection_is_opened_again(pg_runner: PgRunner) -> None:
    """The writer's connection is terminated (as by a restart of PostgreSQL): the writes
    that follow run on a new one, none of them fails."""
    await pg_runner.write(_add("before"))
    writer = pg_runner._writers[0]
    assert writer.connection is not None
    pid = writer.connection.get_server_pid()
    url = os.environ["FIBS_TEST_DATABASE_URL"]
    assert await terminate_backends(url, f"pid = {pid}") == 1
    await asyncio.sleep(0.1)
    results = await asyncio.gather(*(pg_runner.write(_add(f"u{i}")) for i in range(10)))
    assert results == [f"u{i}" for i in range(10)]
    assert await _names(pg_runner) == ["before", *results]
    assert pg_runner.figures.reconnects == 1
    assert writer.connection is not None and writer.connection.get_server_pid() != pid


@pytest.mark.logs_errors
async def test_postgresql_writes_fail_only_while_the_database_cannot_be_reached() -> None:
    """No connection can be made (the database refuses them): after ``retry_seconds``
    the batch's callers get an error and nothing of it is stored; once connections are
    allowed again, writes go on."""
    url = os.environ.get("FIBS_TEST_DATABASE_URL")
    if not url:
        pytest.skip("the PostgreSQL runner")
    async with postgres_database(url) as own:
        name = make_url(own).database
        engine = create_engine(own)
        await migrate_engine(engine)
        await engine.dispose()
        runner = PgRunner(normalize_url(own), retry_seconds=0.5)
        await runner.start()
        try:
            await runner.write(_add("before"))
            admin = create_engine(url).execution_options(isolation_level="AUTOCOMMIT")
            try:
                async with admin.connect() as connection:
                    await connection.execute(
                        text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
                    )
                    await terminate_backends(url, f"datname = '{name}'")
                    with pytest.raises(DatabaseError, match="not committed"):
                        await runner.write(_add("lost"))
                    await connection.execute(
                        text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
                    )
            finally:
                await admin.dispose()
            assert await runner.write(_add("after")) == "after"
            assert await _names(runner) == ["after", "before"]
        finally:
            await runner.close()


async def test_postgresql_a_deadlocked_batch_is_run_again(pg_runner: PgRunner) -> None:
    """The writer's batch and another transaction lock two users in opposite orders:
    PostgreSQL aborts the writer's (its wait began first), and the writer runs the batch
    again after the other commits: its caller sees no error."""
    await pg_runner.write(_add("a"))
    await pg_runner.write(_add("b"))
    url = os.environ["FIBS_TEST_DATABASE_URL"]
    other = create_engine(url, schema=_schema(pg_runner))
    try:
        async with other.connect() as connection:
            await connection.execute(text("SET deadlock_timeout = '20s'"))  # not the victim
            await connection.execute(_SET_RATING, {"name": "a", "rating": 1.0})

            def b_then_a(tx: Transaction) -> None:
                tx.execute(_SET_RATING, {"name": "b", "rating": 2.0})
                tx.execute(_SET_RATING, {"name": "a", "rating": 2.0})

            write = asyncio.ensure_future(pg_runner.write(b_then_a))
            await _wait_for_a_lock(connection)
            await connection.execute(_SET_RATING, {"name": "b", "rating": 1.0})
            await connection.commit()
        await asyncio.wait_for(write, 30)
    finally:
        await other.dispose()
    assert pg_runner.figures.retries == 1
    ratings = select(UserRow.rating).order_by(UserRow.name)
    assert await pg_runner.read(lambda tx: [r for (r,) in tx.execute(ratings)]) == [2.0, 2.0]


def _schema(runner: PgRunner) -> str | None:
    return runner._schema


async def _wait_for_a_lock(connection: AsyncConnection) -> None:
    """Until some other connection waits for a lock."""
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
        "AND datname = current_database()"
    )
    async with asyncio.timeout(10):
        while not (await connection.execute(waiting)).scalar():
            await asyncio.sleep(0.02)


async def test_postgresql_figures_are_logged_after_writes_only(
    pg_runner: PgRunner, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="db.pgwriter")
    pg_runner.report()  # nothing written yet: nothing to say
    assert not caplog.records
    await asyncio.gather(*(pg_runner.write(_add(f"u{i}")) for i in range(4)))
    pg_runner.report()
    (record,) = caplog.records
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith("postgresql: 4 writes in 1 batches (4.0 a batch")
    assert "pool 16 connections" in record.getMessage()
    pg_runner.report()  # nothing since
    assert len(caplog.records) == 1


async def test_postgresql_trips_keep_each_keys_order() -> None:
    """A batch of replayable single statements runs as one trip per statement, unless a
    key's writes would fall into two trips: then each run of one statement is a trip;
    a batch with anything else is one transaction (``db.pgwriter._trips``)."""
    loop = asyncio.get_running_loop()
    save, end, other = text("SELECT 1"), text("SELECT 2"), text("SELECT 3")

    def write(statement: Any, key: str, *, replay: bool = True) -> _Write:
        return _Write(
            _add("x"),
            loop.create_future(),
            True,
            statement=statement,
            replay=statement if replay else None,
            key=key,
        )

    a, b, c, d = write(save, "ab"), write(end, "cd"), write(save, "ef"), write(end, "gh")
    assert _trips([a, b, c, d]) == [[a, c], [b, d]]
    again = write(end, "ab")  # the pair "ab" again, with the other statement
    assert _trips([a, b, c, again]) == [[a], [b], [c], [again]]
    plain = write(other, "ij", replay=False)
    assert _trips([a, plain, c]) == [[a, plain, c]]
    assert _trips([a]) == [[a]]
