"""The bots against the real server, end to end (issue 6, "How it is checked").

Every test runs real :class:`bots.client.FibsClient` bots (the library exactly as
``python -m bots.random`` / ``python -m bots.gnubg`` run it) against a real server: an
in-process :class:`server.app.App` on port 0 (tests 1-3: its dice and colour coin can be
seeded, its state observed) or ``python -m server`` as a subprocess (test 4: the server
is stopped with SIGTERM and started again). The bots create their accounts through the
guest dialogue (§1.7); the server's scrypt cost is the cheap test cost and its command
rate limit is raised, so nothing waits on either.

Bounded: every test runs under ``asyncio.timeout``; every client is stopped and every
task cancelled on the way out; the server subprocess is killed and gnubg closed whatever
happens (and checked to be gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import random
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

import server.tables.match_boards as match_boards
from backgammon.board import Colour, Position
from backgammon.dice import Roll, SeededDice
from backgammon.match import Match, Phase
from backgammon.snapshot import match_from_json
from bots import events as ev
from bots.backoff import Backoff
from bots.client import ClientConfig, FibsClient
from bots.decide import Due, crawford_game, due
from bots.gnubg import GnubgEngine, GnubgStrategy
from bots.gnubg.engine import find_gnubg
from bots.random import RandomStrategy
from bots.strategy import CubeAnswer, Strategy
from db.records import MatchRecord, SavedMatch
from db.repository import Database
from protocol import match_view
from protocol.board_view import NO_DICE, BoardState, BoardView
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from tests.conftest import GNUBG_MISSING, DbTarget

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "secret"
TEST_SETTINGS = Settings(
    host="127.0.0.1",
    port=0,
    negotiation_wait=0.05,
    login_delay=0.0,
    commands_per_second=10_000.0,  # no rate limit in the way of bots that do not pace
    command_burst=10_000,
    match_reminder=0.0,
    match_timeout=0.0,
    scrypt_n=16,  # a cheap password hash cost (fibs.conf's is for production)
    scrypt_r=1,
    scrypt_p=1,
)
"""The servers of these tests (the database comes from each test)."""
TEST_LIMIT = 120.0
"""Seconds a whole test may take (each runs in a few seconds)."""
CONFIG_KEYS = {
    "limits": (
        "negotiation_wait",
        "login_delay",
        "commands_per_second",
        "command_burst",
        "match_reminder",
        "match_timeout",
    ),
    "passwords": ("scrypt_n", "scrypt_r", "scrypt_p"),
}
""":data:`TEST_SETTINGS` as fibs.conf sections (for the server subprocess)."""


# -- the server ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def serving(db_target: DbTarget, dice_seed: int) -> AsyncIterator[App]:
    """An in-process server on port 0: every match's dice seeded with ``dice_seed``; the
    inviter plays O in the first game."""
    settings = TEST_SETTINGS.replace(database=db_target.url)
    db = await db_target.open()
    service = Service(App(settings, db, dice=lambda: SeededDice(dice_seed), coin=lambda: 0))
    await service.start()
    try:
        yield service.app
    finally:
        await service.stop()
        await db.close()


# -- the bots --------------------------------------------------------------------------------


@dataclass
class Bot:
    """A library client and every event it read."""

    client: FibsClient
    events: list[ev.Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.client.listeners.append(self.events.append)

    @property
    def name(self) -> str:
        return self.client.config.name

    def boards(self) -> list[ev.Board]:
        """The boards this bot got as a player (``You`` boards)."""
        return [e for e in self.events if isinstance(e, ev.Board) and e.view.player == "You"]

    def matches_over(self) -> list[ev.MatchOver]:
        return [e for e in self.events if isinstance(e, ev.MatchOver)]

    def tail(self, n: int = 8) -> list[ev.Event]:
        return self.events[-n:]


def make_bot(
    port: int,
    name: str,
    strategy: Strategy,
    *,
    invite: str | None = None,
    length: int = 3,
) -> Bot:
    """A bot that logs out after one finished match; ``invite``: it invites that player."""
    config = ClientConfig(
        "127.0.0.1",
        port,
        name,
        PASSWORD,
        timeout=10.0,
        board_wait=1.0,
        command_interval=0.0,  # the test server has no rate limit; pacing: test_bots_client
        backoff=Backoff(initial=0.1, maximum=0.5, rng=random.Random(name)),
        invite=invite,
        invite_length=length,
        max_matches=1,
    )
    return Bot(FibsClient(config, strategy))


@contextlib.asynccontextmanager
async def running(bots: Sequence[Bot]) -> AsyncIterator[list[asyncio.Task[None]]]:
    """Run the bots as tasks; on the way out stop every client and cancel what is left."""
    tasks = [asyncio.create_task(b.client.run(), name=b.name) for b in bots]
    try:
        yield tasks
    finally:
        for b in bots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(b.client.stop(), 5.0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def finish(bots: Sequence[Bot], tasks: Sequence[asyncio.Task[None]], limit: float) -> None:
    """Wait until every bot's ``run()`` returns (one match played, logged out)."""
    try:
        async with asyncio.timeout(limit):
            await asyncio.gather(*tasks)
    except TimeoutError:
        tails = {b.name: b.tail() for b in bots}
        raise AssertionError(
            f"the bots did not finish in {limit} s; last events: {tails}"
        ) from None


async def play_match(bots: Sequence[Bot], limit: float) -> None:
    async with running(bots) as tasks:
        await finish(bots, tasks, limit)


def check_match_over(winner: Bot, loser: Bot, length: int) -> tuple[int, int]:
    """Both bots saw the one match end, with the same winner and score; (winner's points,
    loser's points)."""
    for bot in (winner, loser):
        assert bot.client.matches_finished == 1, (bot.name, bot.tail())
        assert len(bot.matches_over()) == 1, (bot.name, bot.matches_over())
    won, lost = winner.matches_over()[0], loser.matches_over()[0]
    assert won.winner is None, f"{winner.name} did not win: {won}"
    assert lost.winner == winner.name, f"{loser.name} saw {lost}"
    assert won.length == lost.length == length
    assert won.score == lost.score
    points, other = won.score
    assert points >= length > other
    return points, other


async def only_record(db: Database, a: str, b: str) -> MatchRecord:
    """The one finished match of ``a`` and ``b`` in the database."""
    records = [r for r in await db.list_match_records(a) if {r.player1, r.player2} == {a, b}]
    assert len(records) == 1, records
    return records[0]


def check_record(record: MatchRecord, winner: str, length: int, score: tuple[int, int]) -> None:
    """The record agrees with what the bots were told: winner, length, final score."""
    assert record.match_length == length
    assert record.winner == winner
    scores = {record.player1: record.score1, record.player2: record.score2}
    assert scores[winner] == score[0] >= length
    loser = record.player2 if record.player1 == winner else record.player1
    assert scores[loser] == score[1] < length


def winner_of(bots: Sequence[Bot]) -> tuple[Bot, Bot]:
    """(winner, loser) as the first bot's MatchOver says."""
    a, b = bots
    over = a.matches_over()
    assert over, f"{a.name} never saw the match end: {a.tail()}"
    return (a, b) if over[0].winner is None else (b, a)


# -- what the server's own state was at every board (test 3) ----------------------------------


@dataclass(frozen=True)
class ServerState:
    """The rules core's match when the server rendered a board from it."""

    names: tuple[str, str]
    position: Position
    """Players 0 and 1 as in ``names``, each in their own numbering."""
    o_player: int
    score: tuple[int, int]
    phase: Phase
    to_act: int | None
    turn: int
    dice: Roll | None
    cube: int
    doubler: int | None
    cube_owner: int | None
    crawford_game: bool
    barred: int | None = None
    """The player the server rolls for next, shown as not allowed to double (D278)."""

    @classmethod
    def of(cls, match: Match, names: Sequence[str]) -> ServerState:
        return cls(
            names=(names[0], names[1]),
            position=match.position,  # immutable: the state at this moment
            o_player=match.o_player,
            score=(match.score[0], match.score[1]),
            phase=match.phase,
            to_act=match.to_act,
            turn=match.turn,
            dice=match.dice,
            cube=match.cube,
            doubler=match.offer.doubler if match.offer is not None else None,
            cube_owner=match.cube_owner,
            crawford_game=match.crawford_game,
        )


class BoardRecorder:
    """Records, for every ``board:`` line the server renders, the server's state then.

    The server renders every board in one module, ``server.tables.match_boards``: it reads a
    state of the match with ``board_state(match, names)`` (once per state, right after
    the action that made it, inside the match's lock) and renders it with
    ``board_lines(state, colour, style)``; the recorder wraps both names there:
    ``board_state`` notes the match's state, ``board_lines`` files it under each line it
    produced. A line is rendered for one receiver (field 1 is
    ``You``, field 2 the opponent's name), so a bot's line finds its own rendering.
    """

    def __init__(self) -> None:
        self._states: dict[int, tuple[BoardState, ServerState]] = {}
        self.rendered: dict[str, list[ServerState]] = {}

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        module = match_boards
        monkeypatch.setattr(module, "board_state", self._wrap_state(match_view.board_state))
        monkeypatch.setattr(module, "board_lines", self._wrap_lines(match_view.board_lines))
        monkeypatch.setattr(module, "rolled_state", self._wrap_rolled(match_view.rolled_state))
        monkeypatch.setattr(
            module, "rolled_for_state", self._wrap_rolled_for(match_view.rolled_for_state)
        )

    def _wrap_rolled_for(
        self, original: Callable[[BoardState, Colour], BoardState]
    ) -> Callable[[BoardState, Colour], BoardState]:
        """The board before the server rolls for a player who may not double (D278): the
        server's state then, that player shown as not allowed to double."""

        def rolled_for_state(state: BoardState, roller: Colour) -> BoardState:
            kept = self._states.get(id(state))
            assert kept is not None and kept[0] is state, "a board before a roll, unseen"
            after = kept[1]
            player = after.o_player if roller is Colour.O else 1 - after.o_player
            barred = original(state, roller)
            if barred is not state:
                self._states[id(barred)] = (barred, dataclasses.replace(after, barred=player))
            return barred

        return rolled_for_state

    def _wrap_rolled(
        self, original: Callable[[BoardState, Colour, tuple[int, int]], BoardState]
    ) -> Callable[[BoardState, Colour, tuple[int, int]], BoardState]:
        """The board of a roll that cannot be played (D108) shows the moment of the roll:
        the server's state then is the state after it, with the roller on turn and the
        dice out."""

        def rolled_state(state: BoardState, roller: Colour, dice: tuple[int, int]) -> BoardState:
            kept = self._states.get(id(state))
            assert kept is not None and kept[0] is state, "a roll board from an unseen state"
            after = kept[1]
            player = after.o_player if roller is Colour.O else 1 - after.o_player
            then = dataclasses.replace(
                after, phase=Phase.MOVE, to_act=player, turn=player, dice=Roll(*dice)
            )
            rolled = original(state, roller, dice)
            self._states[id(rolled)] = (rolled, then)
            return rolled

        return rolled_state

    def _wrap_state(
        self, original: Callable[[Match, Sequence[str]], BoardState]
    ) -> Callable[[Match, Sequence[str]], BoardState]:
        def board_state(match: Match, names: Sequence[str]) -> BoardState:
            state = original(match, names)
            self._states[id(state)] = (state, ServerState.of(match, names))  # keeps it alive
            return state

        return board_state

    def _wrap_lines(self, original: Callable[..., list[str]]) -> Callable[..., list[str]]:
        def board_lines(state: BoardState, *args: Any, **kwargs: Any) -> list[str]:
            lines = original(state, *args, **kwargs)
            kept = self._states.get(id(state))
            assert kept is not None and kept[0] is state, "a board rendered from an unseen state"
            for line in lines:
                if line.startswith("board:"):
                    self.rendered.setdefault(line, []).append(kept[1])
            return lines

        return board_lines

    def check(self, bot: Bot) -> int:
        """Every board the bot got parses (through the library) to the server's state at
        the moment the server rendered it. Returns how many boards were checked."""
        boards = [e for e in bot.events if isinstance(e, ev.Board)]
        for number, board in enumerate(boards):
            assert board.view.player == "You", f"{bot.name} got a board as a watcher"
            states = self.rendered.get(board.line)
            assert states, f"{bot.name} got a board the server never rendered: {board.line}"
            for state in states:  # the same text from two moments: both must agree
                problem = disagreement(bot.name, board, state)
                assert problem is None, f"board {number} of {bot.name}: {problem}\n{board.line}"
        return len(boards)


def disagreement(name: str, board: ev.Board, state: ServerState) -> str | None:
    """How the library's reading of ``board`` differs from the server's ``state``, if it does."""
    view = board.view
    p = state.names.index(name)
    q = 1 - p
    colour = {state.o_player: Colour.O, 1 - state.o_player: Colour.X}
    # FIBS's fields (docs/protocol-decisions.md D24, D100-D102): between games the next
    # game's opening table (turn 0, cube 1, 1:1); in a game the cube's owner alone may
    # double (both with a centred cube, the Crawford game too, but not the player the
    # server rolls for next, D278), nobody while a double is pending, and the turn is
    # the side that must answer a double, else the roller's.
    in_game = state.phase in (Phase.TURN, Phase.MOVE, Phase.DOUBLED)
    between = not in_game and state.phase is not Phase.MATCH_OVER
    position = Position.start() if between else state.position
    owner = None if between else state.cube_owner
    pending = state.phase is Phase.DOUBLED and state.doubler is not None
    if not in_game:
        turn = None
    elif pending and state.doubler is not None:
        turn = colour[1 - state.doubler]
    else:
        turn = colour[state.turn]
    expected: dict[str, object] = {
        "position (the bot as player 0)": position if p == 0 else position.swapped(),
        "opponent": state.names[q],
        "colour": colour[p],
        "score": (state.score[p], state.score[q]),
        "turn": turn,
        "cube": 1 if between else state.cube,
        "was doubled": pending and state.doubler == q,
        "may double": (
            not pending and owner in (None, p) and state.barred != p,
            not pending and owner in (None, q) and state.barred != q,
        ),
    }
    dice = NO_DICE
    if state.phase is Phase.MOVE and state.dice is not None:
        dice = (state.dice.d1, state.dice.d2)
    expected["dice"] = dice if state.turn == p else NO_DICE
    expected["opponent's dice"] = dice if state.turn == q else NO_DICE
    parsed: dict[str, object] = {
        "position (the bot as player 0)": board.position(),
        "opponent": view.opponent,
        "colour": view.colour,
        "score": (view.player_score, view.opponent_score),
        "turn": view.turn,
        "cube": view.cube,
        "was doubled": view.was_doubled,
        "may double": (view.player_may_double, view.opponent_may_double),
        "dice": view.player_dice,
        "opponent's dice": view.opponent_dice,
    }
    if state.phase in (Phase.TURN, Phase.MOVE, Phase.DOUBLED):  # a game is on
        # (Between games the board already shows the next game's score: not compared.)
        expected["Crawford game"] = state.crawford_game
        parsed["Crawford game"] = crawford_game(view)
    for key, value in expected.items():
        if parsed[key] != value:
            return f"{key}: parsed {parsed[key]!r}, the server had {value!r}"
    # What the library decides is due agrees with whom the server waits for.
    what = due(view)
    if what is Due.MOVE and not (state.phase is Phase.MOVE and state.to_act == p):
        return f"the library would move; the server waits for {state.to_act} in {state.phase}"
    if what is Due.ANSWER and not (state.phase is Phase.DOUBLED and state.to_act == p):
        return f"the library would answer a double; the server is in {state.phase}"
    if what is Due.CUBE and not (state.phase is Phase.TURN and state.to_act == p):
        return f"the library would roll or double; the server is in {state.phase}"
    if state.to_act == p and state.phase in (Phase.MOVE, Phase.DOUBLED) and what is None:
        return f"the server waits for {name} in {state.phase}; the library sees nothing to do"
    return None


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> BoardRecorder:
    r = BoardRecorder()
    r.install(monkeypatch)
    return r


def check_boards(recorder: BoardRecorder, bots: Sequence[Bot]) -> int:
    checked = sum(recorder.check(b) for b in bots)
    assert checked > 0
    return checked


# -- 1. two random bots -----------------------------------------------------------------------


async def test_two_random_bots_finish_a_3_point_match(
    db_target: DbTarget, recorder: BoardRecorder
) -> None:
    async with asyncio.timeout(TEST_LIMIT), serving(db_target, dice_seed=1) as app:
        alice = make_bot(app.port, "alice", RandomStrategy(1), invite="bob", length=3)
        bob = make_bot(app.port, "bob", RandomStrategy(2))
        await play_match([alice, bob], limit=60.0)
        winner, loser = winner_of([alice, bob])
        score = check_match_over(winner, loser, 3)
        record = await only_record(app.db, "alice", "bob")
        check_record(record, winner.name, 3, score)
        assert await app.db.load_match("alice", "bob") is None  # no saved match is left
    check_boards(recorder, [alice, bob])


# -- 1b. several invitations at once -----------------------------------------------------------


async def test_a_bot_invited_by_two_players_at_once_plays_both_matches(
    db_target: DbTarget,
) -> None:
    """alice and carol invite bob once each, within a second (issue 19): bob plays alice's
    match, then joins carol's invitation, which waited on the server all along."""
    async with asyncio.timeout(TEST_LIMIT), serving(db_target, dice_seed=3) as app:
        bob = make_bot(app.port, "bob", RandomStrategy(2))
        bob.client.config.max_matches = 2
        alice = make_bot(app.port, "alice", RandomStrategy(1))
        carol = make_bot(app.port, "carol", RandomStrategy(4))
        bots = [bob, alice, carol]
        async with running(bots) as tasks:
            for b in bots:
                await asyncio.wait_for(b.client.logged_in.wait(), 30.0)
            await wait_ready(app, "bob")
            # bob reads nothing until both invitations are on the server: otherwise he
            # may join alice's before carol's arrives, which then finds him playing.
            conn = bob.client._conn
            assert conn is not None
            # asyncio's transport or uvloop's, which is no subclass of asyncio's classes
            held = cast(asyncio.ReadTransport, conn._writer.transport)
            held.pause_reading()
            await alice.client.invite("bob", 1)
            await carol.client.invite("bob", 1)
            await invited(app, "bob", ("alice", "carol"))
            held.resume_reading()
            await finish(bots, tasks, 60.0)
        assert bob.client.matches_finished == 2
        assert alice.client.matches_finished == carol.client.matches_finished == 1
        opponents = [e.opponent for e in bob.events if isinstance(e, ev.MatchStarted)]
        assert sorted(opponents) == ["alice", "carol"]
        for name in ("alice", "carol"):
            records = await app.db.list_match_records(name)
            assert [sorted((r.player1, r.player2)) for r in records] == [sorted((name, "bob"))]


async def invited(app: App, invitee: str, inviters: Sequence[str], limit: float = 30.0) -> None:
    """Until each of ``inviters`` has invited ``invitee`` on the server; failing within
    ``limit`` with what the server holds then, not at the test's own time limit."""
    deadline = time.monotonic() + limit
    while not set(inviters) <= app.local_tables.invitations.keys():
        online = {name: app.registry.get(name) is not None for name in (invitee, *inviters)}
        assert time.monotonic() < deadline, (app.local_tables.invitations, online)
        await asyncio.sleep(0.02)


async def wait_ready(app: App, name: str, limit: float = 30.0) -> None:
    """Until ``name`` is logged in with ``ready`` on (the bot sets it after login);
    failing within ``limit`` with what the server holds of ``name`` then."""
    deadline = time.monotonic() + limit
    while True:
        session = app.registry.get(name)
        if session is not None and session.toggles[Toggle.READY]:
            return
        assert time.monotonic() < deadline, f"{name} not ready: " + (
            "not logged in" if session is None else f"toggles {session.toggles}"
        )
        await asyncio.sleep(0.02)


# -- 1c. an offer pending at a save -----------------------------------------------------------


class FirstChanceDoubler(RandomStrategy):
    """Random plays; doubles at its first chance."""

    doubled = False

    async def should_double(self, view: BoardView) -> bool:
        if self.doubled:
            return False
        self.doubled = True
        return True


class SlowFirstTaker(RandomStrategy):
    """Random plays; its first take decision hangs (a stuck engine), later ones take."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.asked = asyncio.Event()
        self.answers = 0

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        self.answers += 1
        if self.answers == 1:
            self.asked.set()
            await asyncio.Event().wait()  # until the client cancels it
        return CubeAnswer.TAKE


async def test_a_double_pending_at_a_save_is_answered_after_the_resume(
    db_target: DbTarget,
) -> None:
    """alice doubles; bob's answer hangs; alice's connection drops, the match is saved
    with the double pending. alice logs in again, the match is resumed; bob sees the
    double only in the board he asks for (field 40) and takes it; the match ends."""
    taker = SlowFirstTaker(2)
    async with asyncio.timeout(TEST_LIMIT), serving(db_target, dice_seed=5) as app:
        alice = make_bot(app.port, "alice", FirstChanceDoubler(1), invite="bob", length=3)
        bob = make_bot(app.port, "bob", taker)
        bots = [alice, bob]
        async with running(bots) as tasks:
            await asyncio.wait_for(taker.asked.wait(), 30.0)
            session = app.registry.get("alice")
            assert session is not None
            session.output.abort()  # a network drop: the server saves the match (§4.9)
            await finish(bots, tasks, 60.0)
        assert any(isinstance(e, ev.MatchSaved) for e in bob.events)
        assert any(isinstance(e, ev.MatchStarted) and e.resumed for e in bob.events)
        assert taker.answers >= 2
        accepted = [e for e in alice.events if isinstance(e, ev.Text) and "accepts" in e.text]
        assert accepted and accepted[0].text.startswith("bob accepts the double.")
        check_match_over(*winner_of(bots), 3)


# -- 2. gnubg beats random --------------------------------------------------------------------

GNUBG_PLIES = 0
"""0-ply gnubg still wins a 3-point match against random play; it answers in milliseconds.
Every choice is deterministic (seeded dice, seeded random bot, gnubg without noise), so
the result is. With the seeds below (gnubg 1.07.001) gnubg doubles in the first game,
wins it 2-0 and wins the Crawford game."""


@pytest.mark.gnubg
@pytest.mark.skipif(find_gnubg() is None, reason=GNUBG_MISSING)
async def test_gnubg_bot_beats_a_random_bot_in_a_3_point_match(
    db_target: DbTarget, recorder: BoardRecorder
) -> None:
    engine = GnubgEngine(plies=GNUBG_PLIES, timeout=30.0)
    pid: int | None = None
    try:
        await asyncio.wait_for(engine.start(), 30.0)  # bounded by the engine's timeout too
        pid = engine.pid
        gnubg = GnubgStrategy(engine)
        async with asyncio.timeout(TEST_LIMIT), serving(db_target, dice_seed=7) as app:
            gnu = make_bot(app.port, "gnu", gnubg, invite="rando", length=3)
            rando = make_bot(app.port, "rando", RandomStrategy(3))
            await play_match([gnu, rando], limit=90.0)
            score = check_match_over(gnu, rando, 3)
            check_record(await only_record(app.db, "gnu", "rando"), "gnu", 3, score)
        assert gnubg.fallbacks == 0, "gnubg failed to answer some decisions"
        assert engine.restarts == 0
    finally:
        await engine.close()
    assert pid is not None and not Path(f"/proc/{pid}").exists(), "gnubg is still running"
    check_boards(recorder, [gnu, rando])


# -- 3. the library's boards are the server's positions ------------------------------------------


class CubeRandomStrategy(RandomStrategy):
    """Random plays and random cube actions, so boards show doubles, takes and owned cubes."""

    async def should_double(self, view: BoardView) -> bool:
        return view.cube < 4 and self.rng.random() < 0.04

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        return CubeAnswer.TAKE if self.rng.random() < 0.8 else CubeAnswer.DROP


async def test_every_board_the_bots_parse_is_the_servers_position(
    db_target: DbTarget, recorder: BoardRecorder
) -> None:
    """For every ``board:`` line both bots receive during a 5-point match, the position,
    colour, score, turn, dice, cube and pending double that the library parses (the
    :class:`bots.events.Board` each bot's listeners got, ``Board.position()`` with the
    bot as player 0: what the strategy is given) equal the server's own match at the
    moment the server rendered that line, and what the library thinks is due (move,
    answer the double, roll or double) is what the server waits for.

    How the server's state is observed: :class:`BoardRecorder` wraps the two functions
    every board rendering goes through (``board_state(match, names)``, then
    ``board_lines(state, ...)``) in the server module that renders boards, and files
    a copy of the :class:`~backgammon.match.Match`'s fields (``match.position`` is an
    immutable value) under each line rendered. The state is read inside the match's lock
    right after the batch of events that made it, so the state copied is the one the
    board is meant to show, even when one action sends several boards (a move, then the
    opponent's automatic roll). A bot's line is then looked up by its text (each
    line names its receiver's opponent and is rendered for one receiver). Looking at
    ``app.local_tables.matches[name].match`` when the line is *sent* would not do: an action's lines
    are sent together once it is stored, after later steps of the same action.

    The bots double and answer at random, so the match (seeds chosen for it) has
    offered and taken doubles, owned cubes, hits, bear-offs, several games with
    swapped colours, a Crawford game and a post-Crawford game; the test checks it did.
    """
    async with asyncio.timeout(TEST_LIMIT), serving(db_target, dice_seed=13) as app:
        alice = make_bot(app.port, "alice", CubeRandomStrategy(5), invite="bob", length=5)
        bob = make_bot(app.port, "bob", CubeRandomStrategy(6))
        await play_match([alice, bob], limit=60.0)
        winner, loser = winner_of([alice, bob])
        score = check_match_over(winner, loser, 5)
        check_record(await only_record(app.db, "alice", "bob"), winner.name, 5, score)
    checked = check_boards(recorder, [alice, bob])
    assert checked >= 100
    # The match covered what the parser has to get right.
    views = [b.view for bot in (alice, bob) for b in bot.boards()]
    colours = {b.view.colour for b in alice.boards()}
    assert colours == {Colour.O, Colour.X}, "alice never changed colour: one game only"
    assert any(v.was_doubled for v in views), "no double was offered"
    assert any(v.cube > 1 for v in views), "no double was taken"
    assert any(v.player_bar or v.opponent_bar for v in views), "nobody was ever hit"
    assert any(v.player_home or v.opponent_home for v in views), "nobody bore off"
    assert any(crawford_game(v) for v in views), "no Crawford game"
    assert any(v.post_crawford for v in views), "no post-Crawford game"


# -- 4. a server restart in the middle of a match ---------------------------------------------

RESTART_CONFIG = "".join(
    f"[{section}]\n" + "".join(f"{key} = {getattr(TEST_SETTINGS, key)}\n" for key in keys)
    for section, keys in CONFIG_KEYS.items()
)
_LISTENING = re.compile(r"fibs-server listening on (\S+):(\d+)")


@dataclass
class ServerProcess:
    """``python -m server`` on an SQLite file; restartable on the same port."""

    url: str
    config: Path
    log: Path
    port: int = 0
    process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        assert self.process is None
        with self.log.open("ab") as stderr:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server",
                "--config",
                str(self.config),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),  # 0 the first time, then the same port again
                "--web-port",
                "0",  # no web listener: port 8080 may be taken
                "--database",
                self.url,
                "--log-level",
                "WARNING",
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=asyncio.subprocess.PIPE,
                stderr=stderr,
            )
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), 30.0)
        found = _LISTENING.search(line.decode())
        assert found, f"the server did not start: {line!r}; log: {self.log_tail()}"
        self.port = int(found[2])

    async def terminate(self) -> int:
        """SIGTERM (the clean shutdown: every match saved) and wait; the exit status."""
        process, self.process = self.process, None
        assert process is not None
        process.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(process.wait(), 15.0)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise AssertionError(f"SIGTERM did not stop the server; {self.log_tail()}") from None

    async def kill(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.returncode is None:
                process.kill()
            await process.wait()

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.exists() else ""


@contextlib.contextmanager
def event_when(bot: Bot, predicate: Callable[[ev.Event], bool]) -> Iterator[asyncio.Event]:
    """An :class:`asyncio.Event` set the first time the bot reads an event ``predicate``
    accepts."""
    seen = asyncio.Event()

    def listener(event: ev.Event) -> None:
        if predicate(event):
            seen.set()

    bot.client.listeners.append(listener)
    try:
        yield seen
    finally:
        bot.client.listeners.remove(listener)


STOP_AFTER_BOARDS = 24
"""The server is stopped once the inviter has seen this many boards: about six turns
each into the first game. (The server's dice are not seeded here; no game of random
bots is that short, and a 3-point match takes a few hundred boards.)"""


async def test_bots_survive_a_server_restart_in_the_middle_of_a_match(tmp_path: Path) -> None:
    """Two random bots play a 3-point match on ``python -m server``; after
    :data:`STOP_AFTER_BOARDS` boards the server is stopped with SIGTERM (it saves the
    match and closes every connection) and started again on the same SQLite file and the
    same port (the client reconnects to the address it was configured with). Both bots
    reconnect on their own (backoff), resume the saved match through ``show saved`` /
    ``invite`` / ``join`` and finish it. The first board each bot reads after the restart
    shows the saved match's state (read from the database file while the server was
    down); the database then holds one finished match (the resumed one: same start time
    as the saved one) and no saved match. The server's dice are not seeded here (a
    subprocess): the bots' play is, and any dice must lead to a finished match.
    """
    url = f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}"
    config = tmp_path / "fibs.conf"
    config.write_text(RESTART_CONFIG)
    server = ServerProcess(url, config, tmp_path / "server.log")
    try:
        async with asyncio.timeout(TEST_LIMIT):
            await server.start()
            alice = make_bot(server.port, "alice", RandomStrategy(7), invite="bob", length=3)
            bob = make_bot(server.port, "bob", RandomStrategy(8))
            counted = {"boards": 0}

            def enough(event: ev.Event) -> bool:
                if isinstance(event, ev.Board) and event.view.player == "You":
                    counted["boards"] += 1
                return counted["boards"] >= STOP_AFTER_BOARDS

            async with running([alice, bob]) as tasks:
                with event_when(alice, enough) as middle:
                    waiting = asyncio.create_task(middle.wait())
                    await asyncio.wait(
                        [waiting, *tasks], timeout=30.0, return_when=asyncio.FIRST_COMPLETED
                    )
                    waiting.cancel()
                    await asyncio.gather(waiting, return_exceptions=True)
                assert middle.is_set(), f"no {STOP_AFTER_BOARDS} boards: {alice.tail()}"
                assert not any(t.done() for t in tasks), "a bot stopped before the restart"
                status = await server.terminate()
                assert status == 0, server.log_tail()
                saved = await saved_match(url, "alice", "bob")
                assert saved is not None, "SIGTERM did not leave a saved match"
                assert max(saved.score1, saved.score2) < 3
                stored = json.loads(saved.snapshot)
                state = ServerState.of(
                    match_from_json(stored["match"], SeededDice(0)), stored["players"]
                )
                before = len(alice.events), len(bob.events)
                await server.start()  # same file, same port
                await finish([alice, bob], tasks, limit=60.0)
            exact = []
            for bot, start in zip((alice, bob), before, strict=True):
                first_run, second_run = bot.events[:start], bot.events[start:]
                assert any(isinstance(e, ev.ServerShutdown) for e in first_run), bot.name
                resumed = [e for e in second_run if isinstance(e, ev.MatchStarted)]
                assert resumed and all(e.resumed for e in resumed), (bot.name, resumed)
                assert not any(isinstance(e, ev.MatchOver) for e in first_run)
                # The match went on from where it was saved, as the bot read it. No board
                # follows the synopsis (D105): both bots ask for one at once, and the
                # player on roll may act on its prompt before the other's request is
                # served, so one of the two first boards shows the saved state exactly
                # and both show the saved match (score, cube, colours).
                board = next((e for e in second_run if isinstance(e, ev.Board)), None)
                assert board is not None, f"{bot.name} got no board after the restart"
                view, p = board.view, state.names.index(bot.name)
                assert (view.player_score, view.opponent_score) == (
                    state.score[p],
                    state.score[1 - p],
                ), (bot.name, board.line)
                assert view.cube == state.cube, (bot.name, board.line)
                assert (view.colour is Colour.O) == (p == state.o_player), (bot.name, board.line)
                exact.append(disagreement(bot.name, board, state))
            assert None in exact, exact
            winner, loser = winner_of([alice, bob])
            score = check_match_over(winner, loser, 3)
            assert await server.terminate() == 0, server.log_tail()
        db = await Database.open(url, migrate=False)
        try:
            record = await only_record(db, "alice", "bob")
            assert await db.load_match("alice", "bob") is None
        finally:
            await db.close()
        check_record(record, winner.name, 3, score)
        # The finished match is the one that was saved, not a new one.
        assert json.loads(record.moves)["started_at"] == json.loads(saved.snapshot)["started_at"]
        assert record.started_at == json.loads(saved.snapshot)["started_at"]
    finally:
        await server.kill()


async def saved_match(url: str, a: str, b: str) -> SavedMatch | None:
    db = await Database.open(url, migrate=False)
    try:
        return await db.load_match(a, b)
    finally:
        await db.close()
