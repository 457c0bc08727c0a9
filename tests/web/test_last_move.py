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


PAINTED_UNDER = """
const meets = (a, b) => {
  const r = a.getBoundingClientRect(), s = b.getBoundingClientRect();
  return r.left < s.right && s.left < r.right && r.top < s.bottom && s.top < r.bottom;
};
const under = [...document.querySelectorAll(
  "#board line.trail, #board circle.trail-end, #board rect.hit")];
const over = [...document.querySelectorAll("#board rect.die, #board g.cube")];
const pairs = over.flatMap((o) => under.filter((u) => meets(u, o)).map((u) => [u, o]));
return {
  trails: document.querySelectorAll("#board line.trail").length,
  dice: document.querySelectorAll("#board rect.die").length,
  overlapping: pairs.length,
  hidden: pairs
    .filter(([u, o]) => !(u.compareDocumentPosition(o) & Node.DOCUMENT_POSITION_FOLLOWING))
    .map(([u, o]) => `${o.getAttribute("class")} under ${u.getAttribute("class")}`),
};
"""
"""Where the trail's lines and the points' highlights (the rects that are marked as
sources and targets) overlap the dice or the cube, and which of them would be painted
over the die or cube (SVG paints in document order): issue 28, seen 4."""


def nothing_hides_the_dice_or_cube(page: Page) -> None:
    """With the trail drawn and a checker picked (its destinations marked), the dice and
    the cube are painted over every trail and highlight they share room with."""
    if step(page) == "from":
        page.wait(lambda: page.all("rect.hit.target"), "the destinations marked")
    seen = page.driver.execute_script(PAINTED_UNDER)
    assert seen["trails"] and seen["dice"] and seen["overlapping"], seen
    assert seen["hidden"] == [], seen


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
        other.wait(lambda: other.all("rect.hit.source"), "the other's turn, dice rolled")
        nothing_hides_the_dice_or_cube(other)
        # The player's own play, once the board after it has come.
        mover.wait(lambda: mover.board_position() != before_mine, "the board after the play")
        replayed(mover, before_mine, mover.board_position())
        nothing_hides_the_dice_or_cube(mover)  # the other's dice, under the mover's trail
