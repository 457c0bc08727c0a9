"""A scripted WebSocket client of the web door, and a server with the door open."""

from __future__ import annotations

import asyncio
import contextlib
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
