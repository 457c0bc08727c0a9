"""The analysis worker processes (docs/analysis.md, "How it runs"; docs/performance.md §22):
the server hands each finished match to a long-lived worker process, which runs gnubg and
returns what the database stores, the same bytes as an analysis made in-process; a killed
worker is replaced and its request redone; the server's own process never starts gnubg."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from db.repository import Database
from protocol.analysis import AnalysisError, analysis_to_json
from protocol.mat_export import snapshot_to_mat
from server.analysis.gnubg import analyse_mat
from server.analysis.pool import Analyses
from server.analysis.workers import Reply, Workers
from server.config import Settings
from tests.conftest import DbTarget

from .test_analysis_queue import GNUBG, record_random_match

pytestmark = pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg")


@pytest.fixture
async def database(db_target: DbTarget) -> AsyncIterator[Database]:
    database = await db_target.open()
    try:
        yield database
    finally:
        await database.close()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(word) for word in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_a_workers_result_is_the_in_process_analysis_byte_for_byte(
    database: Database,
) -> None:
    record = await database.get_match_record(await record_random_match(database, 4, length=3))
    assert record is not None
    workers = Workers(1)
    request = {
        "kind": "analysis",
        "moves": record.moves,
        "site": "fibs.test",
        "started_at": record.started_at,
        "rules": record.rules,
        "length": record.match_length,
        "ply": 0,
        "binary": str(GNUBG),
    }
    try:
        reply = await workers.run(request, 300)
        again = await workers.run(request, 300)  # the same process, a second match
        with pytest.raises(AnalysisError) as broken:
            await workers.run({**request, "moves": "{}"}, 300)
        pid = workers.pids()[0]
        assert pid is not None
        # it runs, and its gnubg after it, only on a core nobody else wants
        assert os.sched_getscheduler(pid) == os.SCHED_IDLE
    finally:
        await workers.close()
    mat = snapshot_to_mat(record.moves, site="fibs.test", started_at=record.started_at)
    analysis = await analyse_mat(mat, ply=0, binary=str(GNUBG), timeout=300)
    assert reply.text == again.text == analysis_to_json(analysis)
    assert reply.rates == (analysis.players[0].rate, analysis.players[1].rate)
    assert "snapshot" in str(broken.value)  # the worker's error, told; the worker kept
    assert pid is not None and not _alive(pid) and workers.pids() == [None]


async def test_a_killed_worker_is_replaced_and_its_request_redone(
    database: Database, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    match_id = await record_random_match(database, 2, length=3)
    killed: list[tuple[int, int]] = []  # (worker, its gnubg)

    async def kill_the_worker(run: Callable[[], Awaitable[Reply]]) -> Reply:
        task = asyncio.ensure_future(run())
        while not killed:  # the worker process started, and its gnubg running
            worker = analyses.processes.pids()[0]
            gnubg = _children(worker) if worker else []
            if worker and gnubg:
                os.kill(worker, signal.SIGKILL)
                killed.append((worker, gnubg[0]))
            await asyncio.sleep(0.005)
        return await task

    settings = Settings(database=db_target.url, analysis="yes", analysis_processes=1)
    analyses = Analyses(settings, database, around=kill_the_worker)
    await analyses.start()
    try:
        analyses.submit(match_id)
        await asyncio.wait_for(analyses.wait_idle(), 120)
        replacement = analyses.processes.pids()[0]
    finally:
        await analyses.stop()
    stored = await database.get_analysis(match_id)
    assert stored is not None and stored.state == "done"
    ((worker, gnubg),) = killed
    assert replacement is not None and replacement != worker
    assert not _alive(gnubg)  # gnubg died with its worker
    assert any("started again, its request redone" in r.getMessage() for r in caplog.records)
    assert not _alive(replacement)  # stop ended the worker


async def test_the_server_process_never_starts_gnubg(
    database: Database, db_target: DbTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[list[str]] = []
    popened: list[list[str]] = []

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
            popened.append([str(a) for a in args])
            super().__init__(args, *rest, **options)

    spawn = asyncio.create_subprocess_exec

    async def recorded(program: Any, *args: Any, **options: Any) -> Any:
        started.append([str(a) for a in (program, *args)])
        return await spawn(program, *args, **options)

    # every way the server's process could start one (uvloop's subprocesses skip Popen)
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(asyncio, "create_subprocess_exec", recorded)
    match_id = await record_random_match(database, 3)
    settings = Settings(database=db_target.url, analysis="yes", analysis_processes=2)
    analyses = Analyses(settings, database)
    await analyses.start()
    try:
        analyses.submit(match_id)
        await asyncio.wait_for(analyses.wait_idle(), 120)
        record = await database.get_match_record(match_id)
        assert record is not None
        sgf = await analyses.sgf(record)
        await analyses.request(match_id)  # analysed again
        await asyncio.wait_for(analyses.wait_idle(), 120)
    finally:
        await analyses.stop()
    assert sgf.startswith("(;FF[4]")
    stored = await database.get_analysis(match_id)
    assert stored is not None and stored.state == "done"
    json.loads(stored.result or "")
    assert started, "no process started at all"
    for args in (*started, *popened):
        assert "server.analysis.worker" in args and not any("gnubg" in word for word in args)
    assert len(started) <= 2  # one process per slot, kept from match to match
