"""The web door's WebSocket endpoint without a browser: real sockets, port 0.

CLIP lines both ways, one line per message, through the same login dialog, command
loop and limits as telnet (docs/web.md)."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from protocol import replies
from protocol.parser import ScrubbedLine
from server.app import App
from server.config import ConfigError, Settings, load
from server.doors.output import TOO_LONG, Payload
from server.doors.web import (
    PAYLOAD_FORM,
    SECURITY_HEADERS,
    WS_PATH,
    WebOutput,
    _payload_frames,
    frames,
    origin_allowed,
    split_message,
    text_frame,
)
from server.service import Service
from server.world.pace import Pace
from tests.conftest import DbTarget

from .conftest import Connect, clip_login, make_user
from .sessions import online, who_update_seen
from .web_clients import WebClient, web_login, web_serving, web_url

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(**changes)


def with_settings(**changes: Any) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("settings", [changes], indirect=True, ids=["settings"])


@pytest.fixture
async def service(settings: Settings, db_target: DbTarget) -> AsyncIterator[Service]:
    async with web_serving(settings, db_target) as service:
        yield service


@pytest.fixture
async def clients() -> AsyncIterator[list[WebClient]]:
    opened: list[WebClient] = []
    yield opened
    for client in opened:
        await client.close()


async def test_the_banner_and_the_prompt_come_one_message_each(
    service: Service, clients: list[WebClient]
) -> None:
    client = await WebClient.open(service)
    clients.append(client)
    banner = await client.expect(replies.LOGIN_PROMPT)
    assert banner and all("\r" not in m and "\n" not in m for m in banner)


async def test_clip_lines_both_ways_with_a_telnet_client(
    service: Service, app: App, connect: Connect, clients: list[WebClient]
) -> None:
    bob = await clip_login(connect, app, "bob")
    alice = await web_login(service, "alice")
    clients.append(alice)
    await who_update_seen(bob, "alice")
    assert online(app, "alice").output.host == "127.0.0.1"
    await alice.send("tell bob hello from the web")
    assert await alice.line() == "16 bob hello from the web"
    assert await bob.line() == "12 alice hello from the web"
    await bob.send("tell alice hello from telnet")
    assert await bob.line() == "16 alice hello from telnet"
    assert await alice.expect("12 bob hello from telnet") == []
    # A message holding line ends is its lines; control characters are removed.
    await alice.send("tell bob one\r\ntell bob t\x07wo\n")
    assert [await bob.line(), await bob.line()] == ["12 alice one", "12 alice two"]


async def test_an_over_long_line_is_refused(service: Service, clients: list[WebClient]) -> None:
    alice = await web_login(service, "alice")
    clients.append(alice)
    await alice.send("tell alice " + "x" * service.app.settings.max_line_length)
    assert await alice.expect(replies.LINE_TOO_LONG) == []


@with_settings(login_attempts=2, login_delay=0.05)
async def test_failed_logins_are_throttled_and_end_the_connection(
    service: Service, app: App, clients: list[WebClient]
) -> None:
    await make_user(app, "alice")
    client = await WebClient.open(service)
    clients.append(client)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send("login web 1008 alice wrong")
    assert await client.expect(replies.LOGIN_PROMPT) == []
    await client.send("login web 1008 alice wrong")
    assert await client.closed()
    # The same throttle as telnet logins (counted per account name, and per address
    # beyond the trusted networks): the next attempt at alice waits.
    assert 0.0 < app.throttle.wait_for("name:alice") <= 0.1


@with_settings(commands_per_second=200.0, command_burst=40)
async def test_a_burst_waits_in_order_and_none_is_dropped(
    service: Service, app: App, connect: Connect, clients: list[WebClient]
) -> None:
    carol = await clip_login(connect, app, "carol")
    mallory = await web_login(service, "mallory")
    clients.append(mallory)
    await who_update_seen(carol, "mallory")
    count = 100
    started = time.monotonic()
    for i in range(count):
        await mallory.send(f"tell carol {i}")
    got = [await mallory.line() for _ in range(count)]
    elapsed = time.monotonic() - started
    assert got == [f"16 carol {i}" for i in range(count)]
    assert [await carol.line() for _ in range(count)] == [f"12 mallory {i}" for i in range(count)]
    assert elapsed >= 0.9 * (count - 40) / 200.0


async def _stuck_web_client(service: Service, name: str) -> socket.socket:
    """A WebSocket client on a raw socket with a tiny receive buffer that stops reading
    once it is logged in."""
    await make_user(service.app, name)
    assert service.web is not None
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", service.web.port))
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {WS_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{service.web.port}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    await loop.sock_sendall(sock, request.encode())
    received = b""
    prompt = text_frame(replies.LOGIN_PROMPT)
    while prompt not in received:
        received += await asyncio.wait_for(loop.sock_recv(sock, 65536), 5)
    line = f"login stuck 1008 {name} secret".encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(line))
    await loop.sock_sendall(sock, bytes([0x81, 0x80 | len(line)]) + mask + masked)
    while text_frame("6") not in received:
        received += await asyncio.wait_for(loop.sock_recv(sock, 65536), 5)
    return sock


@with_settings(write_buffer_limit=4096)
async def test_a_client_that_stops_reading_is_dropped(
    service: Service, app: App, connect: Connect
) -> None:
    alice = await clip_login(connect, app, "alice")
    sock = await _stuck_web_client(service, "mallory")
    try:
        await who_update_seen(alice, "mallory")
        output: Any = online(app, "mallory").output
        assert isinstance(output, WebOutput)
        server_socket = output._transport.get_extra_info("socket")
        server_socket.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        text = "z" * 900
        # Shouts fill the stuck reader's buffers here: no rate for them (D300).
        app.shout_pace = Pace(10_000, app.timer.now)
        for _ in range(app.settings.command_burst):
            await alice.send(f"shout {text}")
            assert await alice.line() == f"17 {text}"
            if app.registry.get("mallory") is None:
                break
        assert app.registry.get("mallory") is None, "the stuck reader is still connected"
        assert output.overflowed
        assert await alice.expect_prefix("8 ") == "8 mallory mallory drops connection."
    finally:
        sock.close()


async def test_another_sites_page_is_refused(service: Service, clients: list[WebClient]) -> None:
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await WebClient.open(service, origin="http://evil.example")
    assert refused.value.status == 403
    assert service.web is not None
    own = await WebClient.open(service, origin=f"http://127.0.0.1:{service.web.port}")
    clients.append(own)
    await own.expect(replies.LOGIN_PROMPT)


@with_settings(web_origins="https://play.example.org")
async def test_a_configured_origin_may_connect(service: Service, clients: list[WebClient]) -> None:
    client = await WebClient.open(service, origin="https://play.example.org")
    clients.append(client)
    await client.expect(replies.LOGIN_PROMPT)
    with pytest.raises(aiohttp.WSServerHandshakeError):
        await WebClient.open(service, origin="https://other.example.org")


async def test_the_page_is_served_and_never_cached(service: Service) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(web_url(service)) as page:
            assert page.status == 200
            assert page.headers["Content-Type"].startswith("text/html")
            body = await page.text()
            for name, value in SECURITY_HEADERS.items():
                assert page.headers[name] == value
        for script in ("app.js", "board.js", "style.css"):
            assert f"/static/{script}" in body or script != "style.css"
            async with http.get(web_url(service, f"/static/{script}")) as response:
                assert response.status == 200, script
                assert response.headers["Cache-Control"] == "no-store"
        async with http.get(web_url(service, "/static/../web.py")) as missing:
            assert missing.status == 404
        async with http.get(web_url(service, "/static/nothing.js")) as missing:
            assert missing.status == 404
            assert missing.headers["Cache-Control"] == "no-store"


def test_payload_frames_equal_send_frames() -> None:
    lines = ["5 alice - - 0 0 1500.00 0 1 1 - - -", "", "x" * 200, "y" * 70_000, "é ✓"]
    payload = Payload(lines)
    assert payload.encoded(PAYLOAD_FORM, _payload_frames) == frames(lines)
    assert Payload([]).encoded(PAYLOAD_FORM, _payload_frames) == b""


def test_a_message_is_split_into_clean_lines() -> None:
    assert split_message("who", 80) == ["who"]
    assert split_message("", 80) == [""]
    assert split_message("a\r\nb\n", 80) == ["a", "b"]
    assert split_message("a\x1b[2Jb\tc", 80) == ["a[2Jb\tc"]
    assert split_message("x" * 81 + "\nok", 80) == [TOO_LONG, "ok"]


def test_both_doors_end_and_clean_lines_alike() -> None:
    """The web door reads a message's lines as telnet reads a stream's: CR NUL and LF CR
    are one line end each, and a line that had control characters is marked, so that a
    name typed with a NUL is refused on both doors (D265), not registered as the rest."""
    assert split_message("a\r\x00b\r\x00", 80) == ["a", "b"]
    assert split_message("a\n\rb", 80) == ["a", "b"]
    (scrubbed,) = split_message("na\x00me", 80)
    assert scrubbed == "name" and isinstance(scrubbed, ScrubbedLine)
    (plain,) = split_message("name", 80)
    assert not isinstance(plain, ScrubbedLine)


def test_origin_checks() -> None:
    none: frozenset[str] = frozenset()
    own = frozenset({"example.org", "127.0.0.1", "::1"})
    assert origin_allowed(None, "example.org", none, own)
    assert origin_allowed("https://Example.org", "example.org", none, own)
    assert origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", none, own)
    assert origin_allowed("http://[::1]:8080", "[::1]:8080", none, own)
    assert not origin_allowed("http://127.0.0.1:8081", "127.0.0.1:8080", none, own)
    assert not origin_allowed("null", "example.org", none, own)
    assert not origin_allowed("http://127.0.0.1:8080", None, none, own)
    # DNS rebinding: Host and Origin agree, but the host is none of the server's names.
    assert not origin_allowed("http://evil.example:8080", "evil.example:8080", none, own)
    allowed = frozenset({"https://a.example"})
    assert origin_allowed("https://a.example", "evil.example", allowed, own)


def test_the_web_settings(tmp_path: Path) -> None:
    shipped = load(Path(__file__).parents[2] / "fibs.conf")
    assert (shipped.web_host, shipped.web_port, shipped.web_origins) == ("127.0.0.1", 8080, "")
    assert shipped.web_hosts == Settings().web_hosts == ("127.0.0.1", "localhost")
    assert shipped.web_request_timeout == Settings().web_request_timeout == 5.0
    path = tmp_path / "fibs.conf"
    path.write_text("[web]\nport = 0\norigins = https://a.example http://b.example:81\n")
    assert load(path).web_port == 0
    path.write_text("[web]\norigins = a.example\n")
    with pytest.raises(ConfigError, match=r"^\[web\] origins"):
        load(path)
    path.write_text("[web]\nhosts = play.example.org, [::1] 192.0.2.7\n")
    assert load(path).web_hosts == ("play.example.org", "[::1]", "192.0.2.7")
    for bad in ("https://play.example.org", "play.example.org:443", "a/b"):
        path.write_text(f"[web]\nhosts = {bad}\n")
        with pytest.raises(ConfigError, match=r"^\[web\] hosts"):
            load(path)
    path.write_text("[web]\nrequest_timeout = 0\n")
    with pytest.raises(ConfigError, match=r"^\[web\] request_timeout must be above 0"):
        load(path)


@with_settings(web_port=0)
async def test_port_0_turns_the_web_listener_off(settings: Settings, db_target: DbTarget) -> None:
    from .conftest import serving

    async with serving(settings, db_target) as service:
        await service.start_web()
        assert service.web is None


def test_a_taken_web_port_stops_the_start(tmp_path: Path) -> None:
    """``python -m server`` says which port it could not listen on, and exits."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    conf = tmp_path / "fibs.conf"
    conf.write_text(
        f"[server]\nhost = 127.0.0.1\nport = 0\n"
        f"database = sqlite+aiosqlite:///{tmp_path / 'fibs.db'}\n"
        f"[web]\nport = {port}\n",
        encoding="utf-8",
    )
    try:
        done = subprocess.run(
            [sys.executable, "-m", "server", "--config", str(conf)],
            cwd=Path(__file__).parents[2],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port} (web)" in done.stderr


@with_settings(max_unread_input=4096)
async def test_a_message_over_max_unread_input_ends_the_connection(
    service: Service, app: App, clients: list[WebClient]
) -> None:
    alice = await web_login(service, "alice")
    clients.append(alice)
    await alice.send("tell alice " + "x" * 5000)
    message = await asyncio.wait_for(alice.ws.receive(), 5)
    while message.type is aiohttp.WSMsgType.TEXT:
        message = await asyncio.wait_for(alice.ws.receive(), 5)
    assert alice.ws.close_code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG
    for _ in range(100):
        if app.registry.get("alice") is None:
            break
        await asyncio.sleep(0.05)
    assert app.registry.get("alice") is None


async def test_a_web_login_typed_with_control_characters_fails(
    service: Service, clients: list[WebClient]
) -> None:
    """D299 on the web door: a CLIP login line with a control character fails."""
    await make_user(service.app, "alice")
    client = await WebClient.open(service)
    clients.append(client)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send("login web 1008 ali\x00ce secret")
    await client.expect(replies.LOGIN_PROMPT)
    assert service.app.registry.get("alice") is None
    await client.send("login web 1008 alice secret")
    await client.expect("6")
