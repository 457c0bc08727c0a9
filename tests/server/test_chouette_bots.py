"""Bots at a chouette through real sockets (docs/bots.md "At a chouette"; issue 31 item
7): a scripted CLIP user opens a table and invites two library bots started as
``--chouette`` bots (:class:`bots.chouette.ChouetteClient`), a random one and a gnubg
one (the real ``/usr/games/gnubg``, 0 plies). Several games are played to their end in
each cube form: the bots roll and move when they are the box or the captain, decide their
own cube as members and the box's as the box; the user doubles the box and the box
doubles the user's team, so each bot answers doubles. The rotation after each game is the
one the bots read; their ``show chouette`` parse is the server's table."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator

import pytest

from backgammon.board import Colour
from backgammon.chouette_events import (
    BoxDoubled,
    ChouetteGameFinished,
    DoubleDropped,
    DoubleTaken,
    TeamDoubled,
)
from backgammon.chouette_state import BOX, ChouetteAction, ChouettePhase
from backgammon.dice import SeededDice
from backgammon.notation import format_moves
from bots.backoff import Backoff
from bots.chouette import ChouetteClient
from bots.client import ClientConfig
from bots.gnubg import GnubgEngine, GnubgStrategy
from bots.gnubg.engine import find_gnubg
from bots.random import RandomStrategy
from bots.strategy import CubeAnswer
from protocol import replies
from protocol.board_view import BoardView
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from server.tables.chouette_table import LiveChouette
from server.world.session import Session
from tests.conftest import GNUBG_MISSING

from .conftest import Connect, ScriptedClient, clip_login, serving

GAMES = 3
"""Games played in each cube form."""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


@pytest.fixture
async def service(settings: Settings, db_target: object) -> AsyncIterator[Service]:
    async with serving(settings, db_target, dice=lambda: SeededDice(1)) as service:  # type: ignore[arg-type]
        yield service


class CountingGnubg(GnubgStrategy):
    """gnubg's decisions, each cube decision counted."""

    calls: dict[str, int]

    async def should_double(self, view: BoardView) -> bool:
        self.calls["double"] = self.calls.get("double", 0) + 1
        return await super().should_double(view)

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        self.calls["answer"] = self.calls.get("answer", 0) + 1
        return await super().answer_double(view)


def bot(app: App, name: str, strategy: RandomStrategy | GnubgStrategy) -> ChouetteClient:
    config = ClientConfig(
        "127.0.0.1",
        app.port,
        name,
        "secret",
        timeout=10.0,
        board_wait=1.0,
        command_interval=0.0,
        backoff=Backoff(initial=0.1, maximum=0.5, rng=random.Random(name)),
    )
    return ChouetteClient(config, strategy, accept_chouettes=True)


async def until(ann: ScriptedClient, done: object, what: str, limit: float = 20.0) -> None:
    """Read ``ann``'s lines until ``done()`` (a callable) is true."""
    async with asyncio.timeout(limit):
        while not done():  # type: ignore[operator]
            with contextlib.suppress(TimeoutError):
                await ann.line(timeout=0.05)
    assert done(), what  # type: ignore[operator]


def ann_action(table: LiveChouette, doubled: set[tuple[int, str]]) -> str | None:
    """What the scripted user does now, if anything: answer every double with a take,
    double the box once a game as a member and the team once a game as the box, roll
    and play the first legal play."""
    core = table.core
    allowed = core.allowed("ann")
    game = core.game
    if ChouetteAction.ANSWER_DOUBLES in allowed or ChouetteAction.TAKE in allowed:
        return "accept"
    if ChouetteAction.DOUBLE in allowed and (game, "team") not in doubled:
        doubled.add((game, "team"))
        return "double"
    if ChouetteAction.BOX_DOUBLE in allowed and (game, "box") not in doubled:
        doubled.add((game, "box"))
        return "double"
    if ChouetteAction.ROLL in allowed:
        return "roll"
    if ChouetteAction.MOVE in allowed and core.phase is ChouettePhase.MOVE:
        plays = core.legal_plays()
        if plays:
            colour = Colour.O if core.turn == BOX else Colour.X
            return f"move {format_moves(plays[0].moves, colour)}"
    return None


async def play_games(
    ann: ScriptedClient, table: LiveChouette, games: int, bots: list[ChouetteClient]
) -> None:
    """The scripted user plays until ``games`` games of the table are over and every bot
    has read the end of the last one and the seats that follow it (a bot reads its own
    socket: the table may be done before the bot's lines are)."""
    core = table.core
    doubled: set[tuple[int, str]] = set()
    async with asyncio.timeout(60.0 * games):
        while len(core.history) < games:
            action = ann_action(table, doubled)
            if action is None:
                with contextlib.suppress(TimeoutError):
                    await ann.line(timeout=0.05)
                continue
            await ann.send(action)
            await until(ann, _changed(core.version, table), f"ann's {action}")
    for b in bots:
        await until(ann, _saw_game_end(b, games), f"{b.config.name} saw game {games} end")


def _saw_game_end(b: ChouetteClient, game: int) -> object:
    """True once ``b`` has read game ``game``'s end and the rotation after it."""
    return lambda: (
        bool(b.games_over)
        and b.games_over[-1].game >= game
        and (len(b.seat_history) > len(b.games_over))
    )


def _changed(version: int, table: LiveChouette) -> object:
    return lambda: table.core.version != version


async def chouette(
    app: App, ann: ScriptedClient, bots: list[ChouetteClient], words: str
) -> LiveChouette:
    """ann opens a table with ``words`` and invites the bots; they join; ann starts."""
    await ann.send(f"chouette open {words}")
    await ann.expect(replies.CHOUETTE_OPENED)
    for b in bots:
        name = b.config.name
        await ann.send(f"chouette invite {name}")
        await ann.expect(replies.chouette_joins(name))
        assert b.table == "ann"
    await ann.send("chouette start")
    table = app.local_tables.chouettes["ann"]
    await until(ann, lambda: table.core.game == 1, "the first game")
    return table


def check_table(table: LiveChouette, bots: list[ChouetteClient], games: int) -> None:
    """Every game finished with a settlement and doubles answered; the bots saw each game
    end and the rotation that followed; their last ``show chouette`` is the table's."""
    core = table.core
    history = core.history[:games]
    finished = [next(e for e in g if isinstance(e, ChouetteGameFinished)) for g in history]
    assert len(finished) == games
    events = [e for g in history for e in g]
    assert any(isinstance(e, TeamDoubled) for e in events), "nobody doubled the box"
    assert any(isinstance(e, BoxDoubled) for e in events), "the box never doubled"
    assert any(isinstance(e, DoubleTaken | DoubleDropped) for e in events)
    for b in bots:
        name = b.config.name
        over = b.games_over[:games]
        assert [(g.game, g.box_net, g.box_stays) for g in over] == [
            (f.game, f.box_net, f.box_stays) for f in finished
        ], name
        boxes = [s.box for s in b.seat_history]
        assert len(boxes) >= games + 1, name  # the draw, then a rotation after each game
        assert any(not f.box_stays for f in finished) and len(set(boxes)) >= 2, name
        assert b.show is not None and b.show.table.host == "ann", name
        assert set(b.show.totals) == {"ann", *(c.config.name for c in bots)}, name


@pytest.mark.gnubg
@pytest.mark.skipif(find_gnubg() is None, reason=GNUBG_MISSING)
@pytest.mark.parametrize("cubes", ["multiple", "single"])
async def test_a_random_and_a_gnubg_bot_play_chouette_games_with_a_user(
    app: App, connect: Connect, cubes: str
) -> None:
    engine = GnubgEngine(plies=0, timeout=30.0)
    await asyncio.wait_for(engine.start(), 30.0)
    gnubg = CountingGnubg(engine)
    gnubg.calls = {}
    bots = [bot(app, "rando", RandomStrategy(3)), bot(app, "gnu", gnubg)]
    tasks = [asyncio.create_task(b.run()) for b in bots]
    try:
        ann = await clip_login(connect, app, "ann")
        await ann.send("toggle ready")
        await ann.expect(replies.toggle_message(Toggle.READY, True))
        for b in bots:
            await asyncio.wait_for(b.logged_in.wait(), 20.0)
        table = await chouette(app, ann, bots, f"cubes={cubes} team_autoroll=off")
        await play_games(ann, table, GAMES, bots)
        check_table(table, bots, GAMES)
        # seed 1: rando, then ann, then gnu is the box: each bot sits in the line and
        # gnu in the box too, so gnubg decided cubes as a member and as the box
        boxes = [s.box for s in bots[1].seat_history]
        assert boxes[:3] == ["rando", "ann", "gnu"], boxes
        assert gnubg.calls.get("answer", 0) > 0 and gnubg.calls.get("double", 0) > 0
        assert gnubg.fallbacks == 0 and engine.restarts == 0
    finally:
        for b in bots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(b.stop(), 5.0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await engine.close()


async def test_a_bot_whose_connection_drops_is_seated_again_and_plays_on(
    app: App, connect: Connect
) -> None:
    """A random bot's connection drops mid-game; it logs in again on its own, the server
    seats it at once (D410), and from the rules line and ``show chouette`` that follow the
    board it knows its table again (``jacoby=off`` as the table says) and plays on."""
    bots = [bot(app, "rando", RandomStrategy(3)), bot(app, "randy", RandomStrategy(4))]
    tasks = [asyncio.create_task(b.run()) for b in bots]
    try:
        ann = await clip_login(connect, app, "ann")
        await ann.send("toggle ready")
        await ann.expect(replies.toggle_message(Toggle.READY, True))
        for b in bots:
            await asyncio.wait_for(b.logged_in.wait(), 20.0)
        table = await chouette(app, ann, bots, "team_autoroll=off jacoby=off")
        core = table.core
        rando = bots[0]
        assert rando.rules.settings["jacoby"] == "off" and not rando.strategy.jacoby
        session = app.presence.get("rando")
        assert isinstance(session, Session)
        session.output.close()  # the connection drops
        away, back = (replies.chouette_presence("rando", p) for p in (False, True))
        await until(ann, lambda: away in ann.seen, "rando away")
        await until(ann, lambda: back in ann.seen[ann.seen.index(away) :], "rando seated again")
        await until(ann, lambda: rando.table == "ann", "rando knows its table")
        assert rando.rules.settings["jacoby"] == "off" and not rando.strategy.jacoby
        await play_games(ann, table, 2, bots)
        assert "rando" not in core.absent
        assert [g.game for g in rando.games_over][-1:] == [2]
    finally:
        for b in bots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(b.stop(), 5.0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
