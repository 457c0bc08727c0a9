"""How often a user may reach many others: shouts, and invitations to one user.

A shout goes to everyone who listens, an invitation interrupts its target: FIBS bounds
neither, and issue 34 found one user shouting 21 times a second to 50 listeners (213 KB
in 10 s each), five users at the command rate keeping 2,000 listeners' server at 99 %
CPU, and 196 invitations to one user in 10 s, all delivered. :class:`Pace` counts
what a key (a user, or a user and a target) did in the last minute; past its limit the
user is told and nothing is sent (D300, D301). Counts are kept by name, so logging in
again does not start them over.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable

PACE_WINDOW = 60.0
"""Seconds over which a :class:`Pace` counts."""


class Pace:
    """At most ``limit`` events per key in any :data:`PACE_WINDOW` seconds."""

    def __init__(self, limit: int, now: Callable[[], float]) -> None:
        self.limit = limit
        self._now = now
        self._times: dict[Hashable, deque[float]] = {}

    def allows(self, key: Hashable) -> bool:
        """Whether one more event of ``key`` is within the limit now."""
        times = self._times.get(key)
        return times is None or len(self._recent(times, self._now())) < self.limit

    def count(self, key: Hashable) -> None:
        """One event of ``key`` happened now. Keys with nothing in the window are
        forgotten (looked at one in 64 calls: the table stays as small as the keys of
        the last minute, at a cost shared out)."""
        now = self._now()
        self._times.setdefault(key, deque()).append(now)
        if len(self._times) % 64 == 0:
            for old in [k for k, times in self._times.items() if not self._recent(times, now)]:
                del self._times[old]

    @staticmethod
    def _recent(times: deque[float], now: float) -> deque[float]:
        while times and now - times[0] >= PACE_WINDOW:
            times.popleft()
        return times

    def forget(self, key: Hashable) -> None:
        """``key``'s events no longer count (an invitation was accepted)."""
        self._times.pop(key, None)
