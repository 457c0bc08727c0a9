"""A chouette's dice anyone can verify, through real sockets (issue 30; D352-D354;
docs/dice.md).

Three CLIP players and a watcher at a table with the production dice (the App's
``dice`` left None): the next game's commitment comes when the table opens and with
each join, before a player sets their seed; a game's start tells the commitment and
every player's seed before its first die (the first draw's) and commits the game after
it; its end reveals the seed, and every die the table was told, the first draw's single
dice included, is the one the seeds give (the verifier's ``dice`` command too). No line
nor log record shows a seed before its game is over; the last player to leave a table
gets the reveal of the game they leave. Both players of a game dropping is no end: the
table leaves the process with its dice saved and reveals nothing; each who returns is told
the game's dice line again and the next game's commitment, and the table restored from
the database rolls on with the same dice (tests/server/test_chouette_sigkill.py: across
a SIGKILL). Through dispatch (tests/server/desk.py), six at a table: a draw of the seats
whose game waits for the box's partner is revealed before the next start's dice.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re

import pytest

from backgammon.fair_dice import DiceSeeds
from backgammon.fair_dice.__main__ import main as dice_main
from bots.events import Text, parse_event
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, check_known_lines, clip_login
from .fibs_parsers import fcm_cookie
from .test_chouette_away import drop, logged_in
from .test_chouette_play import run, turn

pytestmark = pytest.mark.known_lines

HEX = "[0-9a-f]{64}"
NEXT = re.compile(rf"\*\*\* The dice of the next chouette game are committed: ({HEX})\. ")
GAME = re.compile(
    rf"\*\*\* Dice of this chouette game \(fibs-dice/1\): commitment ({HEX}), seeds (.*)\.$"
)
REVEALED = re.compile(rf"\*\*\* Dice of this chouette game revealed: server seed ({HEX}), (\d+) ")
DIE_LINES = (
    re.compile(r"\S+ draws (\d)\.$"),  # replies.chouette_draws
    re.compile(r"\S+ rolled (\d), \S+ rolled (\d)$"),  # replies.opening_roll_watched
    re.compile(r"\S+ rolls (\d) and (\d)\.$"),  # replies.rolls
)
PLAYERS = ("bob", "cat", "eve")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


def told_dice(lines: list[str]) -> list[int]:
    """Every die ``lines`` tell, in order."""
    return [
        int(die)
        for line in lines
        for pattern in DIE_LINES
        if (m := pattern.match(line)) is not None
        for die in m.groups()
    ]


def between(lines: list[str], first: str, last: str) -> list[str]:
    """The lines after ``first`` and before ``last``."""
    return lines[lines.index(first) + 1 : lines.index(last)]


async def next_commitment(client: ScriptedClient) -> str:
    """The commitment of the next game's dice (D352), read up to its line."""
    match = NEXT.match(await client.expect_prefix("*** The dice of the next chouette game"))
    assert match is not None
    return match[1]


async def test_a_chouettes_games_commit_and_prove_their_dice(
    app: App, connect: Connect, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    clients = {name: await clip_login(connect, app, name) for name in PLAYERS}
    for client in clients.values():
        await client.send("set boardstyle 3")
        await client.expect(replies.set_changed("boardstyle", "3"))
        await client.send("toggle ready")
        await client.expect(replies.toggle_message(Toggle.READY, True))
    bob, cat = clients["bob"], clients["cat"]
    await bob.send("set dice_seed tulip")
    await bob.expect(replies.set_changed("dice_seed", "tulip"))
    await bob.send("chouette open")
    await bob.expect(replies.CHOUETTE_OPENED)
    first = await next_commitment(bob)  # when it opens
    await bob.send("chouette start")  # refused, alone: no dice drawn, none told
    # Before it, only the who updates of the others' logins and toggles, which come in
    # batches (status_interval) and may come now.
    while (reply := await bob.line()).startswith(("5 ", "6", "7 ", "8 ")):
        pass
    assert reply.startswith("** ")
    for name in ("cat", "eve"):
        await bob.send(f"chouette invite {name}")
        await bob.expect(replies.you_invite_to_chouette(name))
        await clients[name].expect(replies.chouette_join_hint("bob"))
        await run(clients, name, "chouette join bob", replies.chouette_joins(name))
        assert await next_commitment(clients[name]) == first  # with the join
    await cat.send("set dice_seed cat's-own!")  # after seeing the commitment
    await cat.expect(replies.set_changed("dice_seed", "cat's-own!"))
    fay = await clip_login(connect, app, "fay")  # a watcher of cat
    await fay.send("set boardstyle 3")
    await fay.expect(replies.set_changed("boardstyle", "3"))
    await fay.send("watch cat")
    await fay.expect(replies.now_watching("cat"))
    table = app.local_tables.chouettes["bob"]
    core = table.core

    await bob.send("chouette start")
    game_line = ""
    for client in (*clients.values(), fay):
        game_line = await client.expect_prefix("*** Dice of this chouette game (")
        second = await next_commitment(client)
    assert not any(GAME.match(line) for line in bob.seen[: bob.seen.index(game_line)])
    game = GAME.match(game_line)
    assert game is not None and game[1] == first
    names_seeds = game[2].split(" ")
    assert names_seeds[0::2] == list(PLAYERS)  # the table's order: as they came, till seated
    seeds = tuple(names_seeds[1::2])
    assert seeds[:2] == ("tulip", "cat's-own!") and re.fullmatch("[0-9a-f]{16}", seeds[2])
    assert second != first

    while core.game < 2:
        await turn(clients, table)
    game2: dict[ScriptedClient, str] = {}
    for client in (*clients.values(), fay):
        reveal = await client.expect_prefix("*** Dice of this chouette game revealed:")
        game2[client] = await client.expect_prefix("*** Dice of this chouette game (")
        next_game = GAME.match(game2[client])
        assert next_game is not None and next_game[1] == second
    revealed = REVEALED.match(reveal)
    assert revealed is not None
    seed, drawn = revealed[1], int(revealed[2])
    assert reveal == replies.chouette_dice_revealed(seed, drawn)
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == first
    over = next(line for line in fay.seen if line.startswith("Chouette game 1 is over:"))
    for client in (*clients.values(), fay):
        lines = client.seen
        # the game over, then the reveal, then the next game's dice
        assert lines.index(over) < lines.index(reveal) < lines.index(game2[client])
        dice = told_dice(between(lines, game_line, reveal))
        assert len(dice) == drawn > 4  # the first draw's three dice, then rolls
        assert dice == DiceSeeds(bytes.fromhex(seed), seeds).dice(drawn)
        before = lines[: lines.index(reveal)]
        assert not any(seed in line for line in before)
    out = io.StringIO()
    assert dice_main(["dice", seed, *seeds, str(drawn)], out) == 0
    assert out.getvalue().split() == [str(d) for d in dice]
    assert not any(seed in record.getMessage().lower() for record in caplog.records)

    # Everyone leaves in the middle of game 2: the last to leave is told its seed.
    for name in ("cat", "eve"):
        await run(clients, name, "leave", replies.chouette_leaves(name))
    await bob.send("leave")
    last = await bob.expect_prefix("*** Dice of this chouette game revealed:")
    last_reveal = REVEALED.match(last)
    assert last_reveal is not None
    assert hashlib.sha256(bytes.fromhex(last_reveal[1])).hexdigest() == second
    check_known_lines([*clients.values(), fay])
    for line in (game_line, reveal, replies.chouette_dice_next(second)):
        assert parse_event(line) == Text(line)
        assert fcm_cookie(line) == "FIBS_Unknown"


async def test_a_draw_of_the_seats_whose_game_waits_is_revealed_before_the_next_dice(
    settings: Settings, db_target: DbTarget
) -> None:
    """Six at the table: the first start draws the seats and offers the box's partner its
    seat (§7), so the game waits. That draw's dice are revealed (D354) before the
    start that follows tells its own (D353), whose commitment is the one told when that
    draw began (D352). Through dispatch (tests/server/desk.py), with the production dice."""
    from .desk import Desk  # desk.py imports the conftest's helpers

    db = await db_target.open()
    try:
        desk = Desk(App(settings, db))
        names = ("ann", "bea", "cid", "dot", "eli", "flo")
        for name in names:
            await desk.login(name)
        opened = await desk.run("ann", "chouette open")
        first = NEXT.match(opened[-1])
        assert first is not None
        for name in names[1:]:
            await desk.run("ann", f"chouette invite {name}")
            await desk.run(name, "chouette join ann")
        core = desk.app.local_tables.chouettes["ann"].core
        heard = await desk.run("ann", "chouette start")
        draw = [m for line in heard if (m := GAME.match(line)) is not None]
        assert [m[1] for m in draw] == [first[1]]
        drawn = told_dice(heard)
        assert core.partner_offer is not None and core.game == 0  # the game waits
        second = next(m[1] for line in heard if (m := NEXT.match(line)) is not None)
        await desk.run(core.partner_offer, "accept")
        heard = await desk.run("ann", "chouette start")
        dice_lines = [line for line in heard if line.startswith("*** Dice of this chouette")]
        revealed, game = REVEALED.match(dice_lines[0]), GAME.match(dice_lines[1])
        assert revealed is not None and int(revealed[2]) == len(drawn) >= len(names)
        seed = bytes.fromhex(revealed[1])
        assert hashlib.sha256(seed).hexdigest() == first[1]
        seeds = tuple(draw[0][2].split(" ")[1::2])
        assert DiceSeeds(seed, seeds).dice(len(drawn)) == drawn
        assert game is not None and game[1] == second and core.game == 1
    finally:
        await db.close()


async def test_a_game_goes_on_with_its_dice_when_everyone_was_away(
    app: App, connect: Connect
) -> None:
    """bob and cat drop mid-game (a watcher, eve, hears cat go): the table is not over, so
    nothing is revealed (D354); it leaves the process, saved with its dice (D362). Each
    who returns is told the game's dice line again, the same text, and the next game's
    commitment (D352, D353); the table restored from the database rolls on, and at the
    game's end every die the table was told, before the drop and after the return, is
    the one the seeds give."""
    clients = {name: await logged_in(connect, app, name, create=True) for name in PLAYERS[:2]}
    bob, cat = clients["bob"], clients["cat"]
    await bob.send("chouette open team_autoroll=off")  # no timer acts while they are gone
    await bob.expect(replies.CHOUETTE_OPENED)
    first = await next_commitment(bob)
    await bob.send("chouette invite cat")
    await cat.expect(replies.chouette_join_hint("bob"))
    await run(clients, "cat", "chouette join bob", replies.chouette_joins("cat"))
    eve = await logged_in(connect, app, "eve", create=True)
    await eve.send("watch cat")
    await eve.expect(replies.now_watching("cat"))
    await bob.send("chouette start")
    game_line = await cat.expect_prefix("*** Dice of this chouette game (")
    second = await next_commitment(cat)
    game = GAME.match(game_line)
    assert game is not None and game[1] == first
    seeds = tuple(game[2].split(" ")[1::2])
    for _ in range(6):
        await turn(clients, app.local_tables.chouettes["bob"])
    await cat.send("show chouette")  # a round trip: cat has read every line of the game
    await cat.expect(replies.CHOUETTE_END_LINE)
    before = cat.seen[cat.seen.index(game_line) + 1 :]

    await drop(clients, "bob", replies.chouette_presence("bob", False))
    await cat.close()
    await eve.expect(replies.chouette_presence("cat", False))
    assert "bob" not in app.local_tables.chouettes  # the table left the process, saved
    assert not any(REVEALED.match(line) for line in (*cat.seen, *eve.seen))

    for name in ("bob", "cat"):
        clients[name] = client = await logged_in(connect, app, name, create=False)
        seen = client.seen  # seated again as they log in (D410)
        back = seen.index(replies.chouette_presence(name, True))
        again = seen.index(game_line, back)  # the game's dice again (D353)
        assert seen[again + 1] == replies.chouette_dice_next(second)  # D352
    table = app.local_tables.chouettes["bob"]
    while table.core.game == 1:
        await turn(clients, table)
    cat = clients["cat"]
    reveal = await cat.expect_prefix("*** Dice of this chouette game revealed:")
    revealed = REVEALED.match(reveal)
    assert revealed is not None
    seed, drawn = revealed[1], int(revealed[2])
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == first
    after = between(cat.seen, game_line, reveal)
    dice = told_dice(before) + told_dice(after)
    assert len(told_dice(after)) > 0 and len(dice) == drawn
    assert dice == DiceSeeds(bytes.fromhex(seed), seeds).dice(drawn)
    check_known_lines([*clients.values(), eve])
