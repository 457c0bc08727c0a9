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
from .pages import Page, check_bot_marks

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
            check_bot_marks(alice, "robot", ("tina", "alice"))
    finally:
        robot.close()
        tina.close()
