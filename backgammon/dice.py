"""Dice: the :class:`Roll` value type and injected dice rollers.

The core never creates randomness itself: every match gets a :class:`DiceRoller`.
Production uses :class:`SystemDice` (the operating system's CSPRNG, ``os.urandom``);
tests use :class:`SeededDice` so a whole match replays exactly.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import NamedTuple, Protocol

from backgammon.errors import InvalidRollError


class Roll(NamedTuple):
    """Two dice as rolled. ``Roll(3, 1)`` and ``Roll(1, 3)`` are different rolls."""

    d1: int
    d2: int

    @property
    def is_double(self) -> bool:
        return self.d1 == self.d2

    @property
    def dice(self) -> tuple[int, ...]:
        """The dice to play: four of them for a double."""
        return (self.d1,) * 4 if self.d1 == self.d2 else (self.d1, self.d2)

    @property
    def high(self) -> int:
        return max(self.d1, self.d2)

    @property
    def low(self) -> int:
        return min(self.d1, self.d2)

    @classmethod
    def parse(cls, text: str) -> Roll:
        """Parse ``"31"``, ``"3-1"``, ``"3 1"`` or ``"3,1"``.

        :raises InvalidRollError: anything else, or a die outside 1..6.
        """
        digits = [c for c in text.strip() if c not in " -,/"]
        if len(digits) != 2 or not all(c in "123456" for c in digits):
            raise InvalidRollError(f"not a roll of two dice 1..6: {text!r}")
        return cls(int(digits[0]), int(digits[1]))

    @classmethod
    def of(cls, d1: int, d2: int) -> Roll:
        """A checked roll: one shared instance per pair of dice.

        Matches keep every roll in their records for minutes; shared instances made at
        import are not new objects for the garbage collector to scan
        (docs/performance.md §10).

        :raises InvalidRollError: a die outside 1..6.
        """
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise InvalidRollError(f"dice must be 1..6, not {d1} and {d2}")
        return _ROLLS[d1][d2]

    def __str__(self) -> str:
        return f"{self.d1}{self.d2}"


_ROLLS = tuple(tuple(Roll(d1, d2) for d2 in range(7)) for d1 in range(7))
"""Every roll, made once (index 0 unused): :meth:`Roll.of` hands these out."""


class DiceRoller(Protocol):
    """Where dice come from: one die at a time, each 1..6."""

    def die(self) -> int:
        """Return one die, 1..6."""
        ...


class BlockEntropy:
    """Random bytes from ``source`` (the operating system's CSPRNG) read ``block`` at a
    time and handed out in order, each byte once: a callable like ``os.urandom``.

    Each ``os.urandom`` call is a system call that lets the GIL go, and the event loop
    then waits for whichever thread took it (the database's: up to the 5 ms switch
    interval), so the seeds and the coin of every new match are drawn from a block read
    now and then instead (docs/performance.md §21). The bytes are the CSPRNG's, unchanged.
    """

    def __init__(self, source: Callable[[int], bytes] = os.urandom, block: int = 4096) -> None:
        if block < 1:
            raise ValueError(f"the block must be 1 byte or more, not {block}")
        self._source = source
        self._block = block
        self._buffer = b""
        self._next = 0

    def __call__(self, size: int) -> bytes:
        """``size`` bytes never handed out before.

        :raises ValueError: the source gave fewer bytes than asked (``os.urandom`` never
            does).
        """
        start = self._next
        if start + size > len(self._buffer):
            rest = self._buffer[start:]
            fresh = self._source(max(self._block, size - len(rest)))
            if len(fresh) < size - len(rest):
                raise ValueError("the random source gave too few bytes")
            self._buffer = rest + fresh
            start = 0
        self._next = start + size
        return self._buffer[start : self._next]


class SystemDice:
    """Dice from the operating system's CSPRNG, read in blocks (:class:`BlockEntropy`).

    Random bytes are read ``block`` at a time and each die takes one byte: ``byte % 6 +
    1`` for bytes 0..251, which hold each face exactly 42 times; bytes 252..255 are
    skipped (rejection sampling), so every face stays exactly 1/6 likely. Reading a die
    at a time (``random.SystemRandom``) cost a system call per die, ~2 % of the event
    loop under load (docs/performance.md §6). Every match has its own roller, so the
    block is small: 1,024 bytes are about 500 rolls, more than most 1-point matches use.

    ``source(n)`` gives ``n`` random bytes (``os.urandom``; tests inject their own).
    """

    ACCEPT = 252
    """Bytes below this make a die: the largest multiple of 6 that fits a byte."""

    def __init__(self, source: Callable[[int], bytes] = os.urandom, block: int = 1024) -> None:
        self._bytes = BlockEntropy(source, block)

    def die(self) -> int:
        """Return one die, 1..6, each exactly equally likely.

        :raises ValueError: the source ran dry (``os.urandom`` never does).
        """
        while True:
            byte = self._bytes(1)[0]
            if byte < self.ACCEPT:
                return byte % 6 + 1


class SeededDice:
    """Reproducible dice from ``random.Random(seed)``: tests and replays."""

    def __init__(self, seed: int | str) -> None:
        self._random = random.Random(seed)

    def die(self) -> int:
        return self._random.randint(1, 6)


class ScriptedDice:
    """Dice given in advance, one die after another (tests that need exact rolls).

    :raises IndexError: when the script runs out, so a test cannot silently go astray.
    """

    def __init__(self, dice: list[int] | tuple[int, ...]) -> None:
        for d in dice:
            if not 1 <= d <= 6:
                raise InvalidRollError(f"a die must be 1..6, not {d}")
        self._dice = list(dice)
        self._next = 0

    def die(self) -> int:
        d = self._dice[self._next]
        self._next += 1
        return d

    @property
    def remaining(self) -> int:
        return len(self._dice) - self._next


def roll(roller: DiceRoller) -> Roll:
    """Roll two dice with ``roller``.

    :raises InvalidRollError: the roller gave a die outside 1..6.
    """
    return Roll.of(roller.die(), roller.die())
