"""The PROXY protocol on both doors (``[server] proxy_protocol``, ``[web]
proxy_protocol``; D368), without HAProxy: a scripted client sends the header a proxy
would, and the server takes the client's address from it for the caps per address and
``where``; a connection without a valid header is closed at once and logged once a
minute. Real sockets on port 0, every read under a time-out.
(tests/server/test_haproxy.py runs the same behind a real HAProxy.)"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from protocol import replies
from server.config import Settings
from server.doors.proxy import HEADER_TIMEOUT, V2_SIGNATURE
from server.service import Service
from tests.conftest import DbTarget
from tests.ports import free_port

from .conftest import (
    IAC_WONT_TTYPE,
    TIMEOUT,
    ScriptedClient,
    clip_login,
    connect_from,
    make_user,
    serving,
)
from .fake_clock import FakeTimer
from .web_clients import RawHttp, client_frame, upgrade_request, web_serving

PROXIED = {"proxy_protocol": True, "web_proxy_protocol": True}


def v1(source: str) -> bytes:
    """HAProxy's ``send-proxy`` header for a client at ``source``."""
    return f"PROXY TCP4 {source} 127.0.0.1 50000 4321\r\n".encode()


def v2(source: str) -> bytes:
    """HAProxy's ``send-proxy-v2`` header for a client at ``source``."""
    body = socket.inet_aton(source) + socket.inet_aton("127.0.0.1") + struct.pack("!HH", 1, 2)
    return V2_SIGNATURE + struct.pack("!BBH", 0x21, 0x11, len(body)) + body


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(**PROXIED, **changes)


@pytest.fixture
async def service(settings: Settings, db_target: DbTarget) -> AsyncIterator[Service]:
    async with web_serving(settings, db_target) as service:
        await make_user(service.app, "alice")
        await make_user(service.app, "bob")
        yield service


async def telnet(service: Service, header: bytes) -> ScriptedClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    client = ScriptedClient(reader, writer)
    await client.send_raw(header)
    await client.send_raw(IAC_WONT_TTYPE)
    return client


async def test_the_telnet_client_address_is_the_one_its_header_names(service: Service) -> None:
    alice = await telnet(service, v1("203.0.113.7"))
    await alice.prompt(replies.LOGIN_PROMPT)
    await alice.send("login test 1008 alice secret")
    await alice.expect("6")
    header = v2("198.51.100.20")
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    bob = ScriptedClient(reader, writer)
    for part in (header[:7], header[7:20], header[20:] + IAC_WONT_TTYPE):  # split anywhere
        await bob.send_raw(part)
        await asyncio.sleep(0.05)
    await bob.prompt(replies.LOGIN_PROMPT)
    await bob.send("login test 1008 bob secret")
    await bob.expect("6")
    await bob.send("where alice")
    await bob.expect(replies.where("alice", "203.0.113.7"))
    await alice.send("where bob")
    await alice.expect(replies.where("bob", "198.51.100.20"))
    await bob.close()
    await alice.close()
    stored = await service.app.db.get_user("alice")
    assert stored is not None and stored.last_login_host == "203.0.113.7"


@pytest.mark.parametrize(
    "settings",
    [{"trusted_networks": (), "max_pre_login_per_address": 1}],
    indirect=True,
    ids=["one per address"],
)
async def test_the_caps_per_address_count_the_address_of_the_header(service: Service) -> None:
    first = await telnet(service, v1("192.0.2.1"))
    await first.prompt(replies.LOGIN_PROMPT)
    second = await telnet(service, v1("192.0.2.1"))  # the same client again: over its cap
    await second.expect(replies.TOO_MANY_WAITING_FROM_ADDRESS)
    assert await second.closed()
    other = await telnet(service, v1("192.0.2.2"))  # another client through the same proxy
    await other.prompt(replies.LOGIN_PROMPT)
    for client in (first, second, other):
        await client.close()


NOT_HEADERS = [b"login test 1008 alice secret\r\n", b"PROXY TCP4 nonsense\r\n", b"\xff\xfd\x18"]


async def test_telnet_without_a_header_is_closed_at_once_and_logged_once(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    for data in NOT_HEADERS:
        client = await telnet(service, data)
        assert await client.closed()
        assert client.buffer == b""  # not even the banner
        await client.close()
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].exc_info is None, caplog.text
    assert service.app.pre_login.count == 0


async def test_the_web_client_address_is_the_one_its_header_names(service: Service) -> None:
    client = await RawHttp.open(service)
    await client.send(v2("203.0.113.99") + upgrade_request(service))
    status, _, _ = await client.answer()
    assert status == 101
    await client.text_until(replies.LOGIN_PROMPT)
    await client.send(client_frame(b"login web 1008 alice secret"))
    await client.text_until("6")
    await client.send(client_frame(b"where alice"))
    await client.text_until(replies.where("alice", "203.0.113.99"))
    await client.close()


async def test_web_without_a_header_is_closed_at_once_and_logged_once(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    for data in (upgrade_request(service), b"GET / HTTP/1.1\r\n\r\n"):
        client = await RawHttp.open(service)
        await client.send(data)
        async with asyncio.timeout(TIMEOUT):
            assert await client.reader.read() == b""
        await client.close()
    refused = [r for r in caplog.records if "refused" in r.getMessage()]
    assert len(refused) == 1 and refused[0].exc_info is None, caplog.text
    assert service.app.pre_login.count == 0


async def agent_answer(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    async with asyncio.timeout(TIMEOUT):
        answer = await reader.read()
    writer.close()
    return answer


async def test_the_agent_check_says_ready_or_drain(service: Service) -> None:
    port = free_port()
    service.app.settings = service.app.settings.replace(agent_port=port)
    await service.start_agent()
    assert await agent_answer(port) == b"up ready\n"
    service.drain(True)  # SIGUSR1
    assert await agent_answer(port) == b"drain\n"
    service.drain(False)  # SIGUSR2
    assert await agent_answer(port) == b"up ready\n"


async def test_a_drained_node_warns_its_users_then_closes_them_unless_ready_again(
    settings: Settings, db_target: DbTarget
) -> None:
    """D415 (without an agent port: no wait for HAProxy): drained, the node's users hear
    FIBS's restart warning and their connections close after ``[server] drain_grace``;
    made ready again within the grace, they stay."""
    plain = settings.replace(drain_grace=1.0, proxy_protocol=False)  # straight connections
    async with serving(plain, db_target) as service:
        connect = lambda: connect_from(service.app)  # noqa: E731
        alice = await clip_login(connect, service.app, "alice")
        service.drain(True)  # SIGUSR1
        await alice.expect(replies.shutdown_warning(1, restart=True))
        assert await alice.closed()
        await alice.close()
        service.drain(False)  # SIGUSR2
        bob = await clip_login(connect, service.app, "bob")
        service.drain(True)
        await bob.expect(replies.shutdown_warning(1, restart=True))
        service.drain(False)  # within the grace: bob stays
        await asyncio.sleep(1.5)
        await bob.send("tell bob still here")
        await bob.expect(replies.say_to_yourself("still here"))
        await bob.close()


async def test_a_web_header_must_come_whole_within_its_time(
    settings: Settings, db_target: DbTarget
) -> None:
    """A header split over its time is read whole; a connection whose header is not
    whole :data:`~server.doors.proxy.HEADER_TIMEOUT` after its connect is closed."""
    timer = FakeTimer()
    async with web_serving(settings, db_target, timer=timer) as service:
        header = v1("192.0.2.44")
        slow = await RawHttp.open(service)
        silent = await RawHttp.open(service)
        await slow.send(header[:10])
        await timer.until_pending(2)
        timer.advance(HEADER_TIMEOUT - 1.0)
        await slow.send(header[10:] + b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert (await slow.answer())[0] == 200
        timer.advance(1.0)
        assert await silent.closed()
        for client in (slow, silent):
            await client.close()
