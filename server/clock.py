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
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

_T = TypeVar("_T")


class Cancellable(Protocol):
    """A call to come (:meth:`Timer.call_at`)."""

    def cancel(self) -> None:
        """Do not make the call (nothing if it was made)."""
        ...


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

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        """Call ``callback`` on the event loop once :meth:`now` reaches ``when``."""
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

    def call_at(self, when: float, callback: Callable[[], None]) -> Cancellable:
        # The delay rather than the loop's call_at: a loop's time need not be this clock.
        return asyncio.get_running_loop().call_later(when - time.monotonic(), callback)


def _silent() -> None:
    """A closed alarm's callback: nothing."""


class Alarm:
    """A callback at a time that moves later again and again (an idle time-out, a
    match's clock), at the cost of an attribute write per move.

    A timer per move (cancel, then a new one) made every command or match action cost a
    timer handle pushed into the loop's heap, where the cancelled ones stay until the
    loop sweeps them (docs/performance.md §13). Here one timer runs at a time: moved
    later, the alarm keeps it and, when it goes off early, sets one for the time then
    due; only a move earlier replaces it.
    """

    def __init__(self, timer: Timer, ring: Callable[[], None]) -> None:
        self._timer = timer
        self._ring = ring
        self._due: float | None = None
        self._call: Cancellable | None = None
        self._call_at = 0.0

    @property
    def due(self) -> float | None:
        """When the alarm rings; None when it is off."""
        return self._due

    def set(self, when: float) -> None:
        """Ring at ``when`` (and not at the time set before)."""
        self._due = when
        if self._call is None or self._call_at > when:
            self._start(when)

    def cancel(self) -> None:
        """Do not ring (until :meth:`set` again)."""
        self._due = None
        if self._call is not None:
            self._call.cancel()
            self._call = None

    def close(self) -> None:
        """Never ring again: cancelled, and the callback let go. The callback is most
        often a method of the alarm's owner, which holds the alarm: a cycle that only a
        full collection would free (rare by design, D422)."""
        self.cancel()
        self._ring = _silent

    def _start(self, when: float) -> None:
        if self._call is not None:
            self._call.cancel()
        self._call_at = when
        self._call = self._timer.call_at(when, self._went_off)

    def _went_off(self) -> None:
        self._call = None
        due = self._due
        if due is None:
            return
        if self._timer.now() < due:
            self._start(due)
            return
        self._due = None
        self._ring()
