"""PostgreSQL restarting under the server (issue 34 item 15 and item 10's last point,
D296): warnings without tracebacks, a clear line for what could not be done, nothing
lost, and everything back by itself.

The PostgreSQL is one of the test's own (``initdb`` in a temporary folder, on a free
port), so that stopping and starting it disturbs no other test or database; the test is
skipped, saying why, where ``initdb`` is missing or cannot be run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from protocol import replies
from server.config import Settings
from tests.conftest import DbTarget, only_on
from tests.ports import free_port

from .conftest import ScriptedClient, connect_from, make_user, running
from .sessions import start_match

BACK_WITHIN = 5.0
"""Seconds within which commands work again once PostgreSQL is back."""


@dataclass
class OwnPostgres:
    """A PostgreSQL server of the test's own."""

    url: str
    start: Callable[[], None]
    stop: Callable[[], None]


@contextlib.asynccontextmanager
async def own_postgres() -> AsyncIterator[OwnPostgres]:
    initdb = shutil.which("initdb")
    pg_ctl = shutil.which("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("initdb and pg_ctl are needed for a PostgreSQL of the test's own")
    run_as: list[str] = []
    owner: pwd.struct_passwd | None = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a 'postgres' user to run PostgreSQL as")
        run_as = ["runuser", "-u", "postgres", "--"]
    folder = Path(tempfile.mkdtemp(prefix="fibs-pg-"))
    folder.chmod(0o755)
    data = folder / "data"
    if owner is not None:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    port = free_port()

    def ctl(*words: str) -> None:
        subprocess.run([*run_as, pg_ctl, "-D", str(data), *words], check=True, capture_output=True)

    def start() -> None:
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        ctl("-o", options, "-l", str(folder / "log"), "-w", "start")

    def stop() -> None:
        ctl("-m", "fast", "-w", "stop")

    made = subprocess.run(
        [*run_as, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"initdb failed: {made.stderr.strip()[-300:]}")
    try:
        start()
        yield OwnPostgres(f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres", start, stop)
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            ctl("-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


async def until_answered(client: ScriptedClient, line: str, wanted: str, within: float) -> None:
    """Send ``line`` until a reply starts with ``wanted`` (the database is back)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        await client.send(line)
        got = await client.line()
        while not (got.startswith(wanted) or got == replies.DATABASE_OUTAGE):
            got = await client.line()  # the match's lines
        if got.startswith(wanted):
            return
        assert loop.time() < end, f"still {got!r} after {within} s"
        await asyncio.sleep(0.2)


async def test_a_postgresql_restart_is_warned_about_and_loses_nothing(
    settings: Settings, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL stopped (fast: every connection terminated) and started again under
    a match: a read meanwhile is answered the database line; a move made while it is
    down is stored and announced once it is back; commands work again within 5 s; no
    ERROR and no traceback in the log, only warnings."""
    only_on("sqlite", db_target, "a PostgreSQL of the test's own, run once")
    caplog.set_level(logging.INFO)
    async with own_postgres() as postgres:
        target = DbTarget("postgresql", postgres.url)
        opened: list[ScriptedClient] = []
        async with running(settings.replace(database=postgres.url), target) as app:

            async def connect() -> ScriptedClient:
                client = await connect_from(app)
                opened.append(client)
                return client

            try:
                await make_user(app, "dave")
                alice, bob = await start_match(connect, app, 3)
                await asyncio.to_thread(postgres.stop)
                await alice.send("whois dave")  # a read: the pool cannot connect
                await alice.expect(replies.DATABASE_OUTAGE)
                await alice.send("move 8-5 6-5")  # the writer retries meanwhile
                await asyncio.sleep(1.0)
                await asyncio.to_thread(postgres.start)
                restarted = asyncio.get_running_loop().time()
                await bob.expect(replies.moves("alice", ["8-5", "6-5"]), timeout=BACK_WITHIN)
                await until_answered(alice, "whois dave", "Information about dave:", BACK_WITHIN)
                assert asyncio.get_running_loop().time() - restarted < BACK_WITHIN
                saved = await app.db.load_match("alice", "bob")
                assert saved is not None
            finally:
                for client in opened:
                    await client.close()
    problems = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not problems, [r.getMessage() for r in problems]
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("database not available" in w for w in warned), warned
