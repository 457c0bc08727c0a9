"""Playing as players expect (issue 28 item 3): a whole 1-point match played by drag and
drop, on a laptop (1366×768) and a phone (390×844), bearing off by dragging a checker off
the board; a tap on a checker with one legal destination plays it; the sound for the
player's turn, off until switched on."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .browsers import SHORT_MATCH_SEED, ServerThread, browser_missing, chromium
from .pages import SHOWN, Page, at_a_match, match_over, on_move, step

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


TURN = SHOWN + (
    "const button = ['roll', 'send'].map((id) => document.getElementById(id)).find(shown);"
    "return {button: button || null,"
    " sources: [...document.querySelectorAll('#board rect.hit.source')]};"
)
"""What the page offers its player now, in one round trip: the Roll or Send move button
if shown, the checkers that may move."""
PICKED = (
    "const board = document.getElementById('board');"
    "return {targets: [...board.querySelectorAll('rect.hit.target')],"
    " off: board.querySelector('rect.hit.target[data-point=\"0\"]'),"
    " ghost: board.querySelectorAll('circle.ghost').length,"
    " height: board.getBoundingClientRect().height, board: board};"
)
"""The picked-up checker's destinations (off the board among them or not), whether a
checker follows the pointer, and the board and its height, in one round trip."""
POINTER_MS = 50
"""How long each pointer movement of a drag takes: Selenium's default, 250 ms, is three
quarters of a second a checker; 50 ms still moves the pointer through several events."""
LET_GO = SHOWN + (
    "return !document.querySelector('#board circle.ghost')"
    " && shown(document.getElementById('undo'));"
)
"""The checker let go and played: no checker follows the pointer, the undo is offered."""


def drag(page: Page, counts: dict[str, int]) -> str | None:
    """Do the next thing the page offers, moving checkers by dragging them; what."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains

    driver = page.driver
    try:
        turn = driver.execute_script(TURN)
        if turn["button"] is not None:
            turn["button"].click()
            return "button"
        if not turn["sources"]:
            return None
        # Picked up: a few pixels of movement; its destinations are marked meanwhile.
        ActionChains(driver, POINTER_MS).click_and_hold(turn["sources"][-1]).move_by_offset(
            0, -15
        ).perform()
        picked = page.wait(
            lambda: (found := driver.execute_script(PICKED))["targets"] and found,
            "the destinations marked",
        )
        assert picked["ghost"], "no checker follows the pointer"
        off = picked["off"] is not None
        if off:
            # Off the board: let go below it, outside the drawing.
            below = int(picked["height"]) // 2 + 12
            ActionChains(driver, POINTER_MS).move_to_element_with_offset(
                picked["board"], 0, below
            ).release().perform()
        else:
            ActionChains(driver, POINTER_MS).move_to_element(
                picked["targets"][0]
            ).release().perform()
    except StaleElementReferenceException:
        ActionChains(driver, POINTER_MS).release().perform()
        return None
    # The checker let go and moved: the undo offered, or the whole play sendable.
    page.wait(lambda: driver.execute_script(LET_GO), "the checker let go and the move made")
    kind = "off" if off else "to"
    counts[kind] += 1
    return kind


def test_a_whole_match_by_drag_and_drop(tmp_path: Path) -> None:
    with (
        ServerThread(tmp_path, seed=SHORT_MATCH_SEED) as server,
        chromium(1366, 768) as a,
        chromium(390, 844) as b,
    ):
        alice, bob = at_a_match(server, a, b, 1)
        counts = {"to": 0, "off": 0}
        deadline = time.monotonic() + 600
        while not match_over(alice, bob):
            assert time.monotonic() < deadline, "the match did not end"
            acted = False
            for page in (alice, bob):
                before = sum(counts.values())
                done = drag(page, counts)
                acted = acted or done is not None
                if done in ("to", "off"):
                    assert sum(counts.values()) == before + 1
            if not acted:
                time.sleep(0.05)
        # The winner bore off all 15 by dragging them off the board.
        assert counts["off"] >= 15 and counts["to"] > 0, counts


def tap(driver: Any, element: Any) -> None:
    """A finger's tap on ``element``."""
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    finger = PointerInput(interaction.POINTER_TOUCH, "finger")  # type: ignore[no-untyped-call]
    actions = ActionBuilder(driver, mouse=finger)
    actions.pointer_action.move_to(element).pointer_down().pointer_up()  # type: ignore[no-untyped-call]
    actions.perform()


POSITION = "return document.getElementById('position-text').textContent"


def answered(page: Page, before: str) -> Callable[[], bool]:
    """Whether a tap was answered: the checker selected (its destinations marked) or
    played (the position as text changed)."""

    def check() -> bool:
        return bool(page.all("rect.hit.target")) or page.driver.execute_script(POSITION) != before

    return check


def tap_first_checker(page: Page) -> bool:
    """A finger's tap on the first checker that may move: True when it played it (its one
    destination); False when it picked it (then it has two ways to go at least, and a tap
    on one of them plays it). Either way the checker is played at the end."""
    before = str(page.driver.execute_script(POSITION))
    tap(page.driver, page.all("rect.hit.source")[0])
    page.wait(answered(page, before), "the tap answered")
    targets = page.all("rect.hit.target")
    if targets:
        assert len(targets) >= 2, "one destination, and the tap only selected"
        tap(page.driver, targets[0])
    page.wait(functools.partial(page.visible, "undo"), "the checker played")
    return not targets


def test_a_tap_on_a_checker_with_one_destination_plays_it(server: ServerThread) -> None:
    from selenium.common.exceptions import StaleElementReferenceException

    with chromium(390, 844) as a, chromium(390, 844) as b:
        alice, bob = at_a_match(server, a, b, 1)
        direct = chosen = 0
        deadline = time.monotonic() + 300
        while not (direct and chosen):
            assert time.monotonic() < deadline, (direct, chosen)
            mover = on_move(alice, bob)
            if mover.visible("send"):
                step(mover)
                continue
            try:
                if tap_first_checker(mover):
                    direct += 1
                else:
                    chosen += 1
            except StaleElementReferenceException:
                continue


def test_a_sound_for_the_players_turn_only_when_switched_on(server: ServerThread) -> None:
    with chromium(1366, 768) as a, chromium(390, 844) as b:
        alice, bob = at_a_match(server, a, b, 1)
        played = "return document.getElementById('sound').dataset.played || '0'"

        def sounds(page: Page) -> int:
            return int(page.driver.execute_script(played))

        mover = on_move(alice, bob)
        other = bob if mover is alice else alice
        assert not other.by_id("sound").is_selected()  # off by default
        other.click("sound")  # on, for the next turn
        for _ in range(40):
            if step(mover) == "send":
                break
        else:
            raise AssertionError("the play was never sent")
        other.wait(lambda: other.visible("roll") or other.all("rect.hit.source"), "their turn")
        other.wait(lambda: sounds(other) == 1, "the sound for the turn")
        assert sounds(mover) == 0  # switched off: never played
        # The choice is kept in the browser: on after a reload.
        other.driver.refresh()
        other.wait(lambda: other.visible("table"), "back at the table")
        assert other.by_id("sound").is_selected()
