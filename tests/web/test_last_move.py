"""The last move shown again (issue 28 item 3): beside the moves of the game (FIBS
notation), *Show the last move again* draws the board as it was before the last play
for a moment, then as it is with the play's trail: for the opponent's play and for the
player's own, which FIBS does not echo."""

from __future__ import annotations

import pytest

from .browsers import ServerThread, browser_missing, chromium
from .pages import Page, at_a_match, on_move, step

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


def play_one_turn(mover: Page) -> None:
    """Click the mover's checkers until the play is sent."""
    for _ in range(20):
        if step(mover) == "send":
            return
    raise AssertionError("the play was never sent")


def replayed(page: Page, before: str, after: str) -> None:
    """Show the last move again: the board before it, then as it is, with the trail."""
    page.wait(lambda: page.visible("replay-last"), "the button")
    page.click("replay-last")
    page.wait(lambda: page.board_position() == before, "the board before the last move")
    page.wait(lambda: page.board_position() == after, "the board as it is")
    page.wait(lambda: page.all("#board line.trail"), "the play's trail")


def test_the_last_move_is_shown_again(server: ServerThread) -> None:
    with chromium() as a, chromium(390, 844) as b:
        alice, bob = at_a_match(server, a, b, 1)
        mover = on_move(alice, bob)
        other = bob if mover is alice else alice
        assert not other.visible("replay-last")  # no move yet
        before_theirs, before_mine = other.board_position(), mover.board_position()
        play_one_turn(mover)
        other.wait(lambda: other.board_position() != before_theirs, "the opponent's play")
        last = other.lines("move-list")[-1]
        assert last.startswith(f"{mover.label} ") and "-" in last.split(": ")[1]
        assert mover.lines("move-list")[-1] == last  # the same play in both lists
        replayed(other, before_theirs, other.board_position())
        # The player's own play, once the board after it has come.
        mover.wait(lambda: mover.board_position() != before_mine, "the board after the play")
        replayed(mover, before_mine, mover.board_position())
