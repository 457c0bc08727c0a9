"""A match as plain JSON data and compact JSON text, and back (docs/rules.md "Snapshots").

:func:`match_to_json` is the whole :class:`~backgammon.match.Match`: its options, its
state, and the events of the current game and of the finished ones;
:func:`match_from_json` restores exactly that match and refuses data that describes no
match the rules could reach. :func:`match_to_json_text` is the same data as compact JSON
text, the form the server stores (docs/database.md); with ``events=False`` it is the
state alone, made after every action of a running match, so it is kept cheap: the
options' text is made once per options object, each side's counts once per packed side,
and the events are written by :func:`~backgammon.events.events_json_text`.

Kept apart from :mod:`backgammon.match` so the state machine holds the rules only; the
snapshot reads and sets the match's public attributes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any

from backgammon.board import Player, Position, unpack
from backgammon.dice import DiceRoller, Roll
from backgammon.errors import SnapshotError
from backgammon.events import WinKind, event_from_json, event_to_json, events_json_text
from backgammon.fair_dice import SNAPSHOT_KEY, FairDice
from backgammon.match import CubeOffer, Match, MatchOptions, Phase, Resignation

SNAPSHOT_VERSION = 1
"""The version of the core's match snapshot (the ``version`` key of :func:`match_to_json`)."""

_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""Compact JSON, the same text as ``json.dumps(data, separators=(",", ":"))``: the form
the server stores snapshots in."""

_OPTION_NAMES = frozenset(f.name for f in fields(MatchOptions))

_OPTIONS_CACHE: dict[int, tuple[MatchOptions, str]] = {}
"""Options objects by ``id`` with their JSON text, oldest first. An entry holds its
object, so no other object can take its ``id`` while it is here."""
_OPTIONS_CACHE_SIZE = 4096
"""At most this many entries, the oldest dropped first (a miss only costs an ``asdict``)."""

_SIDE_TEXTS: dict[int, str] = {}
"""One side's counts as JSON text, by the side's packed value (:func:`_side_text`)."""
_SIDE_TEXTS_SIZE = 8192
"""At most this many entries; when full, the texts are dropped and made anew."""


def match_to_json(match: Match) -> dict[str, Any]:
    """The whole match as plain JSON data; :func:`match_from_json` restores it exactly."""
    data: dict[str, Any] = {"version": SNAPSHOT_VERSION, "options": asdict(match.options)}
    data.update(_state_json(match))
    data["record"] = [event_to_json(e) for e in match.record]
    data["history"] = [[event_to_json(e) for e in game] for game in match.history]
    return data


def match_to_json_text(match: Match, *, events: bool = True) -> str:
    """:func:`match_to_json` as compact JSON text, exactly
    ``json.dumps(match_to_json(match), separators=(",", ":"))``.

    :param events: False leaves ``record`` and ``history`` empty: the state alone, a few
        hundred bytes, for a store that keeps the events apart (the server saves a
        running match after every action, its events as rows: docs/database.md).
    """
    if not events:
        return f'{_state_text(match)}[],"history":[]}}'
    history = ",".join(events_json_text(game) for game in match.history)
    return f'{_state_text(match)}{events_json_text(match.record)},"history":[{history}]}}'


def _state_text(match: Match) -> str:
    """The compact text of :func:`match_to_json` up to its record's value.

    Made after every action of a running match, so pieced together from parts that are
    cheap to make: the options' text made once per options object, each side's counts
    made once per packed side (one side changes at a time), and the other values in two
    encoder calls around the position, in :func:`_state_json`'s order.
    """
    position = match.position
    before = _COMPACT.encode(_state_before_position(match))
    after = _COMPACT.encode(_state_after_position(match, proof=False))
    roller = match.roller
    proof = f',"{SNAPSHOT_KEY}":{roller.to_json_text()}' if isinstance(roller, FairDice) else ""
    return (
        f'{{"version":{SNAPSHOT_VERSION},"options":{_options_text(match.options)},'
        f'{before[1:-1]},"position":[{_side_text(position[0])},{_side_text(position[1])}],'
        f'{after[1:-1]}{proof},"record":'
    )


def _side_text(packed: int) -> str:
    """The JSON text of one side's 26 counts (:meth:`Position.counts`), by packed side."""
    text = _SIDE_TEXTS.get(packed)
    if text is None:
        if len(_SIDE_TEXTS) >= _SIDE_TEXTS_SIZE:
            _SIDE_TEXTS.clear()
        text = _SIDE_TEXTS[packed] = f"[{','.join(map(str, unpack(packed)))}]"
    return text


def _options_text(options: MatchOptions) -> str:
    """The compact text of ``asdict(options)``, made once per options object (``asdict``
    copies deeply, and the state is written after every action). Kept by object, not by
    equality: equal options may differ in JSON (``1 == True``)."""
    key = id(options)
    cached = _OPTIONS_CACHE.get(key)
    if cached is None:
        if len(_OPTIONS_CACHE) >= _OPTIONS_CACHE_SIZE:
            del _OPTIONS_CACHE[next(iter(_OPTIONS_CACHE))]
        cached = _OPTIONS_CACHE[key] = (options, _COMPACT.encode(asdict(options)))
    return cached[1]


def _state_json(match: Match) -> dict[str, Any]:
    """What :func:`match_to_json` holds between the options and the record, in its order."""
    return {
        **_state_before_position(match),
        "position": [list(match.position.counts(0)), list(match.position.counts(1))],
        **_state_after_position(match),
    }


def _state_before_position(match: Match) -> dict[str, Any]:
    """The part of :func:`_state_json` before the position."""
    return {
        "score": list(match.score),
        "game": match.game,
        "crawford_game": match.crawford_game,
        "crawford_played": match.crawford_played,
        "o_player": match.o_player,
    }


def _state_after_position(match: Match, *, proof: bool = True) -> dict[str, Any]:
    """The part of :func:`_state_json` after the position; ``proof``: with the dice
    proof, its last key (:func:`_state_text` writes that one itself)."""
    state = {
        "phase": match.phase.value,
        "turn": match.turn,
        "dice": [match.dice.d1, match.dice.d2] if match.dice else None,
        "cube": match.cube,
        "cube_owner": match.cube_owner,
        "offer": asdict(match.offer) if match.offer else None,
        "resignation": (
            {
                "player": match.resignation.player,
                "kind": match.resignation.kind.value,
                "points": match.resignation.points,
            }
            if match.resignation
            else None
        ),
        "rolls": list(match.rolls),
        "cube_turned": match.cube_turned,
        "auto_doubles": match.auto_doubles,
    }
    if proof:
        state.update(_dice_state(match))
    return state


def _dice_state(match: Match) -> dict[str, Any]:
    """The ``dice_proof`` key of a match whose dice anyone can verify: its roller's state
    (:class:`~backgammon.fair_dice.FairDice`), so a restored match rolls the same dice.
    Other rollers (the tests' seeded or scripted dice) have no state to keep: no key."""
    roller = match.roller
    return {SNAPSHOT_KEY: roller.to_json()} if isinstance(roller, FairDice) else {}


def match_from_json(data: dict[str, Any], roller: DiceRoller) -> Match:
    """Restore a match from :func:`match_to_json`'s data. Its future dice come from the
    dice state the data holds (``dice_proof``: a :class:`~backgammon.fair_dice.FairDice`
    goes on where it stopped, so no die changes), else from ``roller``.

    :raises SnapshotError: data that does not describe a valid match.
    """
    try:
        if data["version"] != SNAPSHOT_VERSION:
            raise SnapshotError(f"unknown snapshot version {data['version']!r}")
        if set(data["options"]) != _OPTION_NAMES:
            raise SnapshotError("snapshot options do not match MatchOptions")
        if SNAPSHOT_KEY in data:
            roller = FairDice.from_json(data[SNAPSHOT_KEY])
        match = Match(MatchOptions(**data["options"]), roller, o_player=_player(data["o_player"]))
        match.score = [_count(v) for v in data["score"]]
        match.game = _count(data["game"])
        match.crawford_game = _bool(data["crawford_game"])
        match.crawford_played = _bool(data["crawford_played"])
        side0, side1 = data["position"]
        match.position = Position.from_counts(side0, side1)
        match.phase = Phase(data["phase"])
        match.turn = _player(data["turn"])
        match.dice = Roll.of(*data["dice"]) if data["dice"] is not None else None
        match.cube = _count(data["cube"])
        match.cube_owner = None if data["cube_owner"] is None else _player(data["cube_owner"])
        offer = data["offer"]
        match.offer = (
            CubeOffer(_player(offer["doubler"]), _count(offer["value"]), _count(offer["redoubles"]))
            if offer is not None
            else None
        )
        res = data["resignation"]
        match.resignation = (
            Resignation(_player(res["player"]), WinKind(res["kind"]), _count(res["points"]))
            if res is not None
            else None
        )
        match.rolls = [_count(v) for v in data["rolls"]]
        match.cube_turned = _bool(data["cube_turned"])
        match.auto_doubles = _count(data["auto_doubles"])
        match.record = [event_from_json(e) for e in data["record"]]
        match.history = [[event_from_json(e) for e in game] for game in data["history"]]
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"not a valid match snapshot: {exc}") from exc
    _check_consistency(match)
    return match


def _check_consistency(match: Match) -> None:
    """Refuse a restored state that the rules could never reach."""
    if len(match.score) != 2 or len(match.rolls) != 2:
        raise SnapshotError("score and rolls need two entries")
    if match.cube < 1 or match.cube & (match.cube - 1):
        raise SnapshotError(f"the cube must be a power of two, not {match.cube}")
    if (match.phase is Phase.MOVE) != (match.dice is not None):
        raise SnapshotError("dice are out exactly while a player must move")
    if (match.phase is Phase.DOUBLED) != (match.offer is not None):
        raise SnapshotError("a cube offer is pending exactly in the doubled phase")
    if match.phase is Phase.MOVE and not match.moves_required():
        raise SnapshotError("the player with dice has no legal move")


def _player(value: object) -> Player:
    """``value`` as a player (0 or 1), refusing anything else (``True`` too)."""
    if not isinstance(value, int) or isinstance(value, bool) or value not in (0, 1):
        raise SnapshotError(f"a player is 0 or 1, not {value!r}")
    return value


def _count(value: object) -> int:
    """``value`` as a whole number of 0 or more, refusing anything else."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise SnapshotError(f"expected a whole number of 0 or more, not {value!r}")
    return value


def _bool(value: object) -> bool:
    """``value`` as true or false, refusing anything else (``0`` and ``1`` too)."""
    if not isinstance(value, bool):
        raise SnapshotError(f"expected true or false, not {value!r}")
    return value
