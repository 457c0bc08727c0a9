"""Analyses of finished matches: the request (the workers' queue) and its outcome."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import pytest

from db.errors import UnknownMatchError
from db.records import StoredAnalysis
from db.repository import Database

if TYPE_CHECKING:
    from tests.conftest import FakeClock


async def _record(database: Database, first: str = "alice", second: str = "bob") -> int:
    record = await database.record_finished_match(
        table_id=uuid.uuid4().hex,
        player1=first,
        player2=second,
        match_length=1,
        score1=1,
        score2=0,
        winner=first,
        started_at=0,
        rules="{}",
        moves="{}",
    )
    return record.id


async def test_a_request_then_its_analysis(database: Database, clock: FakeClock) -> None:
    match_id = await _record(database)
    assert await database.get_analysis(match_id) is None
    await database.queue_analysis(match_id, 2)
    queued = StoredAnalysis(match_id, "queued", 2, int(clock.now), None, None, None, None)
    assert await database.get_analysis(match_id) == queued
    assert await database.queued_analyses() == [queued]
    clock.advance(5)
    assert await database.finish_analysis(match_id, result='{"x":1}', rates=(3.5, 12.25))
    done = await database.get_analysis(match_id)
    assert done == StoredAnalysis(
        match_id, "done", 2, int(clock.now) - 5, int(clock.now), 3.5, 12.25, '{"x":1}'
    )
    assert await database.queued_analyses() == []
    # finished once: a second outcome is not stored
    assert not await database.finish_analysis(match_id, result="late", rates=None)
    # asked again: queued again, the old analysis gone
    await database.queue_analysis(match_id, 0)
    again = await database.get_analysis(match_id)
    assert again is not None and (again.state, again.ply, again.result) == ("queued", 0, None)


async def test_a_failure_is_stored_with_its_reason(database: Database) -> None:
    match_id = await _record(database)
    await database.queue_analysis(match_id, 0)
    assert await database.finish_analysis(match_id, result="gnubg exited with 1", rates=None)
    failed = await database.get_analysis(match_id)
    assert failed is not None
    assert (failed.state, failed.rate1, failed.result) == ("failed", None, "gnubg exited with 1")


async def test_the_queue_is_oldest_first_and_drops_only_what_waits(
    database: Database, clock: FakeClock
) -> None:
    ids = [await _record(database) for _ in range(3)]
    for match_id in reversed(ids):
        await database.queue_analysis(match_id, 0)
        clock.advance(1)
    assert [a.match_id for a in await database.queued_analyses()] == list(reversed(ids))
    assert await database.drop_queued_analysis(ids[2])
    assert not await database.drop_queued_analysis(ids[2])
    await database.finish_analysis(ids[1], result="{}", rates=(0.0, 0.0))
    assert not await database.drop_queued_analysis(ids[1])  # done: kept
    assert [a.match_id for a in await database.queued_analyses()] == [ids[0]]


async def test_no_request_for_a_match_that_is_not_recorded(database: Database) -> None:
    with pytest.raises(UnknownMatchError):
        await database.queue_analysis(4242, 0)
    assert await database.get_analysis(4242) is None
    assert await database.get_analysis(0) is None
    assert await database.get_analysis(2**40) is None


async def test_a_players_recent_rates_newest_first(database: Database, clock: FakeClock) -> None:
    rates = {}
    for n, (first, second) in enumerate([("alice", "bob"), ("bob", "alice"), ("bob", "carol")]):
        clock.advance(10)
        match_id = await _record(database, first, second)
        await database.queue_analysis(match_id, 0)
        await database.finish_analysis(match_id, result="{}", rates=(n + 0.5, n + 10.5))
        rates[match_id] = n
    failed = await _record(database, "alice", "bob")
    await database.queue_analysis(failed, 0)
    await database.finish_analysis(failed, result="gnubg crashed", rates=None)
    await _record(database, "alice", "carol")  # never analysed
    assert await database.recent_rates("alice", last=20) == [11.5, 0.5]
    assert await database.recent_rates("alice", last=1) == [11.5]
    assert await database.recent_rates("carol", last=20) == [12.5]
    assert await database.recent_rates("dave", last=20) == []
