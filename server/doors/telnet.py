"""The telnet edge: the only module that imports telnetlib3.

It implements the transport seam of :mod:`server.doors.output` over telnet. It starts the
listening server with every telnetlib3 default set explicitly
(shared/docs/architecture.md, "telnetlib3: defaults and pitfalls") and the configured
listen backlog, turns the byte stream into clean command lines (:class:`LineReader`: CR
LF, LF CR, bare CR or LF, each one line end even when split across packets, a cap on the
line length, a count of the input not yet taken), and writes CR LF lines, prompts and
the echo switches of the password prompt (:class:`TelnetOutput`).

Input is flow-controlled: telnetlib3's reader pauses the socket when about
``[limits] max_unread_input`` bytes wait in it (:class:`FlowReader`), so a client that
sends faster than its commands are taken (server/connection.py reads them at the
configured rate) is held back by TCP instead of growing the server's memory. Before
that, what one connection costs is bounded where its bytes arrive
(:meth:`QuietTelnetServer.data_received`): at most ``[limits] max_input_rate`` bytes a
second go to telnetlib3's parsing, in slices of
:data:`~server.doors.budget.INPUT_SLICE`; the rest waits with the socket paused (D211,
:mod:`server.doors.budget`, shared with the web door).

No client can put its connection in a state the server cannot write (D210): the
encoding is UTF-8 whatever a client negotiates (CHARSET, NEW_ENVIRON's LANG), a
subnegotiation of an option not agreed on is ignored, and an error in telnetlib3's
handling of a client's command ends at that command (:class:`GuardedWriter`). A write
that fails all the same closes that connection alone (:class:`TelnetOutput`).

A broadcast (a login's CLIP 7 and who update to thousands of users) renders its lines
once into a :class:`~server.doors.output.Payload`, which :func:`payload_bytes` encodes and
IAC-escapes once per encoding in use; :meth:`TelnetOutput.send_payload` then hands those
bytes to each recipient's transport: the same bytes as :meth:`TelnetOutput.send`, without
a telnetlib3 write (encoding, escaping) per recipient (docs/performance.md §3).

With ``[server] proxy_protocol``, a connection's first bytes must be a PROXY header
(:mod:`server.doors.proxy`, D368), read by :class:`QuietTelnetServer` before telnetlib3
is given the connection: telnetlib3 starts with the client's real address as its
``peername`` and never sees the header.

The fast paths (:class:`FlowReader`, :class:`QuietTelnetServer`, :class:`TelnetOutput`)
use telnetlib3 internals that are not its public API. They are named in
:data:`TELNETLIB3_INTERNALS`, pyproject.toml pins telnetlib3 to the versions they were
read from (:data:`TELNETLIB3_VERSIONS`), and tests/server/test_telnet_input.py fails
when an installed telnetlib3 differs.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import datetime
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, cast

import telnetlib3
from telnetlib3.server_base import BaseServer
from telnetlib3.stream_reader import TelnetReaderUnicode
from telnetlib3.stream_writer import TelnetWriterUnicode
from telnetlib3.telopt import ECHO, MCCP2_COMPRESS, MCCP3_COMPRESS, WILL, WONT, theNULL

from protocol import replies
from server.config import Settings
from server.doors import proxy
from server.doors.admission import QuietLog
from server.doors.budget import InputBudget
from server.doors.output import (
    LINE_END,
    TOO_LONG,
    LineQueue,
    Payload,
    clean_line,
    crlf_lines,
    socket_gone,
)

log = logging.getLogger(__name__)

_SECOND_HALF: Final = {"\r": ("\n", "\x00"), "\n": ("\r",)}
"""After a bare CR or LF that ended a chunk: the characters that, first in the next
chunk, complete the same line end (CR LF or CR NUL, LF CR) split across packets."""
_READ_ALL: Final = 1 << 30
"""What :meth:`LineReader.readline` asks the telnetlib3 reader for: more than it can
hold (it pauses the socket long before), so each read takes all it has, decoded once.
(A smaller count makes telnetlib3 5.x's unicode reader take the rest byte by byte.)"""
IAC: Final = b"\xff"
"""Telnet's Interpret-As-Command byte: doubled when it occurs in data (RFC 854)."""

_PLAIN_BYTES: Final = b"\r\n" + bytes(range(0x20, 0x7F))
"""Input bytes that are only data to telnetlib3: printable ASCII, CR and LF (no IAC, no
control character that its simulated special-character table names)."""
_PLAIN_INPUT: Final = re.compile(b"[" + re.escape(_PLAIN_BYTES) + b"]*")

TelnetShell = Callable[["LineReader", "TelnetOutput"], Awaitable[None]]
"""What serves one telnet connection: any :data:`server.doors.output.Shell` (it takes these
two as the seam's :class:`~server.doors.output.LineSource` and
:class:`~server.doors.output.Output`)."""


class FlowReader(TelnetReaderUnicode):
    """telnetlib3's unicode reader, which can say how many bytes it holds.

    It pauses the socket when it holds more than twice its ``limit`` and resumes it when
    it is read (telnetlib3 5.x, a copy of asyncio's StreamReader), once
    :meth:`QuietTelnetServer.connection_made` has given it the transport (telnetlib3's
    server never does: its reader would buffer without bound).
    """

    @property
    def buffered(self) -> int:
        """Bytes received and not yet read."""
        return len(self._buffer)


ENCODING: Final = "utf8"
"""The only encoding of every connection, both ways, whatever a client negotiates."""
CHARSETS: Final = ("UTF-8", "US-ASCII")
"""The character sets the server offers and accepts in a CHARSET negotiation (RFC
2066): UTF-8, and ASCII, whose text is the same bytes in UTF-8. Any other is refused."""
_NEVER_AGREED: Final = frozenset({MCCP2_COMPRESS, MCCP3_COMPRESS})
"""Options whose subnegotiation is ignored even when a client claims them: the server
never offers compression (a client's compressed input would bypass the input budget)."""


def acceptable_charset(name: str) -> bool:
    """True for a name of UTF-8 or US-ASCII (any spelling Python's codecs know)."""
    try:
        codec = codecs.lookup(name.strip()).name
    except (LookupError, ValueError):
        return False
    return codec in ("utf-8", "ascii")


def _fixed_encoding(outgoing: bool | None = None, incoming: bool | None = None) -> str:
    """A closed connection's reader's encoding: :data:`ENCODING`, as ever (D210)."""
    return ENCODING


def let_go(reader: Any, writer: Any) -> None:
    """Break the cycles telnetlib3 leaves between a lost connection's protocol, reader
    and writer (D422).

    Its reader and writer ask the protocol's ``encoding`` method, the writer holds the
    protocol and its callbacks (bound methods of the protocol), and the writer's option
    tables call back a method of the writer: cycles that only a full collection frees,
    rare by design (``GC_THRESHOLDS``), and they hold the reader's unread input.
    telnetlib3 breaks most of them in its writer's ``close``, which the server never
    calls (it closes the transport, and a client's reset or EOF ends the connection
    without it). After this the reader still gives what it holds and then its end, and
    the writer still answers about its closed transport."""
    if reader is not None:
        reader.fn_encoding = _fixed_encoding
    if writer is None:
        return
    writer.fn_encoding = _fixed_encoding
    for option in (writer.pending_option, writer.local_option, writer.remote_option):
        option._on_change = None
    for callbacks in (
        writer._ext_callback,
        writer._ext_send_callback,
        writer._ext_offer_callback,
        writer.will_callbacks,
        writer._slc_callback,
        writer._iac_callback,
    ):
        callbacks.clear()
    writer._protocol = None


class GuardedWriter(TelnetWriterUnicode):
    """telnetlib3's writer, with what a client may negotiate fenced in (D210).

    * A subnegotiation (``IAC SB <option> ... IAC SE``) is handled only for an option
      agreed on in either direction (RFC 855), and never for compression.
    * A CHARSET request from the client is answered with UTF-8 or US-ASCII when it
      offers one, else refused (``REJECTED``); the connection stays UTF-8 either way.
    * An error in telnetlib3's handling of one command is logged at DEBUG and the
      command ignored: it neither reaches telnetlib3's traceback logging nor the
      connection.
    """

    def feed_byte(self, byte: bytes) -> bool:
        try:
            return super().feed_byte(byte)
        except ValueError:
            raise  # telnetlib3's "invalid telnet byte": it logs one DEBUG line
        except Exception as exc:
            self.log.debug("telnet command ignored: %r", exc)
            self.iac_received = False
            self.cmd_received = False
            return False

    def handle_subnegotiation(self, buf: collections.deque[bytes]) -> None:
        option = buf[0] if buf else b""
        if option in _NEVER_AGREED or not (
            self.remote_option.enabled(option) or self.local_option.enabled(option)
        ):
            self.log.debug("subnegotiation of an option not agreed on ignored: %r", option)
            return
        try:
            super().handle_subnegotiation(buf)
        except Exception as exc:
            self.log.debug("subnegotiation ignored: %r", exc)

    def handle_send_client_charset(self, _charsets: list[str]) -> str | None:  # type: ignore[override]
        """The charset chosen from a client's offer: UTF-8 if offered, else US-ASCII,
        else None (telnetlib3 answers ``REJECTED``)."""
        offered = [name for name in _charsets if acceptable_charset(name)]
        utf8 = [name for name in offered if codecs.lookup(name.strip()).name == "utf-8"]
        chosen = utf8 or offered
        return chosen[0] if chosen else None


class QuietTelnetServer(telnetlib3.TelnetServer):
    """Skip the on-connect ``IAC DO TTYPE``: raw TCP clients and bots see only text.

    FIBS itself sends no negotiation on connect (§1.1); the password prompt's
    ``IAC WILL ECHO`` / ``IAC WONT ECHO`` are the only option bytes we send.

    Input that is plain text (almost every command) goes straight to the reader, as
    telnetlib3 would pass it, without its per-chunk work: the special-character set
    rebuilt and each byte looked up in it, in Python (~5 % of the event loop with 1,000
    players, docs/performance.md §10). Any other byte, and any state in which telnetlib3
    would treat text differently, takes telnetlib3's own path.
    """

    _plain_is_data = False
    """Plain input is data for telnetlib3 now (:meth:`_plain_input_is_data`)."""
    input_rate: ClassVar[int] = 0
    """Bytes a second of one connection's input that are parsed, in bursts of one
    second's worth (``[limits] max_input_rate``; :func:`start_server` sets it); 0: no
    limit."""

    proxy_log: ClassVar[QuietLog | None] = None
    """Set when each connection begins with a PROXY header (``[server] proxy_protocol``,
    D368): where connections refused for want of one are logged, once a minute."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(READER_FACTORY_KEYWORD, FlowReader)
        kwargs.setdefault(WRITER_FACTORY_KEYWORD, GuardedWriter)
        super().__init__(**kwargs)
        self._budget = InputBudget(self.input_rate, self._parse)
        self._proxy: proxy.HeaderReader | None = None
        """The PROXY header being read: telnetlib3 has not seen the connection yet."""
        self._proxy_transport: asyncio.BaseTransport | None = None
        self._proxy_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """With ``[server] proxy_protocol``: wait for the PROXY header first
        (:meth:`_proxy_received`), within :data:`~server.doors.proxy.HEADER_TIMEOUT`;
        else begin (:meth:`_begin`)."""
        if self.proxy_log is None:
            self._begin(transport)
            return
        self._proxy = proxy.HeaderReader()
        self._proxy_transport = transport
        self._proxy_deadline = asyncio.get_running_loop().call_later(
            proxy.HEADER_TIMEOUT, self._proxy_refused, proxy.TIMED_OUT
        )

    def _proxy_received(self, data: bytes) -> None:
        """The first bytes of a connection that must begin with a PROXY header: once it
        is whole, telnetlib3 gets the connection, the client's address as its
        ``peername``, and the bytes after the header."""
        assert self._proxy is not None and self._proxy_transport is not None
        found = self._proxy.take(data, self._proxy_refused)
        if found is None:
            return
        header, rest = found
        self._proxy = None
        if self._proxy_deadline is not None:
            self._proxy_deadline.cancel()
        if header.source is not None:
            self._extra["peername"] = header.source
        self._begin(self._proxy_transport)
        if rest:
            self._budget.feed(rest)

    def _proxy_refused(self, why: str) -> None:
        """No valid PROXY header: the connection is closed at once, logged (rarely)."""
        transport = self._proxy_transport
        if self._proxy is None or transport is None:
            return
        self._proxy = None
        if self.proxy_log is not None:
            peer = transport.get_extra_info("peername")
            host = peer[0] if peer else replies.UNKNOWN_HOST
            self.proxy_log.warning("telnet connection from %s refused: %s", host, why)
        cast(asyncio.Transport, transport).abort()

    def _begin(self, transport: asyncio.BaseTransport) -> None:
        """telnetlib3's setup, then the transport for the reader's flow control (behind
        the input budget's gate), and no simulated special characters: the server reads
        whole lines (``line_mode``) and removes control characters itself, so
        telnetlib3 need not look at each byte of the input in Python."""
        super().connection_made(transport)
        gate = self._budget.gate(cast(asyncio.Transport, transport))
        reader = self.reader
        if reader is not None:
            reader.set_transport(gate)
        writer = self.writer
        if writer is not None:
            writer.slc_simulated = False

    def connection_lost(self, exc: Exception | None) -> None:
        self._budget.close()
        if self._proxy_deadline is not None:
            self._proxy_deadline.cancel()
        if self.reader is None:  # gone before its PROXY header: telnetlib3 never had it
            self._proxy = None
            return
        super().connection_lost(exc)
        let_go(self.reader, self.writer)

    def begin_negotiation(self) -> None:
        BaseServer.begin_negotiation(self)

    def _check_negotiation_timer(self) -> None:
        """telnetlib3's check of the on-connect negotiation, unless it is over already.

        Its check completes ``_waiter_connected`` without looking whether that is done:
        a check scheduled before the connection was lost, or before another check ended
        the negotiation, logged a traceback (``InvalidStateError``) when it ran. On
        uvloop this happens to clients that close at once."""
        if not self._waiter_connected.done():
            super()._check_negotiation_timer()

    def encoding(self, outgoing: bool | None = None, incoming: bool | None = None) -> str:
        """UTF-8, both ways, whatever the client negotiated (D210)."""
        return ENCODING

    def on_charset(self, charset: str) -> None:
        """A client's ``CHARSET ACCEPTED``: noted only for UTF-8 or US-ASCII."""
        if acceptable_charset(charset):
            super().on_charset(charset)

    def on_request_charset(self) -> list[str]:
        """The character sets offered to a client that said ``WILL CHARSET``."""
        return list(CHARSETS)

    def data_received(self, data: bytes) -> None:
        """Input within the budget is parsed now; the rest is held back, the socket
        paused, and parsed as the budget allows (:class:`~server.doors.budget.InputBudget`)."""
        if self._proxy is not None:
            self._proxy_received(data)
            return
        self._budget.feed(data)

    def _parse(self, data: bytes, allowance: float) -> tuple[int, float]:
        """Parse all of ``data`` (telnetlib3's way, or the plain-input shortcut), which
        costs the budget its bytes (``allowance`` covers them)."""
        reader = self.reader
        if self._plain_is_data and reader is not None and _PLAIN_INPUT.fullmatch(data):
            # What BaseServer.data_received does with bytes that hold no command.
            self._last_received = datetime.datetime.now()
            self._rx_bytes += len(data)
            self._trace_recv(data)
            reader.feed_data(data)
        else:
            super().data_received(data)
            self._plain_is_data = self._plain_input_is_data()
        return len(data), len(data)

    def _plain_input_is_data(self) -> bool:
        """True when telnetlib3 would hand plain input to the reader unchanged and do
        nothing else with it: the first chunk (its TLS check) is past, no idle timer
        runs, no command is half received, no input decompression, and no printable
        character, CR or LF is a special character. Only a telnet command can change
        any of that, and commands always take telnetlib3's path. False, for good, with
        a telnetlib3 whose internals differ from those of 5.x that this reads."""
        writer = self.writer
        try:
            if (
                writer is None
                or not self._tls_checked
                or self.get_extra_info("timeout")
                or writer.is_oob
                or writer.mccp3_active
                or self._mccp3_decompressor is not None
                or not callable(self._trace_recv)
            ):
                return False
            if not writer.slc_simulated:
                return True
            return not any(
                d.val[0] in _PLAIN_BYTES for d in writer.slctab.values() if d.val != theNULL
            )
        except AttributeError:
            return False


TELNETLIB3_VERSIONS: Final = ("5.0.1", "5.1")
"""The telnetlib3 versions the internals below were read from: at least the first, below
the second (pyproject.toml's pin says the same)."""


@dataclass(frozen=True, slots=True)
class Internal:
    """One telnetlib3 internal this module relies on."""

    owner: Literal["protocol", "reader", "writer", "slc"]
    """Whose: the server protocol (:class:`QuietTelnetServer`), its reader
    (:class:`FlowReader`), its writer (telnetlib3's ``TelnetWriterUnicode``), or an entry
    of the writer's ``slctab``."""
    name: str
    params: tuple[str, ...] | None = None
    """A method: the names of its first parameters, which this module passes; None: data."""
    kind: type | None = None
    """Data: the type its value has; None: any value (None too)."""


TELNETLIB3_INTERNALS: Final = (
    Internal("protocol", "reader", kind=FlowReader),
    Internal("protocol", "writer", kind=TelnetWriterUnicode),
    Internal("protocol", "begin_negotiation", params=()),
    Internal("protocol", "_check_negotiation_timer", params=()),
    Internal("protocol", "_waiter_connected", kind=asyncio.Future),
    Internal("protocol", "_extra", kind=dict),
    Internal("protocol", "get_extra_info", params=("name",)),
    Internal("protocol", "_last_received", kind=datetime.datetime),
    Internal("protocol", "_rx_bytes", kind=int),
    Internal("protocol", "_trace_recv", params=("data",)),
    Internal("protocol", "_tls_checked", kind=bool),
    Internal("protocol", "_mccp3_decompressor"),
    Internal("protocol", "encoding", params=("outgoing", "incoming")),
    Internal("protocol", "on_charset", params=("charset",)),
    Internal("protocol", "on_request_charset", params=()),
    Internal("protocol", "connection_lost", params=("exc",)),
    Internal("reader", "_buffer", kind=bytearray),
    Internal("reader", "set_transport", params=("transport",)),
    Internal("reader", "feed_data", params=("data",)),
    Internal("reader", "read", params=("n",)),
    Internal("writer", "transport"),
    Internal("writer", "is_oob", kind=bool),
    Internal("writer", "mccp3_active", kind=bool),
    Internal("writer", "slc_simulated", kind=bool),
    Internal("writer", "slctab", kind=dict),
    Internal("writer", "encoding_errors", kind=str),
    Internal("writer", "fn_encoding", params=("outgoing",)),
    Internal("writer", "iac", params=("cmd", "opt")),
    Internal("writer", "write", params=("string",)),
    Internal("writer", "drain", params=()),
    Internal("writer", "feed_byte", params=("byte",)),
    Internal("writer", "handle_subnegotiation", params=("buf",)),
    Internal("writer", "handle_send_client_charset", params=("_charsets",)),
    Internal("writer", "remote_option"),
    Internal("writer", "local_option"),
    Internal("writer", "iac_received"),
    Internal("writer", "cmd_received"),
    Internal("writer", "log"),
    Internal("slc", "val", kind=bytes),
)
"""What :class:`FlowReader`, :class:`QuietTelnetServer` and :class:`TelnetOutput` use of
telnetlib3 beyond ``create_server`` and its keywords, checked on live objects by
tests/server/test_telnet_input.py. The reader and writer are also expected to buffer
and pause as asyncio's StreamReader and StreamWriter do (tests/server/test_input_flow.py,
tests/server/test_broadcast.py)."""

READER_FACTORY_KEYWORD: Final = "reader_factory_encoding"
"""The keyword of telnetlib3's server protocol that makes its unicode reader, which
:class:`QuietTelnetServer` sets to :class:`FlowReader`."""
WRITER_FACTORY_KEYWORD: Final = "writer_factory_encoding"
"""The same for its unicode writer, which :class:`QuietTelnetServer` sets to
:class:`GuardedWriter`."""


class LineReader:
    """Clean command lines from a telnetlib3 reader (a :class:`server.doors.output.LineSource`):
    no terminators, ``None`` at EOF.

    A line longer than ``max_len`` is dropped up to its end and reported once as
    :data:`TOO_LONG`, so a client that never sends a newline cannot grow memory.
    :attr:`unread` counts what the client sent that no one has taken yet.
    """

    def __init__(self, reader: Any, *, max_len: int) -> None:
        self._reader = reader
        self._max_len = max_len
        self._buf = ""
        self._lines = LineQueue()
        self._second_half: tuple[str, ...] = ()
        self._discarding = False

    async def readline(self) -> str | None:
        while not self._lines:
            chunk = await self._reader.read(_READ_ALL)
            if not chunk:
                if self._reader.at_eof():
                    return None
                continue  # the first bytes of a UTF-8 character: its rest is to come
            self._feed(chunk)
        return self.queued_line()

    def queued_line(self) -> str | None:
        """The next line if one is already split off (no wait, no task), else None."""
        return self._lines.pop()

    @property
    def unread(self) -> int:
        """Input received and not yet taken as a line: the bytes in telnetlib3's reader,
        the characters of the lines split off and of the unfinished line."""
        return getattr(self._reader, "buffered", 0) + self._lines.chars + len(self._buf)

    async def settle(self) -> int:
        if getattr(self._reader, "buffered", 0):
            self._feed(await self._reader.read(_READ_ALL))  # no wait: it holds some
        return self.unread

    def _feed(self, chunk: str) -> None:
        if self._second_half and chunk[:1] in self._second_half:
            chunk = chunk[1:]  # the second half of a line end split across packets
        self._second_half = ()
        self._buf += chunk
        pos = 0
        for match in LINE_END.finditer(self._buf):
            line = self._buf[pos : match.start()]
            if self._discarding:
                self._discarding = False
                line = TOO_LONG
            elif len(line) > self._max_len:
                line = TOO_LONG
            else:
                line = clean_line(line)
            self._lines.append(line)
            pos = match.end()
            if pos == len(self._buf):
                self._second_half = _SECOND_HALF.get(match.group(), ())
        self._buf = self._buf[pos:]
        if len(self._buf) > self._max_len:
            self._buf = ""
            self._discarding = True


def encode_text(text: str, encoding: str, errors: str) -> bytes:
    """``text`` as telnetlib3's writer puts it on the wire: encoded, each IAC doubled.

    The same steps as ``TelnetWriterUnicode.write`` (``bytes(text, encoding, errors)``)
    followed by ``TelnetWriter._escape_iac``. Text without a byte 255 after encoding (all
    of CLIP: ASCII) is returned as encoded, without a copy.
    """
    data = bytes(text, encoding, errors)
    return data.replace(IAC, IAC + IAC) if IAC in data else data


def _encode_form(text: str, form: tuple[str, str]) -> bytes:
    return encode_text(text, form[0], form[1])


def payload_bytes(payload: Payload, encoding: str, errors: str) -> bytes:
    """``payload``'s wire bytes for a connection using ``encoding``: what telnetlib3's
    write puts on the wire for its text (made once per encoding, then reused)."""
    return payload.encoded((encoding, errors), _encode_form)


class TelnetOutput:
    """Lines and prompts to one connection (a :class:`server.doors.output.Output`); never
    awaits another user's socket.

    :meth:`send` writes at once and checks the transport's write buffer: a client that
    stops reading is disconnected when it passes ``buffer_limit``, so nobody waits for it.
    :meth:`send_payload` writes pre-encoded bytes straight to the transport, with the
    same check. A write that raises closes this connection alone, logged once, and
    never reaches the caller (D210).
    """

    def __init__(self, writer: Any, *, buffer_limit: int) -> None:
        self._writer = writer
        self._limit = buffer_limit
        self.overflowed = False
        self.failed = False
        """A write raised (:meth:`_failed`): the connection was aborted."""
        self.host: str = _peer_host(writer)

    def send(self, lines: Iterable[str]) -> None:
        """Write ``lines``, each ending in CR LF (§1.1)."""
        self._write(crlf_lines(lines))

    def send_payload(self, payload: Payload) -> None:
        """Write a broadcast's lines: the bytes :meth:`send` would write for the same
        lines (encoded in this connection's encoding, IAC escaped), in one transport
        write and without a telnetlib3 write. The encoding is asked for at each call, as
        telnetlib3's write does: a client may negotiate another one at any time."""
        if not payload.text:
            return  # send([]) writes nothing either
        writer = self._writer
        transport = writer.transport
        if transport is None or transport.is_closing():
            return
        try:
            transport.write(
                payload_bytes(payload, writer.fn_encoding(outgoing=True), writer.encoding_errors)
            )
        except Exception as exc:
            self._failed(exc)
            return
        self._check_buffer(transport)

    def prompt(self, text: str) -> None:
        """Write a prompt: no line terminator (§1.2, §1.6)."""
        self._write(text)

    def echo_off(self) -> None:
        """``IAC WILL ECHO``: the client stops echoing (before a password prompt, §1.6)."""
        self._iac(WILL)

    def echo_on(self) -> None:
        """``IAC WONT ECHO``: the client echoes again."""
        self._iac(WONT)

    def _iac(self, command: bytes) -> None:
        if self.closing:
            return
        try:
            self._writer.iac(command, ECHO)
        except Exception as exc:
            self._failed(exc)

    def _write(self, text: str) -> None:
        if self.closing:
            return
        try:
            self._writer.write(text)
        except Exception as exc:
            self._failed(exc)
            return
        self._check_buffer(self._writer.transport)

    def _failed(self, exc: Exception) -> None:
        """A write that raised: this connection alone is closed at once, and the
        failure logged once (D210). No caller sees the error: a broadcast goes on to
        the next recipient."""
        if not self.failed:
            self.failed = True
            log.error("writing to %s failed; connection closed", self.host, exc_info=exc)
        self.abort()

    def _check_buffer(self, transport: Any) -> None:
        """Abort the connection when its unsent output passed the limit."""
        if transport is not None and transport.get_write_buffer_size() > self._limit:
            # abort, not close: close() would wait for a buffer this client never reads,
            # and keep the connection (and its memory) until then.
            self.overflowed = True
            self.abort()

    @property
    def closing(self) -> bool:
        transport = self._writer.transport
        return transport is None or transport.is_closing()

    def peer_gone(self) -> bool:
        return self.closing or socket_gone(self._writer.transport)

    async def drain(self, timeout: float) -> None:
        """Wait (bounded) until the connection's own output has been sent."""
        if self.closing or not self._writer.transport.get_write_buffer_size():
            # Nothing waits to be sent (the usual case): a drain() under a timeout would
            # cost a task per command (docs/performance.md §9).
            return
        try:
            async with asyncio.timeout(timeout):
                await self._writer.drain()
        except (TimeoutError, ConnectionError):
            self.abort()  # its output is not leaving: close() would wait for it forever

    def close(self) -> None:
        """Close after the pending output has been sent."""
        transport = self._writer.transport
        if transport is not None and not transport.is_closing():
            transport.close()

    def abort(self) -> None:
        """Close at once, dropping any output not yet sent."""
        transport = self._writer.transport
        if transport is not None:
            transport.abort()


SOMAXCONN_PATH: Final = "/proc/sys/net/core/somaxconn"


def kernel_somaxconn(path: str = SOMAXCONN_PATH) -> int | None:
    """The kernel's cap on a listen backlog (Linux), or None where it cannot be read."""
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


def effective_backlog(wanted: int, somaxconn: int | None) -> int:
    """The backlog the kernel grants for ``wanted``: at most ``somaxconn``."""
    return wanted if somaxconn is None else min(wanted, somaxconn)


def reader_limit(max_unread_input: int) -> int:
    """telnetlib3's reader ``limit`` for ``[limits] max_unread_input``: the reader pauses
    the socket above twice its limit, so at about that many bytes."""
    return max(max_unread_input // 2, 1)


def _peer_host(writer: Any) -> str:
    """The client's address, or ``-`` when it cannot be known: a client that connected
    and reset at once is gone before its shell starts, and uvloop's transport then
    raises AttributeError for ``peername`` (its socket is None; found by the login
    flood of tests/server/test_login_flood.py, which logged it as a task's traceback)."""
    try:
        peer = writer.get_extra_info("peername")
    except (AttributeError, OSError):
        return replies.UNKNOWN_HOST
    return str(peer[0]) if peer else replies.UNKNOWN_HOST


async def start_server(settings: Settings, shell: TelnetShell) -> Any:
    """Listen on ``settings.host``/``settings.port`` with ``settings.listen_backlog``
    (capped by the kernel); each connection runs ``shell``."""

    async def run_shell(reader: Any, writer: Any) -> None:
        lines = LineReader(reader, max_len=settings.max_line_length)
        output = TelnetOutput(writer, buffer_limit=settings.write_buffer_limit)
        if output.closing:  # reset before its shell started: nothing to serve
            return
        await shell(lines, output)

    class BudgetedServer(QuietTelnetServer):
        input_rate = settings.max_input_rate
        proxy_log = (
            QuietLog(log, proxy.LOG_INTERVAL, time.monotonic) if settings.proxy_protocol else None
        )

    server = await telnetlib3.create_server(
        host=settings.host,
        port=settings.port,
        protocol_factory=BudgetedServer,
        shell=run_shell,
        line_mode=True,
        encoding=ENCODING,
        force_binary=True,
        encoding_errors="replace",
        timeout=0,  # our own idle timeout, with a warning first (server/connection.py)
        connect_maxwait=settings.negotiation_wait,
        limit=reader_limit(settings.max_unread_input),
    )
    set_backlog(server, settings.listen_backlog)
    forget_connected_clients(server)
    return server


class _KeepNone(asyncio.Queue[Any]):
    """A queue that keeps nothing put in it (see :func:`forget_connected_clients`)."""

    def put_nowait(self, item: Any) -> None:
        pass


def forget_connected_clients(server: Any) -> None:
    """Stop ``server`` (telnetlib3's ``Server``) keeping connections that have closed.

    telnetlib3 5.0 puts every connection that finished its negotiation in a queue of up
    to 1,000 for its ``wait_for_client``, which this server never calls: the last
    1,000 connections stayed alive after they closed, each with everything its
    session's frames held (the lines it had queued, its reader's buffer, the error it
    ended with). After a login flood (tests/server/test_login_flood.py,
    benchmarks/login_flood.py) RSS stayed 85 → 300 MB for good (issue 34 item 12);
    the queue here keeps none. A telnetlib3 without that queue is left as it is."""
    if isinstance(getattr(server, "_new_client", None), asyncio.Queue):
        server._new_client = _KeepNone()


def set_backlog(server: Any, backlog: int) -> None:
    """Give ``server``'s listening sockets ``backlog``.

    telnetlib3.create_server passes no backlog to ``loop.create_server``, which then
    listens with asyncio's 100: a burst of connects (every bot reconnecting after a
    restart) overflows it and the kernel drops SYNs, retried only after 1 s, 3 s, ...
    ``listen()`` again on a listening socket sets its backlog (Linux); it is
    called on a duplicate of each socket, which shares the listening socket itself.
    """
    somaxconn = kernel_somaxconn()
    for transport_socket in server.sockets:
        duplicate = transport_socket.dup()
        try:
            duplicate.listen(backlog)
        finally:
            duplicate.close()
    log.info(
        "listen backlog %d (configured %d, kernel somaxconn %s)",
        effective_backlog(backlog, somaxconn),
        backlog,
        "unknown" if somaxconn is None else somaxconn,
    )


def bound_port(server: Any) -> int:
    """The port a started server listens on (for ``port = 0``)."""
    return int(server.sockets[0].getsockname()[1])
