"""The server's monotonic clock, with the waits measured on it.

The App holds two clocks: ``App.clock``, Unix time (login times, match starts, ``uptime``),
and ``App.timer``, a :class:`Timer`: monotonic seconds and the waits measured in them
(idle time and idle time-outs, the login time-out, the command rate). Everything that
reads or waits on time goes through them, so a test can put a hand-driven clock in their
place and check a one-hour time-out without waiting an hour
(tests/server/fake_clock.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T")


class Timer(Protocol):
    """Monotonic seconds and waits measured in them."""

    def now(self) -> float:
        """Seconds on a clock that never goes back (its zero means nothing)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return after ``seconds`` (at once for 0 or less, after one turn of the loop)."""
        ...

    async def wait(self, future: asyncio.Future[Any], timeout: float) -> bool:
        """Wait until ``future`` is done or ``timeout`` seconds have passed; True when it
        is done. ``future`` is left as it is either way (not cancelled)."""
        ...

    async def wait_for(self, awaitable: Awaitable[_T], timeout: float | None) -> _T:
        """``awaitable``'s result, cancelling it and raising :class:`TimeoutError` after
        ``timeout`` seconds (None: no limit)."""
        ...


class LoopTimer:
    """The production :class:`Timer`: ``time.monotonic`` and the event loop's timers
    (asyncio's loop time is ``time.monotonic``), with asyncio's own waits."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait(self, future: asyncio.Future[Any], timeout: float) -> bool:
        # asyncio.wait with a timeout: a timer handle, no task (docs/performance.md §9).
        done, _ = await asyncio.wait({future}, timeout=timeout)
        return bool(done)

    async def wait_for(self, awaitable: Awaitable[_T], timeout: float | None) -> _T:
        return await asyncio.wait_for(awaitable, timeout)
