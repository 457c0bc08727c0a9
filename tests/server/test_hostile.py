"""Hostile input (issue 18 items 2 and 6): bytes, lines and telnet negotiation that no
client sends, fuzzed with hypothesis at the byte and line layer, and through a real
socket while a bystander is answered.

Every subnegotiation of every option telnetlib3 knows (``telnetlib3.telopt``), agreed on
first or not, leaves the connection readable and writable in UTF-8, raises nothing out
of the protocol, and logs nothing at WARNING or above (D210). A client's input is
parsed at most ``[limits] max_input_rate`` bytes a second; the rest waits with its
socket paused (D211).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from telnetlib3 import telopt

from protocol import replies
from server.app import App
from server.config import Settings
from server.doors.output import TOO_LONG
from server.doors.telnet import LineReader, QuietTelnetServer, TelnetOutput

from .conftest import Connect
from .sessions import login_all, online
from .test_abuse import answers, with_settings
from .test_telnet_input import _Transport


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The test's changes (:func:`with_settings`: indirect parametrization)."""
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(**changes)


IAC, SB, SE = b"\xff", b"\xfa", b"\xf0"
NEGOTIATIONS = [telopt.WILL, telopt.WONT, telopt.DO, telopt.DONT]
OPTIONS = sorted(
    {
        value
        for key, value in vars(telopt).items()
        if key.isupper() and isinstance(value, bytes) and len(value) == 1
    }
)
"""Every one-byte constant telnetlib3's telopt names: all the options it knows (and its
commands, which make fine hostile option bytes too)."""

_payload = st.binary(max_size=64)
_command = st.one_of(
    st.tuples(st.just(IAC), st.sampled_from(NEGOTIATIONS), st.sampled_from(OPTIONS)).map(b"".join),
    st.builds(
        lambda opt, body, agreed: (
            (IAC + telopt.WILL + opt + IAC + telopt.DO + opt if agreed else b"")
            + IAC
            + SB
            + opt
            + body
            + IAC
            + SE
        ),
        st.sampled_from(OPTIONS),
        _payload,
        st.booleans(),
    ),
    st.sampled_from(OPTIONS).map(lambda opt: IAC + opt),
)
"""A telnet command: a negotiation, a subnegotiation (after agreeing on its option, or
not), or a two-byte command."""
_text = st.one_of(
    st.binary(max_size=200),
    st.text(max_size=80).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\r", b"\n", b"\r\n", b"\n\r", b"\r\x00", b"\x00", b"\xff\xff"]),
)
_stream = st.lists(st.one_of(_command, _text), max_size=20).map(b"".join)


async def _through_the_layers(data: bytes, cuts: list[int]) -> list[str]:
    """Feed ``data`` (cut at ``cuts``) to the server's protocol, read its lines, then write
    a line back; return the lines."""
    protocol = QuietTelnetServer(
        encoding="utf8",
        force_binary=True,
        encoding_errors="replace",
        timeout=0,
        connect_maxwait=0.01,
        line_mode=True,
    )
    transport = _Transport()
    protocol.connection_made(transport)
    await protocol._waiter_connected
    bounds = [0, *sorted(c % (len(data) + 1) for c in cuts), len(data)]
    for start, end in itertools.pairwise(bounds):
        protocol.data_received(data[start:end])
    # Ends any subnegotiation left open (its content is never data, up to telnetlib3's
    # cap of 1 MiB) and any command left half sent.
    protocol.data_received(IAC + SE + IAC + SE + b"\r\nafter\r\n")
    lines = LineReader(protocol.reader, max_len=1024)
    got: list[str] = []
    while (line := await asyncio.wait_for(lines.readline(), 1)) != "after":
        assert line is not None
        got.append(line)
    output = TelnetOutput(protocol.writer, buffer_limit=1 << 20)
    before = len(transport.written)
    output.send(["12 alice caf\u00e9"])
    if not transport.closed:  # DO LOGOUT closes the connection, as it asks
        assert bytes(transport.written[before:]) == "12 alice caf\u00e9\r\n".encode()
    assert protocol.encoding(outgoing=True) == "utf8" and not output.failed
    protocol.connection_lost(None)
    return got


@hypothesis_settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],  # no libcst explain
)
@given(data=_stream, cuts=st.lists(st.integers(min_value=0), max_size=5))
def test_any_bytes_leave_the_connection_readable_and_writable(
    data: bytes, cuts: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    caplog.clear()
    lines = asyncio.run(_through_the_layers(data, cuts))
    assert all(line == TOO_LONG or "\x00" not in line for line in lines)
    assert not _loud(caplog.records)


def _loud(records: list[logging.LogRecord]) -> list[str]:
    """What a hostile client must never cause in the log: an ERROR, a traceback (or
    telnetlib3's line-by-line one), a WARNING of the server's own. telnetlib3's warnings
    about a malformed negotiation are below the level it logs at (server/__main__.py)."""
    return [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.ERROR
        or r.exc_info
        or r.getMessage().lstrip().startswith(("File ", "Traceback"))
        or (r.levelno >= logging.WARNING and not r.name.startswith("telnetlib3"))
    ]


def hostile_inputs(rng: random.Random, count: int) -> list[bytes]:
    """``count`` hostile inputs: random bytes, negotiations and subnegotiations of every
    option (agreed on first or not), control characters, over-long lines."""
    out: list[bytes] = []
    options = [opt for opt in OPTIONS if opt != telopt.LOGOUT]  # DO LOGOUT: a polite quit
    for _ in range(count):
        opt = rng.choice(options)
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        kind = rng.randrange(6)
        if kind == 0:
            out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
        elif kind == 1:
            out.append(IAC + rng.choice(NEGOTIATIONS) + opt)
        elif kind == 2:
            out.append(IAC + telopt.WILL + opt + IAC + SB + opt + body + IAC + SE)
        elif kind == 3:
            out.append(IAC + SB + opt + body + IAC + SE)
        elif kind == 4:
            out.append(bytes(rng.randrange(32) for _ in range(rng.randrange(1, 50))) + b"\r\n")
        else:
            out.append(b"x" * rng.randrange(1000, 5000) + b"\r\n")
    return out


@with_settings(
    commands_per_second=10_000.0,
    command_burst=10_000,
    max_input_rate=1 << 20,
    max_unread_input=1 << 24,
)
async def test_hostile_inputs_through_a_socket(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """2,000 hostile inputs from a logged-in client and a guest: the bystander is
    answered throughout, nothing loud is logged, and the attacker's connection still
    carries its own commands and a tell to it in UTF-8."""
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    guest = await connect()
    rng = random.Random(18)
    inputs = hostile_inputs(rng, 2_000)
    for start in range(0, len(inputs), 200):
        batch = b"".join(inputs[start : start + 200])
        await mallory.send_raw(batch)
        await guest.send_raw(batch)
        await answers(alice)
    await mallory.send_raw(IAC + SE + IAC + SE + b"\r\n\r\ntell alice still here\r\n")
    assert await alice.expect_prefix("12 mallory", 10) == "12 mallory still here"
    await alice.send("tell mallory still there?")
    received = mallory.buffer  # its connection is still written to, in UTF-8
    while b"12 alice still there?\r\n" not in received:
        chunk = await asyncio.wait_for(mallory.reader.read(1 << 20), 10)
        assert chunk, "mallory's connection was closed"
        received += chunk
    assert online(app, "mallory").output._writer.fn_encoding(outgoing=True) == "utf8"  # type: ignore[attr-defined]
    assert not _loud(caplog.get_records("call"))


@with_settings(max_input_rate=16_384, max_unread_input=1 << 20)
async def test_input_over_the_budget_waits_with_the_socket_paused(
    connect: Connect, app: App
) -> None:
    """48 KiB at once, three seconds of mallory's budget: the server parses one
    second's worth, pauses mallory's socket, and takes the rest as the budget allows;
    alice is answered meanwhile, and mallory's command after the flood comes through,
    in order."""
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    transport: Any = online(app, "mallory").output._writer.transport  # type: ignore[attr-defined]
    protocol: Any = transport.get_protocol()
    await mallory.send_raw(b"\x01" * 49_152 + b"\r\ntell alice after the flood\r\n")
    deadline = time.monotonic() + 2.0
    while transport.is_reading() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert not transport.is_reading(), "the socket was never paused"
    assert protocol._budget.held, "nothing was held back"
    await answers(alice)
    assert await alice.expect_prefix("12 mallory", 10) == "12 mallory after the flood"
    assert not protocol._budget.held and transport.is_reading()
    assert await mallory.line() == replies.LINE_TOO_LONG  # the 48 KiB line, dropped


@with_settings(
    commands_per_second=0.5, command_burst=3, max_unread_input=4096, max_input_rate=16_384
)
async def test_the_unread_input_bound_holds_under_the_budget(connect: Connect, app: App) -> None:
    """With the input budget in front, a client whose commands wait too long is still
    disconnected with the line saying why (D120, D211), and alice is answered meanwhile."""
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    heard = asyncio.create_task(_lines_until_closed(mallory))  # read before the close
    flood = asyncio.create_task(mallory.send_raw(b"time\r\n" * 200_000))
    try:
        await answers(alice)
        assert replies.TOO_MUCH_INPUT in await heard
    finally:
        flood.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await flood


async def _lines_until_closed(client: Any) -> list[str]:
    lines: list[str] = []
    with contextlib.suppress(ConnectionError):
        while True:
            lines.append(await client.line(10))
    return lines
