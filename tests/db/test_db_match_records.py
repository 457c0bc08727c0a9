"""Finished match records, and finishing a match atomically with its rating changes."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import asyncpg
import pytest

from db.errors import StaleRatingError, UnknownUserError
from db.records import MatchRecord, RatingUpdate
from db.repository import Database

if TYPE_CHECKING:
    from tests.conftest import FakeClock

RULES = json.dumps({"crawford": True, "jacoby": False, "beavers": True})
MOVES = json.dumps(
    [{"game": 1, "actions": [["alice", [3, 1], "8-5 6-5"], ["bob", "double"], ["alice", "take"]]}]
)


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob", "carol"):
        await database.create_user(name, "h")
    return database


async def test_record_round_trip(users: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    clock.advance(600)
    record = await users.record_finished_match(
        table_id="t-alice-bob",
        player1="alice",
        player2="bob",
        match_length=3,
        score1=3,
        score2=1,
        winner="alice",
        started_at=start,
        rules=RULES,
        moves=MOVES,
    )
    assert record == MatchRecord(
        id=record.id,
        table_id="t-alice-bob",
        player1="alice",
        player2="bob",
        match_length=3,
        score1=3,
        score2=1,
        winner="alice",
        started_at=start,
        ended_at=start + 600,
        rules=RULES,
        moves=MOVES,
    )
    assert await users.get_match_record(record.id) == record
    assert await users.get_match_record(record.id + 1000) is None


async def test_records_are_listed_newest_first(users: Database) -> None:
    ids = []
    for ended, (player1, player2) in enumerate(
        [("alice", "bob"), ("carol", "alice"), ("bob", "carol"), ("alice", "carol")]
    ):
        record = await users.record_finished_match(
            table_id=f"t-{ended}",
            player1=player1,
            player2=player2,
            match_length=None,
            score1=0,
            score2=1,
            winner=player2,
            started_at=0,
            ended_at=100 + ended,
            rules="{}",
            moves="[]",
        )
        ids.append(record.id)
    assert [r.id for r in await users.list_match_records("alice")] == [ids[3], ids[1], ids[0]]
    assert [r.id for r in await users.list_match_records("alice", limit=2)] == [ids[3], ids[1]]
    assert [r.id for r in await users.list_match_records("bob")] == [ids[2], ids[0]]
    assert await users.list_match_records("nobody") == []


async def test_finishing_updates_ratings_and_drops_the_saved_match(
    users: Database, clock: FakeClock
) -> None:
    start = int(clock.now)
    await users.save_match(
        "t-alice-bob", "bob", "alice", "{}", match_length=5, score_a=4, score_b=4
    )
    await users.save_match(
        "t-alice-carol", "alice", "carol", "{}", match_length=5, score_a=0, score_b=0
    )
    await users.record_finished_match(
        table_id="t-alice-bob",
        player1="alice",
        player2="bob",
        match_length=5,
        score1=5,
        score2=4,
        winner="alice",
        started_at=start,
        rules=RULES,
        moves=MOVES,
        rating_updates=[
            RatingUpdate("alice", 1522.360679774998, 5),
            RatingUpdate("bob", 1477.639320225002, 5),
        ],
    )
    alice, bob = await users.get_user("alice"), await users.get_user("bob")
    assert alice is not None and (alice.rating, alice.experience) == (1522.360679774998, 5)
    assert bob is not None and (bob.rating, bob.experience) == (1477.639320225002, 5)
    assert await users.load_match("alice", "bob") is None
    assert await users.load_match("alice", "carol") is not None


async def test_saved_match_can_be_kept(users: Database) -> None:
    await users.save_match(
        "t-alice-bob", "bob", "alice", "{}", match_length=5, score_a=4, score_b=4
    )
    await users.record_finished_match(
        table_id="t-alice-bob",
        player1="alice",
        player2="bob",
        match_length=1,
        score1=1,
        score2=0,
        winner="alice",
        started_at=0,
        rules="{}",
        moves="[]",
        delete_saved=False,
    )
    assert await users.load_match("alice", "bob") is not None


async def test_a_failed_finish_stores_nothing(users: Database) -> None:
    await users.save_match(
        "t-alice-bob", "bob", "alice", "{}", match_length=5, score_a=4, score_b=4
    )
    with pytest.raises(UnknownUserError) as caught:
        await users.record_finished_match(
            table_id="t-alice-bob",
            player1="alice",
            player2="bob",
            match_length=5,
            score1=5,
            score2=4,
            winner="alice",
            started_at=0,
            rules="{}",
            moves="[]",
            rating_updates=[RatingUpdate("alice", 1600.0, 5), RatingUpdate("ghost", 1400.0, 5)],
        )
    assert caught.value.name == "ghost"
    alice = await users.get_user("alice")
    assert alice is not None and (alice.rating, alice.experience) == (1500.0, 0)
    assert await users.list_match_records("alice") == []
    assert await users.load_match("alice", "bob") is not None


async def test_record_player_names_need_not_be_users(users: Database) -> None:
    record = await users.record_finished_match(
        table_id="t-alice-former_user",
        player1="former_user",
        player2="alice",
        match_length=1,
        score1=0,
        score2=1,
        winner=None,
        started_at=0,
        rules="{}",
        moves="[]",
    )
    assert (await users.list_match_records("former_user")) == [record]


@pytest.mark.parametrize(("player2", "winner"), [("alice", "alice"), ("bob", "carol")])
async def test_inconsistent_records_are_refused(users: Database, player2: str, winner: str) -> None:
    with pytest.raises(ValueError):
        await users.record_finished_match(
            table_id="t",
            player1="alice",
            player2=player2,
            match_length=1,
            score1=1,
            score2=0,
            winner=winner,
            started_at=0,
            rules="{}",
            moves="[]",
        )
    assert await users.list_match_records("alice") == []


def test_rating_updates_refuse_negative_experience() -> None:
    with pytest.raises(ValueError, match="experience"):
        RatingUpdate("alice", 1500.0, -1)


async def test_postgresql_saves_and_an_end_together_take_two_round_trips(
    users: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL a save and a match's end are one statement each, so the writes of
    many matches waiting together, an end among them, go as one pipelined
    ``fetchmany`` for the saves (each returns whether it was fenced) and one for the end,
    with no ``BEGIN``
    or ``COMMIT`` (docs/database.md)."""
    if users.backend != "postgresql":
        pytest.skip("the PostgreSQL writer's round trips: PostgreSQL only (this is the SQLite run)")
    for name in ("dave", "erin", "fred"):
        await users.create_user(name, "h")
    await users.save_match(
        "t-carol-dave", "carol", "dave", "{}", match_length=1, score_a=0, score_b=0
    )
    trips: list[tuple[str, int]] = []
    connection = asyncpg.Connection

    def counted(method: str) -> Any:
        original = getattr(connection, method)

        async def call(self: asyncpg.Connection, query: str, *args: Any, **kw: Any) -> Any:
            trips.append((method, len(args[0]) if method.endswith("many") else 1))
            return await original(self, query, *args, **kw)

        return call

    for method in ("execute", "executemany", "fetchmany", "fetch", "fetchval"):
        monkeypatch.setattr(connection, method, counted(method))
    saves = [
        users.save_match(f"t-{a}-{b}", a, b, "{}", match_length=3, score_a=0, score_b=1)
        for a, b in (("alice", "bob"), ("erin", "fred"))
    ]
    end = users.record_finished_match(
        table_id="t-carol-dave",
        player1="dave",
        player2="carol",
        match_length=1,
        score1=1,
        score2=0,
        winner="dave",
        started_at=0,
        rules=RULES,
        moves=MOVES,
        rating_updates=[RatingUpdate("dave", 1508.0, 1), RatingUpdate("carol", 1492.0, 1)],
    )
    _, record, _ = await asyncio.gather(saves[0], end, saves[1])
    assert sorted(trips) == [("fetchmany", 1), ("fetchmany", 2)]
    assert isinstance(record, MatchRecord)
    assert await users.get_match_record(record.id) == record
    assert await users.load_match("carol", "dave") is None
    assert await users.load_match("alice", "bob") is not None
    dave = await users.get_user("dave")
    assert dave is not None and (dave.rating, dave.experience) == (1508.0, 1)


def _end(**extra: Any) -> dict[str, Any]:
    """The finish of alice and bob's 5-point match (alice won 5-4)."""
    return {
        "table_id": "t-alice-bob",
        "player1": "alice",
        "player2": "bob",
        "match_length": 5,
        "score1": 5,
        "score2": 4,
        "winner": "alice",
        "started_at": 0,
        "rules": "{}",
        "moves": "[]",
        **extra,
    }


async def test_ratings_computed_from_the_stored_ones_are_written(users: Database) -> None:
    await users.update_rating("bob", 1600.0, 20)
    updates = [
        RatingUpdate("alice", 1510.0, 5, before=(1500.0, 0)),
        RatingUpdate("bob", 1590.0, 25, before=(1600.0, 20)),
    ]
    await users.record_finished_match(**_end(rating_updates=updates))
    bob = await users.get_user("bob")
    assert bob is not None and (bob.rating, bob.experience) == (1590.0, 25)


async def test_ratings_computed_from_others_write_nothing_and_say_the_stored_ones(
    users: Database,
) -> None:
    """The finishing transaction reads the rated players' ratings: a match rated from
    ratings that are no longer stored (another node's view, a player gone meanwhile)
    writes nothing, and the error has the stored ones to rate it again from."""
    await users.save_match(
        "t-alice-bob", "alice", "bob", "{}", match_length=5, score_a=4, score_b=4
    )
    await users.update_rating("bob", 1612.25, 31)
    updates = [
        RatingUpdate("alice", 1510.0, 5, before=(1500.0, 0)),
        RatingUpdate("bob", 1490.0, 5, before=(1500.0, 0)),
    ]
    with pytest.raises(StaleRatingError) as caught:
        await users.record_finished_match(**_end(rating_updates=updates))
    assert caught.value.current == {"alice": (1500.0, 0), "bob": (1612.25, 31)}
    assert await users.list_match_records("alice") == []
    assert await users.load_match("alice", "bob") is not None
    bob = await users.get_user("bob")
    assert bob is not None and (bob.rating, bob.experience) == (1612.25, 31)
