"""The page as a test sees it: fill in, click, wait for what it shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from .browsers import SCREENSHOTS, WAIT, ServerProcess, ServerThread


def moved_under_the_click() -> tuple[type[Exception], ...]:
    """What Selenium raises when the page changed between finding an element and
    clicking it: the element drawn anew (stale), or something else at its place for a
    moment (intercepted: a line added above it moved it; seen once in a chouette game on
    a busy machine). The click is then tried again."""
    from selenium.common.exceptions import (
        ElementClickInterceptedException,
        StaleElementReferenceException,
    )

    return (StaleElementReferenceException, ElementClickInterceptedException)


T = TypeVar("T")


class Page:
    """One browser on the page."""

    def __init__(self, driver: Any, url: str, label: str) -> None:
        self.driver = driver
        self.label = label
        driver.get(url)
        self.wait(lambda: "Log in" in self.text("status") or "Logged" in self.text("status"))

    # -- looking ------------------------------------------------------------------------

    def by_id(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def text(self, element_id: str) -> str:
        return str(self.by_id(element_id).text)

    def visible(self, element_id: str) -> bool:
        return bool(self.by_id(element_id).is_displayed())

    def lines(self, list_id: str) -> list[str]:
        """The texts of a list's items (the messages, the chat)."""
        return [
            str(text)
            for text in self.driver.execute_script(
                "return [...document.getElementById(arguments[0]).children]"
                ".map((li) => li.textContent)",
                list_id,
            )
        ]

    def wait(self, condition: Callable[[], T], what: str = "", timeout: float = WAIT) -> T:
        """Wait until ``condition()`` is true; return its value."""
        deadline = time.monotonic() + timeout
        while True:
            value: T | None
            try:
                value = condition()
            except Exception:  # the page changed under the look (stale element)
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.label}: never {what or condition}; status {self.text('status')!r}, "
                    f"prompt {self.text('prompt')!r}, messages {self.lines('messages')[-5:]!r}"
                )
            time.sleep(0.05)

    def wait_line(self, list_id: str, wanted: str) -> None:
        self.wait(lambda: wanted in self.lines(list_id), f"saw {wanted!r} in #{list_id}")

    def screenshot(self, name: str) -> None:
        """The page as it is now, as ``name`` in the screenshots' folder (only when the
        run writes screenshots: ``FIBS_WEB_SCREENSHOTS``)."""
        if SCREENSHOTS is None:
            return
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(SCREENSHOTS / name))

    # -- doing --------------------------------------------------------------------------

    def fill(self, element_id: str, value: str) -> None:
        field = self.by_id(element_id)
        field.clear()
        field.send_keys(value)

    def click(self, element_id: str) -> None:
        """Click the element ``element_id``; again if the page moved under the click
        (:func:`moved_under_the_click`), until :data:`WAIT` has passed."""
        deadline = time.monotonic() + WAIT
        while True:
            try:
                self.by_id(element_id).click()
                return
            except moved_under_the_click():
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def register(self, name: str, password: str) -> None:
        self.fill("register-name", name)
        self.fill("register-password", password)
        self.fill("register-again", password)
        self.by_id("register-form").find_element("css selector", "button").click()
        self.wait(lambda: self.text("status") == f"Logged in as {name}", "logged in")

    def login(self, name: str, password: str) -> None:
        self.fill("login-name", name)
        self.fill("login-password", password)
        self.by_id("login-form").find_element("css selector", "button").click()
        self.wait(lambda: self.text("status") == f"Logged in as {name}", "logged in")

    def visit(self) -> None:
        """Watch as a visitor (no account)."""
        self.click("visit")
        self.wait(lambda: self.text("status").startswith("Watching as a visitor"), "a visitor")

    def command(self, line: str) -> None:
        self.fill("command", line)
        self.by_id("command-form").find_element("css selector", "button").click()

    def say(self, kind: str, text: str, to: str = "") -> None:
        from selenium.webdriver.support.ui import Select

        Select(self.by_id("chat-kind")).select_by_value(kind)
        if to:
            self.fill("chat-to", to)
        self.fill("chat-text", text)
        self.by_id("chat-form").find_element("css selector", "button").click()

    def row_button(self, data: str, name: str) -> Any:
        """The lobby's Invite or Watch button for ``name`` once it is there."""
        return self.wait(
            lambda: (self.all(f'#who button[data-{data}="{name}"]') or [None])[0],
            f"a {data} button for {name}",
        )

    def press(self, css: str) -> None:
        """Click the first element ``css`` matches, once there is one. The lists the page
        draws anew at each update (the lobby, the invitations, the saved matches) can
        replace the element between finding it and clicking it: then :meth:`wait`,
        which takes any exception for "not yet", finds it again."""

        def pressed() -> bool:
            found = self.all(css)
            if found:
                found[0].click()
            return bool(found)

        self.wait(pressed, f"to press {css}")

    def press_row_button(self, data: str, name: str) -> None:
        """Click the lobby's Invite or Watch button for ``name`` once it is there."""
        self.press(f'#who button[data-{data}="{name}"]')

    def board_position(self) -> str:
        return str(self.by_id("board").get_attribute("data-position") or "")


def at_a_match(
    server: ServerThread | ServerProcess, a: Any, b: Any, length: int
) -> tuple[Page, Page]:
    """alice (in browser ``a``) and bob (in ``b``) registered, alice's invitation to a
    ``length``-point match joined by bob: their pages at the table."""
    alice = Page(a, server.url, "alice")
    bob = Page(b, server.url, "bob")
    alice.register("alice", "secret1")
    bob.register("bob", "secret2")
    for page in (alice, bob):
        page.click("ready")
    alice.fill("invite-length", str(length))
    alice.press_row_button("invite", "bob")
    bob.wait(lambda: bob.all('#invitations button[data-join="alice"]'), "an invitation")
    bob.press('#invitations button[data-join="alice"]')
    alice.wait(lambda: f"{length}-point match" in alice.text("match-title"), "the match title")
    return alice, bob


def on_move(a: Page, b: Page) -> Page:
    """The page of the player who has checkers to move now (once there is one)."""
    mover = a.wait(
        lambda: next((p for p in (a, b) if p.all("rect.hit.source")), None),
        "a checker to move",
    )
    assert mover is not None
    return mover


def step(page: Page) -> str | None:
    """Do the next thing the page offers its player, by clicking; what was done (None:
    nothing, or the board was drawn anew under the click: the caller tries again)."""
    try:
        return _click_next(page)
    except moved_under_the_click():
        return None


SHOWN = (
    "const shown = (e) => !!e && e.checkVisibility({opacityProperty: true,"
    " visibilityProperty: true});"
)
"""JavaScript: ``shown(element)``, whether an element is shown, as Selenium's
is_displayed says of the page's controls (hidden with ``hidden``, or in a part of the
page that is), for scripts that read several things in one round trip."""
NEXT = SHOWN + (
    "for (const id of ['roll', 'send']) {"
    "  const button = document.getElementById(id);"
    "  if (shown(button)) return [id, button];"
    "}"
    "const target = document.querySelector('rect.hit.target[data-point=\"0\"]')"
    "  || document.querySelector('rect.hit.target');"
    "if (target) return ['to', target];"
    "const sources = document.querySelectorAll('rect.hit.source');"
    "return sources.length ? ['from', sources[sources.length - 1]] : [null, null];"
)
"""What ``step`` clicks, found in one round trip (a walk with find_element and
is_displayed costs a dozen): Roll or Send move when shown (hidden with ``hidden``), else
a destination marked (off the board first), else the checker furthest from home (the
last that may move: a race ends sooner)."""


def _click_next(page: Page) -> str | None:
    done, element = page.driver.execute_script(NEXT)
    if element is None:
        return None
    element.click()
    return str(done)


def check_bot_marks(page: Page, bot: str, people: tuple[str, ...]) -> None:
    """The lobby marks ``bot``'s row a bot (``data-bot``, the visible mark) and none of
    ``people``'s rows (issue 28, seen 6)."""
    row = page.wait(lambda: (page.all(f'#who tr[data-name="{bot}"]') or [None])[0], f"{bot}'s row")
    assert row.get_attribute("data-bot") == "1"
    assert row.find_element("css selector", ".bot-mark").text == "bot"
    for person in people:
        other = page.wait(
            lambda person=person: (  # type: ignore[misc]
                page.all(f'#who tr[data-name="{person}"]') or [None]
            )[0],
            f"{person}'s row",
        )
        assert other.get_attribute("data-bot") is None
        assert other.find_elements("css selector", ".bot-mark") == []


PROMPT = "return document.getElementById('prompt').innerText"
"""JavaScript: the prompt's text, in one round trip."""


def match_over(*pages: Page) -> bool:
    """Each page's prompt tells its match's end (``... a N point match``), each read in
    one round trip."""
    return all("point match" in page.driver.execute_script(PROMPT) for page in pages)
