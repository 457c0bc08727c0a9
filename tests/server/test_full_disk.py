"""A full disk (issue 34 item 10, D296, D297): SQLite on a small tmpfs filled to its last
byte, the real thing (the test mounts one; it is skipped where the machine does not let
it, saying why).

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
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from protocol import replies
from protocol.replies import Mode
from server.config import Settings
from tests.conftest import DbTarget, only_on

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


@pytest.fixture
async def on_tmpfs(tmp_path: Path, db_target: DbTarget) -> AsyncIterator[DbTarget]:
    only_on("sqlite", db_target, "a full disk under SQLite")
    with small_tmpfs(tmp_path / "disk") as disk:
        yield DbTarget("sqlite", f"sqlite+aiosqlite:///{disk / 'fibs.db'}")


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
            filler = fill(tmp_path / "disk")

            # A write a user asks for: one clear line, the session goes on.
            await alice.send("message dave hello")
            await alice.expect(replies.DATABASE_OUTAGE)
            # A login whose bookkeeping write fails goes ahead.
            carol = await clip_login(connect, app, "carol", create=False)
            await carol.send("time")
            assert (await carol.line()).endswith(" UTC )")
            # A move whose save fails: both players told; nothing else yet.
            await alice.send("move 8-5 6-5")
            for player in (alice, bob):
                await player.expect(replies.MATCH_NOT_SAVED)
            meanwhile = await lines_for(bob, 1.5)  # retried every second, still full
            assert not [line for line in meanwhile if " moves " in line or "board:" in line]

            filler.unlink()
            loop = asyncio.get_running_loop()
            freed = loop.time()
            await bob.expect(replies.moves("alice", ["8-5", "6-5"]), timeout=BACK_WITHIN)
            assert loop.time() - freed < BACK_WITHIN
            # Writes and logins are back, the move stored before it was announced.
            assert await app.db.load_match("alice", "bob") is not None
            await alice.send("message dave again")
            await alice.expect(replies.message_saved("dave", Mode.CLIP))
            dave = await clip_login(connect, app, "dave", create=False)
            await dave.send("time")
            assert (await dave.line()).endswith(" UTC )")
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
            filler = fill(tmp_path / "disk")
            await alice.send("move 8-5 6-5")
            await bob.expect(replies.MATCH_NOT_SAVED)
            bob.writer.transport.abort()
            loop = asyncio.get_running_loop()
            end = loop.time() + 3.0
            while app.registry.get("bob") is not None:
                assert loop.time() < end, "bob is still online 3 s after he dropped"
                await asyncio.sleep(0.05)
            filler.unlink()
            await alice.send("time")  # alice goes on
            while not (await alice.line()).endswith(" UTC )"):
                pass
            saved = await app.db.load_match("alice", "bob")
            assert saved is not None  # saved at the start, without the move
        finally:
            for client in opened:
                await client.close()
