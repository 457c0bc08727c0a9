"""A chouette through real sockets (docs/chouette.md): four users, two of them telnet
people and two CLIP clients, over two games with seeded dice: a team double the box
answers, the rotation after the first game, a member leaving mid-game while the
others play on to the end."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from backgammon.board import Colour
from backgammon.chouette_events import ChouetteGameFinished
from backgammon.chouette_state import BOX, TEAM, ChouettePhase
from backgammon.dice import SeededDice
from backgammon.notation import format_moves
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from server.tables.chouette_table import LiveChouette

from .conftest import Connect, ScriptedClient, check_known_lines, clip_login, serving
from .sessions import command, telnet_login

TELNET = ("ann", "dan")
CLIP = ("bob", "cat")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


@pytest.fixture
async def service(settings: Settings, db_target: object) -> AsyncIterator[Service]:
    async with serving(settings, db_target, dice=lambda: SeededDice(5)) as service:  # type: ignore[arg-type]
        yield service


async def run(clients: dict[str, ScriptedClient], name: str, line: str, wanted: str) -> list[str]:
    """``name`` sends ``line``; the lines up to the first that starts with ``wanted``
    (telnet: the whole reply up to the prompt, which must hold it)."""
    client = clients[name]
    if name in TELNET:
        lines = await command(client, line)
        assert any(got.startswith(wanted) for got in lines), (line, lines)
        return lines
    await client.send(line)
    lines = []
    while not (got := await client.line()).startswith(wanted):
        lines.append(got)
    return [*lines, got]


async def turn(clients: dict[str, ScriptedClient], table: LiveChouette) -> None:
    """The side on roll rolls, or plays its first legal play."""
    core = table.core
    mover = core.mover()
    assert mover is not None
    if core.phase is ChouettePhase.TURN:
        await run(clients, mover, "roll", f"{mover} rolls ")
        return
    assert core.phase is ChouettePhase.MOVE
    play = core.legal_plays()[0]
    colour = Colour.O if core.turn == BOX else Colour.X
    await run(clients, mover, f"move {format_moves(play.moves, colour)}", f"{mover} moves ")


async def test_four_players_two_games_a_rotation_and_a_member_leaving(
    app: App, connect: Connect
) -> None:
    clients: dict[str, ScriptedClient] = {}
    for name in TELNET:
        clients[name] = await telnet_login(connect, app, name)
        assert await command(clients[name], "toggle ready") == [
            replies.toggle_message(Toggle.READY, True)
        ]
    for name in CLIP:
        clients[name] = await clip_login(connect, app, name)
        await clients[name].send("set boardstyle 3")
        await clients[name].expect("Value of 'boardstyle' set to 3.")
        await clients[name].send("toggle ready")
        await clients[name].expect(replies.toggle_message(Toggle.READY, True))
    assert replies.CHOUETTE_OPENED in await command(clients["ann"], "chouette open")
    for name in ("bob", "cat", "dan"):
        reply = await command(clients["ann"], f"chouette invite {name}")
        assert reply[-1] == replies.you_invite_to_chouette(name)
        await clients[name].expect(replies.chouette_join_hint("ann"))
        await run(clients, name, "chouette join ann", replies.chouette_joins(name))
    table = app.local_tables.chouettes["ann"]
    core = table.core
    eve = await clip_login(connect, app, "eve")  # a watcher of bob, as a CLIP client
    await eve.send("set boardstyle 3")
    await eve.expect("Value of 'boardstyle' set to 3.")
    await eve.send("watch bob")
    await eve.expect(replies.now_watching("bob"))
    parse_board(await eve.expect_prefix("board:"))
    await run(clients, "ann", "chouette start", replies.chouette_game_starts(1, "", "")[:15])
    box, line = core.box, core.line
    assert box is not None and len(line) == 3
    started = replies.chouette_game_starts(1, box, line[0])
    for name, client in clients.items():
        if name != "ann":
            await client.expect(started)

    # Game 1: the team's first turn with the dice: the last of the line doubles, the
    # captain's roll closes the window, the box accepts.
    while not (core.turn == TEAM and core.phase is ChouettePhase.TURN):
        await turn(clients, table)
    captain, last = line[0], line[2]
    await run(clients, last, "double", replies.chouette_team_doubles(last, 2))
    await run(clients, captain, "roll", replies.chouette_box_answers([last]))
    await run(clients, box, "accept", replies.chouette_box_accepts(last, 2))
    await eve.expect(replies.chouette_box_accepts(last, 2))
    watched = parse_board(await eve.expect_prefix("board:"))  # bob's side and cube
    assert watched.cube == (2 if last == "bob" else 1) and watched.player != "You"
    for name in CLIP:  # a CLIP member's board shows their own cube
        client = clients[name]
        if name != box:  # the box's reply was read up to that line already
            await client.expect(replies.chouette_box_accepts(last, 2))
        board = parse_board(await client.expect_prefix("board:"))
        assert board.cube == (2 if name == last else 1)
        assert board.colour is (Colour.O if name == box else Colour.X)
    while core.game == 1:
        await turn(clients, table)
    finished = next(e for e in core.history[0] if isinstance(e, ChouetteGameFinished))
    results = dict(finished.results)
    assert results[last] == 2 * results[captain]  # their cube was 2, the others' 1
    # Kit's rotation: the box stays only when it beat the captain
    assert core.box == (box if finished.box_stays else captain)
    assert core.line == ((*line[1:], captain) if finished.box_stays else (*line[1:], box))
    over = replies.chouette_game_over(1, finished.box_net, finished.box_stays)
    seats = replies.chouette_seats(core.box or "", core.line)
    for client in [*clients.values(), eve]:
        await client.expect(over)
        await client.expect(seats)
        await client.expect(replies.chouette_game_starts(2, core.box or "", core.line[0]))

    # Game 2: the second of the line leaves mid-game; the others play on.
    leaver = core.line[1]
    for _ in range(4):
        await turn(clients, table)
    await run(clients, leaver, "leave", replies.chouette_leaves(leaver))
    assert core.results[leaver] == -1
    for name, client in clients.items():
        if name != leaver:
            await client.expect(replies.chouette_leaves(leaver))
    while core.game == 2:
        await turn(clients, table)
    assert leaver not in core.players and len(core.players) == 3
    assert sum(core.totals.values()) == 0
    for name, client in clients.items():
        if name != leaver:
            await client.expect_prefix("Chouette game 2 is over:")
    shown = await command(clients[TELNET[0] if leaver != TELNET[0] else TELNET[1]], "show chouette")
    assert replies.chouette_heading("ann", 3) in shown  # after the table's lines not read
    # Every line the CLIP clients got is a form of protocol/ (the telnet users' ASCII
    # boards are not in that catalogue).
    check_known_lines([*(clients[name] for name in CLIP), eve])
