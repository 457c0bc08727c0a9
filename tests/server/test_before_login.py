"""Connections that have not logged in (issue 18 item 3): their time to log in, the caps
in all and per address, the open-file limit and failing accepts (server/doors/admission.py).

Time-outs run on a hand-driven clock (tests/server/fake_clock.py); the open-file limit
and failing accepts on a real ``python -m server`` subprocess with a small limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol import replies
from server.app import App
from server.config import ConfigError, Settings, load
from server.doors.admission import Networks, address_key
from tests.conftest import DbTarget

from .conftest import (
    IAC_WONT_TTYPE,
    ScriptedClient,
    clip_login,
    connect_from,
    make_user,
    running,
)
from .fake_clock import FakeTimer

ROOT = Path(__file__).resolve().parents[2]


async def open_client(app: App) -> ScriptedClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    return client


@contextlib.asynccontextmanager
async def clients(app: App) -> AsyncIterator[list[ScriptedClient]]:
    """A list to put clients in; every one is closed at the end."""
    opened: list[ScriptedClient] = []
    try:
        yield opened
    finally:
        for client in opened:
            await client.close()


async def at_prompt(app: App, opened: list[ScriptedClient]) -> ScriptedClient:
    client = await open_client(app)
    opened.append(client)
    await client.prompt(replies.LOGIN_PROMPT)
    return client


async def refused(app: App, opened: list[ScriptedClient], line: str) -> None:
    """A new connection gets ``line`` instead of the banner, and is closed."""
    client = await open_client(app)
    opened.append(client)
    assert await client.line() == line
    assert await client.closed()


# -- the time to log in ---------------------------------------------------------------------


async def test_a_connection_has_a_minute_to_log_in(settings: Settings, db_target: DbTarget) -> None:
    """At ``login:`` and at the password prompt alike, the time runs from the connect:
    typing something does not start it again. A logged-in user is not touched."""
    assert Settings().login_timeout == 60.0
    timer = FakeTimer()
    async with running(settings, db_target, timer=timer) as app, clients(app) as opened:
        await make_user(app, "alice")
        idle = await at_prompt(app, opened)
        typing = await at_prompt(app, opened)
        timer.advance(59.0)
        await typing.send("alice")  # the telnet login: the name, then the password prompt
        await typing.prompt(replies.PASSWORD_PROMPT)
        user = await clip_login(lambda: open_client(app), app, "alice", create=False)
        opened.append(user)
        await timer.until_pending(3)  # both waiting, and the user's idle timeout
        timer.advance(1.0)
        for client in (idle, typing):
            assert await client.line() == replies.CONNECTION_TIMED_OUT
            assert await client.closed()
        await user.send("time")
        assert (await user.line()).endswith(" UTC )")
        assert app.pre_login.count == 0


async def test_a_guest_has_ten_minutes_to_register(settings: Settings, db_target: DbTarget) -> None:
    """``guest`` ends the minute of the login prompt: a person reading the welcome and
    choosing a name has ``[limits] guest_timeout`` (D231); one who registers in time
    stays, one who does not is timed out."""
    assert Settings().guest_timeout == 600.0
    timer = FakeTimer()
    async with running(settings, db_target, timer=timer) as app, clients(app) as opened:
        slow, quick = await at_prompt(app, opened), await at_prompt(app, opened)
        for guest in (slow, quick):
            await guest.send("guest")
            await guest.prompt(replies.TELNET_PROMPT)
        timer.advance(120.0)  # past the minute of the login prompt
        await slow.send("who")
        await slow.prompt(replies.TELNET_PROMPT)
        await quick.send("name quick")
        await quick.prompt(replies.GIVE_PASSWORD_PROMPT)
        timer.advance(479.0)
        await quick.send("secret")
        await quick.prompt(replies.RETYPE_PASSWORD_PROMPT)
        await quick.send("secret")
        await quick.expect(replies.user_authenticated("quick"))
        await quick.prompt(replies.TELNET_PROMPT)
        assert app.pre_login.count == 1  # the slow guest only
        await timer.until_pending(2)
        timer.advance(1.0)  # 600 s since the slow guest typed guest
        assert await slow.line() == replies.CONNECTION_TIMED_OUT
        assert await slow.closed()
        await quick.send("who")
        await quick.expect(replies.WHO_HEADER)
        assert app.pre_login.count == 0


# -- the caps -------------------------------------------------------------------------------


@pytest.mark.parametrize("guest", [False, True], ids=["login-prompt", "guest"])
async def test_connections_per_address_are_capped(
    settings: Settings, db_target: DbTarget, guest: bool
) -> None:
    """Over ``[limits] max_pre_login_per_address`` a connection gets one line and is
    closed; a guest counts until registered; a login frees its place at once."""
    capped = settings.replace(max_pre_login_per_address=3, trusted_networks=())
    async with running(capped, db_target) as app, clients(app) as opened:
        await make_user(app, "alice")
        waiting = [await at_prompt(app, opened) for _ in range(3)]
        if guest:
            await waiting[0].send("guest")
            await waiting[0].prompt(replies.TELNET_PROMPT)
        await refused(app, opened, replies.TOO_MANY_WAITING_FROM_ADDRESS)
        await waiting[1].send("login test_client 1008 alice secret")
        await waiting[1].expect("6")
        await at_prompt(app, opened)  # alice's place
        await refused(app, opened, replies.TOO_MANY_WAITING_FROM_ADDRESS)
        await waiting[2].close()
        await asyncio.sleep(0.2)  # the server sees the close
        await at_prompt(app, opened)
        await waiting[1].send("time")  # the logged-in user goes on as usual
        assert (await waiting[1].line()).endswith(" UTC )")


async def test_connections_in_all_are_capped(settings: Settings, db_target: DbTarget) -> None:
    """``[limits] max_pre_login`` holds for trusted addresses too (127.0.0.1 is one by
    default, with a cap of its own, here above the total)."""
    capped = settings.replace(
        max_pre_login=4, max_pre_login_per_address=1, max_pre_login_per_trusted_address=10
    )
    async with running(capped, db_target) as app, clients(app) as opened:
        assert "127.0.0.1" in app.trusted
        waiting = [await at_prompt(app, opened) for _ in range(4)]
        await refused(app, opened, replies.TOO_MANY_WAITING)
        await waiting[0].close()
        await asyncio.sleep(0.2)
        await at_prompt(app, opened)


async def at_prompt_from(app: App, opened: list[ScriptedClient], source: str) -> ScriptedClient:
    client = await connect_from(app, source)
    opened.append(client)
    await client.prompt(replies.LOGIN_PROMPT)
    return client


async def test_one_trusted_client_cannot_take_every_place(
    settings: Settings, db_target: DbTarget
) -> None:
    """Issue 34 item 13, D295: an address of ``trusted_networks`` counts by itself, up to
    half the total by default (before, one loopback client filled max_pre_login and
    every telnet and web user was refused). Another trusted address still comes in, with
    the total as the last cap; a connection that closes frees its place at once."""
    capped = settings.replace(max_pre_login=6, max_pre_login_per_address=1)
    async with running(capped, db_target) as app, clients(app) as opened:
        assert app.pre_login.per_trusted_address == 3
        hog = [await at_prompt_from(app, opened, "127.0.0.2") for _ in range(3)]
        refusal = await connect_from(app, "127.0.0.2")
        opened.append(refusal)
        assert await refusal.line() == replies.TOO_MANY_WAITING_FROM_ADDRESS
        assert await refusal.closed()
        others = [await at_prompt_from(app, opened, "127.0.0.3") for _ in range(3)]
        await others[0].close()
        await asyncio.sleep(0.2)  # the server sees the close
        assert app.pre_login.count == 5
        await at_prompt_from(app, opened, "127.0.0.3")
        await hog[0].send_raw(b"\xff\xf4 junk \x00\x01")  # junk, then gone
        hog[0].writer.transport.abort()  # a reset, not a close
        await asyncio.sleep(0.2)
        await at_prompt_from(app, opened, "127.0.0.2")
        assert app.pre_login.count == 6
        late = await connect_from(app, "127.0.0.4")
        opened.append(late)
        assert await late.line() == replies.TOO_MANY_WAITING


def test_ipv6_counts_by_its_64_network() -> None:
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::2")
    assert address_key("2001:db8:1:2::1") != address_key("2001:db8:1:3::1")
    assert address_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert address_key("192.0.2.7") == "192.0.2.7"


# -- the process: open-file limit, failing accepts ----------------------------------------

_LISTENING = re.compile(r"listening on (\S+):(\d+)")


@contextlib.asynccontextmanager
async def server_process(
    tmp_path: Path, files: tuple[int, int], *, event_loop: str = "uvloop"
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int, Path]]:
    """``python -m server`` with the open-file limit ``files`` (soft, hard) at its start."""
    log = tmp_path / "server.log"
    config = tmp_path / "fibs.conf"
    config.write_text(f"[server]\nevent_loop = {event_loop}\n[limits]\nnegotiation_wait = 0.1\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, files)

    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            "0",
            "--web-port",
            "0",  # no web listener: port 8080 may be taken
            "--database",
            f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}",
            "--config",
            str(config),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            preexec_fn=limit,
        )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        found = _LISTENING.search(line.decode())
        assert found, f"no listening line: {line!r}; log: {log.read_text()[-2000:]}"
        yield process, int(found[2]), log
    finally:
        if process.returncode is None:
            process.terminate()
        await asyncio.wait_for(process.wait(), 30)


async def test_the_open_file_limit_is_raised_to_the_hard_limit(tmp_path: Path) -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard <= 256:
        pytest.skip(f"the hard open-file limit ({hard}) leaves nothing to raise")
    async with server_process(tmp_path, (256, hard)) as (process, _, log):
        limits = Path(f"/proc/{process.pid}/limits").read_text()
        row = next(r for r in limits.splitlines() if r.startswith("Max open files"))
        assert row.split()[3:5] == [str(hard), str(hard)]
        assert f"open-file limit {hard} (was 256, hard limit {hard})" in log.read_text()


@pytest.mark.parametrize("event_loop", ["asyncio", "uvloop"])
async def test_failing_accepts_are_logged_once_and_the_server_recovers(
    tmp_path: Path, event_loop: str
) -> None:
    """Out of open files, asyncio retries the accept ~100 times a loop turn, each with a
    traceback (500 MB of log in two minutes, issue 18): now one line a minute, and the
    connections it cannot accept wait in the kernel's queue. uvloop (libuv) accepts and
    closes them at once and says nothing: no traceback there either, and the server
    recovers the same way (docs/server.md, ``event_loop``)."""
    async with server_process(tmp_path, (64, 64), event_loop=event_loop) as (
        process,
        port,
        log,
    ):
        # Leave the running server 8 files to spare: the 9th connection cannot be
        # accepted, whatever the pace at which it refuses those over its caps.
        in_use = len(os.listdir(f"/proc/{process.pid}/fd"))
        resource.prlimit(process.pid, resource.RLIMIT_NOFILE, (in_use + 8, 64))
        held: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        try:
            for _ in range(40):  # far past 8 files: the kernel queues the rest
                held.append(await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5))
            await asyncio.sleep(3.0)
            closed = await asyncio.gather(*(_closed_by_server(reader) for reader, _ in held))
        finally:
            for _, writer in held:
                writer.close()
        await asyncio.sleep(1.5)  # asyncio retries the accept after 1 s
        client = ScriptedClient(*await asyncio.open_connection("127.0.0.1", port))
        await client.send_raw(IAC_WONT_TTYPE)
        await client.prompt(replies.LOGIN_PROMPT, timeout=10)
        await client.close()
        text = log.read_text()
        assert "Traceback" not in text
        accept_lines = [line for line in text.splitlines() if "cannot accept" in line]
        if event_loop == "asyncio":
            assert 1 <= len(accept_lines) <= 2, accept_lines
            assert not any(closed)
        else:
            assert accept_lines == []
            assert sum(closed) > len(held) // 2, closed  # most closed, not queued


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    """Whether the server closed this connection (its end of file came), reading what
    it sent before."""
    try:
        while await asyncio.wait_for(reader.read(4096), 0.5):
            pass
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("trusted_networks = 10.0.0.0/8, nonsense", "[limits] trusted_networks: 'nonsense'"),
        ("max_pre_login = 0", "[limits] max_pre_login must be 1 or more"),
        ("max_pre_login_per_address = 0", "[limits] max_pre_login_per_address must be 1"),
        ("login_timeout = -1", "[limits] login_timeout must be 0 (off) or more"),
        ("guest_timeout = soon", "[limits] guest_timeout must be a number"),
    ],
)
def test_bad_limits_stop_the_start_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "fibs.conf"
    path.write_text(f"[limits]\n{text}\n")
    with pytest.raises(ConfigError, match=re.escape(message)):
        load(path)


def test_trusted_networks_read_as_a_list(tmp_path: Path) -> None:
    path = tmp_path / "fibs.conf"
    path.write_text("[limits]\ntrusted_networks = 10.0.0.0/8 192.0.2.1,2001:db8::/32\n")
    trusted = Networks(load(path).trusted_networks)
    assert "10.1.2.3" in trusted and "192.0.2.1" in trusted and "2001:db8::5" in trusted
    assert "192.0.2.2" not in trusted and "127.0.0.1" not in trusted
    path.write_text("[limits]\ntrusted_networks =\n")
    assert load(path).trusted_networks == ()
