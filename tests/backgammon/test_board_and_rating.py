"""Positions, dice and the FIBS rating formula (§5.2 worked examples)."""

from __future__ import annotations

import pytest

from backgammon.board import Colour, Position, from_absolute, to_absolute
from backgammon.dice import Roll, ScriptedDice, SeededDice, SystemDice
from backgammon.errors import BackgammonError, InvalidPositionError, InvalidRollError
from backgammon.rating import k_factor, rate_match


def test_start_position() -> None:
    start = Position.start()
    assert start.pips(0) == start.pips(1) == 167
    assert start.counts(0)[24] == 2 and start.counts(0)[13] == 5
    assert start.counts(0)[8] == 3 and start.counts(0)[6] == 5
    # The FIBS board of §3.5: X's two back checkers on absolute 1, O's on 24.
    assert start.fibs_board(0) == (
        0,
        -2,
        0,
        0,
        0,
        0,
        5,
        0,
        3,
        0,
        0,
        0,
        -5,
        5,
        0,
        0,
        0,
        -3,
        0,
        -5,
        0,
        0,
        0,
        0,
        2,
        0,
    )


def test_absolute_numbering() -> None:
    assert to_absolute(24, Colour.O) == 24 and to_absolute(24, Colour.X) == 1
    assert from_absolute(1, Colour.X) == 24
    for point in range(1, 25):
        for colour in Colour:
            assert from_absolute(to_absolute(point, colour), colour) == point


@pytest.mark.parametrize(
    ("side0", "side1"),
    [
        ([0] * 26, [15] + [0] * 25),  # no checkers at all
        ([14] + [0] * 25, [15] + [0] * 25),  # fourteen
        ([-1, 16] + [0] * 24, [15] + [0] * 25),  # negative
        ([14, 1] + [0] * 24, [14] + [0] * 23 + [1, 0]),  # both on player 0's point 1
        ([15] * 3, [15] + [0] * 25),  # wrong length
    ],
)
def test_impossible_positions_are_refused(side0: list[int], side1: list[int]) -> None:
    with pytest.raises(InvalidPositionError):
        Position.from_counts(side0, side1)


def test_rolls() -> None:
    assert Roll.parse("31") == Roll.parse("3-1") == Roll(3, 1)
    assert Roll(4, 4).dice == (4, 4, 4, 4) and Roll(6, 1).dice == (6, 1)
    for bad in ("7 1", "3", "abc", "0-1"):
        with pytest.raises(InvalidRollError):
            Roll.parse(bad)
    seeded = SeededDice(3), SeededDice(3)
    assert [seeded[0].die() for _ in range(20)] == [seeded[1].die() for _ in range(20)]
    assert all(1 <= SystemDice().die() <= 6 for _ in range(100))
    script = ScriptedDice((1, 2))
    assert (script.die(), script.die(), script.remaining) == (1, 2, 0)
    with pytest.raises(IndexError):
        script.die()


def test_rating_sample_of_the_spec() -> None:
    """§5.2 example 1: 3-point match, favourite myself (exp 2761) beats someplayer (187)."""
    change = rate_match(3, 1500 + 155.634835, 2761, 1500, 187)
    assert f"{change.upset_probability:.6f}" == "0.423029"
    assert f"{change.winner_change:.6f}" == "2.930831"
    assert f"{change.loser_change:.6f}" == "-9.173502"
    assert (change.winner_k, round(change.loser_k, 2)) == (1.0, 3.13)
    assert (change.winner_experience, change.loser_experience) == (2764, 190)


def test_rating_new_players() -> None:
    change = rate_match(5, 1500, 0, 1500, 0)
    assert f"{change.winner_rating:.2f} {change.loser_rating:.2f}" == "1522.36 1477.64"
    change = rate_match(1, 1500, 0, 1500, 0)
    assert f"{change.winner_change:.2f}" == "10.00"


def test_rating_underdog_and_favourite() -> None:
    upset = rate_match(7, 1550, 120, 1700, 600)
    assert f"{upset.winner_change:.2f} {upset.loser_change:.2f}" == "24.62 -6.48"
    expected = rate_match(7, 1700, 600, 1550, 120)
    assert f"{expected.winner_change:.2f} {expected.loser_change:.2f}" == "4.10 -15.59"


def test_k_factor_and_unlimited() -> None:
    assert (k_factor(0), k_factor(187), k_factor(400), k_factor(5000)) == (5.0, 3.13, 1.0, 1.0)
    with pytest.raises(BackgammonError):
        rate_match(0, 1500, 0, 1500, 0)
