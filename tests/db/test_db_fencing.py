"""A match table's fencing token (issue 32, item 4): a node takes a table by raising its
epoch, and a save or an end written with an older epoch is refused, nothing changed."""

from __future__ import annotations

import pytest

from db.errors import TableFencedError
from db.records import RatingUpdate, SavedEvents
from db.repository import Database

TABLE = "t-alice-bob"


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob"):
        await database.create_user(name, "h")
    return database


async def save(db: Database, epoch: int | None, snapshot: str, *, append: bool) -> None:
    events = [SavedEvents(1, 1 if append else 0, f"[{snapshot}]")]
    await db.save_match(
        TABLE,
        "alice",
        "bob",
        snapshot,
        match_length=5,
        score_a=1,
        score_b=0,
        events=events,
        append=append,
        epoch=epoch,
    )


async def end(db: Database, epoch: int) -> int:
    record = await db.record_finished_match(
        table_id=TABLE,
        player1="alice",
        player2="bob",
        match_length=5,
        score1=5,
        score2=0,
        winner="alice",
        started_at=0,
        rules="{}",
        moves="[]",
        rating_updates=[RatingUpdate("alice", 1510.0, 5), RatingUpdate("bob", 1490.0, 5)],
        epoch=epoch,
    )
    return record.id


async def test_each_claim_raises_the_epoch(users: Database) -> None:
    assert await users.claim_table(TABLE, "node-a") == 1
    assert await users.claim_table(TABLE, "node-b") == 2
    assert await users.claim_table("t-other", "node-a") == 1
    assert await users.claim_table(TABLE, "node-a") == 3


async def test_a_stale_owners_save_is_refused_and_changes_nothing(users: Database) -> None:
    old = await users.claim_table(TABLE, "node-a")
    await save(users, old, '"first"', append=False)
    new = await users.claim_table(TABLE, "node-b")
    with pytest.raises(TableFencedError) as refused:
        await save(users, old, '"stale"', append=True)
    assert (refused.value.table_id, refused.value.epoch) == (TABLE, old)
    with pytest.raises(TableFencedError):  # a first save (replacing) is fenced too
        await save(users, old, '"stale"', append=False)
    saved = await users.load_match("alice", "bob")
    assert saved is not None
    assert saved.snapshot == '"first"'
    assert [e.events for e in saved.events] == ['["first"]']
    await save(users, new, '"second"', append=True)  # the new owner writes
    saved = await users.load_match("alice", "bob")
    assert saved is not None and saved.snapshot == '"second"'
    assert len(saved.events) == 2


async def test_a_stale_owners_end_is_refused_and_changes_nothing(users: Database) -> None:
    old = await users.claim_table(TABLE, "node-a")
    await save(users, old, '"first"', append=False)
    new = await users.claim_table(TABLE, "node-b")
    with pytest.raises(TableFencedError):
        await end(users, old)
    assert await users.list_match_records("alice") == []
    alice = await users.get_user("alice")
    assert alice is not None and alice.experience == 0
    assert await users.load_match("alice", "bob") is not None
    record = await end(users, new)  # the owner ends it; the owner row goes with it
    assert [r.id for r in await users.list_match_records("alice")] == [record]
    assert await users.load_match("alice", "bob") is None
    with pytest.raises(TableFencedError):  # nobody owns an ended table
        await save(users, new, '"after"', append=True)
    assert await users.load_match("alice", "bob") is None


async def test_a_deleted_match_fences_its_table(users: Database) -> None:
    epoch = await users.claim_table(TABLE, "node-a")
    await save(users, epoch, '"first"', append=False)
    assert await users.delete_match(TABLE)
    with pytest.raises(TableFencedError):
        await save(users, epoch, '"again"', append=False)
    assert await users.load_match("alice", "bob") is None


async def test_no_epoch_is_not_checked(users: Database) -> None:
    """Callers that do not fence (tools, older tests) write as before."""
    await save(users, None, '"free"', append=False)
    saved = await users.load_match("alice", "bob")
    assert saved is not None and saved.snapshot == '"free"'


async def save_chouette(db: Database, epoch: int | None, snapshot: str, *players: str) -> None:
    await db.save_chouette("t-chouette", "alice", players, snapshot, epoch=epoch)


async def test_a_stale_owners_chouette_save_is_refused_and_changes_nothing(
    users: Database,
) -> None:
    """D439: a chouette's table is fenced like a match's; its deletion (nobody left at
    it) removes the owner row, so the old owner writes nothing after it either."""
    old = await users.claim_table("t-chouette", "node-a")
    await save_chouette(users, old, '"first"', "alice", "bob")
    new = await users.claim_table("t-chouette", "node-b")
    with pytest.raises(TableFencedError) as refused:
        await save_chouette(users, old, '"stale"', "alice")
    assert (refused.value.table_id, refused.value.epoch) == ("t-chouette", old)
    saved = await users.load_chouette_of("bob")
    assert saved is not None and saved.snapshot == '"first"'
    await save_chouette(users, new, '"second"', "alice", "bob")
    saved = await users.load_chouette_of("bob")
    assert saved is not None and saved.snapshot == '"second"'
    await save_chouette(users, new, '"left"')  # nobody left: deleted, and its owner row
    assert await users.load_chouette_of("alice") is None
    with pytest.raises(TableFencedError):
        await save_chouette(users, new, '"after"', "alice")
    assert await users.load_chouette_of("alice") is None
    await save_chouette(users, None, '"unfenced"', "alice")  # no epoch: not checked
    assert await users.load_chouette_of("alice") is not None
