"""Bad input and bad clients (issue 4 item 7): none of them stops the server or slows down
anyone else. Each test keeps a well-behaved client that must get its answer within a
second while the abuse goes on.

Commands over the rate are never dropped: they wait ("fake lag", issue 19 item 2); only
a client whose unread input passes ``[limits] max_unread_input`` is disconnected (D120).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import time
from typing import Any

import pytest

from protocol import clip, replies
from server.app import App
from server.config import Settings
from server.service import STOP_GRACE, Service
from server.world.pace import Pace
from tests.conftest import DbTarget

from .conftest import (
    IAC_WONT_TTYPE,
    Connect,
    ScriptedClient,
    check_known_lines,
    clip_login,
    make_user,
    running,
)
from .fake_clock import FakeTimer
from .sessions import login_all, online, who_update_seen

pytestmark = pytest.mark.known_lines

PROMPT_SECONDS = 1.0
"""How long the well-behaved client may wait for any answer."""


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The smallest write buffer fibs.conf allows, so a stuck reader is found quickly;
    a test changes more through indirect parametrization (a dict of changes)."""
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(write_buffer_limit=4096, **changes)


def with_settings(**changes: Any) -> pytest.MarkDecorator:
    """Run the test with these settings changed (see the ``settings`` fixture)."""
    return pytest.mark.parametrize("settings", [changes], indirect=True, ids=["settings"])


async def answers(client: ScriptedClient) -> None:
    """The server answers ``client``'s ``time`` within a second (lines that arrive
    meanwhile, such as CLIP 7 or 8 about others, are passed over)."""
    await client.send("time")
    deadline = time.monotonic() + PROMPT_SECONDS
    while not (await client.line(max(deadline - time.monotonic(), 0.001))).endswith(" UTC )"):
        pass


async def quiet(client: ScriptedClient, gap: float = 0.3) -> None:
    """Read until nothing arrives for ``gap`` seconds."""
    while True:
        try:
            await client.line(gap)
        except TimeoutError:
            return


async def keep_checking(client: ScriptedClient, stop: asyncio.Event) -> int:
    """Ask ``client``'s question again and again until ``stop``; return how often."""
    count = 0
    while not stop.is_set():
        await answers(client)
        count += 1
        await asyncio.sleep(0.1)  # under the rate: no answer waits for a token
    return count


# The garbage makes a few hundred lines, each answered: at 20 a second that is 20 s of
# fake lag, which is not what this test is about; nor is the input budget (300 KB at
# 16 KiB a second: tests/server/test_hostile.py).
@with_settings(commands_per_second=10_000.0, command_burst=10_000, max_input_rate=0)
async def test_binary_garbage_nul_and_iac(connect: Connect, app: App) -> None:
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    rng = random.Random(4321)
    garbage = bytes(rng.randrange(256) for _ in range(50_000))
    specials = b"\x00\x00\xff\xff\xff\xfb\x01\xff\xfd\x03\xff\xfa\x18\x00\x01\xff\xf0\x1b[2J\x07"
    endless_subnegotiation = b"\xff\xfa\x18" + b"a" * 200_000 + b"\xff\xf0"  # telnetlib3 caps it
    for chunk in (garbage[:25_000], specials, endless_subnegotiation, garbage[25_000:], b"\r\n"):
        await mallory.send_raw(chunk)
        await answers(alice)
    stranger = await connect()  # the same before login
    await stranger.send_raw(garbage + b"\r\n")
    await answers(alice)
    await quiet(mallory)  # the replies to the garbage's many lines
    await mallory.send_raw(b"\xff\xf0\r\n\r\ntell alice still here\r\n")
    assert await alice.expect_prefix("12 mallory") == "12 mallory still here"


async def test_control_characters_never_reach_others(connect: Connect, app: App) -> None:
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    await mallory.send_raw(b"tell alice \x1b[2Jhi\x00 \x07there\x08\r\n")
    assert await alice.line() == "12 mallory [2Jhi there"
    await mallory.send_raw(b"\x1b\x00fizz\r\n")
    assert await mallory.expect_prefix("** Unknown") == replies.unknown_command("fizz")


async def test_invalid_utf8(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await bob.send_raw(b"tell alice caf\xc3\xa9 \xc3\x28 \xe2\x82 \xed\xa0\x80 \xfe\xc0\xaf!\r\n")
    said = clip.Says.parse(await alice.line(PROMPT_SECONDS))
    assert said.name == "bob" and said.text.isascii() and said.text.endswith("!")
    assert said.text.startswith("caf? ")  # FIBS is 7-bit: anything else becomes "?"
    assert await bob.line() == f"16 alice {said.text}"
    await answers(bob)


async def test_a_character_split_between_packets_ends_nothing(connect: Connect, app: App) -> None:
    """The first byte of a UTF-8 character alone in a packet decodes to no text until
    the rest comes: the connection waits for it, it is not the end of the input."""
    alice, bob = await login_all(connect, app, "alice", "bob")
    for part in (b"tell alice caf", b"\xc3", b"\xa9 ok\r\n"):
        await bob.send_raw(part)
        await asyncio.sleep(0.1)  # each read by the server (this process) on its own
    assert await alice.line(PROMPT_SECONDS) == "12 bob caf? ok"
    assert await bob.line() == "16 alice caf? ok"
    await answers(bob)


# 100 KB at the input budget's 16 KiB a second would take 6 s (tests/server/test_hostile.py).
@pytest.mark.parametrize("settings", [{"max_input_rate": 0}], indirect=True, ids=["settings"])
@pytest.mark.parametrize("newline", [False, True])
async def test_a_100_kb_line(connect: Connect, app: App, newline: bool) -> None:
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    line = b"tell alice " + b"x" * 100_000
    for start in range(0, len(line), 10_000):
        await mallory.send_raw(line[start : start + 10_000])
        await answers(alice)
    if not newline:
        await alice.nothing(0.2)
        await mallory.close()  # it goes away without ever ending the line
        assert await alice.expect_prefix("8 ") == "8 mallory mallory drops connection."
        return
    await mallory.send_raw(b"\r\n")
    assert await mallory.line(PROMPT_SECONDS) == replies.LINE_TOO_LONG
    await answers(mallory)
    await answers(alice)
    await alice.nothing(0.1)  # nothing of the long line reached alice


@pytest.mark.parametrize("settings", [{"max_input_rate": 0}], indirect=True, ids=["settings"])
async def test_a_100_kb_line_sent_while_the_connection_is_busy_is_only_dropped(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D451: the whole line waits unread while mallory's login writes its bookkeeping
    (held here; slow on a busy database, as in a parallel run of the suite), more than
    ``max_unread_input``. It is still only a line too long, not a flood."""
    (alice,) = await login_all(connect, app, "alice")
    await make_user(app, "mallory", "secret")
    entered, release = asyncio.Event(), asyncio.Event()
    update_login = app.db.update_login

    async def held(name: str, host: str) -> None:
        entered.set()
        await release.wait()
        await update_login(name, host)

    monkeypatch.setattr(app.db, "update_login", held)
    mallory = await connect()
    await mallory.prompt(replies.LOGIN_PROMPT)
    await mallory.send("login test_client 1008 mallory secret")
    await asyncio.wait_for(entered.wait(), PROMPT_SECONDS)
    line = b"tell alice " + b"x" * 100_000
    assert len(line) > app.settings.max_unread_input
    await mallory.send_raw(line)
    await asyncio.sleep(0.2)  # on loopback: in the server's reader (this process) by now
    release.set()
    await mallory.expect("6", PROMPT_SECONDS)
    await who_update_seen(alice, "mallory")
    await mallory.send_raw(b"\r\n")
    assert await mallory.line(PROMPT_SECONDS) == replies.LINE_TOO_LONG
    await answers(mallory)
    await answers(alice)
    await alice.nothing(0.1)  # nothing of the long line reached alice


@with_settings(max_input_rate=0)
async def test_a_100_kb_line_at_the_login_prompt(connect: Connect, app: App) -> None:
    (alice,) = await login_all(connect, app, "alice")
    stranger = await connect()
    await stranger.prompt(replies.LOGIN_PROMPT)
    await stranger.send_raw(b"y" * 100_000 + b"\r\n")
    await stranger.prompt(replies.LOGIN_PROMPT, PROMPT_SECONDS)
    await answers(alice)


BURST_RATE = 200.0
"""The command rate of the burst tests: fast enough to keep them short."""


@with_settings(commands_per_second=BURST_RATE, command_burst=40)
@pytest.mark.alone  # a time limit is asserted
async def test_a_burst_waits_in_order_and_none_is_dropped(connect: Connect, app: App) -> None:
    """200 commands at once: the first 40 (the burst) at once, the rest at the rate, every
    one answered in the order sent, while alice's answers come as usual."""
    alice, mallory, carol = await login_all(connect, app, "alice", "mallory", "carol")
    count = 200
    stop = asyncio.Event()
    checker = asyncio.create_task(keep_checking(alice, stop))
    started = time.monotonic()
    await mallory.send_raw(b"".join(b"tell carol %d\r\n" % i for i in range(count)))
    got = [await mallory.line(PROMPT_SECONDS) for _ in range(count)]
    elapsed = time.monotonic() - started
    stop.set()
    assert got == [f"16 carol {i}" for i in range(count)]
    assert [await carol.line(PROMPT_SECONDS) for _ in range(count)] == [
        f"12 mallory {i}" for i in range(count)
    ]
    implied = (count - 40) / BURST_RATE  # 0.8 s
    assert implied * 0.9 <= elapsed < implied + 2.0, elapsed
    assert await checker > 0
    await mallory.nothing(0.2)


async def test_a_throttled_client_does_not_hold_up_others(connect: Connect, app: App) -> None:
    """The shipped rate (20 a second, bursts of 40): 100 commands take mallory about 3 s;
    meanwhile alice, bob and carol are answered within a second each time."""
    alice, bob, carol, mallory = await login_all(connect, app, "alice", "bob", "carol", "mallory")
    stop = asyncio.Event()
    checkers = [asyncio.create_task(keep_checking(c, stop)) for c in (alice, bob, carol)]
    started = time.monotonic()
    await mallory.send_raw(b"time\r\n" * 100)
    got = [await mallory.line(PROMPT_SECONDS) for _ in range(100)]
    elapsed = time.monotonic() - started
    stop.set()
    assert all(line.endswith(" UTC )") for line in got)
    assert elapsed >= 0.9 * 60 / app.settings.commands_per_second
    assert min(await asyncio.gather(*checkers)) > 5


def _server_side(app: App, name: str) -> tuple[Any, Any]:
    """The telnetlib3 transport and reader of ``name``'s connection."""
    output: Any = online(app, name).output
    transport = output._writer.transport
    return transport, transport.get_protocol().reader


# The reader's own pause, without the input budget's (tests/server/test_hostile.py).
@with_settings(commands_per_second=0.5, command_burst=3, max_unread_input=65_536, max_input_rate=0)
async def test_a_flood_pauses_reading_then_is_disconnected(connect: Connect, app: App) -> None:
    """While mallory waits for a token, the server stops reading its socket once its
    input passes the bound (the memory stays bounded while mallory keeps writing), and
    then disconnects it with a line saying why. alice is answered meanwhile (the rate
    of this test leaves her two commands in 4 s: both are answered at once)."""
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    transport, reader = _server_side(app, "mallory")
    await mallory.send_raw(b"time\r\n" * 3)  # spends the burst: the next line waits 2 s
    for _ in range(3):
        assert (await mallory.line(PROMPT_SECONDS)).endswith(" UTC )")
    flood = asyncio.create_task(mallory.send_raw(b"time\r\n" * 2_000_000))  # 12 MB
    try:
        deadline = time.monotonic() + 1.0
        while transport.is_reading() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert not transport.is_reading(), "the socket was never paused"
        held = reader.buffered
        # Paused past the bound, by at most one socket read (256 KiB).
        assert 65_536 < held <= 65_536 + 262_144
        await answers(alice)
        assert reader.buffered == held and not flood.done()  # mallory is held back by TCP
        assert await mallory.expect(replies.TOO_MUCH_INPUT, 3) == []
        assert await mallory.closed(PROMPT_SECONDS)
    finally:
        flood.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await flood
    dropped = replies.drops_connection("mallory")
    notice = replies.logout_notice("mallory", dropped, replies.Mode.CLIP)
    if notice not in alice.seen:
        await alice.expect(notice, PROMPT_SECONDS + app.registry.status_interval)
    await answers(alice)


def _shrink_server_send_buffer(app: App, name: str) -> None:
    """The server's kernel buffer for ``name`` as small as Linux allows, so the test need
    not push megabytes before the write buffer grows."""
    output: Any = online(app, name).output
    sock = output._writer.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)


async def _stuck_client(app: App, name: str) -> socket.socket:
    """A CLIP client on a blocking-free raw socket with a tiny receive buffer that stops
    reading once it is logged in."""
    await make_user(app, name)
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", app.port))
    await loop.sock_sendall(sock, IAC_WONT_TTYPE)
    received = b""
    while not received.endswith(replies.LOGIN_PROMPT.encode()):
        received += await asyncio.wait_for(loop.sock_recv(sock, 65536), 5)
    await loop.sock_sendall(sock, f"login stuck 1008 {name} secret\r\n".encode())
    while b"\r\n6\r\n" not in received:
        received += await asyncio.wait_for(loop.sock_recv(sock, 65536), 5)
    return sock


@pytest.mark.alone  # a time limit is asserted
async def test_a_client_that_stops_reading_is_dropped(connect: Connect, app: App) -> None:
    alice, carol = await login_all(connect, app, "alice", "carol")
    sock = await _stuck_client(app, "mallory")
    try:
        for client in (alice, carol):
            await who_update_seen(client, "mallory")
        _shrink_server_send_buffer(app, "mallory")
        text = "z" * 900
        # Shouts fill the stuck reader's buffers here: no rate for them (D300).
        app.shout_pace = Pace(10_000, app.timer.now)
        started = time.monotonic()
        for _ in range(app.settings.command_burst):
            await alice.send(f"shout {text}")
            assert await alice.line(PROMPT_SECONDS) == f"17 {text}"
            assert await carol.line(PROMPT_SECONDS) == f"13 alice {text}"
            if app.registry.get("mallory") is None:
                break
        assert app.registry.get("mallory") is None, "the stuck reader is still connected"
        assert await alice.expect_prefix("8 ", PROMPT_SECONDS) == (
            "8 mallory mallory drops connection."
        )
        assert time.monotonic() - started < 5
        await answers(carol)
    finally:
        sock.close()


@pytest.mark.alone  # a time limit is asserted
async def test_a_client_that_stops_reading_does_not_hold_up_the_shutdown(
    connect: Connect, app: App, service: Service
) -> None:
    sock = await _stuck_client(app, "mallory")
    try:
        _shrink_server_send_buffer(app, "mallory")
        session = online(app, "mallory")
        output: Any = session.output
        started = time.monotonic()
        stuck = 0
        while stuck < 3 and time.monotonic() - started < 10:
            # Fill the kernel's buffers until output stays in the transport's own buffer.
            if output._writer.transport.get_write_buffer_size():
                stuck += 1
            else:
                stuck = 0
                session.send("x" * 500)
            await asyncio.sleep(0.05)
        assert app.registry.get("mallory") is not None
        started = time.monotonic()
        await service.stop()
        assert time.monotonic() - started < STOP_GRACE + 1
    finally:
        sock.close()


async def test_half_closed_connections(connect: Connect, app: App) -> None:
    """A client that sends FIN ends its session at once. (A peer that vanishes without
    a FIN is only found by the idle timeout: see the idle test below.)"""
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    mallory.writer.write_eof()  # FIN from mallory; the server may still write
    # The logout notice goes out with the next status batch (D79).
    notice_wait = PROMPT_SECONDS + app.registry.status_interval
    assert await alice.expect_prefix("8 ", notice_wait) == "8 mallory mallory drops connection."
    assert await mallory.closed(PROMPT_SECONDS)
    stranger = await connect()
    await stranger.prompt(replies.LOGIN_PROMPT)
    stranger.writer.write_eof()
    assert await stranger.closed(PROMPT_SECONDS)
    await answers(alice)


async def test_many_connections_that_never_log_in(connect: Connect, app: App) -> None:
    (alice,) = await login_all(connect, app, "alice")
    loiterers = [await connect() for _ in range(200)]
    await answers(alice)
    bob = await clip_login(connect, app, "bob")
    await answers(bob)
    assert len(app.registry) == 2
    for client in loiterers:
        await client.close()
    await answers(alice)


async def test_idle_connections_are_warned_then_closed(
    settings: Settings, db_target: DbTarget
) -> None:
    """A user who types nothing is warned ``idle_warning`` seconds before the idle
    time-out and then disconnected; a connection that never logs in is closed at the
    time-out; a user who keeps typing stays. Time is a hand-driven clock: nothing sleeps,
    and each half second passes only once the server waits on it."""
    quick = settings.replace(idle_timeout=2.0, idle_warning=1.0, login_timeout=2.0)
    timer = FakeTimer()
    async with running(quick, db_target, timer=timer) as app:
        await make_user(app, "alice")
        await make_user(app, "mallory")
        clients: list[ScriptedClient] = []

        async def connect() -> ScriptedClient:
            reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
            client = ScriptedClient(reader, writer)
            await client.send_raw(IAC_WONT_TTYPE)
            clients.append(client)
            return client

        async def half_a_second_with_alice_typing() -> None:
            """alice asks the time; half a second passes once every connection waits
            for its next line again (mallory, alice, the stranger: 3 waits)."""
            await answers(alice)
            await timer.until_pending(3)
            timer.advance(0.5)

        try:
            mallory = await clip_login(connect, app, "mallory", create=False)
            alice = await clip_login(connect, app, "alice", create=False)
            await who_update_seen(mallory, "alice")
            stranger = await connect()  # never logs in
            await stranger.prompt(replies.LOGIN_PROMPT)
            await half_a_second_with_alice_typing()
            await mallory.nothing(0.05)
            await half_a_second_with_alice_typing()  # mallory: 1 s without a line
            assert await mallory.line() == replies.idle_warning(1)
            await half_a_second_with_alice_typing()
            await mallory.nothing(0.05)
            assert not stranger.reader.at_eof()
            await half_a_second_with_alice_typing()  # mallory and the stranger: 2 s
            assert await mallory.line() == replies.CONNECTION_TIMED_OUT
            assert await mallory.closed(2)
            assert await stranger.line() == replies.CONNECTION_TIMED_OUT
            assert await stranger.closed(2)
            notice = replies.logout_notice(
                "mallory", replies.timed_out("mallory"), replies.Mode.CLIP
            )
            if notice not in alice.seen:
                await alice.expect(notice, PROMPT_SECONDS + app.registry.status_interval)
            assert app.registry.get("alice") is not None
            await answers(alice)
        finally:
            for client in clients:
                await client.close()
        check_known_lines(clients)
