"""A closed connection leaves no cycle behind (issue 34 items 9 and 12, D422).

The server's collector runs full collections rarely by design (``GC_THRESHOLDS``,
docs/performance.md §8): whatever a closed connection leaves in a reference cycle stays
in memory until one, and after the web floods that was 18 MB of connections long gone
(docs/performance.md §16). Here the collector is off while connections of every kind
come and go through real sockets (a slow HTTP client, a page fetched, WebSockets logged
in and reset or quitting, telnet logins quitting or reset); then one collection with
``DEBUG_SAVEALL`` says what only the collector would have freed: none of the server's
connection objects may be among it.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import socket
import struct
from collections.abc import AsyncIterator, Iterator

import pytest

from protocol import replies
from server.config import Settings
from server.service import Service
from tests.conftest import DbTarget

from .conftest import TIMEOUT, ScriptedClient, clip_login, connect_from, make_user
from .web_clients import RawHttp, client_frame, upgrade_request, web_serving

CONNECTION_TYPES = frozenset(
    {
        # the web door's (server/doors/web.py, server/doors/budget.py) and aiohttp's
        "HttpGate",
        "HttpHandler",
        "InputBudget",
        "ReadGate",
        "WebSocketResponse",
        "WebOutput",
        "Request",
        # the telnet door's and the session's (server/doors/telnet.py, server/world)
        "BudgetedServer",
        "FlowReader",
        "GuardedWriter",
        "TelnetOutput",
        "Session",
        "IdleWatch",
        "_Batch",
        # the transport itself
        "TCPTransport",
        "_SelectorSocketTransport",
    }
)
"""Type names of what one connection is made of, on both doors."""


@pytest.fixture
async def service(settings: Settings, db_target: DbTarget) -> AsyncIterator[Service]:
    async with web_serving(settings, db_target) as service:
        yield service


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector off (only reference counting frees) for the test, as it is between
    the server's rare full collections; back as it was after."""
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_on:
            gc.enable()


def left_in_cycles() -> collections.Counter[str]:
    """What a collection now frees, by type name: what reference counting could not."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def reset(writer: asyncio.StreamWriter) -> None:
    """Close with a reset (SO_LINGER 0): the server's next write to it fails."""
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def web_login(service: Service, name: str) -> RawHttp:
    """A WebSocket on a raw connection, logged in as ``name`` (CLIP), up to the ``6``."""
    await make_user(service.app, name)
    client = await RawHttp.open(service)
    await client.send(upgrade_request(service))
    assert (await client.answer())[0] == 101
    await client.text_until(replies.LOGIN_PROMPT)
    await client.send(client_frame(f"login web 1008 {name} secret".encode()))
    await client.text_until("6")
    return client


async def only_online(service: Service, *names: str) -> None:
    """Wait (bounded) until only ``names`` are online and no connection waits before
    login; then a moment for the logout notices' batches and the tasks to end."""
    async with asyncio.timeout(TIMEOUT):
        while service.app.pre_login.count or sorted(s.name for s in service.app.registry) != [
            *names
        ]:
            await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)


def connection_objects(left: collections.Counter[str]) -> dict[str, int]:
    """The connection objects among ``left``, by type name."""
    return {name: left[name] for name in sorted(CONNECTION_TYPES) if left[name]}


@pytest.mark.usefixtures("collector_off")
async def test_closed_http_connections_leave_nothing_for_the_collector(
    service: Service,
) -> None:
    """A request never finished (reset), a page fetched (closed by the client), a
    WebSocket handshake reset at the login prompt: the web door's gate, budget and
    aiohttp's protocol are freed when the connection goes."""
    left_in_cycles()  # what the server's start left, out of the way
    slow = await RawHttp.open(service)
    await slow.send(b"GET / HTTP/1.1\r\n")
    page = await RawHttp.open(service)
    await page.send(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
    assert (await page.answer())[0] == 200
    prompt = await RawHttp.open(service)
    await prompt.send(upgrade_request(service))
    assert (await prompt.answer())[0] == 101
    await prompt.text_until(replies.LOGIN_PROMPT)
    await page.close()
    reset(prompt.writer)
    reset(slow.writer)
    await only_online(service)
    assert connection_objects(left_in_cycles()) == {}


@pytest.mark.usefixtures("collector_off")
async def test_ended_sessions_leave_nothing_for_the_collector(service: Service) -> None:
    """Logins on both doors that quit or reset (one while the server writes to it), one
    telnet connection reset at ``login:``, all announced to a user who stays: their
    sessions, idle watches, outputs, the status batches that named them, telnetlib3's
    protocol, reader and writer, aiohttp's WebSocket response are freed when they go."""
    app = service.app
    clients: list[ScriptedClient] = []

    async def telnet() -> ScriptedClient:
        client = await connect_from(app)
        clients.append(client)
        return client

    watcher = await clip_login(telnet, app, "watcher")  # hears the logins and logouts
    left_in_cycles()  # what the server's start and the watcher's login left, out of the way
    quitting = await web_login(service, "quitter")
    await quitting.send(client_frame(b"quit"))
    assert await quitting.closed()
    resetting = await web_login(service, "resetter")
    await resetting.send(client_frame(b"who"))
    reset(resetting.writer)
    telnet_quitting = await clip_login(telnet, app, "telnet_quitter")
    await telnet_quitting.send("quit")
    assert await telnet_quitting.closed()
    telnet_resetting = await clip_login(telnet, app, "telnet_resetter")
    await telnet_resetting.send("who")
    reset(telnet_resetting.writer)
    reset((await telnet()).writer)
    await only_online(service, "watcher")
    try:
        assert connection_objects(left_in_cycles()) == {}
    finally:
        await quitting.close()
        for client in (watcher, telnet_quitting):
            await client.close()
