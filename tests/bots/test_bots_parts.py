"""The small parts of the bot library: telnet bytes, lines, events, marker, decisions."""

from __future__ import annotations

import random

import pytest

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from bots import events as ev
from bots.backoff import Backoff
from bots.decide import Due, crawford_game, due
from bots.heuristic import best_play
from bots.login import bot_client_name, is_bot_client
from bots.random import RandomStrategy
from bots.runner import account_names, configs, parser
from bots.telnet import LineSplitter, Prompt, TelnetFilter
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.clip import WhoInfo
from protocol.replies import Toggle
from tests.bots.fakefibs import board, who

# -- telnet and lines ----------------------------------------------------------------------


def test_telnet_filter_strips_commands_and_refuses_do() -> None:
    f = TelnetFilter()
    data, reply = f.feed(b"\xff\xfd\x18ab\xff\xfb\x01c\xff\xff")
    assert data == b"abc\xff"
    assert reply == b"\xff\xfc\x18"
    data, reply = f.feed(b"\xff")  # IAC split across reads
    assert (data, reply) == (b"", b"")
    data, reply = f.feed(b"\xfc\x01d\xff\xfa\x18\x01\xff\xf0e\xff\xfd\x18")
    assert data == b"de"
    assert reply == b""  # TTYPE was refused already


def test_line_splitter_handles_split_crlf_and_prompts() -> None:
    s = LineSplitter()
    s.feed("one\r")
    assert s.pop() is None
    s.feed("\ntwo\nthree\r\nlog")
    assert [s.pop(), s.pop(), s.pop()] == ["one", "two", "three"]
    assert s.pop(("login: ",)) is None
    s.feed("in: ")
    assert s.pop() is None  # not a prompt the caller waits for
    assert s.pop(("login: ",)) == Prompt("login: ")
    s.feed("tail")
    assert s.flush() == "tail"


# -- events ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "event"),
    [
        (replies.invitation("bob", 3)[0], ev.Invitation("bob", 3)),
        (replies.invitation("bob", None)[0], ev.Invitation("bob", None)),
        (replies.invitation_resume("bob")[0], ev.Invitation("bob", None, resume=True)),
        (replies.now_playing("bob", 5), ev.MatchStarted("bob", 5)),
        (replies.player_joined("bob", 5), ev.MatchStarted("bob", 5)),
        (replies.player_joined("bob", None), ev.MatchStarted("bob", None)),
        (replies.now_playing_resumed("bob"), ev.MatchStarted("bob", None, resumed=True)),
        (replies.joined_resumed("bob"), ev.MatchStarted("bob", None, resumed=True)),
        (replies.starting_new_game("bob"), ev.NewGame("bob")),
        (replies.YOUR_TURN_TO_MOVE, ev.YourTurnToMove()),
        (replies.ROLL_OR_DOUBLE, ev.RollOrDouble()),
        ("It's your turn to roll or double.", ev.RollOrDouble()),
        (replies.you_roll(3, 1), ev.YouRoll((3, 1))),
        (replies.please_move(2), ev.PleaseMove(2)),
        ("Please move 1 piece.", ev.PleaseMove(1)),
        (replies.YOU_CANT_MOVE, ev.CantMove()),
        (replies.moves("bob", ["bar-22", "6-off"]), ev.OpponentMoved("bob", "bar-22 6-off")),
        (replies.cant_move("bob"), ev.OpponentMoved("bob", "")),
        (replies.doubles_offer("bob"), ev.DoubleOffered("bob", False)),
        (replies.doubles_offer("bob", redouble_allowed=True), ev.DoubleOffered("bob", True)),
        (
            replies.redoubles_offer("bob", 4, more_allowed=False),
            ev.DoubleOffered("bob", False, 4),
        ),
        (replies.wants_to_resign("bob", 2), ev.ResignOffered("bob", 2)),
        (replies.wanted_to_resign("bob"), ev.ResignPending("bob")),
        ("** bob doubles. Type 'accept' or 'reject'.", ev.DoubleOffered("bob", False)),
        (replies.you_win_game(1), ev.GameOver(None, 1)),
        (replies.wins_game("bob", 2), ev.GameOver("bob", 2)),
        (replies.gives_up_you_win("bob", 1), ev.GameOver(None, 1)),
        (replies.you_give_up("bob", 2), ev.GameOver("bob", 2)),
        (replies.you_accept_and_win(3), ev.GameOver(None, 3)),
        (replies.accepts_and_wins("bob", 1), ev.GameOver("bob", 1)),
        (replies.JOIN_NEXT_GAME, ev.JoinNextGame()),
        (replies.you_win_match(3, 3, 1), ev.MatchOver(None, 3, (3, 1))),
        (replies.wins_match("bob", 3, 3, 0), ev.MatchOver("bob", 3, (3, 0))),
        ("You win the 3 point match 3-1", ev.MatchOver(None, 3, (3, 1))),
        (replies.has_left("bob"), ev.MatchSaved("bob")),
        (replies.saved_after(replies.logs_out("bob")), ev.MatchSaved("bob")),
        (replies.saved_after(replies.drops_connection("bob")), ev.MatchSaved("bob")),
        (replies.network_error("bob"), ev.MatchSaved("bob")),
        (replies.closed_old_connection("bob"), ev.MatchSaved("bob")),
        (
            replies.saved_line(replies.SavedMark.ONLINE, "bob", 3, 1, 2),
            ev.SavedMatch("bob", online=True, playing=False, length=3, score=(1, 2)),
        ),
        (
            replies.saved_line(replies.SavedMark.OFFLINE, "bob", None, 0, 5),
            ev.SavedMatch("bob", online=False, playing=False, length=None, score=(0, 5)),
        ),
        (replies.toggle_message(Toggle.READY, True), ev.ToggleChanged("ready", True)),
        (replies.toggle_message(Toggle.NOTIFY, False), ev.ToggleChanged("notify", False)),
        (replies.set_changed("boardstyle", "3"), ev.SetChanged("boardstyle", "3")),
        (replies.shutdown_warning(30, restart=True), ev.ServerShutdown(30, restart=True)),
        (replies.NOT_YOUR_TURN_TO_MOVE, ev.Error(replies.NOT_YOUR_TURN_TO_MOVE)),
        (replies.SAVED_HEADER, ev.Text(replies.SAVED_HEADER)),
        ("board:You:bob:3:0", ev.Text("board:You:bob:3:0")),
    ],
)
def test_lines_become_events(line: str, event: ev.Event) -> None:
    assert ev.parse_event(line) == event


def test_goodbye_clip_and_board_events() -> None:
    assert any(isinstance(ev.parse_event(x), ev.Goodbye) for x in replies.GOODBYE)
    clip = ev.parse_event(who("bob").format())
    assert isinstance(clip, ev.Clip) and isinstance(clip.message, WhoInfo)
    line = board(Colour.X, dice=(3, 1))
    event = ev.parse_event(line + "\r\n")
    assert isinstance(event, ev.Board) and event.view.colour is Colour.X
    assert event.position() == Position.start()


# -- marker, names, backoff ---------------------------------------------------------------


def test_bot_marker_follows_the_player_profile_protocol() -> None:
    marker = bot_client_name("Random Bot")
    assert marker == "=NTRandom$ot_______P"
    assert len(marker) == 20 and is_bot_client(marker)
    assert not is_bot_client("MacFIBS") and not is_bot_client(None)
    assert bot_client_name("Gnubg", country="SE", tag="G") == "=SEGnubg___________G"
    with pytest.raises(ValueError):
        bot_client_name("Far Too Long A Name For It")
    with pytest.raises(ValueError):
        bot_client_name("Bot 2")


def test_account_names_use_letters_only() -> None:
    assert account_names("Bot", 1) == ["Bot"]
    names = account_names("Bot", 28)
    assert names[:3] == ["Bot", "Bot_b", "Bot_c"] and names[25:] == ["Bot_z", "Bot_ba", "Bot_bb"]
    assert all(n.replace("_", "").isalpha() for n in names)
    assert len(set(names)) == 28
    with pytest.raises(ValueError):
        account_names("Bot", 0)


def test_command_line_makes_one_config_per_account() -> None:
    args = parser("x").parse_args(  # parsed only: nothing connects to the port
        ["--name", "Bot", "--password", "pw", "--count", "3", "--port", "5000", "--length", "0"]
    )
    cfgs = configs(args, bot_client_name())
    assert [c.name for c in cfgs] == ["Bot", "Bot_b", "Bot_c"]
    assert all(c.port == 5000 and c.password == "pw" for c in cfgs)
    assert cfgs[0].invite_length is None


def test_backoff_grows_is_bounded_and_jittered() -> None:
    b = Backoff(initial=1.0, factor=2.0, maximum=8.0, rng=random.Random(3))
    delays = [b.next_delay() for _ in range(8)]
    caps = [1, 2, 4, 8, 8, 8, 8, 8]
    assert all(cap / 2 <= d <= cap for d, cap in zip(delays, caps, strict=True))
    assert len(set(delays)) == len(delays)
    b.reset()
    assert b.next_delay() <= 1.0


# -- decisions ------------------------------------------------------------------------------


def test_due_reads_the_board() -> None:
    def d(line: str, **kw: bool) -> Due | None:
        return due(parse_board(line), **kw)

    assert d(board(Colour.O, dice=(3, 1))) is Due.MOVE
    assert d(board(Colour.X, dice=(3, 1))) is Due.MOVE
    assert d(board(Colour.O)) is Due.CUBE
    assert d(board(Colour.O, may_double=(False, True))) is None
    assert d(board(Colour.O, may_double=(False, True)), roll_prompt=True) is Due.CUBE
    assert d(board(Colour.O, turn=Colour.X)) is None
    assert d(board(Colour.O, turn=Colour.X, dice=(3, 1))) is None
    assert d(board(Colour.X, doubled=True, may_double=(False, False))) is Due.ANSWER
    assert d(board(Colour.O).replace("board:You:", "board:botty:")) is None  # watching


def test_crawford_game_detection() -> None:
    assert crawford_game(parse_board(board(Colour.O, score=(2, 0))))
    assert crawford_game(parse_board(board(Colour.O, score=(0, 2))))
    assert not crawford_game(parse_board(board(Colour.O, score=(1, 1))))
    assert not crawford_game(parse_board(board(Colour.O, score=(2, 0), post_crawford=True)))
    assert not crawford_game(parse_board(board(Colour.O, length=None)))


async def test_random_strategy_is_reproducible_and_legal() -> None:
    position, roll = Position.start(), Roll(6, 5)
    plays = legal_plays(position, 0, roll)
    v = parse_board(board(Colour.O, dice=(6, 5)))
    one = [await RandomStrategy(7).choose_play(position, roll, plays, v) for _ in range(3)]
    two = [await RandomStrategy(7).choose_play(position, roll, plays, v) for _ in range(3)]
    assert one == two and all(p in plays for p in one)
    s = RandomStrategy(1)
    assert await s.accept_invitation("x", 3) and not await s.should_double(v)
    assert await s.answer_resignation(v, 3)


def test_heuristic_prefers_hitting_and_making_points() -> None:
    position = Position.start()
    plays = legal_plays(position, 0, Roll(3, 1))
    best = best_play(position, 0, plays)
    assert best.result.counts(0)[5] == 2  # 8/5 6/5 makes the five point
    with pytest.raises(ValueError):
        best_play(position, 0, [])
