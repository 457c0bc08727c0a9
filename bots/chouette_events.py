"""The chouette's lines as typed values, for bots (docs/chouette.md, docs/bots.md "At a
chouette"; D303-D308).

:func:`parse_chouette` reads one line a CLIP client gets at a chouette table: the
invitation and the table's rules, joins and leaves, the seats and the rotation, the
games, the cube offers to and from the box and their answers, a resignation, the end of
a game and the lines of ``show chouette`` for programs. The boards are ordinary
``board:`` lines (:func:`protocol.board_fibs.parse_board`): a member's board shows the
team from the captain's side, its cube fields the member's own cube. Anything else is
None (the caller reads it as a match line, :func:`bots.events.parse_event`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

from bots.events import first_match
from protocol import replies

# -- event types ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChouetteInvited:
    """``X invites you to a chouette table.`` (D304)."""

    host: str


@dataclass(frozen=True, slots=True)
class ChouetteJoinHint:
    """``Type 'chouette join X' to join it.``: the last line of an invitation (D304)."""

    host: str


@dataclass(frozen=True, slots=True)
class ChouetteRules:
    """``** Chouette rules: cubes=multiple ...``: the table's settings (D303), as words."""

    settings: dict[str, str]

    def on(self, name: str, default: bool) -> bool:
        """A boolean setting (``on``/``off``), ``default`` when it is not said."""
        value = self.settings.get(name)
        return default if value is None else value == "on"


@dataclass(frozen=True, slots=True)
class ChouetteJoined:
    """``X joins the chouette.`` (D305)."""

    name: str


@dataclass(frozen=True, slots=True)
class ChouetteLeft:
    """``X leaves the chouette.`` (D305)."""

    name: str


@dataclass(frozen=True, slots=True)
class ChouetteBack:
    """``X is back at the table.`` (D361, D410): X returned, or was seated at a login."""

    name: str


@dataclass(frozen=True, slots=True)
class ChouetteSeats:
    """``The box: X. The line: a, b.``: the seats after the draw and after each rotation;
    ``line[0]`` is the captain (D305)."""

    box: str
    line: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChouetteGameStarts:
    """``Chouette game N: X is the box, Y the captain.`` (D305)."""

    game: int
    box: str
    captain: str


@dataclass(frozen=True, slots=True)
class ActingCaptain:
    """``X plays for the team now.`` (D305)."""

    name: str


@dataclass(frozen=True, slots=True)
class TeamDoubles:
    """``X doubles the box: the cube to N.`` or ``P doubles the box for X: ...`` (D306)."""

    member: str
    value: int


@dataclass(frozen=True, slots=True)
class BoxAnswers:
    """``The box answers the doubles of a, b: ...``: the window closed (D306)."""

    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BoxDoubles:
    """``The box doubles X: the cube to N.`` (D306)."""

    member: str
    value: int


@dataclass(frozen=True, slots=True)
class BoxDoublesYou:
    """``The box doubles you. Type 'accept' or 'reject' ...``: to each doubled member."""


@dataclass(frozen=True, slots=True)
class CubeAnswered:
    """A double answered (D306): ``member``'s cube is ``value`` now (taken, beavered or
    raccooned), or the cube is out of the game (``value`` None: dropped)."""

    member: str
    value: int | None
    by_box: bool
    """The box answered (the team's double), else the member (the box's double)."""


@dataclass(frozen=True, slots=True)
class ChouetteResignOffered:
    """``X offers Y to resign a gammon (4 points): ...`` (D307)."""

    by: str
    to: str
    points: int


@dataclass(frozen=True, slots=True)
class PartnerOffered:
    """``X is offered the seat of the box's partner: ...`` (D305)."""

    name: str


@dataclass(frozen=True, slots=True)
class AutoDoubleOption:
    """The box decides whether an opening tie doubles every cube (D306)."""


@dataclass(frozen=True, slots=True)
class ChouetteGameOver:
    """``Chouette game N is over: the box's net result is +2; the box stays.`` (D307)."""

    game: int
    box_net: int
    box_stays: bool


@dataclass(frozen=True, slots=True)
class ChouetteTable:
    """``chouette:host:game:phase:box:partner:line:turn``, the first line of ``show
    chouette`` in CLIP mode (D308); ``-`` fields are None, the line empty."""

    host: str
    game: int
    phase: str
    box: str | None
    partner: str | None
    line: tuple[str, ...]
    on_roll: str | None
    """``box`` or ``team``."""


@dataclass(frozen=True, slots=True)
class ChouetteCube:
    """``chouette-cube:member:value:owner:turned:result`` (D308)."""

    member: str
    value: int
    owner: str
    """``centre``, ``box`` or ``member``."""
    turned: bool
    result: int | None
    """The points settled, None while the cube is in the game."""


@dataclass(frozen=True, slots=True)
class ChouetteTotal:
    """``chouette-total:name:total:seat`` (D308)."""

    name: str
    total: int
    seat: str


@dataclass(frozen=True, slots=True)
class ChouetteEnd:
    """``chouette-end``: the last line of ``show chouette`` in CLIP mode (D308)."""


ChouetteEvent: TypeAlias = (
    ChouetteInvited
    | ChouetteJoinHint
    | ChouetteRules
    | ChouetteJoined
    | ChouetteLeft
    | ChouetteBack
    | ChouetteSeats
    | ChouetteGameStarts
    | ActingCaptain
    | TeamDoubles
    | BoxAnswers
    | BoxDoubles
    | BoxDoublesYou
    | CubeAnswered
    | ChouetteResignOffered
    | PartnerOffered
    | AutoDoubleOption
    | ChouetteGameOver
    | ChouetteTable
    | ChouetteCube
    | ChouetteTotal
    | ChouetteEnd
)


@dataclass(frozen=True)
class ChouetteShow:
    """One whole ``show chouette`` in CLIP mode: the table line, every cube, every total."""

    table: ChouetteTable
    cubes: dict[str, ChouetteCube]
    totals: dict[str, ChouetteTotal]


# -- patterns ------------------------------------------------------------------------

_N = r"(?P<name>[^\s:.,]+)"
_M = r"(?P<member>[^\s:.,]+)"
_V = r"(?P<value>\d+)"
_Builder = Callable[[re.Match[str]], ChouetteEvent]


def _names(text: str) -> tuple[str, ...]:
    return tuple(n for n in text.split(", ") if n)


def _dash(text: str) -> str | None:
    return None if text == "-" else text


_PATTERNS: Final[list[tuple[re.Pattern[str], _Builder]]] = [
    (re.compile(rf"{_N} invites you to a chouette table\."), lambda m: ChouetteInvited(m["name"])),
    (re.compile(rf"Type 'chouette join {_N}' to join it\."), lambda m: ChouetteJoinHint(m["name"])),
    (
        re.compile(r"\*\* Chouette rules: (?P<words>.*)"),
        lambda m: ChouetteRules(
            dict(w.partition("=")[::2] for w in m["words"].split() if "=" in w)
        ),
    ),
    (re.compile(rf"{_N} joins the chouette\."), lambda m: ChouetteJoined(m["name"])),
    (re.compile(rf"{_N} leaves the chouette\."), lambda m: ChouetteLeft(m["name"])),
    (re.compile(rf"{_N} is back at the table\."), lambda m: ChouetteBack(m["name"])),
    (
        re.compile(rf"The box: {_N}\. The line: (?P<line>.*)\."),
        lambda m: ChouetteSeats(m["name"], _names(m["line"])),
    ),
    (
        re.compile(rf"Chouette game (?P<game>\d+): {_N} is the box, {_M} the captain\."),
        lambda m: ChouetteGameStarts(int(m["game"]), m["name"], m["member"]),
    ),
    (re.compile(rf"{_N} plays for the team now\."), lambda m: ActingCaptain(m["name"])),
    (
        re.compile(rf"{_N} doubles the box(?: for {_M})?: the cube to {_V}\."),
        lambda m: TeamDoubles(m["member"] or m["name"], int(m["value"])),
    ),
    (
        re.compile(r"The box answers the doubles of (?P<line>.*): 'accept' or 'reject'\."),
        lambda m: BoxAnswers(_names(m["line"])),
    ),
    (re.compile(re.escape(replies.CHOUETTE_ANSWER_BOX_DOUBLE)), lambda m: BoxDoublesYou()),
    (
        re.compile(rf"The box doubles {_M}: the cube to {_V}\."),
        lambda m: BoxDoubles(m["member"], int(m["value"])),
    ),
    (
        re.compile(rf"The box accepts the double of {_M}: the cube is {_V}\."),
        lambda m: CubeAnswered(m["member"], int(m["value"]), by_box=True),
    ),
    (
        re.compile(rf"The box rejects the double of {_M}\."),
        lambda m: CubeAnswered(m["member"], None, by_box=True),
    ),
    (
        re.compile(rf"{_M} (?:accepts|beavers) the box's double: the cube is {_V}\."),
        lambda m: CubeAnswered(m["member"], int(m["value"]), by_box=False),
    ),
    (
        re.compile(rf"The box raccoons {_M}: the cube is {_V}\."),
        lambda m: CubeAnswered(m["member"], int(m["value"]), by_box=True),
    ),
    (
        re.compile(rf"{_M} rejects the box's double\."),
        lambda m: CubeAnswered(m["member"], None, by_box=False),
    ),
    (
        re.compile(rf"{_N} offers {_M} to resign an? [a-z ]+ \({_V} points?\): .*"),
        lambda m: ChouetteResignOffered(m["name"], m["member"], int(m["value"])),
    ),
    (
        re.compile(rf"{_N} is offered the seat of the box's partner: .*"),
        lambda m: PartnerOffered(m["name"]),
    ),
    (re.compile(re.escape(replies.CHOUETTE_AUTO_DOUBLE_OPTION)), lambda m: AutoDoubleOption()),
    (
        re.compile(
            r"Chouette game (?P<game>\d+) is over: the box's net result is (?P<net>[-+]\d+);"
            r" the box (?P<stays>stays|rotates)\."
        ),
        lambda m: ChouetteGameOver(int(m["game"]), int(m["net"]), m["stays"] == "stays"),
    ),
    (
        re.compile(
            r"chouette:(?P<host>[^:]+):(?P<game>\d+):(?P<phase>[^:]+):(?P<box>[^:]+)"
            r":(?P<partner>[^:]+):(?P<line>[^:]+):(?P<turn>[^:]+)"
        ),
        lambda m: ChouetteTable(
            m["host"],
            int(m["game"]),
            m["phase"],
            _dash(m["box"]),
            _dash(m["partner"]),
            () if m["line"] == "-" else tuple(m["line"].split(",")),
            _dash(m["turn"]),
        ),
    ),
    (
        re.compile(
            rf"chouette-cube:{_M}:{_V}:(?P<owner>centre|box|member):(?P<turned>[01])"
            r":(?P<result>-|[-+]\d+)"
        ),
        lambda m: ChouetteCube(
            m["member"],
            int(m["value"]),
            m["owner"],
            m["turned"] == "1",
            None if m["result"] == "-" else int(m["result"]),
        ),
    ),
    (
        re.compile(rf"chouette-total:{_N}:(?P<total>-?\d+):(?P<seat>[a-z]+)"),
        lambda m: ChouetteTotal(m["name"], int(m["total"]), m["seat"]),
    ),
    (re.compile(re.escape(replies.CHOUETTE_END_LINE)), lambda m: ChouetteEnd()),
]


def parse_chouette(line: str) -> ChouetteEvent | None:
    """The chouette event of one line read from the server, or None for any other line."""
    return first_match(_PATTERNS, line.rstrip())
