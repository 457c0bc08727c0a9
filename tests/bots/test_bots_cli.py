"""``python -m bots.random`` and ``python -m bots.gnubg`` as processes against the fake server."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from backgammon.board import Colour
from bots.gnubg.engine import find_gnubg
from bots.login import bot_client_name
from protocol import replies
from tests.bots.fakefibs import FakeFibs, board
from tests.conftest import GNUBG_MISSING

ROOT = Path(__file__).resolve().parents[2]


async def run_bot(module: str, port: int, *extra: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        module,
        "--port",
        str(port),
        "--name",
        "Bot",
        "--password",
        "secret",
        "--matches",
        "1",
        *extra,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def finish(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 30.0)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, err.decode()


@pytest.mark.parametrize(
    ("module", "extra", "marker"),
    [
        ("bots.random", ("--seed", "1"), bot_client_name("Random Bot")),
        pytest.param(
            "bots.gnubg",
            ("--plies", "0"),
            bot_client_name("Gnubg Bot"),
            marks=pytest.mark.skipif(find_gnubg() is None, reason=GNUBG_MISSING),
        ),
    ],
)
async def test_a_bot_command_registers_plays_and_logs_out_after_its_matches(
    module: str, extra: tuple[str, ...], marker: str
) -> None:
    async with FakeFibs() as fibs:
        proc = await run_bot(module, fibs.port, *extra)
        try:
            session = await fibs.session(timeout=30.0)
            assert fibs.registered == ["Bot"]
            assert session.client == marker
            await session.expect("show saved", timeout=10.0)
            await session.send(*replies.invitation("alice", 1))
            await session.expect("join alice", timeout=10.0)
            await session.send(board(Colour.X, dice=(4, 2), me_name="Bot"))
            move = await session.expect(re.compile(r"move .*"), timeout=30.0)
            assert len(move.split()) == 3
            await session.send(replies.you_win_match(1, 1, 0))
            await session.expect("bye", timeout=10.0)
            status, err = await finish(proc)
            assert status == 0, err
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
