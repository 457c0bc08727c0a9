"""Submitted plays: accepted in any order, refused with the reason FIBS names."""

from __future__ import annotations

import pytest

from backgammon.board import Colour
from backgammon.dice import Roll
from backgammon.errors import IllegalMoveError, IllegalReason
from backgammon.moves import Move, legal_plays
from backgammon.notation import parse_moves
from backgammon.validate import validate_play

from .helpers import position

START = position({24: 2, 13: 5, 8: 3, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5})


def refuse(pos: object, roll: Roll, text: str) -> IllegalMoveError:
    with pytest.raises(IllegalMoveError) as error:
        validate_play(pos, 0, roll, parse_moves(text, Colour.O))  # type: ignore[arg-type]
    return error.value


def test_every_order_of_every_legal_play_is_accepted() -> None:
    for roll in (Roll(3, 1), Roll(6, 5), Roll(4, 4)):
        for play in legal_plays(START, 0, roll):
            accepted = validate_play(START, 0, roll, tuple(reversed(play.moves)))
            assert accepted.result == play.result


@pytest.mark.parametrize(
    ("text", "reason", "index", "point", "count"),
    [
        ("13-10", IllegalReason.TOO_FEW, 0, None, 2),
        ("13-10 10-9 6-5", IllegalReason.TOO_MANY, 0, None, 2),
        ("13-10 7-6", IllegalReason.NO_CHECKER, 1, 7, 0),
        ("13-11 13-12", IllegalReason.WRONG_DISTANCE, 0, 2, 0),
        ("13-10 10-11", IllegalReason.BACKWARDS, 1, None, 0),
        ("6-off 8-7", IllegalReason.NOT_ALL_HOME, 0, 6, 0),
    ],
)
def test_refusals_name_the_reason(
    text: str, reason: IllegalReason, index: int, point: int | None, count: int
) -> None:
    error = refuse(START, Roll(3, 1), text)
    assert (error.reason, error.index, error.point, error.count) == (reason, index, point, count)


def test_blocked_point() -> None:
    error = refuse(START, Roll(5, 3), "13-10 24-19")  # 19 is the opponent's 6 point
    assert (error.reason, error.index, error.point) == (IllegalReason.BLOCKED, 1, 19)


def test_must_enter_first() -> None:
    pos = position({13: 14}, {6: 15}, my_bar=1)
    error = refuse(pos, Roll(3, 1), "13-10 13-12")
    assert (error.reason, error.index) == (IllegalReason.MUST_ENTER, 0)
    assert validate_play(pos, 0, Roll(3, 1), parse_moves("bar-24 13-10", Colour.O))


def test_cannot_bear_off_a_lower_checker_with_a_higher_die() -> None:
    pos = position({6: 1, 2: 1}, {24: 15})
    error = refuse(pos, Roll(5, 1), "2-off 6-5")
    assert (error.reason, error.index, error.point) == (IllegalReason.CANNOT_BEAR_OFF, 0, 2)


def test_bear_off_needs_a_big_enough_die() -> None:
    pos = position({6: 2, 2: 1}, {24: 15})
    error = refuse(pos, Roll(2, 1), "6-off 6-5")
    assert (error.reason, error.point) == (IllegalReason.WRONG_DISTANCE, 6)


def test_x_moves_in_absolute_numbers() -> None:
    # Player 0 as X: X's own 24 is absolute 1, so "1-4 1-2" is the own "24-21 24-23".
    play = validate_play(START, 0, Roll(3, 1), parse_moves("1-4 1-2", Colour.X))
    assert play.moves == (Move(24, 21), Move(24, 23))
