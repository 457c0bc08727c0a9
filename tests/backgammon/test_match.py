"""The match state machine: turns, cube, resignations, scoring, Crawford, Holland, Jacoby."""

from __future__ import annotations

import json
from typing import Any

import pytest

from backgammon.dice import Roll, ScriptedDice, SeededDice
from backgammon.errors import ActionError, IllegalMoveError, Refusal, SnapshotError
from backgammon.events import (
    AutoDoubled,
    CubeDropped,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    GameEnd,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    TurnPassed,
    WinKind,
)
from backgammon.match import Action, Match, MatchOptions, MatchOptionsError, Phase
from backgammon.moves import Move
from backgammon.notation import decode_match_id, decode_position_id
from backgammon.snapshot import match_from_json, match_to_json

from .helpers import side


def at(
    *,
    mine: list[int],
    theirs: list[int],
    options: MatchOptions | None = None,
    turn: int = 0,
    phase: Phase = Phase.TURN,
    dice: tuple[int, int] | None = None,
    score: tuple[int, int] = (0, 0),
    cube: int = 1,
    owner: int | None = None,
    dice_script: tuple[int, ...] = (),
    **extra: Any,
) -> Match:
    """A match restored from a hand-made snapshot: player 0 has ``mine``."""
    match = Match(options or MatchOptions(length=7), ScriptedDice(()))
    data = match_to_json(match)
    data.update(
        game=1,
        position=[mine, theirs],
        phase=phase.value,
        turn=turn,
        dice=list(dice) if dice else None,
        score=list(score),
        cube=cube,
        cube_owner=owner,
        **extra,
    )
    return match_from_json(data, ScriptedDice(dice_script))


def test_opening_roll_ties_and_first_move() -> None:
    match = Match(MatchOptions(length=3), ScriptedDice((4, 4, 2, 6)))
    events = match.start_game()
    assert events == [
        GameStarted(1, 0, False, (0, 0)),
        OpeningRoll((4, 4), None),
        OpeningRoll((2, 6), 1),
    ]
    assert match.phase is Phase.MOVE and match.turn == 1
    assert match.dice == Roll(6, 2)  # the starter's die first
    assert match.allowed(1) == {Action.MOVE, Action.RESIGN}
    assert match.allowed(0) == {Action.RESIGN}


def test_a_turn_roll_move_pass() -> None:
    match = Match(MatchOptions(length=3), ScriptedDice((6, 2, 3, 1)))
    match.start_game()  # player 0 starts with 6-2
    with pytest.raises(ActionError) as error:
        match.roll(0)
    assert error.value.reason is Refusal.ALREADY_ROLLED
    with pytest.raises(ActionError) as error:
        match.move(1, [Move(24, 18)])
    assert error.value.reason is Refusal.NOT_YOUR_TURN
    events = match.move(0, [Move(24, 18), Move(13, 11)])
    assert events[0].moves == (Move(24, 18), Move(13, 11))  # type: ignore[union-attr]
    assert match.phase is Phase.TURN and match.turn == 1
    assert match.allowed(1) == {Action.ROLL, Action.DOUBLE, Action.RESIGN}
    with pytest.raises(ActionError) as error:
        match.move(1, [Move(8, 5), Move(6, 5)])
    assert error.value.reason is Refusal.MUST_ROLL
    events = match.roll(1)
    assert events == [DiceRolled(1, Roll(3, 1), 2)]
    match.move(1, [Move(8, 5), Move(6, 5)])
    assert match.turn == 0


def test_illegal_move_changes_nothing() -> None:
    match = Match(MatchOptions(length=3), ScriptedDice((6, 2)))
    match.start_game()
    before = match_to_json(match)
    with pytest.raises(IllegalMoveError):
        match.move(0, [Move(24, 18), Move(13, 12)])
    assert match_to_json(match) == before


def test_turn_passes_when_no_move_is_possible_and_the_barred_player_may_double() -> None:
    closed = side({1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3})
    match = at(mine=side({13: 14}, bar=1), theirs=closed, dice_script=(6, 5))
    assert match.may_double(0)  # on the bar against a closed board, doubling is fine
    events = match.roll(0)
    assert events == [DiceRolled(0, Roll(6, 5), 0), TurnPassed(0)]
    assert match.turn == 1 and match.phase is Phase.TURN


@pytest.mark.parametrize(
    ("theirs", "kind", "points"),
    [
        (side({6: 14}), WinKind.SINGLE, 2),  # one of theirs is off
        (side({6: 15}), WinKind.GAMMON, 4),
        (side({6: 14, 20: 1}), WinKind.BACKGAMMON, 6),  # one in the winner's home board
        (side({6: 14}, bar=1), WinKind.BACKGAMMON, 6),  # one on the bar
    ],
)
def test_single_gammon_backgammon(theirs: list[int], kind: WinKind, points: int) -> None:
    match = at(mine=side({1: 1}), theirs=theirs, phase=Phase.MOVE, dice=(3, 1), cube=2, owner=1)
    events = match.move(0, [Move(1, 0)])
    won = events[-1]
    assert isinstance(won, GameWon)
    assert (won.kind, won.points, won.end) == (kind, points, GameEnd.BORNE_OFF)
    assert match.score == [points, 0] and match.phase is Phase.GAME_OVER


def test_match_won_at_the_length() -> None:
    match = at(mine=side({1: 1}), theirs=side({6: 14}), phase=Phase.MOVE, dice=(3, 1), score=(6, 2))
    events = match.move(0, [Move(1, 0)])
    assert events[-1] == MatchWon(0, (7, 2))
    assert match.phase is Phase.MATCH_OVER
    assert match.allowed(0) == frozenset() and match.allowed(1) == frozenset()
    with pytest.raises(ActionError) as error:
        match.start_game()
    assert error.value.reason is Refusal.MATCH_OVER


def test_double_take_and_the_doubler_rolls() -> None:
    match = at(mine=side({13: 15}), theirs=side({13: 15}), dice_script=(5, 2))
    match.double(0)
    assert match.phase is Phase.DOUBLED and match.to_act == 1
    assert match.allowed(1) == {Action.TAKE, Action.DROP, Action.RESIGN}
    assert match.allowed(0) == {Action.RESIGN}
    assert not match.cube_available(0) and not match.cube_available(1)
    events = match.take(1)
    assert events[0] == CubeTaken(1, 2, False)
    assert events[1] == DiceRolled(0, Roll(5, 2), 2)
    assert match.cube == 2 and match.cube_owner == 1
    assert match.cube_available(1) and not match.cube_available(0)


def test_dropped_redouble_loses_the_value_before_it() -> None:
    match = at(mine=side({13: 15}), theirs=side({13: 15}), cube=2, owner=1, turn=1)
    match.double(1)  # the owner redoubles to 4
    events = match.drop(0)
    assert events[0] == CubeDropped(0, 2)
    assert isinstance(events[1], GameWon)
    assert (events[1].winner, events[1].points, events[1].end) == (1, 2, GameEnd.DROPPED)


def test_only_the_owner_redoubles() -> None:
    match = at(mine=side({13: 15}), theirs=side({13: 15}), cube=2, owner=1, turn=0)
    with pytest.raises(ActionError) as error:
        match.double(0)
    assert error.value.reason is Refusal.NOT_OWNER


def test_crawford_example_of_the_spec() -> None:
    """5-point match: 0-3, then 0-4 is the Crawford game without cube, at 1-4 the cube is back."""
    options = MatchOptions(length=5)
    dice = (6, 2) * 3
    match = at(
        mine=side({13: 14}),
        theirs=side({1: 1}),
        phase=Phase.MOVE,
        dice=(2, 1),
        turn=1,
        score=(0, 3),
        options=options,
        dice_script=dice,
    )
    match.move(1, [Move(1, 0)])
    assert match.score == [0, 4]
    events = match.start_game()
    assert events[0] == GameStarted(2, 1, True, (0, 4))
    assert match.crawford_game
    match.move(match.turn, [Move(24, 18), Move(13, 11)])
    with pytest.raises(ActionError) as error:
        match.double(match.turn)
    assert error.value.reason is Refusal.CRAWFORD
    assert not match.cube_available(0) and not match.cube_available(1)
    # Player 0 wins the Crawford game: 1-4, and the cube is back.
    match.resign(1, WinKind.SINGLE)
    match.accept_resignation(0)
    assert match.score == [1, 4]
    match.start_game()
    assert not match.crawford_game and match.post_crawford
    match.move(match.turn, [Move(24, 18), Move(13, 11)])
    assert match.may_double(match.turn)


def test_no_crawford_when_the_option_is_off() -> None:
    match = at(
        mine=side({13: 14}),
        theirs=side({1: 1}),
        phase=Phase.MOVE,
        dice=(2, 1),
        turn=1,
        score=(0, 3),
        options=MatchOptions(length=5, crawford=False),
        dice_script=(6, 2),
    )
    match.move(1, [Move(1, 0)])
    match.start_game()
    assert not match.crawford_game


def test_holland_rule_timing() -> None:
    options = MatchOptions(length=5, holland=True)
    # Post-Crawford game, player 0 trails 2-4.
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        options=options,
        score=(2, 4),
        crawford_played=True,
        rolls=[1, 1],
    )
    with pytest.raises(ActionError) as error:
        match.double(0)
    assert error.value.reason is Refusal.HOLLAND
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        options=options,
        score=(2, 4),
        crawford_played=True,
        rolls=[2, 2],
    )
    assert match.may_double(0)
    # Without the Holland rule the trailer may double at once.
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        options=MatchOptions(length=5),
        score=(2, 4),
        crawford_played=True,
        rolls=[0, 1],
    )
    assert match.may_double(0)


def test_dead_cube_doubles_follow_fibs_by_default() -> None:
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        options=MatchOptions(length=5),
        score=(4, 2),
        crawford_played=True,
        turn=0,
    )
    assert match.may_double(0)  # FIBS lets the leader double post-Crawford
    strict = MatchOptions(length=5, dead_cube_doubles=False)
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        options=strict,
        score=(4, 2),
        crawford_played=True,
        turn=0,
    )
    with pytest.raises(ActionError) as error:
        match.double(0)
    assert error.value.reason is Refusal.DEAD_CUBE


def test_jacoby_gammon_counts_single_until_the_cube_is_turned() -> None:
    jacoby = MatchOptions(jacoby=True)
    match = at(
        mine=side({1: 1}), theirs=side({6: 15}), options=jacoby, phase=Phase.MOVE, dice=(3, 1)
    )
    won = match.move(0, [Move(1, 0)])[-1]
    assert isinstance(won, GameWon) and (won.kind, won.points) == (WinKind.GAMMON, 1)
    match = at(
        mine=side({1: 1}),
        theirs=side({6: 15}),
        options=jacoby,
        phase=Phase.MOVE,
        dice=(3, 1),
        cube=2,
        owner=1,
        cube_turned=True,
    )
    won = match.move(0, [Move(1, 0)])[-1]
    assert isinstance(won, GameWon) and won.points == 4


def test_beaver_and_raccoon_values() -> None:
    options = MatchOptions(instant_redoubles=2)
    match = at(mine=side({13: 15}), theirs=side({13: 15}), options=options, dice_script=(4, 1))
    match.double(0)
    assert match.allowed(1) == {Action.TAKE, Action.DROP, Action.REDOUBLE, Action.RESIGN}
    assert match.redouble(1) == [CubeRedoubled(1, 4, 1)]  # beaver
    assert match.to_act == 0
    assert match.redouble(0) == [CubeRedoubled(0, 8, 2)]  # raccoon
    with pytest.raises(ActionError) as error:
        match.redouble(1)
    assert error.value.reason is Refusal.REDOUBLE_LIMIT
    events = match.take(1)
    assert events[0] == CubeTaken(1, 8, True)
    assert match.cube == 8 and match.cube_owner == 1
    assert isinstance(events[1], DiceRolled) and events[1].player == 0


def test_dropping_a_beaver_loses_the_doubled_value() -> None:
    options = MatchOptions(instant_redoubles=1)
    match = at(mine=side({13: 15}), theirs=side({13: 15}), options=options)
    match.double(0)
    match.redouble(1)
    events = match.drop(0)
    assert events[0] == CubeDropped(0, 2)


def test_instant_redoubles_only_in_unlimited_matches() -> None:
    match = at(mine=side({13: 15}), theirs=side({13: 15}))
    match.double(0)
    with pytest.raises(ActionError) as error:
        match.redouble(1)
    assert error.value.reason is Refusal.REDOUBLES_UNLIMITED_ONLY
    with pytest.raises(MatchOptionsError):
        MatchOptions(length=5, instant_redoubles=1)
    with pytest.raises(MatchOptionsError):
        MatchOptions(length=5, jacoby=True)


def test_automatic_doubles_with_a_limit() -> None:
    match = Match(MatchOptions(auto_doubles=1), ScriptedDice((3, 3, 5, 5, 1, 2)))
    events = match.start_game()
    assert events[1:] == [
        OpeningRoll((3, 3), None),
        AutoDoubled(2),
        OpeningRoll((5, 5), None),  # the limit is reached: no second automatic double
        OpeningRoll((1, 2), 1),
    ]
    assert match.cube == 2 and match.cube_owner is None


def test_resignations_accepted_and_rejected() -> None:
    match = at(mine=side({13: 15}), theirs=side({13: 15}), cube=2, owner=0)
    match.resign(1, WinKind.GAMMON)
    assert match.to_act == 0
    assert match.allowed(0) == {Action.ACCEPT_RESIGNATION, Action.REJECT_RESIGNATION}
    with pytest.raises(ActionError) as error:
        match.roll(0)
    assert error.value.reason is Refusal.RESIGN_PENDING_THEIRS
    with pytest.raises(ActionError) as error:
        match.resign(1, WinKind.SINGLE)
    assert error.value.reason is Refusal.ALREADY_RESIGNED
    match.reject_resignation(0)
    assert match.phase is Phase.TURN and match.allowed(0) >= {Action.ROLL}
    match.resign(1, WinKind.BACKGAMMON)
    events = match.accept_resignation(0)
    won = events[-1]
    assert isinstance(won, GameWon)
    assert (won.winner, won.kind, won.points, won.end) == (
        0,
        WinKind.BACKGAMMON,
        6,
        GameEnd.RESIGNED,
    )


def test_colours_swap_every_game() -> None:
    match = Match(MatchOptions(length=0), SeededDice(1), o_player=1)
    assert match.start_game()[0] == GameStarted(1, 1, False, (0, 0))
    match.resign(0, WinKind.SINGLE)
    match.accept_resignation(1)
    assert match.start_game()[0] == GameStarted(2, 0, False, (0, 1))


def test_snapshot_round_trips_through_json_mid_match() -> None:
    match = Match(MatchOptions(length=5), SeededDice(9))
    match.start_game()
    for _ in range(6):
        player = match.to_act
        assert player is not None
        if Action.ROLL in match.allowed(player):
            match.roll(player)
        elif Action.MOVE in match.allowed(player):
            match.move(player, match.legal_plays()[0].moves)
    data = json.loads(json.dumps(match_to_json(match)))
    restored = match_from_json(data, SeededDice(9))
    assert match_to_json(restored) == match_to_json(match)
    assert restored.position == match.position and restored.legal_plays() == match.legal_plays()


@pytest.mark.parametrize(
    "change",
    [
        {"version": 99},
        {"phase": "dancing"},
        {"turn": 2},
        {"cube": 3},
        {"position": [[15] + [0] * 25, [0] * 26]},
        {"dice": [7, 1], "phase": "move"},
        {"phase": "move", "dice": None},
        {"record": [{"type": "Nonsense"}]},
    ],
)
def test_bad_snapshots_are_refused(change: dict[str, Any]) -> None:
    data = match_to_json(Match(MatchOptions(length=3), SeededDice(1)))
    data.update(change)
    with pytest.raises(SnapshotError):
        match_from_json(data, SeededDice(1))


def test_match_and_position_ids() -> None:
    match = at(
        mine=side({13: 15}),
        theirs=side({13: 15}),
        score=(2, 4),
        cube=4,
        owner=1,
        phase=Phase.MOVE,
        dice=(5, 3),
    )
    assert decode_position_id(match.position_id(), on_roll=0) == match.position
    state = decode_match_id(match.match_id())
    assert (state.length, state.score, state.cube, state.cube_owner, state.dice) == (
        7,
        (2, 4),
        4,
        1,
        (5, 3),
    )
