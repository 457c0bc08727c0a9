"""The ``board:`` line (spec §3.1-§3.5): goldens, round trips, the per-receiver swap."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backgammon.board import Colour, Position
from protocol.board_fibs import FIELDS, board_line, format_board, parse_board, parse_position
from protocol.board_view import BoardState, BoardView, SideState
from protocol.errors import BoardLineError

# §3.5, verbatim.
O_LINE = (
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
    ":1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0"
)
X_LINE = (
    "board:You:myself:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
    ":1:0:0:6:2:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0"
)
START_BOARD = "0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"


def opening_state() -> BoardState:
    """§3.5: myself is O, someplayer X, 3-point match, O rolled 6-2 and moves first."""
    return BoardState(
        o=SideState("myself", dice=(6, 2), may_double=True),
        x=SideState("someplayer", may_double=True),
        board=Position.start().fibs_board(0),
        match_length=3,
        turn=Colour.O,
        can_move=2,
    )


def test_start_board_numbers_match_the_spec() -> None:
    assert ":".join(map(str, Position.start().fibs_board(0))) == START_BOARD


def test_golden_o_view() -> None:
    assert board_line(opening_state(), Colour.O) == O_LINE


def test_golden_x_view() -> None:
    assert board_line(opening_state(), Colour.X) == X_LINE


def test_golden_watcher_view_carries_the_watched_name() -> None:
    # §3.5: "the same as X's view but with field 1 = someplayer".
    line = board_line(opening_state(), Colour.X, you=False)
    assert line == X_LINE.replace("board:You:myself:", "board:someplayer:myself:", 1)
    assert line.startswith("board:someplayer:myself:3:0:0:")


@pytest.mark.parametrize("line", [O_LINE, X_LINE])
def test_golden_lines_parse_back(line: str) -> None:
    view = parse_board(line)
    assert format_board(view) == line
    assert len(line.split(":")) == FIELDS


def test_parsed_o_view_fields() -> None:
    view = parse_board(O_LINE)
    assert view.player == "You"
    assert view.opponent == "someplayer"
    assert view.match_length == 3
    assert view.turn is Colour.O
    assert view.player_dice == (6, 2)
    assert view.opponent_dice == (0, 0)
    assert view.colour is Colour.O
    assert (view.direction, view.home, view.bar) == (-1, 0, 25)
    assert view.can_move == 2
    assert view.position() == Position.start()
    assert parse_position(O_LINE) == Position.start()


def test_view_from_state_equals_parsed_view() -> None:
    assert BoardView.for_viewer(opening_state(), Colour.O) == parse_board(O_LINE)
    assert BoardView.for_viewer(opening_state(), Colour.X).player_login == "someplayer"


def test_bonehead_capture_board() -> None:
    # §3.7 capture (fields 50/51 elided in the spec, taken as 0 here).
    line = (
        "board:bonehead:humpty:1:0:0:0:9:3:0:0:0:0:0:1:0:0:0:1:0:0:0:0:0:0:0:1:-2:-4:0:-2:0"
        ":1:0:0:0:0:1:1:1:0:-1:1:25:0:7:0:0:0:2:0:0:0"
    )
    view = parse_board(line)
    assert (view.player_home, view.opponent_home) == (7, 0)
    assert format_board(view) == line


def test_unlimited_match_and_redoubles_are_9999() -> None:
    state = dataclasses.replace(opening_state(), match_length=None, redoubles=None)
    line = board_line(state, Colour.O)
    tokens = line.split(":")
    assert tokens[3] == "9999"
    assert tokens[52] == "9999"
    view = parse_board(line)
    assert view.match_length is None
    assert view.redoubles is None
    assert dataclasses.replace(opening_state(), match_length=0).match_length is None


def test_pending_double_sets_was_doubled_for_the_doubled_player_only() -> None:
    # §3.4: was doubled = 1 for the doubled player, turn = that player's colour.
    state = dataclasses.replace(
        opening_state(),
        o=SideState("myself"),
        x=SideState("someplayer"),
        turn=Colour.X,
        doubled=Colour.X,
        can_move=0,
    )
    x_view = parse_board(board_line(state, Colour.X))
    o_view = parse_board(board_line(state, Colour.O))
    watcher = parse_board(board_line(state, Colour.X, you=False))
    assert x_view.was_doubled
    assert not o_view.was_doubled
    assert not watcher.was_doubled
    assert x_view.turn is Colour.X
    assert (x_view.player_may_double, x_view.opponent_may_double) == (False, False)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "board:You:someplayer:3",
        O_LINE + ":0",
        O_LINE.replace("board:", "bord:", 1),
        O_LINE.replace(":1:-1:0:25:", ":1:1:0:25:", 1),  # direction does not fit colour
        O_LINE.replace("board:You:someplayer:3:", "board:You:someplayer:03:", 1),
        O_LINE.replace("board:You:someplayer:3:", "board:You:someplayer:0:", 1),
        O_LINE.replace("board:You:", "board::", 1),
        O_LINE.replace(":1:1:1:0:1:", ":1:2:1:0:1:", 1),  # may-double flag 2
        O_LINE.replace(":6:2:", ":7:2:", 1),  # a die of 7
    ],
)
def test_malformed_lines_are_refused(line: str) -> None:
    with pytest.raises(BoardLineError):
        parse_board(line)


def test_impossible_position_is_refused_by_parse_position() -> None:
    line = O_LINE.replace(":0:-2:0:", ":0:-9:0:", 1)  # X would have 22 checkers
    parse_board(line)  # the line itself is well-formed
    with pytest.raises(BoardLineError):
        parse_position(line)


# -- properties ----------------------------------------------------------------------------


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """A random legal position: 15 checkers a side, never both sides on one point."""
    side0 = [0] * 26
    for slot in draw(st.lists(st.integers(0, 25), min_size=15, max_size=15)):
        side0[slot] += 1
    free = [0, 25] + [n for n in range(1, 25) if side0[25 - n] == 0]
    side1 = [0] * 26
    for slot in draw(st.lists(st.sampled_from(free), min_size=15, max_size=15)):
        side1[slot] += 1
    return Position.from_counts(side0, side1)


dice = st.one_of(st.just((0, 0)), st.tuples(st.integers(1, 6), st.integers(1, 6)))
names = st.from_regex(r"[A-Za-z_]{1,12}", fullmatch=True).filter(lambda n: n != "You")


@st.composite
def states(draw: st.DrawFn) -> tuple[BoardState, Position, int]:
    position = draw(positions())
    o_player = draw(st.integers(0, 1))
    o_name = draw(names)
    x_name = draw(names.filter(lambda n: n != o_name))
    turn = draw(st.sampled_from([Colour.O, Colour.X, None]))
    o_dice = draw(dice) if turn is Colour.O else (0, 0)
    x_dice = draw(dice) if turn is Colour.X else (0, 0)
    state = BoardState(
        o=SideState(o_name, draw(st.integers(0, 30)), o_dice, draw(st.booleans())),
        x=SideState(x_name, draw(st.integers(0, 30)), x_dice, draw(st.booleans())),
        board=position.fibs_board(o_player),
        match_length=draw(st.one_of(st.none(), st.integers(1, 25))),
        turn=turn,
        cube=draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64])),
        doubled=draw(st.sampled_from([None, turn])),
        can_move=draw(st.integers(0, 4)),
        no_crawford=draw(st.sampled_from([0, 3])),
        post_crawford=draw(st.integers(0, 1)),
        redoubles=draw(st.one_of(st.none(), st.integers(0, 99))),
    )
    return state, position, o_player


@given(states(), st.sampled_from([Colour.O, Colour.X]), st.booleans())
def test_round_trip_view_line_view(
    case: tuple[BoardState, Position, int], perspective: Colour, you: bool
) -> None:
    state, position, o_player = case
    view = BoardView.for_viewer(state, perspective, you=you)
    line = format_board(view)
    assert len(line.split(":")) == FIELDS
    assert " " not in line
    assert parse_board(line) == view
    assert format_board(parse_board(line)) == line
    # The perspective player becomes index 0 of the parsed position.
    me = o_player if perspective is Colour.O else 1 - o_player
    expected = position if me == 0 else position.swapped()
    assert parse_position(line, 0) == expected


@given(states())
def test_the_two_players_lines_are_each_others_swap(
    case: tuple[BoardState, Position, int],
) -> None:
    state = case[0]
    o = format_board(BoardView.for_viewer(state, Colour.O)).split(":")
    x = format_board(BoardView.for_viewer(state, Colour.X)).split(":")
    assert o[1] == x[1] == "You"
    assert (o[2], x[2]) == (state.x.name, state.o.name)
    # §3.3: board and turn untransformed; cube and redoubles shared.
    for i in [3, *range(6, 33), 37, 50, 51, 52]:
        assert o[i] == x[i], i
    # §3.3: "P first, other second" pairs are swapped.
    for a, b in [(4, 5), (33, 35), (34, 36), (38, 39), (45, 46), (47, 48)]:
        assert (o[a], o[b]) == (x[b], x[a]), (a, b)
    # §3.2: the two fixed colour/direction/home/bar patterns.
    assert o[41:45] == ["1", "-1", "0", "25"]
    assert x[41:45] == ["-1", "1", "25", "0"]
    # Only one side can be the doubled one / the one that must move.
    assert not (o[40] == "1" and x[40] == "1")
    assert o[49] == "0" or x[49] == "0"


@given(states())
def test_home_and_bar_counts_agree_with_the_board(case: tuple[BoardState, Position, int]) -> None:
    state, position, o_player = case
    view = BoardView.for_viewer(state, Colour.O)
    assert view.player_bar == position.bar(o_player) == view.board[25]
    assert view.opponent_bar == position.bar(1 - o_player) == -view.board[0]
    assert view.player_home == position.off(o_player)
    assert view.opponent_home == position.off(1 - o_player)
