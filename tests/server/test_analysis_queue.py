"""The analysis workers' queue (issue 29 item 1): bounded, dropping the oldest with a log
line, surviving a restart, never more gnubg processes than configured; real gnubg
throughout (a gate in front of it holds the workers while a test looks at the queue)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from db.repository import Database
from protocol.analysis import analysis_from_json
from server.analysis.pool import Analyses
from server.analysis.workers import Reply
from server.config import Settings
from tests.conftest import DbTarget
from tests.server.random_match import random_action

GNUBG = Path("/usr/games/gnubg")
pytestmark = pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg")


async def record_random_match(db: Database, seed: int, length: int = 1) -> int:
    """A finished match of random plays stored as the server stores one; its id."""
    rng = random.Random(seed)
    match = Match(MatchOptions(length=length), SeededDice(seed), o_player=0)
    while match.phase is not Phase.MATCH_OVER:
        random_action(match, rng, 0.02, Counter())
    snapshot = json.dumps(
        {
            "version": 1,
            "players": ["alice", "bob"],
            "started_at": 1_700_000_000,
            "match": match_to_json(match),
        }
    )
    record = await db.record_finished_match(
        table_id=uuid.uuid4().hex,
        player1="alice",
        player2="bob",
        match_length=length,
        score1=match.score[0],
        score2=match.score[1],
        winner="alice" if match.score[0] >= length else "bob",
        started_at=1_700_000_000,
        rules=json.dumps({"jacoby": False}),
        moves=snapshot,
    )
    return record.id


@pytest.fixture
async def database(db_target: DbTarget) -> AsyncIterator[Database]:
    database = await db_target.open()
    try:
        yield database
    finally:
        await database.close()


class Gate:
    """Real gnubg (in the worker processes) behind a gate: each analysis waits until the
    test opens it."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.started: list[int] = []
        self.running = 0
        self.most = 0

    async def __call__(self, run: Callable[[], Awaitable[Reply]]) -> Reply:
        self.started.append(len(self.started))
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await self.open.wait()
            return await run()
        finally:
            self.running -= 1


def _settings(db_target: DbTarget, **changes: Any) -> Settings:
    return Settings(database=db_target.url, analysis="yes", **changes)


async def test_a_finished_match_is_analysed_in_the_background(
    database: Database, db_target: DbTarget
) -> None:
    match_id = await record_random_match(database, 1, length=3)
    analyses = Analyses(_settings(db_target), database)
    assert analyses.enabled
    await analyses.start()
    try:
        analyses.submit(match_id)  # returns at once
        await asyncio.wait_for(analyses.wait_idle(), 60)
    finally:
        await analyses.stop()
    stored = await database.get_analysis(match_id)
    assert stored is not None and stored.state == "done" and stored.result is not None
    analysis = analysis_from_json(stored.result)
    assert (stored.rate1, stored.rate2) == pytest.approx(
        (analysis.players[0].rate, analysis.players[1].rate), abs=1e-3
    )
    assert analysis.ply == 0 and analysis.decisions()


async def test_over_its_bound_the_queue_drops_the_oldest(
    database: Database, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    ids = [await record_random_match(database, seed) for seed in range(5)]
    gate = Gate()
    analyses = Analyses(
        _settings(db_target, analysis_queue=2, analysis_processes=1), database, around=gate
    )
    await analyses.start()
    try:
        with caplog.at_level(logging.WARNING, logger="server.analysis.pool"):
            for match_id in ids:
                analyses.submit(match_id)
                await asyncio.sleep(0)  # the worker takes the first one
            while not gate.started:
                await asyncio.sleep(0.01)
            # one at the worker, two waiting: the two after it were dropped
            assert analyses.waiting() == tuple(ids[3:])
            assert analyses.dropped == 2
        dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert dropped == [
            f"analysis: more than 2 matches waiting, match {ids[n]} dropped from the queue"
            for n in (1, 2)
        ]
        gate.open.set()
        await asyncio.wait_for(analyses.wait_idle(), 120)
    finally:
        await analyses.stop()
    states = [await database.get_analysis(match_id) for match_id in ids]
    assert [s.state if s else None for s in states] == ["done", None, None, "done", "done"]
    assert gate.most == 1


async def test_the_queue_survives_a_restart(database: Database, db_target: DbTarget) -> None:
    ids = [await record_random_match(database, seed) for seed in range(3)]
    gate = Gate()
    first = Analyses(_settings(db_target, analysis_processes=2), database, around=gate)
    await first.start()
    for match_id in ids:
        first.submit(match_id)
    while len(gate.started) < 2:  # two workers, each holding a match at the gate
        await asyncio.sleep(0.01)
    assert gate.most == 2
    await first.stop()  # as the server stops: nothing analysed
    assert [a.match_id for a in await database.queued_analyses()] == ids

    second = Analyses(_settings(db_target), database)
    await second.start()
    try:
        await asyncio.wait_for(second.wait_idle(), 120)
    finally:
        await second.stop()
    for match_id in ids:
        stored = await database.get_analysis(match_id)
        assert stored is not None and stored.state == "done"
    assert await database.queued_analyses() == []


async def _spin(seconds: float) -> None:
    """Keep this event loop busy for ``seconds`` (CPU, not sleep: the gate reads the
    loop's CPU time), letting its other tasks run between slices of 20 ms."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        slice_end = time.monotonic() + 0.02
        while time.monotonic() < slice_end:
            pass
        await asyncio.sleep(0)


async def test_no_analysis_starts_while_the_server_is_busy(
    database: Database, db_target: DbTarget
) -> None:
    match_id = await record_random_match(database, 11)
    gate = Gate()
    gate.open.set()
    analyses = Analyses(_settings(db_target, analysis_pause_above=0.5), database, around=gate)
    await analyses.start()
    try:
        await _spin(1.3)  # a second read busy: the gate is shut
        analyses.submit(match_id)
        await _spin(1.5)
        assert gate.started == [] and analyses.waiting() == (match_id,)
        assert analyses.gate.share > 0.5
        await asyncio.wait_for(analyses.wait_idle(), 60)  # quiet: it starts and ends
        assert gate.started == [0]
    finally:
        await analyses.stop()
    stored = await database.get_analysis(match_id)
    assert stored is not None and stored.state == "done"


async def test_off_or_without_gnubg_nothing_is_queued(
    database: Database, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    match_id = await record_random_match(database, 7)
    off = Analyses(Settings(database=db_target.url, analysis="no"), database)
    with caplog.at_level(logging.WARNING, logger="server.analysis.pool"):
        missing = Analyses(
            Settings(database=db_target.url, analysis_gnubg="/nonexistent/gnubg"), database
        )
    assert not off.enabled and not missing.enabled
    lines = [r.getMessage() for r in caplog.records if r.name == "server.analysis.pool"]
    assert len(lines) == 1 and "gnubg not found" in lines[0]
    for analyses in (off, missing):
        await analyses.start()
        analyses.submit(match_id)
        await analyses.wait_idle()
        await analyses.stop()
    assert await database.get_analysis(match_id) is None
