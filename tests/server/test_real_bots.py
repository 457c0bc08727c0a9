"""Issue 19 (7): scripted clients that behave like real FIBS bots finish whole matches here.

Each test plays a 3-point match between one bot of :mod:`tests.server.real_bots` (the
BaldLies client, GammonBot, MatchDog: what they read and send, from their source) and a
scripted opponent, on the real server with the **shipped** ``fibs.conf`` command limits and
seeded dice. Every match passes a double taken and one dropped (MatchDog, which turns
``double`` off, only takes one), a save (``leave``) and resume
(``invite``/``join``), a resignation and a Crawford game in which the bot rolls, and must end
for both sides with no command refused. A hang fails within
:data:`~tests.server.real_bots.READ_TIMEOUT` seconds naming what the bot waited for.

The seeds are chosen so that each match passes all of these (GammonBot's also an opponent
who cannot move); the assertions fail if a match no longer does.

The bots read their boards through GNU Backgammon, so these tests need it (``gnubg``
marker); they are skipped where it is not installed.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from backgammon.dice import SeededDice
from bots.gnubg.engine import GnubgEngine, find_gnubg
from db.records import UserSettings
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView
from protocol.replies import Toggle
from server import config
from server.app import App
from server.config import Settings
from server.world.passwords import hash_password_sync
from server.world.session import DEFAULT_SETTINGS, DEFAULT_TOGGLES, storable_toggles
from tests.conftest import GNUBG_MISSING

from ..conftest import DbTarget
from .conftest import TEST_COST, Connect, clip_login
from .real_bots import (
    BaldLiesBot,
    GammonBot,
    MatchDogBot,
    Opponent,
    ScriptedBot,
    play_match,
    refused_for_rate,
)
from .test_two_nodes import BUSES, until, world

pytestmark = [
    pytest.mark.gnubg,
    pytest.mark.skipif(
        find_gnubg() is None,
        reason=GNUBG_MISSING,
    ),
]

SHIPPED = config.load(Path(__file__).resolve().parents[2] / "fibs.conf")
LENGTH = 3
MATCHDOG_SEED = 1
"""MatchDog's dice: a match that passes a double, a resignation, a save and a Crawford
game (with ``double`` off it never doubles itself, so other seeds than the others')."""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The command limits of the shipped ``fibs.conf``: the real bots must live with them."""
    return settings.replace(
        commands_per_second=SHIPPED.commands_per_second, command_burst=SHIPPED.command_burst
    )


@pytest.fixture
async def engine() -> AsyncIterator[GnubgEngine]:
    async with GnubgEngine(plies=0, timeout=30.0) as e:
        yield e


async def _bot_account(app: App, name: str, *, saved: bool) -> None:
    """A bot's account, ``ready`` on (bots are invited). ``saved``: moreboards on and
    board style 3 stored with the account, as GammonBot's and MatchDog's accounts have
    (neither sets them itself; the BaldLies client does, after login)."""
    toggles = {**DEFAULT_TOGGLES, Toggle.READY: True}
    if saved:
        toggles[Toggle.MOREBOARDS] = True
    await app.db.create_user(
        name,
        hash_password_sync("secret", TEST_COST),
        toggles=storable_toggles(toggles),
        settings=UserSettings(boardstyle=3) if saved else DEFAULT_SETTINGS,
    )


async def _play(
    connect: Connect,
    app: App,
    engine: GnubgEngine,
    bot_class: type[ScriptedBot],
    name: str,
    *,
    leave_on_bot_turn: bool = True,
    opponent: str = "alice",
    bot_connect: Connect | None = None,
    settled: Callable[[], Awaitable[None]] | None = None,
) -> tuple[ScriptedBot, Opponent]:
    """Log both in, the opponent invites the bot to a 3-point match, both play it out.

    ``opponent``: the opponent's name, in every board the bot gets (its length decides
    how many of the BaldLies client's boards fit in one read of gnubg's);
    ``bot_connect``: where the bot connects (another node of the world), if not to
    ``connect``'s server; ``settled``: awaited before the invitation (until the
    opponent's node knows the bot)."""
    await _bot_account(app, name, saved=bot_class is not BaldLiesBot)
    bot = bot_class(await (bot_connect or connect)(), name, engine)
    await bot.login("secret")
    opponent_client = await clip_login(connect, app, opponent)
    await opponent_client.send("set boardstyle 3")
    await opponent_client.expect("Value of 'boardstyle' set to 3.")
    if settled is not None:
        await settled()
    player = Opponent(
        opponent_client, opponent, name, leave_on_bot_turn=leave_on_bot_turn, bot_player=bot
    )
    await play_match(bot, player, invite=f"invite {name} {LENGTH}")
    return bot, player


def _knows(app: App, name: str) -> bool:
    """``app``'s node knows ``name`` is online (across nodes: once their login came)."""
    return app.presence.get(name) is not None


def _crawford_game(view: BoardView) -> bool:
    """The board is one of the Crawford game: a player 1-away, not yet post-Crawford."""
    return (
        LENGTH - 1 in (view.player_score, view.opponent_score)
        and view.player_score != view.opponent_score
        and not view.post_crawford
        and not view.no_crawford
    )


def _check(bot: ScriptedBot, opponent: Opponent) -> None:
    """The match ended for both, nothing was refused, and it passed every case (MatchDog,
    with ``double`` off, never doubles: no double of its own is dropped)."""
    mine, theirs = bot.client.seen, opponent.client.seen
    assert not any(map(refused_for_rate, mine + theirs)), "a command was refused for its rate"
    assert bot.done and opponent.done
    assert any(
        " accepts the double." in line or line.startswith("You accept the double.")
        for line in theirs
    ), f"no double was taken: {opponent.events}"
    assert isinstance(bot, MatchDogBot) or any(
        " gives up. You win " in line or line.startswith("You give up.") for line in theirs
    ), f"no double was dropped: {opponent.events}"
    assert "resumed" in opponent.events
    assert any(
        line.startswith(f"{bot.name} accepts and wins") or line == replies.rejects(bot.name)
        for line in theirs
    ), "the bot did not answer the resignation"
    crawford = [
        view
        for view in (parse_board(line) for line in mine if line.startswith("board:"))
        if _crawford_game(view)
    ]
    assert any(view.turn is view.colour and view.player_dice != (0, 0) for view in crawford), (
        "the bot never rolled in the Crawford game"
    )


def _check_baldlies(bot: BaldLiesBot) -> None:
    """gnubg answered every board the BaldLies client gave it, and the client never rolled
    where the server rolls for it (issue 27: in the Crawford game the board before the
    automatic roll said it may double; it sent ``roll``, and that board and the roll's
    reached it in one read, so gnubg never answered the roll's board)."""
    assert not bot.lost_boards, f"gnubg never answered {bot.lost_boards!r}"
    refused = [
        line
        for line in bot.client.seen
        if line in (replies.ALREADY_ROLLED, replies.CRAWFORD_NO_DOUBLE)
    ]
    assert not refused, f"the BaldLies client rolled or doubled where it may not: {refused!r}"


async def test_baldlies_client_finishes_a_match(
    connect: Connect, app: App, engine: GnubgEngine
) -> None:
    app.dice = lambda: SeededDice(1)
    app.coin = lambda: 0
    # The BaldLies client acts on boards only and FIBS sends none after a resume: resumed
    # on its own roll it would wait. The match is saved on the opponent's turn.
    bot, opponent = await _play(
        connect,
        app,
        engine,
        BaldLiesBot,
        "baldlies",
        leave_on_bot_turn=False,
        opponent="GnuBL_opponent",
    )
    _check(bot, opponent)
    assert isinstance(bot, BaldLiesBot)
    _check_baldlies(bot)


async def test_baldlies_client_plays_on_when_its_opponent_cannot_move(
    connect: Connect, app: App, engine: GnubgEngine
) -> None:
    """Issue 27: the BaldLies client ignores ``It's your turn. Please roll or double`` and
    waits for a board; after ``alice can't move.`` it gets one (D277) and rolls. Seeded
    so that alice cannot move three times while the bot may double; before D277 the
    client hung at the first (``alice can't move.``, the prompt, then nothing)."""
    app.dice = lambda: SeededDice(10)
    app.coin = lambda: 0
    bot, opponent = await _play(
        connect, app, engine, BaldLiesBot, "baldlies", leave_on_bot_turn=False
    )
    _check(bot, opponent)
    assert isinstance(bot, BaldLiesBot)
    _check_baldlies(bot)
    seen = bot.client.seen
    prompted = [
        i
        for i, line in enumerate(seen[:-2])
        if line == "alice can't move." and seen[i + 2] == replies.ROLL_OR_DOUBLE
    ]
    assert len(prompted) == 3 and all(seen[i + 1].startswith("board:You:") for i in prompted)


async def test_gammonbot_finishes_a_match(connect: Connect, app: App, engine: GnubgEngine) -> None:
    app.dice = lambda: SeededDice(4)
    app.coin = lambda: 1
    bot, opponent = await _play(connect, app, engine, GammonBot, "gammonbot")
    _check(bot, opponent)
    # It asks for a board after "alice can't move." and after the resume, and acts on
    # every board that shows its turn without dice where it may double: after "alice
    # can't move." it answers the board pushed there (D277) and the one it asked for,
    # so its second answer is refused (here a double: "** alice hasn't responded to
    # your double yet."). In the Crawford game the board before the server's roll says
    # it may not double (D278), so it never rolls there: before D278 it sent a refused
    # roll every turn of the Crawford game.
    seen = bot.client.seen
    prompted = [
        i
        for i, line in enumerate(seen[:-2])
        if line == "alice can't move." and seen[i + 2] == replies.ROLL_OR_DOUBLE
    ]
    assert len(prompted) == 1 and seen[prompted[0] + 1].startswith("board:You:")
    assert replies.ALREADY_ROLLED not in seen
    # Boards it had gnubg answer came again and were answered from gnubg's cache (D198):
    # the board it asks for after "alice doubles." is the one pushed with the double
    # (D100), and the one after "alice can't move." the one pushed there (D277).
    assert isinstance(bot, GammonBot) and bot.repeated_answers > 0


async def test_matchdog_finishes_a_match(connect: Connect, app: App, engine: GnubgEngine) -> None:
    app.dice = lambda: SeededDice(MATCHDOG_SEED)
    app.coin = lambda: 0
    bot, opponent = await _play(connect, app, engine, MatchDogBot, "matchdog")
    _check(bot, opponent)
    assert not any(line.startswith("** alice didn't double or resign") for line in bot.client.seen)
    # Issue 27, the real MatchDog: it turns ``double`` off, so the server rolls for it on
    # every turn; the board of alice's move before that roll said it may double, so it
    # gave that board to gnubg for a cube decision and the roll's board came while gnubg
    # was busy: it hung waiting for its move. D346: that board shows its flag 0.
    seen = bot.client.seen
    assert replies.ROLL_OR_DOUBLE not in seen and replies.ALREADY_ROLLED not in seen


@pytest.mark.parametrize("bus", BUSES)
async def test_bots_finish_their_matches_with_the_opponent_on_another_node(
    settings: Settings, db_target: DbTarget, engine: GnubgEngine, bus: str
) -> None:
    """Issue 32's check: the scripted real-bot clients cannot tell that their opponent
    is on another node. MatchDog and GammonBot on one node, their opponent (who invites
    them: the table is on her node) on the other, the same seeds and checks as above."""
    bots: list[tuple[type[ScriptedBot], str, int, int]] = [
        (MatchDogBot, "matchdog", MATCHDOG_SEED, 0),
        (GammonBot, "gammonbot", 4, 1),
    ]
    for bot_class, name, seed, coin in bots:
        async with world(settings, db_target, 2, bus) as nodes:
            owner = nodes.apps[0]
            owner.dice = functools.partial(SeededDice, seed)
            owner.coin = functools.partial(int, coin)
            played = await _play(
                nodes.connect_to(0),
                owner,
                engine,
                bot_class,
                name,
                bot_connect=nodes.connect_to(1),
                settled=functools.partial(until, functools.partial(_knows, owner, name)),
            )
            _check(*played)
