"""The one board renderer (server/tables/match_boards.py): a state is read once, each board of it
rendered once, and a new state is known by the match's version."""

from __future__ import annotations

from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions
from protocol.match_view import board_lines, board_state, perspective_of
from server.tables.matches import LiveMatch

NAMES = ("alice", "bob")


def test_a_frame_lasts_as_long_as_the_state_of_the_match() -> None:
    live = LiveMatch(NAMES, Match(MatchOptions(length=3), SeededDice(3)), started_at=0)
    live.match.start_game()
    frame = live.board_frame()
    assert live.board_frame() is frame
    board = frame.lines(0, 3, you=True)
    assert frame.lines(0, 3, you=True) is board  # rendered once per viewer kind
    expected = board_lines(board_state(live.match, NAMES), perspective_of(live.match, 0), 3)
    assert list(board) == expected
    mover = live.match.to_act
    assert mover is not None
    live.match.move(mover, live.match.legal_plays()[0].moves)
    after = live.board_frame()
    assert after is not frame
    assert after.lines(0, 3, you=True) != board
    assert list(after.lines(1, 1, you=False)) == board_lines(
        board_state(live.match, NAMES), perspective_of(live.match, 1), 1, you=False
    )
