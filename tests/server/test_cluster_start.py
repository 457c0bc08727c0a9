"""``python -m server --cluster URL``: real server processes as nodes of one world, on
PostgreSQL and the machine's NATS (issue 32 item 1; D340).

Each test starts its nodes as subprocesses (``python -m server``), each on a free port,
sharing a fresh PostgreSQL database and the NATS at 127.0.0.1:4222 under a subject
prefix of the test's own; the processes are killed at the end whatever happens. One
node is frozen with SIGSTOP and woken with SIGCONT (D370, D417).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from db.repository import Database
from protocol import clip, replies
from protocol.replies import Mode, Toggle
from server.world.bus import LOST_AFTER
from server.world.nats_bus import BEAT_INTERVAL
from server.world.passwords import hash_password_sync
from server.world.session import DEFAULT_TOGGLES, storable_toggles
from tests.conftest import PG_URL_VARIABLE, postgres_database

from .conftest import TEST_COST, ScriptedClient
from .test_sigkill import login

ROOT = Path(__file__).resolve().parents[2]
NATS_URL = "nats://127.0.0.1:4222"
_LISTENING = re.compile(r"fibs-server listening on (\S+):(\d+)")


@contextlib.asynccontextmanager
async def node(url: str, prefix: str, name: str, log: Path) -> AsyncIterator[int]:
    """One node (``python -m server --cluster``) on a free port: its port."""
    async with node_process(url, prefix, name, log) as (_, port):
        yield port


@contextlib.asynccontextmanager
async def node_process(
    url: str, prefix: str, name: str, log: Path
) -> AsyncIterator[tuple[asyncio.subprocess.Process, int]]:
    """One node (``python -m server --cluster``) on a free port: its process and port."""
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            "0",
            "--web-port",
            "0",
            "--database",
            url,
            "--cluster",
            NATS_URL,
            "--config",
            str(_config(log.parent, prefix, name)),
            "--log-level",
            "WARNING",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        found = _LISTENING.search(line.decode())
        assert found, f"no listening line: {line!r}; log: {log.read_text()[-2000:]}"
        yield process, int(found[2])
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGCONT)  # a frozen process dies only once woken
            process.kill()
        await process.wait()


def _config(folder: Path, prefix: str, name: str) -> Path:
    """A fibs.conf naming the node and the world's prefix; cheap hashes for the test."""
    path = folder / f"{name}.conf"
    path.write_text(
        "[cluster]\n"
        f"node = {name}\n"
        f"prefix = {prefix}\n"
        "[passwords]\n"
        f"scrypt_n = {TEST_COST.n}\nscrypt_r = {TEST_COST.r}\nscrypt_p = {TEST_COST.p}\n"
        "[analysis]\nenabled = no\n"
    )
    return path


@contextlib.asynccontextmanager
async def database_with(*names: str) -> AsyncIterator[str]:
    """A fresh PostgreSQL database with accounts ``names`` (password ``secret``)."""
    server = os.environ.get(PG_URL_VARIABLE)
    if not server:
        pytest.skip(f"a cluster needs PostgreSQL: set {PG_URL_VARIABLE} (README, 'Tests')")
    async with postgres_database(server) as url:
        db = await Database.open(url)
        try:
            for name in names:
                await db.create_user(
                    name,
                    hash_password_sync("secret", TEST_COST),
                    toggles=storable_toggles(DEFAULT_TOGGLES),
                )
        finally:
            await db.close()
        yield url


async def test_two_server_processes_are_one_world(tmp_path: Path) -> None:
    prefix = f"fibstest{uuid.uuid4().hex}"
    async with (
        asyncio.timeout(60),
        database_with("alice", "bob") as url,
        node(url, prefix, "east", tmp_path / "east.log") as east,
        node(url, prefix, "west", tmp_path / "west.log") as west,
    ):
        alice = await login(east, "alice")
        bob = await login(west, "bob")
        notice = await alice.expect_prefix("7 bob ")
        assert notice == clip.Login("bob", replies.logs_in("bob")).format()
        await bob.send("tell alice hello from the west")
        await alice.expect(replies.says("bob", "hello from the west", Mode.CLIP))
        await alice.send("rawwho")
        who = [clip.WhoInfo.parse(line).name for line in await alice.expect("6")]
        assert sorted(n for n in who if n) == ["alice", "bob"]
        for client in (alice, bob):
            await client.close()


async def test_a_cluster_on_sqlite_is_refused_with_one_line(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--database",
        f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}",
        "--cluster",
        NATS_URL,
        "--config",
        str(_config(tmp_path, "fibs", "solo")),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode == 2
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1 and "needs PostgreSQL" in lines[0], lines


async def ready(client: ScriptedClient) -> None:
    """``client``'s user ready to be invited (the toggle may be stored on already)."""
    wanted = replies.toggle_message(Toggle.READY, True)
    while True:
        await client.send("toggle ready")
        while (reply := await client.line()).startswith(("5 ", "6", "7 ", "8 ")):
            pass  # status notices
        if reply == wanted:
            return


async def test_a_frozen_node_is_taken_for_gone_and_cannot_write_when_it_wakes(
    tmp_path: Path,
) -> None:
    """Issue 32 item 5 with a real process frozen (SIGSTOP), not killed (D370): east runs
    alice and bob's match; frozen, it is taken for gone (carol, at west, sees both leave
    within LOST_AFTER and a beat), alice and bob log in at west and resume there (west
    takes the table); woken (SIGCONT), east's next action of that match is refused by
    the database, its players there are told, the stored match is unchanged, and at
    west the match goes on."""
    prefix = f"fibstest{uuid.uuid4().hex}"
    async with (
        asyncio.timeout(90),
        database_with("alice", "bob", "carol") as url,
        node_process(url, prefix, "east", tmp_path / "east.log") as (east_process, east),
        node(url, prefix, "west", tmp_path / "west.log") as west,
    ):
        carol = await login(west, "carol")
        alice = await login(east, "alice")
        bob = await login(east, "bob")
        await carol.expect_prefix("7 bob ")
        await ready(bob)
        for client in (alice, bob):
            await client.send("set boardstyle 3")
            await client.expect("Value of 'boardstyle' set to 3.")
        await alice.send("invite bob 5")
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        for client in (alice, bob):
            await client.expect_prefix("board:")  # the opening stored, then told

        loop = asyncio.get_running_loop()
        east_process.send_signal(signal.SIGSTOP)
        frozen = loop.time()
        left: set[str] = set()
        while left != {"alice", "bob"}:
            line = await carol.line(timeout=10)
            if line.startswith("8 "):
                left.add(line.split()[1])
        taken_for_gone = loop.time() - frozen
        assert taken_for_gone < LOST_AFTER + BEAT_INTERVAL + 1, taken_for_gone

        alice_west = await login(west, "alice")
        bob_west = await login(west, "bob")
        await ready(bob_west)
        await alice_west.send("invite bob")
        await bob_west.expect(replies.type_join("alice"))
        await bob_west.send("join alice")
        await alice_west.expect(replies.joined_resumed("bob"))
        db = await Database.open(url)
        try:
            before = await db.load_match("alice", "bob")
            await alice.send("resign n")  # read by east as it wakes, the match still its
            east_process.send_signal(signal.SIGCONT)
            # east's save is refused (D370), or, met again first, east drops the match
            # of the logins superseded at west (D417): either way nothing is written,
            # east's players are told, and their older logins are closed
            for old in (alice, bob):
                assert await old.closed(10)
                assert f"{replies.MATCH_TAKEN_OVER}\r\n".encode() in old.buffer
            assert await db.load_match("alice", "bob") == before
            with contextlib.suppress(TimeoutError):
                while True:  # what carol was told so far
                    await carol.line(0.5)
            await carol.send("rawwho")
            lines = await carol.expect("6")
            who = [clip.WhoInfo.parse(line).name for line in lines if line.startswith("5 ")]
            assert sorted(who) == ["alice", "bob", "carol"], carol.seen
            await alice_west.send("resign n")  # west writes on
            await bob_west.expect_prefix("alice wants to resign.", timeout=10)
            after = await db.load_match("alice", "bob")
            assert after is not None and before is not None and after.events != before.events
        finally:
            await db.close()
        for client in (alice, bob, carol, alice_west, bob_west):
            await client.close()
