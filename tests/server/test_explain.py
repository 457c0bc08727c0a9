"""Commands explain themselves in telnet mode; CLIP clients get FIBS's lines alone
(issue 14 item 5; D170-D173)."""

from __future__ import annotations

import pytest

from backgammon.dice import ScriptedDice
from protocol import replies
from protocol.replies import MoveErrorReason, Toggle
from server.app import App
from server.config import Settings

from .conftest import Connect, ScriptedClient, clip_login
from .sessions import command, online, start_match, telnet_login

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def test_an_ambiguous_prefix_lists_the_commands(connect: Connect, app: App) -> None:
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "sh") == [
        replies.unknown_command("sh"),
        replies.ambiguous_command("sh", ["shout", "show"]),  # not the hidden shutdown
    ]
    assert await command(alice, "re") == [
        replies.unknown_command("re"),
        replies.ambiguous_command("re", ["redouble", "reject", "resign"]),
    ]


async def test_a_close_typo_suggests_the_command(connect: Connect, app: App) -> None:
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "shuot hello") == [
        replies.unknown_command("shuot"),
        replies.did_you_mean("shuot", ["shout"]),
    ]
    assert await command(alice, "fizzbuzz") == [replies.unknown_command("fizzbuzz")]


async def test_clip_clients_get_fibs_line_alone(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    for word in ("sh", "shuot", "fizzbuzz"):
        await alice.send(word)
        assert await alice.line() == replies.unknown_command(word)
    await alice.send("invite")  # the next reply follows at once: no extra line came
    assert await alice.line() == replies.INVITE_WHO


async def _telnet_match(
    connect: Connect, app: App, coin: int = 0
) -> tuple[ScriptedClient, ScriptedClient]:
    """alice (telnet, O or with ``coin`` 1 X, to move with 3-1) against bob (CLIP)."""
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: coin  # 0: the inviter plays O
    bob = await clip_login(connect, app, "bob")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    alice = await telnet_login(connect, app, "alice")
    await command(alice, "set boardstyle 3")
    await command(alice, "invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    assert (await alice.line()).startswith("board:")
    return alice, bob


O_DIRECTION = replies.move_direction("O", 24, 1, 6)


async def test_a_refused_move_says_which_move_failed_and_why(connect: Connect, app: App) -> None:
    alice, _bob = await _telnet_match(connect, app)
    assert await command(alice, "13/10 6/5") == [
        replies.move_error(MoveErrorReason.BAD_WORD, 0),
        replies.move_slash("13/10"),
        O_DIRECTION,
    ]
    assert await command(alice, "move 13-9 6-5") == [
        replies.move_error(MoveErrorReason.WRONG_DISTANCE, 0, 4),
        replies.move_problem(MoveErrorReason.WRONG_DISTANCE, "13-9", 4, 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "8-5 3-2") == [
        replies.move_error(MoveErrorReason.NO_CHECKER, 1, 3),
        replies.move_problem(MoveErrorReason.NO_CHECKER, "3-2", 3, 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "13-12 8-5") == [
        replies.move_error(MoveErrorReason.BLOCKED, 0, 12),
        replies.move_problem(MoveErrorReason.BLOCKED, "13-12", 12, 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "6-7 8-5") == [
        replies.move_error(MoveErrorReason.BACKWARDS, 0),
        replies.move_problem(MoveErrorReason.BACKWARDS, "6-7", "", 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "8-5") == [
        replies.move_error(MoveErrorReason.TOO_FEW, count=2),
        replies.move_count_problem(1, 2, 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "8-5 6-5 6-5") == [
        replies.move_error(MoveErrorReason.TOO_MANY, count=2),
        replies.move_count_problem(3, 2, 3, 1),
        O_DIRECTION,
    ]
    assert await command(alice, "move 13") == [
        replies.move_error(MoveErrorReason.TOO_FEW, count=2),
        replies.move_incomplete("13"),
        O_DIRECTION,
    ]
    assert await command(alice, "6-off 8-7") == [
        replies.move_error(MoveErrorReason.NOT_ALL_HOME, 0, 6),
        replies.move_problem(MoveErrorReason.NOT_ALL_HOME, "6-off", 6, 3, 1),
        O_DIRECTION,
    ]


async def test_the_direction_fits_the_players_colour(connect: Connect, app: App) -> None:
    alice, _bob = await _telnet_match(connect, app, coin=1)  # alice plays X
    x_direction = replies.move_direction("X", 1, 24, 19)
    assert x_direction == (
        "You are X: your checkers move from 1 towards 24; your home board is points 19"
        " to 24, and 'off' bears off (e.g. 19-off)."
    )
    assert await command(alice, "1/4 12/13") == [
        replies.move_error(MoveErrorReason.BAD_WORD, 0),
        replies.move_slash("1/4"),
        x_direction,
    ]


async def test_a_clip_player_gets_fibs_move_error_alone(connect: Connect, app: App) -> None:
    alice, _ = await start_match(connect, app, 1)
    await alice.send("13/10 6/5")
    await alice.expect(replies.move_error(MoveErrorReason.BAD_WORD, 0))
    await alice.send("8-5")
    assert await alice.line() == replies.move_error(MoveErrorReason.TOO_FEW, count=2)
    await alice.send("invite bob 1")
    assert await alice.line() == replies.ALREADY_PLAYING


async def test_invite_errors_explain(connect: Connect, app: App) -> None:
    bob = await clip_login(connect, app, "bob")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await clip_login(connect, app, "carol")
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "invite bob 100") == [
        replies.INVITE_BAD_LENGTH,
        replies.INVITE_LENGTH_RANGE,
    ]
    assert await command(alice, "invite carol 3") == [
        replies.refusing_games("carol"),
        replies.how_to_get_ready("carol"),
    ]
    assert await command(alice, "invite bob 11") == [
        replies.NOT_EXPERIENCED,
        replies.experience_needed(9, 50, 0),
    ]


async def test_join_alone_accepts_the_one_invitation(connect: Connect, app: App) -> None:
    carol = await clip_login(connect, app, "carol")
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "join") == [replies.JOIN_WHO, replies.NOBODY_INVITED_YOU]
    await command(alice, "toggle ready")
    await command(alice, "set boardstyle 3")
    await carol.send("set boardstyle 3")
    await carol.send("invite alice 1")
    await alice.expect(replies.type_join("carol"))
    reply = await command(alice, "join")
    assert replies.now_playing("carol", 1) in reply
    assert online(app, "alice").opponent == "carol"


async def test_join_alone_with_two_invitations_names_them(connect: Connect, app: App) -> None:
    bob = await clip_login(connect, app, "bob")
    carol = await clip_login(connect, app, "carol")
    alice = await telnet_login(connect, app, "alice")
    await command(alice, "toggle ready")
    for name, inviter in (("bob", bob), ("carol", carol)):  # one after the other
        await inviter.send("invite alice 1")
        await alice.expect(replies.type_join(name))
    reply = await command(alice, "join")
    assert reply[-2:] == [replies.JOIN_WHO, replies.invited_by(["bob", "carol"])]


async def text_reply(client: ScriptedClient, line: str) -> list[str]:
    """CLIP mode: send ``text! <line>`` and return the lines between its markers (D376)."""
    await client.send(f"text! {line}")
    await client.expect(replies.TEXT_BEGIN)
    lines = []
    while (got := await client.line()) != replies.TEXT_END:
        lines.append(got)
    return lines


async def test_text_asks_a_clip_session_for_telnet_replies(connect: Connect, app: App) -> None:
    """D376: the web page's command box: `text! <command>` answers as telnet does."""
    alice = await clip_login(connect, app, "alice")
    assert await text_reply(alice, "shuot hello") == [
        replies.unknown_command("shuot"),
        replies.did_you_mean("shuot", ["shout"]),
    ]
    assert await text_reply(alice, "sh") == [
        replies.unknown_command("sh"),
        replies.ambiguous_command("sh", ["shout", "show"]),
    ]
    table = await text_reply(alice, "who")
    assert table[0] == replies.WHO_HEADER
    assert table[1].split()[:3] == ["1", "-", "alice"]
    assert len(table) == 2
    assert await text_reply(alice, "time Nowhere") == [replies.unknown_timezone("Nowhere")]
    assert await text_reply(alice, "join") == [replies.JOIN_WHO, replies.NOBODY_INVITED_YOU]
    assert await text_reply(alice, "") == []
    # Its own commands stay CLIP: FIBS's line alone, and who as CLIP 5 and 6.
    await alice.send("shuot")
    assert await alice.line() == replies.unknown_command("shuot")
    await alice.send("who")
    assert (await alice.line()).startswith("5 alice ")
    assert await alice.line() == "6"


async def test_text_explains_a_refused_move_and_invitation(connect: Connect, app: App) -> None:
    """D376: a move the tables refuse and an invitation of a player not ready, typed in
    the page's command box, get the explanations a telnet player reads (D171, D172)."""
    alice, _bob = await start_match(connect, app, 1)
    assert await text_reply(alice, "13/10 6/5") == [
        replies.move_error(MoveErrorReason.BAD_WORD, 0),
        replies.move_slash("13/10"),
        O_DIRECTION,
    ]
    assert await text_reply(alice, "move 13-9 6-5") == [
        replies.move_error(MoveErrorReason.WRONG_DISTANCE, 0, 4),
        replies.move_problem(MoveErrorReason.WRONG_DISTANCE, "13-9", 4, 3, 1),
        O_DIRECTION,
    ]
    await clip_login(connect, app, "carol")
    carol_invited = await text_reply(await clip_login(connect, app, "dave"), "invite carol 3")
    assert carol_invited == [replies.refusing_games("carol"), replies.how_to_get_ready("carol")]
    # Without text!, CLIP clients still get FIBS's line alone.
    await alice.send("13/10 6/5")
    await alice.expect(replies.move_error(MoveErrorReason.BAD_WORD, 0))
    await alice.send("text! board")  # a round trip: what followed the line before it
    after = []
    while (line := await alice.line()) != replies.TEXT_BEGIN:
        after.append(line)
    assert replies.move_slash("13/10") not in after and O_DIRECTION not in after


async def test_text_in_telnet_mode_is_the_command_alone(connect: Connect, app: App) -> None:
    """D376: a telnet session already reads text: no markers, the command's reply."""
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "text! shuot") == [
        replies.unknown_command("shuot"),
        replies.did_you_mean("shuot", ["shout"]),
    ]
