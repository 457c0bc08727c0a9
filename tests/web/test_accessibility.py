"""The page checked with axe-core (issue 28 item 5): no accessibility violation in any
state a player sees it in, on a desktop and a phone.

axe-core comes from npm (tests/web/package.json; `.ci/run` runs `npm ci --prefix
tests/web`); without it the test is skipped with that command as the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .browsers import ServerThread, browser_missing, chromium
from .pages import Page, at_a_match, on_move

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"

pytestmark = [
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
    pytest.mark.skipif(not AXE.exists(), reason=f"{AXE} missing: npm ci --prefix tests/web"),
]

RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ["violations"] }).then(
  (result) => done(result.violations.map((v) => ({
    id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")),
  }))),
  (error) => done([{ id: "axe failed", impact: "critical", nodes: [String(error)] }]),
);
"""


def violations(driver: Any) -> list[dict[str, Any]]:
    """What axe-core finds wrong with the page as it is now."""
    driver.execute_script(AXE.read_text())
    found: list[dict[str, Any]] = driver.execute_async_script(RUN)
    return found


@pytest.fixture
def server(tmp_path: Path) -> Any:
    with ServerThread(tmp_path) as running:
        yield running


def test_every_state_of_the_page_passes_axe(server: ServerThread) -> None:
    with chromium() as a, chromium(390, 844) as b, chromium(390, 844) as c:
        a.get(server.url)
        alice = Page(a, server.url, "alice")
        alice.wait(lambda: alice.visible("login-form"), "the login form")
        assert violations(a) == [], "the login page"
        bob = Page(b, server.url, "bob")
        alice.register("alice", "secret1")
        bob.register("bob", "secret2")
        for page in (alice, bob):
            page.click("ready")
        alice.row_button("invite", "bob")
        assert violations(a) == [], "the lobby"
        alice.press_row_button("invite", "bob")
        bob.wait(lambda: bob.all('#invitations button[data-join="alice"]'), "an invitation")
        assert violations(b) == [], "an invitation on a phone"
        bob.press('#invitations button[data-join="alice"]')
        alice.wait(lambda: alice.visible("table"), "the board")
        bob.wait(lambda: bob.visible("table"), "the board")
        carol = Page(c, server.url, "carol")
        carol.visit()
        carol.press_row_button("watch", "alice")
        carol.wait(lambda: carol.visible("table"), "the watched board")
        for driver, what in ((a, "the table"), (b, "the table on a phone"), (c, "watching")):
            assert violations(driver) == [], what


def test_a_turn_played_with_the_keyboard_alone(server: ServerThread) -> None:
    """Tab reaches the checkers that may move, Enter picks one and then its destination
    (the focus goes on to what comes next), and Enter on Send move sends the play; the
    position is readable as text."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.keys import Keys

    with chromium() as a, chromium() as b:
        alice, bob = at_a_match(server, a, b, 1)
        mover = on_move(alice, bob)
        other = bob if mover is alice else alice
        before = mover.board_position()
        mover.all("#position-box summary")[0].click()  # the position as text, on demand
        mover.wait(lambda: mover.text("position-text").startswith(f"{mover.label}: "))
        assert "Cube 1." in mover.text("position-text")
        driver = mover.driver
        for _ in range(60):  # Tab from the top of the page to the first checker
            try:
                driver.switch_to.active_element.send_keys(Keys.TAB)
                if "source" in str(driver.switch_to.active_element.get_attribute("class")):
                    break
            except StaleElementReferenceException:  # the board redrawn under the focus
                continue
        else:
            raise AssertionError("Tab never reached a checker that may move")
        # Picked: its destinations and its dice are buttons, labelled.
        driver.switch_to.active_element.send_keys(Keys.ENTER)
        mover.wait(lambda: mover.all("rect.hit.target"), "its destinations")
        dice = mover.all("rect.die.playable")
        assert dice and all(str(d.get_attribute("aria-label")).startswith("Move ") for d in dice)
        assert violations(driver) == [], "a checker picked"
        for _ in range(12):  # Enter on whatever has the focus, until the play is whole
            active = driver.switch_to.active_element
            if active.get_attribute("id") == "send":
                active.send_keys(Keys.ENTER)
                break
            assert active.get_attribute("role") == "button", active.get_attribute("outerHTML")
            active.send_keys(Keys.ENTER)
        else:
            raise AssertionError("the play was never whole")
        other.wait(lambda: any(" moves " in line for line in other.lines("messages")), "the move")
        mover.wait(lambda: mover.board_position() != before, "the new position")
