"""The web door's part of ``load.py --scenario hostile`` (issue 34 items 1 and 9).

While the telnet bystanders keep telling (load.py's chatters) and one web bystander
tells itself over a WebSocket, another process attacks the web port for a while:

* **slow HTTP**: ``slow`` connections that send a request line and then one header a
  second, never ending the request, each connecting again whenever the server closes
  it (its ``[web] request_timeout``, or a 503 over the caps before login);
* **WebSocket floods**: ``floods`` WebSockets, a third each sending pings and never
  reading the pongs, newline floods before login, and empty continuation frames, as
  fast as the server takes them, connecting again when closed;
* **WebSockets held**: ``sockets`` WebSockets logged in (accounts with cheap hashes),
  reading and dropping everything the server sends them.

The bystanders' round trips before, during and after, the server's RSS and its
tracebacks are in load.py's summary (``hostile.web``); its SIGTERM time in
``server.stop_seconds``. Only 127.0.0.1 is ever connected to.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import time
from dataclasses import dataclass, field
from typing import Any

HOST = "127.0.0.1"
WS_PATH = "/ws"
SOURCES = {"slow": "127.0.0.2", "floods": "127.0.0.3", "held": "127.0.0.4"}
"""The loopback address each kind of attacker connects from (the bystanders from
127.0.0.1): each is an address of its own to the server's caps before login, so that
one kind does not just hold the others out (D295)."""
FLOOD_KINDS = ("pings", "newlines", "empty_frames")


@dataclass
class WebAttackStats:
    """What the web attack did, and how the server took it."""

    seconds: float = 0.0
    login_seconds: float = 0.0
    """How long the held WebSockets took to log in, before the attack's seconds."""
    slow_connections: int = 0
    slow_headers: int = 0
    slow_refused_503: int = 0
    slow_closed_by_server: int = 0
    flood_connections: dict[str, int] = field(default_factory=dict)
    flood_frames: dict[str, int] = field(default_factory=dict)
    flood_closed_by_server: dict[str, int] = field(default_factory=dict)
    sockets_logged_in: int = 0
    sockets_failed: int = 0
    connect_failed: int = 0


def client_frame(data: bytes, *, opcode: int = 1, final: bool = True) -> bytes:
    """One masked client frame (RFC 6455 §5.2, §5.3)."""
    size = len(data)
    first = (0x80 if final else 0) | opcode
    if size < 126:
        header = bytes([first, 0x80 | size])
    elif size < 1 << 16:
        header = bytes([first, 0x80 | 126]) + size.to_bytes(2)
    else:
        header = bytes([first, 0x80 | 127]) + size.to_bytes(8)
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(data))


async def open_websocket(
    port: int, source: str = HOST
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket on a raw connection from ``source``, past the server's ``101``."""
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection(HOST, port, local_addr=(source, 0)), 10
    )
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {WS_PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
    if not head.startswith(b"HTTP/1.1 101"):
        writer.close()
        raise ConnectionError(head.split(b"\r\n", 1)[0].decode(errors="replace"))
    return reader, writer


async def read_message(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next server frame (unmasked, §5.1): (opcode, payload)."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2))
    elif size == 127:
        size = int.from_bytes(await reader.readexactly(8))
    return first & 0x0F, await reader.readexactly(size)


async def _drop_everything(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


async def _slow_http(port: int, stats: WebAttackStats, until: float) -> None:
    """One slow client: a request line, then a header a second; again when closed."""
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(HOST, port, local_addr=(SOURCES["slow"], 0)), 10
            )
        except (OSError, TimeoutError):
            stats.connect_failed += 1
            await asyncio.sleep(0.5)
            continue
        stats.slow_connections += 1
        answer = asyncio.ensure_future(reader.read(64))
        try:
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            while time.monotonic() < until and not answer.done():
                writer.write(b"X-Slow: %d\r\n" % stats.slow_headers)
                stats.slow_headers += 1
                await asyncio.wait({answer}, timeout=1.0)
            if answer.done():
                got = answer.result() if not answer.exception() else b""
                if got.startswith(b"HTTP/1.1 503"):
                    stats.slow_refused_503 += 1
                else:
                    stats.slow_closed_by_server += 1
        except ConnectionError:
            stats.slow_closed_by_server += 1
        finally:
            answer.cancel()
            writer.transport.abort()


def _flood_data(kind: str) -> bytes:
    """About 8 KB of one flood's frames."""
    if kind == "pings":
        return client_frame(b"ping", opcode=0x9) * 800
    if kind == "newlines":
        return client_frame(b"\n" * 120) * 64
    start = client_frame(b"tell nobody ", final=False)
    return start + client_frame(b"", opcode=0x0, final=False) * 1300 + client_frame(b"x", opcode=0)


async def _flood(port: int, kind: str, stats: WebAttackStats, until: float) -> None:
    """One flooding WebSocket (never reading), connecting again when closed."""
    data = _flood_data(kind)
    frames = data.count(b"\x89" if kind == "pings" else b"\x81" if kind == "newlines" else b"\x80")
    while time.monotonic() < until:
        try:
            _, writer = await open_websocket(port, SOURCES["floods"])
        except (OSError, TimeoutError, ConnectionError, asyncio.IncompleteReadError):
            stats.connect_failed += 1
            await asyncio.sleep(0.5)
            continue
        stats.flood_connections[kind] = stats.flood_connections.get(kind, 0) + 1
        try:
            while time.monotonic() < until:
                writer.write(data)
                stats.flood_frames[kind] = stats.flood_frames.get(kind, 0) + frames
                await asyncio.wait_for(writer.drain(), max(until - time.monotonic(), 0.1))
        except (ConnectionError, TimeoutError):
            if time.monotonic() < until:
                closed = stats.flood_closed_by_server
                closed[kind] = closed.get(kind, 0) + 1
        finally:
            writer.transport.abort()


async def _held(
    port: int,
    name: str,
    password: str,
    stats: WebAttackStats,
    until: float,
    gate: asyncio.Semaphore,
) -> None:
    """A WebSocket logged in as ``name`` (``gate`` bounds the logins at once), reading
    and dropping everything until ``until``."""
    try:
        async with gate:
            reader, writer = await open_websocket(port, SOURCES["held"])
            writer.write(client_frame(f"login webbench 1008 {name} {password}".encode()))
            while True:
                opcode, payload = await asyncio.wait_for(read_message(reader), 120)
                if opcode == 0x8:
                    raise ConnectionError("closed before its login")
                if payload == b"6":
                    break
    except (OSError, TimeoutError, ConnectionError, asyncio.IncompleteReadError):
        stats.sockets_failed += 1
        return
    stats.sockets_logged_in += 1
    dropping = asyncio.ensure_future(_drop_everything(reader))
    try:
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(dropping, max(until - time.monotonic(), 0.1))
    finally:  # also when cancelled at the attack's end
        dropping.cancel()
        writer.transport.abort()


async def run_web_attack(
    port: int, names: list[str], password: str, slow: int, floods: int, seconds: float
) -> WebAttackStats:
    """The attack: the held WebSockets log in (50 at a time), then for ``seconds`` the
    slow clients and the floods run; everything is closed at the end."""
    stats = WebAttackStats()
    started = time.monotonic()
    until = started + 3600.0  # the held ones: set once they have logged in
    gate = asyncio.Semaphore(50)
    held = [asyncio.ensure_future(_held(port, n, password, stats, until, gate)) for n in names]
    while stats.sockets_logged_in + stats.sockets_failed < len(names):
        await asyncio.sleep(0.1)
    stats.login_seconds = time.monotonic() - started
    started = time.monotonic()
    until = started + seconds
    release = asyncio.get_running_loop().call_at(
        asyncio.get_running_loop().time() + seconds, lambda: [t.cancel() for t in held]
    )
    tasks = [*held]
    tasks += [asyncio.ensure_future(_slow_http(port, stats, until)) for _ in range(slow)]
    tasks += [
        asyncio.ensure_future(_flood(port, FLOOD_KINDS[i % len(FLOOD_KINDS)], stats, until))
        for i in range(floods)
    ]
    await asyncio.gather(*tasks, return_exceptions=True)
    release.cancel()
    stats.seconds = time.monotonic() - started
    return stats


def attack_process(queue: Any, *arguments: Any) -> None:
    """The web attack in a process of its own (its writes never delay the bystanders'
    clock); the stats go back through ``queue``."""
    queue.put(asyncio.run(run_web_attack(*arguments)))


class WebBystander:
    """A logged-in WebSocket that tells itself ``rate`` times a second: the web door's
    bystander round trip (from the write to the first message after it)."""

    def __init__(self, port: int, name: str, password: str, rate: float) -> None:
        self.port = port
        self.name = name
        self.password = password
        self.rate = rate
        self.trips: dict[str, list[float]] = {}
        self.lost: dict[str, int] = {}
        self.phase = "setup"
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._reader, self._writer = await open_websocket(self.port)
        login = f"login webbench 1008 {self.name} {self.password}"
        self._writer.write(client_frame(login.encode()))
        while (await read_message(self._reader))[1] != b"6":
            pass
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        seq = 0
        while True:
            seq += 1
            token = f"bystander {seq}".encode()
            sent = time.monotonic()
            self._writer.write(client_frame(f"tell {self.name} bystander {seq}".encode()))
            phase = self.phase
            try:
                while True:
                    _, payload = await asyncio.wait_for(read_message(self._reader), 10)
                    if payload.endswith(token):
                        break
                self.trips.setdefault(phase, []).append(time.monotonic() - sent)
            except TimeoutError:
                self.lost[phase] = self.lost.get(phase, 0) + 1
            await asyncio.sleep(max(1.0 / self.rate - (time.monotonic() - sent), 0.0))

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self._writer.transport.abort()
