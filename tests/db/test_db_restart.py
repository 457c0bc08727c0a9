"""Close the database and open it again (a server restart): everything is still there."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from db.records import RatingUpdate, UserSettings

if TYPE_CHECKING:
    from tests.conftest import DbTarget, FakeClock


async def test_everything_survives_a_restart(db_target: DbTarget, clock: FakeClock) -> None:
    settings = UserSettings(boardstyle=2, redoubles=3, sortwho="name", timezone="Europe/Sofia")
    before = await db_target.open(clock=clock)
    try:
        await before.create_user("alice", "hash-a", toggles={"ready": True, "notify": False})
        await before.create_user("bob", "hash-b", is_bot=True)
        await before.update_login("alice", "10.0.0.1")
        await before.save_settings("alice", {"ready": True, "bell": True}, settings)
        await before.set_address("alice", "alice@example.org")
        await before.add_gag("alice", "bob")
        await before.add_blind("bob", "alice")
        await before.store_message("alice", "bob", "see you")
        await before.save_match(
            "t-alice-bob", "alice", "bob", '{"turn": "bob"}', match_length=7, score_a=2, score_b=5
        )
        record = await before.record_finished_match(
            table_id="t-alice-bob",
            player1="bob",
            player2="alice",
            match_length=1,
            score1=1,
            score2=0,
            winner="bob",
            started_at=clock.now - 300,
            rules="{}",
            moves="[[1]]",
            rating_updates=[RatingUpdate("bob", 1510.0, 1), RatingUpdate("alice", 1490.0, 1)],
            delete_saved=False,
        )
        alice_before = await before.get_user("alice")
        bob_before = await before.get_user("bob")
        saved_before = await before.load_match("bob", "alice")
    finally:
        await before.close()

    after = await db_target.open()
    try:
        assert await after.get_user("alice") == alice_before
        assert await after.get_user("bob") == bob_before
        assert await after.load_match("alice", "bob") == saved_before
        assert await after.get_match_record(record.id) == record
        stored = await after.messages_for("alice")
        assert [m.text for m in stored] == ["see you"]
        await after.delete_messages("alice", [m.id for m in stored])
    finally:
        await after.close()

    again = await db_target.open()
    try:
        assert await again.messages_for("alice") == []
    finally:
        await again.close()


async def test_close_twice_is_harmless(db_target: DbTarget) -> None:
    database = await db_target.open()
    await database.close()
    await database.close()
    async with await db_target.open() as database:
        assert await database.user_exists("anyone") is False


_WRITER = """
import asyncio, sys, time
from db.repository import Database

async def main() -> None:
    database = await Database.open(sys.argv[1], schema=sys.argv[2] or None)
    await database.create_user("alice", "h")
    for index in range(5):
        await database.store_message("alice", "bob", str(index))
    print("committed", flush=True)
    time.sleep(60)  # killed here, connections still open, no clean shutdown

asyncio.run(main())
"""


async def test_a_killed_process_loses_nothing_it_committed(db_target: DbTarget) -> None:
    """SIGKILL right after the awaited writes returned: a new process finds them all."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _WRITER,
        db_target.url,
        db_target.schema or "",
        cwd=Path(__file__).resolve().parents[2],
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), timeout=30)
        assert line == b"committed\n"
    finally:
        process.kill()
        await process.wait()
    database = await db_target.open()
    try:
        assert await database.user_exists("alice")
        assert [m.text for m in await database.messages_for("alice")] == list("01234")
    finally:
        await database.close()
