"""Many coroutines writing at once: nothing is lost, nothing fails with "locked"."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from db.engine import POSTGRESQL_POOL_SIZE
from db.records import UserSettings
from db.repository import Database
from db.runner import Transaction
from tests.conftest import only_on

if TYPE_CHECKING:
    from tests.conftest import DbTarget

N = 40


async def test_concurrent_registrations(database: Database) -> None:
    await asyncio.gather(*(database.create_user(f"user{i}", f"h{i}") for i in range(N)))
    users = await asyncio.gather(*(database.get_user(f"user{i}") for i in range(N)))
    assert [user.password_hash if user else None for user in users] == [f"h{i}" for i in range(N)]


async def test_concurrent_messages_to_one_recipient(database: Database) -> None:
    await database.create_user("bob", "h")
    await asyncio.gather(
        *(database.store_message("bob", f"sender{i % 5}", f"text {i}") for i in range(N))
    )
    texts = {message.text for message in await database.messages_for("bob")}
    assert texts == {f"text {i}" for i in range(N)}


async def test_concurrent_updates_of_different_fields_of_one_user(database: Database) -> None:
    await database.create_user("alice", "old")
    for name in ("g1", "g2", "g3"):
        await database.create_user(name, "h")
    settings = UserSettings(boardstyle=1, timezone="Asia/Tokyo")
    await asyncio.gather(
        database.update_login("alice", "host.example", at=10),
        database.update_logout("alice", at=20),
        database.save_settings("alice", {"ready": True}, settings),
        database.set_password_hash("alice", "new"),
        database.update_rating("alice", 1600.0, 60),
        database.set_address("alice", "a@b.c"),
        database.add_gag("alice", "g1"),
        database.add_gag("alice", "g2"),
        database.add_blind("alice", "g3"),
        database.store_message("alice", "g1", "hi"),
    )
    user = await database.get_user("alice")
    assert user is not None
    assert (user.last_login_at, user.last_login_host, user.last_logout_at) == (
        10,
        "host.example",
        20,
    )
    assert (user.password_hash, user.rating, user.experience) == ("new", 1600.0, 60)
    assert (user.settings, dict(user.toggles), user.address) == (settings, {"ready": True}, "a@b.c")
    assert set(user.gagged) == {"g1", "g2"} and user.blinded == ("g3",)
    assert await database.count_messages("alice") == 1


async def test_concurrent_saved_matches_and_records(database: Database) -> None:
    names = [f"p{i}" for i in range(10)]
    for name in names:
        await database.create_user(name, "h")
    pairs = [(a, b) for a in names for b in names if a < b]
    await asyncio.gather(
        *(
            database.save_match(
                f"t-{a}-{b}", a, b, f'"{a}-{b}"', match_length=3, score_a=1, score_b=2
            )
            for a, b in pairs
        ),
        *(
            database.record_finished_match(
                table_id=f"r-{a}-{b}",
                player1=a,
                player2=b,
                match_length=1,
                score1=1,
                score2=0,
                winner=a,
                started_at=0,
                rules="{}",
                moves="[]",
                delete_saved=False,
            )
            for a, b in pairs[:15]
        ),
    )
    for name in names:
        assert await database.count_saved_matches(name) == len(names) - 1
    for a, b in pairs:
        match = await database.load_match(b, a)
        assert match is not None and match.snapshot == f'"{a}-{b}"'
    total = 0
    for name in names:
        total += len(await database.list_match_records(name))
    assert total == 2 * 15


async def test_two_databases_on_one_file_both_write(db_target: DbTarget) -> None:
    """Two engines (as two server processes would be) writing at the same time."""
    first, second = await db_target.open(), await db_target.open()
    try:
        await first.create_user("bob", "h")
        await asyncio.gather(
            *(first.store_message("bob", "first", str(i)) for i in range(N)),
            *(second.store_message("bob", "second", str(i)) for i in range(N)),
            *(first.create_user(f"a{i}", "h") for i in range(N // 4)),
            *(second.create_user(f"b{i}", "h") for i in range(N // 4)),
        )
        assert await second.count_messages("bob") == 2 * N
        assert len(await first.messages_for("bob")) == 2 * N
        for i in range(N // 4):
            assert await second.user_exists(f"a{i}") and await first.user_exists(f"b{i}")
    finally:
        await first.close()
        await second.close()


async def test_in_memory_sqlite_serializes_every_session() -> None:
    """``sqlite+aiosqlite://`` keeps one shared connection; concurrent use must not mix."""
    async with await Database.open("sqlite+aiosqlite://") as database:
        await database.create_user("bob", "h")
        await asyncio.gather(
            *(database.store_message("bob", "x", str(i)) for i in range(N)),
            *(database.create_user(f"u{i}", "h") for i in range(N // 4)),
            *(database.get_user("bob") for _ in range(N // 4)),
            *(database.count_messages("bob") for _ in range(N // 4)),
        )
        assert len(await database.messages_for("bob")) == N
        assert all([await database.user_exists(f"u{i}") for i in range(N // 4)])


async def test_a_cancelled_caller_does_not_abort_its_write(db_target: DbTarget) -> None:
    """E.g. the connection task of a player who dropped, cancelled while saving the match."""
    database = await db_target.open()
    await database.create_user("alice", "h")
    await database.create_user("bob", "h")
    caller = asyncio.create_task(
        database.save_match(
            "t-alice-bob", "alice", "bob", "[42]", match_length=3, score_a=1, score_b=0
        )
    )
    await asyncio.sleep(0)  # the write has started
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await database.close()  # waits for the write in flight

    reopened = await db_target.open()
    try:
        saved = await reopened.load_match("bob", "alice")
        assert saved is not None and saved.snapshot == "[42]"
    finally:
        await reopened.close()


@pytest.mark.logs_errors
async def test_a_failed_write_without_caller_is_logged(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    await database.create_user("alice", "h")
    caller = asyncio.create_task(
        database.save_match(
            "t-alice-ghost", "alice", "ghost", "[]", match_length=1, score_a=0, score_b=0
        )
    )
    await asyncio.sleep(0)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    with caplog.at_level(logging.ERROR, logger="db.runner"):
        await database.close()
        await asyncio.sleep(0)  # done callbacks run on the next loop iteration
    assert [r.message for r in caplog.records] == ["a write failed after its caller was cancelled"]


async def test_postgresql_keeps_its_read_connections_under_load(
    database: Database, db_target: DbTarget
) -> None:
    """Bursts of more reads than connections reuse the pool's connections: none is closed
    and opened again, and never more than the pool's size are open (docs/database.md)."""
    only_on("postgresql", db_target, "PostgreSQL's connection pool")
    backends: set[int] = set()

    def job(tx: Transaction) -> None:
        ((pid, _),) = tx.execute(text("SELECT pg_backend_pid(), pg_sleep(0.01)"))
        backends.add(pid)

    for _ in range(3):
        await asyncio.gather(*(database._runner.read(job) for _ in range(3 * POSTGRESQL_POOL_SIZE)))
    assert 1 <= len(backends) <= POSTGRESQL_POOL_SIZE
