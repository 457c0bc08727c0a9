"""The lobby marks bots (issue 28, seen 6; D325): a user whose client field is a computer
profile (§2.3, the rule by which the server marks bot accounts) has a *bot* mark after
the name; a person has none."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol import replies
from tests.server.conftest import make_user

from .browsers import ServerThread, TelnetUser, browser_missing, chromium
from .pages import Page

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")

MARKER = "=NTRandom$ot_______P"
"""The bots library's client field (docs/bots.md, "The bot marker")."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path) as running:
        yield running


def test_bots_are_marked_in_the_lobby(server: ServerThread) -> None:
    for name in ("robot", "tina"):
        server.call(lambda name=name: make_user(server.app, name))  # type: ignore[misc]
    robot, tina = TelnetUser(server.telnet_port), TelnetUser(server.telnet_port)
    try:
        robot.wait_for(replies.LOGIN_PROMPT)
        robot.send(f"login {MARKER} 1008 robot secret")
        tina.wait_for(replies.LOGIN_PROMPT)
        tina.send("login a_person 1008 tina secret")
        for user in (robot, tina):
            user.wait_for("\r\n6\r\n")
        with chromium() as a:
            alice = Page(a, server.url, "alice")
            alice.register("alice", "secret1")
            row = alice.wait(
                lambda: (alice.all('#who tr[data-name="robot"]') or [None])[0], "robot's row"
            )
            assert row.get_attribute("data-bot") == "1"
            assert row.find_element("css selector", ".bot-mark").text == "bot"
            for person in ("tina", "alice"):
                other = alice.wait(
                    lambda person=person: (  # type: ignore[misc]
                        alice.all(f'#who tr[data-name="{person}"]') or [None]
                    )[0],
                    f"{person}'s row",
                )
                assert other.get_attribute("data-bot") is None
                assert other.find_elements("css selector", ".bot-mark") == []
    finally:
        robot.close()
        tina.close()
