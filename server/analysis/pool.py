"""The analysis workers: a bounded queue of finished matches and the gnubg processes that
analyse them, in the background (issue 29; docs/analysis.md).

* :meth:`Analyses.submit` is what the tables call when a match ends: it returns at once
  (play never waits for it); the request is stored (``match_analyses``, state
  ``queued``) by a task of its own, and the match waits in memory for a worker.
* ``[analysis] processes`` workers each hand one match at a time to a worker process
  of their own (:mod:`server.analysis.workers`), which builds its ``.mat``, runs gnubg
  and returns the analysis ready to store: so no more gnubg processes than that run at
  once, whatever the number of matches ending, and none is started by the server.
* Over ``[analysis] queue`` requests waiting, the oldest is dropped (its stored request
  deleted) with a log line.
* The queue survives a restart: the requests still ``queued`` in the database (waiting,
  or being analysed when the server stopped) are read back at :meth:`start` and
  analysed again. :meth:`stop` ends the worker processes (and their gnubg).
* ``[analysis] enabled``: ``auto`` (the default) is on when gnubg is found, with one log
  line when it is not; ``no`` never starts one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from db.errors import DatabaseError, UnknownMatchError
from db.records import MatchRecord
from db.repository import Database
from protocol.analysis import AnalysisError
from server.analysis.gnubg import find_gnubg
from server.analysis.quiet import LoadGate
from server.analysis.workers import ANALYSIS, SGF, Reply, Workers
from server.config import Settings

log = logging.getLogger(__name__)


class Analyses:
    """The queue of matches to analyse and its workers (one per gnubg process)."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        around: Callable[[Callable[[], Awaitable[Reply]]], Awaitable[Reply]] | None = None,
    ) -> None:
        self._settings = settings
        self._db = db
        self._around = around
        """Called with each analysis's run instead of it (tests hold the workers with it
        to look at the queue meanwhile)."""
        self.processes = Workers(settings.analysis_processes)
        """The worker processes, each running one gnubg at a time (the workers' and
        ``export <id> sgf``'s)."""
        self.binary: str | None = None
        """The gnubg executable, None when analysis is off."""
        if settings.analysis != "no":
            self.binary = find_gnubg(settings.analysis_gnubg or None)
            if self.binary is None:
                log.warning(
                    "analysis of finished matches is off: gnubg not found (%s); install "
                    "Debian's gnubg or set [analysis] gnubg, or [analysis] enabled = no",
                    settings.analysis_gnubg or "/usr/games/gnubg, PATH",
                )
        self._waiting: deque[int] = deque()
        self._arrived = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._running: set[int] = set()
        self._storing: dict[int, asyncio.Task[None]] = {}
        """Requests being stored, by match id: a worker waits for its request's row."""
        self._workers: list[asyncio.Task[None]] = []
        self.gate = LoadGate(settings.analysis_pause_above)
        """Holds new analyses back while the server is busy (:mod:`server.analysis.quiet`)."""
        self._background: set[asyncio.Task[object]] = set()
        self.dropped = 0
        """Requests dropped because the queue was over its bound, since the start."""

    @property
    def enabled(self) -> bool:
        """Analyses run (gnubg found and not turned off)."""
        return self.binary is not None

    @property
    def ply(self) -> int:
        return self._settings.analysis_ply

    def ahead(self, match_id: int) -> int:
        """How many matches wait before this one (0 when it is being analysed, or not
        waiting here)."""
        try:
            return self._waiting.index(match_id)
        except ValueError:
            return 0

    def waiting(self) -> tuple[int, ...]:
        """The match ids waiting for a worker, oldest first."""
        return tuple(self._waiting)

    # -- start and stop --------------------------------------------------------------------

    async def start(self) -> None:
        """Read back the requests a previous run left unanalysed, start the workers."""
        if not self.enabled:
            return
        log.info(
            "analysis of finished matches: %s, %d-ply, %d processes at most, queue of %d",
            self.binary,
            self.ply,
            self._settings.analysis_processes,
            self._settings.analysis_queue,
        )
        self.processes = Workers(self._settings.analysis_processes)  # none started yet
        left = await self._db.queued_analyses()
        if left:
            log.info("analysis: %d finished matches still to analyse", len(left))
        for request in left:
            self._enqueue(request.match_id)
        self.gate.start()
        self._workers = [
            asyncio.create_task(self._work()) for _ in range(self._settings.analysis_processes)
        ]

    async def stop(self) -> None:
        """Stop the workers and end their processes (and so their gnubg); the requests
        not analysed stay stored, for the next start."""
        tasks = [*self._workers, *self._storing.values(), *self._background]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._workers = []
        await self.gate.close()
        await self.processes.close()

    async def wait_idle(self) -> None:
        """Until nothing waits or runs (tests)."""
        while self._waiting or self._running or self._storing:
            self._idle.clear()
            await self._idle.wait()

    # -- requests --------------------------------------------------------------------------

    def submit(self, match_id: int) -> None:
        """Queue a match that just ended; returns at once (its request is stored by a
        task of its own). Nothing when analysis is off."""
        if not self.enabled:
            return
        task = asyncio.create_task(self._store(match_id))
        self._storing[match_id] = task
        self._enqueue(match_id)

    async def request(self, match_id: int) -> None:
        """Queue a finished match on demand (again, if it was analysed).

        :raises UnknownMatchError: no such match record.
        """
        if not self.enabled:
            return
        await self._db.queue_analysis(match_id, self.ply)
        if match_id not in self._waiting and match_id not in self._running:
            self._enqueue(match_id)

    async def _store(self, match_id: int) -> None:
        try:
            await self._db.queue_analysis(match_id, self.ply)
        finally:
            self._storing.pop(match_id, None)
            self._idle.set()

    def _enqueue(self, match_id: int) -> None:
        self._waiting.append(match_id)
        while len(self._waiting) > self._settings.analysis_queue:
            oldest = self._waiting.popleft()
            self.dropped += 1
            log.warning(
                "analysis: more than %d matches waiting, match %d dropped from the queue",
                self._settings.analysis_queue,
                oldest,
            )
            self._spawn(self._drop(oldest))
        self._arrived.set()

    async def _drop(self, match_id: int) -> None:
        storing = self._storing.get(match_id)
        if storing is not None:
            with contextlib.suppress(Exception):
                await storing
        await self._db.drop_queued_analysis(match_id)

    def _spawn(self, job: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(job)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- the workers -----------------------------------------------------------------------

    async def _work(self) -> None:
        while True:
            while not self._waiting:
                self._idle.set()
                self._arrived.clear()
                await self._arrived.wait()
            await self.gate.quiet()  # play first: nothing new starts while the server is busy
            if not self._waiting:
                continue  # dropped meanwhile
            match_id = self._waiting.popleft()
            self._running.add(match_id)
            try:
                await self._one(match_id)
            except asyncio.CancelledError:
                raise
            except (DatabaseError, OSError) as exc:
                log.warning("analysis of match %d not stored: %s", match_id, exc)
            except Exception:  # a bug: logged, and the worker goes on with the next
                log.exception("analysis of match %d failed unexpectedly", match_id)
            finally:
                self._running.discard(match_id)
                self._idle.set()

    async def _one(self, match_id: int) -> None:
        """Analyse one match and store the outcome (the analysis, or why it failed)."""
        storing = self._storing.get(match_id)
        if storing is not None:
            try:
                await asyncio.shield(storing)
            except UnknownMatchError:
                return
        stored = await self._db.get_analysis(match_id)
        record = await self._db.get_match_record(match_id)
        if stored is None or stored.state != "queued" or record is None:
            return  # dropped, or already analysed
        request = self._request(ANALYSIS, record, stored.ply)
        try:
            if self._around is None:
                reply = await self._run(request)
            else:
                reply = await self._around(lambda: self._run(request))
        except AnalysisError as exc:
            log.warning("analysis of match %d failed: %s", match_id, exc)
            await self._db.finish_analysis(match_id, result=str(exc)[:1000], rates=None)
            return
        assert reply.rates is not None
        await self._db.finish_analysis(match_id, result=reply.text, rates=reply.rates)
        log.info(
            "analysis of match %d at %d-ply: rates %.1f and %.1f",
            match_id,
            stored.ply,
            *reply.rates,
        )

    def _request(self, kind: str, record: MatchRecord, ply: int) -> dict[str, Any]:
        """What a worker process needs to analyse the record (it builds the ``.mat``)."""
        return {
            "kind": kind,
            "moves": record.moves,
            "site": self._settings.server_name,
            "started_at": record.started_at,
            "rules": record.rules,
            "length": record.match_length,
            "ply": ply,
            "binary": self.binary,
        }

    async def _run(self, request: dict[str, Any]) -> Reply:
        return await self.processes.run(request, self._settings.analysis_timeout)

    # -- gnubg's own file ------------------------------------------------------------------

    async def sgf(self, record: MatchRecord) -> str:
        """The match analysed and saved by gnubg in its own format (SGF, with the
        analysis), at the configured depth, by a worker process when one is free: so no
        more than ``[analysis] processes`` gnubg run at once.

        :raises AnalysisError: analysis is off, or gnubg failed.
        """
        if self.binary is None:
            raise AnalysisError("analysis is off")
        return (await self._run(self._request(SGF, record, self.ply))).text
