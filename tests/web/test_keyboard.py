"""Keyboard-only play of a whole 1-point match (issue 28 item 5): two players, each in a
browser of their own, roll and move with Tab, Enter and the dice's number keys alone,
from the first roll to the match's end: a point is picked, then a destination, a die
(Tab to it and Enter) or a die's number key, and Send move, Roll reached with Tab."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from protocol import replies

from .browsers import SHORT_MATCH_SEED, ServerThread, browser_missing, chromium
from .pages import SHOWN, Page, at_a_match, match_over

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")

TABS = 150
"""More Tab presses than the page has controls: a control never reached fails."""
FOCUSED = (
    "const e = document.activeElement;"
    "return [e.id, e.getAttribute('class') || '', e.getAttribute('aria-label') || ''];"
)
"""The focused element's id, class and label, read in one call (a Tab press is one
more): the walk with Tab costs two round trips a press, not four."""
LOOK = SHOWN + (
    "const roll = document.getElementById('roll'), send = document.getElementById('send');"
    "return {roll: shown(roll), send: shown(send),"
    " targets: document.querySelectorAll('rect.hit.target').length,"
    " dice: [...document.querySelectorAll('rect.die.playable')].map((d) => d.dataset.die),"
    " sources: document.querySelectorAll('rect.hit.source').length};"
)
"""What the page offers its player, read in one call (it took up to nine): Roll or Send
move shown, how many destinations are marked, the playable dice's values, how many
checkers may move."""


class Keyboard:
    """One player's keyboard; counts how each move was made."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.moves = 0
        self.ways = {"destination": 0, "die": 0, "key": 0}

    def active(self) -> Any:
        return self.page.driver.switch_to.active_element

    def tab_to(self, wanted: Callable[[str, str], bool], what: str) -> str:
        """Press Tab until the focus is on what ``wanted(id, class)`` accepts; its label."""
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.keys import Keys

        driver = self.page.driver
        for _ in range(TABS):
            element_id, classes, label = driver.execute_script(FOCUSED)
            if wanted(str(element_id), str(classes)):
                return str(label)
            ActionChains(driver).send_keys(Keys.TAB).perform()  # to the focused element
        raise AssertionError(f"{self.page.label}: Tab never reached {what}")

    def step(self) -> str | None:
        """The next thing to do, done with the keyboard; what was done."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.keys import Keys

        page = self.page
        try:
            look = page.driver.execute_script(LOOK)
            if look["roll"]:
                self.tab_to(lambda i, c: i == "roll", "Roll")
                self.active().send_keys(Keys.ENTER)
                return "roll"
            if look["send"]:
                self.tab_to(lambda i, c: i == "send", "Send move")
                self.active().send_keys(Keys.ENTER)
                return "send"
            if look["targets"]:
                dice = look["dice"]
                way = ("destination", "die", "key")[self.moves % 3]
                if way != "destination" and not dice:
                    way = "destination"
                if way == "key":
                    self.active().send_keys(str(dice[-1]))
                elif way == "die":
                    self.tab_to(lambda i, c: "playable" in c, "a die")
                    self.active().send_keys(Keys.ENTER)
                else:
                    self.tab_to(lambda i, c: "target" in c, "a target")
                    self.active().send_keys(Keys.ENTER)
                self.moves += 1
                self.ways[way] += 1
                return way
            if look["sources"]:
                label = self.tab_to(lambda i, c: "source" in c, "a checker")
                assert label.startswith("Move from "), label  # labelled for a screen reader
                self.active().send_keys(Keys.ENTER)
                return "from"
        except StaleElementReferenceException:
            return None  # the board was drawn anew under the key: try again
        return None


def test_a_whole_match_with_the_keyboard_alone(tmp_path: Path) -> None:
    with (
        ServerThread(tmp_path, seed=SHORT_MATCH_SEED) as server,
        chromium(1366, 768) as a,
        chromium(390, 844) as b,
    ):
        alice, bob = at_a_match(server, a, b, 1)
        players = [Keyboard(alice), Keyboard(bob)]
        sends = 0
        deadline = time.monotonic() + 600
        while not match_over(alice, bob):
            assert time.monotonic() < deadline, "the match did not end"
            acted = False
            for player in players:
                done = player.step()
                acted = acted or done is not None
                sends += done == "send"
            if not acted:
                time.sleep(0.05)
        winner = alice if alice.text("prompt").startswith("You win") else bob
        loser = bob if winner is alice else alice
        won = winner.text("prompt")
        points = next(n for n in (1, 2, 3) if won == replies.you_win_match(1, n, 0))
        assert loser.text("prompt") == replies.wins_match(winner.label, 1, points, 0)
        assert sends >= 10
        # Each way of picking where a checker goes was used, by both players.
        for player in players:
            assert all(player.ways.values()), (player.page.label, player.ways)
