"""Saved matches (§4.9): leave, drop and resume exactly; a restart between; Crawford refusal."""

from __future__ import annotations

import asyncio

import pytest

from backgammon.board import Position
from backgammon.dice import ScriptedDice, SeededDice
from backgammon.events import WinKind
from backgammon.match import Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from server.tables.matches import LiveMatch
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, clip_login
from .match_driver import Player, play_out
from .sessions import ready_pair
from .test_match_rules import match_line, move_first_play, until

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def store(app: App, match: Match, names: tuple[str, str] = ("alice", "bob")) -> None:
    """Put ``match`` in the database as the pair's saved match."""
    live = LiveMatch(names, match, started_at=1_700_000_000)
    await app.db.save_match(
        live.table_id,
        names[0],
        names[1],
        live.snapshot(),
        match_length=live.length,
        score_a=match.score[0],
        score_b=match.score[1],
    )


async def resume_lines(alice: ScriptedClient, bob: ScriptedClient) -> tuple[list[str], list[str]]:
    """alice invites bob to the saved match, bob joins; each one's lines up to the end of
    the resume synopsis (§4.9), none of them a board (D105)."""
    await alice.send("invite bob")
    await alice.expect(replies.you_invited_resume("bob"), timeout=2)
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing_resumed("alice"))
    await alice.expect(replies.joined_resumed("bob"))
    seen: list[list[str]] = []
    for client in (alice, bob):
        lines: list[str] = []
        while sum(line.startswith("points for ") for line in lines) < 2:
            lines.append(await client.line())
        assert not any(line.startswith("board:") for line in lines), lines
        seen.append(lines)
    return seen[0], seen[1]


async def resume(alice: ScriptedClient, bob: ScriptedClient) -> tuple[str, str]:
    """Resume as :func:`resume_lines`, then each asks for its board as the bots do (no
    board is pushed after the synopsis, D105); the two boards."""
    await resume_lines(alice, bob)
    boards = []
    for client in (alice, bob):
        await client.send("board")
        before, board = await until(client, "board:")
        assert not any(line.startswith("board:") for line in before)
        boards.append(board)
    return boards[0], boards[1]


async def no_board(client: ScriptedClient, wait: float = 0.5) -> list[str]:
    """The lines that arrive within ``wait`` seconds; none of them may be a board."""
    lines: list[str] = []
    try:
        while True:
            lines.append(await client.line(wait))
    except TimeoutError:
        pass
    assert not any(line.startswith("board:") for line in lines), lines
    return lines


async def players(connect: Connect, app: App) -> tuple[ScriptedClient, ScriptedClient]:
    """:func:`ready_pair`, alice ready too."""
    alice, bob = await ready_pair(connect, app)
    await alice.send("toggle ready")
    await alice.expect(replies.toggle_message(Toggle.READY, True))
    return alice, bob


async def test_drop_mid_turn_and_resume_with_the_same_dice(connect: Connect, app: App) -> None:
    app.dice = lambda: SeededDice(4)
    app.coin = lambda: 0
    alice, bob = await players(connect, app)
    await alice.send("invite bob 5")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 5))
    live = app.local_tables.matches["alice"]
    starter = live.match.turn
    mover, other = (alice, bob) if starter == 0 else (bob, alice)
    await until(mover, "board:")
    await mover.close()  # dropped with dice out, before moving
    await other.expect(replies.saved_after(replies.drops_connection(live.names[starter])))
    before = match_to_json(live.match)
    again = await clip_login(connect, app, live.names[starter], create=False)
    await again.send("set boardstyle 3")
    await again.send("toggle ready")
    await again.expect(replies.toggle_message(Toggle.READY, False))  # ready is stored as it was
    await again.send("toggle ready")
    await again.expect(replies.toggle_message(Toggle.READY, True))
    first, second = (again, other) if starter == 0 else (other, again)
    a_board, _ = await resume(first, second)
    resumed = app.local_tables.matches["alice"].match
    assert match_to_json(resumed)["position"] == before["position"]
    assert resumed.dice is not None and resumed.phase is Phase.MOVE
    view = parse_board(a_board)
    assert view.position(0) == resumed.position


async def test_resume_with_a_pending_double_offers_it_again(connect: Connect, app: App) -> None:
    """D106: the doubled player is offered the double again after the synopsis, with the
    board that goes with it ("was doubled" = 1, may double 0:0); the match then finishes."""
    match = Match(MatchOptions(length=3), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    match.double(1)
    app.dice = lambda: SeededDice(11)
    alice, bob = await players(connect, app)
    await store(app, match)
    await resume_lines(alice, bob)
    assert await match_line(alice) == replies.doubles_offer("bob")
    board = await match_line(alice)
    view = parse_board(board)
    assert view.was_doubled and view.cube == 1 and view.turn is view.colour
    assert not view.player_may_double and not view.opponent_may_double
    assert await match_line(bob) == replies.you_double("alice")
    assert not any(line.startswith("board:") for line in await no_board(bob))
    await alice.send("accept")
    await alice.expect(replies.you_accept_double(2))
    await bob.expect(replies.accepts_double("alice", 2))
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    assert "alice" not in app.local_tables.matches
    assert await app.db.load_match("alice", "bob") is None


@pytest.mark.parametrize("answer", ["accept", "reject"])
async def test_resume_with_a_pending_resignation_offers_it_again(
    connect: Connect, app: App, answer: str
) -> None:
    """D106: a resignation offered before the save is offered again to the player who
    must answer; the answer works and the match then finishes."""
    match = Match(MatchOptions(length=3), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    match.resign(0, WinKind.SINGLE)  # alice resigns with her opening dice out
    app.dice = lambda: SeededDice(12)
    alice, bob = await players(connect, app)
    await store(app, match)
    await resume_lines(alice, bob)
    assert await match_line(bob) == replies.wants_to_resign("alice", 1)
    assert await match_line(alice) == replies.you_want_to_resign("bob", 1)
    await no_board(alice, 0.3)
    await bob.send(answer)
    if answer == "accept":
        await bob.expect(replies.you_accept_and_win(1))
        await alice.expect(replies.accepts_and_wins("bob", 1))
    else:
        await bob.expect(replies.YOU_REJECT)
        await alice.expect(replies.rejects("bob"))
        await alice.send("board")  # no board comes by itself (D104): alice asks, as bots do
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    assert "alice" not in app.local_tables.matches


async def test_boards_after_cant_move(connect: Connect, app: App) -> None:
    """§4.5, D277 (revising D103), D108: the roller's one board comes between its roll
    and "You can't move.", showing the roll on its own turn with nothing to move; after
    "<name> can't move." the opponent, asked to roll or double next, gets the board
    before the prompt (the BaldLies client acts on boards only), and a watcher gets it as
    after a move. The one who could not move gets nothing more."""
    match = Match(MatchOptions(length=3), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    # bob (X) is on the bar; alice (O) holds points 1-6: bob dances with any roll.
    board = [-1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, -14, 3] + [0] * 12
    match.position = Position.from_fibs_board(board, 0)
    app.dice = lambda: ScriptedDice((6, 5))
    alice, bob = await players(connect, app)
    carol = await clip_login(connect, app, "carol")
    await carol.send("set boardstyle 3")
    await carol.send("watch bob")
    await carol.expect(replies.nothing_interesting("bob"))
    await store(app, match)
    await resume_lines(alice, bob)
    await bob.expect(replies.ROLL_OR_DOUBLE)
    await bob.send("roll")
    before, _ = await until(bob, replies.YOU_CANT_MOVE)
    boards = [line for line in before if line.startswith("board:")]
    assert before[-2:] == [replies.you_roll(6, 5), *boards] and len(boards) == 1, before
    # turn X (bob), bob's dice 6 5, cube 1, may double 1:1, can move 0 (D108)
    assert flags(boards[0]) == (-1, 6, 5, 0, 0, 1, 1, 1, 0, 0, 0, 0)
    before, _ = await until(alice, replies.cant_move("bob"))
    assert not any(line.startswith("board:") for line in before)
    line, prompt = await alice.line(), await alice.line()
    assert prompt == replies.ROLL_OR_DOUBLE
    # turn O (alice), no dice, cube 1, may double 1:1
    assert flags(line) == (1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0)
    before, _ = await until(carol, replies.cant_move("bob"))
    assert not any(line.startswith("board:") for line in before)
    line = await carol.line()
    assert line.startswith("board:bob:alice:")
    assert flags(line) == (1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0)
    await no_board(alice, 0.1)
    await no_board(bob, 0.1)
    await no_board(carol, 0.1)


async def test_no_board_after_cant_move_for_the_player_rolled_for(
    connect: Connect, app: App
) -> None:
    """D277: when the server rolls for the opponent of the player who could not move
    (here: bob owns the cube), that opponent gets no board between "<name> can't move."
    and "You roll": the roll's board is their first (MatchDog waits for it there)."""
    match = Match(MatchOptions(length=3), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    board = [-1, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0, -14, 3] + [0] * 12
    match.position = Position.from_fibs_board(board, 0)
    match.cube, match.cube_owner = 2, 1
    app.dice = lambda: ScriptedDice((6, 5, 2, 1))
    alice, bob = await players(connect, app)
    await store(app, match)
    await resume_lines(alice, bob)
    await bob.expect(replies.ROLL_OR_DOUBLE)
    await bob.send("roll")
    await until(alice, replies.cant_move("bob"))
    assert await alice.line() == replies.you_roll(2, 1)
    line = await alice.line()
    # turn O (alice), her dice 2 1, cube 2, may double 0:1 (bob owns it), can move 2
    assert flags(line) == (1, 2, 1, 0, 0, 2, 0, 1, 0, 2, 0, 0)
    assert await alice.line() == replies.please_move(2)


FLAGS = (32, 33, 34, 35, 36, 37, 38, 39, 40, 49, 50, 51)
"""turn, dice, cube, may double (2), was doubled, can move, the Crawford fields (§3.1)."""


def flags(line: str) -> tuple[int, ...]:
    tokens = line.split(":")
    assert len(tokens) == 53 and tokens[0] == "board"
    return tuple(int(tokens[i]) for i in FLAGS)


def between_games(score: tuple[int, int], *, game: int, crawford_played: bool) -> Match:
    """A 3-point match of alice (player 0) and bob after ``game`` games at ``score``; the
    next game swaps colours, so alice is O in it."""
    match = Match(MatchOptions(length=3), ScriptedDice(()), o_player=1)
    match.score = list(score)
    match.crawford_played = crawford_played
    match.phase = Phase.GAME_OVER
    match.game = game
    return match


async def next_game(app: App, alice: ScriptedClient, bob: ScriptedClient, match: Match) -> None:
    """Store ``match`` (between games), resume it, and both join its next game."""
    await store(app, match)
    await resume_lines(alice, bob)
    await alice.expect(replies.JOIN_NEXT_GAME)
    await alice.send("join")
    await bob.send("join")


async def test_no_roll_or_double_for_a_player_who_needs_one_point(
    connect: Connect, app: App
) -> None:
    """D109: in a post-Crawford game the trailer is asked to roll or double, the leader
    (one point to go) is not: the server rolls for them, as MatchDog expects."""
    app.dice = lambda: ScriptedDice((3, 1, 5, 2, 4, 3))  # the resumed match's dice
    alice, bob = await players(connect, app)
    await next_game(app, alice, bob, between_games((2, 1), game=2, crawford_played=True))
    # Colours swap: alice is O. Opening: alice 3, bob 1; alice moves 3-1.
    lines, _ = await until(alice, "board:")
    assert app.local_tables.matches["alice"].match.post_crawford
    await alice.send("move 8-5 6-5")
    await bob.expect(replies.ROLL_OR_DOUBLE)  # the trailer may double
    await bob.send("roll")
    before, _ = await until(bob, replies.please_move(2))
    await move_first_play(bob, before)
    lines, _ = await until(alice, replies.you_roll(4, 3))
    assert replies.ROLL_OR_DOUBLE not in lines
    await alice.expect(replies.please_move(2))


async def test_crawford_game_boards_and_the_refused_double(connect: Connect, app: App) -> None:
    """The Crawford game's boards carry FIBS's flags (1:1, fields 50/51 0:0) for both
    players and a watcher (§3.4, D24), except the one before the server rolls for a
    player, where that player's flag is 0 (D278); the double itself is refused."""
    app.dice = lambda: ScriptedDice((3, 1, 5, 2))  # the resumed match's dice
    alice, bob = await players(connect, app)
    carol = await clip_login(connect, app, "carol")
    await carol.send("set boardstyle 3")
    await carol.send("watch alice")
    await carol.expect(replies.nothing_interesting("alice"))
    await next_game(app, alice, bob, between_games((2, 0), game=1, crawford_played=False))
    # The next game swaps colours: alice is O. Opening: alice 3, bob 1; alice moves 3-1.
    _, a_board = await until(alice, "board:")
    _, b_board = await until(bob, "board:")
    _, c_board = await until(carol, "board:")
    live = app.local_tables.matches["alice"]
    assert live.match.crawford_game and live.match.o_player == 0
    assert flags(a_board) == (1, 3, 1, 0, 0, 1, 1, 1, 0, 2, 0, 0)
    assert flags(b_board) == (1, 0, 0, 3, 1, 1, 1, 1, 0, 0, 0, 0)
    assert c_board.startswith("board:alice:bob:") and flags(c_board) == flags(a_board)
    await alice.send("double")  # with the opening dice out
    await alice.expect(replies.CRAWFORD_NO_DOUBLE)
    await alice.send("move 8-5 6-5")
    # bob's turn before his roll, which the server makes for him (he may not double):
    # his own flag 0, as where the cube is on the other side (D278; 1:1 made the BaldLies
    # client and GammonBot send a refused roll; 0:0 would read as a pending double);
    # his roll's board follows with 1:1 again.
    _, b_board = await until(bob, "board:")
    assert flags(b_board) == (-1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0)
    _, b_board = await until(bob, "board:")
    assert flags(b_board) == (-1, 5, 2, 0, 0, 1, 1, 1, 0, 2, 0, 0)
    _, a_board = await until(alice, "board:")
    assert flags(a_board) == (-1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0)
    _, c_board = await until(carol, "board:")
    assert flags(c_board) == flags(a_board)
    await bob.expect(replies.please_move(2))
    await bob.send("double")
    await bob.expect(replies.CRAWFORD_NO_DOUBLE)


async def test_leave_and_restart_then_resume(
    connect: Connect,
    app: App,
    service: Service,
    settings: Settings,
    db_target: DbTarget,
) -> None:
    app.dice = lambda: SeededDice(8)
    app.coin = lambda: 1
    alice, bob = await players(connect, app)
    await alice.send("invite bob 3")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 3))
    live = app.local_tables.matches["alice"]
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
    await service.stop()
    # A new server process on the same database.
    db = await db_target.open()
    restarted = Service(App(settings, db, dice=lambda: SeededDice(9)))
    await restarted.start()
    try:
        clients = []
        for name in ("alice", "bob"):
            reader, writer = await asyncio.open_connection("127.0.0.1", restarted.port)
            client = ScriptedClient(reader, writer)
            clients.append(client)
            await client.prompt(replies.LOGIN_PROMPT)
            await client.send(f"login test 1008 {name} secret")
            await client.expect("6")
            await client.send("set boardstyle 3")
            await client.expect("Value of 'boardstyle' set to 3.")
        a_board, _ = await resume(clients[0], clients[1])
        assert parse_board(a_board).position(0) == position
        resumed = restarted.app.local_tables.matches["alice"]
        assert resumed.match.position == position
        assert resumed.table_id == live.table_id  # the same table, across the restart
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
        assert app.local_tables.matches["alice"].match.score == [0, points]
    else:
        await bob.expect(replies.YOU_REJECT)
        await alice.expect(replies.rejects("bob"))
        game = app.local_tables.matches["alice"].match
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
    assert "alice" not in app.local_tables.matches
    assert await app.db.load_match("alice", "bob") is not None
    await again.expect("6")
    await again.send("rawwho alice")
    assert (await again.expect_prefix("5 alice")).split()[2] == "-"  # not playing now


async def _new_match_after(app: App, alice: ScriptedClient, bob: ScriptedClient) -> LiveMatch:
    """bob joins alice's invitation to a new 3-point match; the match once its start is
    saved (its first board reached a player)."""
    await bob.send("join alice")
    await bob.expect(replies.now_playing("alice", 3))
    live = app.local_tables.matches["alice"]
    mover = alice if live.match.turn == 0 else bob
    await until(mover, "board:")
    return live


async def _stored(app: App) -> LiveMatch:
    saved = await app.db.load_match("alice", "bob")
    assert saved is not None
    return LiveMatch.from_saved(saved, SeededDice(1))


async def test_a_new_match_replaces_the_saved_one(connect: Connect, app: App) -> None:
    """§4.3: inviting to a new match warns of the saved one; joining deletes it."""
    alice, bob = await players(connect, app)
    await store(app, Match(MatchOptions(length=5), SeededDice(3)))
    await alice.send("invite bob 3")
    await bob.expect(replies.saved_match_warning(5))
    old = await app.db.load_match("alice", "bob")
    live = await _new_match_after(app, alice, bob)
    stored = await _stored(app)
    assert stored.length == 3 and stored.started_at == live.started_at
    assert match_to_json(stored.match) == match_to_json(live.match)
    assert old is not None and stored.table_id == live.table_id != old.table_id


async def test_a_match_saved_after_the_invitation_is_replaced_by_the_first_save(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a saved match at the invitation, joining writes nothing before the match's
    first save; a saved match that appeared meanwhile is replaced by that save, events
    and all."""
    alice, bob = await players(connect, app)
    await alice.send("invite bob 3")
    await bob.expect(replies.type_join("alice"))
    await store(app, Match(MatchOptions(length=5), SeededDice(3)))
    deletes: list[str] = []
    delete = app.db.delete_match

    async def counted(table_id: str) -> bool:
        deletes.append(table_id)
        return await delete(table_id)

    monkeypatch.setattr(app.db, "delete_match", counted)
    live = await _new_match_after(app, alice, bob)
    assert deletes == []
    stored = await _stored(app)
    assert stored.length == 3 and match_to_json(stored.match) == match_to_json(live.match)
    assert stored.table_id == live.table_id
