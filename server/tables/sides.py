"""Who sits at a table: its two sides, each with its members and the one who acts for it.

A table of backgammon has two sides, whatever its kind: at a match, each player is a
side of one member who acts for it; at a chouette (docs/chouette.md), the box is a side
of its own (with its partner, if any, as a second member) and the crew the other, the
captain acting for it. The announcing, the edge, watching and the records speak of
sides and their members, so that a new kind of table seats its players without edits
across the server (docs/architecture.md, "A table kind").

Plain frozen values (names, not sessions): a side's members may be on other nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from backgammon.board import Player

__all__ = ["OPPOSITE", "Side", "Sides"]

OPPOSITE: Final[tuple[Player, Player]] = (1, 0)
"""The other side of side ``i`` is ``OPPOSITE[i]`` (a table's sides are 0 and 1, as the
rules core's players): an index, not a call, on the announcing's hot path."""


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a table: its members, and the member who acts for it now.

    :raises ValueError: no members, a member twice, or one who acts but is not a member.
    """

    members: tuple[str, ...]
    acting: str

    def __post_init__(self) -> None:
        if not self.members or len(set(self.members)) != len(self.members):
            raise ValueError(f"a side needs distinct members, got {self.members!r}")
        if self.acting not in self.members:
            raise ValueError(f"{self.acting!r} acts for a side without being a member")

    @classmethod
    def alone(cls, name: str) -> Side:
        """A side of one member, who acts for it (a match's player)."""
        return cls((name,), name)


@dataclass(frozen=True, slots=True)
class Sides:
    """A table's two sides, side 0 and side 1.

    :raises ValueError: someone sits on both sides.
    """

    first: Side
    second: Side

    def __post_init__(self) -> None:
        both = set(self.first.members) & set(self.second.members)
        if both:
            raise ValueError(f"{sorted(both)!r} sit on both sides")

    @classmethod
    def of_match(cls, names: tuple[str, str]) -> Sides:
        """A match's sides: each player alone on theirs, in the rules core's order."""
        return cls(Side.alone(names[0]), Side.alone(names[1]))

    def side(self, index: Player) -> Side:
        """Side ``index`` (0 or 1)."""
        return self.second if index else self.first

    def acting(self, index: Player) -> str:
        """Who acts for side ``index`` now."""
        return self.side(index).acting

    def members(self, index: Player) -> tuple[str, ...]:
        """Everyone on side ``index``."""
        return self.side(index).members

    def side_of(self, name: str) -> Player | None:
        """The side ``name`` sits on, or None for someone not at the table."""
        if name in self.first.members:
            return 0
        if name in self.second.members:
            return 1
        return None

    @property
    def acting_names(self) -> tuple[str, str]:
        """Who acts for each side, side 0 first (a match's two players)."""
        return self.first.acting, self.second.acting

    @property
    def everyone(self) -> tuple[str, ...]:
        """Every member, side 0's first."""
        return self.first.members + self.second.members
