"""Reconnect delays: exponential, bounded, with full jitter.

Delay ``n`` (counting from 0) is a uniform draw from ``[cap/2, cap]`` where
``cap = min(maximum, initial * factor**n)``: the first retry comes quickly, a server that
stays down costs at most one connection attempt every ``maximum`` seconds, and bots that
lost the same server do not all come back in the same instant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Backoff:
    """A sequence of reconnect delays; :meth:`reset` after a connection that worked."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 30.0
    rng: random.Random = field(default_factory=random.Random, repr=False)
    attempt: int = 0

    def next_delay(self) -> float:
        """The delay before the next attempt, in seconds (and count the attempt)."""
        cap = min(self.maximum, self.initial * self.factor ** min(self.attempt, 64))
        self.attempt += 1
        return self.rng.uniform(cap / 2, cap)

    def reset(self) -> None:
        self.attempt = 0
