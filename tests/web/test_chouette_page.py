"""The chouette in the browser (issue 31 item 6, docs/chouette.md "In the browser"): two
browsers and the random bot (``python -m bots.random --chouette``, a process of its own)
at a 3-player table, one game played to the end with seeded dice: the panel shows the
line and every cube from ``show chouette``, a member doubles with the panel's own button
and the box answers on its page, team talk reaches the other member, and axe-core finds
nothing wrong with the page at the table."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .browsers import ROOT, ServerThread, browser_missing, chromium
from .pages import SHOWN, Page, step
from .test_accessibility import AXE, violations

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))

GAME_TIME = 240.0
"""Seconds the whole game may take before the test fails (the bot plays at once; the
team's double window is 10 s a turn when nobody doubles)."""


@pytest.fixture
def bot(server: ServerThread, tmp_path: Path) -> Iterator[None]:
    """cat, the random bot, joining the chouettes it is invited to."""
    log = (tmp_path / "bot.log").open("w")
    command = [sys.executable, "-m", "bots.random", "--host", "127.0.0.1"]
    command += ["--port", str(server.telnet_port), "--name", "cat", "--password", "secret3"]
    command += ["--chouette", "--seed", "1"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
    log.close()
    try:
        yield
    finally:
        process.terminate()
        process.wait(15)


def cubes(page: Page) -> dict[str, list[str]]:
    """The panel's cube table: each member's row of cells."""
    rows: dict[str, list[str]] = page.driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('#chouette-cubes tbody tr')]"
        ".map((tr) => [tr.dataset.member, [...tr.cells].map((td) => td.textContent)]))"
    )
    return rows


def said(page: Page, text: str) -> int:
    return sum(text in line for line in page.lines("messages"))


LOOK = SHOWN + (
    "return {seats: document.getElementById('chouette-seats').innerText,"
    " double: shown(document.getElementById('chouette-double')),"
    " accept: shown(document.getElementById('accept')),"
    " messages: [...document.getElementById('messages').children].map((li) => li.textContent)};"
)
"""What the game's loop reads of a page, in one round trip (it was seven): the seats'
text, whether Double my cube and the board's Accept are shown, the messages."""


def over(messages: list[str]) -> bool:
    return any("Chouette game 1 is over" in line for line in messages)


def test_two_browsers_and_a_bot_play_a_chouette_game(server: ServerThread, bot: None) -> None:
    from selenium.common.exceptions import ElementNotInteractableException

    with chromium() as a, chromium() as b:
        ann = Page(a, server.url, "ann")
        bob = Page(b, server.url, "bob")
        ann.register("ann", "secret1")
        bob.register("bob", "secret2")
        for page in (ann, bob):
            page.click("ready")
        ann.row_button("invite", "cat")  # the bot is here, ready
        ann.row_button("invite", "bob")
        ann.click("chouette-open")
        ann.wait(lambda: ann.visible("chouette-start"), "at the table")
        for name in ("bob", "cat"):
            ann.fill("chouette-invite-name", name)
            ann.press("#chouette-invite-form button")
        bob.press('#chouette-invitations button[data-chouette-join="ann"]')
        ann.wait_line("messages", "bob joins the chouette.")
        ann.wait_line("messages", "cat joins the chouette.")
        if AXE.exists():
            assert violations(a) == [], "the chouette panel before the game"
        ann.click("chouette-start")
        pages = {"ann": ann, "bob": bob}
        for page in pages.values():
            page.wait(lambda p=page: "game 1" in p.text("chouette-title"), "game 1")  # type: ignore[misc]
        seats = ann.text("chouette-seats")
        box = next(name for name in ("ann", "bob", "cat") if f"The box: {name}" in seats)
        assert box != "cat", f"seed 7 seats a browser as the box: {seats}"
        member = "bob" if box == "ann" else "ann"
        for page in pages.values():  # the line and each cube, on both pages
            page.wait(lambda p=page: set(cubes(p)) == {member, "cat"}, "both cubes")  # type: ignore[misc]
            assert cubes(page)[member][1:3] == ["1", "in the centre"]
        assert not pages[box].visible("chouette-member")  # the box has no cube of its own

        doubled = answered = False
        answers = 0
        deadline = time.monotonic() + GAME_TIME
        mine, boxed = pages[member], pages[box]
        while True:
            seen = {name: page.driver.execute_script(LOOK) for name, page in pages.items()}
            if all(over(look["messages"]) for look in seen.values()):
                break
            assert time.monotonic() < deadline, "the game did not end"
            team_turn = "the team on roll" in seen[member]["seats"]
            if not doubled and team_turn and seen[member]["double"]:  # D405 allows it
                try:
                    mine.click("chouette-double")
                except ElementNotInteractableException:
                    continue  # the window closed under the click: the team's next turn
                mine.wait_line("messages", f"{member} doubles the box: the cube to 2.")
                doubled = True
            if doubled and not answered and seen[box]["accept"]:
                boxed.click("accept")  # the box answers the member's double on its page
                boxed.wait(lambda: said(boxed, f"The box accepts the double of {member}"), "taken")
                answered = True
                # Team talk: allowed once the member's own cube was turned (the default
                # consultation setting); the box never sees it.
                mine.fill("chouette-team-text", "we doubled")
                mine.press("#chouette-team-form button")
                mine.wait_line("chouette-talk", "You: we doubled")
            box_doubles = f"The box doubles {member}:"
            if sum(box_doubles in line for line in seen[member]["messages"]) > answers:
                answers += 1
                mine.click("chouette-accept")  # the member answers the box with the panel
            for name, page in pages.items():
                if name == member and not doubled:
                    continue  # the captain's roll would close the window before the double
                step(page)
            time.sleep(0.05)
        assert answered
        assert not any("we doubled" in line for line in pages[box].lines("chouette-talk"))
        won = [
            int(m[1])
            for line in ann.lines("messages")
            if member in line and (m := re.search(r" wins (\d+) points? from ", line))
        ]
        assert won and won[0] >= 2, ann.lines("messages")[-30:]
        # The next game starts after the rotation: the panel follows it on both pages,
        # every cube back at 1 in the centre.
        for page in pages.values():
            page.wait(lambda p=page: "game 2" in p.text("chouette-title"), "game 2")  # type: ignore[misc]
            page.wait(
                lambda p=page: all(row[1:3] == ["1", "in the centre"] for row in cubes(p).values()),  # type: ignore[misc]
                "fresh cubes",
            )
        if AXE.exists():
            assert violations(b) == [], "the chouette panel after the game"
