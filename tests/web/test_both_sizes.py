"""Issue 28's points that other tests check at one window size only, at the other: one
server, a phone (390×844) and a laptop (1366×768) in one match, so that the second size
costs one browser session, not a test each.

The phone: a name with a space and a too short password refused at registration (as
test_browser.py checks on a laptop), the bot mark in the lobby (test_lobby.py), the
command box's ``who`` table and a misspelling explained (test_command_box.py), the used
dice greyed (test_browser.py), the position as text (test_accessibility.py), Leave asking
again and the match length kept at the next login (test_browser.py). The laptop: the
wrong-password note beside the form (test_browser.py on a phone) and a tap on a checker
with one legal destination playing it (test_drag.py on a phone): a laptop with a touch
screen; a mouse click only picks the checker, by design (a double click plays it)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from protocol import replies
from tests.server.conftest import make_user

from .browsers import ServerThread, TelnetUser, browser_missing, chromium
from .pages import Page, check_bot_marks, step
from .test_command_box import typed
from .test_drag import tap_first_checker
from .test_lobby import MARKER

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


def _refused_at_registration(page: Page, name: str, password: str) -> None:
    page.fill("register-name", name)
    page.fill("register-password", password)
    page.fill("register-again", password)
    page.by_id("register-form").find_element("css selector", "button").click()


def _wrong_password_note(page: Page) -> None:
    """Logged out, a wrong password: the reason beside the form, read out (as
    test_browser.py checks on a phone)."""
    page.click("logout")
    page.wait(lambda: page.text("status") == "Logged out.", "logged out")
    page.fill("login-name", page.label)
    page.fill("login-password", "wrong1")
    page.by_id("login-form").find_element("css selector", "button").click()
    page.wait(lambda: page.text("status").startswith("Login failed"), "refused")
    assert page.text("account-note") == "Login failed: wrong name or password."
    note = page.by_id("account-note")
    assert note.get_attribute("role") == "alert" and note.is_displayed()
    assert note.find_element("xpath", "..").get_attribute("id") == "account"


def _command_box(page: Page) -> None:
    """``who`` as a table and a misspelling explained (as test_command_box.py checks)."""
    page.command("who")
    page.wait(lambda: replies.WHO_HEADER in typed(page), "the who table")
    rows = page.wait(lambda: [r.split() for r in typed(page) if r[:1].isdigit()], "its rows")
    assert sorted(r[2] for r in rows) == ["alice", "bob", "robot"]
    assert "> who" in typed(page)
    assert not any(line.startswith("5 ") for line in page.lines("messages"))
    assert page.all('#who tr[data-name="robot"]')  # the rows did not disturb the lobby
    page.command("shuot hello")
    page.wait_line("messages", replies.did_you_mean("shuot", ["shout"]))
    assert replies.unknown_command("shuot") in typed(page)
    assert "Value of 'boardstyle' set to 3." not in page.lines("messages")


def _first_turn_on_the_phone(page: Page) -> None:
    """The position as text on demand (as test_accessibility.py checks), and a die shown
    used once a move takes it (as test_browser.py checks)."""
    page.all("#position-box summary")[0].click()
    page.wait(lambda: page.text("position-text").startswith(f"{page.label}: "), "the text")
    assert "Cube 1." in page.text("position-text")
    before = page.text("position-text")
    dice = [int(str(d.get_attribute("data-die"))) for d in page.all("rect.die.mine")]
    assert len(dice) == 2 and page.all("rect.die.used") == []
    assert step(page) == "from" and step(page) == "to"
    used = 0 if dice[0] == dice[1] else 1
    page.wait(lambda: len(page.all("rect.die.mine.used")) == used, "a die used")
    assert page.text("position-text") != before  # the text follows the board


def test_the_one_size_items_at_the_other_size(server: ServerThread) -> None:
    server.call(lambda: make_user(server.app, "robot"))
    robot = TelnetUser(server.telnet_port)  # a program: the bots' client field (D325)
    try:
        robot.wait_for(replies.LOGIN_PROMPT)
        robot.send(f"login {MARKER} 1008 robot secret")
        robot.wait_for("\r\n6\r\n")
        with chromium(390, 844) as a, chromium(1366, 768) as b:
            _play(server, a, b)
    finally:
        robot.close()


def _play(server: ServerThread, a: Any, b: Any) -> None:
    from selenium.common.exceptions import StaleElementReferenceException

    alice = Page(a, server.url, "alice")  # the phone
    bob = Page(b, server.url, "bob")  # the laptop
    # The server's name and password rules, refused at once with their reasons.
    _refused_at_registration(alice, "al ice", "secret1")
    alice.wait(lambda: "may only contain letters" in alice.text("status"), "the refusal")
    assert alice.text("account-note") == alice.text("status")  # beside the form too
    _refused_at_registration(alice, "alice", "abc")
    alice.wait(
        lambda: alice.text("status") == f"Not registered: {replies.PASSWORD_TOO_SHORT}",
        "the refusal",
    )
    alice.register("alice", "secret1")
    bob.register("bob", "secret2")
    _wrong_password_note(bob)
    bob.login("bob", "secret2")
    check_bot_marks(alice, "robot", ("alice", "bob"))
    _command_box(alice)

    # A 3-point match (the length the next login finds again).
    for page in (alice, bob):
        page.click("ready")
    alice.fill("invite-length", "3")
    alice.press_row_button("invite", "bob")
    bob.wait(lambda: bob.all('#invitations button[data-join="alice"]'), "an invitation")
    bob.press('#invitations button[data-join="alice"]')
    alice.wait(lambda: "3-point match" in alice.text("match-title"), "the match title")

    phone_checked = False
    taps = {"direct": 0, "chosen": 0}
    deadline = time.monotonic() + 300
    while not (phone_checked and taps["direct"] and taps["chosen"]):
        assert time.monotonic() < deadline, (phone_checked, taps)
        for page in (alice, bob):
            if page.visible("roll") or page.visible("send"):
                step(page)
        if alice.all("rect.hit.source"):
            if phone_checked:
                step(alice)
            else:
                _first_turn_on_the_phone(alice)
                phone_checked = True
        elif bob.all("rect.hit.source") and not bob.visible("undo"):
            try:
                taps["direct" if tap_first_checker(bob) else "chosen"] += 1
            except StaleElementReferenceException:
                continue
        elif bob.all("rect.hit.source"):
            step(bob)
        else:
            time.sleep(0.05)

    # Leave asks once more, then the match is saved.
    alice.click("leave")
    alice.wait(lambda: "Click again" in alice.text("leave"), "Leave asking again")
    assert alice.visible("table")
    alice.click("leave")
    bob.wait(lambda: bob.all('#saved button[data-resume="alice"]'), "a saved match")
    # The length chosen is kept in the browser: at the next login after a reload too.
    alice.click("logout")
    alice.wait(lambda: alice.text("status") == "Logged out.", "logged out")
    alice.driver.refresh()
    alice.wait(lambda: alice.visible("login-form"), "the login form after a reload")
    alice.login("alice", "secret1")
    assert alice.by_id("invite-length").get_attribute("value") == "3"
