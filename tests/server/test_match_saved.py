"""Saved matches (§4.9): leave, drop and resume exactly; a restart between; Crawford refusal."""

from __future__ import annotations

import asyncio

import pytest

from backgammon.dice import ScriptedDice, SeededDice
from backgammon.match import Match, MatchOptions, Phase
from protocol import replies
from protocol.board_fibs import parse_board
from server.app import App
from server.config import Settings
from server.matches import LiveMatch
from tests.conftest import DbTarget

from .conftest import Connect, FibsClient, clip_login
from .test_match_rules import move_first_play, until

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def store(app: App, match: Match, names: tuple[str, str] = ("alice", "bob")) -> None:
    """Put ``match`` in the database as the pair's saved match."""
    live = LiveMatch(names, match)
    await app.db.save_match(
        names[0],
        names[1],
        live.snapshot(),
        match_length=live.length,
        score_a=match.score[0],
        score_b=match.score[1],
    )


async def resume(alice: FibsClient, bob: FibsClient) -> tuple[str, str]:
    """alice invites bob to the saved match, bob joins; the boards each gets first."""
    await alice.send("invite bob")
    await alice.expect(replies.you_invited_resume("bob"), timeout=2)
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing_resumed("alice"))
    await alice.expect(replies.joined_resumed("bob"))
    _, a_board = await until(alice, "board:")
    _, b_board = await until(bob, "board:")
    return a_board, b_board


async def players(connect: Connect, app: App) -> tuple[FibsClient, FibsClient]:
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    for client in (alice, bob):
        await client.send("set boardstyle 3")
        await client.send("toggle ready")
        await client.expect(replies.toggle_message("ready", True))
    return alice, bob


async def test_drop_mid_turn_and_resume_with_the_same_dice(connect: Connect, app: App) -> None:
    app.dice = lambda: SeededDice(4)
    app.coin = lambda: 0
    alice, bob = await players(connect, app)
    await alice.send("invite bob 5")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 5))
    live = app.matches["alice"]
    starter = live.match.turn
    mover, other = (alice, bob) if starter == 0 else (bob, alice)
    await until(mover, "board:")
    await mover.close()  # dropped with dice out, before moving
    await other.expect(replies.saved_after(replies.drops_connection(live.names[starter])))
    before = live.match.to_json()
    again = await clip_login(connect, app, live.names[starter], create=False)
    await again.send("set boardstyle 3")
    await again.send("toggle ready")
    await again.expect(replies.toggle_message("ready", False))  # ready is stored as it was
    await again.send("toggle ready")
    await again.expect(replies.toggle_message("ready", True))
    first, second = (again, other) if starter == 0 else (other, again)
    a_board, _ = await resume(first, second)
    resumed = app.matches["alice"].match
    assert resumed.to_json()["position"] == before["position"]
    assert resumed.dice is not None and resumed.phase is Phase.MOVE
    view = parse_board(a_board)
    assert view.position(0) == resumed.position


async def test_drop_mid_double_resumes_with_the_offer(connect: Connect, app: App) -> None:
    match = Match(MatchOptions(length=5), ScriptedDice((3, 1, 4, 2)), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    match.double(1)
    alice, bob = await players(connect, app)
    await store(app, match)
    a_board, b_board = await resume(alice, bob)
    assert parse_board(a_board).was_doubled and parse_board(a_board).cube == 1
    assert not parse_board(b_board).was_doubled
    await alice.send("accept")
    await alice.expect(replies.you_accept_double(2))
    await bob.expect(replies.accepts_double("alice", 2))


async def test_crawford_game_refuses_the_double(connect: Connect, app: App) -> None:
    match = Match(MatchOptions(length=3), ScriptedDice((3, 1)), o_player=0)
    match.score = [2, 0]
    match.crawford_played = False
    match.phase = Phase.GAME_OVER
    match.game = 1
    alice, bob = await players(connect, app)
    await store(app, match)
    await resume(alice, bob)
    await alice.expect(replies.JOIN_NEXT_GAME)
    await alice.send("join")
    await bob.send("join")
    await until(alice, "board:")
    match = app.matches["alice"].match
    assert match.crawford_game
    mover = alice if match.turn == 0 else bob
    await mover.send("double")  # the starter, with the opening dice out
    await mover.expect(replies.CRAWFORD_NO_DOUBLE)


async def test_leave_and_restart_then_resume(
    connect: Connect, app: App, settings: Settings, db_target: DbTarget
) -> None:
    app.dice = lambda: SeededDice(8)
    app.coin = lambda: 1
    alice, bob = await players(connect, app)
    await alice.send("invite bob 3")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 3))
    live = app.matches["alice"]
    mover = alice if live.match.turn == 0 else bob
    _, board = await until(mover, "board:")
    await move_first_play(mover, [board])
    await asyncio.sleep(0.2)
    position = live.match.position
    await alice.send("leave")
    await alice.expect(replies.YOU_TERMINATED)
    await bob.expect(replies.has_left("alice"))
    assert await app.db.count_saved_matches("alice") == 1
    await alice.send("oldmoves bob")
    header = await alice.expect_prefix("Score is ")
    assert header == "Score is 0-0 in a 3 point match."
    o_name, x_name = ("alice", "bob") if live.match.o_player == 0 else ("bob", "alice")
    await alice.expect(f"{x_name} is X - {o_name} is O")
    assert (await alice.line()) == ""
    assert (await alice.line()).startswith(("O: (", "X: ("))
    await app.stop()
    # A new server process on the same database.
    db = await db_target.open()
    restarted = App(settings, db, dice=lambda: SeededDice(9))
    await restarted.start()
    try:
        clients = []
        for name in ("alice", "bob"):
            reader, writer = await asyncio.open_connection("127.0.0.1", restarted.port)
            client = FibsClient(reader, writer)
            clients.append(client)
            await client.prompt(replies.LOGIN_PROMPT)
            await client.send(f"login test 1008 {name} secret")
            await client.expect("6")
            await client.send("set boardstyle 3")
            await client.expect("Value of 'boardstyle' set to 3.")
        a_board, _ = await resume(clients[0], clients[1])
        assert parse_board(a_board).position(0) == position
        assert restarted.matches["alice"].match.position == position
        for client in clients:
            await client.close()
    finally:
        await restarted.stop()
        await db.close()


@pytest.mark.parametrize("kind", ["n", "g", "b"])
@pytest.mark.parametrize("answer", ["accept", "reject"])
async def test_resignations_of_each_kind(
    connect: Connect, app: App, kind: str, answer: str
) -> None:
    """§4.7: resign n|g|b is worth the cube times 1, 2 or 3; accepted or rejected."""
    match = Match(MatchOptions(length=7), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    match.cube, match.cube_owner = 2, 0
    alice, bob = await players(connect, app)
    await store(app, match)
    await resume(alice, bob)
    points = 2 * {"n": 1, "g": 2, "b": 3}[kind]
    await alice.send(f"resign {kind}")
    await alice.expect(replies.you_want_to_resign("bob", points))
    await bob.expect(replies.wants_to_resign("alice", points))
    await bob.send(answer)
    if answer == "accept":
        await bob.expect(replies.you_accept_and_win(points))
        await alice.expect(replies.accepts_and_wins("bob", points))
        await alice.expect(replies.score_line(7, "alice", 0, "bob", points))
        assert app.matches["alice"].match.score == [0, points]
    else:
        await bob.expect(replies.YOU_REJECT)
        await alice.expect(replies.rejects("bob"))
        game = app.matches["alice"].match
        assert game.resignation is None and game.score == [0, 0] and game.to_act == 1


async def test_a_second_login_closes_the_first_and_saves_the_match(
    connect: Connect, app: App
) -> None:
    """§1.4, §6.11: the new connection is warned, the old one closed, the match saved."""
    app.dice = lambda: ScriptedDice((3, 1))
    alice, bob = await players(connect, app)
    await alice.send("invite bob 3")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 3))
    again = await connect()
    await again.prompt(replies.LOGIN_PROMPT)
    await again.send("login test_client 1008 alice secret")
    assert await again.line() == replies.ALREADY_LOGGED_IN
    assert (await again.line()).startswith("1 alice ")
    assert await alice.closed()
    await bob.expect(replies.closed_old_connection("alice"))
    assert "alice" not in app.matches
    assert await app.db.load_match("alice", "bob") is not None
    await again.expect("6")
    await again.send("rawwho alice")
    assert (await again.expect_prefix("5 alice")).split()[2] == "-"  # not playing now
