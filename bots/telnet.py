"""The byte level of a FIBS connection: telnet option bytes out, lines and prompts in.

FIBS is a telnet NVT (shared/docs/fibs-protocol.md §1.1): every line ends in CR LF, except
the *prompts* (``login: ``, ``> ``, the password prompts of §1.7), which have no terminator.
The server may send telnet negotiation (``IAC WILL ECHO`` around password prompts, §1.1;
a telnetlib3 server opens with ``IAC DO TTYPE``). :class:`TelnetFilter` removes every
telnet sequence and says how to refuse the options the server asks for; :class:`LineSplitter`
cuts the clean text into lines and recognises the prompts the caller waits for.

Pure code, no I/O: :mod:`bots.connection` feeds it the bytes it reads.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

IAC: Final = 0xFF
DONT: Final = 0xFE
DO: Final = 0xFD
WONT: Final = 0xFC
WILL: Final = 0xFB
SB: Final = 0xFA
SE: Final = 0xF0

_EOL = re.compile(r"\r\n|\r\x00|\n|\r(?=.)", re.DOTALL)
"""CR LF, CR NUL, LF, or a CR followed by something else (a bare CR at the very end of the
buffer may be the first half of a CR LF split across reads, so it waits)."""


class TelnetFilter:
    """Strip telnet commands from a byte stream (RFC 854), keeping state across reads.

    ``IAC IAC`` is a literal 255 byte; ``IAC WILL/WONT/DO/DONT <opt>`` and
    ``IAC SB ... IAC SE`` are removed; any other ``IAC <cmd>`` is removed as two bytes.
    For every ``DO <opt>`` the server sends, :meth:`feed` answers ``WONT <opt>`` once
    (a bot enables no telnet option; a telnetlib3 server then stops waiting for the
    answer and sends its banner at once).
    """

    def __init__(self) -> None:
        self._state = 0
        """0 data, 1 after IAC, 2 after IAC + WILL/WONT/DO/DONT, 3 in SB, 4 in SB after IAC."""
        self._verb = 0
        self._refused: set[int] = set()

    def feed(self, data: bytes) -> tuple[bytes, bytes]:
        """Return ``(clean data, bytes to send back)`` for the next chunk read."""
        out = bytearray()
        reply = bytearray()
        for byte in data:
            state = self._state
            if state == 0:
                if byte == IAC:
                    self._state = 1
                else:
                    out.append(byte)
            elif state == 1:
                if byte == IAC:
                    out.append(IAC)
                    self._state = 0
                elif byte in (WILL, WONT, DO, DONT):
                    self._verb = byte
                    self._state = 2
                elif byte == SB:
                    self._state = 3
                else:
                    self._state = 0
            elif state == 2:
                if self._verb == DO and byte not in self._refused:
                    self._refused.add(byte)
                    reply += bytes((IAC, WONT, byte))
                self._state = 0
            elif state == 3:
                if byte == IAC:
                    self._state = 4
            else:  # state 4: inside SB after IAC
                self._state = 0 if byte == SE else 3
        return bytes(out), bytes(reply)


@dataclass(frozen=True, slots=True)
class Prompt:
    """A prompt the server printed without a line terminator (§1.1), e.g. ``login: ``."""

    text: str


class LineSplitter:
    """Cut decoded text into lines (without terminators) and the prompts a caller expects.

    :param max_line: a longer unterminated tail is returned as a line of its own, so a
        server that never sends a newline cannot grow the buffer without bound.
    """

    def __init__(self, *, max_line: int = 65536) -> None:
        self._buffer = ""
        self._items: collections.deque[str | Prompt] = collections.deque()
        self._max_line = max_line

    def feed(self, text: str) -> None:
        """Add decoded text; complete lines become available through :meth:`pop`."""
        self._buffer += text
        start = 0
        for match in _EOL.finditer(self._buffer):
            self._items.append(self._buffer[start : match.start()])
            start = match.end()
        self._buffer = self._buffer[start:]
        if len(self._buffer) > self._max_line:
            self._items.append(self._buffer)
            self._buffer = ""

    def pop(self, prompts: Iterable[str] = ()) -> str | Prompt | None:
        """The next complete line, else a pending prompt from ``prompts``, else ``None``.

        A prompt is recognised only when the unterminated tail of the buffer *ends with*
        one of ``prompts`` and no complete line is waiting; text before it on the same
        line (a message the server glued to it) is dropped.
        """
        if self._items:
            return self._items.popleft()
        tail = self._buffer.rstrip("\r")
        for prompt in prompts:
            if tail.endswith(prompt):
                self._buffer = ""
                return Prompt(prompt)
        return None

    def flush(self) -> str | None:
        """At end of input: the unterminated tail as a last line, if there is one."""
        tail = self._buffer.rstrip("\r")
        self._buffer = ""
        return tail or None
