"""A fixed workload for the server: the same command lines in the same order, every run.

``benchmarks/load.py`` measures a server under open-loop load: what it sends depends on
the clock, and its figures move with the machine. This module plays a workload that
does not: ``--pairs`` pairs of CLIP clients log in one after the other, switch ``toggle
double`` off, and play ``--matches`` 1-point matches each with random legal moves
(``random.Random(--seed)``), **one command at a time**: the pairs take turns, a pair's
command is written only when the answer to the one before it has been read, and the
next pair's only when the pair's next command is known. The server's dice are seeded
too: it runs under a wrapper that replaces ``os.urandom`` (and ``random``'s system
source) with a ``random.Random(--seed)`` byte stream before the server is imported, so
its server seeds, the players' default seeds and the first player are the same in
every run; ``PYTHONHASHSEED`` is fixed. The same code then answers the same lines in
the same order, and a count of its instructions (``benchmarks/instructions.py
--fixed``) is the same within 0.1 % from one run to the next whatever else the
machine does (docs/performance.md §24).

The server is any checkout's (``--root``: another commit's worktree), run with that
checkout's shipped ``fibs.conf`` and the same overrides (address, a fresh SQLite file,
``--set``); the accounts are made by that checkout's own ``db`` package, so its schema
is the one its server expects.

Run alone (``python benchmarks/fixed_play.py --pairs 10 --matches 2``) it prints the
workload's counts as JSON: the actions (every command after the logins' ``toggle
double``: invitations, joins, moves) and the matches played.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/fixed_play.py` from anywhere
    sys.path.insert(0, str(ROOT))

from load import CHEAP_COST, HOST, PASSWORD, parse_setting, read_config  # noqa: E402  (beside it)

from backgammon.dice import Roll  # noqa: E402
from backgammon.moves import legal_plays  # noqa: E402
from bots.decide import move_command  # noqa: E402
from protocol.board_fibs import parse_board  # noqa: E402
from server.__main__ import allocator_variables  # noqa: E402
from server.world.passwords import hash_password_sync  # noqa: E402

CLIENT_NAME = "fixedplay"
BOT_TOGGLES = {"ready": True, "notify": False, "report": False}
"""What the players set (bots/client.py's BOT_TOGGLES): no login and match reports."""
ANSWER_TIMEOUT = 600.0
"""Seconds a line may take (under callgrind the server is about 50 times slower)."""
START_TIMEOUT = 600.0
"""Seconds the server may take to listen (under callgrind its imports take minutes)."""

SEEDED_SERVER = """\
import os, random, sys
_bytes = random.Random(int(sys.argv[1]))
def _urandom(n):
    return _bytes.randbytes(n)
os.urandom = _urandom
random._urandom = _urandom
random.seed(int(sys.argv[1]))
from server.__main__ import main
sys.exit(main(sys.argv[2:]))
"""
"""``python -m server`` with every draw of ``os.urandom`` (the dice's seeds, the first
player, salts) from a seeded stream: replaced before the server's modules are imported,
so the default arguments that name ``os.urandom`` take the seeded one."""

MAKE_ACCOUNTS = """\
import asyncio, json, sys
from db.records import UserSettings
from db.repository import Database
async def make(url, spec):
    db = await Database.open(url)
    try:
        for name in spec["names"]:
            await db.create_user(
                name, spec["hash"], toggles=spec["toggles"], settings=UserSettings(boardstyle=3)
            )
    finally:
        await db.close()
asyncio.run(make(sys.argv[1], json.loads(sys.argv[2])))
"""
"""Run with the server's checkout on ``sys.path``: its schema, its account records."""


def is_report(line: str) -> bool:
    """A ``report`` line about some match starting or ending (§4.3), not a reply to us
    (load.py's test)."""
    return (
        line.endswith((" point match.", " unlimited match.")) and not line.startswith("** ")
    ) or " point match against " in line


class WorkloadError(Exception):
    """The server did not answer as the workload expects (a refusal, a lost line)."""


def write_config(
    root: Path, workdir: Path, port: int, web_port: int, settings: Sequence[str]
) -> Path:
    """``root``'s shipped fibs.conf with the run's address, web port and ``settings``
    (``SECTION.KEY=VALUE``); the path of the file written in ``workdir``."""
    config = read_config(root / "fibs.conf")
    values = [("server", "host", HOST), ("server", "port", str(port))]
    if config.get("web", "port", fallback="0") != "0":
        values.append(("web", "port", str(web_port)))
    values += [parse_setting(text) for text in settings]
    for section, key, value in values:
        if not config.has_section(section):
            config.add_section(section)
        config[section][key] = value
    path = workdir / "fibs.conf"
    with path.open("w", encoding="utf-8") as f:
        config.write(f)
    return path


def make_accounts(root: Path, url: str, names: list[str]) -> None:
    spec = {
        "names": names,
        "hash": hash_password_sync(PASSWORD, CHEAP_COST),
        "toggles": BOT_TOGGLES,
    }
    subprocess.run(
        [sys.executable, "-c", MAKE_ACCOUNTS, url, json.dumps(spec)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        check=True,
    )


@dataclass
class Side:
    """One player: its connection and what it has to do next."""

    name: str
    partner: str
    inviter: bool
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    due: str | None = None
    """The next command (``"move"``: a move chosen when it is sent)."""
    pending: bool = False
    """A command written and its answer not read yet."""
    last_board: str | None = None
    move_on_board: bool = False
    matches_left: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def send(self, line: str) -> None:
        self.writer.write(line.encode() + b"\r\n")

    async def line(self) -> str:
        raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n"), ANSWER_TIMEOUT)
        return raw[:-2].decode()


class Workload:
    """The pairs, their matches and the one command in flight."""

    def __init__(self, pairs: list[tuple[Side, Side]], rng: random.Random) -> None:
        self.pairs = pairs
        self.rng = rng
        self.actions = 0
        self.kinds: dict[str, int] = {}
        """Actions by command word (invite, join, move, roll)."""
        self.matches = 0

    async def read_forever(self, side: Side) -> None:
        while True:
            self.on_line(side, await side.line())
            side.changed.set()

    def on_line(self, side: Side, line: str) -> None:
        """What a line means for its reader (load.py's Player.on_line, in order)."""
        if not line or line[:1].isdigit() or is_report(line):
            return  # CLIP who updates; other matches' reports
        side.pending = False
        if line.startswith("board:"):
            side.last_board = line
            if side.move_on_board:
                side.move_on_board = False
                side.due = "move"
            return
        if line.startswith("** "):
            if not line.startswith(("** You invited", "** You are now playing", "** Player ")):
                raise WorkloadError(f"{side.name}: {line}")
            return
        if line.startswith("Please move"):
            side.due = "move"
        elif line == "It's your turn to move.":
            side.move_on_board = True
        elif line.startswith("It's your turn. Please roll"):
            side.due = "roll"
        elif " wants to play " in line and not side.inviter:
            side.due = f"join {line.split(' ', 1)[0]}"
        elif " point match " in line and (line.startswith("You win the ") or " wins the " in line):
            side.last_board = None
            if side.inviter:
                self.matches += 1
                side.matches_left -= 1
                if side.matches_left > 0:
                    side.due = f"invite {side.partner} 1"

    def command(self, side: Side) -> str:
        due, side.due = side.due, None
        assert due is not None
        if due != "move":
            return due
        if side.last_board is None:
            raise WorkloadError(f"{side.name}: asked to move without a board")
        view = parse_board(side.last_board)
        plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
        if not plays:
            raise WorkloadError(f"{side.name}: no legal play on {side.last_board}")
        play = self.rng.choice(plays)
        return move_command(play, view.colour)

    async def next_side(self, pair: tuple[Side, Side]) -> Side | None:
        """The side of ``pair`` with a command due, once it is known; None: done."""
        inviter, invitee = pair
        while True:
            for side in pair:
                if side.due is not None:
                    return side
            if inviter.matches_left <= 0:
                return None
            waits = [asyncio.ensure_future(s.changed.wait()) for s in pair]
            await asyncio.wait(waits, timeout=ANSWER_TIMEOUT, return_when="FIRST_COMPLETED")
            for w in waits:
                w.cancel()
            if not (inviter.changed.is_set() or invitee.changed.is_set()):
                raise WorkloadError(f"{inviter.name} and {invitee.name}: nothing due")
            inviter.changed.clear()
            invitee.changed.clear()

    async def play(self) -> None:
        """Round robin over the pairs, one command in flight in the whole server."""
        active = list(self.pairs)
        while active:
            for pair in list(active):
                side = await self.next_side(pair)
                if side is None:
                    active.remove(pair)
                    continue
                side.pending = True
                side.changed.clear()
                command = self.command(side)
                side.send(command)
                self.actions += 1
                kind = command.split(" ", 1)[0]
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
                while side.pending:
                    await asyncio.wait_for(side.changed.wait(), ANSWER_TIMEOUT)
                    side.changed.clear()


async def log_in(name: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(HOST, port)
    await asyncio.wait_for(reader.readuntil(b"login: "), ANSWER_TIMEOUT)
    writer.write(f"login {CLIENT_NAME} 1008 {name} {PASSWORD}\r\n".encode())
    while True:  # the end of the who list ends the login (§1.4)
        line = await asyncio.wait_for(reader.readuntil(b"\r\n"), ANSWER_TIMEOUT)
        if line.startswith(b"** "):
            raise WorkloadError(f"{name}: {line.decode().strip()}")
        if line == b"6\r\n":
            return reader, writer


async def drive(port: int, pairs: int, matches: int, seed: int) -> dict[str, Any]:
    """Log every player in, then play; the counts."""
    sides: list[Side] = []
    for k in range(pairs):
        a, b = f"fa{k:03d}", f"fb{k:03d}"
        for name, partner, inviter in ((a, b, True), (b, a, False)):
            reader, writer = await log_in(name, port)
            side = Side(name, partner, inviter, reader, writer, matches_left=matches)
            side.send("toggle double")  # on again at every login (§4.15)
            answer = await side.line()
            while not answer.startswith("** You"):
                answer = await side.line()
            sides.append(side)
    workload = Workload(
        [(sides[i], sides[i + 1]) for i in range(0, len(sides), 2)], random.Random(seed)
    )
    readers = [asyncio.create_task(workload.read_forever(s)) for s in sides]
    try:
        for first, _ in workload.pairs:
            if matches > 0:
                first.due = f"invite {first.partner} 1"
        await workload.play()
        await asyncio.sleep(1.0)  # the last lines to the players read before the stop
    finally:
        for task in readers:
            task.cancel()
        failed = [t.exception() for t in readers if t.done() and not t.cancelled()]
        for side in sides:
            side.writer.close()
    for exc in failed:
        if exc is not None:
            raise exc
    return {
        "actions": workload.actions,
        "kinds": dict(sorted(workload.kinds.items())),
        "matches": workload.matches,
        "players": len(sides),
    }


@dataclass
class Run:
    """One server process and its workload: the counts, the seconds, the profile."""

    counts: dict[str, Any]
    seconds: float
    profile: Path | None


def run(
    root: Path,
    pairs: int,
    matches: int,
    seed: int,
    settings: Sequence[str],
    port: int,
    callgrind: Path | None,
    server_env: Sequence[str] = (),
) -> Run:
    """The server of checkout ``root`` (under callgrind when ``callgrind`` names its
    output) on a fresh SQLite file, the workload against it, then SIGTERM;
    ``server_env`` (``NAME=VALUE`` items) is set in the server's environment only."""
    with tempfile.TemporaryDirectory(prefix="fibs-fixed-") as tmp:
        workdir = Path(tmp)
        url = f"sqlite+aiosqlite:///{workdir / 'fibs.db'}"
        names = [f"f{ab}{k:03d}" for k in range(pairs) for ab in "ab"]
        make_accounts(root, url, names)
        config = write_config(root, workdir, port, port + 1, settings)
        valgrind = (
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}"]
            if callgrind
            else []
        )
        command = [
            *valgrind,
            sys.executable,
            "-c",
            SEEDED_SERVER,
            str(seed),
            "--config",
            str(config),
            "--database",
            url,
            "--log-level",
            "WARNING",
        ]
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
        # The allocator root's python -m server starts with (D434, D450; before the
        # setting, Python's own), set here: the wrapper above does not restart with it.
        env.update(item.partition("=")[::2] for item in server_env if "=" in item)
        allocator = read_config(config).get("server", "allocator", fallback="pymalloc")
        env.update(allocator_variables(allocator, env))
        started = time.monotonic()
        with (workdir / "server.log").open("wb") as log:
            proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=log)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().decode(errors="replace")
            if "listening on" not in line:
                log_text = (workdir / "server.log").read_text(errors="replace")[-2000:]
                raise WorkloadError(f"server did not start: {line!r}\n{log_text}")
            counts = asyncio.run(drive(port, pairs, matches, seed))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=START_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        seconds = time.monotonic() - started
        errors = [
            line
            for line in (workdir / "server.log").read_text(errors="replace").splitlines()
            if " ERROR " in line or line.startswith("Traceback")
        ]
        if errors:
            raise WorkloadError(f"errors in the server's log: {errors[:5]}")
    return Run(counts, seconds, callgrind)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=ROOT, help="the server's checkout")
    p.add_argument("--pairs", type=int, default=10, help="matches played side by side")
    p.add_argument("--matches", type=int, default=2, help="1-point matches each pair plays")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--port", type=int, default=4510, help="the server's; the web door +1")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    p.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="the server's only"
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(
        args.root.resolve(),
        args.pairs,
        args.matches,
        args.seed,
        args.set,
        args.port,
        None,
        args.env,
    )
    out: dict[str, Any] = {**result.counts, "seconds": round(result.seconds, 1)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
