"""The analysis workers: a bounded queue of finished matches and the gnubg processes that
analyse them, in the background (issue 29; docs/analysis.md).

* :meth:`Analyses.submit` is what the tables call when a match ends: it returns at once
  (play never waits for it); the request is stored (``match_analyses``, state
  ``queued``) by a task of its own, and the match waits in memory for a worker.
* ``[analysis] processes`` workers each run one gnubg at a time
  (:func:`server.analysis.gnubg.analyse_mat`), so no more gnubg processes than that run
  at once, whatever the number of matches ending.
* Over ``[analysis] queue`` requests waiting, the oldest is dropped (its stored request
  deleted) with a log line.
* The queue survives a restart: the requests still ``queued`` in the database (waiting,
  or being analysed when the server stopped) are read back at :meth:`start` and
  analysed again. :meth:`stop` kills the gnubg processes running.
* ``[analysis] enabled``: ``auto`` (the default) is on when gnubg is found, with one log
  line when it is not; ``no`` never starts one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from backgammon.errors import SnapshotError
from db.errors import DatabaseError, UnknownMatchError
from db.records import MatchRecord
from db.repository import Database
from protocol.analysis import AnalysisError, MatchAnalysis, analysis_to_json
from protocol.mat_export import snapshot_to_mat
from server.analysis.gnubg import analyse_mat, find_gnubg, sgf_of_mat
from server.config import Settings

log = logging.getLogger(__name__)


class Analyses:
    """The queue of matches to analyse and its workers (one per gnubg process)."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        *,
        analyse: Callable[..., Awaitable[MatchAnalysis]] | None = None,
    ) -> None:
        self._settings = settings
        self._db = db
        self._analyse: Callable[..., Awaitable[MatchAnalysis]] = (
            analyse_mat if analyse is None else analyse
        )
        """What runs gnubg (tests may slow it down to look at the queue meanwhile)."""
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
        self._slots = asyncio.Semaphore(settings.analysis_processes)
        """One per gnubg process that may run: the workers' and ``export <id> sgf``'s."""
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
        left = await self._db.queued_analyses()
        if left:
            log.info("analysis: %d finished matches still to analyse", len(left))
        for request in left:
            self._enqueue(request.match_id)
        self._workers = [
            asyncio.create_task(self._work()) for _ in range(self._settings.analysis_processes)
        ]

    async def stop(self) -> None:
        """Stop the workers (their gnubg processes are killed); the requests not analysed
        stay stored, for the next start."""
        tasks = [*self._workers, *self._storing.values(), *self._background]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._workers = []

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
        binary = self.binary
        assert binary is not None
        try:
            mat, jacoby = self._mat(record)
            async with self._slots:
                analysis = await self._analyse(
                    mat,
                    ply=stored.ply,
                    binary=binary,
                    jacoby=jacoby,
                    timeout=self._settings.analysis_timeout,
                )
        except (AnalysisError, SnapshotError, ValueError) as exc:
            log.warning("analysis of match %d failed: %s", match_id, exc)
            await self._db.finish_analysis(match_id, result=str(exc)[:1000], rates=None)
            return
        first, second = analysis.players
        await self._db.finish_analysis(
            match_id, result=analysis_to_json(analysis), rates=(first.rate, second.rate)
        )
        log.info(
            "analysis of match %d at %d-ply: rates %.1f and %.1f",
            match_id,
            stored.ply,
            first.rate,
            second.rate,
        )

    def _mat(self, record: MatchRecord) -> tuple[str, bool]:
        """The record's ``.mat`` text, and whether gnubg must play it with the Jacoby
        rule (a money session's rule, which the file cannot say)."""
        mat = snapshot_to_mat(
            record.moves, site=self._settings.server_name, started_at=record.started_at
        )
        return mat, not record.match_length and bool(json.loads(record.rules).get("jacoby"))

    # -- gnubg's own file ------------------------------------------------------------------

    async def sgf(self, record: MatchRecord) -> str:
        """The match analysed and saved by gnubg in its own format (SGF, with the
        analysis), at the configured depth; it waits for a free gnubg slot, so no more
        than ``[analysis] processes`` gnubg run at once.

        :raises AnalysisError: analysis is off, or gnubg failed.
        """
        binary = self.binary
        if binary is None:
            raise AnalysisError("analysis is off")
        try:
            mat, jacoby = self._mat(record)
        except (SnapshotError, ValueError) as exc:
            raise AnalysisError(str(exc)) from exc
        async with self._slots:
            return await sgf_of_mat(
                mat,
                ply=self.ply,
                binary=binary,
                jacoby=jacoby,
                timeout=self._settings.analysis_timeout,
            )
