"""SIGTERM ends the server within 2 s whatever is connected (issue 34 item 9; it took
22 s after web floods, 14 s with 3,000 slow HTTP connections held).

A real ``python -m server`` with both doors, and at the signal: connections at
``login:``, slow HTTP requests, WebSockets not logged in, WebSockets flooding the server
(pings never reading the pongs, newlines, empty continuation frames) while it stops,
logged-in telnet and web users, and a logged-in user that stopped reading its output.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import replies
from server.doors.web import WS_PATH
from tests.ports import free_port

from .conftest import IAC_WONT_TTYPE, ScriptedClient
from .web_clients import client_frame

ROOT = Path(__file__).resolve().parents[2]
_LISTENING = re.compile(r"listening on (\S+):(\d+)")
STOP_WITHIN = 2.0
"""Seconds from SIGTERM to the process's exit."""


@contextlib.asynccontextmanager
async def server(
    tmp_path: Path, event_loop: str
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int, int]]:
    """``python -m server`` with its web page: (process, telnet port, web port)."""
    web_port = free_port()
    config = tmp_path / "fibs.conf"
    config.write_text(
        f"[server]\nevent_loop = {event_loop}\n"
        "[limits]\nnegotiation_wait = 0.1\n"
        "[passwords]\nscrypt_n = 16\nscrypt_r = 1\nscrypt_p = 1\n"
        f"[web]\nport = {web_port}\n"
    )
    log = tmp_path / "server.log"
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            "0",
            "--database",
            f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}",
            "--config",
            str(config),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        found = _LISTENING.search(line.decode())
        assert found, f"no listening line: {line!r}; log: {log.read_text()[-2000:]}"
        await asyncio.wait_for(process.stdout.readline(), 30)  # the web page's line
        yield process, int(found[2]), web_port
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def at_login(port: int) -> ScriptedClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    await client.prompt(replies.LOGIN_PROMPT, timeout=20)
    return client


async def registered(port: int, name: str) -> ScriptedClient:
    """A telnet user registered through the guest dialog, at the ``> `` prompt."""
    client = await at_login(port)
    await client.send("guest")
    await client.prompt(replies.TELNET_PROMPT)
    await client.send(f"name {name}")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("secret")
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send("secret")
    await client.expect(replies.user_authenticated(name))
    await client.prompt(replies.TELNET_PROMPT)
    return client


async def web_socket(port: int, login: str | None = None) -> asyncio.StreamWriter:
    """A WebSocket on a raw connection (its answers left unread), logged in with the
    CLIP line ``login`` if given."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {WS_PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    status = await asyncio.wait_for(reader.readline(), 20)
    assert status.startswith(b"HTTP/1.1 101"), status
    if login is not None:
        writer.write(client_frame(login.encode()))
        await writer.drain()
    writer.reader = reader  # type: ignore[attr-defined]  # kept open, never read
    return writer


FLOODS = {
    "pings": client_frame(b"ping", opcode=0x9) * 200,
    "newlines": client_frame(b"\n" * 1000) * 20,
    "empty frames": client_frame(b"", opcode=0x1, final=False)
    + client_frame(b"", opcode=0x0, final=False) * 500,
}
"""What a flooding WebSocket writes again and again (the issue's web floods): pings whose
pongs it never reads, newline floods, empty continuation frames."""


async def flood(writer: asyncio.StreamWriter, data: bytes) -> None:
    """Write ``data`` again and again until the server closes the connection."""
    with contextlib.suppress(ConnectionError, OSError):
        while True:
            writer.write(data)
            await writer.drain()


async def slow_http(port: int) -> asyncio.StreamWriter:
    """A request that never ends its headers."""
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
    await writer.drain()
    return writer


@pytest.mark.parametrize("event_loop", ["uvloop", "asyncio"])
@pytest.mark.alone  # a time limit is asserted
async def test_sigterm_ends_the_server_within_two_seconds_whatever_is_connected(
    tmp_path: Path, event_loop: str
) -> None:
    clients: list[ScriptedClient] = []
    writers: list[asyncio.StreamWriter] = []
    floods: list[asyncio.Future[None]] = []
    async with server(tmp_path, event_loop) as (process, port, web_port):
        try:
            users = [await registered(port, name) for name in ("alice", "bob", "carol")]
            clients += users
            # carol stops reading, with the answers to a few hundred commands waiting.
            for _ in range(300):
                await users[2].send_raw(b"help\r\n")
            clients += await asyncio.gather(*(at_login(port) for _ in range(200)))
            writers += await asyncio.gather(*(slow_http(web_port) for _ in range(300)))
            writers += await asyncio.gather(*(web_socket(web_port) for _ in range(50)))
            writers.append(await web_socket(web_port, "login web 1008 alice secret"))
            flooders = [await web_socket(web_port) for _ in range(3) for _ in FLOODS]
            writers += flooders
            floods = [
                asyncio.ensure_future(flood(writer, data))
                for writer, data in zip(flooders, list(FLOODS.values()) * 3, strict=True)
            ]
            await asyncio.sleep(1.0)  # everything has reached the server, the floods run
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            await asyncio.wait_for(process.wait(), 30)
            took = time.monotonic() - started
            assert process.returncode == 0
            assert took < STOP_WITHIN, f"the stop took {took:.2f} s"
            await users[1].expect(replies.shutdown_warning(0, restart=False))
        finally:
            for task in floods:
                task.cancel()
            for client in clients:
                client.writer.transport.abort()
            for writer in writers:
                writer.transport.abort()
