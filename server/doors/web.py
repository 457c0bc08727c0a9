"""The web door: the only module that imports aiohttp (docs/web.md).

It serves the page (``server/static/``) and a WebSocket endpoint, :data:`WS_PATH`, that
carries CLIP lines, one line per message in both directions, through the same
:data:`~server.doors.output.Shell` as a telnet connection: the login dialog, the command
loop, its rate limit, its login throttling and every handler are the telnet ones. The
endpoint implements the transport seam of :mod:`server.doors.output`:

* :class:`WebLines` (a :class:`~server.doors.output.LineSource`): each text message is one
  line (a message holding line ends is split into its lines, a trailing line end
  dropped); control characters other than tab are removed, a line over
  ``[limits] max_line_length`` is reported as :data:`~server.doors.output.TOO_LONG`, a
  message over ``[limits] max_unread_input`` closes the connection (aiohttp's
  ``max_msg_size``). A client that sends faster than its lines are taken is held back
  by TCP: the next message is read only when the last line was taken, and aiohttp's
  reader pauses the socket when its own queue is full.
* :class:`WebOutput` (an :class:`~server.doors.output.Output`): each line, and each prompt,
  is one text message. The frames are written straight to the connection's transport
  (a server's frames are unmasked, and no compression is negotiated), so a write never
  awaits, a broadcast's frames are made once per :class:`~server.doors.output.Payload` and
  shared by every web recipient, and a client that stops reading is aborted when its
  unsent output passes ``[limits] write_buffer_limit``, as on telnet.

The Origin header of a WebSocket request must be the server's own (the Host header) or
one of ``[web] origins``; a request without one (a program, not a browser) is let in.
Every HTTP answer says ``Cache-Control: no-store``, and the page may run only its own
scripts (a Content-Security-Policy header).
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import struct
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web

from protocol import replies
from server.config import Settings
from server.doors.output import TOO_LONG, LineQueue, Payload, Shell

log = logging.getLogger(__name__)

WS_PATH: Final = "/ws"
"""Where the WebSocket endpoint is."""
PAGE_PATH: Final = "/"
"""Where the page is."""
STATIC_PATH: Final = "/static/{name}"
"""Where the page's other files are (aiohttp's route syntax)."""
STATIC_FOLDER: Final = "static"
"""The folder of the page's files in the ``server`` package (``server/static/``), shipped
with it (pyproject.toml's package data)."""
STATIC_DIR: Final = Path(__file__).parents[1] / STATIC_FOLDER
PAGE: Final = "index.html"
"""The file served at :data:`PAGE_PATH`."""
CONTENT_TYPES: Final = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
"""The static files served, by suffix; any other file of the folder is not served."""
SECURITY_HEADERS: Final = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""Headers on every answer: nothing is cached (a page or script never holds a session,
and no proxy keeps one), only the server's own scripts run, no page frames it."""
DRAIN_POLL: Final = 0.02
"""Seconds between two looks at a connection's unsent output in :meth:`WebOutput.drain`."""
FRAME_HEADERS: Final = ("!BB", "!BBH", "!BBQ")
"""The ``struct`` formats of a frame's header: with a 7-bit, 16-bit and 64-bit length
(RFC 6455 §5.2)."""
PAYLOAD_FORM: Final = ("websocket",)
"""The key of this transport's bytes in a :class:`~server.doors.output.Payload`."""
CLOSE_NORMAL: Final = struct.pack(FRAME_HEADERS[1], 0x88, 2, 1000)
"""A WebSocket close frame, code 1000 (RFC 6455 §5.5.1): :meth:`WebOutput.close`."""

_EOL = re.compile(r"\r\n|\n\r|\r|\n")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters other than tab, removed from input as on telnet (D75)."""


def text_frame(text: str) -> bytes:
    """One unmasked, final WebSocket text frame holding ``text`` (RFC 6455 §5.2)."""
    data = text.encode("utf-8")
    size = len(data)
    if size < 126:
        header = struct.pack(FRAME_HEADERS[0], 0x81, size)
    elif size < 1 << 16:
        header = struct.pack(FRAME_HEADERS[1], 0x81, 126, size)
    else:
        header = struct.pack(FRAME_HEADERS[2], 0x81, 127, size)
    return header + data


def frames(lines: Iterable[str]) -> bytes:
    """One text frame per line, in order."""
    return b"".join(text_frame(line) for line in lines)


def _payload_frames(text: str, _form: tuple[str, ...]) -> bytes:
    """A :class:`Payload`'s text (lines each ending in CR LF) as one frame per line."""
    return frames(text[:-2].split("\r\n")) if text else b""


def split_message(text: str, max_len: int) -> list[str]:
    """The lines of one message: split at line ends (a trailing one dropped), each
    cleaned of control characters, or :data:`TOO_LONG` when longer than ``max_len``."""
    parts = _EOL.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return [TOO_LONG if len(part) > max_len else _CONTROL.sub("", part) for part in parts]


class WebLines:
    """Command lines from a WebSocket (a :class:`server.doors.output.LineSource`)."""

    def __init__(self, ws: web.WebSocketResponse, *, max_len: int) -> None:
        self._ws = ws
        self._max_len = max_len
        self._lines = LineQueue()
        self._ended = False

    async def readline(self) -> str | None:
        while not self._lines:
            if self._ended:
                return None
            message = await self._ws.receive()
            if message.type is WSMsgType.TEXT:
                self._add(message.data)
            elif message.type is WSMsgType.BINARY:
                self._add(message.data.decode("utf-8", errors="replace"))
            else:  # CLOSE, CLOSING, CLOSED, ERROR: the client is gone or broke the protocol
                self._ended = True
        return self.queued_line()

    def _add(self, text: str) -> None:
        for line in split_message(text, self._max_len):
            self._lines.append(line)

    def queued_line(self) -> str | None:
        return self._lines.pop()

    @property
    def unread(self) -> int:
        """Characters of the lines received and not yet taken (one more per line)."""
        return self._lines.chars


class WebOutput:
    """Lines and prompts to one WebSocket (a :class:`server.doors.output.Output`), each a text
    message, written to the transport at once."""

    def __init__(self, transport: asyncio.Transport, host: str, *, buffer_limit: int) -> None:
        self._transport = transport
        self._limit = buffer_limit
        self.host = host
        self.overflowed = False

    def send(self, lines: Iterable[str]) -> None:
        self._write(frames(lines))

    def send_payload(self, payload: Payload) -> None:
        self._write(payload.encoded(PAYLOAD_FORM, _payload_frames))

    def prompt(self, text: str) -> None:
        self._write(text_frame(text))

    def echo_off(self) -> None:
        """Nothing: a page knows a password field without being told."""

    def echo_on(self) -> None:
        """Nothing (see :meth:`echo_off`)."""

    def _write(self, data: bytes) -> None:
        transport = self._transport
        if not data or transport.is_closing():
            return
        transport.write(data)
        if transport.get_write_buffer_size() > self._limit:
            self.overflowed = True
            self.abort()

    @property
    def closing(self) -> bool:
        return self._transport.is_closing()

    async def drain(self, timeout: float) -> None:
        transport = self._transport
        if transport.is_closing() or not transport.get_write_buffer_size():
            return
        try:
            async with asyncio.timeout(timeout):
                while not transport.is_closing() and transport.get_write_buffer_size():
                    await asyncio.sleep(DRAIN_POLL)
        except TimeoutError:
            self.abort()

    def close(self) -> None:
        """A close frame, then close once the output written has been sent."""
        transport = self._transport
        if not transport.is_closing():
            transport.write(CLOSE_NORMAL)
            transport.close()

    def abort(self) -> None:
        self._transport.abort()


def allowed_origins(settings: Settings) -> frozenset[str]:
    """``[web] origins`` as a set, lower case."""
    return frozenset(origin.lower() for origin in settings.web_origins.split())


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """May a page of ``origin`` open the WebSocket of the server reached as ``host``?

    No Origin header: yes (a program; browsers always send one). Otherwise the origin
    must be one of ``allowed`` or name the same host and port as the Host header (the
    server's own page, whatever proxy put TLS in front of it)."""
    if origin is None:
        return True
    origin = origin.lower()
    if origin in allowed:
        return True
    parts = urlsplit(origin)
    return bool(host) and parts.scheme in ("http", "https") and parts.netloc == (host or "").lower()


def make_app(settings: Settings, shell: Shell) -> web.Application:
    """The aiohttp application: the page, its files and the WebSocket endpoint."""
    allowed = allowed_origins(settings)
    files = {
        path.name: path
        for path in STATIC_DIR.iterdir()
        if path.is_file() and path.suffix in CONTENT_TYPES
    }

    def static(name: str) -> web.StreamResponse:
        path = files.get(name)
        if path is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=path.read_bytes(),
            content_type=None,
            headers={"Content-Type": CONTENT_TYPES[path.suffix], **SECURITY_HEADERS},
        )

    async def page(request: web.Request) -> web.StreamResponse:
        return static(PAGE)

    async def static_file(request: web.Request) -> web.StreamResponse:
        return static(request.match_info["name"])

    async def websocket(request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if not origin_allowed(origin, request.host, allowed):
            log.info("web socket from %s refused: origin %r", request.remote, origin)
            raise web.HTTPForbidden(text=replies.WEB_ORIGIN_REFUSED, headers=SECURITY_HEADERS)
        ws = web.WebSocketResponse(
            compress=False, max_msg_size=settings.max_unread_input, autoping=True
        )
        await ws.prepare(request)
        transport = request.transport
        if transport is None:
            return ws
        lines = WebLines(ws, max_len=settings.max_line_length)
        output = WebOutput(
            transport,
            request.remote or replies.UNKNOWN_HOST,
            buffer_limit=settings.write_buffer_limit,
        )
        await shell(lines, output)
        if not transport.is_closing():
            output.close()
        return ws

    @web.middleware
    async def headers(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(SECURITY_HEADERS)
            raise
        if not response.prepared:
            response.headers.update(SECURITY_HEADERS)
        return response

    app = web.Application(middlewares=[headers], client_max_size=4096)
    app.router.add_get(PAGE_PATH, page)
    app.router.add_get(WS_PATH, websocket)
    app.router.add_get(STATIC_PATH, static_file)
    return app


class WebListener:
    """The running web listener: its aiohttp runner and the port it bound."""

    def __init__(self, runner: web.AppRunner, site: web.BaseSite, port: int) -> None:
        self.runner = runner
        self.site: web.BaseSite | None = site
        self.port = port

    async def stop_listening(self) -> None:
        """Accept no more connections; those open go on."""
        if self.site is not None:
            site, self.site = self.site, None
            await site.stop()

    async def close(self) -> None:
        """Stop listening and end what still runs (the connections ended before)."""
        await self.runner.cleanup()


async def start_server(
    settings: Settings, shell: Shell, *, sock: socket.socket | None = None
) -> WebListener:
    """Listen on ``[web] host``/``port`` (or on ``sock``, already bound); each WebSocket
    connection runs ``shell``."""
    runner = web.AppRunner(
        make_app(settings, shell), handle_signals=False, access_log=None, shutdown_timeout=1.0
    )
    await runner.setup()
    site: web.BaseSite
    if sock is not None:
        site = web.SockSite(runner, sock, backlog=settings.listen_backlog)
    else:
        site = web.TCPSite(
            runner, settings.web_host, settings.web_port, backlog=settings.listen_backlog
        )
    await site.start()
    port = int(runner.addresses[0][1])
    log.info("web listening on %s:%d", settings.web_host, port)
    return WebListener(runner, site, port)
