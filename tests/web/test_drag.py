"""Playing as players expect (issue 28 item 3): a whole 1-point match played by drag and
drop, on a laptop (1366×768) and a phone (390×844), bearing off by dragging a checker off
the board; a tap on a checker with one legal destination plays it; the sound for the
player's turn, off until switched on."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import pytest

from .browsers import ServerThread, browser_missing, chromium
from .pages import Page, at_a_match, on_move, step

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


def drag(page: Page, counts: dict[str, int]) -> str | None:
    """Do the next thing the page offers, moving checkers by dragging them; what."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.action_chains import ActionChains

    if page.visible("roll") or page.visible("send"):
        return step(page)
    sources = page.all("rect.hit.source")
    if not sources:
        return None
    driver = page.driver
    try:
        # Picked up: a few pixels of movement; its destinations are marked meanwhile.
        ActionChains(driver).click_and_hold(sources[-1]).move_by_offset(0, -15).perform()
        targets = page.wait(lambda: page.all("rect.hit.target"), "the destinations marked")
        assert page.all("circle.ghost"), "no checker follows the pointer"
        off = [t for t in targets if t.get_attribute("data-point") == "0"]
        if off:
            # Off the board: let go below it, outside the drawing.
            board = page.by_id("board")
            below = int(board.size["height"]) // 2 + 12
            ActionChains(driver).move_to_element_with_offset(board, 0, below).release().perform()
        else:
            ActionChains(driver).move_to_element(targets[0]).release().perform()
    except StaleElementReferenceException:
        ActionChains(driver).release().perform()
        return None
    page.wait(lambda: not page.all("circle.ghost"), "the checker let go")
    kind = "off" if off else "to"
    counts[kind] += 1
    return kind


def test_a_whole_match_by_drag_and_drop(server: ServerThread) -> None:
    with chromium(1366, 768) as a, chromium(390, 844) as b:
        alice, bob = at_a_match(server, a, b, 1)
        counts = {"to": 0, "off": 0}
        deadline = time.monotonic() + 600
        while not all("point match" in p.text("prompt") for p in (alice, bob)):
            assert time.monotonic() < deadline, "the match did not end"
            acted = False
            for page in (alice, bob):
                before = sum(counts.values())
                done = drag(page, counts)
                acted = acted or done is not None
                if done in ("to", "off"):
                    # The checker moved: the undo offered, or the whole play sendable.
                    page.wait(functools.partial(page.visible, "undo"), "the move made")
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
                before = str(mover.driver.execute_script(POSITION))
                tap(mover.driver, mover.all("rect.hit.source")[0])
                mover.wait(answered(mover, before), "the tap answered")
                targets = mover.all("rect.hit.target")
                if targets:
                    # Selected: it had more than one way to go.
                    assert len(targets) >= 2, "one destination, and the tap only selected"
                    chosen += 1
                    tap(mover.driver, targets[0])
                else:
                    direct += 1
                mover.wait(functools.partial(mover.visible, "undo"), "the checker played")
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
