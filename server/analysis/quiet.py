"""Background work held back while the server is busy (``[analysis] pause_above``).

A gnubg process at the lowest priority Linux has (``SCHED_IDLE``, :mod:`server.analysis.
worker`) should take only what the server leaves. On the shared virtual cores of this
project's machines it does not: beside three CPU-bound ``SCHED_IDLE`` processes the
500-match load across three nodes answered at p99 314 ms instead of 27.5 ms, and with the
analysis on 124 ms (docs/performance.md §25). So no new analysis starts while the server's
event loop used more than ``pause_above`` of a core over the last second: play first.
The event loop is the server's main thread, whose CPU time :func:`time.thread_time` reads
when asked from it (the gate's sampling task runs there). An analysis under way goes on
(at ply 0 a fraction of a second); the requests wait in their queue meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Final

PERIOD: Final = 1.0
"""Seconds between two readings of the event loop's CPU time: the share is over that."""


class LoadGate:
    """Waits while the event loop's share of a core over the last :data:`PERIOD` is
    above ``limit`` (1.0 or more: never; the share of one thread cannot pass 1)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.share = 0.0
        """The event loop's share of a core over the last period read."""
        self._quiet = asyncio.Event()
        self._quiet.set()
        self._sampling: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Read the load every :data:`PERIOD` from now on (nothing when never shut)."""
        if self.limit < 1.0 and self._sampling is None:
            self._sampling = asyncio.get_running_loop().create_task(self._sample())

    async def close(self) -> None:
        """Stop reading; the gate stays open."""
        task, self._sampling = self._sampling, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._quiet.set()

    async def quiet(self) -> None:
        """Return once the last period's share was at or below the limit."""
        await self._quiet.wait()

    async def _sample(self) -> None:
        wall, cpu = time.monotonic(), time.thread_time()
        while True:
            await asyncio.sleep(PERIOD)
            now, used = time.monotonic(), time.thread_time()
            self.share = (used - cpu) / max(now - wall, 1e-9)
            if self.share > self.limit:
                self._quiet.clear()
            else:
                self._quiet.set()
            wall, cpu = now, used
