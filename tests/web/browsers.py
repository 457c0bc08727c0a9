"""Headless Chromium driving the page, and a server with its web door in a thread of its
own (Selenium blocks: the server's event loop must not be the test's)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from backgammon.dice import SeededDice
from db.repository import Database
from server.app import App
from server.config import Settings
from server.service import Service

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)
WAIT = 15.0
"""Seconds any wait for the page may take before the test fails."""
SCREENSHOTS: Path | None = (
    Path(os.environ["FIBS_WEB_SCREENSHOTS"]) if os.environ.get("FIBS_WEB_SCREENSHOTS") else None
)
"""Where the run writes its screenshots: the folder ``FIBS_WEB_SCREENSHOTS`` names
(``docs/images`` for the ones docs/web.md shows); none when it is not set, so that a
test run leaves the tree as it was."""

T = TypeVar("T")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found (Debian packages chromium and chromium-driver)"
    if not CHROMEDRIVER.exists():
        return f"{CHROMEDRIVER} not found (Debian package chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


class ServerThread:
    """A server (telnet on a free port, web on another) on an event loop of its own,
    SQLite in ``folder``, seeded dice (``seed``; None: the shipped dice, committed and
    revealed, docs/dice.md) and O for the inviter's opponent's coin."""

    def __init__(self, folder: Path, *, seed: int | None = 7, **changes: Any) -> None:
        self.settings = Settings(
            **{
                "host": "127.0.0.1",
                "port": 0,
                "database": f"sqlite+aiosqlite:///{folder / 'fibs.db'}",
                "negotiation_wait": 0.1,
                "scrypt_n": 16,
                "scrypt_r": 1,
                "scrypt_p": 1,
                "login_delay": 0.0,
                "analysis": "no",  # no gnubg behind the pages (tests/server/test_analysis_*)
                **changes,
            }
        )
        self.seed = seed
        self.loop = asyncio.new_event_loop()
        self.service: Service | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="web-test-server", daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the server did not start")
        if self._error is not None:
            raise self._error
        return self

    def __exit__(self, *exc: object) -> None:
        stop = self._stop
        if stop is not None:
            self.loop.call_soon_threadsafe(stop.set)
        self._thread.join(30)

    def _run(self) -> None:
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # reported to the test by __enter__
            self._error = exc
            self._ready.set()
        finally:
            self.loop.close()

    async def _main(self) -> None:
        db = await Database.open(self.settings.database)
        seed = self.seed
        dice = None if seed is None else lambda: SeededDice(seed)
        app = App(self.settings, db, dice=dice, coin=lambda: 0)
        service = Service(app)
        await service.start()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        await service.start_web(sock=sock)
        self.service = service
        self._stop = asyncio.Event()
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await service.stop()
            await db.close()

    def call(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run a coroutine on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(WAIT)

    @property
    def app(self) -> App:
        assert self.service is not None
        return self.service.app

    @property
    def url(self) -> str:
        assert self.service is not None and self.service.web is not None
        return f"http://127.0.0.1:{self.service.web.port}/"

    @property
    def telnet_port(self) -> int:
        assert self.service is not None
        return self.service.port


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    """A headless Chromium with a fresh profile, quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    profile = tempfile.mkdtemp(prefix="fibs-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(service=DriverService(str(CHROMEDRIVER)), options=options)
    driver.set_script_timeout(WAIT)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


class TelnetUser:
    """A person on the telnet port (blocking socket, every read under a timeout)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.sock.sendall(b"\xff\xfc\x18")  # IAC WONT TTYPE, as a telnet program answers
        self.buffer = b""

    def _text(self) -> str:
        data = self.buffer
        while b"\xff" in data:
            i = data.index(b"\xff")
            data = data[:i] + data[i + 3 :]
        return data.decode(errors="replace")

    def wait_for(self, wanted: str) -> str:
        """Read until ``wanted`` has arrived; return everything read so far."""
        deadline = time.monotonic() + WAIT
        while wanted not in self._text():
            if time.monotonic() > deadline:
                raise AssertionError(f"never got {wanted!r}: {self._text()[-300:]!r}")
            chunk = self.sock.recv(65536)
            if not chunk:
                raise AssertionError(f"closed before {wanted!r}")
            self.buffer += chunk
        return self._text()

    def send(self, line: str) -> None:
        self.sock.sendall(line.encode() + b"\r\n")

    def close(self) -> None:
        self.sock.close()
