"""``python -m server --cluster URL``: real server processes as nodes of one world, on
PostgreSQL and the machine's NATS (issue 32 item 1; D340).

Each test starts its nodes as subprocesses (``python -m server``), each on a free port,
sharing a fresh PostgreSQL database and the NATS at 127.0.0.1:4222 under a subject
prefix of the test's own; the processes are killed at the end whatever happens.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from db.repository import Database
from protocol import clip, replies
from protocol.replies import Mode
from server.world.passwords import hash_password_sync
from server.world.session import DEFAULT_TOGGLES, storable_toggles
from tests.conftest import PG_URL_VARIABLE, postgres_database

from .conftest import TEST_COST
from .test_sigkill import login

ROOT = Path(__file__).resolve().parents[2]
NATS_URL = "nats://127.0.0.1:4222"
_LISTENING = re.compile(r"fibs-server listening on (\S+):(\d+)")


@contextlib.asynccontextmanager
async def node(url: str, prefix: str, name: str, log: Path) -> AsyncIterator[int]:
    """One node (``python -m server --cluster``) on a free port: its port."""
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
        yield int(found[2])
    finally:
        if process.returncode is None:
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
