"""Login throttling: password checks per (address, name), per address and per name.

Every login attempt (a password to check) is counted, when it is made and before the
password is checked (issue 18 item 4), under three keys: the pair of the client's
address and the account name it names, the address, and the name. After ``n``
attempts counted for a key, the next attempt under it waits ``login_delay * 2**(n-1)``
seconds (at most :data:`MAX_DELAY`) after the last one. So guesses sent at once, on one
connection or on many, wait exactly as long as guesses sent one after the other, and
learning the answer sooner is not possible: the wait comes first.

An attempt waits for its pair's count and its address's; it waits for the *name's*
count only when its address has failed on that name (the pair has attempts counted):
guessing from many addresses slows every guessing address down, and never the owner
who comes from an address that has not failed on the name (issue 34 item 2: the
per-name count alone let 8 addresses keep the owner out). This is the (account,
address) lockout that OWASP's "Slow Down Online Guessing Attacks with Device Cookies"
finds better against denial of service than locking the account, with the account's
pace kept for the addresses that guess (D266). Its price: an address's first try at a
name is not held back by the others' failures.

A successful login takes back its own attempt from the address's and the name's
counts and no other (an attacker's own account cannot reset the count of the address
or the name it attacks), and clears its pair: that address knows the password. A count
back at zero is dropped at once: a login that never failed leaves nothing behind (after
a thousand logins at once, no thousand counts pinning the memory they were made in,
docs/performance.md §16). Any other count is forgotten :data:`WINDOW` seconds after its
last attempt. The exponent is capped, so no number of attempts overflows anything.

Addresses in ``[limits] trusted_networks`` have no address count (a local client can
pick any of 127.0.0.0/8; a proxy there would make everyone one address); their pair
and name counts apply as to any address.
"""

from __future__ import annotations

import asyncio
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


@dataclass(frozen=True, slots=True)
class Attempt:
    """Who tries which account: the keys one login attempt is counted under."""

    address: str
    """The client's address as limits count it (an IPv6 client by its /64)."""
    name: str
    """The account name tried."""
    trusted: bool = False
    """From ``[limits] trusted_networks``: no count for the address alone."""

    @property
    def pair(self) -> str:
        """The key of this address's attempts at this name."""
        return f"pair:{self.address} {self.name}"

    @property
    def by_name(self) -> str:
        """The key of every address's attempts at this name."""
        return f"name:{self.name}"

    @property
    def by_address(self) -> str | None:
        """The key of this address's attempts at any name; None when trusted."""
        return None if self.trusted else f"addr:{self.address}"

    def every_key(self) -> list[str]:
        """Every key the attempt is counted under."""
        own = [self.pair, self.by_name]
        return own if self.by_address is None else [*own, self.by_address]


class LoginThrottle:
    """Counts login attempts per key (:class:`Attempt`) and paces them."""

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

    def _live(self, key: str, now: float) -> bool:
        """Whether ``key`` has attempts counted that are not forgotten yet."""
        count = self._counts.get(key)
        return count is not None and count.attempts > 0 and now - count.last <= WINDOW

    def _paced_by(self, attempt: Attempt, now: float) -> list[str]:
        """The keys whose counts ``attempt`` waits for now: its pair's and its address's,
        and the name's once this address has attempts at the name counted."""
        keys = [attempt.pair]
        if attempt.by_address is not None:
            keys.append(attempt.by_address)
        if self._live(attempt.pair, now):
            keys.append(attempt.by_name)
        return keys

    async def admit(self, attempt: Attempt, deadline: float | None = None) -> bool:
        """Wait until ``attempt`` may be made, then count it.

        False, and nothing counted, when that would be after ``deadline`` (the timer's
        time; None: no limit): the caller then gives up at once.
        """
        loop = asyncio.get_running_loop()
        while True:
            if self._closed:
                return False
            now = self._timer.now()
            keys = self._paced_by(attempt, now)
            due = max(self._due(key, now) for key in keys)
            if due <= now:
                self._count(attempt.every_key(), now)
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

    def succeeded(self, attempt: Attempt) -> None:
        """``attempt``, just counted, logged in: take it back from the name's and the
        address's counts, clear its pair's (the address knows the password), and let
        whoever waits on these keys look again."""
        for key in attempt.every_key():
            count = self._counts.get(key)
            if count is None:
                continue
            count.attempts = 0 if key == attempt.pair else max(0, count.attempts - 1)
            if not count.attempts and not count.waiters:
                del self._counts[key]  # a count at zero is no count: nothing kept
                continue
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
