"""The chouette's seats and decisions in the browser (issue 31 item 6, docs/chouette.md
"In the browser"; D405): two browsers and the random bot at a 3-player table opened with
a short doubling window, beavers and free initial doubles. A member sees the team's
board as their own side (not "Watching"), the box as the box; delegation to the bot and
back; the box doubles and the member beavers; the member doubles and the box answers
that member by name; the member logs out (away) and returns with the panel's button;
axe-core finds nothing wrong with the page at the table."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .browsers import ServerThread, chromium
from .pages import Page, step
from .test_accessibility import AXE, violations
from .test_chouette_page import bot, cubes, pytestmark, said

__all__ = ["bot", "pytestmark"]

SEED = 3
"""The dice's seed: its first draw seats ann as the box, cat (the bot) as the captain and
bob as the other member, who is not the captain."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, seed=SEED) as running:
        yield running


PLAY_TIME = 120.0
"""Seconds the game may take to reach each decision before the test fails."""


def play_until(
    pages: dict[str, Page], done: str, condition: Callable[[], object], team: Page
) -> None:
    """Click what each page offers (rolls, moves) until ``condition()`` holds; the
    ``team`` page never rolls (the team autorolls once its doubling window closed)."""
    deadline = time.monotonic() + PLAY_TIME
    while not condition():
        assert time.monotonic() < deadline, f"never {done}: " + " | ".join(
            f"{p.text('prompt')} / {p.text('chouette-seats')}" for p in pages.values()
        )
        for page in pages.values():
            if not (page is team and page.visible("roll")):
                step(page)
        time.sleep(0.05)


def test_seats_delegation_beaver_answer_by_name_and_return(server: ServerThread, bot: None) -> None:
    with chromium() as a, chromium() as b:
        ann = Page(a, server.url, "ann")
        bob = Page(b, server.url, "bob")
        ann.register("ann", "secret1")
        bob.register("bob", "secret2")
        for page in (ann, bob):
            page.click("ready")
        bob.row_button("invite", "cat")  # the bot is here, ready
        bob.row_button("invite", "ann")
        bob.fill("chouette-settings", "double_window=2 beavers=on initial_doubles=free")
        bob.click("chouette-open")
        bob.wait(lambda: bob.visible("chouette-start"), "at the table")
        for name in ("cat", "ann"):  # this order's seeded draw: cat captain
            bob.fill("chouette-invite-name", name)
            bob.by_id("chouette-invite-form").find_element("css selector", "button").click()
            if name == "cat":
                bob.wait_line("messages", "cat joins the chouette.")
        ann.press('#chouette-invitations button[data-chouette-join="bob"]')
        bob.wait_line("messages", "ann joins the chouette.")
        bob.click("chouette-start")
        pages = {"ann": ann, "bob": bob}
        for page in pages.values():
            page.wait(lambda p=page: "game 1" in p.text("chouette-title"), "game 1")  # type: ignore[misc]
            page.wait(lambda p=page: len(cubes(p)) == 2, "both cubes")  # type: ignore[misc]
        seats = ann.text("chouette-seats")
        box = next(name for name in ("ann", "bob", "cat") if f"The box: {name}" in seats)
        assert box != "cat", f"the seeded draw seats a browser as the box: {seats}"
        member = "bob" if box == "ann" else "ann"
        mine, boxed = pages[member], pages[box]

        # The seats: the box's board says so; the member's board (the captain's side,
        # or their own as the captain) is theirs, never "Watching".
        boxed.wait(lambda: "you are the box" in boxed.text("match-title"), "the box's heading")
        mine.wait(lambda: "Chouette game 1" in mine.text("match-title"), "the member's heading")
        assert "Watching" not in mine.text("prompt"), mine.text("prompt")
        assert not mine.visible("unwatch")
        assert (box, member) == ("ann", "bob") and "the captain: cat" in seats, seats
        title = mine.text("match-title")
        assert (
            title == "Chouette game 1: the team of cat, bob against the box, ann; the captain: cat"
        )
        assert mine.text("prompt") == "The box, ann, to play. Your cube: 1, in the centre."
        assert (
            boxed.text("match-title")
            == "Chouette game 1: you are the box, against the team of cat, bob"
        )
        if AXE.exists():
            assert violations(a) == [], "the chouette page at the table"

        # Delegation to the bot, then back.
        mine.wait(lambda: mine.visible("chouette-delegate-form"), "the delegation form")
        mine.by_id("chouette-proxy").send_keys("cat")
        mine.click("chouette-delegate")
        mine.wait_line("messages", f"cat decides for the cube of {member}.")
        mine.wait(lambda: "cat decides for your cube" in mine.text("chouette-delegation"), "shown")
        mine.click("chouette-undelegate")
        mine.wait_line("messages", f"{member} decides for their own cube again.")
        mine.wait(lambda: not mine.visible("chouette-undelegate"), "the delegation ended")

        # The box doubles (the page's own Double button on its board), the member
        # beavers with the panel's button: the beaver is shown because the table allows it.
        play_until(pages, "the box's double", lambda: boxed.visible("double"), mine)
        boxed.click("double")
        mine.wait(lambda: mine.visible("chouette-beaver"), "the Beaver button")
        assert mine.text("prompt") == "The box doubles your cube: accept, reject or beaver."
        mine.click("chouette-beaver")
        mine.wait_line("messages", f"{member} beavers the box's double: the cube is 4.")
        mine.wait(lambda: cubes(mine)[member][1:3] == ["4", "the member owns it"], "beavered")

        # The member doubles their cube (4 to 8) in the team's window; the box answers
        # that member by name, the box's checkbox form listing the doubles.
        play_until(pages, "the team's window", lambda: mine.visible("chouette-double"), mine)
        mine.click("chouette-double")
        mine.wait_line("messages", f"{member} doubles the box: the cube to 8.")
        boxed.wait(lambda: boxed.visible("chouette-box-answer"), "the box's answer form")
        names = [
            e.get_attribute("value")
            for e in boxed.all("#chouette-box-doubles input[type=checkbox]")
        ]
        assert member in names, names
        if AXE.exists():
            assert violations(a) == [], "the box's answer form"
        for checkbox in boxed.all("#chouette-box-doubles input[type=checkbox]"):
            if checkbox.get_attribute("value") != member:
                checkbox.click()  # the others' doubles rejected
        boxed.click("chouette-box-send")
        boxed.wait_line("messages", f"The box accepts the double of {member}: the cube is 8.")
        if "cat" in names:
            boxed.wait_line("messages", "The box rejects the double of cat.")
        mine.wait(lambda: cubes(mine)[member][1:3] == ["8", "the box owns it"], "taken")

        # The member logs out: away; logs in again: the panel's Return takes the seat.
        mine.click("logout")
        boxed.wait_line("messages", f"{member} is away from the table.")
        mine.login(member, "secret2")
        mine.wait(
            lambda: mine.visible("chouette-return") or said(mine, "is back at the table"),
            "Return",
        )
        if mine.visible("chouette-return"):  # not returned at login (D361)
            mine.click("chouette-return")
        boxed.wait_line("messages", f"{member} is back at the table.")
        mine.wait(lambda: member in cubes(mine), "the member's cube again")
        mine.wait(lambda: not mine.visible("chouette-return"), "Return gone")
        assert "away" not in mine.text("chouette-seats")
