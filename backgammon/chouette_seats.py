"""Who sits where at a chouette: the box, the box's partner, the line; rotation; the draw.

:class:`Seats` is a frozen value; every change (a rotation, a join, a leave, a partner)
makes a new one, so the state machine (backgammon/chouette.py) can compare the seats
before and after. ``shared/docs/chouette-rules.md`` is cited as §n.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from backgammon.chouette_events import OrderRolled
from backgammon.dice import DiceRoller


@dataclass(frozen=True)
class Seats:
    """The box, its partner (§7) and the line in rank order (§1).

    ``line[0]`` is the captain; the team of a game is the whole line (the partner sits
    with the box and has no cube).
    """

    box: str
    line: tuple[str, ...]
    partner: str | None = None

    @property
    def captain(self) -> str | None:
        return self.line[0] if self.line else None

    @property
    def players(self) -> tuple[str, ...]:
        """Everyone seated: the box, the partner, then the line."""
        partner = () if self.partner is None else (self.partner,)
        return (self.box, *partner, *self.line)

    def rotated(self, box_stays: bool) -> Seats:
        """The seats for the next game (§5, Kit; §7 for the partner).

        The box stays: the captain goes to the bottom, the next in line is captain.
        The box goes: the captain becomes the box and the box goes to the bottom; with a
        partner, the partner becomes captain (and the next in line may become the new
        partner: :meth:`with_partner`).
        """
        if not self.line:
            return self
        captain, rest = self.line[0], self.line[1:]
        if box_stays:
            return Seats(self.box, (*rest, captain), self.partner)
        partner = () if self.partner is None else (self.partner,)
        return Seats(captain, (*partner, *rest, self.box))

    def joined(self, name: str) -> Seats:
        """A newcomer at the bottom of the line (§1)."""
        return Seats(self.box, (*self.line, name), self.partner)

    def without(self, names: Collection[str]) -> Seats | None:
        """The seats without ``names`` (None when nobody is left).

        An empty box is taken as when the box goes (:meth:`rotated`): the partner
        returns to the line, then the highest in the line takes the box.
        """
        line = tuple(n for n in self.line if n not in names)
        partner = None if self.partner in names else self.partner
        if self.box not in names:
            return Seats(self.box, line, partner)
        if partner is not None:
            line = Seats(self.box, line, partner).without_partner().line
        if not line:
            return None
        return Seats(line[0], line[1:])

    def with_partner(self, name: str) -> Seats:
        """``name``, from the line, becomes the box's partner (§7)."""
        return Seats(self.box, tuple(n for n in self.line if n != name), name)

    def without_partner(self) -> Seats:
        """The partnership ends: the partner returns to the line just after the captain,
        the seat they came from."""
        if self.partner is None:
            return self
        return Seats(self.box, (*self.line[:1], self.partner, *self.line[1:]))


def draw_order(names: Sequence[str], roller: DiceRoller) -> tuple[list[str], list[OrderRolled]]:
    """The first draw (§1): everyone rolls one die, the highest first; the tied roll
    again among themselves only, as often as they tie. Returns the order (the box, the
    captain, then the line) and each round's dice."""
    rounds: list[OrderRolled] = []

    def rank(group: Sequence[str]) -> list[str]:
        dice = [roller.die() for _ in group]
        rounds.append(OrderRolled(tuple(group), tuple(dice)))
        order: list[str] = []
        for value in sorted(set(dice), reverse=True):
            tied = [n for n, d in zip(group, dice, strict=True) if d == value]
            order.extend(tied if len(tied) == 1 else rank(tied))
        return order

    return rank(names), rounds
