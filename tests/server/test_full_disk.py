"""A full disk (issue 34 item 10, D296, D297, D390): the database on a small tmpfs filled to
its last byte, the real thing (the test mounts one; it is skipped where the machine does
not let it, saying why). SQLite's file lives there; on PostgreSQL a fresh database of the
test's own is created in a tablespace there (its tables and catalogs, not the server's
write-ahead log, which stays on the server's own disk: what fills up is where the rows
go, PostgreSQL's ``could not extend file``, SQLSTATE 53100 ``disk_full``).

What needs a write is refused with one clear line and no traceback, the log says so
once a minute, a login goes ahead when only its bookkeeping write fails, a match action
whose save fails is neither lost nor stranded (both players told, its lines sent once
the save succeeds), and everything is back by itself within 5 s of space returning.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from protocol import replies
from protocol.replies import Mode
from server.config import Settings
from tests.conftest import DbTarget, _admin_connection

from .conftest import ScriptedClient, clip_login, connect_from, make_user, running
from .sessions import start_match

BACK_WITHIN = 5.0
"""Seconds within which play and logins are back once the disk has room again."""


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str = "16m") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (root only), unmounted at the end."""
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("a full disk is tested on a tmpfs, which only root may mount")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Write a file on ``disk`` until no byte is left; return it (remove it to free)."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        block = b"\0" * 65536
        while True:
            try:
                os.write(fd, block)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                if len(block) == 1:
                    break
                block = block[: len(block) // 2]
    finally:
        os.close(fd)
    return filler


async def lines_for(client: ScriptedClient, seconds: float) -> list[str]:
    """Every line ``client`` gets in the next ``seconds``."""
    got: list[str] = []
    end = asyncio.get_running_loop().time() + seconds
    with contextlib.suppress(TimeoutError):
        while (left := end - asyncio.get_running_loop().time()) > 0:
            got.append(await client.line(left))
    return got


async def answers_time(client: ScriptedClient) -> None:
    """``client`` is logged in and served: ``time`` is answered (after any status lines
    of others that come first)."""
    await client.send("time")
    while not (await client.line()).endswith(" UTC )"):
        pass


@contextlib.asynccontextmanager
async def full(disk: Path, target: DbTarget) -> AsyncIterator[None]:
    """``disk`` filled to its last byte until the end of the block, then freed.

    On PostgreSQL that alone leaves the tables room: a row goes into free space of a page
    the table already has, and only a new page needs the disk. A table that has grown to
    its disk's end has none, and the saved matches' tables are made so: a transaction
    holds a snapshot (the row versions it may see cannot be pruned) while their rows are
    updated to themselves until PostgreSQL can add no page; their next write then needs
    one, as on SQLite, where every commit needs the disk.
    """
    filler = fill(disk)
    if target.backend != "postgresql":
        try:
            yield
        finally:
            filler.unlink()
        return
    holder = await _admin_connection(target.url)
    writer = await _admin_connection(target.url)
    try:
        await holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        await holder.fetchval("SELECT count(*) FROM saved_matches")
        for table, column in (("saved_matches", "updated_at"), ("saved_match_events", "events")):
            with contextlib.suppress(asyncpg.exceptions.DiskFullError):
                for _ in range(100_000):
                    await writer.execute(f"UPDATE {table} SET {column} = {column}")
                raise AssertionError(f"{table}: the disk never ran out")
        yield
    finally:
        filler.unlink()
        await holder.close()
        await writer.close()


@contextlib.asynccontextmanager
async def postgres_on(disk: Path, url: str) -> AsyncIterator[DbTarget]:
    """A new PostgreSQL database whose every file is on ``disk`` (a tablespace there, the
    database created in it), on the server of ``url``; dropped afterwards. The server
    runs on this machine (the tablespace is a directory of its own file system), as the
    postgres user, who must own the directory."""
    admin = await _admin_connection(url)
    name = f"fibs_full_{uuid.uuid4().hex[:12]}"
    try:
        if not await admin.fetchval("SELECT rolsuper FROM pg_roles WHERE rolname = current_user"):
            pytest.skip("a tablespace is created only by a PostgreSQL superuser")
        home = await admin.fetchval("SHOW data_directory")
        if not Path(home).is_dir():
            pytest.skip("the PostgreSQL server is not on this machine: no tablespace here")
        owner = Path(home).stat()
        os.chown(disk, owner.st_uid, owner.st_gid)
        await admin.execute(f"CREATE TABLESPACE \"{name}\" LOCATION '{disk}'")
        try:
            await admin.execute(f'CREATE DATABASE "{name}" TABLESPACE "{name}"')
            try:
                yield DbTarget(
                    "postgresql",
                    make_url(url).set(database=name).render_as_string(hide_password=False),
                )
            finally:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.execute(f'DROP TABLESPACE IF EXISTS "{name}"')
    finally:
        await admin.close()


@pytest.fixture
async def on_tmpfs(tmp_path: Path, db_target: DbTarget) -> AsyncIterator[DbTarget]:
    """The test's database on a tmpfs of its own at ``tmp_path / "disk"``: an SQLite file,
    or a PostgreSQL database in a tablespace there (D390)."""
    if db_target.backend == "sqlite":
        with small_tmpfs(tmp_path / "disk") as disk:
            yield DbTarget("sqlite", f"sqlite+aiosqlite:///{disk / 'fibs.db'}")
        return
    # The postgres user must reach the tablespace's directory: pytest's own is private.
    reachable = Path(tempfile.mkdtemp(prefix="fibs-disk-"))
    reachable.chmod(0o755)
    try:
        with small_tmpfs(reachable / "disk", "64m") as disk:
            (tmp_path / "disk").symlink_to(disk)
            async with postgres_on(disk, db_target.url) as target:
                yield target
    finally:
        shutil.rmtree(reachable, ignore_errors=True)


@pytest.mark.alone  # a full PostgreSQL tablespace fails others' CREATE/DROP DATABASE
async def test_a_full_disk_refuses_writes_and_strands_nothing(
    settings: Settings,
    on_tmpfs: DbTarget,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    opened: list[ScriptedClient] = []
    async with running(settings.replace(database=on_tmpfs.url), on_tmpfs) as app:

        async def connect() -> ScriptedClient:
            client = await connect_from(app)
            opened.append(client)
            return client

        try:
            await make_user(app, "carol")
            await make_user(app, "dave")
            alice, bob = await start_match(connect, app, 3)
            full_disk = full(tmp_path / "disk", on_tmpfs)
            await full_disk.__aenter__()

            # A write a user asks for: one clear line, the session goes on.
            await alice.send("message dave hello")
            await alice.expect(replies.DATABASE_OUTAGE)
            # A login whose bookkeeping write fails goes ahead.
            carol = await clip_login(connect, app, "carol", create=False)
            await answers_time(carol)
            # A move whose save fails: both players told; nothing else yet.
            await alice.send("move 8-5 6-5")
            for player in (alice, bob):
                await player.expect(replies.MATCH_NOT_SAVED)
            meanwhile = await lines_for(bob, 1.5)  # retried every second, still full
            assert not [line for line in meanwhile if " moves " in line or "board:" in line]

            await full_disk.__aexit__(None, None, None)
            loop = asyncio.get_running_loop()
            freed = loop.time()
            await bob.expect(replies.moves("alice", ["8-5", "6-5"]), timeout=BACK_WITHIN)
            assert loop.time() - freed < BACK_WITHIN
            # Writes and logins are back, the move stored before it was announced.
            assert await app.db.load_match("alice", "bob") is not None
            await alice.send("message dave again")
            await alice.expect(replies.message_saved("dave", Mode.CLIP))
            dave = await clip_login(connect, app, "dave", create=False)
            await answers_time(dave)
            assert any(line.endswith(" again") for line in dave.seen)
            assert not any(line.endswith(" hello") for line in dave.seen)
        finally:
            for client in opened:
                await client.close()
    problems = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not problems, [r.getMessage() for r in problems]
    outages = [r.getMessage() for r in caplog.records if "database not available" in r.getMessage()]
    assert len(outages) == 1, outages  # once a minute: the others are counted
    assert "disk is full" in outages[0]


async def test_free_space_is_watched_with_a_warning_before_it_runs_out(
    settings: Settings, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    """D302: while the SQLite file's disk has less than ``[server] min_free_disk_mb``
    free, the log warns (at the start, then once a minute); 0 turns it off; a
    PostgreSQL database is not watched here."""
    caplog.set_level(logging.INFO)
    beyond = settings.replace(min_free_disk_mb=1 << 40)  # more than any disk has
    async with running(beyond, db_target):
        await asyncio.sleep(0.05)
    warned = [r.getMessage() for r in caplog.records if "min_free_disk_mb" in r.getMessage()]
    if db_target.backend == "postgresql":
        assert warned == []
        return
    assert len(warned) == 1 and warned[0].startswith("the database's disk has "), warned
    caplog.clear()
    async with running(beyond.replace(min_free_disk_mb=0), db_target):
        await asyncio.sleep(0.05)
    assert not [r for r in caplog.records if "min_free_disk_mb" in r.getMessage()]


@pytest.mark.alone  # a full PostgreSQL tablespace fails others' CREATE/DROP DATABASE
async def test_a_player_who_leaves_during_a_failing_save_is_not_held(
    settings: Settings, on_tmpfs: DbTarget, tmp_path: Path
) -> None:
    """D297: while a move's save is retried, a player who drops ends the retries (their
    logout waits for the match): they leave the presence at once, and the match
    resumes later from its last save, without the move that was never stored."""
    opened: list[ScriptedClient] = []
    async with running(settings.replace(database=on_tmpfs.url), on_tmpfs) as app:

        async def connect() -> ScriptedClient:
            client = await connect_from(app)
            opened.append(client)
            return client

        try:
            alice, bob = await start_match(connect, app, 3)
            full_disk = full(tmp_path / "disk", on_tmpfs)
            await full_disk.__aenter__()
            await alice.send("move 8-5 6-5")
            await bob.expect(replies.MATCH_NOT_SAVED)
            bob.writer.transport.abort()
            loop = asyncio.get_running_loop()
            end = loop.time() + 3.0
            while app.registry.get("bob") is not None:
                assert loop.time() < end, "bob is still online 3 s after he dropped"
                await asyncio.sleep(0.05)
            await full_disk.__aexit__(None, None, None)
            await answers_time(alice)  # alice goes on
            saved = await app.db.load_match("alice", "bob")
            assert saved is not None  # saved at the start, without the move
        finally:
            for client in opened:
                await client.close()
