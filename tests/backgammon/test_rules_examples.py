"""The rules' own examples: bear-off order, the higher-die rule, closed boards, doubles."""

from __future__ import annotations

import pytest

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.errors import IllegalMoveError, IllegalReason
from backgammon.moves import Move, legal_plays, moves_required
from backgammon.notation import format_moves, parse_moves
from backgammon.validate import validate_play

from .helpers import position, side


def _results(pos: Position, roll: str) -> set[tuple[int, ...]]:
    return {p.result.counts(0) for p in legal_plays(pos, 0, Roll.parse(roll))}


def test_six_one_bear_off_may_play_the_one_first() -> None:
    """6-1 with checkers on the 6 and 5 points: 6-5 with the 1, then 5-off with the 6."""
    pos = position({6: 1, 5: 1}, {24: 15})
    results = _results(pos, "61")
    assert tuple(side({5: 1})) in results  # smaller die first: 6-5, 5-off
    assert tuple(side({4: 1})) in results  # 6-off, 5-4
    assert len(results) == 2
    # Either order of the parts is accepted; the order as given is kept when possible.
    play = validate_play(pos, 0, Roll(6, 1), parse_moves("5-off 6-5", Colour.O))
    assert format_moves(play.moves, Colour.O) == "6-5 5-off"


def test_higher_die_must_be_played_when_only_one_can() -> None:
    """Either the 6 or the 5 can be played alone, never both: the 6 it must be."""
    # Mover: one checker on 12, fourteen on 2. The opponent blocks the mover's 1 point
    # (their own 24): 12-7 or 12-6 alone, but neither die can follow the other.
    pos = position({12: 1, 2: 14}, {24: 2, 6: 13})
    plays = legal_plays(pos, 0, Roll(6, 5))
    assert [p.moves for p in plays] == [(Move(12, 6),)]
    with pytest.raises(IllegalMoveError) as error:
        validate_play(pos, 0, Roll(6, 5), [Move(12, 7)])
    assert error.value.reason is IllegalReason.WRONG_DISTANCE
    assert error.value.point == 5


def test_only_the_playable_die_is_played() -> None:
    pos = position({12: 1, 2: 14}, {24: 2, 19: 2, 6: 11})  # 12-6 is blocked too
    plays = legal_plays(pos, 0, Roll(6, 5))
    assert [p.moves for p in plays] == [(Move(12, 7),)]


def test_entering_against_a_closed_board_is_no_move() -> None:
    closed = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 13: 3}
    pos = position({13: 14}, closed, my_bar=1)
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            assert legal_plays(pos, 0, Roll(d1, d2)) == []


def test_bar_checkers_enter_before_anything_else() -> None:
    # One point open (the opponent's 3, the mover's 22): a 3 enters, nothing else moves.
    pos = position({13: 13}, {1: 2, 2: 2, 4: 2, 5: 2, 6: 2, 13: 5}, my_bar=2)
    plays = legal_plays(pos, 0, Roll(3, 3))
    assert moves_required(pos, 0, Roll(3, 3)) == 4
    assert all(p.moves[:2] == (Move(25, 22), Move(25, 22)) for p in plays)
    plays = legal_plays(pos, 0, Roll(3, 5))
    assert [p.moves for p in plays] == [(Move(25, 22),)]  # the second checker stays out


def test_partial_double() -> None:
    """A double that can be played only twice."""
    pos = position({13: 2, 2: 13}, {20: 2, 6: 13})  # 13-9 twice; 9-5 is blocked
    assert moves_required(pos, 0, Roll(4, 4)) == 2
    plays = legal_plays(pos, 0, Roll(4, 4))
    assert [p.moves for p in plays] == [(Move(13, 9), Move(13, 9))]


def test_hitting_sends_a_blot_to_the_bar() -> None:
    pos = position({13: 15}, {20: 1, 6: 14})  # their 20 is the mover's 5? no: mover's 5 is their 20
    play = next(p for p in legal_plays(pos, 0, Roll(6, 2)) if p.moves[0] == Move(13, 7))
    assert play.result.bar(1) == 0
    hit = [p for p in legal_plays(pos, 0, Roll(6, 2)) if p.result.bar(1) == 1]
    assert hit and all(5 in {m.dst for m in p.moves} for p in hit)


def test_hit_and_run_differs_from_passing_by() -> None:
    """Moving 13-8-2 through a blot on 8 hits it; 13-11-2... does not: two plays."""
    pos = position({13: 1, 1: 14}, {17: 1, 6: 14})  # their 17 = mover's 8
    results = [p for p in legal_plays(pos, 0, Roll(5, 6)) if p.result.point(0, 2) == 1]
    assert sorted(p.result.bar(1) for p in results) == [0, 1]


def test_bear_off_with_higher_die_only_from_highest_point() -> None:
    pos = position({4: 1, 2: 1}, {24: 15})
    results = _results(pos, "65")
    assert results == {tuple(side({}))}  # both borne off
    pos = position({6: 1, 2: 1}, {24: 15})
    plays = legal_plays(pos, 0, Roll(5, 4))
    # The 5 cannot bear off the 2 while the 6 point is held; 6-1 and 6-2 and 2-off paths.
    assert all(Move(2, 0) not in p.moves[:1] for p in plays if p.moves[0].src == 2)


def test_cannot_bear_off_with_a_checker_outside() -> None:
    pos = position({7: 1, 3: 14}, {24: 15})
    for play in legal_plays(pos, 0, Roll(1, 3)):
        # The 1 brings the last checker home (7-6); only then may the 3 bear off.
        if Move(3, 0) in play.moves:
            assert play.moves.index(Move(7, 6)) < play.moves.index(Move(3, 0))
