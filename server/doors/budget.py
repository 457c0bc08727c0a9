"""The input budget: what one connection's input may cost before it is parsed (D211).

Both doors put it where a connection's bytes arrive, before any parsing: the telnet door
before telnetlib3 (:class:`server.doors.telnet.QuietTelnetServer`), the web door before
aiohttp (:class:`server.doors.web.HttpGate`, which also charges each WebSocket frame,
D264). At most ``[limits] max_input_rate`` a second is parsed, in bursts of one
second's worth and slices of :data:`INPUT_SLICE` per turn of the event loop; the rest
waits with the connection's reading paused, so TCP holds the client back and nothing is
lost. The parser's side sees the connection through a :class:`ReadGate`, so that its
own flow control (pausing when its buffers are full) and the budget's never undo each
other.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable, Iterable
from typing import Any, Final

from server.doors.output import socket_gone

INPUT_SLICE: Final = 4096
"""Most bytes of one connection parsed in one turn of the event loop: about 3.5 ms for
the costliest input (telnet commands byte after byte, docs/performance.md), so nobody
else waits longer for it."""

Parse = Callable[[bytes, float], tuple[int, float]]
"""What parses input: given a slice and what the budget allows (at least the slice's
bytes), it parses a beginning of the slice (all of it for telnet; the web door stops
before a WebSocket frame the allowance does not reach) and returns how many bytes it
took and what they cost (their bytes, and more for the web door's frames)."""


def _parse_nothing(data: bytes, allowance: float) -> tuple[int, float]:
    """The parser of a closed connection's budget: whatever still comes is dropped."""
    return len(data), float(len(data))


class ReadGate(asyncio.Transport):
    """A connection's transport as its parser sees it: everything passes through, but
    reading is paused while the parser asks for it (its own :meth:`pause_reading`) or the
    budget holds bytes back (:meth:`hold`), and resumed only when neither does."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self.transport = transport
        """The connection's own transport."""
        self._parser_paused = False
        self._held = False
        self._paused = False

    def pause_reading(self) -> None:
        self._parser_paused = True
        self._apply()

    def resume_reading(self) -> None:
        self._parser_paused = False
        self._apply()

    def hold(self, held: bool) -> None:
        """The budget holds input back (True) or holds nothing any more (False)."""
        self._held = held
        self._apply()

    @property
    def paused(self) -> bool:
        """Reading is paused now (by the parser or the budget)."""
        return self._paused

    def _apply(self) -> None:
        paused = self._parser_paused or self._held
        if paused == self._paused or self.transport.is_closing():
            return
        self._paused = paused
        if paused:
            self.transport.pause_reading()
        else:
            self.transport.resume_reading()

    # -- the rest of asyncio.Transport, passed through --------------------------------

    def is_reading(self) -> bool:
        return self.transport.is_reading()

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.transport.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        self.transport.writelines(list_of_data)

    def write_eof(self) -> None:
        self.transport.write_eof()

    def can_write_eof(self) -> bool:
        return self.transport.can_write_eof()

    def get_write_buffer_size(self) -> int:
        return self.transport.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self.transport.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self.transport.set_write_buffer_limits(high, low)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self.transport.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.transport.close()

    def abort(self) -> None:
        self.transport.abort()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self.transport.get_protocol()


class InputBudget:
    """At most ``rate`` bytes a second of one connection's input reach ``parse``; 0: all
    of it as it comes.

    A token bucket of one second's worth: each slice parsed costs what ``parse`` says
    (its bytes at least), which may leave the bucket owing by one frame's cost at most;
    the next slice waits until it is paid.
    """

    def __init__(self, rate: int, parse: Parse) -> None:
        self.rate = rate
        self._parse = parse
        self._held = bytearray()
        self._tokens = float(rate)
        self._stamp = 0.0
        self._gate: ReadGate | None = None
        self._pump_handle: asyncio.Handle | None = None

    def gate(self, transport: asyncio.Transport) -> ReadGate:
        """The connection's transport as the parser must see it (:class:`ReadGate`); the
        budget's first second starts now."""
        self._gate = ReadGate(transport)
        with contextlib.suppress(RuntimeError):  # no loop: a test's hand-made protocol
            self._stamp = asyncio.get_running_loop().time()
        return self._gate

    @property
    def held(self) -> int:
        """Bytes received and not parsed yet."""
        return len(self._held)

    def feed(self, data: bytes) -> None:
        """Input within the budget is parsed now; the rest is held back, reading paused,
        and parsed as the budget allows."""
        rate = self.rate
        if not rate or self._held or self._pump_handle is not None or len(data) > INPUT_SLICE:
            self._queue(data, first=False)
            return
        # Nothing is held and the input fits a slice (a command line, nearly always):
        # parsed at once if the bucket holds it, without the copy and the checks that
        # held input needs (docs/performance.md §21).
        tokens = self._refill(asyncio.get_running_loop().time())
        if tokens < len(data):
            self._queue(data, first=False)
            return
        used, cost = self._parse(data, tokens)
        self._tokens = tokens - cost
        if used < len(data):
            self._queue(data[used:], first=False)

    def put_back(self, data: bytes) -> None:
        """Bytes the parser took earlier and kept (the web door's, while a request was
        answered): parsed again before anything received since, within the budget."""
        self._queue(data, first=True)

    def _queue(self, data: bytes, *, first: bool) -> None:
        if not self.rate:
            self._parse(data, math.inf)
            return
        if first:
            self._held[:0] = data
        else:
            self._held += data
        if self._pump_handle is None:
            self._pump()

    def close(self) -> None:
        """The connection is gone: nothing more is parsed, and the budget lets go of its
        parser and gate, which hold the connection's protocol: a budget kept by that
        protocol would otherwise make a cycle of them, freed only by the collector's
        next full collection (rare by design, :data:`server.__main__.GC_THRESHOLDS`),
        not when the connection goes (D422)."""
        if self._pump_handle is not None:
            self._pump_handle.cancel()
            self._pump_handle = None
        self._held.clear()
        self._parse = _parse_nothing
        self._gate = None

    def _refill(self, now: float) -> float:
        """The bucket refilled for the time since the last refill (one second's worth at
        most): the tokens there are now."""
        self._tokens = min(float(self.rate), self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        return self._tokens

    def _closing(self) -> bool:
        return self._gate is not None and self._gate.is_closing()

    def _pump(self) -> None:
        """Parse what the budget allows of the held input (one slice at most), then come
        back when more is due; reading stays paused while anything is held."""
        self._pump_handle = None
        held = self._held
        if not held or self._closing():
            held.clear()
            return
        gate = self._gate
        if gate is not None and gate.paused and socket_gone(gate.transport):
            # The client reset while its reading was paused: the transport would see it
            # only once the input held here was parsed, at the budget's pace (minutes
            # for megabytes), the connection and all it holds kept until then (D332).
            held.clear()
            gate.transport.abort()
            return
        rate = self.rate
        loop = asyncio.get_running_loop()
        self._refill(loop.time())
        size = min(len(held), INPUT_SLICE, int(self._tokens))
        if size > 0:
            used, cost = self._parse(bytes(held[:size]), self._tokens)
            del held[:used]
            self._tokens -= cost
        if held and not self._closing():
            if gate is not None:
                gate.hold(True)
            wanted = min(len(held), INPUT_SLICE)
            delay = max(0.0, (wanted - self._tokens) / rate)
            self._pump_handle = (
                loop.call_later(delay, self._pump) if delay else loop.call_soon(self._pump)
            )
        elif gate is not None:
            gate.hold(False)
