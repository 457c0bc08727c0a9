"""gnubg request lines and answers, without gnubg: canonical boards, move notation."""

from __future__ import annotations

import pytest

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.moves import Move, legal_plays
from bots.gnubg.translate import (
    MAX_LINE,
    Conventions,
    GnubgAnswerError,
    mirror,
    move_request,
    parse_paths,
    play_from_answer,
    resign_request,
    take_request,
)
from bots.strategy import ME
from protocol.board_fibs import parse_board
from tests.bots.fakefibs import board


def fields(line: str) -> list[str]:
    head = line.split(" ")[0]
    parts = head.split(":")
    assert len(parts) == 53
    return parts


def test_mirror_swaps_colours_and_is_an_involution() -> None:
    start = Position.start().fibs_board()
    assert mirror(start) == start
    b = [0] * 26
    b[0], b[3], b[25] = -1, 2, 1
    m = mirror(b)
    assert m[25] == 1 and m[22] == -2 and m[0] == -1
    assert mirror(m) == tuple(b)


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
def test_move_requests_put_the_bot_first_as_o_on_turn(colour: Colour) -> None:
    b = [0] * 26
    b[1], b[6] = -2, 15  # X: two on absolute 1; O: fifteen on 6
    b[20] = -13
    line = move_request(parse_board(board(colour, dice=(6, 5), points=tuple(b), score=(1, 2))))
    f = fields(line)
    assert f[1] == "gnubg" and f[32] == "1" and f[41:45] == ["1", "-1", "0", "25"]
    assert (f[33], f[34], f[35], f[36]) == ("6", "5", "0", "0")
    assert (f[4], f[5]) == ("2", "1")  # gnubg 1.07 reads field 4 as the opponent's score
    mine = [int(x) for x in f[6:32]]
    assert sum(v for v in mine if v > 0) == 15
    expected = tuple(b) if colour is Colour.O else mirror(b)
    assert tuple(mine) == expected
    assert line.endswith(" jacobyrule off") and len(line) <= MAX_LINE
    unswapped = fields(move_request(parse_board(board(colour, score=(1, 2))), Conventions(False)))
    assert (unswapped[4], unswapped[5]) == ("1", "2")


def test_crawford_and_dead_cube_flags_never_look_like_a_pending_double() -> None:
    crawford = fields(
        move_request(parse_board(board(Colour.O, may_double=(False, False), score=(2, 0))))
    )
    assert (crawford[38], crawford[39], crawford[40], crawford[51]) == ("1", "1", "0", "0")
    post = fields(move_request(parse_board(board(Colour.O, score=(2, 0), post_crawford=True))))
    assert post[51] == "1"


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
def test_take_requests_put_the_doubler_first(colour: Colour) -> None:
    v = parse_board(board(colour, doubled=True, may_double=(False, False), score=(2, 1)))
    f = fields(take_request(v))
    assert f[40] == "1" and f[32] == "1" and f[41] == "1"
    assert (f[4], f[5]) == ("1", "2")  # the doubler's score first
    owned = fields(take_request(parse_board(board(colour, doubled=True, cube=2))))
    assert (owned[38], owned[39]) == ("1", "0")


def test_resign_requests_name_the_level() -> None:
    v = parse_board(board(Colour.X, cube=2))
    assert resign_request(v, 4).endswith("jacobyrule off resignation 2")
    assert resign_request(v, 6).endswith("resignation 3")
    assert resign_request(v, 2).endswith("resignation 1")


def test_parse_paths_reads_every_notation() -> None:
    assert parse_paths("24/18 13/11 ") == [(24, 18), (13, 11)]
    assert parse_paths("25/22 24/20*") == [(25, 22), (24, 20)]
    assert parse_paths("bar/22* 6/off") == [(25, 22), (6, 0)]
    assert parse_paths("13/7(2) 8/2*(2)") == [(13, 7), (13, 7), (8, 2), (8, 2)]
    assert parse_paths("24/18*/13") == [(24, 18, 13)]
    assert parse_paths("5/0 5/0") == [(5, 0), (5, 0)]
    assert parse_paths("") == []
    for bad in ("roll", "24-18", "24/", "/18", "26/20", "13/7(5)"):
        with pytest.raises(GnubgAnswerError):
            parse_paths(bad)


@pytest.mark.parametrize(
    ("dice", "answer", "moves"),
    [
        ((3, 1), "8/5 6/5", {Move(8, 5), Move(6, 5)}),
        ((6, 5), "24/13", {Move(24, 18), Move(18, 13)}),
        ((6, 5), "24/18 18/13", {Move(24, 18), Move(18, 13)}),
        ((6, 6), "24/18(2) 13/7(2)", {Move(24, 18), Move(13, 7)}),
        ((4, 4), "24/16(2)", {Move(24, 20), Move(20, 16)}),
    ],
)
def test_answers_become_one_move_per_die(
    dice: tuple[int, int], answer: str, moves: set[Move]
) -> None:
    position = Position.start()
    roll = Roll(*dice)
    plays = legal_plays(position, ME, roll)
    play = play_from_answer(answer, position, roll, plays)
    assert set(play.moves) == moves
    assert len(play.moves) == len(roll.dice)


def test_illegal_or_impossible_answers_are_refused() -> None:
    position = Position.start()
    roll = Roll(3, 1)
    plays = legal_plays(position, ME, roll)
    for answer in ("8/4 6/5", "7/4 6/5", "", "6/9 8/5", "8/5"):
        with pytest.raises(GnubgAnswerError):
            play_from_answer(answer, position, roll, plays)
