"""The plain-input shortcut of :class:`server.doors.telnet.QuietTelnetServer`: the reader gets
exactly what telnetlib3's own path gives it, whatever the bytes and however they are
split into chunks, and the shortcut is taken for plain text (docs/performance.md §10).

And the guard of every fast path of server/doors/telnet.py: the installed telnetlib3 is one of
the pinned versions and has each internal they use (:data:`TELNETLIB3_INTERNALS`)."""

from __future__ import annotations

import asyncio
import inspect
import random
import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from telnetlib3.server_base import BaseServer

from server.doors.telnet import (
    READER_FACTORY_KEYWORD,
    TELNETLIB3_INTERNALS,
    TELNETLIB3_VERSIONS,
    QuietTelnetServer,
)

STREAM = (
    b"login\r\nalice\r\ntell bob hi there\r\n"
    b"a\x03b\x7fc\r\n"  # special characters of telnetlib3's simulated table
    b"x\xff\xffy\r\n"  # an escaped IAC in the data
    b"\xff\xfb\x01after a command\r\n"  # IAC WILL ECHO between lines
    b"\xff\xfa\x18\x00VT100\xff\xf0typed after a subnegotiation\r\n"
    b"caf\xc3\xa9 \xe2\x82\xac\r\n"  # UTF-8
    b"move 24-18 13-11\rroll\n\r\nboard\r\x00"
    b"kibitz ~!@#$%^&*()_+{}|:<>?`-=[]\\;',./\r\n"
)


class _Transport(asyncio.Transport):
    """Records what the protocol writes; enough of a transport for telnetlib3."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 40000), "sockname": ("127.0.0.1", 4321)}.get(
            name, default
        )

    def write(self, data: Any) -> None:
        self.written += data

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class _TelnetlibPath(QuietTelnetServer):
    """The server protocol with the shortcut off: every chunk takes telnetlib3's path."""

    def _plain_input_is_data(self) -> bool:
        return False


async def _feed(protocol_class: type[QuietTelnetServer], chunks: list[bytes]) -> tuple[Any, ...]:
    """What the reader holds, the byte count and the replies after ``chunks``."""
    protocol = protocol_class(
        encoding="utf8",
        force_binary=True,
        encoding_errors="replace",
        timeout=0,
        connect_maxwait=0.01,
        line_mode=True,
    )
    transport = _Transport()
    protocol.connection_made(transport)
    await protocol._waiter_connected  # negotiation over, as before any command
    for chunk in chunks:
        protocol.data_received(chunk)
    reader = protocol.reader
    assert reader is not None
    protocol.eof_received()
    text = await asyncio.wait_for(reader.read(1 << 20), 1)
    result = (text, protocol.rx_bytes, bytes(transport.written))
    protocol.connection_lost(None)
    return result


def _split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 40)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@pytest.mark.parametrize("seed", range(30))
async def test_the_reader_gets_what_telnetlib3_gives_it(seed: int) -> None:
    chunks = _split(STREAM, random.Random(seed))
    assert await _feed(QuietTelnetServer, chunks) == await _feed(_TelnetlibPath, chunks)


async def test_plain_lines_skip_telnetlib3s_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """One chunk per line, as clients send: the plain lines skip telnetlib3's path
    (except the first chunk: its TLS check), every other line takes it."""
    chunks = [line + b"\n" for line in STREAM.split(b"\n")[:-1]]
    expected = await _feed(_TelnetlibPath, chunks)
    slow: list[bytes] = []
    original = BaseServer.data_received

    def counting(self: BaseServer, data: bytes) -> None:
        slow.append(data)
        original(self, data)

    monkeypatch.setattr(BaseServer, "data_received", counting)
    assert await _feed(QuietTelnetServer, chunks) == expected
    plain = [c for c in chunks if all(32 <= b < 127 or b in b"\r\n" for b in c)]
    assert slow[0] == chunks[0]
    assert all(c in slow for c in chunks if c not in plain)
    assert [c for c in plain[1:] if c not in slow] == plain[1:]


async def test_a_telnetlib3_without_those_internals_keeps_its_own_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    protocol = QuietTelnetServer(encoding="utf8", timeout=0, connect_maxwait=0.01)
    protocol.connection_made(_Transport())
    await protocol._waiter_connected
    protocol.data_received(b"first\r\n")
    assert protocol._plain_input_is_data()
    # As if a later telnetlib3 had renamed it.
    owner = next(c for c in type(protocol).__mro__ if "_mccp3_decompressor" in vars(c))
    monkeypatch.delattr(owner, "_mccp3_decompressor")
    vars(protocol).pop("_mccp3_decompressor", None)
    assert not protocol._plain_input_is_data()
    protocol.connection_lost(None)


async def test_a_connection_lost_before_its_negotiation_began_logs_nothing() -> None:
    """The end of file read in the turn of the loop that made the connection (uvloop
    does so) loses the connection before telnetlib3's scheduled negotiation check runs:
    the check finds the negotiation over (its future cancelled) and leaves it."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        protocol = QuietTelnetServer(encoding="utf8", timeout=0, connect_maxwait=0.01)
        protocol.connection_made(_Transport())
        protocol.eof_received()  # telnetlib3: connection_lost(None) at once
        for _ in range(5):
            await asyncio.sleep(0.01)
        assert protocol._waiter_connected.cancelled()
        assert errors == []
    finally:
        loop.set_exception_handler(None)


# -- the guard: the telnetlib3 internals server/doors/telnet.py relies on ------------------------


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def test_telnetlib3_is_pinned_to_the_versions_whose_internals_are_used() -> None:
    low, high = TELNETLIB3_VERSIONS
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    pins = [d for d in pyproject["project"]["dependencies"] if d.startswith("telnetlib3")]
    assert pins == [f"telnetlib3>={low},<{high}"]
    installed = _version(metadata.version("telnetlib3"))
    assert _version(low) <= installed < _version(high)


async def test_every_telnetlib3_internal_used_is_there() -> None:
    """Each internal of :data:`TELNETLIB3_INTERNALS`, on a live connection: data of its
    type, methods that take the parameters passed to them."""
    protocol = QuietTelnetServer(
        encoding="utf8",
        force_binary=True,
        encoding_errors="replace",
        timeout=0,
        connect_maxwait=0.01,
        line_mode=True,
    )
    protocol.connection_made(_Transport())
    await protocol._waiter_connected
    protocol.data_received(b"first\r\n")
    writer = protocol.writer
    assert writer is not None and writer.slctab
    owners = {
        "protocol": protocol,
        "reader": protocol.reader,
        "writer": writer,
        "slc": next(iter(writer.slctab.values())),
    }
    wrong: list[str] = []
    for internal in TELNETLIB3_INTERNALS:
        where = f"{internal.owner}.{internal.name}"
        try:
            value = _telnetlib3_attribute(owners[internal.owner], internal.name)
        except AttributeError:
            wrong.append(f"{where} is missing")
            continue
        if internal.params is None:
            if internal.kind is not None and not isinstance(value, internal.kind):
                wrong.append(f"{where} is a {type(value).__name__}, not {internal.kind.__name__}")
        elif not callable(value):
            wrong.append(f"{where} is not a method")
        else:
            names = tuple(inspect.signature(value).parameters)[: len(internal.params)]
            if names != internal.params:
                wrong.append(f"{where} takes {names}, not {internal.params}")
    protocol.connection_lost(None)
    assert not wrong, "; ".join(wrong)
    assert READER_FACTORY_KEYWORD in inspect.signature(BaseServer).parameters


def _telnetlib3_attribute(owner: Any, name: str) -> Any:
    """``owner.name`` as telnetlib3 defines it: a method that server/doors/telnet.py overrides
    is checked in the telnetlib3 class it overrides (bound to ``owner``)."""
    for cls in type(owner).__mro__:
        found = vars(cls).get(name)
        if cls.__module__.startswith("telnetlib3.") and inspect.isfunction(found):
            return found.__get__(owner)
    return getattr(owner, name)


def test_the_guard_notices_a_change(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: a renamed parameter is seen."""
    from telnetlib3.stream_reader import TelnetReader

    def feed_data(self: Any, chunk: bytes) -> None:
        pass

    monkeypatch.setattr(TelnetReader, "feed_data", feed_data)
    with pytest.raises(AssertionError, match="feed_data takes"):
        asyncio.run(test_every_telnetlib3_internal_used_is_there())
