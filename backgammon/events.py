"""Frozen event values: the only way the outside learns what happened in a match.

Every action of :class:`backgammon.match.Match` returns a list of these. They are
plain data (numbers, booleans, tuples, :class:`~backgammon.moves.Move`,
:class:`~backgammon.dice.Roll`, enums) so they double as the match's move record and
serialise to JSON with :func:`event_to_json` / :func:`event_from_json`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

from backgammon.board import Player
from backgammon.dice import Roll
from backgammon.errors import SnapshotError
from backgammon.moves import Move


class WinKind(enum.Enum):
    """How a game was won, which sets the points (times the cube)."""

    SINGLE = "single"
    GAMMON = "gammon"
    BACKGAMMON = "backgammon"

    @property
    def multiplier(self) -> int:
        return {"single": 1, "gammon": 2, "backgammon": 3}[self.value]


class GameEnd(enum.Enum):
    """What ended a game."""

    BORNE_OFF = "borne_off"
    DROPPED = "dropped"
    RESIGNED = "resigned"


@dataclass(frozen=True)
class GameStarted:
    """A game begins. ``o_player`` plays the FIBS colour O in it (§3.2)."""

    game: int
    o_player: Player
    crawford: bool
    score: tuple[int, int]


@dataclass(frozen=True)
class OpeningRoll:
    """Each player rolled one die for the opening; on a tie they roll again."""

    dice: tuple[int, int]
    """The die of player 0 and of player 1."""
    starter: Player | None
    """Who moves first with both dice; None on a tie."""


@dataclass(frozen=True)
class AutoDoubled:
    """A tie in the opening roll doubled the cube automatically."""

    cube: int


@dataclass(frozen=True)
class DiceRolled:
    player: Player
    roll: Roll
    moves: int
    """How many checkers must be moved (0: no move is possible)."""


@dataclass(frozen=True)
class CheckersMoved:
    player: Player
    moves: tuple[Move, ...]
    hits: tuple[int, ...]
    """The mover's points (own numbering) where an opposing blot was hit."""


@dataclass(frozen=True)
class TurnPassed:
    """``player`` rolled but could not move; the turn goes to the other player."""

    player: Player


@dataclass(frozen=True)
class CubeOffered:
    player: Player
    value: int
    """What the cube will show if the offer is taken."""


@dataclass(frozen=True)
class CubeRedoubled:
    """An instant redouble (beaver, raccoon, ...): ``player`` takes and redoubles at once."""

    player: Player
    value: int
    count: int
    """1 for a beaver, 2 for a raccoon, 3 for an otter, ..."""


@dataclass(frozen=True)
class CubeTaken:
    player: Player
    value: int
    redoubled: bool
    """True when the offer taken was an instant redouble."""


@dataclass(frozen=True)
class CubeDropped:
    player: Player
    points: int
    """What the dropper loses: the cube's value before the offer."""


@dataclass(frozen=True)
class ResignationOffered:
    player: Player
    kind: WinKind
    points: int


@dataclass(frozen=True)
class ResignationAccepted:
    player: Player
    """The player who accepted (and wins)."""
    points: int


@dataclass(frozen=True)
class ResignationRejected:
    player: Player
    """The player who rejected."""


@dataclass(frozen=True)
class GameWon:
    winner: Player
    kind: WinKind
    end: GameEnd
    points: int
    score: tuple[int, int]
    """The match score after this game."""


@dataclass(frozen=True)
class MatchWon:
    winner: Player
    score: tuple[int, int]


Event: TypeAlias = (
    GameStarted
    | OpeningRoll
    | AutoDoubled
    | DiceRolled
    | CheckersMoved
    | TurnPassed
    | CubeOffered
    | CubeRedoubled
    | CubeTaken
    | CubeDropped
    | ResignationOffered
    | ResignationAccepted
    | ResignationRejected
    | GameWon
    | MatchWon
)

EVENT_TYPES: dict[str, type[Event]] = {cls.__name__: cls for cls in typing.get_args(Event)}

_T = TypeVar("_T")


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""Each event class's field names in order (``dataclasses.fields`` builds a new tuple
per call, and every event of every match is serialized once)."""
_FIELD_HINTS: dict[type, tuple[tuple[str, Any], ...]] = {}
"""Each event class's field names in order with their types (``typing.get_type_hints``
is slow, and every event of a restored record is rebuilt)."""
_PLAIN: frozenset[type] = frozenset({int, bool, str, float, type(None)})
"""Value types that are their own JSON form."""
_TEXT_FIELDS: dict[type, tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {}
"""Each event class's field names in order, each with how its value is made encodable
(:func:`events_json_text`)."""
_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""Compact JSON, as ``json.dumps(separators=(",", ":"))``: the form the server stores."""


def event_to_json(event: Event) -> dict[str, Any]:
    """A JSON-ready dict: ``{"type": "CheckersMoved", "player": 0, ...}``."""
    return frozen_to_json(event)


def frozen_to_json(value: Any) -> dict[str, Any]:
    """Any frozen event dataclass (a match's or a chouette's) as a JSON-ready dict: its
    class name as ``type``, then its fields in order, in :func:`event_to_json`'s form."""
    cls = type(value)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    data: dict[str, Any] = {"type": cls.__name__}
    for name in names:
        field = getattr(value, name)
        data[name] = field if type(field) in _PLAIN else _to_json(field)
    return data


def events_json_text(events: Iterable[Event]) -> str:
    """The events as compact JSON text: exactly
    ``json.dumps([event_to_json(e) for e in events], separators=(",", ":"))``.

    Made with one encoder call, from dicts that keep the tuples of numbers (rolls,
    moves, hits, scores, which JSON writes as the lists :func:`event_to_json` makes) and
    turn only enum members into their values. The server writes every event of every
    match this way (docs/database.md).
    """
    data = []
    for event in events:
        cls = type(event)
        fields = _TEXT_FIELDS.get(cls)
        if fields is None:
            hints = typing.get_type_hints(cls)
            fields = _TEXT_FIELDS[cls] = tuple(
                (f.name, _text_value(hints[f.name])) for f in dataclasses.fields(cls)
            )
        item: dict[str, Any] = {"type": cls.__name__}
        for name, convert in fields:
            value = getattr(event, name)
            item[name] = value if convert is None else convert(value)
        data.append(item)
    return _COMPACT.encode(data)


def _text_value(hint: Any) -> Callable[[Any], Any] | None:
    """How :func:`events_json_text` turns a field of this type into encodable data:
    None when the encoder writes the value as it is, like :func:`event_to_json`'s form."""
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_value
    if _plain_for_json(hint):
        return None
    return _to_json


def _plain_for_json(hint: Any) -> bool:
    """Whether values of this type are numbers, booleans, text, None, or tuples or named
    tuples of them: what the encoder writes as :func:`_to_json` would."""
    if hint in (int, bool, str, float, type(None)):
        return True
    if isinstance(hint, type) and issubclass(hint, tuple) and hasattr(hint, "_fields"):
        return all(_plain_for_json(h) for h in typing.get_type_hints(hint).values())
    if typing.get_origin(hint) in (tuple, typing.Union, types.UnionType):
        return all(h is Ellipsis or _plain_for_json(h) for h in typing.get_args(hint))
    return False


def _enum_value(value: enum.Enum) -> Any:
    return value.value


def event_from_json(data: dict[str, Any]) -> Event:
    """The event of :func:`event_to_json`'s dict.

    :raises SnapshotError: an unknown type or fields that do not fit it.
    """
    return frozen_from_json(EVENT_TYPES, data)


def frozen_from_json(types: Mapping[str, type[_T]], data: dict[str, Any]) -> _T:
    """The value of :func:`frozen_to_json`'s dict, its class looked up in ``types`` by
    name (:data:`EVENT_TYPES` for a match's events).

    :raises SnapshotError: an unknown type or fields that do not fit it.
    """
    try:
        cls = types[data["type"]]
        hints = _FIELD_HINTS.get(cls)
        if hints is None:
            names = dataclasses.fields(cls)  # type: ignore[arg-type]  # _T: a frozen dataclass
            types_of = typing.get_type_hints(cls)
            hints = _FIELD_HINTS[cls] = tuple((f.name, types_of[f.name]) for f in names)
        return cls(**{name: _from_json(hint, data[name]) for name, hint in hints})
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"not a valid event: {data!r}") from exc


def _to_json(value: object) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_to_json(v) for v in value]
    return value


def _from_json(hint: Any, value: Any) -> Any:
    """Rebuild a value of type ``hint`` from its JSON form."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Roll:
        return Roll.of(*value)
    if hint is Move:
        return Move.of(*value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_json(args[0], v) for v in value)
        return tuple(_from_json(a, v) for a, v in zip(args, value, strict=True))
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        return _from_json(next(a for a in args if a is not type(None)), value)
    if hint in (int, bool, str) and not isinstance(value, hint):
        raise ValueError(f"expected {hint.__name__}, not {value!r}")
    return value
