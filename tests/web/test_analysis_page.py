"""A finished match's analysis on the page (issue 29 item 4; D326): asked for by its
number, analysed by GNU Backgammon itself (Debian's gnubg, the server's workers), shown
with each player's figures, an equity graph per game and every judged decision with its
mark, gnubg's best play on demand; axe-core finds nothing wrong with it."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

from protocol.analysis import analysis_from_json
from tests.server.test_analysis_queue import GNUBG, record_random_match

from .browsers import ServerThread, browser_missing, chromium
from .pages import Page
from .test_accessibility import AXE, violations

MISSING = browser_missing()
pytestmark = [
    pytest.mark.skipif(MISSING is not None, reason=f"browser tests: {MISSING}"),
    pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg"),
]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path, analysis="yes") as running:
        yield running


def test_a_finished_match_analysed_on_the_page(server: ServerThread) -> None:
    # A 3-point match of random plays, stored as the server stores one, not analysed yet:
    # the page's question queues it, and the page asks again until it is done.
    match_id = server.call(functools.partial(record_random_match, server.app.db, 3, 3))
    with chromium() as a:
        alice = Page(a, server.url, "alice")
        alice.register("alice", "secret1")
        alice.fill("analysis-id", str(match_id))
        alice.by_id("analysis-form").find_element("css selector", "button").click()
        alice.wait(lambda: alice.visible("analysis"), "the analysis section")
        alice.wait(lambda: alice.visible("analysis-players"), "the analysis shown", timeout=90)

        stored = server.call(functools.partial(server.app.db.get_analysis, match_id))
        assert stored is not None and stored.result is not None
        analysis = analysis_from_json(stored.result)
        assert alice.text("analysis-title") == (
            f"Analysis of match {match_id}, alice – bob, by GNU Backgammon at {analysis.ply}-ply"
        )
        rows = [
            [cell.text for cell in row.find_elements("css selector", "td")]
            for row in alice.all("#analysis-players tbody tr")
        ]
        assert [row[:2] for row in rows] == [
            ["alice", f"{analysis.players[0].rate:.1f}"],
            ["bob", f"{analysis.players[1].rate:.1f}"],
        ]
        assert [int(row[5]) for row in rows] == [p.blunders for p in analysis.players]

        # A graph and a list of decisions per game, every judged decision in it.
        assert len(alice.all("#analysis-games svg.equity")) == len(analysis.games)
        items = alice.all("#analysis-games ul.decisions li")
        assert len(items) == len(analysis.decisions())
        marks = [item.get_attribute("data-mark") for item in items]
        assert marks == [d.mark for d in analysis.decisions()]
        blunder = next(i for i, d in enumerate(analysis.decisions()) if d.mark == "blunder")
        item, decision = items[blunder], analysis.decisions()[blunder]
        assert item.find_element("css selector", ".sign").text == "??"
        best = item.find_element("css selector", ".best")
        assert not best.is_displayed()
        item.find_element("css selector", "button").click()
        alice.wait(best.is_displayed, "gnubg's best play shown")
        assert best.text == f"gnubg's best: {decision.best}, {round(decision.loss, 4):.3f} better"

        alice.driver.execute_script("document.getElementById('analysis').scrollIntoView()")
        alice.screenshot("web-analysis.png")
        if AXE.exists():
            assert violations(a) == []
