"""A test run leaves the tree as it was (issue 28, seen 7: `python -m pytest` rewrote four
tracked files in docs/images/). The browser tests take screenshots only through
`Page.screenshot`, which writes only into the folder `FIBS_WEB_SCREENSHOTS` names; a run
without it writes none. No browser needed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from . import pages
from .browsers import ROOT
from .pages import Page


class Driver:
    """A browser that only records the screenshots asked of it."""

    def __init__(self) -> None:
        self.saved: list[str] = []

    def save_screenshot(self, path: str) -> bool:
        self.saved.append(path)
        return True


def _folder(environment: dict[str, str]) -> str:
    """`tests.web.browsers.SCREENSHOTS` in a fresh interpreter with ``environment``."""
    code = "import tests.web.browsers as b; print(b.SCREENSHOTS)"
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    assert found.returncode == 0, found.stderr
    return found.stdout.strip()


def test_a_plain_run_takes_no_screenshot(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = {k: v for k, v in os.environ.items() if k != "FIBS_WEB_SCREENSHOTS"}
    assert _folder(plain) == "None"
    assert _folder({**plain, "FIBS_WEB_SCREENSHOTS": "docs/images"}) == "docs/images"
    # What Page.screenshot does in such a run: nothing.
    monkeypatch.setattr(pages, "SCREENSHOTS", None)
    page = Page.__new__(Page)  # no browser: the driver stands in
    driver = Driver()
    page.driver = driver
    page.screenshot("web-lobby.png")
    assert driver.saved == []


def test_only_page_screenshot_saves_screenshots() -> None:
    """No test saves a screenshot of its own, past the folder's rule."""
    tests = ROOT / "tests"
    callers = sorted(
        str(path.relative_to(ROOT))
        for path in tests.rglob("*.py")
        if "save_screenshot(" in path.read_text() and path != Path(__file__)
    )
    assert callers == ["tests/web/pages.py"]
