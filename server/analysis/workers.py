"""The analysis worker processes, as the server sees them (docs/analysis.md).

One long-lived ``python -m server.analysis.worker`` process per ``[analysis] processes``
slot, started when first needed and kept (a fork of the server costs some milliseconds of
its event loop: once per slot, not once per match), at the lowest priority. The server
writes a request as one line of JSON on the worker's stdin and reads one line and a
length-prefixed payload back (:mod:`server.analysis.worker`): no thread, no file, no
parsing of gnubg's output in the server.

A worker that dies during a request is started again and the request redone (once: a
request that kills two workers fails). A request cancelled midway (the server stopping)
kills its worker, whose gnubg dies with it. :meth:`Workers.close` ends them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from protocol.analysis import AnalysisError
from server.analysis.gnubg import NICENESS

log = logging.getLogger(__name__)

ROOT: Final = Path(__file__).resolve().parent.parent.parent
"""The folder holding the ``server`` package: the worker runs the server's own code."""
GRACE: Final = 60.0
"""Seconds a worker may take past gnubg's time-out (which the worker enforces itself)
before the server gives it up as hung and kills it."""
READ_LIMIT: Final = 1 << 20
ANALYSIS: Final = "analysis"
"""A request's kind: the analysis, as the database stores it, and both players' rates."""
SGF: Final = "sgf"
"""A request's kind: gnubg's own file (SGF) of the match analysed."""


class WorkerDied(Exception):
    """The worker's process ended (or broke its framing) during a request."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A worker's answer: the payload (the stored analysis JSON, or the SGF text) and,
    for an analysis, both players' rates."""

    text: str
    rates: tuple[float, float] | None


class _Worker:
    """One worker process, started when first asked."""

    def __init__(self, slot: int) -> None:
        self.slot = slot
        self.process: asyncio.subprocess.Process | None = None

    async def ask(self, line: bytes, timeout: float) -> Reply:
        process = self.process
        if process is None or process.returncode is not None:
            process = self.process = await _start()
        assert process.stdin is not None and process.stdout is not None
        try:
            async with asyncio.timeout(timeout):
                process.stdin.write(line)
                await process.stdin.drain()
                head = await process.stdout.readline()
                if not head.endswith(b"\n"):
                    raise WorkerDied(f"analysis worker {self.slot} ended")
                header = json.loads(head)
                payload = await process.stdout.readexactly(header.get("size", 0))
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.kill()
            raise WorkerDied(f"analysis worker {self.slot} ended: {exc!r}") from exc
        except TimeoutError:
            await self.kill()
            raise AnalysisError(f"the analysis worker took more than {timeout:g} s") from None
        except BaseException:  # cancelled midway: the framing is lost with the worker
            await self.kill()
            raise
        if not header["ok"]:
            if header.get("bug"):
                raise RuntimeError(header["error"])
            raise AnalysisError(header["error"])
        rates = header["rates"]
        return Reply(payload.decode(), None if rates is None else (rates[0], rates[1]))

    async def kill(self) -> None:
        """Kill the process and reap it (shielded: a cancelled request leaves none)."""
        process, self.process = self.process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(BaseException):
            await asyncio.shield(process.wait())

    async def close(self) -> None:
        """End the process: its input closed, it exits; killed if it does not at once."""
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(process.wait()), 2.0)
        await self.kill()


async def _start() -> asyncio.subprocess.Process:
    nice = shutil.which("nice")
    lower = (nice, "-n", str(NICENESS)) if nice else ()
    return await asyncio.create_subprocess_exec(
        *lower,
        sys.executable,
        "-m",
        "server.analysis.worker",
        cwd=ROOT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=READ_LIMIT,
    )


class Workers:
    """``count`` worker processes, each doing one request at a time: so no more than
    ``count`` gnubg processes run at once, whoever asks."""

    def __init__(self, count: int) -> None:
        self._all = [_Worker(slot) for slot in range(count)]
        self._free: asyncio.Queue[_Worker] = asyncio.Queue()
        self._closed = False
        for worker in self._all:
            self._free.put_nowait(worker)

    def pids(self) -> list[int | None]:
        """Each slot's process id, None for a slot with no process now (tests)."""
        return [w.process.pid if w.process else None for w in self._all]

    async def run(self, request: dict[str, Any], timeout: float) -> Reply:
        """The worker's reply to ``request`` (waiting for a free worker); ``timeout`` is
        gnubg's, which the worker enforces.

        :raises AnalysisError: the analysis failed (gnubg's error, its time-out, bad data,
            or two workers died on it).
        """
        if self._closed:
            raise AnalysisError("the analysis workers are stopped")
        line = json.dumps({**request, "timeout": timeout}).encode() + b"\n"
        worker = await self._free.get()
        try:
            try:
                return await worker.ask(line, timeout + GRACE)
            except WorkerDied as exc:
                if self._closed:  # ended by close(), not to be started again
                    raise AnalysisError("the analysis workers are stopped") from exc
                log.warning("%s; started again, its request redone", exc)
            try:
                return await worker.ask(line, timeout + GRACE)
            except WorkerDied as exc:
                raise AnalysisError(f"{exc}, twice on this match") from exc
        finally:
            self._free.put_nowait(worker)

    async def close(self) -> None:
        """End every worker process (a request still running is cancelled by its
        caller, which kills its worker; one asked meanwhile fails)."""
        self._closed = True
        for worker in self._all:
            await worker.close()
