"""Broadcasts rendered and encoded once (docs/performance.md §3): the bytes every client
receives are the ones it got when each recipient had its own telnetlib3 writes.

* :class:`server.doors.output.Payload` and :meth:`TelnetOutput.send_payload` against
  telnetlib3's own encoding and IAC escaping, on real connections in two encodings;
* a login and a logout seen by CLIP and telnet users with ``notify`` on and off, and by
  a ``waitfor`` user, byte for byte;
* the cached CLIP 5 line (:meth:`Session.who_line`) after every change of a field it
  shows, on a bare session and through the commands that change them over a socket.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from telnetlib3.stream_writer import TelnetWriter

from backgammon.dice import SeededDice
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.doors.output import Payload
from server.doors.telnet import LineReader, TelnetOutput, bound_port, payload_bytes, start_server
from server.world import registry
from server.world.session import Session

from .conftest import IAC_WONT_TTYPE, TIMEOUT, Connect, ScriptedClient, clip_login, make_user
from .match_driver import Player, play_out
from .sessions import (
    RecordingOutput,
    command,
    login_all,
    online,
    telnet_login,
    who_update_seen,
)

IDLE = 8
"""The idle field's index in a CLIP 5 line split at spaces (it changes every second)."""


# -- Payload and TelnetOutput: the same bytes as telnetlib3's write ------------------------


@given(
    lines=st.lists(st.text(), max_size=4),
    encoding=st.sampled_from(["utf8", "latin-1", "cp437", "ascii"]),
)
def test_payload_bytes_are_telnetlib3s(lines: list[str], encoding: str) -> None:
    """Encoded with the writer's errors handler, then every IAC doubled, as
    ``TelnetWriterUnicode.write`` does."""
    text = "".join(f"{line}\r\n" for line in lines)
    wanted = TelnetWriter._escape_iac(bytes(text, encoding, "replace"))
    payload = Payload(lines)
    assert payload.text == text
    assert payload_bytes(payload, encoding, "replace") == wanted
    assert payload_bytes(payload, encoding, "replace") is payload_bytes(
        payload, encoding, "replace"
    )


def test_a_payload_with_byte_255_is_escaped() -> None:
    assert payload_bytes(Payload(["\xff"]), "latin-1", "replace") == b"\xff\xff\r\n"
    assert payload_bytes(Payload(["\xff"]), "utf8", "replace") == b"\xc3\xbf\r\n"  # no 255 in UTF-8
    assert payload_bytes(Payload(["5 alice - -"]), "utf8", "replace") == b"5 alice - -\r\n"
    assert not Payload([]) and Payload([""])


async def _raw_until(reader: asyncio.StreamReader, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = await asyncio.wait_for(reader.read(65536), 5)
        assert chunk, "the server closed the connection"
        data += chunk
    return data


async def test_send_payload_writes_what_send_writes() -> None:
    """On real connections, one in UTF-8 and one in Latin-1 (as a client may negotiate):
    ``send`` and ``send_payload`` of the same lines put the same bytes on the wire, and
    one Payload serves both connections in their own encodings."""
    outputs: list[TelnetOutput] = []
    both = asyncio.Event()
    done = asyncio.Event()

    async def shell(lines: LineReader, output: TelnetOutput) -> None:
        outputs.append(output)
        if len(outputs) == 2:
            both.set()
        await done.wait()

    server = await start_server(Settings(host="127.0.0.1", port=0, negotiation_wait=0.0), shell)
    clients = []
    try:
        for _ in range(2):
            reader, writer = await asyncio.open_connection("127.0.0.1", bound_port(server))
            writer.write(IAC_WONT_TTYPE)
            clients.append((reader, writer))
        await asyncio.wait_for(both.wait(), 5)
        ports = [writer.get_extra_info("sockname")[1] for _, writer in clients]
        outputs.sort(key=lambda o: ports.index(o._writer.get_extra_info("peername")[1]))
        outputs[1]._writer.fn_encoding = lambda **kw: "latin-1"
        lines = ["7 dave dave logs in.", "héllo \xff wörld", "", "6"]
        payload = Payload(lines)
        expected = []
        for output, encoding in zip(outputs, ("utf8", "latin-1"), strict=True):
            output.send(lines)
            output.send_payload(payload)
            output.send_payload(Payload([]))  # nothing, like send([])
            expected.append(
                TelnetWriter._escape_iac("".join(f"{x}\r\n" for x in lines).encode(encoding))
            )
        for (reader, _), wanted in zip(clients, expected, strict=True):
            got = await _raw_until(reader, 2 * len(wanted))
            assert got == wanted + wanted
        assert b"\xff\xff" in expected[1] and b"\xff" not in expected[0]
    finally:
        done.set()
        for _, writer in clients:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_send_payload_keeps_the_write_buffer_limit() -> None:
    """A client that does not read is cut off once its unsent output passes the limit."""
    outputs: list[TelnetOutput] = []
    ready = asyncio.Event()
    done = asyncio.Event()

    async def shell(lines: LineReader, output: TelnetOutput) -> None:
        outputs.append(output)
        ready.set()
        await done.wait()

    settings = Settings(host="127.0.0.1", port=0, negotiation_wait=0.0, write_buffer_limit=4096)
    server = await start_server(settings, shell)
    _, writer = await asyncio.open_connection("127.0.0.1", bound_port(server))
    try:
        writer.write(IAC_WONT_TTYPE)
        await asyncio.wait_for(ready.wait(), 5)
        output = outputs[0]
        output.send_payload(Payload(["x" * 1022]))
        assert not output.overflowed and not output.closing
        big = Payload(["y" * 1023] * (32 * 1024))  # 32 MiB: more than the socket takes
        output.send_payload(big)
        assert output.overflowed and output.closing
        output.send_payload(big)  # a closed connection: ignored
    finally:
        done.set()
        writer.close()
        server.close()
        await server.wait_closed()


# -- login and logout broadcasts, byte for byte ---------------------------------------------


async def _quiet_bytes(
    client: ScriptedClient, gap: float | None = None, *, some: bool = False
) -> bytes:
    """Every byte that arrives until nothing comes for ``gap`` seconds (unparsed); with
    ``some``, first wait up to :data:`TIMEOUT` for anything to arrive. The default gap
    outlasts the interval of the status batches (D79, the default ``status_interval``
    the tests' server runs with): quiet means no batch pending."""
    gap = registry.DEFAULT_STATUS_INTERVAL + 0.3 if gap is None else gap
    data, client.buffer = client.buffer, b""
    if some and not data:
        data = await asyncio.wait_for(client.reader.read(65536), TIMEOUT)
    while True:
        try:
            chunk = await asyncio.wait_for(client.reader.read(65536), gap)
        except TimeoutError:
            return data
        assert chunk, "the server closed the connection"
        data += chunk


def _crlf(*lines: str) -> bytes:
    return "".join(f"{line}\r\n" for line in lines).encode()


def _masked(line: str) -> str:
    """A CLIP 5 line with its idle seconds left out (any other line as it is)."""
    words = line.split(" ")
    if words[0] != "5":
        return line
    words[IDLE] = "*"
    return " ".join(words)


async def test_login_and_logout_reach_each_mode_and_toggle_exactly(
    connect: Connect, app: App
) -> None:
    clip_on, clip_off = await login_all(connect, app, "clipon", "clipoff")
    await clip_off.send("toggle notify")
    assert await clip_off.line() == replies.toggle_message(Toggle.NOTIFY, False)
    telnet_on = await telnet_login(connect, app, "telneton")
    telnet_off = await telnet_login(connect, app, "telnetoff")
    await command(telnet_off, "toggle notify")
    await make_user(app, "dave")
    reply = await command(telnet_on, "waitfor dave")
    assert reply[-1] == replies.will_receive_message("dave")
    for client in (clip_on, clip_off, telnet_on, telnet_off):
        await _quiet_bytes(client)

    dave = await clip_login(connect, app, "dave")
    session = online(app, "dave")
    who = (await _quiet_bytes(clip_on, some=True)).decode()
    lines = who.split("\r\n")
    assert lines[0] == "7 dave dave logs in." and lines[2:] == ["6", ""]
    five = lines[1]
    assert _masked(five) == (
        f"5 dave - - 0 0 1500.00 0 * {session.login_time} 127.0.0.1 test_client -"
    )
    assert five.split(" ")[IDLE] in ("0", "1")
    assert await _quiet_bytes(clip_off, some=True) == _crlf(five, "6")
    assert await _quiet_bytes(telnet_on, some=True) == _crlf(
        "dave logs in.", replies.finally_logs_in("dave")
    )
    assert await _quiet_bytes(telnet_off) == b""
    assert await _quiet_bytes(dave, some=True) == _crlf(replies.is_waiting_for_you("telneton"))

    await dave.send("bye")
    await dave.expect(replies.GOODBYE[-1])
    assert await _quiet_bytes(clip_on, some=True) == _crlf("8 dave dave logs out.")
    assert await _quiet_bytes(clip_off) == b""
    assert await _quiet_bytes(telnet_on, some=True) == _crlf("dave logs out.")
    assert await _quiet_bytes(telnet_off) == b""


async def test_a_new_user_gets_the_who_list_in_one_piece(connect: Connect, app: App) -> None:
    """The who list of the CLIP login sequence: every user's CLIP 5 line, then 6."""
    await login_all(connect, app, "alice", "bob")
    online(app, "bob").toggles[Toggle.READY] = True
    carol = await clip_login(connect, app, "carol")
    got = carol.seen[carol.seen.index("4") + 1 :]
    now = time.monotonic()
    assert [_masked(line) for line in got] == [
        _masked(online(app, name).who_info(now).format()) for name in ("alice", "bob", "carol")
    ] + ["6"]
    assert got[1].split(" ")[4] == "1"  # bob's ready flag


# -- the cached CLIP 5 line ------------------------------------------------------------------


def _change(name: str, act: Callable[[Session], None]) -> tuple[str, Callable[[Session], None]]:
    return (name, act)


UNSEEN = {"lobby"}
"""Changes the CLIP 5 line does not show (the session was in no match already)."""


CHANGES = [
    _change("load", lambda s: setattr(s, "name", "alice")),
    _change("login time", lambda s: setattr(s, "login_time", 1_700_000_000)),
    _change("client", lambda s: setattr(s, "client", "test_client")),
    _change("lobby", Session.enter_lobby),
    _change("toggle ready", lambda s: s.toggles.__setitem__(Toggle.READY, True)),
    _change("away", lambda s: setattr(s, "away", "lunch")),
    _change("back", lambda s: setattr(s, "away", None)),
    _change("ready off", lambda s: s.toggles.__setitem__(Toggle.READY, False)),
    _change("playing", lambda s: s.start_playing("bob")),
    _change("rating", lambda s: setattr(s, "rating", 1510.004)),
    _change("experience", lambda s: setattr(s, "experience", 1)),
    _change("match over", Session.enter_lobby),
    _change("watching", lambda s: s.start_watching("carol")),
    _change("unwatch", Session.enter_lobby),
    _change("address", lambda s: setattr(s, "address", "alice@example.org")),
    _change("idle", lambda s: setattr(s, "last_input", s.last_input - 125.5)),
    _change("zero rating", lambda s: setattr(s, "rating", 0.0)),
    _change("negative zero", lambda s: setattr(s, "rating", -0.0)),
    _change("another client", lambda s: setattr(s, "client", "=abcdefghijklmnopqrs")),
]


def test_the_cached_who_line_follows_every_change() -> None:
    session = Session(RecordingOutput())
    session.name = "nobody"
    for what, act in CHANGES:
        before = session.who_line()
        act(session)
        now = time.monotonic()
        assert session.who_line(now) == session.who_info(now).format(), what
        assert (session.who_line(now) == before) == (what in UNSEEN), what
    assert session.who_line(session.last_input + 7.9).split(" ")[IDLE] == "7"
    assert session.who_line(session.last_input - 5).split(" ")[IDLE] == "0"


def test_the_who_line_is_rebuilt_only_when_a_field_changes() -> None:
    session = Session(RecordingOutput())
    session.name = "alice"
    session.who_line()
    cached = session._who_cache
    session.last_input -= 3  # only the idle field changes: no rebuild
    assert session.who_line().split(" ")[IDLE] == "3"
    assert session._who_cache is cached
    session.toggles[Toggle.READY] = True
    session.who_line()
    assert session._who_cache is not cached


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _rawwho_is_fresh(app: App, client: ScriptedClient) -> list[str]:
    """``rawwho`` gives every user's current CLIP 5 line (idle left out); returns it.
    Whatever ``client`` was sent before is read and dropped first."""
    await _quiet_bytes(client, 0.2)
    await client.send("rawwho")
    got = await client.expect("6")
    now = time.monotonic()
    fresh = [
        _masked(s.who_info(now).format())
        for s in sorted(app.registry, key=lambda s: s.login_time)
        if s.logged_in
    ]
    assert [_masked(line) for line in got] == fresh
    return got


async def test_who_updates_and_rawwho_after_each_change(connect: Connect, app: App) -> None:
    """toggle ready, away, back, address, a match's start and end with its new ratings:
    each who update and the next ``rawwho`` show the change (no stale cached line)."""
    app.dice = lambda: SeededDice(11)
    app.coin = lambda: 0
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    everyone = (alice, bob, carol)

    async def update(name: str, field: int, value: str) -> None:
        for client in everyone:
            line = await who_update_seen(client, name)
            assert line.split(" ")[field] == value, line
        await _rawwho_is_fresh(app, carol)

    await _rawwho_is_fresh(app, carol)  # every line cached before the changes
    await bob.send("toggle ready")
    assert await bob.line() == replies.toggle_message(Toggle.READY, True)
    await update("bob", 4, "1")
    await bob.send("away lunch")
    await update("bob", 5, "1")
    await bob.send("back")
    await update("bob", 5, "0")
    await alice.send("address alice@example.org")
    await update("alice", 12, "alice@example.org")

    for client in (alice, bob):  # board: lines for the match driver
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    await alice.send("invite bob 1")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await alice.expect(replies.player_joined("bob", 1))
    assert online(app, "alice").opponent == "bob"
    lines = await _rawwho_is_fresh(app, carol)
    assert [line.split(" ")[2] for line in lines] == ["bob", "alice", "-"]
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    # the match's end: carol gets the report, then a who update of each player
    seen = (await _quiet_bytes(carol, some=True)).decode().split("\r\n")
    now = time.monotonic()
    for name in ("alice", "bob"):
        last = [line for line in seen if line.startswith(f"5 {name} ")][-1]
        assert _masked(last) == _masked(online(app, name).who_info(now).format())
        assert last.split(" ")[6] in ("1490.00", "1510.00")
    lines = await _rawwho_is_fresh(app, carol)
    ratings = sorted(line.split(" ")[6] for line in lines)
    assert ratings == ["1490.00", "1500.00", "1510.00"]
    assert [line.split(" ")[2] for line in lines] == ["-", "-", "-"]
    assert [line.split(" ")[7] for line in lines] == ["1", "1", "0"]
