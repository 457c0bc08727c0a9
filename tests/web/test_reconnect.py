"""Never lost (issue 28 item 2): the page comes back by itself after a dropped
connection, with its session token (D320-D324), never showing the login form.

* The server killed with SIGKILL in the middle of a match and started again on the same
  database and port: both players' pages show that they reconnect, log in again with
  their tokens, resume the saved match (one invites, the other's page joins) at the
  position it had, and play on; a third page that was watching watches again.
* One page's WebSocket cut while the server runs: that page comes back, its opponent's
  page joins the resumed match; a reload of the tab comes back the same way; Log out
  ends the token and the page stays out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.server.sessions import online

from .browsers import ServerProcess, ServerThread, browser_missing, chromium
from .pages import Page, at_a_match, on_move, step
from .test_accessibility import AXE, violations

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")

BACK = 60.0
"""Seconds a page may take to come back: the server's restart and the page's waits
between tries (1, 2, 4, 8 s...)."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path) as running:
        yield running


def play_a_turn(mover: Page) -> None:
    """The mover plays one whole turn by clicking, up to Send move."""
    mover.wait(lambda: step(mover) == "send", "a turn played")


class Watch:
    """Checks, at every look of a wait, that a page never falls back to its login form."""

    def __init__(self, *pages: Page) -> None:
        self.pages = pages

    def never_the_login_form(self) -> None:
        for page in self.pages:
            assert not page.visible("account"), f"{page.label}: the login form came back"

    def until(self, page: Page, condition: Callable[[], object], what: str) -> None:
        def look() -> bool:
            self.never_the_login_form()
            return bool(condition())

        page.wait(look, what, timeout=BACK)


def token_kept(page: Page) -> bool:
    """The page keeps a session token for its tab."""
    return bool(
        page.driver.execute_script("return sessionStorage.getItem('fibs-session') !== null")
    )


def back_at(page: Page, position: str) -> bool:
    """The page is back at the table, showing ``position``, no longer reconnecting."""
    return (
        page.visible("table")
        and page.board_position() == position
        and not page.visible("reconnecting")
    )


def settled(a: Page, b: Page) -> Page:
    """The page whose player is to roll next, once the other's move has reached both
    boards: the position both show is the one stored."""
    found = a.wait(
        lambda: next((p for p in (a, b) if p.visible("table") and p.visible("roll")), None),
        "a player to roll",
    )
    assert found is not None
    return found


def test_the_server_killed_and_started_again_mid_match(tmp_path: Path) -> None:
    with (
        ServerProcess(tmp_path) as server,
        chromium() as a,
        chromium() as b,
        chromium(390, 844) as c,
    ):
        alice, bob = at_a_match(server, a, b, 5)
        carol = Page(c, server.url, "carol")
        carol.register("carol", "secret3")
        carol.press_row_button("watch", "alice")
        carol.wait(lambda: carol.visible("table"), "the watched board")
        for page in (alice, bob, carol):
            page.wait(functools.partial(token_kept, page), "a session token kept")
        play_a_turn(on_move(alice, bob))
        roller = settled(alice, bob)
        before = {p.label: p.board_position() for p in (alice, bob)}
        title = alice.text("match-title")
        carol.wait(lambda: carol.board_position() != "", "carol's board")

        server.kill()
        watch = Watch(alice, bob, carol)
        for page in (alice, bob, carol):
            watch.until(page, functools.partial(page.visible, "reconnecting"), "reconnecting")
            assert "Reconnecting" in page.text("reconnecting")
            assert page.text("status") == "Reconnecting…"
            assert page.driver.execute_script("return document.body.classList.contains('offline')")

        bob.screenshot("web-reconnecting.png")
        if AXE.exists():  # the reconnecting state is as readable as the rest
            assert violations(a) == []
        server.start()
        for page in (alice, bob):
            watch.until(
                page,
                functools.partial(back_at, page, before[page.label]),
                "the match resumed where it was",
            )
            assert page.text("status") == f"Logged in as {page.label}"
        assert alice.text("match-title") == title
        watch.until(
            carol,
            lambda: carol.visible("table") and "Watching" in carol.text("prompt"),
            "watching alice again",
        )
        # The match goes on: the player to roll rolls, and someone has checkers to move.
        roller.wait(lambda: roller.visible("roll"), "Roll offered again")
        roller.click("roll")
        on_move(alice, bob)
        watch.never_the_login_form()


def test_a_dropped_connection_a_reload_and_log_out(server: ServerThread) -> None:
    with chromium() as a, chromium() as b:
        alice, bob = at_a_match(server, a, b, 3)
        alice.wait(functools.partial(token_kept, alice), "a session token kept")
        # A token, never the password, is what the browser keeps (issue 28 item 2).
        kept = alice.driver.execute_script(
            "return JSON.stringify([Object.entries(localStorage),"
            " Object.entries(sessionStorage), document.cookie])"
        )
        assert "secret1" not in kept, kept
        play_a_turn(on_move(alice, bob))
        settled(alice, bob)
        before = alice.board_position()

        # alice's WebSocket is cut (as a lost network does); the server runs on.
        server.call(lambda: _abort(server, "alice"))
        watch = Watch(alice, bob)
        watch.until(alice, lambda: alice.visible("reconnecting"), "reconnecting")
        watch.until(alice, functools.partial(back_at, alice, before), "the match resumed")
        bob.wait(lambda: bob.visible("table") and bob.visible("roll") != alice.visible("roll"))

        # A reload of the tab: back in by itself, the match resumed again.
        alice.driver.refresh()
        watch.until(
            alice,
            lambda: (
                alice.text("status") == "Logged in as alice"
                and alice.visible("table")
                and alice.board_position() == before
            ),
            "back after a reload",
        )

        # Log out: the token ends, and the page does not come back by itself.
        alice.click("logout")
        alice.wait(lambda: alice.text("status") == "Logged out.", "logged out")
        assert alice.driver.execute_script("return sessionStorage.getItem('fibs-session')") is None
        assert not alice.visible("reconnecting")
        alice.driver.refresh()
        alice.wait(lambda: alice.visible("login-form"), "the login form after a reload")


async def _abort(server: ServerThread, name: str) -> None:
    online(server.app, name).output.abort()
