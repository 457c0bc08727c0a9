"""The command box speaks like telnet (issue 28 item 6, D376): what is typed there is
answered as a telnet user reads it (who as a table, help, misspellings explained), the
page's own commands stay CLIP, and a program on the WebSocket is not concerned."""

from __future__ import annotations

import pytest

from protocol import replies
from protocol.commands import help_lines
from tests.server.conftest import make_user

from .browsers import ServerThread, TelnetUser, browser_missing, chromium
from .pages import Page

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


def typed(page: Page) -> list[str]:
    """The lines of the messages panel shown as a typed command's reply."""
    return [
        str(text)
        for text in page.driver.execute_script(
            "return [...document.querySelectorAll('#messages li.typed')]"
            ".map((li) => li.textContent)"
        )
    ]


def test_the_command_box_answers_as_telnet(server: ServerThread) -> None:
    server.call(lambda: make_user(server.app, "tina"))
    tina = TelnetUser(server.telnet_port)  # a CLIP client beside the page
    try:
        tina.wait_for(replies.LOGIN_PROMPT)
        tina.send("login a_program 1008 tina secret")
        tina.wait_for("\r\n6\r\n")
        with chromium() as driver:
            alice = Page(driver, server.url, "alice")
            alice.register("alice", "secret1")
            alice.wait(lambda: alice.all('#who tr[data-name="tina"]'), "tina in the lobby")

            alice.command("who")
            alice.wait(lambda: replies.WHO_HEADER in typed(alice), "the who table")
            rows = alice.wait(
                lambda: [r.split() for r in typed(alice) if r[:1].isdigit()], "its rows"
            )
            assert sorted((r[0], r[2]) for r in rows) == [("1", "tina"), ("2", "alice")]  # by login
            assert "> who" in typed(alice)  # what was typed, echoed as a terminal does
            assert not any(line.startswith("5 ") for line in alice.lines("messages"))
            # The rows did not disturb the lobby (a who row starts with a number too).
            assert alice.all('#who tr[data-name="tina"]')
            assert not alice.by_id("ready").is_selected()

            alice.command("shuot hello")
            alice.wait_line("messages", replies.did_you_mean("shuot", ["shout"]))
            assert replies.unknown_command("shuot") in typed(alice)
            alice.command("sh")
            alice.wait_line("messages", replies.ambiguous_command("sh", ["shout", "show"]))

            alice.command("help who")
            for line in help_lines("who"):
                alice.wait_line("messages", line)
            font = alice.driver.execute_script(
                "return getComputedStyle(document.querySelector('#messages li.typed')).whiteSpace"
            )
            assert font == "pre"  # tables keep their columns

            # The page's own setting at login is not news.
            assert "Value of 'boardstyle' set to 3." not in alice.lines("messages")
            # A program's session is plain CLIP as ever: its who is CLIP 5 and 6.
            before = len(tina.wait_for(""))
            tina.send("who")
            own = tina.wait_for("\r\n5 tina ", since=before).index("\r\n5 tina ", before)
            after = tina.wait_for("\r\n6\r\n", since=own)[before:]
            assert "\r\n5 alice " in after
            assert replies.WHO_HEADER not in after and "text! " not in after
    finally:
        tina.close()
