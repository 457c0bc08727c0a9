"""Watching, kibitz and whisper (§4.11, §4.12): a third client follows a match."""

from __future__ import annotations

import pytest

from backgammon.dice import ScriptedDice
from protocol import clip, replies
from protocol.board_fibs import parse_board
from protocol.replies import Toggle
from server.app import App
from server.config import Settings

from .conftest import Connect, clip_login
from .sessions import ready_pair
from .test_match_rules import move_first_play, until

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def test_a_watcher_sees_everything_and_can_do_nothing(connect: Connect, app: App) -> None:
    app.dice = lambda: ScriptedDice((3, 1, 5, 2))
    app.coin = lambda: 0
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    carol = await clip_login(connect, app, "carol")
    for client in (alice, bob, carol):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    _, alice_board = await until(alice, "board:")

    await carol.send("watch alice")
    await carol.expect(replies.now_watching("alice"))
    _, watched = await until(carol, "board:")
    view = parse_board(watched)
    assert view.player == "alice" and view.opponent == "bob"  # not "You"
    assert view.board == parse_board(alice_board).board
    await alice.expect(replies.is_watching_you("carol"))
    await bob.expect(replies.starts_watching("carol", "alice"))
    await carol.send("rawwho carol")
    info = clip.WhoInfo.parse(await carol.expect_prefix("5 carol"))
    assert info.watching == "alice"

    moved = await move_first_play(alice, [alice_board])
    await carol.expect(replies.moves("alice", moved.split()))
    assert (await carol.line()).startswith("board:")
    # A 1-point match: nobody is offered the cube, the server rolls for bob (D109).
    await bob.expect(replies.you_roll(5, 2))
    await carol.expect(replies.rolls("bob", 5, 2))

    await carol.send("kibitz good luck")
    await carol.expect("19 good luck")
    await carol.expect(replies.heard_you(2))
    await alice.expect("15 carol good luck")
    await bob.expect("15 carol good luck")
    await alice.send("whisper she is nervous")
    await alice.expect("18 she is nervous")
    await alice.expect(replies.heard_you(1))
    await carol.expect("14 alice she is nervous")

    for command in ("roll", "move 8-5 6-5", "accept", "double", "resign n"):
        await carol.send(command)
        await carol.expect(replies.NOT_PLAYING)
    await carol.send("board")
    assert parse_board(await carol.expect_prefix("board:")).player == "alice"
    await carol.send("unwatch")
    await carol.expect(replies.you_stop_watching("alice"))
    await alice.expect(replies.stops_watching_you("carol"))
    await carol.send("kibitz anyone?")
    await carol.expect(replies.NOT_WATCHING_OR_PLAYING)


async def test_watching_refusals(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await clip_login(connect, app, "bob")
    await alice.send("watch alice")
    await alice.expect(replies.USE_A_MIRROR)
    await alice.send("watch bob")
    await alice.expect(replies.now_watching("bob"))
    await alice.expect(replies.nothing_interesting("bob"))
    await alice.send("watch nobody")
    await alice.expect(replies.no_one_there("nobody"))
    await alice.send("unwatch")
    await alice.expect(replies.you_stop_watching("bob"))
    await alice.send("unwatch")
    await alice.expect(replies.NOT_WATCHING)


async def test_a_slow_player_is_reminded_and_the_other_may_leave(
    connect: Connect, app: App, settings: Settings
) -> None:
    app.settings = settings.replace(match_reminder=0.3, match_timeout=0.6)
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)  # alice must move and does not
    await alice.expect(replies.turn_reminder("bob"))
    await bob.expect(replies.opponent_too_slow("alice", 0))
    await bob.send("leave")
    await bob.expect(replies.YOU_TERMINATED)
    await alice.expect(replies.has_left("bob"))
    assert await app.db.load_match("alice", "bob") is not None


async def test_blinding_a_watcher_stops_the_watching(connect: Connect, app: App) -> None:
    """§4.11: the blinded watcher is told and stops; the opponent hears of it."""
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: 0
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    carol = await clip_login(connect, app, "carol")
    for client in (alice, bob, carol):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    await carol.send("watch bob")
    await carol.expect(replies.now_watching("bob"))
    await alice.send("blind carol")
    await alice.expect(replies.you_blind("carol"))
    await carol.expect(replies.bans_you("alice"))
    await bob.expect(replies.bans_from_watching("alice", "carol"))
    assert carol_is_not_watching(app)
    await carol.send("watch bob")
    await carol.expect(replies.doesnt_want_watch("bob"))


def carol_is_not_watching(app: App) -> bool:
    carol = app.registry.get("carol")
    return (
        carol is not None
        and carol.watching is None
        and not app.local_tables.matches["alice"].watchers
    )
