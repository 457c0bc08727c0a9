"""The transport seam: what a connection must offer the server, whatever carries it.

The server reads command lines from a :class:`LineSource` and writes lines and prompts
to an :class:`Output`; neither knows of telnet. :mod:`server.doors.telnet` implements both over
telnetlib3 (:class:`~server.doors.telnet.LineReader`, :class:`~server.doors.telnet.TelnetOutput`); a
WebSocket connection implements the same two and hands them to the same :data:`Shell`
(:mod:`server.service` runs one shell per connection).

Text is FIBS text (§1.1): each line the server writes ends in CR LF, a prompt has no line
end, and it is the transport that turns that text into bytes (its encoding, its framing,
its escaping). A broadcast's lines are rendered once into a :class:`Payload`, which keeps
the bytes of each encoding in use so that thousands of recipients share them.
"""

from __future__ import annotations

import re
import select
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import Any, Final, Protocol, TypeVar

from protocol.parser import ScrubbedLine

TOO_LONG: Final = "\x00<too long>\x00"
"""What :meth:`LineSource.readline` returns for a line over the cap (its text is dropped).
No client can send it: the NUL characters are removed from every line read."""

_Form = TypeVar("_Form", bound=Hashable)


def crlf_lines(lines: Iterable[str]) -> str:
    """``lines`` joined, each ending in CR LF (§1.1); empty for no lines."""
    items = lines if isinstance(lines, (list, tuple)) else list(lines)
    return "\r\n".join(items) + "\r\n" if items else ""


class Payload:
    """Lines for many connections: joined once, encoded once per form of bytes in use.

    :attr:`text` is the lines as one text, each ending in CR LF. A transport asks
    :meth:`encoded` for its bytes under a key naming its form (for telnet the
    connection's encoding and error handling, which a client may negotiate): the first
    recipient of a form pays for the encoding, every other one gets the same bytes.
    """

    __slots__ = ("_encoded", "text")

    def __init__(self, lines: Iterable[str]) -> None:
        self.text: Final = crlf_lines(lines)
        """The lines, each ending in CR LF (§1.1), as :meth:`Output.send` joins them."""
        self._encoded: dict[Hashable, bytes] = {}

    def __bool__(self) -> bool:
        return bool(self.text)

    def encoded(self, form: _Form, encode: Callable[[str, _Form], bytes]) -> bytes:
        """The bytes of :attr:`text` in ``form``: ``encode(text, form)`` the first time,
        the same bytes object after that. ``form`` must tell apart everything that
        changes the bytes, the transport included (a tuple starting with a name that is
        the transport's own is safest)."""
        data = self._encoded.get(form)
        if data is None:
            data = self._encoded[form] = encode(self.text, form)
        return data


class Output(Protocol):
    """Where a session's text goes: one connection's way out.

    The contract every transport keeps (:class:`server.doors.telnet.TelnetOutput` is the
    reference):

    * No method but :meth:`drain` awaits anything: a write is queued at once and never
      waits for this client, so a broadcast never waits for its slowest recipient.
    * Text is str; the transport encodes it (telnet: the negotiated encoding, UTF-8 by
      default, errors replaced, IAC doubled). The bytes of :meth:`send` and of
      :meth:`send_payload` for the same lines are the same.
    * Once :attr:`closing` is true every write is silently dropped.
    * Buffer limit: when the output a client has not taken passes the transport's limit
      (``[limits] write_buffer_limit``), the transport aborts the connection at once
      (:meth:`abort`): a client that stops reading costs neither memory nor time.
    """

    host: str
    """The client's address as shown to users (``who``, ``where``, CLIP 5), ``-`` when
    unknown."""

    def send(self, lines: Iterable[str]) -> None:
        """Write ``lines``, each ending in CR LF (§1.1); nothing for no lines."""
        ...

    def send_payload(self, payload: Payload) -> None:
        """Write a broadcast's lines: the same bytes :meth:`send` writes for
        ``payload``'s lines, taken from ``payload``'s cache (:meth:`Payload.encoded`)."""
        ...

    def prompt(self, text: str) -> None:
        """Write ``text`` with no line end (``login: ``, ``> ``, §1.2 and §1.6)."""
        ...

    def echo_off(self) -> None:
        """Ask the client not to echo what the user types next (before a password
        prompt, §1.6; telnet: ``IAC WILL ECHO``). A transport without echo control
        does nothing."""
        ...

    def echo_on(self) -> None:
        """Undo :meth:`echo_off` (telnet: ``IAC WONT ECHO``)."""
        ...

    async def drain(self, timeout: float) -> None:
        """Wait until this connection's own output has left, at most ``timeout``
        seconds; abort the connection when it has not by then (it is not reading).
        Returns at once when nothing waits to be sent."""
        ...

    def close(self) -> None:
        """Close after the output already written has been sent (the polite end)."""
        ...

    def abort(self) -> None:
        """Close at once, dropping any output not yet sent (a client that does not read
        must not hold a close up)."""
        ...

    @property
    def closing(self) -> bool:
        """True once the connection is closing or closed, by either side."""
        ...

    def peer_gone(self) -> bool:
        """True when the client has reset the connection (or closed both ways) though
        the connection may not know yet: while its reading is paused (the input budget,
        a full line queue) a reset waits unseen behind the input not read. Asks the
        socket (a ``poll``): for rare questions, such as whether a password check is
        still wanted (D330), not for every write."""
        ...


_GONE: Final = select.POLLHUP | select.POLLERR
"""A socket's poll events once its peer has reset it, or both directions are shut. Not
POLLRDHUP: a client may shut its sending side and still wait for the answer."""


def socket_gone(transport: Any) -> bool:
    """Whether ``transport``'s socket has been reset or shut both ways by its peer (see
    :meth:`Output.peer_gone`); False when there is no socket to ask."""
    if transport is None:
        return True
    try:
        sock = transport.get_extra_info("socket")
    except AttributeError:  # uvloop's, once its socket is gone (server/doors/telnet.py)
        return True
    if sock is None:
        return transport.is_closing()  # type: ignore[no-any-return]
    try:
        poller = select.poll()
        poller.register(sock.fileno(), _GONE)
        return bool(poller.poll(0))
    except (OSError, ValueError):  # closed meanwhile
        return True


LINE_END: Final = re.compile(r"\r\n|\r\x00|\n\r|\r|\n")
"""One line end, on every door: CR LF (telnet, most clients), CR NUL (telnet, RFC 854),
LF CR (the BaldLies client, D121), or a bare CR or LF. LF CR is one end, not an end and
an empty line."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""Control characters other than tab: removed from input lines, so nothing a client types
reaches another user's terminal as an escape sequence (D75)."""


def clean_line(line: str) -> str:
    """``line`` without its control characters (D75), on every door; a
    :class:`~protocol.parser.ScrubbedLine` when it had any, so that a name typed with one
    is refused, not read as the rest (D265)."""
    text, removed = _CONTROL.subn("", line)
    return ScrubbedLine(text) if removed else text


class LineSource(Protocol):
    """Where a session's command lines come from: one connection's way in.

    Lines come without their line ends (any of CR LF, LF CR, CR NUL, bare CR or LF ends
    a line), with control characters other than tab removed (a line that had any as a
    :class:`protocol.parser.ScrubbedLine`, D265). A line longer than the
    configured cap (``[limits] max_line_length``) is dropped up to its end and reported
    once as :data:`TOO_LONG`. The transport holds back a client that sends faster than
    lines are taken (telnet: the socket is paused) and counts what waits in
    :attr:`unread`, which :mod:`server.connection` caps.
    """

    async def readline(self) -> str | None:
        """The next line, waiting for it; None once the client has closed its side."""
        ...

    def queued_line(self) -> str | None:
        """The next line if one has already been received whole (no wait), else None."""
        ...

    @property
    def unread(self) -> int:
        """How much input (bytes or characters) was received and not yet taken."""
        ...

    async def settle(self) -> int:
        """:attr:`unread` once everything received so far has gone through the line
        splitting, without waiting for more: an over-long line is dropped as far as it
        has come, so that what counts against ``[limits] max_unread_input`` is only
        what is kept (a long line that came while the connection was busy is no flood)."""
        ...


class LineQueue:
    """The lines a transport has split off and no one has taken yet, with their size
    (characters, one more per line for its end) for a :attr:`LineSource.unread`."""

    def __init__(self) -> None:
        self._lines: deque[str] = deque()
        self.chars = 0

    def __bool__(self) -> bool:
        return bool(self._lines)

    def append(self, line: str) -> None:
        self._lines.append(line)
        self.chars += len(line) + 1

    def pop(self) -> str | None:
        """The oldest line, or None when there is none."""
        if not self._lines:
            return None
        line = self._lines.popleft()
        self.chars -= len(line) + 1
        return line


Shell = Callable[[LineSource, Output], Awaitable[None]]
"""What serves one connection from connect to close (:func:`server.connection.serve_connection`
with the App bound); a transport runs it once per connection it accepts."""
