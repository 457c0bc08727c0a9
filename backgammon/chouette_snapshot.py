"""A chouette table as plain JSON data, and back (docs/chouette.md "Snapshots").

:func:`chouette_to_json` is the whole :class:`~backgammon.chouette.Chouette`: its
settings, standings, seats, presence, delegations, the game under way (board, cubes,
pending decisions) and the events; :func:`chouette_from_json` restores exactly that table
and refuses data that describe no table the rules could reach. The server saves a table
after every action (the state alone with ``events=False``) so that it resumes after a
crash where it stood. Kept apart from :mod:`backgammon.chouette` so the state machine
holds the rules only; the snapshot reads and sets the table's public attributes.
"""

from __future__ import annotations

from typing import Any

from backgammon.board import Player, Position
from backgammon.chouette import Chouette
from backgammon.chouette_events import chouette_event_from_json, chouette_event_to_json
from backgammon.chouette_seats import Seats
from backgammon.chouette_settings import settings_from_json, settings_to_json
from backgammon.chouette_state import (
    Answer,
    BoxOffer,
    ChouettePhase,
    ChouetteResignation,
    Cube,
    CubeOwner,
)
from backgammon.dice import DiceRoller, Roll
from backgammon.errors import SnapshotError
from backgammon.events import WinKind

CHOUETTE_SNAPSHOT_VERSION = 1
"""The version of the table snapshot (the ``version`` key of :func:`chouette_to_json`)."""


def chouette_to_json(table: Chouette, *, events: bool = True) -> dict[str, Any]:
    """The whole table as plain JSON data; :func:`chouette_from_json` restores it exactly.

    :param events: False leaves ``record`` and ``history`` empty: the state alone, for a
        store that keeps the events apart.
    """
    seats = table.seats
    offer = table.box_offer
    res = table.resignation
    return {
        "version": CHOUETTE_SNAPSHOT_VERSION,
        "settings": settings_to_json(table.settings),
        "totals": [[name, total] for name, total in table.totals.items()],
        "waiting": list(table.waiting),
        "seats": (
            None
            if seats is None
            else {"box": seats.box, "partner": seats.partner, "line": list(seats.line)}
        ),
        "absent": sorted(table.absent),
        "proxies": [[member, proxy] for member, proxy in table.proxies.items()],
        "declined": sorted(table.declined),
        "partner_offer": table.partner_offer,
        "leaving": sorted(table.leaving),
        "game": table.game,
        "phase": table.phase.value,
        "turn": table.turn,
        "position": [list(table.position.counts(0)), list(table.position.counts(1))],
        "dice": [table.dice.d1, table.dice.d2] if table.dice else None,
        "cubes": [
            [member, cube.value, cube.owner.value, cube.turned]
            for member, cube in table.cubes.items()
        ],
        "results": [[member, points] for member, points in table.results.items()],
        "team_doubles": list(table.team_doubles),
        "box_offer": (
            None
            if offer is None
            else {
                "members": list(offer.members),
                "leader": offer.leader,
                "everyone": offer.everyone,
            }
        ),
        "answers": [[member, answer.value] for member, answer in table.answers.items()],
        "auto_doubled": table.auto_doubled,
        "resignation": (
            None
            if res is None
            else {
                "member": res.member,
                "by_box": res.by_box,
                "kind": res.kind.value,
                "points": res.points,
            }
        ),
        "record": [chouette_event_to_json(e) for e in table.record] if events else [],
        "history": (
            [[chouette_event_to_json(e) for e in game] for game in table.history] if events else []
        ),
    }


def chouette_from_json(data: dict[str, Any], roller: DiceRoller) -> Chouette:
    """Restore a table from :func:`chouette_to_json`'s data, rolling with ``roller``.

    :raises SnapshotError: data that do not describe a table the rules could reach.
    """
    try:
        if data["version"] != CHOUETTE_SNAPSHOT_VERSION:
            raise SnapshotError(f"unknown chouette snapshot version {data['version']!r}")
        table = Chouette(settings_from_json(data["settings"]), roller)
        table.totals = {_name(n): _int(t) for n, t in data["totals"]}
        table.waiting = [_name(n) for n in data["waiting"]]
        seats = data["seats"]
        table.seats = (
            None
            if seats is None
            else Seats(
                _name(seats["box"]),
                tuple(_name(n) for n in seats["line"]),
                _optional_name(seats["partner"]),
            )
        )
        table.absent = {_name(n) for n in data["absent"]}
        table.proxies = {_name(m): _name(p) for m, p in data["proxies"]}
        table.declined = {_name(n) for n in data["declined"]}
        table.partner_offer = _optional_name(data["partner_offer"])
        table.leaving = {_name(n) for n in data["leaving"]}
        table.game = _count(data["game"])
        table.phase = ChouettePhase(data["phase"])
        table.turn = _player(data["turn"])
        side0, side1 = data["position"]
        table.position = Position.from_counts(side0, side1)
        table.dice = Roll.of(*data["dice"]) if data["dice"] is not None else None
        table.cubes = {
            _name(m): Cube(_count(v), CubeOwner(o), _bool(t)) for m, v, o, t in data["cubes"]
        }
        table.results = {_name(m): _int(p) for m, p in data["results"]}
        table.team_doubles = [_name(n) for n in data["team_doubles"]]
        offer = data["box_offer"]
        table.box_offer = (
            None
            if offer is None
            else BoxOffer(
                tuple(_name(n) for n in offer["members"]),
                _optional_name(offer["leader"]),
                _bool(offer["everyone"]),
            )
        )
        table.answers = {_name(m): Answer(a) for m, a in data["answers"]}
        table.auto_doubled = _bool(data["auto_doubled"])
        res = data["resignation"]
        table.resignation = (
            None
            if res is None
            else ChouetteResignation(
                _name(res["member"]),
                _bool(res["by_box"]),
                WinKind(res["kind"]),
                _count(res["points"]),
            )
        )
        table.record = [chouette_event_from_json(e) for e in data["record"]]
        table.history = [[chouette_event_from_json(e) for e in game] for game in data["history"]]
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise SnapshotError(f"not a valid chouette snapshot: {exc}") from exc
    _check_consistency(table, data)
    table.announced_captain = table.acting_captain() if table.cubes else None
    return table


def _check_consistency(table: Chouette, data: dict[str, Any]) -> None:
    """Refuse a restored table that the rules could never reach."""
    players = table.players
    if len(set(players)) != len(players) or len(table.totals) != len(data["totals"]):
        raise SnapshotError("a player is named twice")
    if not set(players) <= set(table.totals) or sum(table.totals.values()) != 0:
        raise SnapshotError("every player has a total, and the totals sum to 0")
    line = table.line
    if not (table.absent | table.leaving) <= set(players):
        raise SnapshotError("absent and leaving players are at the table")
    if any(m not in line or p not in line for m, p in table.proxies.items()):
        raise SnapshotError("a delegation is between two members of the line")
    waiting = table.phase is ChouettePhase.WAITING
    if waiting == bool(table.cubes) or (not waiting and tuple(table.cubes) != line):
        raise SnapshotError("a game has a cube for each member of the line, and only a game")
    if any(c.value < 1 or c.value & (c.value - 1) for c in table.cubes.values()):
        raise SnapshotError("a cube is a power of two")
    if not set(table.results) <= set(table.cubes) or (not waiting and not table.members_in_game()):
        raise SnapshotError("results are for members of the game, and one is still in")
    if table.partner_offer is not None and (not waiting or table.partner_offer not in line):
        raise SnapshotError("the partner's seat is offered between games to the line")
    if (table.phase is ChouettePhase.MOVE) != (table.dice is not None):
        raise SnapshotError("dice are out exactly while a side must move")
    if table.phase is ChouettePhase.MOVE and not table.moves_required():
        raise SnapshotError("the side with dice has no legal move")
    if not set(table.team_doubles) <= set(table.members_in_game()) or (
        table.phase is ChouettePhase.BOX_ANSWER and not table.team_doubles
    ):
        raise SnapshotError("team doubles are by members still in the game")
    answering = table.phase in (ChouettePhase.TEAM_ANSWER, ChouettePhase.RACCOON)
    offer = table.box_offer
    if answering != (offer is not None) or (
        offer is not None and not set(table.answers) <= set(offer.members)
    ):
        raise SnapshotError("a box double waits for answers exactly in its phases")
    res = table.resignation
    if res is not None and not table.in_game(res.member):
        raise SnapshotError("a resignation is on a cube still in the game")


def _name(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise SnapshotError(f"a player's name is text, not {value!r}")
    return value


def _optional_name(value: object) -> str | None:
    return None if value is None else _name(value)


def _player(value: object) -> Player:
    if not isinstance(value, int) or isinstance(value, bool) or value not in (0, 1):
        raise SnapshotError(f"a side is 0 or 1, not {value!r}")
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise SnapshotError(f"expected a whole number, not {value!r}")
    return value


def _count(value: object) -> int:
    if _int(value) < 0:
        raise SnapshotError(f"expected a whole number of 0 or more, not {value!r}")
    return _int(value)


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise SnapshotError(f"expected true or false, not {value!r}")
    return value
