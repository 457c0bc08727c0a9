"""The cube, resignations and the optional rules over real sockets (§4.6, §4.7)."""

from __future__ import annotations

import pytest

from backgammon.dice import Roll, ScriptedDice
from backgammon.moves import legal_plays
from backgammon.notation import format_moves
from backgammon.snapshot import match_to_json
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.replies import Toggle
from server.app import App
from server.config import RulesDefaults, Settings

from .conftest import Connect, ScriptedClient, clip_login
from .sessions import ready_pair

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(
        commands_per_second=10_000.0, command_burst=10_000, rules=RulesDefaults(jacoby=True)
    )


async def until(client: ScriptedClient, prefix: str) -> tuple[list[str], str]:
    """Lines up to the first one starting with ``prefix``, and that line."""
    before: list[str] = []
    while True:
        line = await client.line()
        if line.startswith(prefix):
            return before, line
        before.append(line)


async def move_first_play(client: ScriptedClient, lines: list[str]) -> str:
    """Play the first legal play of the last board in ``lines``; return the move text."""
    board = next(line for line in reversed(lines) if line.startswith("board:"))
    view = parse_board(board)
    plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
    text = format_moves(plays[0].moves, view.colour)
    await client.send(f"move {text}")
    return text


async def start(
    connect: Connect, app: App, length: str, dice: tuple[int, ...]
) -> tuple[ScriptedClient, ScriptedClient]:
    app.dice = lambda: ScriptedDice(dice)
    app.coin = lambda: 0  # alice (player 0) plays O
    alice, bob = await ready_pair(connect, app)
    for client in (alice, bob):
        await client.send("set redoubles 1")
    await alice.send("toggle ready")
    await alice.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send(f"invite bob {length}")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    return alice, bob


async def match_line(client: ScriptedClient) -> str:
    """The next line that is not a who update (CLIP 5/6): those come in their own batches
    (D79, D140) and may fall between any two lines of the match."""
    while True:
        line = await client.line()
        if not (line.startswith("5 ") or line == "6"):
            return line


async def test_unlimited_match_beaver_dropped_redouble_and_jacoby(
    connect: Connect, app: App
) -> None:
    dice = (3, 1, 5, 2, 4, 2, 6, 4)
    alice, bob = await start(connect, app, "unlimited", dice)
    await bob.expect(replies.now_playing("alice", None))
    # Opening: alice 3, bob 1; alice moves first with 3-1.
    assert await alice.expect(replies.YOUR_TURN_TO_MOVE)
    await bob.expect(replies.makes_first_move("alice"))
    _, board = await until(alice, "board:")
    moved = await move_first_play(alice, [board])
    await bob.expect(replies.moves("alice", moved.split()))
    await bob.expect(replies.ROLL_OR_DOUBLE)
    # bob doubles, alice beavers, bob takes the redouble at 4 and rolls.
    await bob.send("double")
    assert await match_line(bob) == replies.you_double("alice", redouble_allowed=True)
    await alice.expect(replies.doubles_offer("bob", redouble_allowed=True))
    _, board = await until(alice, "board:")
    assert parse_board(board).was_doubled
    await alice.send("raccoon")
    assert await match_line(alice) == replies.wrong_redouble_name("raccoon", "beaver")
    await alice.send("beaver")
    assert await alice.expect("You accept the double to 4 and redouble.") == []
    await bob.expect(replies.redoubles_offer("alice", 4, more_allowed=False))
    _, board = await until(bob, "board:")
    assert parse_board(board).was_doubled and parse_board(board).cube == 1
    await bob.send("beaver")
    assert await match_line(bob) == replies.NOT_ALLOWED_TO_REDOUBLE
    await bob.send("accept")
    assert await match_line(bob) == replies.you_accept_redouble(4)
    await alice.expect(replies.accepts_redouble("bob", 4))
    lines, _ = await until(bob, "Please move")
    assert replies.you_roll(5, 2) in lines
    moved = await move_first_play(bob, lines)
    await alice.expect(replies.moves("bob", moved.split()))
    # alice cannot double (bob owns the cube): the server rolls for her.
    lines, _ = await until(alice, "Please move")
    assert replies.you_roll(4, 2) in lines and replies.ROLL_OR_DOUBLE not in lines
    assert parse_board([x for x in lines if x.startswith("board:")][-1]).cube == 4
    await move_first_play(alice, lines)
    # bob, the owner, redoubles to 8; alice drops and loses the 4 before it.
    await bob.expect(replies.ROLL_OR_DOUBLE)
    await bob.send("double")
    await alice.expect(replies.doubles_offer("bob", redouble_allowed=True))
    _, board = await until(alice, "board:")
    assert parse_board(board).cube == 4 and parse_board(board).was_doubled
    await alice.send("reject")
    assert await match_line(alice) == replies.you_give_up("bob", 4)
    assert await match_line(alice) == replies.score_line(None, "alice", 0, "bob", 4)
    assert await match_line(alice) == replies.JOIN_NEXT_GAME
    await bob.expect(replies.gives_up_you_win("alice", 4))
    assert await match_line(bob) == replies.score_line(None, "bob", 4, "alice", 0)
    # Next game; the Jacoby rule: a gammon resignation before any double is worth 1.
    await alice.send("join")
    assert await match_line(alice) == replies.wait_for_join("bob")
    await bob.send("join")
    await alice.expect(replies.starting_new_game("bob"))
    await alice.send("resign g")
    await alice.expect(replies.you_want_to_resign("bob", 1))
    await bob.expect(replies.wants_to_resign("alice", 1))
    await bob.send("accept")
    await bob.expect(replies.you_accept_and_win(1))
    await alice.expect(replies.accepts_and_wins("bob", 1))
    assert await match_line(alice) == replies.score_line(None, "alice", 0, "bob", 5)
    # Unlimited matches are never rated; leaving saves the match.
    await alice.send("join")
    await bob.send("leave")
    await bob.expect(replies.YOU_TERMINATED)
    await alice.expect(replies.has_left("bob"))
    saved = await app.db.load_match("alice", "bob")
    assert saved is not None and (saved.score1, saved.score2) == (0, 5)
    user = await app.db.get_user("bob")
    assert user is not None and user.rating == 1500.0 and user.experience == 0


async def test_rejected_resignation_continues_without_a_board(connect: Connect, app: App) -> None:
    """No board after a rejected resignation (D104): a client asks for one."""
    alice, bob = await start(connect, app, "3", (3, 1))
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    await bob.send("resign n")
    await bob.expect(replies.you_want_to_resign("alice", 1))
    await alice.expect(replies.wants_to_resign("bob", 1))
    await alice.send("move 8-5 6-5")
    assert await match_line(alice) == replies.wanted_to_resign("bob")
    await bob.send("roll")
    assert await match_line(bob) == replies.hasnt_responded_to_resign("alice")
    await alice.send("reject")
    assert await match_line(alice) == replies.YOU_REJECT
    assert await match_line(bob) == replies.rejects("alice")
    await alice.send("board")
    board = await match_line(alice)
    assert board.startswith("board:") and board.split(":")[32:35] == ["1", "3", "1"]
    await alice.send("move 8-5 6-5")
    lines = await bob.expect(replies.moves("alice", ["8-5", "6-5"]))
    # Nothing of the match before alice's move (who updates may come: D140).
    assert all(line[:2] in ("5 ", "6") for line in lines), lines


async def test_refusals_during_play_change_nothing(connect: Connect, app: App) -> None:
    alice, bob = await start(connect, app, "3", (3, 1))
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    snapshot = match_to_json(app.local_tables.matches["alice"].match)
    await bob.send("move 1-4 1-2")
    await bob.expect(replies.NOT_YOUR_TURN_TO_MOVE)
    await bob.send("roll")
    await bob.expect(replies.NOT_YOUR_TURN_TO_ROLL)
    await alice.send("double")
    await alice.expect(replies.DOUBLE_BEFORE_ROLL)
    await alice.send("accept")
    await alice.expect(replies.didnt_double_or_resign("bob"))
    await alice.send("move 8-5")
    await alice.expect("** You must give 2 moves.")
    await alice.send("move 8-5 6-5 13-10")
    await alice.expect("** Please don't give more than 2 moves.")
    await alice.send("move 13-11 8-7")
    await alice.expect("** You can't move 2 points in your first move.")
    await alice.send("move 7-4 7-6")
    await alice.expect("** You can't move from 7 in your first move.")
    await alice.send("m 6-5 zz-4")
    await until(alice, "** second move: legal words")
    await alice.send("resign x")
    assert await alice.expect(replies.RESIGN_USAGE) == []
    await bob.send("beaver")
    await bob.expect(replies.REDOUBLES_ONLY_UNLIMITED)
    assert match_to_json(app.local_tables.matches["alice"].match)["phase"] in ("turn", "move")
    assert snapshot["score"] == match_to_json(app.local_tables.matches["alice"].match)["score"]


async def test_rules_chosen_with_invite(connect: Connect, app: App) -> None:
    """D56: rule words after the length; plain invitations never show the extra line."""
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: 0
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 5 jacoby")
    await alice.expect(replies.bad_match_rules("the Jacoby rule is for unlimited matches only"))
    await alice.send("invite bob 5 fancy")
    await alice.expect(replies.unknown_match_rule("fancy"))
    await alice.send("invite bob 5 holland cubelimit=8")
    await alice.expect(replies.match_rules_line(["holland", "cubelimit=8"]))
    await bob.expect(replies.invitation("alice", 5)[0])
    assert await bob.line() == replies.match_rules_line(["holland", "cubelimit=8"])
    await bob.send("join alice")
    await bob.expect(replies.match_rules_line(["holland", "cubelimit=8"]))
    options = app.local_tables.matches["alice"].match.options
    assert options.holland and options.cube_limit == 8 and not options.jacoby
