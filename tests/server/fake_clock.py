"""A hand-driven :class:`server.clock.Timer`: time moves only when a test says so.

Give it to the App (``App(..., timer=FakeTimer())``) and the idle warning, the idle and
login time-outs and the command rate follow :meth:`FakeTimer.advance` instead of the
wall: a test of a one-hour time-out takes no hour and does not sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

_T = TypeVar("_T")


class _Call:
    """A :meth:`FakeTimer.call_at` to come: done once made or cancelled."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self._callback: Callable[[], None] | None = callback

    def done(self) -> bool:
        return self._callback is None

    def cancel(self) -> None:
        self._callback = None

    def set_result(self, _: None) -> None:
        """Make the call (the name a wait's alarm has: both sit in one heap)."""
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()


class FakeTimer:
    """Monotonic seconds that stand still until :meth:`advance`, and waits on them."""

    def __init__(self, start: float | None = None) -> None:
        # Whole seconds, so that sums of halves and quarters are exact.
        self._now = float(math.floor(time.monotonic())) if start is None else start
        self._alarms: list[tuple[float, int, asyncio.Future[None] | _Call]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    @property
    def pending(self) -> int:
        """Waits running now (sleeps, time-outs not yet reached), calls to come included."""
        return sum(1 for _, _, alarm in self._alarms if not alarm.done())

    def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``; every wait that has run out ends."""
        self._now += seconds
        while self._alarms and self._alarms[0][0] <= self._now:
            _, _, alarm = heapq.heappop(self._alarms)
            if not alarm.done():
                alarm.set_result(None)

    async def until_pending(self, count: int, timeout: float = 5.0) -> None:
        """Return once exactly ``count`` waits run (the server got to them)."""
        async with asyncio.timeout(timeout):
            while self.pending != count:
                await asyncio.sleep(0.005)

    def _alarm(self, seconds: float) -> asyncio.Future[None]:
        alarm: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if seconds <= 0:
            alarm.set_result(None)
        else:
            heapq.heappush(self._alarms, (self._now + seconds, next(self._order), alarm))
        return alarm

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        alarm = self._alarm(seconds)
        try:
            await alarm
        finally:
            alarm.cancel()

    async def wait(self, future: asyncio.Future[Any], timeout: float) -> bool:
        alarm = self._alarm(timeout)
        try:
            await asyncio.wait({future, alarm}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            alarm.cancel()
        return future.done()

    async def wait_for(self, awaitable: Awaitable[_T], timeout: float | None) -> _T:
        task = asyncio.ensure_future(awaitable)
        if timeout is None:
            return await task
        try:
            done = await self.wait(task, timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise TimeoutError
        return task.result()

    def call_at(self, when: float, callback: Callable[[], None]) -> _Call:
        call = _Call(callback)
        if when <= self._now:  # due already: on the next turn of the loop, as asyncio's
            asyncio.get_running_loop().call_soon(call.set_result, None)
        else:
            heapq.heappush(self._alarms, (when, next(self._order), call))
        return call
