"""SIGKILL durability (issue 5 item 4; architecture.md "Data flow": persist, then announce).

The server runs as a real subprocess (``python -m server``) on an SQLite file, and on a
PostgreSQL database of its own when ``FIBS_TEST_DATABASE_URL`` is set. Two
scripted CLIP clients play an unlimited match; at seeded random moments the server is
killed with SIGKILL, which gives it no chance to save anything. Each time the test reads
the saved match straight from the database file and checks that

* every ``<name> moves ... .`` line a client was told is in the stored move record, in
  order, and the record holds at most one move more (the one stored but not yet sent);
* the last board each client saw is a state of the stored record, and the stored state
  is that one or at most one move later, never an earlier one;

then restarts the server on the same file, logs both players in again, resumes the
match (``invite bob`` without a length, ``join alice``) and checks that the board both
get on resuming shows exactly the stored state. The server's own dice are committed
(issue 30): every start and resume tells the same commitment, and after every kill each
stored roll is the one that commitment's seeds give (``backgammon.fair_dice.verify``), so
no kill changed a die. Every read has a timeout; the whole
test is bounded; the subprocess is always killed at the end.

On PostgreSQL a second test cuts the server's database connections in the middle of the
match (``pg_terminate_backend``, what a restart of PostgreSQL does to them) several
times: the match goes on, no client is told of a failure, and nothing a client was told
is missing from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backgammon.board import Colour, Player, Position
from backgammon.dice import Roll, SeededDice
from backgammon.events import CheckersMoved, GameStarted, GameWon
from backgammon.fair_dice import record_games, record_proof, verify
from backgammon.match import Phase
from backgammon.moves import apply_moves, legal_plays
from backgammon.notation import format_move, format_moves
from backgammon.snapshot import match_from_json
from db.records import UserSettings
from db.repository import Database
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.mat_export import transcript_from_snapshot
from server.tables.matches import whole_snapshot
from server.world.passwords import hash_password_sync
from server.world.session import DEFAULT_TOGGLES, storable_toggles
from tests.conftest import PG_URL_VARIABLE, postgres_database, terminate_backends

from .conftest import IAC_WONT_TTYPE, TEST_COST, ScriptedClient
from .test_fair_dice import COMMITTED, found

ROOT = Path(__file__).resolve().parents[2]
SEED = 4
KILLS = 4
"""How many times the server is killed in the middle of the match."""
TEST_LIMIT = 150.0
"""Seconds the whole test may take."""
NAMES = ("alice", "bob")
"""alice invites, so she is the stored match's player 0."""
CONFIG = """\
[limits]
negotiation_wait = 0.1
login_delay = 0
commands_per_second = 10000
command_burst = 10000

[passwords]
scrypt_n = 16
scrypt_r = 1
scrypt_p = 1
"""
_LISTENING = re.compile(r"fibs-server listening on (\S+):(\d+)")

Key = tuple[int, int, Position]
"""A state as boards show it: the score (player 0 first) and the position."""


@dataclass
class Client:
    """One scripted player and everything it was told, over every server run."""

    name: str
    player: Player
    rng: random.Random
    client: ScriptedClient | None = None
    moves_seen: list[str] = field(default_factory=list)
    """The opponent's ``moves`` lines, in order."""
    failures: list[str] = field(default_factory=list)
    """Internal-error replies (an action the server could not store)."""
    last_key: Key | None = None

    def key(self, line: str) -> Key:
        view = parse_board(line)
        position = view.position(self.player)
        if self.player == 0:
            return (view.player_score, view.opponent_score, position)
        return (view.opponent_score, view.player_score, position)

    async def react(self, line: str) -> None:
        """What a simple bot does: roll, play a random legal move, join the next game."""
        assert self.client is not None
        if line.startswith(f"{NAMES[1 - self.player]} moves "):
            self.moves_seen.append(line)
        elif line == replies.INTERNAL_ERROR:
            self.failures.append(line)
        elif line == replies.ROLL_OR_DOUBLE:
            await self.client.send("roll")
        elif line == replies.JOIN_NEXT_GAME:
            await self.client.send("join")
        elif line.startswith("board:"):
            self.last_key = self.key(line)
            view = parse_board(line)
            if view.turn is view.colour and view.player_dice != (0, 0) and view.can_move:
                plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
                play = self.rng.choice(plays)
                await self.client.send("move " + format_moves(play.moves, view.colour))

    async def play(self) -> None:
        """React to every line until the connection breaks (the server was killed)."""
        assert self.client is not None
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                await self.react(await self.client.line(timeout=30))


@dataclass
class Server:
    """The server subprocess."""

    process: asyncio.subprocess.Process
    port: int

    async def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()  # SIGKILL
        await self.process.wait()


@contextlib.asynccontextmanager
async def running_server(url: str, config: Path, log: Path) -> AsyncIterator[Server]:
    """``python -m server`` on a free port; killed on the way out whatever happens."""
    with log.open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--web-port",
            "0",  # no web listener: port 8080 may be taken
            "--database",
            url,
            "--config",
            str(config),
            "--log-level",
            "WARNING",
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    server = None
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        found = _LISTENING.search(line.decode())
        assert found, f"no listening line: {line!r}; log: {log.read_text()[-2000:]}"
        server = Server(process, int(found[2]))
        yield server
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def login(port: int, name: str) -> ScriptedClient:
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    await client.prompt(replies.LOGIN_PROMPT, timeout=10)
    await client.send(f"login sigkill_test 1008 {name} secret")
    await client.expect("6", timeout=10)
    return client


@dataclass
class Stored:
    """The saved match as the database file holds it after a kill."""

    moves: list[list[str]]
    """Each player's ``moves`` lines, as the opponent would have been told them."""
    keys: list[Key]
    """Every state a board can have shown, in order."""
    after_move: list[int]
    """For each state, how many moves the record holds up to it."""
    commitment: str
    """The commitment of the stored dice (issue 30), every stored roll checked against it."""
    between_games: bool = False
    """The match was stored between two games."""

    def resumed_key(self) -> Key:
        """What a board shows once the stored match is resumed: its last state, or
        between games the next game's starting position (D101)."""
        score0, score1, position = self.keys[-1]
        return (score0, score1, Position.start() if self.between_games else position)

    def last_index(self, key: Key) -> int:
        """Where the state a client last saw is in the record. Between games that may
        be the board of the resumed match, the next game's starting position (D101), if
        the server was killed again before the next game began."""
        if self.between_games and key == self.resumed_key():
            return len(self.keys) - 1
        indexes = [i for i, k in enumerate(self.keys) if k == key]
        assert indexes, f"a client saw a state the database does not hold: {key}"
        return indexes[-1]


async def read_saved(url: str) -> Stored:
    db = await Database.open(url, migrate=False)
    try:
        saved = await db.load_match(*NAMES)
    finally:
        await db.close()
    assert saved is not None, "the match is not in the database"
    transcript = transcript_from_snapshot(whole_snapshot(saved))
    moves: list[list[str]] = [[], []]
    keys: list[Key] = []
    after_move: list[int] = []
    count = 0
    for game in transcript.games:
        started = game[0]
        assert isinstance(started, GameStarted)
        colours = {started.o_player: Colour.O, 1 - started.o_player: Colour.X}
        score = started.score
        position = Position.start()
        keys.append((*score, position))
        after_move.append(count)
        for event in game:
            if isinstance(event, CheckersMoved):
                texts = [format_move(m, colours[event.player]) for m in event.moves]
                moves[event.player].append(replies.moves(NAMES[event.player], texts))
                position, _ = apply_moves(position, event.player, event.moves)
                count += 1
                keys.append((*score, position))
                after_move.append(count)
            elif isinstance(event, GameWon):
                keys.append((*event.score, position))
                after_move.append(count)
    match = match_from_json(json.loads(saved.snapshot)["match"], SeededDice(0))
    assert keys[-1] == (match.score[0], match.score[1], match.position)
    _, dice = record_proof(whole_snapshot(saved))
    assert dice is not None, "the server's dice were not committed"
    verdict = verify(dice, record_games(whole_snapshot(saved)))
    assert verdict.verified, f"a stored roll is not the committed one: {verdict}"
    return Stored(
        moves,
        keys,
        after_move,
        dice.seeds.commitment,
        between_games=match.phase is Phase.GAME_OVER,
    )


def check_durable(stored: Stored, players: Sequence[Client]) -> None:
    """Nothing a client was told is missing from the database, which is at most one
    move ahead of what the clients know."""
    told = 0
    for me in players:
        mover = 1 - me.player
        record = stored.moves[mover]
        assert record[: len(me.moves_seen)] == me.moves_seen, (
            f"{me.name} was told moves of {NAMES[mover]} the database does not hold"
        )
        told += len(me.moves_seen)
    assert sum(len(m) for m in stored.moves) - told <= 1
    for me in players:
        assert me.last_key is not None
        seen = stored.last_index(me.last_key)
        assert stored.after_move[-1] - stored.after_move[seen] <= 1, (
            f"{me.name}'s last board is more than one move behind the database"
        )


async def resume(
    port: int, players: Sequence[Client], *, first: bool
) -> tuple[list[str], list[list[str]]]:
    """Log both in, start (``first``) or resume the match; each one's first board and the
    lines before it. A new match brings its boards with the opening roll; after a resume
    each client asks for its board, as the bots do (none is pushed, D105)."""
    alice, bob = players
    for me in players:
        me.client = await login(port, me.name)
    assert alice.client is not None and bob.client is not None
    await alice.client.send("invite bob unlimited" if first else "invite bob")
    await bob.client.expect("Type 'join alice' to accept.", timeout=10)
    await bob.client.send("join alice")
    boards = []
    earlier = []
    for me in players:
        assert me.client is not None
        if not first:
            await me.client.expect_prefix("points for ", timeout=10)
            await me.client.expect_prefix("points for ", timeout=10)
            await me.client.send("board")
        lines = []
        while not (line := await me.client.line(timeout=10)).startswith("board:"):
            lines.append(line)
        boards.append(line)
        earlier.append(lines)
    return boards, earlier


@contextlib.asynccontextmanager
async def database(backend: str, tmp_path: Path) -> AsyncIterator[str]:
    """The URL of a new database with the two players: an SQLite file, or a PostgreSQL
    database dropped afterwards."""
    if backend == "sqlite":
        yield await _with_players(f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}")
        return
    server = os.environ.get(PG_URL_VARIABLE)
    if not server:
        pytest.skip(
            f"the SIGKILL test on PostgreSQL: set {PG_URL_VARIABLE}="
            "postgresql+asyncpg://USER@HOST:PORT/DB to run it (README, 'Tests')"
        )
    async with postgres_database(server) as url:
        yield await _with_players(url)


async def _with_players(url: str) -> str:
    db = await Database.open(url)
    try:
        for name in NAMES:
            await db.create_user(
                name,
                hash_password_sync("secret", TEST_COST),
                toggles={**storable_toggles(DEFAULT_TOGGLES), "ready": True},
                settings=UserSettings(boardstyle=3),
            )
    finally:
        await db.close()
    return url


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_sigkill_loses_nothing_a_client_was_told(tmp_path: Path, backend: str) -> None:
    async with database(backend, tmp_path) as url:
        await _kill_and_resume(url, tmp_path)


async def _kill_and_resume(url: str, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    config = tmp_path / "fibs.conf"
    config.write_text(CONFIG)
    log = tmp_path / "server.log"
    players = [Client(name, i, random.Random(rng.random())) for i, name in enumerate(NAMES)]
    stored: Stored | None = None
    committed: set[str] = set()
    async with asyncio.timeout(TEST_LIMIT):
        for run in range(KILLS + 1):
            async with running_server(url, config, log) as server:
                boards, earlier = await resume(server.port, players, first=run == 0)
                for me in players:  # the start and every resume tell one commitment
                    assert me.client is not None
                    committed |= {m[1] for m in found(me.client, COMMITTED)}
                assert len(committed) == 1
                assert stored is None or stored.commitment in committed
                if stored is not None:
                    # The resumed board shows exactly what the database held.
                    for me, board in zip(players, boards, strict=True):
                        assert me.key(board) == stored.resumed_key()
                if run == KILLS:
                    await server.kill()
                    break
                for me, lines, board in zip(players, earlier, boards, strict=True):
                    for line in lines:  # e.g. "It's your turn. Please roll or double"
                        await me.react(line)
                    await me.react(board)
                tasks = [asyncio.create_task(me.play()) for me in players]
                await asyncio.sleep(rng.uniform(0.3, 1.5))
                await server.kill()
                await asyncio.gather(*tasks)  # each ends when its connection breaks
            for me in players:
                assert me.client is not None
                await me.client.close()
            stored = await read_saved(url)
            check_durable(stored, players)
            assert stored.commitment in committed
            for me in players:
                # On resuming, a move stored but never announced is only in the board:
                # from here on the clients continue from the stored record.
                me.moves_seen = list(stored.moves[1 - me.player])
    for me in players:
        if me.client is not None:
            await me.client.close()
    assert stored is not None and stored.after_move[-1] >= 2 * KILLS, (
        "the clients hardly played: the kills tested nothing"
    )


TERMINATIONS = 4
"""How many times the server's database connections are cut in the middle of the match."""


async def test_terminated_database_connections_lose_nothing(tmp_path: Path) -> None:
    """PostgreSQL ends the server's connections (``pg_terminate_backend``) while the
    match is played: the server opens new ones, the match goes on, no action is reported
    as failed, and nothing a client was told is missing from the database."""
    rng = random.Random(SEED + 1)
    config = tmp_path / "fibs.conf"
    config.write_text(CONFIG)
    log = tmp_path / "server.log"
    players = [Client(name, i, random.Random(rng.random())) for i, name in enumerate(NAMES)]
    async with database("postgresql", tmp_path) as url, asyncio.timeout(TEST_LIMIT):
        async with running_server(url, config, log) as server:
            boards, earlier = await resume(server.port, players, first=True)
            for me, lines, board in zip(players, earlier, boards, strict=True):
                for line in lines:
                    await me.react(line)
                await me.react(board)
            tasks = [asyncio.create_task(me.play()) for me in players]
            for _ in range(TERMINATIONS):
                await asyncio.sleep(rng.uniform(0.3, 1.0))
                assert await terminate_backends(url) >= 1  # at least the writer's
                # The match goes on: moves made after the cut reach the opponent.
                seen = sum(len(me.moves_seen) for me in players)
                for _ in range(400):  # 20 s
                    if sum(len(me.moves_seen) for me in players) >= seen + 2:
                        break
                    await asyncio.sleep(0.05)
                else:
                    failures = [me.failures for me in players]
                    raise AssertionError(f"the match stopped: {failures}; {log.read_text()}")
            await server.kill()
            await asyncio.gather(*tasks)
        for me in players:
            assert me.client is not None
            await me.client.close()
        stored = await read_saved(url)
    check_durable(stored, players)
    assert [me.failures for me in players] == [[], []]
    assert "lost its connection" in log.read_text()
