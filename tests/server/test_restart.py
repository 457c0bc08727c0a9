"""Persistence across a restart, and a clean shutdown on SIGINT/SIGTERM (issue 4 items 8, 9).

The restart test registers through the guest dialog, changes toggles, settings and lists,
stops the App and starts a new one on the same database. The shutdown test runs
``python -m server`` as a subprocess on port 0 and sends it a signal.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from db.repository import Database
from protocol import clip, replies
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from tests.conftest import DbTarget

from .conftest import (
    IAC_WONT_TTYPE,
    TEST_COST,
    Connect,
    ScriptedClient,
    check_known_lines,
    clip_login,
    make_user,
    running,
)

ROOT = Path(__file__).resolve().parents[2]


async def open_client(port: int) -> ScriptedClient:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    await client.prompt(replies.LOGIN_PROMPT)
    return client


async def register(client: ScriptedClient, name: str, password: str) -> None:
    """The guest dialog of §1.7, answered like GIB does."""
    await client.send("guest")
    await client.prompt(replies.TELNET_PROMPT)
    await client.send(f"name {name}")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send(password)
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send(password)
    await client.expect(replies.REGISTERED)
    await client.prompt(replies.TELNET_PROMPT)


async def ask(client: ScriptedClient, line: str) -> list[str]:
    await client.send(line)
    return await client.prompt(replies.TELNET_PROMPT)


async def test_everything_is_there_after_a_restart(settings: Settings, db_target: DbTarget) -> None:
    clients: list[ScriptedClient] = []
    async with running(settings, db_target) as app:
        await make_user(app, "bob")
        carol = await open_client(app.port)
        clients.append(carol)
        await register(carol, "carol", "s3cret")
        for line in (
            "toggle ready bell silent notify",
            "set boardstyle 3",
            "set timezone America/New_York",
            "set redoubles 4",
            "set sortwho name",
            "address carol@example.org",
            "message bob see you tomorrow",
            "gag bob",
            "blind bob",
        ):
            await ask(carol, line)
        await carol.close()
    async with running(settings, db_target) as app:
        carol = await open_client(app.port)
        clients.append(carol)
        await carol.send("login restart_test 1008 carol s3cret")
        welcome = clip.Welcome.parse(await carol.expect_prefix("1 "))
        assert welcome.name == "carol" and welcome.last_login > 0
        own = clip.OwnInfo.parse(await carol.line())
        assert (own.ready, own.bell, own.silent, own.notify) == (True, True, True, False)
        assert (own.redoubles, own.timezone) == (4, "America/New_York")
        who = [clip.WhoInfo.parse(line) for line in await carol.expect("6") if line[:2] == "5 "]
        assert who[0].email == "carol@example.org"
        await carol.send("set sortwho")
        assert await carol.line() == replies.set_value("sortwho", "name")
        await carol.send("set boardstyle")
        assert await carol.line() == replies.set_value("boardstyle", "3")
        await carol.send("gag")
        assert await carol.line() == replies.gagged_users(["bob"])
        await carol.send("blind")
        assert await carol.line() == replies.blinded_users(["bob"])
        bob = await open_client(app.port)
        clients.append(bob)
        await bob.send("login restart_test 1008 bob secret")
        stored = clip.Message.parse(await bob.expect_prefix("9 "))
        assert (stored.sender, stored.text) == ("carol", "see you tomorrow")
        await bob.expect("6")
        for client in clients:
            await client.close()
    check_known_lines(clients)


# -- shutdown of `python -m server` ----------------------------------------------------


async def _start_server(conf: Path, database: str) -> tuple[asyncio.subprocess.Process, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--config",
        str(conf),
        "--port",
        "0",
        "--web-port",
        "0",  # no web listener: port 8080 may be taken
        "--database",
        database,
        "--log-level",
        "WARNING",
        cwd=conf.parent,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
    assert line.startswith("fibs-server listening on 127.0.0.1:"), line
    return process, int(line.rsplit(":", 1)[1])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_shutdown_on_a_signal(tmp_path: Path, signum: signal.Signals) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}"
    conf = tmp_path / "fibs.conf"
    conf.write_text(
        "[server]\nhost = 127.0.0.1\n"
        "[limits]\nlogin_delay = 0\nnegotiation_wait = 0.1\n"
        f"[passwords]\nscrypt_n = {TEST_COST.n}\nscrypt_r = {TEST_COST.r}\n"
        f"scrypt_p = {TEST_COST.p}\n",
        encoding="utf-8",
    )
    db = await Database.open(database)
    try:
        from server.world.passwords import hash_password_sync

        await db.create_user("alice", hash_password_sync("secret", TEST_COST))
    finally:
        await db.close()
    process, port = await _start_server(conf, database)
    try:
        alice = await open_client(port)
        await alice.send("login shutdown_test 1008 alice secret")
        await alice.expect("6")
        await alice.send("toggle bell")
        assert await alice.line() == replies.toggle_message(Toggle.BELL, True)
        await alice.send("address alice@example.org")
        await alice.expect("6")
        process.send_signal(signum)
        assert await alice.line() == replies.shutdown_warning(0, restart=False)
        assert await alice.closed()
        await alice.close()
        assert await asyncio.wait_for(process.wait(), 20) == 0
        check_known_lines([alice])
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    db = await Database.open(database)
    try:
        user = await db.get_user("alice")
    finally:
        await db.close()
    assert user is not None
    assert user.toggles[Toggle.BELL] and user.address == "alice@example.org"
    assert user.last_logout_at is not None  # the logout was stored before the exit


async def test_stopping_sends_no_logout_notices(
    connect: Connect, app: App, service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With everyone leaving at once, nobody is told who left (N*N lines otherwise)."""
    await clip_login(connect, app, "alice")
    await clip_login(connect, app, "bob")
    announced: list[str] = []
    monkeypatch.setattr(app.registry, "announce_logout", lambda s: announced.append(s.name))
    await service.stop()
    assert announced == []
