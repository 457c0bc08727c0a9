"""ASCII boards, styles 1 and 2 (spec §3.7): every example board of the spec, exactly.

Expected boards are the spec's text. Our lines never end in whitespace, so the expected
text is compared line by line right-stripped (the spec's examples carry none anyway).
"""

from __future__ import annotations

import dataclasses

import pytest

from backgammon.board import Colour, Position
from protocol.board_ascii import render_ascii, render_board
from protocol.board_fibs import format_board, parse_board
from protocol.board_view import BoardState, BoardStyle, BoardView, SideState


def expect(text: str) -> list[str]:
    """The spec's board text as lines, without the surrounding code-fence newlines."""
    return [line.rstrip() for line in text.strip("\n").split("\n")]


def opening_state() -> BoardState:
    """§3.5: myself is O, someplayer X, 3-point match, O rolled 6-2."""
    return BoardState(
        o=SideState("myself", dice=(6, 2), may_double=True),
        x=SideState("someplayer", may_double=True),
        board=Position.start().fibs_board(0),
        match_length=3,
        turn=Colour.O,
        can_move=2,
    )


O_STYLE_1 = """
   +13-14-15-16-17-18-------19-20-21-22-23-24-+ X: someplayer - score: 0
   | O           X    |   |  X              O |
   | O           X    |   |  X              O |
   | O           X    |   |  X                |
   | O                |   |  X                |
   | O                |   |  X                |
  v|                  |BAR|                   |    3-point match
   | X                |   |  O                |
   | X                |   |  O                |
   | X           O    |   |  O                |
   | X           O    |   |  O              X |
   | X           O    |   |  O              X |
   +12-11-10--9--8--7--------6--5--4--3--2--1-+ O: myself - score: 0

   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  You rolled 6 2.
"""

# §3.7 shows style 2 with "(rows as above)"; the rows are those of style 1.
O_STYLE_2 = """
    13 14 15 16 17 18       19 20 21 22 23 24
   +------------------------------------------+ X: someplayer - score: 0
   | O           X    |   |  X              O |
   | O           X    |   |  X              O |
   | O           X    |   |  X                |
   | O                |   |  X                |
   | O                |   |  X                |
  v|                  |BAR|                   |    3-point match
   | X                |   |  O                |
   | X                |   |  O                |
   | X           O    |   |  O                |
   | X           O    |   |  O              X |
   | X           O    |   |  O              X |
   +------------------------------------------+ O: myself - score: 0
    12 11 10  9  8  7        6  5  4  3  2  1

   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  You rolled 6 2.
"""

X_STYLE_1 = """
   +-1--2--3--4--5--6--------7--8--9-10-11-12-+ O: myself - score: 0
   | X              O |   |     O           X |
   | X              O |   |     O           X |
   |                O |   |     O           X |
   |                O |   |                 X |
   |                O |   |                 X |
   |                  |BAR|                   |v    3-point match
   |                X |   |                 O |
   |                X |   |                 O |
   |                X |   |     X           O |
   | O              X |   |     X           O |
   | O              X |   |     X           O |
   +24-23-22-21-20-19-------18-17-16-15-14-13-+ X: someplayer - score: 0

   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  myself rolled 6 2.
"""

BONEHEAD = """
   +-1--2--3--4--5--6--------7--8--9-10-11-12-+ O: humpty - score: 0
   | O  O             |   |     O           O |
   | O  O             |   |                   |
   | O  O             |   |                   |
   | O                |   |                   |
   | 9                |   |                   |
   |                  |BAR|                   |v    1-point match
   |                  |   |                   |
   |       X          |   |                   |
   |       X          |   |                   |
   | X     X  X       |   |                   |
   | X     X  X  O    |   |                   |
   +24-23-22-21-20-19-------18-17-16-15-14-13-+ X: bonehead - score: 0
   BAR: O-0 X-0   OFF: O-0 X-7   Cube: 1  turn: humpty
"""
BONEHEAD_LINE = (
    "board:bonehead:humpty:1:0:0:0:9:3:0:0:0:0:0:1:0:0:0:1:0:0:0:0:0:0:0:1:-2:-4:0:-2:0"
    ":1:0:0:0:0:1:1:1:0:-1:1:25:0:7:0:0:0:2:0:0:0"
)


def test_o_view_style_1() -> None:
    view = BoardView.for_viewer(opening_state(), Colour.O)
    assert render_ascii(view, BoardStyle.ASCII) == expect(O_STYLE_1)


def test_o_view_style_2() -> None:
    view = BoardView.for_viewer(opening_state(), Colour.O)
    assert render_ascii(view, 2) == expect(O_STYLE_2)


def test_x_view_style_1() -> None:
    view = BoardView.for_viewer(opening_state(), Colour.X)
    assert render_ascii(view, 1) == expect(X_STYLE_1)


def test_x_view_style_2_frames() -> None:
    lines = render_ascii(BoardView.for_viewer(opening_state(), Colour.X), 2)
    # §3.7 "Style-2 frames for X".
    assert lines[0] == "     1  2  3  4  5  6        7  8  9 10 11 12"
    assert lines[1] == "   +------------------------------------------+ O: myself - score: 0"
    assert lines[-4] == "   +------------------------------------------+ X: someplayer - score: 0"
    assert lines[-3] == "    24 23 22 21 20 19       18 17 16 15 14 13"
    # Style 2 needs two lines more than style 1 (§3.6), with the same rows.
    style_1 = render_ascii(BoardView.for_viewer(opening_state(), Colour.X), 1)
    assert len(lines) == len(style_1) + 2
    assert lines[2:13] == style_1[1:12]


def test_capture_with_a_nine_stack() -> None:
    # The capture tool dropped empty lines (§3.7), so compare without them.
    lines = render_ascii(parse_board(BONEHEAD_LINE), 1)
    assert lines[-2] == ""
    assert [line for line in lines if line] == expect(BONEHEAD)


def test_watcher_sees_names_not_you() -> None:
    view = BoardView.for_viewer(opening_state(), Colour.X, you=False)
    lines = render_ascii(view, 1)
    assert lines[-1] == "   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  myself rolled 6 2."
    assert lines[12].endswith("X: someplayer - score: 0")


def bar_state() -> BoardState:
    """O's view with one X checker on the bar and X checkers on 15, 17, 18 and 20."""
    o = [0] * 26
    o[13], o[24], o[6], o[8] = 4, 2, 5, 4  # 15 checkers
    x = [0] * 26  # X's own numbering: absolute n is X's 25 - n
    x[25] = 1  # bar
    x[10], x[8], x[7], x[5] = 1, 1, 1, 1  # absolute 15, 17, 18, 20
    x[0] = 10  # borne off
    position = Position.from_counts(o, x)
    return BoardState(
        o=SideState("myself", may_double=True),
        x=SideState("someplayer", dice=(3, 1)),
        board=position.fibs_board(0),
        match_length=5,
        turn=Colour.X,
        cube=2,
    )


def test_bar_checker_row_from_a_capture() -> None:
    lines = render_ascii(BoardView.for_viewer(bar_state(), Colour.O), 1)
    # §3.7 real capture: "one X on the bar".
    assert lines[1] == "   | O     X     X  X | X |     X           O |"
    assert lines[2] == "   | O                |   |                 O |"
    assert lines[-1] == (
        "   BAR: O-0 X-1   OFF: O-0 X-10   Cube: 2 (owned by You)  someplayer rolled 3 1."
    )


def test_cube_owner_is_named_by_field_1_or_2() -> None:
    view = BoardView.for_viewer(bar_state(), Colour.X)
    assert view.player_name == "someplayer"
    assert render_ascii(view, 1)[-1].endswith("Cube: 2 (owned by myself)  You rolled 3 1.")
    watcher = BoardView.for_viewer(bar_state(), Colour.O, you=False)
    assert "(owned by myself)  someplayer rolled 3 1." in render_ascii(watcher, 1)[-1]


def test_many_checkers_on_the_bar_show_a_count() -> None:
    o = [0] * 26
    o[25], o[6] = 7, 8
    x = [0] * 26
    x[25], x[1] = 6, 9
    view = BoardView.for_viewer(
        BoardState(
            o=SideState("alice"),
            x=SideState("bob"),
            board=Position.from_counts(o, x).fibs_board(0),
            match_length=1,
        ),
        Colour.O,
    )
    lines = render_ascii(view, 1)
    assert lines[5][22:27] == "| 6 |"  # row 5 of the upper half: opponent's count
    assert lines[7][22:27] == "| 7 |"  # row 5 of the lower half: own count
    assert lines[1][22:27] == "| X |"
    assert lines[11][22:27] == "| O |"


def test_turn_and_game_over_status() -> None:
    state = dataclasses.replace(opening_state(), o=SideState("myself", may_double=True), can_move=0)
    view = BoardView.for_viewer(state, Colour.X)
    assert render_ascii(view, 1)[-1] == "   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1  turn: myself"
    over = dataclasses.replace(state, turn=None)
    assert render_ascii(BoardView.for_viewer(over, Colour.O), 1)[-1] == (
        "   BAR: O-0 X-0   OFF: O-0 X-0   Cube: 1"
    )


@pytest.mark.parametrize(
    ("redoubles", "text"),
    [(0, "No redoubles"), (1, "1 redouble"), (7, "7 redoubles"), (None, "Unlimited redoubles")],
)
def test_unlimited_match_lines(redoubles: int | None, text: str) -> None:
    state = dataclasses.replace(opening_state(), match_length=None, redoubles=redoubles)
    lines = render_ascii(BoardView.for_viewer(state, Colour.X), 1)
    assert lines[6] == "   |                  |BAR|                   |v    unlimited match"
    assert lines[7] == "   |                X |   |                 O |     " + text


def test_names_are_cut_to_15_characters_in_frame_labels() -> None:
    state = dataclasses.replace(
        opening_state(), x=SideState("abcdefghijklmnopqrst", may_double=True)
    )
    lines = render_ascii(BoardView.for_viewer(state, Colour.O), 1)
    assert lines[0].endswith("+ X: abcdefghijklmno - score: 0")


def test_no_line_has_trailing_whitespace() -> None:
    for perspective in Colour:
        for style in (1, 2):
            view = BoardView.for_viewer(opening_state(), perspective)
            assert all(line == line.rstrip() for line in render_ascii(view, style))


def test_render_board_by_style() -> None:
    view = BoardView.for_viewer(opening_state(), Colour.O)
    assert render_board(view, 3) == [format_board(view)]
    assert render_board(view, 1) == expect(O_STYLE_1)
    with pytest.raises(ValueError):
        render_ascii(view, 3)
    with pytest.raises(ValueError):
        render_board(view, 4)
