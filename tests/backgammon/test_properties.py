"""Property tests: invariants of positions, plays, validation, IDs and snapshots."""

from __future__ import annotations

import json
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from backgammon.board import BAR, OFF, Position
from backgammon.dice import Roll, SeededDice
from backgammon.errors import IllegalMoveError
from backgammon.match import Action, Match, MatchOptions
from backgammon.moves import Move, legal_plays, legal_results, result_key
from backgammon.notation import (
    MatchIdState,
    decode_match_id,
    decode_position_id,
    encode_match_id,
    encode_position_id,
)
from backgammon.snapshot import match_from_json, match_to_json
from backgammon.validate import validate_play


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any legal position: fifteen checkers a side, no point shared."""
    first = [0] * 26
    for _ in range(15):
        first[draw(st.sampled_from(range(26)))] += 1
    free = [i for i in range(26) if i in (OFF, BAR) or not first[25 - i]]
    second = [0] * 26
    for _ in range(15):
        second[draw(st.sampled_from(free))] += 1
    return Position.from_counts(first, second)


rolls = st.builds(Roll, st.integers(1, 6), st.integers(1, 6))


@settings(max_examples=300, deadline=None)
@given(positions(), rolls)
def test_plays_keep_fifteen_checkers_and_drop_pips_exactly(pos: Position, roll: Roll) -> None:
    for play in legal_plays(pos, 0, roll):
        for player in (0, 1):
            assert sum(play.result.counts(player)) == 15
        pips_moved = sum(m.src - m.dst for m in play.moves)
        # Over-bearing (a 6 from the 4 point) moves fewer pips than the die.
        assert pos.pips(0) - play.result.pips(0) == pips_moved
        assert pips_moved <= sum(roll.dice)
        hits = play.result.bar(1) - pos.bar(1)
        assert play.result.pips(1) - pos.pips(1) >= 0 and hits >= 0


@settings(max_examples=200, deadline=None)
@given(positions(), rolls)
def test_every_play_is_accepted_and_its_mutations_refused(pos: Position, roll: Roll) -> None:
    plays = legal_plays(pos, 0, roll)
    results = {p.result for p in plays}
    assert len(results) == len(plays)
    legal = legal_results(pos, 0, roll)
    assert legal.keys == {result_key(pos, 0, r) for r in results}
    assert legal.required == (len(plays[0].moves) if plays else 0)
    for play in plays:
        for order in set(permutations(play.moves)):
            assert validate_play(pos, 0, roll, order, legal).result == play.result
        for mutation in _mutations(play.moves):
            try:
                accepted = validate_play(pos, 0, roll, mutation, legal)
            except IllegalMoveError:
                continue
            # A mutation may happen to be another legal play; then it must be one.
            assert accepted.result in results


def _mutations(moves: tuple[Move, ...]) -> list[tuple[Move, ...]]:
    out: list[tuple[Move, ...]] = [moves[:-1], (*moves, moves[-1])]
    for i, (src, dst) in enumerate(moves):
        for delta in (-1, 1):
            if 0 <= dst + delta < src:
                out.append((*moves[:i], Move(src, dst + delta), *moves[i + 1 :]))
            if dst < src + delta <= 25:
                out.append((*moves[:i], Move(src + delta, dst), *moves[i + 1 :]))
    return out


@given(positions(), st.integers(0, 1))
def test_position_id_round_trips(pos: Position, on_roll: int) -> None:
    text = encode_position_id(pos, on_roll)
    assert len(text) == 14
    assert decode_position_id(text, on_roll) == pos
    assert encode_position_id(pos.swapped(), 1 - on_roll) == text


@given(positions(), st.sampled_from([0, 1]))
def test_fibs_board_round_trips(pos: Position, o_player: int) -> None:
    assert Position.from_fibs_board(pos.fibs_board(o_player), o_player) == pos


@given(
    st.builds(
        MatchIdState,
        cube=st.sampled_from([1, 2, 4, 8, 64]),
        cube_owner=st.sampled_from([None, 0, 1]),
        on_roll=st.integers(0, 1),
        crawford=st.booleans(),
        turn=st.integers(0, 1),
        double_offered=st.booleans(),
        resigned=st.integers(0, 3),
        dice=st.tuples(st.integers(0, 6), st.integers(0, 6)),
        length=st.integers(0, 99),
        score=st.tuples(st.integers(0, 99), st.integers(0, 99)),
    )
)
def test_match_id_round_trips(state: MatchIdState) -> None:
    assert decode_match_id(encode_match_id(state)) == state


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 60), st.sampled_from([0, 1, 3, 5]))
def test_snapshots_round_trip_at_any_moment(seed: int, steps: int, length: int) -> None:
    options = MatchOptions(length=length, instant_redoubles=None if length == 0 else 0)
    match = Match(options, SeededDice(seed))
    match.start_game()
    chooser = SeededDice(seed + 1)
    for _ in range(steps):
        player = match.to_act
        if player is None:
            if Action.START_GAME not in match.allowed(0):
                break
            match.start_game()
            continue
        allowed = sorted(match.allowed(player), key=lambda a: a.value)
        action = allowed[chooser.die() % len(allowed)]
        if action is Action.MOVE:
            match.move(player, match.legal_plays()[0].moves)
        elif action is Action.RESIGN:
            continue
        else:
            getattr(match, action.value)(player)
        data = json.loads(json.dumps(match_to_json(match)))
        assert match_to_json(match_from_json(data, SeededDice(seed))) == data
