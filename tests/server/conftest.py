"""A real server on port 0 and scripted raw-socket clients, every read under a timeout."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pytest

from backgammon.dice import SeededDice
from protocol import replies
from server.app import App
from server.config import Settings
from server.service import Service
from server.world.passwords import ScryptCost, hash_password_sync
from server.world.session import DEFAULT_SETTINGS, DEFAULT_TOGGLES, storable_toggles
from tests.conftest import DbTarget

if TYPE_CHECKING:
    from .desk import Desk

TIMEOUT = 5.0
"""Seconds any single read may take before the test fails."""
TEST_COST = ScryptCost(n=16, r=1, p=1)
"""A cheap scrypt cost: tests create many accounts; production uses fibs.conf's."""
IAC_WONT_TTYPE = b"\xff\xfc\x18"


class ScriptedClient:
    """A scripted client on a raw socket, like a bot: send lines, expect lines and prompts."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.buffer = b""
        self.seen: list[str] = []

    async def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\r\n")
        await self.writer.drain()

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def _fill(self, timeout: float) -> None:
        try:
            chunk = await asyncio.wait_for(self.reader.read(65536), timeout)
        except ConnectionResetError:
            # A reset (the server closed with input of ours unread) reaches the reader
            # with the last bytes the server sent still in its buffer, which read()
            # would drop: on uvloop both come in one turn of the loop. Keep them.
            left: bytearray = self.reader._buffer  # type: ignore[attr-defined]
            chunk = bytes(left)
            left.clear()
            if not chunk:
                raise
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buffer += chunk

    def _strip_iac(self) -> None:
        while b"\xff" in self.buffer:
            i = self.buffer.index(b"\xff")
            if len(self.buffer) < i + 3:
                return
            self.buffer = self.buffer[:i] + self.buffer[i + 3 :]

    async def line(self, timeout: float = TIMEOUT) -> str:
        """The next complete line (without CR LF)."""
        while True:
            self._strip_iac()
            if b"\r\n" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\r\n", 1)
                text = raw.decode()
                self.seen.append(text)
                return text
            await self._fill(timeout)

    async def prompt(self, text: str, timeout: float = TIMEOUT) -> list[str]:
        """Skip whole lines until exactly ``text`` arrives with no line end (a prompt);
        return the skipped lines."""
        wanted = text.encode()
        skipped: list[str] = []
        while True:
            self._strip_iac()
            if self.buffer.startswith(wanted):
                self.buffer = self.buffer[len(wanted) :]
                return skipped
            if b"\r\n" in self.buffer:
                skipped.append(await self.line())
                continue
            await self._fill(timeout)

    async def expect(self, wanted: str, timeout: float = TIMEOUT) -> list[str]:
        """Read lines until one equals ``wanted``; return the lines before it."""
        before: list[str] = []
        while True:
            try:
                got = await self.line(timeout)
            except TimeoutError:
                raise AssertionError(f"never got {wanted!r}; got {before[-10:]!r}") from None
            if got == wanted:
                return before
            before.append(got)

    async def expect_prefix(self, prefix: str, timeout: float = TIMEOUT) -> str:
        while True:
            got = await self.line(timeout)
            if got.startswith(prefix):
                return got

    async def nothing(self, wait: float = 0.3) -> None:
        """Assert that no complete line arrives within ``wait`` seconds."""
        try:
            got = await self.line(wait)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected line {got!r}")

    async def closed(self, timeout: float = TIMEOUT) -> bool:
        try:
            while True:
                await self._fill(timeout)
        except ConnectionError:
            return True

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


Connect = Callable[[], Awaitable[ScriptedClient]]


@pytest.fixture
def settings(db_target: DbTarget) -> Settings:
    return Settings(
        host="127.0.0.1",
        port=0,
        database=db_target.url,
        negotiation_wait=0.1,
        scrypt_n=TEST_COST.n,
        scrypt_r=TEST_COST.r,
        scrypt_p=TEST_COST.p,
        login_delay=0.0,
        analysis="no",  # tests/server/test_analysis*.py turn it on
    )


@contextlib.asynccontextmanager
async def serving(
    settings: Settings, db_target: DbTarget, **app_options: Any
) -> AsyncIterator[Service]:
    """A server for an App on ``db_target`` (``app_options``: the App's keywords, such as
    ``timer``); stopped at the end."""
    db = await db_target.open()
    service = Service(App(settings, db, **app_options))
    await service.start()
    try:
        yield service
    finally:
        await service.stop()
        await db.close()


@contextlib.asynccontextmanager
async def running(
    settings: Settings, db_target: DbTarget, **app_options: Any
) -> AsyncIterator[App]:
    """A running server's App on ``db_target`` (restarts, special limits)."""
    async with serving(settings, db_target, **app_options) as service:
        yield service.app


@pytest.fixture
async def service(settings: Settings, db_target: DbTarget) -> AsyncIterator[Service]:
    async with serving(settings, db_target) as service:
        yield service


@pytest.fixture
def app(service: Service) -> App:
    return service.app


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "known_lines: fail the test if the server sent a line that is not a form of protocol/",
    )


def check_known_lines(clients: list[ScriptedClient]) -> None:
    """Every line the clients received (and any complete line still buffered) is a
    form of ``protocol/`` (tests/server/known_lines.py)."""
    from .known_lines import catalogue

    lines: list[str] = []
    for client in clients:
        client._strip_iac()
        complete = client.buffer.split(b"\r\n")[:-1]
        lines += client.seen + [raw.decode(errors="replace") for raw in complete]
    unknown = catalogue().unknown(lines)
    assert not unknown, f"lines no protocol/ form produces: {unknown!r}"


async def connect_from(app: App, source: str = "127.0.0.1") -> ScriptedClient:
    """A scripted client of ``app``'s server, connected from the loopback address
    ``source``: any of 127.0.0.0/8, so that each is an address of its own to the
    server's limits per address (with ``trusted_networks`` emptied)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port, local_addr=(source, 0))
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    return client


@pytest.fixture
async def connect(app: App, request: pytest.FixtureRequest) -> AsyncIterator[Connect]:
    clients: list[ScriptedClient] = []

    async def open_client() -> ScriptedClient:
        client = await connect_from(app)
        clients.append(client)
        return client

    yield open_client
    for client in clients:
        await client.close()
    if request.node.get_closest_marker("known_lines"):
        check_known_lines(clients)


async def make_user(app: App, name: str, password: str = "secret", **values: Any) -> None:
    """An account created directly in the database (the dialog is tested on its own)."""
    await app.db.create_user(
        name,
        hash_password_sync(password, TEST_COST),
        toggles=storable_toggles(DEFAULT_TOGGLES),
        settings=DEFAULT_SETTINGS,
        **values,
    )


async def clip_login(
    connect: Connect, app: App, name: str, password: str = "secret", *, create: bool = True
) -> ScriptedClient:
    """A CLIP client logged in as ``name``, its login sequence read up to the ``6``."""
    if create and await app.db.get_user(name) is None:
        await make_user(app, name, password)
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send(f"login test_client 1008 {name} {password}")
    await client.expect("6")
    return client


@pytest.fixture
async def desk(settings: Settings, db_target: DbTarget) -> AsyncIterator[Desk]:
    """Commands without sockets (tests/server/desk.py): an App on a database of its own,
    seeded dice, O for the inviter's opponent."""
    from .desk import Desk  # desk.py imports this module's helpers

    db = await db_target.open()
    app = App(settings, db, dice=lambda: SeededDice(11), coin=lambda: 0)
    try:
        yield Desk(app)
    finally:
        await db.close()
