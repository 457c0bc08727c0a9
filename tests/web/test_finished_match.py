"""Finished matches on the page (issue 28 item 7, D377): a player's page (rating,
experience, recent matches) linked from the lobby, and a page per finished match with
its games, every step replayable on the board and the ``.mat`` download, served from
the stored record; at 1366×768 and 390×844, checked with axe-core."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from protocol.mat_export import snapshot_to_mat
from protocol.match_replay import replay_json
from tests.server.conftest import make_user
from tests.server.test_analysis_queue import record_random_match

from .browsers import WAIT, ServerThread, browser_missing, chromium
from .pages import Page
from .test_accessibility import AXE, violations

MISSING = browser_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}")


def stored(server: ServerThread, seed: int, length: int) -> tuple[int, dict[str, Any], str]:
    """A finished match of random plays stored as the server stores one: its id, its
    steps as `match!` sends them, and its .mat text."""
    match_id = server.call(lambda: record_random_match(server.app.db, seed, length))
    record = server.call(lambda: server.app.db.get_match_record(match_id))
    assert record is not None
    found = json.loads(
        replay_json(
            record.moves,
            match_id=match_id,
            players=(record.player1, record.player2),
            score=(record.score1, record.score2),
            winner=record.winner,
            started_at=record.started_at,
            ended_at=record.ended_at,
        )
    )
    name = server.app.settings.server_name
    return match_id, found, snapshot_to_mat(record.moves, site=name, started_at=record.started_at)


def shown(page: Page) -> str:
    return str(page.by_id("record-board").get_attribute("data-position") or "")


def board(values: list[int]) -> str:
    return ":".join(str(v) for v in values)


def in_view(page: Page, element_id: str) -> bool:
    """The element is inside the window, without scrolling."""
    return bool(
        page.driver.execute_script(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;",
            element_id,
        )
    )


def test_a_players_page_and_a_finished_match_step_by_step(
    server: ServerThread, tmp_path: Path
) -> None:
    for name in ("alice", "bob"):
        server.call(lambda name=name: make_user(server.app, name))  # type: ignore[misc]
    match_id, found, mat = stored(server, seed=0, length=3)
    games = found["games"]
    assert len(games) >= 2  # a game to choose
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with chromium(1366, 768) as driver:
        driver.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        alice = Page(driver, server.url, "alice")
        alice.login("alice", "secret")

        # The lobby links to each player's page: rating, experience, recent matches.
        alice.press('#who tr[data-name="alice"] a')
        alice.wait(lambda: alice.visible("profile"), "alice's page")
        alice.wait(lambda: "Rating 1500.00" in alice.text("profile-facts"), "the rating")
        assert "experience 0" in alice.text("profile-facts")
        row = alice.wait(lambda: alice.all(f'#profile-matches tr[data-match="{match_id}"]'))
        cells = [str(c.text) for c in row[0].find_elements("css selector", "td")]
        assert cells[:3] == [f"Match {match_id}", "bob", "3"]
        assert cells[3].startswith(f"{found['score'][0]}-{found['score'][1]} ")
        alice.screenshot("web-player.png")
        if AXE.exists():
            assert violations(driver) == [], "a player's page"

        # The match's page: its games, the board at the start of the first one.
        alice.press(f'#profile-matches tr[data-match="{match_id}"] a')
        alice.wait(lambda: alice.visible("record-body"), "the match's page")
        assert alice.text("record-title") == f"Match {match_id}: alice – bob, 3 point match"
        assert shown(alice) == board(games[0]["start"])
        options = alice.all("#record-game option")
        assert len(options) == len(games)
        steps = games[0]["steps"]
        assert len(alice.all("#record-moves button")) == len(steps)
        # Step by step with Next, and back with Previous.
        for index in range(3):
            alice.click("record-next")
            alice.wait(lambda i=index: shown(alice) == board(steps[i]["board"]))  # type: ignore[misc]
        first = steps[0]
        roll = f"{first['dice'][0]}-{first['dice'][1]}"
        assert alice.text("record-step") == f"Step 3 of {len(steps)}: " + str(
            alice.all("#record-moves button")[2].text
        )
        assert str(alice.all("#record-moves button")[0].text).startswith(
            f"{found['players'][first['player']]} {roll}: "
        )
        assert alice.all('#record-moves button[aria-current="step"]')[0].text == (
            alice.all("#record-moves button")[2].text
        )
        alice.click("record-prev")
        alice.wait(lambda: shown(alice) == board(steps[1]["board"]), "one step back")
        # Any step at once, the last one, and the start again.
        alice.all("#record-moves button")[10].click()
        alice.wait(lambda: shown(alice) == board(steps[10]["board"]), "step 11")
        alice.click("record-last")
        alice.wait(lambda: shown(alice) == board(steps[-1]["board"]), "the last step")
        assert alice.by_id("record-next").get_attribute("disabled") is not None
        assert alice.text("record-step").endswith(" wins 1 point") or "wins" in alice.text(
            "record-step"
        )
        alice.click("record-first")
        alice.wait(lambda: shown(alice) == board(games[0]["start"]), "the start")
        # Another game.
        from selenium.webdriver.support.ui import Select

        Select(alice.by_id("record-game")).select_by_index(1)
        alice.wait(
            lambda: len(alice.all("#record-moves button")) == len(games[1]["steps"]), "game 2"
        )
        alice.click("record-last")
        alice.wait(lambda: shown(alice) == board(games[1]["steps"][-1]["board"]), "its end")
        # The whole board and its step buttons fit a 1366×768 laptop without scrolling.
        driver.execute_script("document.getElementById('record-title').scrollIntoView()")
        for element_id in ("record-board", "record-next", "record-step"):
            assert in_view(alice, element_id), element_id
        alice.all("#record-moves button")[20].click()
        alice.wait(lambda: shown(alice) == board(games[1]["steps"][20]["board"]), "step 21")
        driver.execute_script("document.getElementById('record-title').scrollIntoView()")
        alice.screenshot("web-finished-match.png")
        if AXE.exists():
            assert violations(driver) == [], "a finished match's page"

        # The .mat download: the file export would send.
        alice.click("record-mat")
        path = downloads / f"match-{match_id}.mat"
        deadline = time.monotonic() + WAIT
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert path.read_text() == mat

        # Its analysis (D326) opens under it.
        alice.click("record-analyse")
        alice.wait(lambda: alice.visible("analysis"), "the analysis")
        assert alice.text("analysis-title").startswith(f"Analysis of match {match_id}")

        # Close: back to the lobby; the browser's Back button opens the page again.
        alice.click("record-close")
        alice.wait(lambda: not alice.visible("record"), "the page closed")
        assert alice.visible("lobby")
        driver.back()
        alice.wait(lambda: alice.visible("record-body"), "the page again")


def test_a_finished_match_on_a_phone(server: ServerThread) -> None:
    for name in ("alice", "bob"):
        server.call(lambda name=name: make_user(server.app, name))  # type: ignore[misc]
    match_id, found, _mat = stored(server, seed=5, length=1)
    steps = found["games"][0]["steps"]
    with chromium(390, 844) as driver:
        driver.get(f"{server.url}#match/{match_id}")  # an address of its own
        alice = Page(driver, f"{server.url}#match/{match_id}", "alice")
        alice.login("alice", "secret")
        alice.wait(lambda: alice.visible("record-body"), "the match's page after the login")
        alice.click("record-next")
        alice.wait(lambda: shown(alice) == board(steps[0]["board"]), "the first step")
        width = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1], "nothing wider than the phone"
        driver.execute_script("document.getElementById('record-title').scrollIntoView()")
        for element_id in ("record-board", "record-next"):
            assert in_view(alice, element_id), element_id
        alice.screenshot("web-finished-match-phone.png")
        if AXE.exists():
            assert violations(driver) == [], "a finished match's page on a phone"
        # A name links to the player's page.
        alice.press('#record-facts a[href="#player/bob"]')
        alice.wait(lambda: alice.visible("profile"), "bob's page")
        alice.wait(lambda: alice.all(f'#profile-matches tr[data-match="{match_id}"]'), "the match")
        width = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width[0] <= width[1], "the player's page fits the phone"
        if AXE.exists():
            assert violations(driver) == [], "a player's page on a phone"
