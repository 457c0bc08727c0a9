"""Counts of every roll the server made, for the ``dicetest`` fairness report (issue 5 item 8)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DiceStats:
    """Faces and ordered pairs of all rolls since the server started."""

    faces: list[int] = field(default_factory=lambda: [0] * 7)
    """``faces[d]``: how often a die showed ``d`` (index 0 unused)."""
    pairs: dict[tuple[int, int], int] = field(default_factory=dict)
    """How often each ordered pair of dice (first die, second die) was rolled."""

    def record(self, d1: int, d2: int) -> None:
        self.faces[d1] += 1
        self.faces[d2] += 1
        self.pairs[(d1, d2)] = self.pairs.get((d1, d2), 0) + 1

    @property
    def rolls(self) -> int:
        return sum(self.pairs.values())

    def face_chi_square(self) -> float:
        """Pearson's chi-square of the faces against a fair die (5 degrees of freedom)."""
        total = sum(self.faces)
        if not total:
            return 0.0
        expected = total / 6
        return sum((n - expected) ** 2 / expected for n in self.faces[1:])

    def pair_chi_square(self) -> float:
        """Chi-square of the 36 ordered pairs against fair dice (35 degrees of freedom)."""
        total = self.rolls
        if not total:
            return 0.0
        expected = total / 36
        return sum(
            (self.pairs.get((a, b), 0) - expected) ** 2 / expected
            for a in range(1, 7)
            for b in range(1, 7)
        )
