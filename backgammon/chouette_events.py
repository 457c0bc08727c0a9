"""Frozen chouette events: the only way the outside learns what happened at a table.

Every action of :class:`backgammon.chouette.Chouette` returns a list of these. Players
are named by their names; the board's two sides are the box (side 0) and the team
(side 1), so the checker events of a match are reused as they are
(:class:`~backgammon.events.OpeningRoll` with the box's die first,
:class:`~backgammon.events.DiceRolled`, :class:`~backgammon.events.CheckersMoved`,
:class:`~backgammon.events.TurnPassed`, :class:`~backgammon.events.AutoDoubled`).
They serialise with the match's own functions (:func:`chouette_event_to_json`,
:func:`chouette_event_from_json`).
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass
from typing import Any, TypeAlias

from backgammon.events import (
    AutoDoubled,
    CheckersMoved,
    DiceRolled,
    OpeningRoll,
    TurnPassed,
    WinKind,
    frozen_from_json,
    frozen_to_json,
)


class SettleEnd(enum.Enum):
    """What settled one member's cube against the box (§4)."""

    BORNE_OFF = "borne_off"
    DROPPED = "dropped"  # a double rejected, by the member or by the box
    RESIGNED = "resigned"
    LEFT = "left"  # the member (or the box) left mid-game: the cube resigned at its value


# -- the table -----------------------------------------------------------------------


@dataclass(frozen=True)
class PlayerJoined:
    name: str
    seated: bool
    """True: at the bottom of the line at once; False: seated at the first draw or, in
    a game, once it ends (§1)."""


@dataclass(frozen=True)
class PlayerLeft:
    name: str
    mid_game: bool
    """True: left during a game, and leaves the seats when it ends (§8)."""


@dataclass(frozen=True)
class PresenceChanged:
    """A player disconnected or came back (absent members follow the captain, §8)."""

    name: str
    present: bool


@dataclass(frozen=True)
class ProxyChanged:
    """``member``'s cube decisions are now made by ``proxy`` too (None: by the member
    alone again, also when a delegation lapses), §8."""

    member: str
    proxy: str | None


@dataclass(frozen=True)
class OrderRolled:
    """One round of the first draw for seats (§1): each named player's die; the tied
    roll again among themselves."""

    names: tuple[str, ...]
    dice: tuple[int, ...]


@dataclass(frozen=True)
class SeatsChanged:
    """The seats now: the box, the box's partner, and the line in rank order (its first
    is the captain). After the first draw, a rotation (§5), a join or a leave."""

    box: str
    partner: str | None
    line: tuple[str, ...]


@dataclass(frozen=True)
class PartnerOffered:
    """§7: ``name``, the next in line, is offered the seat of the box's partner."""

    name: str


@dataclass(frozen=True)
class PartnerAnswered:
    name: str
    accepted: bool


# -- a game --------------------------------------------------------------------------


@dataclass(frozen=True)
class ChouetteGameStarted:
    """A game begins: the box against the line (its first is the captain), every
    member's cube at 1 and centred."""

    game: int
    box: str
    partner: str | None
    line: tuple[str, ...]


@dataclass(frozen=True)
class AutoDoubleDeclined:
    """An opening tie, and the box chose not to double every cube (its option, §2)."""

    box: str


@dataclass(frozen=True)
class ActingCaptain:
    """Who plays the team's checkers now (§3, §8); None when nobody of the team who is
    still in the game is present."""

    name: str | None


@dataclass(frozen=True)
class TeamDoubled:
    """``member``'s cube is doubled against the box (the member, their proxy, or with a
    single cube the captain decided it)."""

    member: str
    value: int
    """What the cube shows if the box accepts."""
    by: str


@dataclass(frozen=True)
class DoublesClosed:
    """The captain's roll closed the doubling window: the box must answer these doubles
    at once (§2), before the roll."""

    members: tuple[str, ...]


@dataclass(frozen=True)
class BoxDoubled:
    member: str
    value: int
    """What the member's cube shows if the member takes."""


@dataclass(frozen=True)
class DoubleTaken:
    member: str
    value: int
    by: str | None
    """Who decided: the box, the member, their proxy, or the captain an absent member
    followed; None when a timer ran out."""
    box_takes: bool
    """True: the box accepted the member's double (the box owns the cube)."""


@dataclass(frozen=True)
class DoubleDropped:
    member: str
    by: str | None
    box_drops: bool
    """True: the box rejected the member's double (the member wins the cube's value)."""


@dataclass(frozen=True)
class DoubleBeavered:
    member: str
    value: int
    by: str | None
    forced: bool
    """True: the lone taker's take made a beaver (§2)."""


@dataclass(frozen=True)
class DoubleRaccooned:
    member: str
    value: int


@dataclass(frozen=True)
class TimedOut:
    """A cube timer ran out while these players had not answered (§8)."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class CubeSettled:
    """One member's cube is settled against the box (§4); the member is out of the game."""

    member: str
    points: int
    """What the member wins (negative: loses); the box scores the opposite."""
    kind: WinKind
    """Single, gammon or backgammon as counted (Jacoby applied)."""
    end: SettleEnd


@dataclass(frozen=True)
class ResignOffered:
    """§4: a resignation between the box and one member, on that member's cube."""

    member: str
    by: str
    """The member (resigning to the box) or the box (resigning to the member)."""
    kind: WinKind
    points: int


@dataclass(frozen=True)
class ResignAccepted:
    member: str
    by: str
    """Who accepted (and wins)."""
    points: int


@dataclass(frozen=True)
class ResignRejected:
    member: str
    by: str


@dataclass(frozen=True)
class ResignWithdrawn:
    """A resignation was dropped unanswered: one of its two sides left or went absent."""

    member: str


@dataclass(frozen=True)
class PartnerShare:
    """§7: the box partner's half of the box's result for the game (the odd point to
    the box), moved from the box's total to the partner's."""

    partner: str
    points: int


@dataclass(frozen=True)
class ChouetteGameFinished:
    """Every cube is settled. The seats rotate next (a :class:`SeatsChanged`)."""

    game: int
    results: tuple[tuple[str, int], ...]
    """Each member's result against the box, in line order."""
    box_net: int
    """The box's result (before a partner's share)."""
    box_stays: bool
    """§5: the box keeps its seat."""


ChouetteEvent: TypeAlias = (
    PlayerJoined
    | PlayerLeft
    | PresenceChanged
    | ProxyChanged
    | OrderRolled
    | SeatsChanged
    | PartnerOffered
    | PartnerAnswered
    | ChouetteGameStarted
    | OpeningRoll
    | AutoDoubled
    | AutoDoubleDeclined
    | DiceRolled
    | CheckersMoved
    | TurnPassed
    | ActingCaptain
    | TeamDoubled
    | DoublesClosed
    | BoxDoubled
    | DoubleTaken
    | DoubleDropped
    | DoubleBeavered
    | DoubleRaccooned
    | TimedOut
    | CubeSettled
    | ResignOffered
    | ResignAccepted
    | ResignRejected
    | ResignWithdrawn
    | PartnerShare
    | ChouetteGameFinished
)

CHOUETTE_EVENT_TYPES: dict[str, type[ChouetteEvent]] = {
    cls.__name__: cls for cls in typing.get_args(ChouetteEvent)
}


def chouette_event_to_json(event: ChouetteEvent) -> dict[str, Any]:
    """A JSON-ready dict: ``{"type": "BoxDoubled", "member": "ann", "value": 2}``."""
    return frozen_to_json(event)


def chouette_event_from_json(data: dict[str, Any]) -> ChouetteEvent:
    """The event of :func:`chouette_event_to_json`'s dict.

    :raises SnapshotError: an unknown type or fields that do not fit it.
    """
    return frozen_from_json(CHOUETTE_EVENT_TYPES, data)
