"""A finished match step by step for the web page (D377, protocol/match_replay.py):
seeded matches with cube actions, beavers and resignations, played through the rules
core while the position after every play and the cube after every action are noted;
the replay built from the stored snapshot shows exactly those."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from backgammon.board import Position
from backgammon.dice import SeededDice
from backgammon.events import TurnPassed, WinKind
from backgammon.match import Action, Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from protocol.mat_export import snapshot_to_mat
from protocol.match_replay import replay_json


def _played(seed: int, options: MatchOptions) -> tuple[Match, list[list[Any]]]:
    """A match with random plays and cube actions, and per game what the replay must
    show: for each play (or roll not played) the board after it, for each take the
    cube and its owner."""
    rng = random.Random(seed)
    match = Match(options, SeededDice(seed), o_player=rng.randint(0, 1))
    match.start_game()
    seen: list[list[Any]] = [[]]
    for _ in range(20_000):
        if match.phase is Phase.MATCH_OVER:
            break
        if match.phase is Phase.GAME_OVER:
            if not options.length and len(match.history) >= 3:
                break
            match.start_game()
            seen.append([])
            continue
        player = match.to_act
        assert player is not None
        allowed = match.allowed(player)
        if match.resignation is not None:
            match.accept_resignation(player)
        elif Action.RESIGN in allowed and rng.random() < 0.02:
            match.resign(player, rng.choice(list(WinKind)))
        elif match.phase is Phase.DOUBLED:
            if Action.REDOUBLE in allowed and rng.random() < 0.2:
                match.redouble(player)
            elif rng.random() < 0.8:
                match.take(player)
                seen[-1].append(("cube", match.cube, player))
            else:
                match.drop(player)
        elif match.phase is Phase.TURN:
            if Action.DOUBLE in allowed and match.cube < 16 and rng.random() < 0.08:
                match.double(player)
            else:
                if any(isinstance(e, TurnPassed) for e in match.roll(player)):  # not playable
                    seen[-1].append(("board", match.position.fibs_board(match.o_player)))
        else:
            match.move(player, rng.choice(match.legal_plays()).moves)
            seen[-1].append(("board", match.position.fibs_board(match.o_player)))
    return match, seen


@pytest.mark.parametrize(
    "options",
    [MatchOptions(length=5), MatchOptions(length=0, instant_redoubles=2, auto_doubles=1)],
    ids=["5-point", "money with beavers"],
)
@pytest.mark.parametrize("seed", range(6))
def test_the_replay_shows_every_position_of_the_match(seed: int, options: MatchOptions) -> None:
    match, seen = _played(seed, options)
    snapshot = json.dumps(
        {"version": 1, "players": ["alice", "bob"], "started_at": 1, "match": match_to_json(match)}
    )
    found = json.loads(
        replay_json(
            snapshot,
            match_id=7,
            players=("alice", "bob"),
            score=(match.score[0], match.score[1]),
            winner=None,
            started_at=1,
            ended_at=2,
            site="here",
        )
    )
    assert found["match"] == 7 and found["players"] == ["alice", "bob"]
    assert found["length"] == (options.length or None)
    assert found["mat"] == snapshot_to_mat(snapshot, site="here")
    assert len(found["games"]) == len(seen)
    for game, expected in zip(found["games"], seen, strict=True):
        steps = game["steps"]
        shown: list[Any] = []
        for step in steps:
            if step["kind"] in ("move", "cannot"):
                shown.append(("board", tuple(step["board"])))
            elif step["kind"] == "take":
                shown.append(("cube", step["cube"], step["player"]))
                assert step["owner"] == step["player"]
            assert sum(abs(n) for n in step["board"]) + sum(step["off"]) == 30
        assert shown == expected
        assert game["start"] == list(Position.start().fibs_board(game["o"]))
    last = found["games"][-1]["steps"][-1]
    if options.length:
        assert last == {**last, "kind": "win", "match": True}
