"""A finished match step by step, for the web page's page of a finished match (D377).

``match! <id>`` answers one line of JSON (:func:`replay_json`): the match (players,
length, score, winner, times, its Jellyfish ``.mat`` text) and every game as its
steps, each a play, a roll that could not be played or a cube action, with the
position after it as the 26 signed numbers of a ``board:`` line (§3.1: O positive,
``[25]`` O's bar, ``[0]`` X's), so the page draws any step with its own board without
replaying the rules. The games are read from the stored snapshot through
:func:`protocol.game_record.game_turns`, the walk the ``.mat`` export and ``oldmoves``
use, so the three never disagree about what was played.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from backgammon.board import Colour, Player, Position
from backgammon.events import AutoDoubled, Event
from backgammon.moves import apply_moves
from backgammon.notation import format_moves
from protocol.game_record import Cube, CubeAction, Played, Unplayed, Won, game_start, game_turns
from protocol.mat_export import format_mat, transcript_from_snapshot

__all__ = ["compact_json", "game_steps", "replay_json"]


def compact_json(found: object) -> str:
    """One line of JSON without spaces, as ``match!`` and ``profile!`` answer (D377)."""
    return json.dumps(found, separators=(",", ":"))


def _board(position: Position, o_player: Player) -> dict[str, Any]:
    return {
        "board": list(position.fibs_board(o_player)),
        "off": [position.off(0), position.off(1)],
    }


def game_steps(events: Sequence[Event], o_player: Player) -> dict[str, Any]:
    """One game: who is O, the score at its start, the Crawford flag, the starting
    position and each step with the position and the cube after it."""
    started = game_start(events)
    if started is not None:
        o_player = started.o_player
    colours = {o_player: Colour.O, 1 - o_player: Colour.X}
    position = Position.start()
    cube = max((e.cube for e in events if isinstance(e, AutoDoubled)), default=1)
    owner: Player | None = None
    steps: list[dict[str, Any]] = []
    for turn in game_turns(events):
        step: dict[str, Any] = {"player": turn.player}
        match turn:
            case Played(player=player, roll=roll, moves=moves):
                position, _hits = apply_moves(position, player, moves)
                step |= {"kind": "move" if moves else "cannot", "dice": [roll.d1, roll.d2]}
                step["text"] = format_moves(moves, colours[player])
            case Unplayed(roll=roll):
                step |= {"kind": "unplayed", "dice": [roll.d1, roll.d2]}
            case Cube(player=player, action=action, value=value):
                step["kind"] = action.value
                if value:
                    step["value"] = value
                if action is CubeAction.TAKE:
                    cube, owner = value, player
                elif action is CubeAction.REDOUBLE:  # taken, and doubled again at once
                    cube, owner = value // 2, player
            case Won(points=points, match=ended):
                step |= {"kind": "win", "points": points, "match": ended}
        steps.append(step | _board(position, o_player) | {"cube": cube, "owner": owner})
    return {
        "o": o_player,
        "score": list(started.score) if started is not None else [0, 0],
        "crawford": bool(started.crawford) if started is not None else False,
        "start": _board(Position.start(), o_player)["board"],
        "steps": steps,
    }


def replay_json(
    snapshot: str,
    *,
    match_id: int,
    players: tuple[str, str],
    score: tuple[int, int],
    winner: str | None,
    started_at: int,
    ended_at: int,
    site: str | None = None,
) -> str:
    """The line of JSON ``match! <id>`` answers (D377); the players in the record's
    order, which is the snapshot's.

    :raises SnapshotError: the snapshot is not one this server can read.
    """
    transcript = transcript_from_snapshot(snapshot, site=site)
    if transcript.started_at is None:
        transcript = dataclasses.replace(transcript, started_at=started_at)
    games = []
    o_player: Player = 0
    for events in transcript.games:
        game = game_steps(events, o_player)
        o_player = game["o"]
        games.append(game)
    found = {
        "match": match_id,
        "players": list(players),
        "length": transcript.length or None,
        "score": list(score),
        "winner": winner,
        "started": started_at,
        "ended": ended_at,
        "games": games,
        "mat": format_mat(transcript),
    }
    return compact_json(found)
