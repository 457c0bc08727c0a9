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

Every connection of the web port goes through an :class:`HttpGate` before aiohttp sees
a byte: it counts among the connections not logged in (the telnet door's caps), has
``[web] request_timeout`` for each request, passes the telnet door's input budget
(:mod:`server.doors.budget`), and once it is a WebSocket each frame's header is looked
at first (an unmasked one closes it, RFC 6455 §5.1; each frame costs the budget more
than its bytes). aiohttp's own
answer to a malformed request is replaced (:class:`HttpHandler`): the page's headers, no
version, and one log line a minute instead of a traceback each.

With ``[web] proxy_protocol``, a connection's first bytes must be a PROXY header
(:mod:`server.doors.proxy`, D368): the gate reads it before anything else, and the
address it names is the connection's from then on (its caps, the session's host).

The Origin header of a WebSocket request must be the server's own (the Host header,
naming one of ``[web] hosts``) or one of ``[web] origins``; a request without one (a
program, not a browser) is let in. Only version 13 of the protocol is spoken (RFC 6455
§4.4). Every HTTP answer says ``Cache-Control: no-store``, and the page may run only its
own scripts (a Content-Security-Policy header).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import struct
import weakref
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, Protocol, cast
from urllib.parse import urlsplit

from aiohttp import WSCloseCode, WSMsgType, hdrs, web

from protocol import replies
from server.clock import Cancellable, Timer
from server.config import Settings
from server.doors import proxy
from server.doors.admission import QuietLog
from server.doors.budget import InputBudget
from server.doors.output import (
    LINE_END,
    TOO_LONG,
    LineQueue,
    Payload,
    Shell,
    clean_line,
    crlf_lines,
    socket_gone,
)

log = logging.getLogger(__name__)

AIOHTTP_VERSIONS: Final = ("3.14.5", "3.15")
"""The aiohttp versions this module was tested with: at least the first, below the
second (pyproject.toml's pin says the same). :class:`HttpHandler` subclasses aiohttp's
``RequestHandler`` and :class:`HttpGate` stands in front of it as its transport, which
aiohttp's public API does not promise to keep working across minor releases."""
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
WS_VERSION: Final = "13"
"""The one WebSocket version spoken (RFC 6455 §4.1, ``Sec-WebSocket-Version``)."""
WS_VERSION_HEADERS: Final = {hdrs.UPGRADE: "websocket", hdrs.SEC_WEBSOCKET_VERSION: WS_VERSION}
"""The headers of the 426 answer to another version: the upgrade the endpoint needs
(RFC 9110 §15.5.22) and the version it speaks (RFC 6455 §4.4)."""
HEADER_END: Final = b"\r\n\r\n"
"""The end of a request's headers: the empty line after them (RFC 9112 §2.1)."""
HTTP_STATUS_LINE: Final = "HTTP/1.1 {} {}"
"""An answer's status line (RFC 9112 §4), for :func:`http_answer`."""
HTTP_FIELD: Final = "{}: {}"
"""A header field (RFC 9112 §5), for :func:`http_answer`."""
PLAIN_TEXT: Final = "text/plain; charset=utf-8"
"""The media type of :func:`http_answer`'s text."""
CONNECTION_CLOSE: Final = "close"
"""The ``Connection`` option that closes the connection after the answer (RFC 9112 §9.6)."""
FRAME_COST: Final = 64
"""What a WebSocket frame costs the input budget besides its bytes (D264): aiohttp's
work per frame (a message, a queue entry) is the same for an empty frame, so a flood of
empty ones is as bounded as one of bytes (256 frames a second at 16 KiB/s)."""
MAX_FRAME_HEADER: Final = 14
"""The longest frame header: two bytes, a 64-bit length and the masking key (§5.2)."""
CONTROL_COST: Final = 1024
"""What a control frame costs the input budget besides its bytes (D264): a ping makes
the server write a pong, which a client that never reads lets pile up (16 a second at
16 KiB/s, which no browser ever sends)."""
HTTP_ERROR_LOG_INTERVAL: Final = 60.0
"""Seconds between two log lines about clients' malformed HTTP requests (D259)."""
ERROR_REASON_CHARS: Final = 200
"""The most of a malformed request's reason that is logged."""


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
    """The lines of one message: split at the line ends telnet knows (a trailing one
    dropped), each cleaned as on telnet (:func:`server.doors.output.clean_line`), or
    :data:`TOO_LONG` when longer than ``max_len``."""
    parts = LINE_END.split(text)
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return [TOO_LONG if len(part) > max_len else clean_line(part) for part in parts]


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

    async def settle(self) -> int:
        """:attr:`unread`: every message is split into lines as it is received."""
        return self.unread


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

    def peer_gone(self) -> bool:
        return self.closing or socket_gone(self._transport)

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


def _bare_host(host: str) -> str:
    """A host name or address as compared: lower case, an IPv6 address without its
    brackets."""
    return host.lower().strip("[]")


def own_hosts(settings: Settings) -> frozenset[str]:
    """The names the server is reached by: ``[web] hosts`` and ``[web] host`` (unless it
    is a wildcard address, which no browser puts in a URL)."""
    hosts = {_bare_host(host) for host in settings.web_hosts}
    if not _wildcard(settings.web_host):
        hosts.add(_bare_host(settings.web_host))
    return frozenset(hosts)


def _wildcard(host: str) -> bool:
    """True for an address that means every interface (``0.0.0.0``, ``::``)."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return not host


def origin_allowed(
    origin: str | None, host: str | None, allowed: frozenset[str], hosts: frozenset[str]
) -> bool:
    """May a page of ``origin`` open the WebSocket of the server reached as ``host`` (the
    request's Host header)?

    No Origin header: yes (a program; browsers always send one). Otherwise the origin
    must be one of ``allowed``, or be the server's own page: the same host and port as
    the Host header, which must name one of ``hosts``. A Host header alone proves
    nothing: a page of ``evil.example`` whose name was made to point at this machine
    (DNS rebinding) sends ``Host: evil.example`` and ``Origin: http://evil.example``."""
    if origin is None:
        return True
    origin = origin.lower()
    if origin in allowed:
        return True
    if not host:
        return False
    parts = urlsplit(origin)
    return (
        parts.scheme in ("http", "https")
        and parts.netloc == host.lower()
        and _bare_host(parts.hostname or "") in hosts
    )


class Admission(Protocol):
    """The count of connections that have not logged in, shared with the telnet door
    (:class:`server.doors.admission.PreLogin`)."""

    def enter(self, host: str) -> str | None:
        """Count a connection from ``host``; over a cap, the line refusing it."""
        ...

    def leave(self, host: str) -> None:
        """The connection from ``host`` no longer counts."""
        ...


@dataclass(frozen=True, slots=True)
class Guard:
    """What the web door takes from the server to bound its connections."""

    pre_login: Admission
    """The connections not logged in, in all and per address: a connection of the web
    port counts from its accept (D261)."""
    refusal_log: QuietLog
    """Where a connection refused by those caps is logged (rarely)."""
    timer: Timer
    """The clock of the request time-out and of the HTTP error log."""
    proxy_log: QuietLog
    """Where connections refused for want of a PROXY header are logged (D368)."""

    def admit(self, host: str) -> str | None:
        """Count a new connection from ``host``; over a cap, log it and return the line
        refusing it."""
        refusal = self.pre_login.enter(host)
        if refusal is not None:
            self.refusal_log.warning("refused a web connection from %s: %s", host, refusal)
        return refusal


def stamp_headers(headers: MutableMapping[str, str], server: str) -> None:
    """Every answer's headers: :data:`SECURITY_HEADERS`, and ``Server:`` naming the
    server without any version (aiohttp's own names Python's and its own, D259)."""
    headers.update(SECURITY_HEADERS)
    headers[hdrs.SERVER] = server


def http_answer(status: HTTPStatus, text: str, server: str) -> bytes:
    """A whole HTTP/1.1 answer of ``text``, after which the connection closes (RFC 9112
    §9.6): for a connection refused before its request was read."""
    body = crlf_lines([text]).encode("utf-8")
    headers: dict[str, str] = {
        hdrs.CONTENT_TYPE: PLAIN_TEXT,
        hdrs.CONTENT_LENGTH: str(len(body)),
        hdrs.CONNECTION: CONNECTION_CLOSE,
    }
    stamp_headers(headers, server)
    fields = [HTTP_FIELD.format(name, value) for name, value in headers.items()]
    head = crlf_lines([HTTP_STATUS_LINE.format(status.value, status.phrase), *fields, ""])
    return head.encode("latin-1") + body


def close_frame(code: int, reason: str = "") -> bytes:
    """A WebSocket close frame (RFC 6455 §5.5.1): ``code`` and a short ``reason`` (a
    control frame's payload is at most 125 bytes, §5.5)."""
    data = code.to_bytes(2) + reason.encode("utf-8")[:123]
    return bytes((0x88, len(data))) + data


CLOSE_NORMAL: Final = close_frame(WSCloseCode.OK)
"""A WebSocket close frame, code 1000 (RFC 6455 §7.4.1): :meth:`WebOutput.close`."""


class FrameWalker:
    """Walks a client's WebSocket byte stream frame by frame (RFC 6455 §5.2), reading
    only the frame headers: no payload is copied or unmasked here (aiohttp does that).

    :meth:`walk` says how much of the bytes given to take within an allowance and what
    they cost: each byte one, and each frame :data:`FRAME_COST` more (a control frame,
    opcodes 8-15 of §5.5, :data:`CONTROL_COST` more again), charged when its header is
    complete. It also says whether a frame is not masked: a client MUST mask every
    frame, and a server MUST close the connection on an unmasked one (§5.1).
    """

    __slots__ = ("_head", "_skip")

    def __init__(self) -> None:
        self._head = b""
        """The beginning of a frame header split across reads (already taken)."""
        self._skip = 0
        """Bytes of the current frame's payload still to come."""

    def walk(self, data: bytes, allowance: float) -> tuple[int, float, bool]:
        """(bytes taken, their cost, an unmasked frame seen) for ``data``: a new frame
        is begun only while the cost so far is below ``allowance``, so that the budget
        is never overdrawn by more than one frame."""
        cost = 0.0
        pos = 0
        size = len(data)
        while pos < size:
            if self._skip:  # the payload: each byte costs one
                step = min(self._skip, size - pos)
                pos += step
                cost += step
                self._skip -= step
                continue
            if not self._head and cost >= allowance:
                break
            head = self._head + data[pos : pos + MAX_FRAME_HEADER]
            if len(head) >= 2 and not head[1] & 0x80:  # the MASK bit (§5.2)
                return pos, cost, True
            length = head[1] & 0x7F if len(head) >= 2 else 0
            extended = 2 if length == 126 else 8 if length == 127 else 0
            header = 2 + extended + 4  # and the masking key's four bytes (§5.3)
            if len(head) < header:  # the rest of the header comes in a later read
                self._head = head
                cost += size - pos
                return size, cost, False
            taken = header - len(self._head)
            self._head = b""
            if extended:
                length = int.from_bytes(head[2 : 2 + extended])
            control = head[0] & 0x08  # opcode 8-15 (§5.5)
            cost += taken + FRAME_COST + (CONTROL_COST if control else 0)
            pos += taken
            self._skip = length
        return pos, cost, False


class HttpHandler(web.RequestHandler):
    """aiohttp's protocol for one connection of the web port, with its own answer to a
    malformed request: a status line and the page's headers, no version, and one log
    line a minute at most instead of a traceback each (D259)."""

    def __init__(
        self, manager: web.Server, *, error_log: QuietLog, server_name: str, **options: Any
    ) -> None:
        super().__init__(manager, **options)
        self.gate: HttpGate | None = None
        """The connection's :class:`HttpGate` (set by it)."""
        self._error_log = error_log
        self._server_name = server_name

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """A client's malformed request (status below 500): the status alone, counted in
        the quiet log. A client gone in the middle of an answer: a debug line. A failure
        of the server (500): aiohttp's answer and traceback."""
        if isinstance(exc, ConnectionError):
            log.debug("web client %s went away: %r", _client(request), exc)
        elif status >= HTTPStatus.INTERNAL_SERVER_ERROR:
            response = super().handle_error(request, status, exc, message)
            stamp_headers(response.headers, self._server_name)
            return response
        else:
            reason = message or repr(exc)
            self._error_log.warning(
                "HTTP %d to %s: %r", status, _client(request), reason[:ERROR_REASON_CHARS]
            )
        response = web.Response(status=status, text=HTTPStatus(status).phrase)
        response.force_close()
        stamp_headers(response.headers, self._server_name)
        return response


class HttpGate(asyncio.Protocol):
    """In front of aiohttp's protocol (:class:`HttpHandler`) on one connection of the
    web port: what reaches it, and for how long.

    * **Admission.** The connection counts among those not logged in from its accept, in
      the telnet door's caps (:class:`Guard`); over one it gets a 503 with the telnet
      door's line and is closed. Its place is handed to the session when the WebSocket
      opens (:meth:`hand_over`), and given back at once when the connection closes.
    * **Request time-out.** From the accept, and from each answer, the client has
      ``[web] request_timeout`` to send a whole request (its headers); else the
      connection is closed (D260). Whatever it sends after a request's headers waits here
      until that request is answered, so that the bytes after a WebSocket request are
      read as frames from their first byte (no handler of the door reads a request's
      body, which would wait here too).
    * **Input budget.** Everything the client sends passes the telnet door's input
      budget first (``[limits] max_input_rate``, :class:`~server.doors.budget.InputBudget`),
      each WebSocket frame costing :data:`FRAME_COST` more and each control frame
      :data:`CONTROL_COST` more (D264): beyond it the input waits with the connection's
      reading paused. aiohttp sees the connection through the budget's
      :class:`~server.doors.budget.ReadGate`.
    * **Frames.** Once the WebSocket is open (:meth:`upgrade`), each frame's header is
      looked at before aiohttp parses it: an unmasked frame closes the connection with
      code 1002 (RFC 6455 §5.1, D262).
    """

    def __init__(self, handler: HttpHandler, guard: Guard, settings: Settings) -> None:
        self._handler: HttpHandler | None = handler
        """aiohttp's protocol; None once the connection is lost (D422)."""
        handler.gate = self
        self._guard = guard
        self._timeout = settings.web_request_timeout
        self._held_limit = settings.max_unread_input
        self._server_name = settings.server_name
        self._transport: asyncio.Transport | None = None
        self.host = replies.UNKNOWN_HOST
        """The client's address: its peer address, or the one its PROXY header names."""
        self._counted = False
        """It holds a place among the connections not logged in."""
        self._served = False
        """aiohttp's protocol has the connection (it was not refused)."""
        self._deadline: Cancellable | None = None
        self._tail = b""
        """The last bytes of the request so far: a header end split across reads."""
        self._answering = False
        """A request's headers came and it is not answered yet: later bytes wait."""
        self._held = bytearray()
        self._frames: FrameWalker | None = None
        """Set once the connection is a WebSocket."""
        self._budget = InputBudget(settings.max_input_rate, self._parse)
        self._proxy = proxy.HeaderReader() if settings.web_proxy_protocol else None
        """The PROXY header being read (``[web] proxy_protocol``, D368): nothing else
        has seen the connection yet."""

    @property
    def transport(self) -> asyncio.Transport | None:
        """The connection's own transport (aiohttp's protocol sees it through the
        budget's gate); None once the connection is lost."""
        return self._transport

    # -- asyncio.Protocol ---------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.host = peer[0] if peer else replies.UNKNOWN_HOST
        if self._proxy is not None:  # the PROXY header first (D368): _proxy_received
            self._deadline = self._guard.timer.call_at(
                self._guard.timer.now() + proxy.HEADER_TIMEOUT,
                lambda: self._proxy_refused(proxy.TIMED_OUT),
            )
            return
        self._admit()

    def _proxy_received(self, data: bytes) -> None:
        """The first bytes of a connection that must begin with a PROXY header: once it
        is whole, the client's address is the connection's, it is admitted, and what
        followed the header goes on as the connection's first bytes."""
        assert self._proxy is not None
        found = self._proxy.take(data, self._proxy_refused)
        if found is None:
            return
        header, rest = found
        self._proxy = None
        self._disarm()
        if header.source is not None:
            self.host = header.source[0]
        self._admit()
        if rest and self._served:
            self._budget.feed(rest)

    def _proxy_refused(self, why: str) -> None:
        """No valid PROXY header: the connection is closed at once, logged (rarely)."""
        self._proxy = None
        self._disarm()
        if self._transport is not None:
            self._guard.proxy_log.warning("web connection from %s refused: %s", self.host, why)
            self._transport.abort()

    def _admit(self) -> None:
        """Count the connection among those not logged in and hand it to aiohttp, or
        refuse it (over a cap)."""
        assert self._transport is not None
        refusal = self._guard.admit(self.host)
        if refusal is not None:
            self._transport.write(
                http_answer(HTTPStatus.SERVICE_UNAVAILABLE, refusal, self._server_name)
            )
            self._transport.close()
            return
        self._counted = self._served = True
        self._arm()
        assert self._handler is not None
        self._handler.connection_made(self._budget.gate(self._transport))

    def data_received(self, data: bytes) -> None:
        if self._proxy is not None:
            self._proxy_received(data)
            return
        self._budget.feed(data)

    def eof_received(self) -> None:
        if self._served and self._handler is not None:
            self._handler.eof_received()

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._budget.close()
        self._held.clear()
        self._leave()
        handler, self._handler = self._handler, None
        if self._served and handler is not None:
            handler.connection_lost(exc)
        # The gate lets go of aiohttp's protocol and of the transport, which both hold
        # it (the handler its ``gate``, the transport its protocol): as cycles they would
        # be freed only by a full collection, rare by design, and a flood of connections
        # left all of them in memory (D422). What still runs of a request sees the
        # connection gone (``transport`` None).
        self._transport = None

    # -- what the web application tells it ----------------------------------------------

    def request_started(self) -> None:
        """A request is being answered: its time-out stops."""
        self._disarm()

    def request_answered(self) -> None:
        """The answer is made: the next request's time runs from now, and what waited
        is read as that request."""
        transport = self._transport
        if self._frames is not None or transport is None or transport.is_closing():
            return
        self._answering = False
        self._arm()
        self._release()

    def upgrade(self) -> None:
        """The connection becomes a WebSocket: what follows is frames."""
        self._frames = FrameWalker()
        self._answering = False
        self._disarm()
        self._release()

    def drop_request(self) -> bool:
        """The server stops: a connection that is no WebSocket (a request being sent, or
        answered, or none yet) is closed at once, with nobody to tell; True if it was.
        A WebSocket is left to its session, which says goodbye."""
        transport = self._transport
        if self._frames is not None or transport is None or transport.is_closing():
            return False
        transport.abort()
        return True

    def hand_over(self) -> None:
        """The session takes over this connection's place among those not logged in
        (:func:`server.login.admit_connection` counts it again at once: the shell runs
        that before its first wait, so no other connection can take the place)."""
        self._leave()

    # -- inside --------------------------------------------------------------------------

    def _leave(self) -> None:
        if self._counted:
            self._counted = False
            self._guard.pre_login.leave(self.host)

    def _arm(self) -> None:
        self._disarm()
        timer = self._guard.timer
        self._deadline = timer.call_at(timer.now() + self._timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        """No whole request in time: close (at once when output waits, which a slow
        reader would never take)."""
        self._deadline = None
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        log.debug("web connection from %s closed: no whole request in time", self.host)
        if transport.get_write_buffer_size():
            transport.abort()
        else:
            transport.close()

    def _release(self) -> None:
        """What waited for an answer goes through the budget again, first."""
        held, self._held = bytes(self._held), bytearray()
        if held:
            self._budget.put_back(held)

    def _parse(self, data: bytes, allowance: float) -> tuple[int, float]:
        """What the budget lets through (an :data:`~server.doors.budget.Parse`): frames
        once a WebSocket, else a request's bytes (held while the request before them is
        answered), which cost their bytes."""
        if self._frames is not None:
            return self._frames_received(data, allowance)
        if self._answering:
            self._hold(data)
        else:
            self._request_received(data)
        return len(data), len(data)

    def _request_received(self, data: bytes) -> None:
        """Give aiohttp the bytes up to the end of a request's headers (the empty line,
        RFC 9112 §2.1; empty lines before a request are skipped, §2.2); hold the rest
        until that request is answered."""
        if not self._tail:
            data = data.lstrip(b"\r\n")
            if not data:
                return
        seen = self._tail + data
        end = seen.find(HEADER_END)
        if end < 0:
            self._tail = seen[-(len(HEADER_END) - 1) :]
            self._handler_data(data)
            return
        cut = end + len(HEADER_END) - len(self._tail)
        self._tail = b""
        self._answering = True
        self._hold(data[cut:])
        self._handler_data(data[:cut])

    def _handler_data(self, data: bytes) -> None:
        """Bytes for aiohttp's protocol, while the connection lasts."""
        if self._handler is not None:
            self._handler.data_received(data)

    def _hold(self, data: bytes) -> None:
        """Keep ``data`` until the request before it is answered; a client that sends
        more than ``[limits] max_unread_input`` meanwhile is no browser: closed."""
        self._held += data
        if len(self._held) > self._held_limit and self._transport is not None:
            self._transport.abort()

    def _frames_received(self, data: bytes, allowance: float) -> tuple[int, float]:
        """Pass to aiohttp the frames of ``data`` that ``allowance`` reaches, once they
        are seen to be masked; return the bytes taken and their cost."""
        assert self._frames is not None
        used, cost, unmasked = self._frames.walk(data, allowance)
        if unmasked:
            self._fail(WSCloseCode.PROTOCOL_ERROR, replies.WEB_FRAME_NOT_MASKED)
            return len(data), cost
        self._handler_data(data[:used])
        return used, cost

    def _fail(self, code: int, reason: str) -> None:
        """Fail the WebSocket connection (RFC 6455 §7.1.7): a close frame with ``code``
        and ``reason``, then close; nothing more of the client's is read."""
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        log.debug("web socket from %s closed (%d): %s", self.host, code, reason)
        transport.write(close_frame(code, reason))
        transport.close()


def forget_tracebacks(exc: BaseException | None) -> None:
    """Drop the tracebacks of ``exc`` and of the exceptions it came from (D422).

    A WebSocketResponse keeps the error its connection ended with (a client gone while
    a frame was written: ``ClientConnectionResetError``, raised while handling the end
    of the input, ``EofStream``); their tracebacks hold the frames of the response's own
    methods, which hold the response: a cycle per closed WebSocket, freed only by a full
    collection. Nothing reads those tracebacks once the session is over."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


def _client(request: web.BaseRequest) -> str | None:
    """The address of ``request``'s client, for the log: its gate's (which a PROXY
    header may have named), else aiohttp's peer address."""
    gate = getattr(request.protocol, "gate", None)
    return gate.host if isinstance(gate, HttpGate) else request.remote


def _gate(request: web.Request) -> HttpGate:
    """The :class:`HttpGate` of the connection ``request`` came on."""
    protocol = request.protocol
    assert isinstance(protocol, HttpHandler) and protocol.gate is not None
    return protocol.gate


def make_app(settings: Settings, shell: Shell) -> web.Application:
    """The aiohttp application: the page, its files and the WebSocket endpoint."""
    allowed = allowed_origins(settings)
    hosts = own_hosts(settings)
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
            headers={hdrs.CONTENT_TYPE: CONTENT_TYPES[path.suffix]},
        )

    async def page(request: web.Request) -> web.StreamResponse:
        return static(PAGE)

    async def static_file(request: web.Request) -> web.StreamResponse:
        return static(request.match_info["name"])

    async def websocket(request: web.Request) -> web.StreamResponse:
        origin = request.headers.get(hdrs.ORIGIN)
        if not origin_allowed(origin, request.headers.get(hdrs.HOST), allowed, hosts):
            log.info("web socket from %s refused: origin %r", _client(request), origin)
            raise web.HTTPForbidden(text=replies.WEB_ORIGIN_REFUSED)
        if request.headers.get(hdrs.SEC_WEBSOCKET_VERSION) != WS_VERSION:
            # RFC 6455 §4.2.2 and §4.4: 426 naming the version the server speaks.
            raise web.HTTPUpgradeRequired(
                text=replies.WEB_VERSION_REFUSED, headers=WS_VERSION_HEADERS
            )
        ws = web.WebSocketResponse(
            compress=False, max_msg_size=settings.max_unread_input, autoping=True
        )
        await ws.prepare(request)  # a bad handshake raises aiohttp's 400 here
        gate = _gate(request)
        transport = gate.transport
        if transport is None or transport.is_closing():
            return ws
        gate.upgrade()
        lines = WebLines(ws, max_len=settings.max_line_length)
        output = WebOutput(transport, gate.host, buffer_limit=settings.write_buffer_limit)
        gate.hand_over()
        try:
            await shell(lines, output)
        finally:
            if not transport.is_closing():
                output.close()
            # aiohttp closes the response after this handler (a close frame it cannot
            # write to the closed transport: an error it keeps); closed here instead, so
            # that the error's tracebacks can be let go (D422).
            await ws.close()
            forget_tracebacks(ws.exception())
        return ws

    @web.middleware
    async def timed(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """The request time-out stops while a request is answered (:class:`HttpGate`)."""
        gate = _gate(request)
        gate.request_started()
        try:
            return await handler(request)
        finally:
            gate.request_answered()

    async def stamp(request: web.Request, response: web.StreamResponse) -> None:
        stamp_headers(response.headers, settings.server_name)

    app = web.Application(middlewares=[timed], client_max_size=4096)
    app.on_response_prepare.append(stamp)
    app.router.add_get(PAGE_PATH, page)
    app.router.add_get(WS_PATH, websocket)
    app.router.add_get(STATIC_PATH, static_file)
    return app


class WebListener:
    """The running web listener: its aiohttp runner, its listening server and port."""

    def __init__(
        self, runner: web.AppRunner, server: asyncio.Server, gates: weakref.WeakSet[HttpGate]
    ) -> None:
        self.runner = runner
        self.server: asyncio.Server | None = server
        self.port = int(server.sockets[0].getsockname()[1])
        self._gates = gates
        """Every connection's gate while it lives (weakly: a closed one goes by itself)."""

    def drop_requests(self) -> int:
        """The server stops: close at once every connection that is no WebSocket (slow
        HTTP clients held 14 s of the stop, issue 34 item 9); how many."""
        return sum(gate.drop_request() for gate in list(self._gates))

    async def stop_listening(self) -> None:
        """Accept no more connections; those open go on."""
        if self.server is not None:
            server, self.server = self.server, None
            server.close()

    async def close(self) -> None:
        """Stop listening and end what still runs (the connections ended before)."""
        await self.stop_listening()
        await self.runner.cleanup()


async def start_server(
    settings: Settings, shell: Shell, guard: Guard, *, sock: socket.socket | None = None
) -> WebListener:
    """Listen on ``[web] host``/``port`` (or on ``sock``, already bound); each connection
    goes through an :class:`HttpGate` to aiohttp, and each WebSocket runs ``shell``."""
    runner = web.AppRunner(make_app(settings, shell), handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    manager = runner.server
    assert manager is not None
    loop = asyncio.get_running_loop()
    error_log = QuietLog(log, HTTP_ERROR_LOG_INTERVAL, guard.timer.now)
    gates: weakref.WeakSet[HttpGate] = weakref.WeakSet()

    def connection() -> HttpGate:
        handler = HttpHandler(
            manager,
            loop=loop,
            error_log=error_log,
            server_name=settings.server_name,
            access_log=None,
        )
        gate = HttpGate(handler, guard, settings)
        gates.add(gate)
        return gate

    backlog = settings.listen_backlog
    if sock is not None:
        server = await loop.create_server(connection, sock=sock, backlog=backlog)
    else:
        server = await loop.create_server(
            connection, settings.web_host, settings.web_port, backlog=backlog
        )
    listener = WebListener(runner, server, gates)
    log.info("web listening on %s:%d", settings.web_host, listener.port)
    return listener
