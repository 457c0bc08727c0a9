"""A chouette through real sockets when players drop (docs/chouette.md; D360-D363): four
CLIP clients on a server whose clock the test drives (tests/server/fake_clock.py). A
member's connection drops and the others play on, the team's roll going ahead after its
window, and the member logs in again and is seated at once (D410) with the board and the
table; the captain drops and the next member plays as acting captain; the box drops and
the table waits, no timer running, until the box logs in again and is seated; the game is
played to its end and recorded for all four. And a restart of the server in the middle
of a game: everyone returns to the same game."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from backgammon.board import Colour
from backgammon.chouette_state import BOX, TEAM, ChouettePhase
from backgammon.dice import SeededDice
from backgammon.notation import format_moves
from protocol import replies
from protocol.chouette_view import settings_words
from server.app import App
from server.config import Settings
from server.service import Service
from server.tables.chouette_table import LiveChouette
from tests.conftest import DbTarget

from .conftest import (
    Connect,
    ScriptedClient,
    check_known_lines,
    clip_login,
    connect_from,
    running,
    serving,
)
from .fake_clock import FakeTimer

NAMES = ("ann", "bob", "cat", "dan")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
async def service(
    settings: Settings, db_target: object, timer: FakeTimer
) -> AsyncIterator[Service]:
    async with serving(
        settings,
        db_target,  # type: ignore[arg-type]
        dice=lambda: SeededDice(5),
        timer=timer,
    ) as service:
        yield service


async def turn(clients: dict[str, ScriptedClient], table: LiveChouette) -> None:
    """The side on roll rolls, or plays its first legal play (read up to its line)."""
    core = table.core
    mover = core.mover()
    assert mover is not None
    client = clients[mover]
    if core.phase is ChouettePhase.TURN:
        await client.send("roll")
        await client.expect_prefix(f"{mover} rolls ")
        return
    assert core.phase is ChouettePhase.MOVE
    play = core.legal_plays()[0]
    colour = Colour.O if core.turn == BOX else Colour.X
    await client.send(f"move {format_moves(play.moves, colour)}")
    await client.expect_prefix(f"{mover} moves ")


async def until_team_rolls(clients: dict[str, ScriptedClient], table: LiveChouette) -> None:
    core = table.core
    while not (core.turn == TEAM and core.phase is ChouettePhase.TURN):
        await turn(clients, table)


async def drop(clients: dict[str, ScriptedClient], name: str, *heard: str) -> None:
    """``name``'s connection closes; every other client hears ``heard``."""
    await clients.pop(name).close()
    for client in clients.values():
        for line in heard:
            await client.expect(line)


async def logged_in(connect: Connect, app: App, name: str, *, create: bool) -> ScriptedClient:
    """A CLIP client of ``name`` with ``board:`` lines (every line a form of protocol/),
    ready for games."""
    client = await clip_login(connect, app, name, create=create)
    await client.send("set boardstyle 3")
    await client.expect("Value of 'boardstyle' set to 3.")
    if create:
        await client.send("toggle ready")
        await client.expect(replies.toggle_message(replies.Toggle.READY, True))
    return client


async def first_game(app: App, clients: dict[str, ScriptedClient]) -> LiveChouette:
    """The first of ``clients`` opens a table, the others join it, the first game starts."""
    host, *others = clients
    await clients[host].send("chouette open")
    await clients[host].expect(replies.CHOUETTE_OPENED)
    for name in others:
        await clients[host].send(f"chouette invite {name}")
        await clients[name].expect(replies.chouette_join_hint(host))
        await clients[name].send(f"chouette join {host}")
        await clients[name].expect(replies.chouette_joins(name))
    await clients[host].send("chouette start")
    await clients[host].expect_prefix("Chouette game 1:")
    return app.local_tables.chouettes[host]


async def test_players_drop_the_others_play_on_and_the_box_returns(
    app: App, connect: Connect, timer: FakeTimer
) -> None:
    clients: dict[str, ScriptedClient] = {}
    for name in NAMES:
        clients[name] = await logged_in(connect, app, name, create=True)
    table = await first_game(app, clients)
    core = table.core
    box, (captain, second, last) = core.box, core.line
    assert box is not None

    # A member drops: they are away; after the window the captain's roll goes ahead.
    await until_team_rolls(clients, table)
    await drop(clients, last, replies.chouette_presence(last, False))
    timer.advance(10)
    for client in clients.values():
        await client.expect_prefix(f"{captain} rolls ")
    await turn(clients, table)  # the captain moves

    # The member logs in again: seated at once (D410), with the board and the table.
    clients[last] = await logged_in(connect, app, last, create=False)
    seen = clients[last].seen
    back = seen.index(replies.chouette_presence(last, True))
    assert seen[back + 1].startswith("board:")
    assert replies.chouette_rules(settings_words(core.settings)) in seen[back:]
    assert replies.CHOUETTE_END_LINE in seen[back:]  # and show chouette's lines
    assert last not in core.absent
    await clients[captain].expect(replies.chouette_presence(last, True))
    await clients[last].send("chouette return")  # still there, for nothing now
    await clients[last].expect(replies.CHOUETTE_NOT_AWAY)

    # The captain drops: the next member plays for the team.
    await until_team_rolls(clients, table)
    await drop(
        clients,
        captain,
        replies.chouette_presence(captain, False),
        replies.chouette_acting_captain(second),
    )
    assert core.mover() == second
    await turn(clients, table)  # the acting captain rolls by hand, and moves
    await turn(clients, table)

    # The box drops: the table waits for it; no timer runs meanwhile.
    await drop(clients, box, replies.chouette_presence(box, False), replies.chouette_held(box))
    version = core.version
    timer.advance(10 * 30)  # ten answer times (the idle time-out is an hour)
    await clients[second].send("show chouette")  # a round trip: the timers had their turn
    await clients[second].expect(replies.CHOUETTE_END_LINE)
    assert core.version == version

    # The box logs in again and is seated (D410); the game is played to its end.
    assert await app.db.load_chouette_of(box) is not None  # saved meanwhile
    clients[box] = await logged_in(connect, app, box, create=False)
    await clients[second].expect(replies.chouette_presence(box, True))
    assert replies.chouette_presence(box, True) in clients[box].seen
    while core.game == 1:
        if core.turn == TEAM and core.phase is ChouettePhase.TURN:
            timer.advance(10)  # the window: the acting captain's roll goes ahead
            await clients[second].expect_prefix(f"{second} rolls ")
            continue
        await turn(clients, table)
    for client in clients.values():
        await client.expect_prefix("Chouette game 1 is over:")
    assert sum(core.totals.values()) == 0
    standings = await app.db.chouette_standings(table.table_id)
    assert {s.name for s in standings} == set(NAMES)
    assert {s.name: s.points for s in standings} == {
        name: total for name, total in core.totals.items()
    }
    check_known_lines(list(clients.values()))


async def test_a_chouette_is_there_after_a_restart(settings: Settings, db_target: DbTarget) -> None:
    """The server stops while the table plays (its sessions end: everyone away, saved);
    started again on the same database, the players return to the same game."""
    names = ("ann", "bob", "cat")
    opened: list[ScriptedClient] = []

    async def connect() -> ScriptedClient:
        opened.append(await connect_from(app))
        return opened[-1]

    async with running(settings, db_target, dice=lambda: SeededDice(5)) as app:
        clients = {n: await logged_in(connect, app, n, create=True) for n in names}
        table = await first_game(app, clients)
        core = table.core
        await until_team_rolls(clients, table)
        member = core.line[1]
        await clients[member].send("double")
        await clients[member].expect(replies.chouette_team_doubles(member, 2))
        before = (core.position, core.turn, core.phase, tuple(core.team_doubles), core.game)
    async with running(settings, db_target, dice=lambda: SeededDice(5)) as app:
        clients = {n: await logged_in(connect, app, n, create=False) for n in names}
        for name, client in clients.items():  # each seated again as they log in (D410)
            assert replies.chouette_presence(name, True) in client.seen
        table = app.local_tables.chouettes["ann"]
        core = table.core
        assert (core.position, core.turn, core.phase, tuple(core.team_doubles), core.game) == (
            before
        )
        assert not core.absent
        captain = core.line[0]
        await clients[captain].send("roll")  # the window closes: the box answers
        await clients[captain].expect(replies.chouette_box_answers([member]))
    for client in opened:
        await client.close()
