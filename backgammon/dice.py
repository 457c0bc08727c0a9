"""Dice: the :class:`Roll` value type and injected dice rollers.

The core never creates randomness itself: every match gets a :class:`DiceRoller`.
Production uses :class:`SystemDice` (the operating system's CSPRNG); tests use
:class:`SeededDice` so a whole match replays exactly.
"""

from __future__ import annotations

import random
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
        """A checked roll.

        :raises InvalidRollError: a die outside 1..6.
        """
        if not (1 <= d1 <= 6 and 1 <= d2 <= 6):
            raise InvalidRollError(f"dice must be 1..6, not {d1} and {d2}")
        return cls(d1, d2)

    def __str__(self) -> str:
        return f"{self.d1}{self.d2}"


class DiceRoller(Protocol):
    """Where dice come from: one die at a time, each 1..6."""

    def die(self) -> int:
        """Return one die, 1..6."""
        ...


class SystemDice:
    """Dice from the operating system's CSPRNG (``random.SystemRandom``): production."""

    def __init__(self) -> None:
        self._random = random.SystemRandom()

    def die(self) -> int:
        return self._random.randint(1, 6)


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
    """Roll two dice with ``roller``."""
    return Roll(roller.die(), roller.die())
