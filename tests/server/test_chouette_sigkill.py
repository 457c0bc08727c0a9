"""A chouette table survives a SIGKILL (D361, D362): the server runs as a real subprocess
(``python -m server``, tests/server/test_sigkill.py's harness) on an SQLite file, and on a
PostgreSQL database of its own when ``FIBS_TEST_DATABASE_URL`` is set. Two CLIP clients
play a two-player chouette for some actions; the server is killed with SIGKILL, which
gives it no chance to save anything; restarted on the same database, both log in again and
are seated at once (D410), and each gets exactly the board it last saw (the position, the dice,
whose turn), and the game goes on with the stored dice. Those are the committed dice of
the game (D352-D354): each player who returns is told the game's dice line again and the
next game's commitment, and when the last player leaves, the revealed seed gives every
die the table was told, before the kill and after it."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from backgammon.dice import Roll
from backgammon.fair_dice import DiceSeeds
from backgammon.moves import legal_plays
from backgammon.notation import format_moves
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView

from .conftest import ScriptedClient
from .test_chouette_dice import GAME, NEXT, REVEALED, between, told_dice
from .test_sigkill import CONFIG, NAMES, database, login, running_server

ACTIONS = 9
"""Rolls and moves played before the kill."""


def state(view: BoardView) -> tuple[object, ...]:
    """What a board shows of the game (not who is called ``You``)."""
    return (view.board, view.turn, view.player_dice, view.opponent_dice, view.cube, view.colour)


async def next_board(client: ScriptedClient) -> BoardView:
    """The next ``board:`` line, read."""
    return parse_board(await client.expect_prefix("board:", timeout=10))


async def act(clients: dict[str, ScriptedClient], boards: dict[str, BoardView]) -> None:
    """Whoever's turn the boards show rolls, or plays a legal move; everyone's next
    board is read into ``boards``."""
    for name, view in boards.items():
        if view.turn is not view.colour:
            continue
        if view.player_dice == (0, 0):
            await clients[name].send("roll")
        else:
            plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
            await clients[name].send("move " + format_moves(plays[0].moves, view.colour))
        break
    for name, client in clients.items():
        boards[name] = await next_board(client)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_a_chouette_survives_sigkill(tmp_path: Path, backend: str) -> None:
    alice, bob = NAMES
    config = tmp_path / "fibs.conf"
    config.write_text(CONFIG)
    log = tmp_path / "server.log"
    async with database(backend, tmp_path) as url, asyncio.timeout(120):
        async with running_server(url, config, log) as server:
            clients = {name: await login(server.port, name) for name in NAMES}
            await clients[alice].send("chouette open team_autoroll=off")
            await clients[alice].expect(replies.CHOUETTE_OPENED, timeout=10)
            told = await clients[alice].expect_prefix("*** The dice of the next", timeout=10)
            opened = NEXT.match(told)
            assert opened is not None
            await clients[alice].send(f"chouette invite {bob}")
            await clients[bob].expect(replies.chouette_join_hint(alice), timeout=10)
            await clients[bob].send(f"chouette join {alice}")
            await clients[bob].expect(replies.chouette_joins(bob), timeout=10)
            await clients[alice].send("chouette start")
            boards = {name: await next_board(client) for name, client in clients.items()}
            for _ in range(ACTIONS):
                await act(clients, boards)
            seen = clients[alice].seen
            game_line = next(line for line in seen if GAME.match(line))
            second = NEXT.match(seen[seen.index(game_line) + 1])
            assert second is not None and f"commitment {opened[1]}," in game_line
            before = told_dice(seen[seen.index(game_line) + 1 :])  # every die told
            await server.kill()
            for client in clients.values():
                await client.close()
        async with running_server(url, config, log) as server:
            clients = {alice: await login(server.port, alice)}  # seated as she logs in (D410)
            await clients[alice].expect(replies.chouette_presence(alice, True), timeout=10)
            clients[bob] = await login(server.port, bob)
            for name, client in clients.items():
                await client.expect(replies.chouette_presence(bob, True), timeout=10)
                resumed = await next_board(client)
                assert state(resumed) == state(boards[name])  # nothing was lost
                boards[name] = resumed
            await act(clients, boards)  # the game goes on, with the stored dice
            await act(clients, boards)
            for name, client in clients.items():  # told on return: the game's dice, the next
                seen = client.seen
                again = seen.index(game_line)
                assert seen.index(replies.chouette_presence(name, True)) < again
                assert seen[again + 1] == replies.chouette_dice_next(second[1])
            await clients[alice].send("chouette record")
            await clients[alice].expect(replies.chouette_record_heading(alice), timeout=10)
            await clients[alice].send("chouette leave")
            await clients[alice].expect(replies.chouette_leaves(alice), timeout=10)
            await clients[bob].send("chouette leave")  # the last: the table is over (D354)
            reveal = await clients[bob].expect_prefix("*** Dice of this chouette game revealed")
            revealed = REVEALED.match(reveal)
            assert revealed is not None
            seed, drawn = bytes.fromhex(revealed[1]), int(revealed[2])
            assert hashlib.sha256(seed).hexdigest() == opened[1]
            dice = before + told_dice(between(clients[bob].seen, game_line, reveal))
            seeds = tuple(game_line.removesuffix(".").split(" seeds ")[1].split(" ")[1::2])
            assert len(dice) == drawn > len(before) > 0
            assert dice == DiceSeeds(seed, seeds).dice(drawn)  # before and after the kill
            for client in clients.values():
                await client.close()
