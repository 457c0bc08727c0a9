"""FIBS move text, Position IDs and Match IDs: known values and errors."""

from __future__ import annotations

import pytest

from backgammon.board import Colour, Position
from backgammon.errors import InvalidIdError, MoveSyntaxError
from backgammon.moves import Move
from backgammon.notation import (
    GameState,
    decode_match_id,
    decode_position_id,
    encode_match_id,
    encode_position_id,
    format_moves,
    parse_moves,
)


def test_start_position_id() -> None:
    assert encode_position_id(Position.start(), 0) == "4HPwATDgc/ABMA"
    assert decode_position_id("4HPwATDgc/ABMA") == Position.start()


@pytest.mark.parametrize("bad", ["", "4HPwATDgc/ABM", "4HPwATDgc/AB!A", "//////////////"])
def test_bad_position_ids(bad: str) -> None:
    with pytest.raises(InvalidIdError):
        decode_position_id(bad)


def test_gnubg_manual_match_id() -> None:
    state = decode_match_id("cAkAAAAAAAAA")
    assert (state.cube, state.cube_owner, state.on_roll, state.turn) == (1, None, 1, 1)
    assert state.state is GameState.PLAYING and state.length == 0
    assert encode_match_id(state) == "cAkAAAAAAAAA"


@pytest.mark.parametrize("bad", ["", "cAkAAAAAAAA", "cAkAAAAAAA!A", "cAgAAAAAAAAA"[:11] + "?"])
def test_bad_match_ids(bad: str) -> None:
    with pytest.raises(InvalidIdError):
        decode_match_id(bad)


@pytest.mark.parametrize(
    ("text", "colour", "moves"),
    [
        ("move 13-7 8-7", Colour.O, (Move(13, 7), Move(8, 7))),
        ("m 13 7 8 7", Colour.O, (Move(13, 7), Move(8, 7))),
        ("13-7 8-7", Colour.O, (Move(13, 7), Move(8, 7))),
        ("bar-22", Colour.O, (Move(25, 22),)),
        ("move bar-5 bar 5 bar - 5 bar -5", Colour.X, (Move(25, 20),) * 4),
        (
            "b-22 6-off 5-o 4-home 3-h",
            Colour.O,
            (Move(25, 22), Move(6, 0), Move(5, 0), Move(4, 0), Move(3, 0)),
        ),
        ("24-off 22-off", Colour.X, (Move(1, 0), Move(3, 0))),
        ("25-22 6-0", Colour.O, (Move(25, 22), Move(6, 0))),
        ("0-3 22-25", Colour.X, (Move(25, 22), Move(3, 0))),
        ("MOVE 13-7", Colour.O, (Move(13, 7),)),
    ],
)
def test_parse_moves(text: str, colour: Colour, moves: tuple[Move, ...]) -> None:
    assert parse_moves(text, colour) == moves


def test_format_moves_is_what_fibs_announces() -> None:
    assert format_moves((Move(8, 5), Move(6, 5)), Colour.O) == "8-5 6-5"
    assert format_moves((Move(25, 24), Move(25, 22)), Colour.O) == "bar-24 bar-22"
    assert format_moves((Move(25, 24), Move(25, 22)), Colour.X) == "bar-1 bar-3"
    assert format_moves((Move(1, 0), Move(3, 0)), Colour.X) == "24-off 22-off"
    for colour in Colour:
        moves = (Move(25, 20), Move(13, 7), Move(6, 0))
        assert parse_moves(format_moves(moves, colour), colour) == moves


@pytest.mark.parametrize(
    ("text", "index", "incomplete"),
    [("13-7 8", 1, True), ("13-x", 0, False), ("13-7 zz-3", 1, False), ("30-24", 0, False)],
)
def test_move_syntax_errors(text: str, index: int, incomplete: bool) -> None:
    with pytest.raises(MoveSyntaxError) as error:
        parse_moves(text, Colour.O)
    assert (error.value.index, error.value.incomplete) == (index, incomplete)
