"""The replies catalogue against the literal texts of spec §1-§6 (goldens)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from backgammon.errors import Refusal
from protocol import replies
from protocol.replies import (
    GameCommand,
    Mode,
    MoveErrorReason,
    RatingCalculationPlayer,
    SavedMark,
    Toggle,
)

# -- §1 ------------------------------------------------------------------------------------


def test_prompts_have_no_terminator() -> None:
    assert replies.LOGIN_PROMPT == "login: "
    assert replies.TELNET_PROMPT == "> "
    assert replies.GIVE_PASSWORD_PROMPT == "Please give your password: "
    assert replies.RETYPE_PASSWORD_PROMPT == "Please retype your password: "
    assert replies.PASSWORDS_DIFFER_PROMPT.endswith("Password: ")


def test_banner_keeps_the_matchdog_line() -> None:
    utc = dt.datetime(2003, 1, 2, 0, 27, 27, tzinfo=dt.UTC)
    lines = replies.banner(utc, utc)
    assert any(replies.BANNER_REQUIRED_LINE in line for line in lines)
    assert lines[-2] == ""


def test_date_line_of_section_1_2() -> None:
    utc = dt.datetime(2003, 1, 2, 0, 27, 27, tzinfo=dt.UTC)
    local = utc.astimezone(ZoneInfo("Europe/Berlin"))
    # The spec's example shows the zone as "MET"; tzdata names it CET.
    expected = "Thursday, January 02 01:27:27 MET   ( Thu Jan  2 00:27:27 2003 UTC )"
    assert replies.date_line(local, utc) == expected.replace("MET", "CET")
    assert replies.asctime(utc) == "Thu Jan  2 00:27:27 2003"


def test_section_1_texts() -> None:
    assert replies.ALREADY_LOGGED_IN == "** Warning: You are already logged in."
    assert replies.closed_old_connection("bob") == (
        "Closed old connection with user bob. The game was saved."
    )
    assert replies.name_will_be("newuser") == "Your name will be newuser"
    assert replies.name_taken("newuser") == (
        "** Please use another name. 'newuser' is already used by someone else."
    )
    assert replies.GUEST_WELCOME[0] == "Welcome to FIBS. You just logged in as guest."
    assert replies.REGISTERED == "You are registered."
    assert replies.PASSWORDS_DIFFER_PROMPT == (
        "** The two passwords were not identical. Please give them again. Password: "
    )
    assert replies.drops_connection("gflohr") == "gflohr drops connection."
    assert replies.waves("bob") == "bob waves goodbye."
    assert replies.waves_again("bob") == "bob waves goodbye again."


def test_goodbye_line_is_found_by_fcm() -> None:
    assert any(line.startswith(" " * 11) and line.strip() == "Goodbye." for line in replies.GOODBYE)


# -- §4.1-§4.5 -----------------------------------------------------------------------------


def test_unknown_command() -> None:
    assert replies.unknown_command("fizzbuzz") == "** Unknown command: 'fizzbuzz'"


def test_invite_texts() -> None:
    assert replies.you_invited("bob", None) == "** You invited bob to an unlimited match."
    assert replies.you_invited_resume("bob") == "** You invited bob to resume a saved match."
    assert (
        replies.invitation("alice", None)[0] == "alice wants to play an unlimited match with you."
    )
    assert replies.invitation_resume("alice") == [
        "alice wants to resume a saved match with you.",
        "Type 'join alice' to accept.",
    ]
    assert replies.saved_match_warning(5) == (
        "WARNING: Don't accept if you want to continue the saved 5 point match!"
    )
    assert replies.saved_match_warning(None) == (
        "WARNING: Don't accept if you want to continue the saved unlimited match!"
    )
    assert replies.now_playing("bob", None) == "** You are now playing an unlimited match with bob"
    assert replies.player_joined("bob", None) == "Player bob has joined you for an unlimited match."
    assert replies.now_playing_resumed("alice") == (
        "You are now playing with alice. Your running match was loaded."
    )
    assert replies.joined_resumed("bob") == "bob has joined you. Your running match was loaded."
    assert replies.resume_synopsis("alice", 5, "alice", 1, "bob", 2) == [
        "turn: alice.",
        "match length: 5",
        "points for alice: 1",
        "points for bob: 2",
    ]
    assert replies.match_resume_report("a", "b", 5) == "a and b are resuming their 5-point match."
    assert replies.match_resume_report("a", "b", None) == (
        "a and b are resuming their unlimited match."
    )
    assert replies.match_end_report("thewronghands", "once", 3, 3, 1) == (
        "thewronghands wins a 3 point match against once  3-1 ."
    )


def test_turn_texts() -> None:
    assert replies.cant_move("bob") == "bob can't move."
    assert replies.moves("gflohr", ["8-5", "6-5"]) == "gflohr moves 8-5 6-5 ."
    assert replies.moves("gflohr", ["bar-24", "bar-22"]) == "gflohr moves bar-24 bar-22 ."
    assert replies.moves("gflohr", ["24-off", "22-off"]) == "gflohr moves 24-off 22-off ."
    assert replies.only_possible_move(["24-18", "13-8"]) == (
        "The only possible move is 24-18 13-8 ."
    )
    assert replies.please_move(1) == "Please move 1 pieces."


@pytest.mark.parametrize(
    ("reason", "index", "point", "count", "text"),
    [
        (MoveErrorReason.TOO_FEW, 0, None, 2, "** You must give 2 moves."),
        (MoveErrorReason.TOO_FEW, 0, None, 1, "** You must give 1 moves."),
        (MoveErrorReason.TOO_MANY, 0, None, 2, "** Please don't give more than 2 moves."),
        (MoveErrorReason.NO_CHECKER, 1, 7, 0, "** You can't move from 7 in your second move."),
        (MoveErrorReason.WRONG_DISTANCE, 0, 5, 0, "** You can't move 5 points in your first move."),
        (MoveErrorReason.BLOCKED, 2, 12, 0, "** You can't move to 12 in your third move."),
        (
            MoveErrorReason.MUST_ENTER,
            3,
            None,
            0,
            "** You have to remove pieces from the bar in your fourth move.",
        ),
        (
            MoveErrorReason.CANNOT_BEAR_OFF,
            0,
            None,
            0,
            "** You can't remove this piece in your first move.",
        ),
        (MoveErrorReason.BACKWARDS, 1, None, 0, "** You can't move home in your second move."),
        (MoveErrorReason.NOT_ALL_HOME, 0, 9, 0, "** You can't move 9-home in your first move."),
        (
            MoveErrorReason.BAD_WORD,
            0,
            None,
            0,
            "** first move: legal words are 'bar', 'home', 'off', 'b', 'h' and 'o'.",
        ),
    ],
)
def test_move_errors(
    reason: MoveErrorReason, index: int, point: int | None, count: int, text: str
) -> None:
    assert replies.move_error(reason, index, point, count) == text


def test_move_error_reasons_mirror_the_core() -> None:
    from backgammon.errors import IllegalReason

    for reason in IllegalReason:
        assert MoveErrorReason(reason.value).value == reason.value


def test_roll_and_off_texts() -> None:
    assert replies.ALREADY_ROLLED == "** You did already roll the dice."
    assert replies.NOT_YOUR_TURN_TO_ROLL == "** It's not your turn to roll the dice."
    assert replies.CANT_BEAR_OFF_WITH_EVERY_NUMBER == (
        "** You can't bear off with every number you have rolled."
    )
    assert replies.hasnt_responded_to_resign("bob") == (
        "** bob hasn't accepted or rejected your resign yet."
    )


# -- §4.6-§4.9 -----------------------------------------------------------------------------


def test_double_texts() -> None:
    assert replies.doubles("alice") == "alice doubles."
    assert replies.you_give_up("alice", 1) == "You give up. alice wins 1 point."
    assert replies.gives_up_you_win("bob", 2) == "bob gives up. You win 2 points."
    assert replies.gives_up("bob", "alice", 4) == "bob gives up. alice wins 4 points."
    assert replies.you_double("bob", redouble_allowed=True) == (
        "You double. Please wait for bob to accept, reject or redouble."
    )
    assert replies.doubles_offer("alice", redouble_allowed=True) == (
        "alice doubles. Type 'accept', 'reject' or 'redouble'."
    )
    assert replies.you_redouble(4, "alice", more_allowed=False) == [
        "You accept the double to 4 and redouble.",
        "Please wait for alice to accept or reject.",
    ]
    assert replies.redoubles_offer("bob", 4, more_allowed=True) == (
        "bob redoubles to 4. Type 'accept', 'reject' or 'redouble'."
    )
    assert replies.wrong_redouble_name("beaver", "raccoon") == (
        "** This redouble is not a beaver. Please type 'raccoon' or 'redouble'."
    )
    assert replies.NOT_YOUR_TURN_TO_DOUBLE == "** It's not your turn to double"
    assert replies.CRAWFORD_NO_DOUBLE.startswith("** The Crawford rule doesn")


def test_resign_texts() -> None:
    assert replies.you_want_to_resign("bob", 2) == "You want to resign. bob will win 2 points."
    assert replies.wants_to_resign("alice", 1) == (
        "alice wants to resign. You will win 1 point. Type 'accept' or 'reject'."
    )
    assert replies.wants_to_resign_watched("alice", "bob", 3) == (
        "alice wants to resign. bob will win 3 points."
    )
    assert replies.you_accept_and_win(3) == "You accept and win 3 points."
    assert replies.accepts_and_wins("bob", 1) == "bob accepts and wins 1 point."
    assert replies.rejects("bob") == "bob rejects. The game continues."
    assert replies.wanted_to_resign("bob") == "** bob wanted to resign. Type 'accept' or 'reject'."


def test_leave_texts() -> None:
    assert replies.has_left("bob") == "** Player bob has left the game. The game was saved."
    assert replies.saved_after(replies.logs_out("bob")) == "bob logs out. The game was saved."
    assert replies.saved_after(replies.drops_connection("bob")) == (
        "bob drops connection. The game was saved."
    )
    assert replies.saved_after(replies.timed_out("bob")) == (
        "Connection with bob timed out. The game was saved."
    )


# -- §4.10-§4.17 ---------------------------------------------------------------------------


def test_oldmoves_sample() -> None:
    lines = [
        *replies.oldmoves_header(2, 2, 3, "someplayer", "myself"),
        replies.oldmoves_roll("O", 5, 1, ["13-8", "24-23"]),
        replies.oldmoves_roll("X", 6, 5, ["1-7", "12-17"]),
        replies.oldmoves_roll("O", 4, 4, []),
        replies.oldmoves_action("X", "doubles"),
        replies.oldmoves_action("O", "accepts"),
        replies.oldmoves_roll("X", 6, 4, ["21-off", "21-off"]),
        replies.oldmoves_action("O", "wins"),
    ]
    assert lines == [
        "Score is 2-2 in a 3 point match.",
        "someplayer is X - myself is O",
        "",
        "O: (5 1) 13-8 24-23",
        "X: (6 5) 1-7 12-17",
        "O: (4 4) can't move",
        "X: doubles",
        "O: accepts",
        "X: (6 4) 21-off 21-off",
        "O: wins",
    ]


def test_watch_texts() -> None:
    assert replies.not_watching_anymore(replies.logs_out("bob")) == (
        "bob logs out.. You're not watching anymore."
    )
    assert replies.not_watching_anymore(replies.timed_out("bob")) == (
        "Connection with bob timed out.. You're not watching anymore."
    )
    assert replies.nothing_interesting("bob") == "bob is not doing anything interesting."


def test_chat_texts() -> None:
    assert replies.heard_you(1) == "** 1 user heard you."
    assert replies.heard_you(3) == "** 3 users heard you."
    assert replies.heard_you(0) == "** But nobody heard you."
    assert replies.say_to_yourself("hi") == "You say to yourself: hi"
    assert replies.gagged_users([]) == "** Gagged users: none"
    assert replies.finally_logs_in("bob") == "** FINALLY!!! bob logs in.\x07\x07\x07"


def test_lists() -> None:
    assert replies.game_line("someplayer", "myself", 1, 0, 0) == (
        "someplayer      -          myself (1 point match 0-0)"
    )
    assert replies.game_line("a", "b", None, 2, 6).endswith("(unlimited match 2-6)")
    assert replies.saved_line(SavedMark.ONLINE, "bonehead", 3, 1, 2) == (
        "**bonehead                3                1 -  2"
    )
    assert replies.saved_line(SavedMark.OFFLINE, "deadbeef", None, 1, 2).startswith(
        "  deadbeef                unlimited "
    )
    assert replies.ratings_line(1, "NIHILIST", 2295.11, 7274) == (
        "    1 NIHILIST        2295.11     7274"
    )
    assert replies.ratings_line(4431, "someplayer", 1418.61, 23, marked=True) == (
        "*4431 someplayer      1418.61       23"
    )
    assert replies.savedcount("bob", 1) == "bob has 1 saved game."
    assert replies.savedcount("bob", 3) == "bob has 3 saved games."
    assert replies.savedcount("bob", 0) == "bob has no saved games."
    assert replies.last_line("Wed 11:08", "UTC", replies.drops_connection("someplayer")) == (
        "Wed 11:08 UTC: someplayer drops connection."
    )
    assert replies.pipcounts("You", 167, "bob", 160) == "Pipcounts: You 167   bob 160"


def test_whois_block() -> None:
    info = replies.WhoisInfo(
        name="bob",
        last_login="Tuesday, January 14 20:27 EST",
        host="host",
        online=True,
        idle_seconds=132,
        ready=True,
        rating=1693.11,
        experience=5781,
    )
    assert replies.whois(info) == [
        "Information about bob:",
        "  Last login:  Tuesday, January 14 20:27 EST from host",
        "  Still logged in. 2:12 minutes idle.",
        "  bob is ready to play, not watching, not playing.",
        "  Rating: 1693.11 Experience: 5781",
        "  No email address.",
    ]


TOGGLE_LIST = """
The current settings are:
allowpip        YES
autoboard       YES
autodouble      NO
automove        YES
bell            NO
crawford        YES
double          YES
greedy          NO
moreboards      YES
moves           NO
notify          YES
ratings         NO
ready           NO
report          NO
silent          NO
telnet          YES
wrap            NO
"""


def test_toggle_list() -> None:
    values = {
        Toggle(line.split()[0]): line.split()[1] == "YES" for line in TOGGLE_LIST.split("\n")[2:-1]
    }
    assert replies.toggle_list(values) == TOGGLE_LIST.strip("\n").split("\n")


def test_toggle_messages() -> None:
    assert (
        replies.toggle_message(Toggle.READY, True)
        == "** You're now ready to invite or join someone."
    )
    assert (
        replies.toggle_message(Toggle.READY, False)
        == "** You're now refusing to play with someone."
    )
    assert replies.TOGGLE_SYNONYMS["autoroll"] is Toggle.DOUBLE
    assert replies.toggle_message(Toggle.DOUBLE, False) == (
        "** You won't be asked if you want to double."
    )
    assert replies.toggle_message(Toggle.ALLOWPIP, True) == (
        "** You allow the use the server's 'pip' command."
    )
    assert set(replies.TOGGLES) == set(replies._TOGGLE_MESSAGES)
    assert replies.dont_know_toggle("x") == "** Don't know how to toggle x"


SET_LIST = """
Settings of variables:
boardstyle: 3
linelength: 0
pagelength: 0
redoubles:  none
sortwho:    login
timezone:   Australia/Melbourne
"""


def test_set_texts() -> None:
    values = {
        "boardstyle": "3",
        "linelength": "0",
        "pagelength": "0",
        "redoubles": "none",
        "sortwho": "login",
        "timezone": "Australia/Melbourne",
    }
    assert replies.set_list(values) == SET_LIST.strip("\n").split("\n")
    assert replies.set_changed("boardstyle", "3") == "Value of 'boardstyle' set to 3."
    assert replies.set_changed("redoubles", "unlimited") == (
        "Value of 'redoubles' set to 'unlimited'."
    )
    assert replies.set_value("boardstyle", "3") == "Value of 'boardstyle' is 3"
    assert replies.BOARDSTYLE_INVALID == "** Valid arguments are the numbers 1 to 3."


def test_misc_texts() -> None:
    assert replies.address_set("a@b.c") == "Your email address is 'a@b.c'."
    assert replies.version("2.071").startswith("** Version ")
    assert replies.port(4321) == "The server is running on port 4321."
    assert replies.shutdown_warning(30, restart=True) == (
        "*** ATTENTION ! FIBS will restart in 30 seconds"
    )
    assert replies.shutdown_warning(1, restart=False) == (
        "*** ATTENTION ! FIBS will shut down in 1 second"
    )


# -- §5.3 ----------------------------------------------------------------------------------

RATING_BLOCK = """
rating calculation:
rating difference D=155.634835
match length      N=3
Experience: myself 2761 - someplayer 187
Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)=0.423029
P=0.423029 is 1-Pu if underdog wins and Pu if favorite wins
K=max(1 , -Experience/100+5) for myself: 1.000000
change for myself: 4*K*sqrt(N)*P=2.930831
K=max(1 , -Experience/100+5) for someplayer: 3.130000
change for someplayer: -4*K*sqrt(N)*P=-9.173502

myself wins the 3 point match 3-0 .
"""


def test_rating_calculation_sample() -> None:
    lines = replies.rating_calculation(
        155.634835,
        3,
        0.423029,
        0.423029,
        RatingCalculationPlayer("myself", 2761, 1.0, 2.930831),
        RatingCalculationPlayer("someplayer", 187, 3.13, -9.173502),
    )
    lines.append(replies.wins_match("myself", 3, 3, 0))
    assert lines == RATING_BLOCK.strip("\n").split("\n")


def test_modes_differ_only_where_the_spec_says() -> None:
    assert replies.kibitzes("a", "b", Mode.CLIP) != replies.kibitzes("a", "b", Mode.TELNET)


def test_refusal_texts_per_command() -> None:
    """A refused game action answers the command's own text, else the common one (§4.5-§4.7)."""
    roll, move, double = GameCommand.ROLL, GameCommand.MOVE, GameCommand.DOUBLE
    assert replies.refusal(roll, Refusal.NOT_YOUR_TURN, "bob") == replies.NOT_YOUR_TURN_TO_ROLL
    assert replies.refusal(move, Refusal.NOT_YOUR_TURN, "bob") == replies.NOT_YOUR_TURN_TO_MOVE
    assert replies.refusal(double, Refusal.NOT_YOUR_TURN, "bob") == (
        replies.NOT_YOUR_TURN_TO_DOUBLE
    )
    assert replies.refusal(double, Refusal.NOT_YOUR_TURN, "bob", opponent_moving=True) == (
        replies.wait_until_moved("bob")
    )
    assert replies.refusal(GameCommand.REDOUBLE, Refusal.CUBE_LIMIT, "bob") == (
        replies.NOT_ALLOWED_TO_REDOUBLE
    )
    assert replies.refusal(double, Refusal.CUBE_LIMIT, "bob") == replies.CUBE_LIMIT_NO_DOUBLE
    assert replies.refusal(GameCommand.ACCEPT, Refusal.NOTHING_OFFERED, "bob") == (
        replies.didnt_double_or_resign("bob")
    )
    for command in (roll, move, double, GameCommand.RESIGN):
        assert replies.refusal(command, Refusal.MUST_ANSWER_DOUBLE, "bob") == (
            replies.doubles_offer("bob")
        )
        assert replies.refusal(command, Refusal.MATCH_OVER, "bob") == replies.NOT_PLAYING
    assert replies.refusal(roll, Refusal.HOLLAND, "bob") == replies.NOT_YOUR_TURN


def test_every_refusal_of_every_command_has_a_text() -> None:
    """Total: whatever the core refuses, the player reads a FIBS line (never a log)."""
    for command in GameCommand:
        for reason in Refusal:
            assert replies.refusal(command, reason, "bob"), (command, reason)


def test_who_status_letters_in_order_of_precedence() -> None:
    status = replies.who_status
    assert status(playing=True, watching=True, away=True, ready=True) == "P"
    assert status(playing=False, watching=True, away=True, ready=True) == "W"
    assert status(playing=False, watching=False, away=True, ready=True) == "A"
    assert status(playing=False, watching=False, away=False, ready=True) == "R"
    assert status(playing=False, watching=False, away=False, ready=False) == "-"


def test_words_inside_replies() -> None:
    assert replies.version_with_python("0.1.0", "3.11.9") == "0.1.0 (Python 3.11.9)"
    names = [replies.redouble_name(n) for n in range(5)]
    assert names == ["beaver", "raccoon", "otter", "redouble", "redouble"]
    assert (replies.CALLER_NAME, replies.BAR_POINT, replies.UNKNOWN_HOST) == ("You", "bar", "-")
    assert replies.dicetest_faces_chi_square(1.5, 5, 0.5) == replies.dicetest_chi_square(
        "faces", 1.5, 5, 0.5
    )
    assert replies.dicetest_pairs_chi_square(1.5, 35, 0.5).startswith(
        "*** Chi-square of the pairs: 1.50 with 35"
    )


def test_game_commands_key_the_refusal_table() -> None:
    double = replies.GameCommand.DOUBLE
    assert replies.refusal(double, Refusal.CRAWFORD, "bob") == replies.CRAWFORD_NO_DOUBLE
    resign = replies.GameCommand.RESIGN
    assert replies.refusal(resign, Refusal.ALREADY_RESIGNED, "bob") == replies.ALREADY_DID_THAT
