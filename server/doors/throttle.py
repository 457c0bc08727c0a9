"""Login throttling: password checks per address and per account name, paced before the check.

Every login attempt (a password to check) is counted, when it is made and before the
password is checked, for the client's address and for the account name it names
(issue 18 item 4). An attempt goes ahead only when neither count asks for a wait: after
``n`` attempts counted for a key, the next waits ``login_delay * 2**(n-1)`` seconds
(at most :data:`MAX_DELAY`) after the last one. So guesses sent at once, on one
connection or on many, wait exactly as long as guesses sent one after the other, and
learning the answer sooner is not possible: the wait comes first.

A successful login takes back its own attempt and no other: a user who logs in is not
slowed down by having logged in, but nobody's success clears anybody else's count (an
attacker's own account cannot reset the count of the address or of the name it
attacks). A count is forgotten :data:`WINDOW` seconds after its last attempt. The
exponent is capped, so no number of attempts overflows anything.

Addresses in ``[limits] trusted_networks`` have no address count (a local client can
pick any of 127.0.0.0/8; a proxy there would make everyone one address); the name
count still applies to them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from server.clock import Timer

MAX_DELAY = 30.0
"""Seconds an attempt waits at most after the one before it for the same key."""
WINDOW = 600.0
"""Seconds after its last attempt at which a key's count is forgotten."""
MAX_KEYS = 100_000
"""Keys kept at most; past this the oldest idle half is forgotten."""
PURGE_EVERY = 1024
"""Counted attempts between two sweeps of the expired counts."""
_MAX_EXPONENT = 30
"""2**30 times any delay is far past MAX_DELAY: the doubling stops there."""


@dataclass(slots=True)
class _Count:
    """One key's attempts. Compact: a hostile client can make many keys (each name it
    tries), kept for :data:`WINDOW`; the set of waiters exists only while one waits."""

    attempts: int = 0
    last: float = 0.0
    waiters: set[asyncio.Future[None]] | None = None


class LoginThrottle:
    """Counts login attempts per key (``addr:...``, ``name:...``) and paces them."""

    def __init__(self, timer: Timer, delay: float) -> None:
        self._timer = timer
        self._delay = delay
        self._counts: dict[str, _Count] = {}
        self._counted = 0
        self._closed = False

    def wait_for(self, key: str) -> float:
        """Seconds the next attempt for ``key`` would wait now (0.0: none)."""
        return max(0.0, self._due(key, self._timer.now()) - self._timer.now())

    def _interval(self, attempts: int) -> float:
        if attempts <= 0 or self._delay <= 0:
            return 0.0
        return min(self._delay * 2.0 ** min(attempts - 1, _MAX_EXPONENT), MAX_DELAY)

    def _due(self, key: str, now: float) -> float:
        count = self._counts.get(key)
        if count is None or not count.attempts or now - count.last > WINDOW:
            return now
        return count.last + self._interval(count.attempts)

    async def admit(self, keys: Iterable[str], deadline: float | None = None) -> bool:
        """Wait until an attempt for every key in ``keys`` may be made, then count it.

        False, and nothing counted, when that would be after ``deadline`` (the timer's
        time; None: no limit): the caller then gives up at once.
        """
        keys = list(keys)
        loop = asyncio.get_running_loop()
        while True:
            if self._closed:
                return False
            now = self._timer.now()
            due = max((self._due(key, now) for key in keys), default=now)
            if due <= now:
                self._count(keys, now)
                return True
            if deadline is not None and due > deadline:
                return False
            wake: asyncio.Future[None] = loop.create_future()
            entries = [self._counts[key] for key in keys if key in self._counts]
            for entry in entries:
                if entry.waiters is None:
                    entry.waiters = set()
                entry.waiters.add(wake)
            try:
                await self._timer.wait(wake, due - now)
            finally:
                for entry in entries:
                    if entry.waiters is not None:
                        entry.waiters.discard(wake)
                        if not entry.waiters:
                            entry.waiters = None
                wake.cancel()

    def _count(self, keys: list[str], now: float) -> None:
        self._counted += 1
        if self._counted % PURGE_EVERY == 0:
            self._forget_expired(now)
        if len(self._counts) >= MAX_KEYS:
            self._forget_oldest()
        for key in keys:
            count = self._counts.setdefault(key, _Count())
            if now - count.last > WINDOW:
                count.attempts = 0
            count.attempts += 1
            count.last = now

    def succeeded(self, keys: Iterable[str]) -> None:
        """The attempt just counted for ``keys`` logged in: take that one back, and let
        whoever waits on these keys look again."""
        for key in keys:
            count = self._counts.get(key)
            if count is None:
                continue
            count.attempts = max(0, count.attempts - 1)
            for wake in list(count.waiters or ()):
                if not wake.done():
                    wake.set_result(None)

    def close(self) -> None:
        """The server stops: every wait ends at once, refused (nothing to wait for)."""
        self._closed = True
        for count in self._counts.values():
            for wake in list(count.waiters or ()):
                if not wake.done():
                    wake.set_result(None)

    def _forget_expired(self, now: float) -> None:
        """Drop the counts nobody waits on whose last attempt is past :data:`WINDOW`."""
        expired = [
            key for key, c in self._counts.items() if not c.waiters and now - c.last > WINDOW
        ]
        for key in expired:
            del self._counts[key]

    def _forget_oldest(self) -> None:
        idle = sorted(
            ((c.last, key) for key, c in self._counts.items() if not c.waiters),
        )
        for _, key in idle[: max(1, len(idle) // 2)]:
            del self._counts[key]

    def __len__(self) -> int:
        return len(self._counts)
