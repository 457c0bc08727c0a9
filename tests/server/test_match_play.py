"""Whole matches over real sockets with seeded dice (§4.3-§4.8)."""

from __future__ import annotations

import pytest

from backgammon.dice import SeededDice
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.replies import Toggle
from server.app import App
from server.config import Settings

from .conftest import Connect, ScriptedClient, clip_login
from .match_driver import Player, play_out
from .sessions import ready_pair

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _start(alice: ScriptedClient, bob: ScriptedClient, length: str) -> None:
    await alice.send(f"invite bob {length}")
    await alice.expect_prefix("** You invited bob to")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")


async def test_one_point_match(connect: Connect, app: App) -> None:
    app.dice = lambda: SeededDice(11)
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    carol = await clip_login(connect, app, "carol")  # report is on by default
    await alice.send("toggle ratings")
    await alice.expect(replies.toggle_message(Toggle.RATINGS, True))
    await _start(alice, bob, "1")
    await bob.expect(replies.now_playing("alice", 1))
    await alice.expect(replies.player_joined("bob", 1))
    await carol.expect(replies.match_start_report("alice", "bob", 1))
    table_id = app.local_tables.matches["alice"].table_id
    a, b = Player(alice, "alice"), Player(bob, "bob")
    await play_out(a, b)
    winner_name = "alice" if "You win the 1 point match 1-0 ." in alice.seen else "bob"
    loser_name = "bob" if winner_name == "alice" else "alice"
    await carol.expect(replies.match_end_report(winner_name, loser_name, 1, 1, 0))
    # §5.3: the rating calculation before the match-end line, for alice only.
    block = alice.seen[alice.seen.index("rating calculation:") :]
    assert "rating difference D=0.000000" in block and "match length      N=1" in block
    assert f"change for {winner_name}: 4*K*sqrt(N)*P=10.000000" in block
    assert "rating calculation:" not in bob.seen
    assert a.boards and b.boards
    for line in a.boards + b.boards:
        assert len(line.split(":")) == 53
    records = await app.db.list_match_records("alice")
    assert len(records) == 1 and records[0].match_length == 1
    assert records[0].table_id == table_id  # the record is the table's
    assert await app.db.load_match("alice", "bob") is None  # finished: nothing saved
    winner = records[0].winner
    assert winner is not None
    user = await app.db.get_user(winner)
    assert user is not None and round(user.rating, 2) == 1510.00 and user.experience == 1
    loser = await app.db.get_user(loser_name)
    assert loser is not None and round(loser.rating, 2) == 1490.00 and loser.experience == 1
    # Everyone sees the new rating in the who information (CLIP 5).
    await carol.send(f"rawwho {winner}")
    assert (await carol.expect_prefix(f"5 {winner} ")).split()[6] == "1510.00"


async def test_three_point_match_through_crawford(connect: Connect, app: App) -> None:
    app.dice = lambda: SeededDice(5)
    app.coin = lambda: 1
    alice, bob = await ready_pair(connect, app)
    await _start(alice, bob, "3")
    a, b = Player(alice, "alice"), Player(bob, "bob")
    await play_out(a, b, limit=20)
    seen = alice.seen + bob.seen
    assert any(line.startswith("score in 3 point match:") for line in seen)
    # Boards in the Crawford game carry FIBS's may-double flags, 1:1 (fields 38, 39), and
    # fields 50/51 at 0:0 say it is the Crawford game (§3.4, D24).
    crawford = [
        parse_board(line)
        for line in a.boards
        if parse_board(line).match_length == 3
        and 2 in (parse_board(line).player_score, parse_board(line).opponent_score)
        and parse_board(line).player_score != parse_board(line).opponent_score
    ]
    assert crawford, "seed 5 reaches a Crawford game"
    first_crawford = crawford[0]
    assert first_crawford.player_may_double and first_crawford.opponent_may_double
    assert (first_crawford.no_crawford, first_crawford.post_crawford) == (0, 0)


async def test_board_lines_agree_with_the_server(connect: Connect, app: App) -> None:
    """Every board a player receives parses back into the position the server holds."""
    app.dice = lambda: SeededDice(3)
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    await _start(alice, bob, "1")
    await alice.expect(replies.player_joined("bob", 1))
    line = await alice.expect_prefix("board:")
    live = app.local_tables.matches["alice"]
    view = parse_board(line)
    assert view.position(0) == live.match.position
