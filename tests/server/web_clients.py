"""A scripted WebSocket client of the web door, and a server with the door open."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
from collections.abc import AsyncIterator
from typing import Any

import aiohttp

from protocol import replies
from server.app import App
from server.config import Settings
from server.doors.web import WS_PATH
from server.service import Service
from tests.conftest import DbTarget

from .conftest import TIMEOUT, make_user, serving


def any_port_socket() -> socket.socket:
    """A socket bound to a free port of 127.0.0.1 (the web door's ``sock``)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def web_serving(
    settings: Settings, db_target: DbTarget, **app_options: Any
) -> AsyncIterator[Service]:
    """A server (telnet on port 0) with its web door on a free port."""
    async with serving(settings, db_target, **app_options) as service:
        await service.start_web(sock=any_port_socket())
        yield service


def web_url(service: Service, path: str = "/") -> str:
    assert service.web is not None
    return f"http://127.0.0.1:{service.web.port}{path}"


class WebClient:
    """One WebSocket connection: send lines, expect lines (each message one line)."""

    def __init__(self, http: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.http = http
        self.ws = ws
        self.seen: list[str] = []

    @classmethod
    async def open(cls, service: Service, *, origin: str | None = None) -> WebClient:
        http = aiohttp.ClientSession()
        headers = {} if origin is None else {"Origin": origin}
        try:
            ws = await asyncio.wait_for(
                http.ws_connect(web_url(service, WS_PATH), headers=headers), TIMEOUT
            )
        except BaseException:
            await http.close()
            raise
        return cls(http, ws)

    async def send(self, line: str) -> None:
        await self.ws.send_str(line)

    async def line(self, timeout: float = TIMEOUT) -> str:
        """The next message, which must be text."""
        message = await asyncio.wait_for(self.ws.receive(), timeout)
        if message.type is not aiohttp.WSMsgType.TEXT:
            raise ConnectionError(f"no text but {message.type!r}")
        text: str = message.data
        self.seen.append(text)
        return text

    async def expect(self, wanted: str, timeout: float = TIMEOUT) -> list[str]:
        """Read messages until one equals ``wanted``; return those before it."""
        before: list[str] = []
        while True:
            try:
                got = await self.line(timeout)
            except TimeoutError:
                raise AssertionError(f"never got {wanted!r}; got {before[-10:]!r}") from None
            if got == wanted:
                return before
            before.append(got)

    async def closed(self, timeout: float = TIMEOUT) -> bool:
        """Read until the server ends the connection."""
        while True:
            message = await asyncio.wait_for(self.ws.receive(), timeout)
            if message.type is not aiohttp.WSMsgType.TEXT:
                return True

    async def close(self) -> None:
        await self.ws.close()
        await self.http.close()


async def web_login(service: Service, name: str, password: str = "secret") -> WebClient:
    """A CLIP login over the WebSocket, read up to the ``6``."""
    app: App = service.app
    if await app.db.get_user(name) is None:
        await make_user(app, name, password)
    client = await WebClient.open(service)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send(f"login web 1008 {name} {password}")
    await client.expect("6")
    return client


# -- raw HTTP and hand-made WebSocket frames (malformed on purpose where a test says so) --


class RawHttp:
    """One connection to the web port on raw asyncio streams: bytes out, HTTP answers and
    WebSocket frames in, every read under a time-out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, service: Service) -> RawHttp:
        assert service.web is not None
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection("127.0.0.1", service.web.port), TIMEOUT
        )
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self) -> tuple[int, dict[str, str], bytes]:
        """The next HTTP answer: its status, its headers (names in lower case) and its
        body (``Content-Length`` bytes; none for a 101)."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        status_line, *fields = head.decode("latin-1").split("\r\n")[:-2]
        headers = {}
        for field in fields:
            name, _, value = field.partition(":")
            headers[name.strip().lower()] = value.strip()
        size = int(headers.get("content-length", "0"))
        body = await asyncio.wait_for(self.reader.readexactly(size), TIMEOUT) if size else b""
        return int(status_line.split()[1]), headers, body

    async def frame(self) -> tuple[int, bytes]:
        """The next WebSocket frame from the server: its opcode and payload (unmasked,
        RFC 6455 §5.2)."""
        first, second = await asyncio.wait_for(self.reader.readexactly(2), TIMEOUT)
        size = second & 0x7F
        if size in (126, 127):
            extended = await self.reader.readexactly(2 if size == 126 else 8)
            size = int.from_bytes(extended)
        return first & 0x0F, await asyncio.wait_for(self.reader.readexactly(size), TIMEOUT)

    async def text_until(self, wanted: str) -> list[str]:
        """Read text frames until one is ``wanted``; return those before it."""
        before: list[str] = []
        while True:
            opcode, data = await self.frame()
            assert opcode == 1, f"no text frame but opcode {opcode}: {data!r}"
            if data.decode() == wanted:
                return before
            before.append(data.decode())

    async def close_frame(self) -> tuple[int, str]:
        """Read frames until the server's close frame: its code and reason."""
        while True:
            opcode, data = await self.frame()
            if opcode == 8:
                return int.from_bytes(data[:2]), data[2:].decode()

    async def closed(self) -> bool:
        """Read until the server closes the connection."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), TIMEOUT):
                pass
        except ConnectionResetError:
            pass
        return True

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


def upgrade_request(
    service: Service, *, host: str | None = None, origin: str | None = None, version: str = "13"
) -> bytes:
    """A WebSocket opening handshake (RFC 6455 §4.1) for :data:`WS_PATH`."""
    assert service.web is not None
    fields = [
        f"GET {WS_PATH} HTTP/1.1",
        f"Host: {host or f'127.0.0.1:{service.web.port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        f"Sec-WebSocket-Version: {version}",
    ]
    if origin is not None:
        fields.append(f"Origin: {origin}")
    return ("\r\n".join(fields) + "\r\n\r\n").encode()


def client_frame(data: bytes, *, opcode: int = 1, masked: bool = True, final: bool = True) -> bytes:
    """One client frame (RFC 6455 §5.2), final unless ``final`` is False: masked with a
    random key, as a client must (§5.3), unless ``masked`` is False."""
    size = len(data)
    first = (0x80 if final else 0) | opcode
    mask_bit = 0x80 if masked else 0
    if size < 126:
        header = bytes([first, mask_bit | size])
    elif size < 1 << 16:
        header = bytes([first, mask_bit | 126]) + size.to_bytes(2)
    else:
        header = bytes([first, mask_bit | 127]) + size.to_bytes(8)
    if not masked:
        return header + data
    key = os.urandom(4)
    return header + key + bytes(b ^ key[i % 4] for i, b in enumerate(data))
