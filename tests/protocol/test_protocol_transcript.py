"""The annotated CLIP transcript of spec §4.18, rebuilt from protocol's named texts.

Every line of the transcript that is pure formatting is produced here and compared with the
spec's literal text; board lines (elided with ``…`` in the spec) are checked piece by piece.
"""

from __future__ import annotations

import dataclasses

from backgammon.board import Colour, Position
from protocol import clip, replies
from protocol.board_fibs import board_line
from protocol.board_view import BoardState, SideState
from protocol.replies import Mode


def elided(line: str, pattern: str) -> bool:
    """True when ``line`` matches ``pattern`` whose ``…`` each stand for any text."""
    parts = pattern.split("…")
    if not (line.startswith(parts[0]) and line.endswith(parts[-1])):
        return False
    pos = len(parts[0])
    for part in parts[1:-1]:
        found = line.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return pos <= len(line) - len(parts[-1])


def test_invitation_and_join() -> None:
    assert replies.you_invited("bob", 3) == "** You invited bob to a 3 point match."
    assert replies.invitation("alice", 3) == [
        "alice wants to play a 3 point match with you.",
        "Type 'join alice' to accept.",
    ]
    assert replies.now_playing("alice", 3) == "** You are now playing a 3 point match with alice"
    assert replies.player_joined("bob", 3) == "** Player bob has joined you for a 3 point match."
    assert replies.match_start_report("alice", "bob", 3) == "alice and bob start a 3 point match."


def test_who_updates() -> None:
    line = clip.WhoInfo(
        "alice", "bob", None, True, False, 1500.0, 0, 3, 1700000000, "host1", "Client1", None
    ).format()
    assert line == "5 alice bob - 1 0 1500.00 0 3 1700000000 host1 Client1 -"
    assert clip.WhoInfoEnd().format() == "6"


def test_opening() -> None:
    assert replies.starting_new_game("bob") == "Starting a new game with bob."
    assert replies.starting_new_game("alice") == "Starting a new game with alice."
    assert replies.opening_roll(6, "bob", 2) == "You rolled 6, bob rolled 2"
    assert replies.YOUR_TURN_TO_MOVE == "It's your turn to move."
    assert replies.opening_roll(2, "alice", 6) == "You rolled 2, alice rolled 6"
    assert replies.makes_first_move("alice") == "alice makes the first move."


def opening() -> BoardState:
    return BoardState(
        o=SideState("alice", dice=(6, 2), may_double=True),
        x=SideState("bob", may_double=True),
        board=Position.start().fibs_board(0),
        match_length=3,
        turn=Colour.O,
        can_move=2,
    )


def test_opening_boards() -> None:
    a = board_line(opening(), Colour.O)
    b = board_line(opening(), Colour.X)
    assert elided(a, "board:You:bob:3:0:0:0:-2:…:2:0:1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0")
    assert elided(b, "board:You:alice:3:0:0:0:-2:…:2:0:1:0:0:6:2:1:1:1:0:-1:1:25:0:0:0:0:0:0:0:0:0")


def test_first_moves() -> None:
    after = dataclasses.replace(
        opening(),
        o=SideState("alice", may_double=True),
        board=(0, -2, 0, 0, 0, 0, 6, 1, 2, 0, 0, 0, -5, 4, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0),
        turn=Colour.X,
        can_move=0,
    )
    assert elided(board_line(after, Colour.O), "board:You:bob:…:-1:0:0:0:0:…")
    assert elided(board_line(after, Colour.X), "board:You:alice:…:-1:0:0:0:0:1:1:1:0:-1:1:25:…")
    assert replies.moves("alice", ["13-7", "8-6"]) == "alice moves 13-7 8-6 ."
    assert replies.ROLL_OR_DOUBLE == "It's your turn. Please roll or double"
    assert replies.you_roll(4, 3) == "You roll 4 and 3."
    rolled = dataclasses.replace(after, x=SideState("bob", dice=(4, 3), may_double=True))
    assert elided(board_line(rolled, Colour.X), "board:You:alice:…:-1:4:3:0:0:…")
    assert elided(board_line(rolled, Colour.O), "board:You:bob:…:-1:0:0:4:3:…")
    assert replies.please_move(2) == "Please move 2 pieces."
    assert replies.rolls("bob", 4, 3) == "bob rolls 4 and 3."
    assert replies.moves("bob", ["1-5", "12-15"]) == "bob moves 1-5 12-15 ."


def test_double() -> None:
    assert replies.you_double("bob") == "You double. Please wait for bob to accept or reject."
    assert replies.doubles_offer("alice") == "alice doubles. Type 'accept' or 'reject'."
    pending = dataclasses.replace(
        opening(),
        o=SideState("alice"),
        x=SideState("bob"),
        turn=Colour.X,
        doubled=Colour.X,
        can_move=0,
    )
    fields = board_line(pending, Colour.X).split(":")
    assert fields[32] == "-1"  # turn = bob
    assert fields[38:41] == ["0", "0", "1"]  # may double 0:0, was doubled 1
    assert replies.you_accept_double(2) == "You accept the double. The cube shows 2."
    assert replies.accepts_double("bob", 2) == "bob accepts the double. The cube shows 2."
    assert replies.you_roll(5, 2) == "You roll 5 and 2."


def test_end_of_games_and_match() -> None:
    assert replies.you_win_game(2) == "You win the game and get 2 points. Congratulations!"
    assert replies.wins_game("alice", 2) == "alice wins the game and gets 2 points. Sorry."
    assert replies.score_line(3, "alice", 2, "bob", 0) == "score in 3 point match: alice-2 bob-0"
    assert replies.score_line(3, "bob", 0, "alice", 2) == "score in 3 point match: bob-0 alice-2"
    assert replies.JOIN_NEXT_GAME == (
        "Type 'join' if you want to play the next game, type 'leave' if you don't."
    )
    assert replies.wait_for_join("bob") == "** Please wait for bob to join too."
    assert replies.you_win_game(1) == "You win the game and get 1 point. Congratulations!"
    assert replies.wins_game("alice", 1) == "alice wins the game and gets 1 point. Sorry."
    assert replies.you_win_match(3, 3, 0) == "You win the 3 point match 3-0 ."
    assert replies.wins_match("alice", 3, 3, 0) == "alice wins the 3 point match 3-0 ."
    assert replies.match_end_report("alice", "bob", 3, 3, 0) == (
        "alice wins a 3 point match against bob  3-0 ."
    )
    final = clip.WhoInfo(
        "bob", None, None, True, False, 1482.68, 3, 0, 1700000100, "host2", "Client2", None
    )
    assert final.format().startswith("5 bob - - 1 0 1482.68 3 ")


def test_chat_in_both_modes() -> None:
    # §2.4 and §4.12.
    assert replies.says("bob", "hi", Mode.CLIP) == "12 bob hi"
    assert replies.you_say("bob", "hi", Mode.CLIP) == "16 bob hi"
    assert replies.you_say("bob", "hi", Mode.TELNET) == "** You tell bob: hi"
    assert replies.kibitzes("someplayer", "Hi", Mode.TELNET) == "someplayer kibitzes: Hi"
    assert replies.kibitzes("someplayer", "Hi", Mode.CLIP) == "15 someplayer Hi"
    assert replies.login_notice("someplayer", Mode.CLIP) == "7 someplayer someplayer logs in."
    assert replies.login_notice("someplayer", Mode.TELNET) == "someplayer logs in."
    dropped = replies.drops_connection("gflohr")
    assert (
        replies.logout_notice("gflohr", dropped, Mode.CLIP) == "8 gflohr gflohr drops connection."
    )
    assert replies.you_shout("x", Mode.CLIP) == "17 x"
    assert replies.you_whisper("x", Mode.CLIP) == "18 x"
    assert replies.you_kibitz("x", Mode.CLIP) == "19 x"
    assert replies.message_delivered("bob", Mode.CLIP) == "10 bob"
    assert replies.message_saved("bob", Mode.CLIP) == "11 bob"
    assert replies.message_line("bob", 5, "hi", Mode.CLIP) == "9 bob 5 hi"
    assert replies.shouts("bob", "x", Mode.CLIP) == "13 bob x"
    assert replies.whispers("bob", "x", Mode.CLIP) == "14 bob x"
    assert replies.alert("bob", "x", Mode.CLIP) == "20 bob x"
