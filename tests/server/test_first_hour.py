"""A newcomer's first hour in telnet mode, as a transcript checked in as a fixture.

Three people who know backgammon but not FIBS connect with a plain telnet program:
they register as guests, look around, chat, make mistakes a newcomer makes, and two of
them play a 3-point match with a double, a leave and a resume, a resignation and the
Crawford game, while the third watches. Everything each of them sees is written down
as their terminal shows it (the ``> `` prompts, what they typed, nothing of the telnet
negotiation) in ``first_hour.txt`` beside this file. The test replays the hour on a
seeded server with a fixed clock and compares: any change of a text a person reads
shows up here as a diff, to be read through and accepted with
``FIBS_WRITE_TRANSCRIPT=1 python -m pytest tests/server/test_first_hour.py``.

The transcript is there to be read by a person: nothing in it should puzzle someone who
knows backgammon but not FIBS (the issue on the first hour).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from backgammon.dice import SeededDice
from backgammon.match import Match, Phase
from backgammon.notation import format_moves
from protocol.match_view import perspective_of
from server.app import App
from server.config import Settings
from tests.conftest import DbTarget

from .conftest import running

FIXTURE = Path(__file__).with_name("first_hour.txt")
WRITE = os.environ.get("FIBS_WRITE_TRANSCRIPT") == "1"
FIXED_NOW = 1_795_000_000.0
"""The server's clock for the whole hour (Unix time): the dates in the transcript."""
SEED = 7
QUIET = 0.3
"""Seconds without a byte to any person after which a step is over."""
STEP_LIMIT = 15.0
"""Seconds a step may take at most before the test fails."""

IAC, SB, SE = 255, 250, 240


def strip_telnet(data: bytes) -> tuple[bytes, bytes]:
    """``data`` without its telnet commands, and an incomplete command left at its end."""
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte != IAC:
            out.append(byte)
            i += 1
            continue
        if i + 1 >= len(data):
            return bytes(out), data[i:]
        command = data[i + 1]
        if command == IAC:
            out.append(IAC)
            i += 2
        elif command == SB:
            end = data.find(bytes((IAC, SE)), i + 2)
            if end < 0:
                return bytes(out), data[i:]
            i = end + 2
        elif command >= 251:  # WILL, WONT, DO, DONT and an option
            if i + 2 >= len(data):
                return bytes(out), data[i:]
            i += 3
        else:
            i += 2
    return bytes(out), b""


class Person:
    """Someone at a telnet program: what the terminal shows, and typing into it."""

    def __init__(self, name: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.name = name
        self.reader = reader
        self.writer = writer
        self.screen = ""
        self.pending = b""
        self.closed = False
        self.changed = 0.0
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            chunk = await self.reader.read(65536)
            if not chunk:
                self.closed = True
                self.changed = loop.time()
                return
            text, self.pending = strip_telnet(self.pending + chunk)
            self.screen += text.decode("utf-8", "replace").replace("\r\n", "\n")
            self.changed = loop.time()

    def type(self, line: str, *, hidden: bool = False) -> None:
        """Type ``line`` and Enter. A hidden line (a password, typed while the server has
        turned the echo off) shows nothing, not even the line end: what the terminal shows
        next is the server's."""
        if not hidden:
            self.screen += line + "\n"
        self.writer.write(line.encode() + b"\r\n")

    async def close(self) -> None:
        self._task.cancel()
        self.writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self.writer.wait_closed()


class Hour:
    """The three people and the server they use; one step at a time."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.people: dict[str, Person] = {}

    async def arrive(self, name: str) -> Person:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.app.port)
        person = Person(name, reader, writer)
        self.people[name] = person
        await self.settle()
        return person

    async def step(self, name: str, line: str, *, hidden: bool = False) -> None:
        """``name`` types ``line``; then wait until nobody receives anything more."""
        person = self.people[name]
        person.type(line, hidden=hidden)
        await self.settle(person, len(person.screen))

    async def settle(self, actor: Person | None = None, typed: int = 0) -> None:
        """Wait for the actor's answer, then until nobody has received anything for
        :data:`QUIET` seconds."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.sleep(QUIET)
        while True:
            last = max(p.changed for p in self.people.values())
            answered = actor is None or actor.closed or len(actor.screen) > typed
            if answered and loop.time() - last >= QUIET:
                return
            if loop.time() - started > STEP_LIMIT:
                raise AssertionError(f"the server kept sending for {STEP_LIMIT:.0f} s")
            await asyncio.sleep(QUIET / 4)

    def match(self) -> Match | None:
        live = self.app.local_tables.matches.get("alice")
        return live.match if live is not None else None

    async def play_turn(self) -> bool:
        """The player who must act rolls or makes the first legal play; False when the
        match is over or waits for something else (a double, a resignation, a join)."""
        live = self.app.local_tables.matches.get("alice")
        if live is None:
            return False
        match = live.match
        player = match.to_act
        if player is None or match.resignation is not None or match.phase is Phase.DOUBLED:
            return False
        name = live.names[player]
        if match.phase is Phase.TURN:
            await self.step(name, "roll")
        else:
            plays = match.legal_plays()
            colour = perspective_of(match, player)
            await self.step(name, "move " + format_moves(plays[0].moves, colour))
        return True

    def between_games(self) -> bool:
        match = self.match()
        return match is not None and match.phase is Phase.GAME_OVER

    def transcript(self) -> str:
        parts = []
        for name, person in self.people.items():
            parts.append(f"==================== what {name} saw ====================\n")
            parts.append(person.screen.rstrip() + "\n\n")
        return "".join(parts)


@pytest.fixture
async def hour(settings: Settings, db_target: DbTarget) -> AsyncIterator[Hour]:
    async with running(
        settings,
        db_target,
        clock=lambda: FIXED_NOW,
        dice=lambda: SeededDice(SEED),
        coin=lambda: 0,
    ) as app:
        h = Hour(app)
        yield h
        for person in h.people.values():
            await person.close()


async def register(hour: Hour, name: str, password: str) -> Person:
    person = await hour.arrive(name)
    await hour.step(name, "guest")
    await hour.step(name, f"name {name}")
    await hour.step(name, password, hidden=True)
    await hour.step(name, password, hidden=True)
    return person


async def play_until(hour: Hour, done: Callable[[], bool], limit: int = 100) -> None:
    """Play turns until ``done()`` is true."""
    for _ in range(limit):
        if done():
            return
        if not await hour.play_turn():
            return
    raise AssertionError("the match did not get there")


async def test_first_hour(hour: Hour) -> None:
    # Three people register; each then looks around a little.
    await register(hour, "alice", "wonderland")
    await hour.step("alice", "help")
    await register(hour, "bob", "builder12")
    await register(hour, "carol", "christmas")
    await hour.step("alice", "who")
    await hour.step("alice", "shout Hello everyone, I'm new here")
    await hour.step("bob", "tell alice Welcome! A game?")
    await hour.step("alice", "tell bob Sure, 3 points?")
    # Mistakes a newcomer makes, and what they are told.
    await hour.step("alice", "sh")
    await hour.step("alice", "invite bob three")
    await hour.step("alice", "invite bob 3")
    await hour.step("bob", "toggle ready")
    await hour.step("alice", "toggle ready")
    await hour.step("alice", "invite bob 3")
    await hour.step("bob", "join alice")
    await hour.step("carol", "watch alice")
    live = hour.app.local_tables.matches["alice"]
    match = live.match

    # Game 1: a few turns, a move out of turn, a double taken.
    await play_until(hour, lambda: match.version >= 6)
    waiting = live.names[1 - (match.to_act or 0)]
    await hour.step(waiting, "move 13-9")
    await play_until(hour, lambda: match.phase is Phase.TURN and live.names[match.turn] == "alice")
    await hour.step("alice", "double")
    await hour.step("bob", "accept")
    for _ in range(4):
        await hour.play_turn()

    # alice has to go: the match is saved, and resumed when she is back.
    await hour.step("alice", "leave")
    await hour.step("alice", "invite bob")
    await hour.step("bob", "join alice")
    await hour.step("carol", "watch alice")
    await hour.play_turn()

    # bob gives the game up (two points: the cube is on 2); the Crawford game follows,
    # and bob gives that one up too, which ends the match.
    await hour.step("bob", "resign normal")
    await hour.step("alice", "accept")
    for name in ("alice", "bob"):
        if hour.between_games():
            await hour.step(name, "join")
    for _ in range(4):
        await hour.play_turn()
    await hour.step("carol", "board")
    await hour.step("bob", "resign normal")
    await hour.step("alice", "accept")
    assert "alice" not in hour.app.local_tables.matches
    for name in ("carol", "bob", "alice"):
        await hour.step(name, "bye")

    text = hour.transcript()
    if WRITE or not FIXTURE.exists():
        FIXTURE.write_text(text)
        if not WRITE:
            pytest.fail(f"{FIXTURE.name} was missing and is written now: read it, then commit it")
    assert text == FIXTURE.read_text(), (
        f"what people see changed: compare with {FIXTURE.name}, read the new text through "
        "and accept it with FIBS_WRITE_TRANSCRIPT=1"
    )
