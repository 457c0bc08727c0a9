"""The web door against hostile clients (issue 34 items 1, 7 and 8): slow HTTP, the
pre-login caps shared with telnet, malformed requests, RFC 6455's rules, the Origin
check against the configured host names, and the WebSocket's input budget.

Real sockets on port 0: raw asyncio streams for malformed HTTP and hand-made WebSocket
frames (tests/server/web_clients.py), every read under a time-out. Time passes on a
hand-driven clock (tests/server/fake_clock.py) where a time-out is tested.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import re
import tomllib
from collections.abc import AsyncIterator
from importlib import metadata
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from protocol import replies
from server.config import Settings
from server.doors.web import (
    AIOHTTP_VERSIONS,
    CONTROL_COST,
    FRAME_COST,
    SECURITY_HEADERS,
    FrameWalker,
    HttpGate,
)
from server.service import Service
from tests.conftest import DbTarget

from .conftest import IAC_WONT_TTYPE, TIMEOUT, Connect, ScriptedClient, clip_login, make_user
from .fake_clock import FakeTimer
from .sessions import online, who_update_seen
from .test_abuse import answers, with_settings
from .web_clients import RawHttp, WebClient, client_frame, upgrade_request, web_serving

pytestmark = pytest.mark.known_lines


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(**changes)


@pytest.fixture
async def service(
    settings: Settings, db_target: DbTarget, timer: FakeTimer
) -> AsyncIterator[Service]:
    async with web_serving(settings, db_target, timer=timer) as service:
        yield service


@pytest.fixture
async def raw(service: Service) -> AsyncIterator[list[RawHttp]]:
    """Opens raw connections to the web port; every one is closed at the end."""
    opened: list[RawHttp] = []
    yield opened
    for client in opened:
        await client.close()


async def open_raw(service: Service, opened: list[RawHttp]) -> RawHttp:
    client = await RawHttp.open(service)
    opened.append(client)
    return client


async def pre_login_count(service: Service, wanted: int) -> None:
    """Wait (bounded) until ``wanted`` connections count as not logged in."""
    async with asyncio.timeout(TIMEOUT):
        while service.app.pre_login.count != wanted:
            await asyncio.sleep(0.01)


def assert_page_headers(headers: dict[str, str], settings: Settings) -> None:
    """The page's security headers, and a ``Server:`` without any version."""
    for name, value in SECURITY_HEADERS.items():
        assert headers[name.lower()] == value, name
    assert headers["server"] == settings.server_name


async def upgraded(service: Service, client: RawHttp, **options: Any) -> None:
    """Send a WebSocket handshake and read the server's 101 and its login prompt."""
    await client.send(upgrade_request(service, **options))
    status, _, _ = await client.answer()
    assert status == 101
    await client.text_until(replies.LOGIN_PROMPT)


# -- item 7: malformed requests ---------------------------------------------------------------

MALFORMED = [
    b"GET / HTTP/1.1\nHost: a\n\n",  # bare LF line ends
    b"G\x00T / HTTP/1.1\r\nHost: a\r\n\r\n",  # a NUL in the method
    b"GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + b"x" * 10_000 + b"\r\n\r\n",  # a field too long
    b"GET / HTTP/1.1\r\nBad Name: a\r\n\r\n",  # a space in a field name
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS hello on the HTTP port
]


async def test_malformed_requests_are_answered_and_logged_quietly(
    service: Service,
    settings: Settings,
    timer: FakeTimer,
    raw: list[RawHttp],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each gets a 400 with the page's headers and no version in ``Server:``; the log
    holds one line for all of them, without a traceback, then one a minute with the
    count of the others."""
    caplog.set_level(logging.DEBUG)
    for request in MALFORMED:
        client = await open_raw(service, raw)
        await client.send(request)
        status, headers, body = await client.answer()
        assert status == 400, request
        assert_page_headers(headers, settings)
        assert body == b"Bad Request"
        assert await client.closed()
    timer.advance(60.0)
    client = await open_raw(service, raw)
    await client.send(MALFORMED[0])
    assert (await client.answer())[0] == 400
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    logged = [r.getMessage() for r in caplog.records if r.getMessage().startswith("HTTP 400")]
    assert len(logged) == 2, logged
    assert f"and {len(MALFORMED) - 1} more like it" in logged[1]
    assert all("aiohttp" not in r.getMessage() for r in caplog.records if r.levelno >= 30)


async def test_every_answer_names_no_version(
    service: Service, settings: Settings, raw: list[RawHttp]
) -> None:
    """The page, a missing file, a refused origin and the WebSocket's 101 alike."""
    for request in (
        b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
        b"GET /static/nothing.js HTTP/1.1\r\nHost: a\r\n\r\n",
        upgrade_request(service, origin="http://evil.example"),
        upgrade_request(service),
    ):
        client = await open_raw(service, raw)
        await client.send(request)
        _, headers, _ = await client.answer()
        assert_page_headers(headers, settings)


async def test_pipelined_requests_are_each_answered(service: Service, raw: list[RawHttp]) -> None:
    """A request sent before the previous one is answered waits its turn (the bytes
    after a request's headers are held until it is answered)."""
    client = await open_raw(service, raw)
    page = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
    await client.send(b"\r\n" + page + page + b"GET /static/app.js HTTP/1.1\r\nHost: a\r\n\r\n")
    assert [(await client.answer())[0] for _ in range(3)] == [200, 200, 200]


# -- item 8: RFC 6455 and the Origin check ---------------------------------------------------


async def test_an_unmasked_frame_closes_the_connection_with_1002(
    service: Service, raw: list[RawHttp]
) -> None:
    """RFC 6455 §5.1: a server MUST close the connection on an unmasked client frame."""
    client = await open_raw(service, raw)
    await upgraded(service, client)
    await client.send(client_frame(b"\n"))  # masked: a blank line, the prompt again
    assert await client.text_until(replies.LOGIN_PROMPT) == []
    await client.send(client_frame(b"who", masked=False))
    assert await client.close_frame() == (1002, replies.WEB_FRAME_NOT_MASKED)
    assert await client.closed()
    await pre_login_count(service, 0)


async def test_frames_sent_with_the_handshake_are_frames_too(
    service: Service, raw: list[RawHttp]
) -> None:
    """Bytes after the handshake, sent before its answer came (which RFC 6455 §4.1 asks
    a client not to do), are read as frames from their first byte: a masked one is a
    line, an unmasked one ends the connection."""
    good = await open_raw(service, raw)
    await good.send(upgrade_request(service) + client_frame(b"\n"))
    assert (await good.answer())[0] == 101
    await good.text_until(replies.LOGIN_PROMPT)
    await good.text_until(replies.LOGIN_PROMPT)  # the blank line's prompt
    bad = await open_raw(service, raw)
    await bad.send(upgrade_request(service) + client_frame(b"who", masked=False))
    assert (await bad.answer())[0] == 101
    assert (await bad.close_frame())[0] == 1002


@pytest.mark.parametrize("version", ["8", "7", "14", ""])
async def test_only_websocket_version_13_is_spoken(
    service: Service, settings: Settings, raw: list[RawHttp], version: str
) -> None:
    """RFC 6455 §4.4: another version is answered 426 with the version the server speaks."""
    client = await open_raw(service, raw)
    await client.send(upgrade_request(service, version=version))
    status, headers, body = await client.answer()
    assert status == 426
    assert headers["sec-websocket-version"] == "13"
    assert headers["upgrade"] == "websocket"
    assert body.decode() == replies.WEB_VERSION_REFUSED
    assert_page_headers(headers, settings)


async def test_a_dns_rebinding_page_is_refused(service: Service, raw: list[RawHttp]) -> None:
    """``evil.example`` made to point at 127.0.0.1: its page's Host and Origin agree, but
    the host is none of the server's names ([web] hosts), so the WebSocket is refused;
    the server's own names are let in."""
    assert service.web is not None
    port = service.web.port
    client = await open_raw(service, raw)
    evil = f"evil.example:{port}"
    await client.send(upgrade_request(service, host=evil, origin=f"http://{evil}"))
    status, _, body = await client.answer()
    assert status == 403
    assert body.decode() == replies.WEB_ORIGIN_REFUSED
    for own in (f"127.0.0.1:{port}", f"localhost:{port}"):
        client = await open_raw(service, raw)
        await upgraded(service, client, host=own, origin=f"http://{own}")


@with_settings(web_hosts=("play.example.org",))
async def test_the_configured_host_names_are_the_servers_own(
    service: Service, raw: list[RawHttp]
) -> None:
    """Behind a TLS proxy at ``play.example.org`` (the Host header kept): its page may
    connect; ``[web] host`` (127.0.0.1) stays one of the names, ``localhost`` no longer is."""
    assert service.web is not None
    port = service.web.port
    proxied = await open_raw(service, raw)
    await upgraded(service, proxied, host="play.example.org", origin="https://play.example.org")
    direct = await open_raw(service, raw)
    await upgraded(service, direct, host=f"127.0.0.1:{port}", origin=f"http://127.0.0.1:{port}")
    other = await open_raw(service, raw)
    local = f"localhost:{port}"
    await other.send(upgrade_request(service, host=local, origin=f"http://{local}"))
    assert (await other.answer())[0] == 403


# -- item 1: slow HTTP and the pre-login caps --------------------------------------------------


async def test_slow_http_clients_are_closed_at_the_request_time_out(
    service: Service, settings: Settings, timer: FakeTimer, raw: list[RawHttp]
) -> None:
    """A client that sends nothing, one that sends a header now and then, and an idle
    keep-alive connection after its answer are closed ``[web] request_timeout`` after
    their connect (or answer): a header does not restart the time. A WebSocket opened
    in time is not touched, and every closed connection's place is free again."""
    timeout = settings.web_request_timeout
    assert Settings().web_request_timeout == 5.0
    silent = await open_raw(service, raw)
    trickling = await open_raw(service, raw)
    await trickling.send(b"GET / HTTP/1.1\r\n")
    idle = await open_raw(service, raw)
    await idle.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    assert (await idle.answer())[0] == 200
    socket = await open_raw(service, raw)
    await upgraded(service, socket)
    await pre_login_count(service, 4)
    await timer.until_pending(4)  # three request time-outs, the WebSocket's login time
    timer.advance(timeout - 1.0)
    await trickling.send(b"X-Slow: 1\r\n")
    timer.advance(1.0)
    for client in (silent, trickling, idle):
        assert await client.closed()
    await pre_login_count(service, 1)  # the WebSocket at its login prompt
    await socket.send(client_frame(b"\n"))
    await socket.text_until(replies.LOGIN_PROMPT)


async def test_a_whole_request_in_time_is_answered(
    service: Service, settings: Settings, timer: FakeTimer, raw: list[RawHttp]
) -> None:
    """The time-out is for a whole request, not for each header: one that comes in
    pieces within it is answered."""
    client = await open_raw(service, raw)
    await client.send(b"GET / HTTP/1.1\r\n")
    await timer.until_pending(1)
    timer.advance(settings.web_request_timeout - 1.0)
    await client.send(b"Host: a\r\n")
    await client.send(b"\r\n")
    assert (await client.answer())[0] == 200


async def telnet_client(service: Service) -> ScriptedClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", service.app.port)
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    return client


@with_settings(max_pre_login_per_address=3, trusted_networks=())
async def test_web_connections_count_in_the_telnet_doors_caps(
    service: Service, settings: Settings, raw: list[RawHttp]
) -> None:
    """Connections of the web port count from their accept among those not logged in,
    per address as on telnet: over the cap a web connection gets a 503 with the telnet
    door's line, and a telnet one its line. A connection that closes frees its place at
    once; a WebSocket's place goes to its session, and a login frees it."""
    await make_user(service.app, "alice")
    waiting = [await open_raw(service, raw) for _ in range(3)]
    await pre_login_count(service, 3)
    refused = await open_raw(service, raw)
    status, headers, body = await refused.answer()
    assert status == 503
    assert body.decode().strip() == replies.TOO_MANY_WAITING_FROM_ADDRESS
    assert_page_headers(headers, settings)
    assert await refused.closed()
    telnet = await telnet_client(service)
    try:
        assert await telnet.line() == replies.TOO_MANY_WAITING_FROM_ADDRESS
    finally:
        await telnet.close()
    await waiting[0].close()
    await pre_login_count(service, 2)
    socket = await open_raw(service, raw)
    await upgraded(service, socket)
    assert service.app.pre_login.count == 3  # handed to the session, not counted twice
    await socket.send(client_frame(b"login web 1008 alice secret"))
    await socket.text_until("6")
    await pre_login_count(service, 2)
    telnet = await telnet_client(service)
    try:
        await telnet.prompt(replies.LOGIN_PROMPT)
    finally:
        await telnet.close()


@with_settings(max_pre_login=2, max_pre_login_per_trusted_address=2)
async def test_slow_web_connections_cannot_starve_the_telnet_door(
    service: Service, raw: list[RawHttp]
) -> None:
    """The total cap holds for the web port's connections too (127.0.0.1 is trusted: its
    own cap, here the total), and they count towards the telnet door's total."""
    for _ in range(2):
        await open_raw(service, raw)
    await pre_login_count(service, 2)
    telnet = await telnet_client(service)
    try:
        assert await telnet.line() == replies.TOO_MANY_WAITING
    finally:
        await telnet.close()
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await WebClient.open(service)
    assert refused.value.status == 503


# -- item 1: the WebSocket's input budget ------------------------------------------------------


async def raw_login(service: Service, opened: list[RawHttp], name: str) -> RawHttp:
    """A WebSocket on a raw connection, logged in as ``name`` (CLIP), read up to the ``6``."""
    await make_user(service.app, name)
    client = await open_raw(service, opened)
    await upgraded(service, client)
    await client.send(client_frame(f"login web 1008 {name} secret".encode()))
    await client.text_until("6")
    return client


def web_gate(service: Service, name: str) -> HttpGate:
    """The :class:`HttpGate` of ``name``'s WebSocket."""
    output: Any = online(service.app, name).output
    gate = output._transport.get_protocol()
    assert isinstance(gate, HttpGate)
    return gate


FLOODS = {
    # Three seconds' worth of bytes (three over-long lines).
    "bytes": b"".join(client_frame(b"x" * 16_000) for _ in range(3)),
    # 320 bytes, but each ping costs a pong.
    "pings": b"".join(client_frame(b"ping", opcode=0x9) for _ in range(32)),
    # 2.4 KB of empty continuation frames inside one message.
    "empty frames": client_frame(b"tell alice ", final=False)
    + b"".join(client_frame(b"", opcode=0x0, final=False) for _ in range(400))
    + client_frame(b"flooded", opcode=0x0),
}
"""Floods of one to three seconds of the default input budget (16 KiB/s): in bytes, or
in frames that cost more than their bytes."""


@pytest.mark.parametrize("flood", sorted(FLOODS))
@with_settings(max_input_rate=16_384, max_unread_input=1 << 20)
async def test_a_websocket_flood_waits_within_the_input_budget(
    service: Service, connect: Connect, raw: list[RawHttp], flood: str
) -> None:
    """What a WebSocket sends is parsed within the telnet door's input budget, frames
    and control frames costing more than their bytes: past it the input waits with the
    socket paused, alice is answered meanwhile, and mallory's next line comes through
    in order once it is paid for; nothing is lost (every ping gets its pong)."""
    app = service.app
    alice = await clip_login(connect, app, "alice")
    mallory = await raw_login(service, raw, "mallory")
    await who_update_seen(alice, "mallory")
    gate = web_gate(service, "mallory")
    await mallory.send(FLOODS[flood])
    await mallory.send(client_frame(b"tell alice after the flood"))
    async with asyncio.timeout(TIMEOUT):
        while not gate._budget.held:
            await asyncio.sleep(0.005)
    transport = gate.transport
    assert transport is not None
    assert not transport.is_reading(), "the socket was not paused"
    await answers(alice)
    if flood == "empty frames":
        assert await alice.expect_prefix("12 mallory") == "12 mallory flooded"
    assert await alice.expect_prefix("12 mallory") == "12 mallory after the flood"
    pongs = 0
    while True:
        opcode, data = await mallory.frame()
        if opcode == 0xA:
            pongs += 1
        elif data == b"16 alice after the flood":
            break
    assert pongs == (32 if flood == "pings" else 0)
    assert not gate._budget.held and transport.is_reading()


def test_the_frame_walker_charges_each_frame_wherever_the_reads_cut() -> None:
    """Frames of every header form (7-, 16- and 64-bit lengths), data and control, cut
    into reads anywhere: each byte costs one and each frame its surcharge, whatever the
    cuts; an allowance stops the walk before a frame, never inside a header."""
    rng = random.Random(34)
    sizes = [0, 1, 125, 126, 300, 65_535, 65_536, 70_000]
    frames = [(rng.choice([0x1, 0x0, 0x9, 0xA]), rng.choice(sizes)) for _ in range(40)]
    frames = [(op, size if op < 8 else min(size, 125)) for op, size in frames]
    stream = b"".join(client_frame(bytes(size), opcode=op) for op, size in frames)
    surcharge = sum(FRAME_COST + (CONTROL_COST if op >= 8 else 0) for op, _ in frames)
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(stream)), 30))
        walker = FrameWalker()
        total = 0.0
        for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
            used, cost, unmasked = walker.walk(stream[start:end], math.inf)
            assert (used, unmasked) == (end - start, False)
            total += cost
        assert total == len(stream) + surcharge
    walker = FrameWalker()
    pings = client_frame(b"", opcode=0x9) * 10
    used, cost, _ = walker.walk(pings, 3 * (CONTROL_COST + FRAME_COST))
    assert (used, cost) == (18, 3 * (6 + CONTROL_COST + FRAME_COST))  # three pings, whole
    assert walker.walk(pings[used:] + client_frame(b"x", masked=False), math.inf)[2]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def test_aiohttp_is_pinned_to_the_versions_the_door_was_tested_with() -> None:
    low, high = AIOHTTP_VERSIONS
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("aiohttp")]
    assert pins == [f"aiohttp>={low},<{high}"]
    installed = _version(metadata.version("aiohttp"))
    assert _version(low) <= installed < _version(high)
