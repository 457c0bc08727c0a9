"""FibsClient against the scripted fake server: login, registration, toggles, play, reconnect."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import AsyncIterator, Sequence

import pytest

import bots.client
from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.moves import Move, Play
from backgammon.notation import parse_moves
from backgammon.validate import validate_play
from bots.backoff import Backoff
from bots.client import ClientConfig, FibsClient
from bots.login import LoginError, bot_client_name
from bots.strategy import ME, BaseStrategy, CubeAnswer
from protocol import replies
from protocol.board_view import BoardView
from protocol.clip import Logout
from protocol.replies import Toggle
from tests.bots.fakefibs import FakeFibs, FakeSession, board, own_info, who

NAME, PASSWORD = "botty", "secret"
MOVE = re.compile(r"move .+")


class Scripted(BaseStrategy):
    """Plays the play that moves ``want`` (own numbering) or the first one; cube answers set."""

    def __init__(
        self,
        want: set[Move] | None = None,
        *,
        double: bool = False,
        answer: CubeAnswer = CubeAnswer.TAKE,
        delay: float = 0.0,
    ) -> None:
        self.want = want
        self.double = double
        self.answer = answer
        self.delay = delay
        self.calls: list[Roll] = []

    async def choose_play(
        self, position: Position, roll: Roll, plays: Sequence[Play], view: BoardView
    ) -> Play:
        self.calls.append(roll)
        await asyncio.sleep(self.delay)
        for play in plays:
            if self.want is not None and set(play.moves) == self.want:
                return play
        return plays[0]

    async def should_double(self, view: BoardView) -> bool:
        return self.double

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        return self.answer


def config(fibs: FakeFibs, **kw: object) -> ClientConfig:
    cfg = ClientConfig(
        "127.0.0.1",
        fibs.port,
        NAME,
        PASSWORD,
        timeout=5.0,
        board_wait=0.5,
        command_interval=0.02,
        backoff=Backoff(initial=0.05, maximum=0.2, rng=random.Random(1)),
    )
    for key, value in kw.items():
        setattr(cfg, key, value)
    return cfg


@contextlib.asynccontextmanager
async def running(client: FibsClient) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.create_task(client.run())
    try:
        yield task
    finally:
        await client.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 5.0)
        if not task.done():
            task.cancel()


@contextlib.asynccontextmanager
async def playing(
    strategy: BaseStrategy | None = None, **toggles: bool
) -> AsyncIterator[tuple[FakeFibs, FakeSession, FibsClient]]:
    """A fake server with the bot logged in (toggles already as a bot wants them)."""
    wanted = {"ready": True, "moreboards": True, "notify": False, "report": False}
    async with FakeFibs({NAME: PASSWORD}, toggles={NAME: {**wanted, **toggles}}) as fibs:
        client = FibsClient(config(fibs), strategy or Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("show saved")
            yield fibs, session, client


# -- login ---------------------------------------------------------------------------------


async def test_login_line_uses_the_bot_marker_and_clip_1008() -> None:
    async with FakeFibs({NAME: PASSWORD}) as fibs:
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            session = await fibs.session()
            assert session.client == bot_client_name()
            assert len(session.client) == 20 and session.client.startswith("=")
            assert fibs.log == [("login", f"login {bot_client_name()} 1008 {NAME} {PASSWORD}")]
            await asyncio.wait_for(client.logged_in.wait(), 5.0)


async def test_a_missing_account_is_registered_through_guest_then_logged_in() -> None:
    async with FakeFibs() as fibs:
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            session = await fibs.session()
            assert session.name == NAME
            assert fibs.registered == [NAME]
            assert fibs.accounts[NAME] == PASSWORD
            phases = [phase for phase, _ in fibs.log]
            assert phases[:2] == ["login", "login"]  # refused CLIP login, then "guest"
            assert ("login", "guest") in fibs.log
            assert ("guest", f"name {NAME}") in fibs.log
            assert fibs.log[-1] == ("login", f"login {bot_client_name()} 1008 {NAME} {PASSWORD}")


async def test_a_wrong_password_for_an_existing_account_stops_the_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FakeFibs({NAME: "another"}) as fibs:
        client = FibsClient(config(fibs), Scripted())
        with pytest.raises(LoginError) as info:
            await asyncio.wait_for(client.run(), 10.0)
        assert info.value.permanent
    assert any("password is wrong" in r.getMessage() for r in caplog.records)
    caplog.clear()  # the ERROR log is expected here


async def test_toggles_are_set_from_what_clip_2_says() -> None:
    async with FakeFibs({NAME: PASSWORD}) as fibs:  # fresh account: ready off, notify on ...
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("show saved")
            sent = session.lines
            assert sent[0] == "set boardstyle 3"
            toggled = {line.split()[1] for line in sent if line.startswith("toggle ")}
            assert toggled == {"ready", "moreboards", "notify", "report"}
            await session.quiet(0.2)
            assert client.toggles[Toggle.READY] is True
            assert client.toggles[Toggle.NOTIFY] is False


async def test_no_toggle_is_sent_when_clip_2_already_matches() -> None:
    async with playing() as (_, session, _client):
        assert not [line for line in session.lines if line.startswith("toggle")]
        assert session.lines[0] == "set boardstyle 3"


async def test_a_toggle_reply_showing_the_wrong_value_is_toggled_again() -> None:
    async with playing() as (_, session, client):
        await session.send(replies.toggle_message(Toggle.READY, False))
        await session.expect("toggle ready")
        assert client.toggles[Toggle.READY] is False


# -- match flow ----------------------------------------------------------------------------


async def test_an_invitation_is_accepted_with_join() -> None:
    async with playing() as (_, session, _client):
        await session.send(*replies.invitation("alice", 3))
        await session.expect("join alice")


async def test_an_invitation_is_declined_when_the_strategy_says_no() -> None:
    class Picky(Scripted):
        async def accept_invitation(self, name: str, length: int | None) -> bool:
            return length is not None and length <= 5

    async with playing(Picky()) as (_, session, _client):
        await session.send(*replies.invitation("alice", 7))
        await session.send(*replies.invitation("carol", 5))
        await session.expect("join carol")
        assert "join alice" not in session.lines


@pytest.mark.parametrize(
    ("colour", "expected"),
    [(Colour.O, {"8-5", "6-5"}), (Colour.X, {"17-20", "19-20"})],
)
async def test_a_board_with_dice_gets_a_move_in_absolute_fibs_points(
    colour: Colour, expected: set[str]
) -> None:
    strategy = Scripted({Move(8, 5), Move(6, 5)})  # own numbering: 8/5 6/5
    async with playing(strategy) as (_, session, _client):
        line = board(colour, dice=(3, 1))
        await session.send(replies.starting_new_game("alice"), line, replies.please_move(2))
        sent = await session.expect(MOVE)
        assert set(sent.removeprefix("move ").split()) == expected
        moves = parse_moves(sent, colour)
        validate_play(Position.start(), ME, Roll(3, 1), moves)


async def test_entering_from_the_bar_and_bearing_off_use_the_words_bar_and_off() -> None:
    points = [0] * 26
    points[0] = -1  # X on the bar
    points[19] = -14  # X: 14 on its own 6-point (absolute 19)
    points[6] = 15
    async with playing() as (_, session, _client):
        await session.send(board(Colour.X, dice=(6, 5), points=tuple(points)))
        sent = await session.expect(MOVE)
        assert sent.startswith("move bar-")
    points = [0] * 26
    points[24] = -2  # X: two checkers on its own 1-point
    points[6] = 15
    async with playing() as (_, session, _client):
        await session.send(board(Colour.X, dice=(6, 5), points=tuple(points)))
        sent = await session.expect(MOVE)
        assert sent == "move 24-off 24-off"


async def test_a_repeated_board_is_acted_on_once() -> None:
    async with playing() as (_, session, _client):
        line = board(Colour.O, dice=(3, 1))
        await session.send(line, replies.please_move(2), line, line)
        await session.expect(MOVE)
        later = await session.quiet(0.6)
        assert not [x for x in later if x.startswith("move")]
        assert sum(1 for x in session.lines if x.startswith("move")) == 1


async def test_the_same_board_after_another_one_is_a_new_decision() -> None:
    # Both players on the bar against strong boards: each rolls, cannot move, and the
    # board of the bot's next turn is the very text of its last one (found end to end).
    async with playing(Scripted(double=False)) as (_, session, _client):
        mine = board(Colour.O)
        for _ in range(3):
            await session.send(mine, replies.ROLL_OR_DOUBLE)
            await session.expect("roll")
            await session.send(replies.you_roll(6, 4), replies.YOU_CANT_MOVE)
            await session.send(board(Colour.O, turn=Colour.X))
            await session.send(replies.rolls("alice", 3, 2), replies.cant_move("alice"))
        await session.send(mine, mine)  # a second copy of a board changes nothing
        await session.expect("roll")
        await session.quiet(0.3)
        assert session.lines.count("roll") == 4


async def test_a_stale_decision_is_dropped_when_a_newer_board_arrives() -> None:
    strategy = Scripted(delay=0.4)
    async with playing(strategy) as (_, session, _client):
        await session.send(board(Colour.O, dice=(3, 1)))
        await asyncio.sleep(0.1)
        await session.send(board(Colour.O, dice=(6, 5)))
        sent = await session.expect(MOVE)
        moves = parse_moves(sent, Colour.O)
        validate_play(Position.start(), ME, Roll(6, 5), moves)
        await session.quiet(0.6)
        assert sum(1 for x in session.lines if x.startswith("move")) == 1
        assert strategy.calls == [Roll(3, 1), Roll(6, 5)]


async def test_no_move_is_sent_when_no_play_is_legal() -> None:
    points = [0] * 26
    points[25] = 1  # O on the bar
    for p in range(19, 25):
        points[p] = -2  # X holds O's whole entry board
    points[1] = -3
    points[6] = 14
    async with playing() as (_, session, _client):
        await session.send(board(Colour.O, dice=(6, 5), points=tuple(points)))
        assert not [x for x in await session.quiet(0.4) if x.startswith("move")]


async def test_roll_or_double_is_answered_from_the_board() -> None:
    async with playing(Scripted(double=False)) as (_, session, _client):
        await session.send(board(Colour.O), replies.ROLL_OR_DOUBLE)
        await session.expect("roll")
        await session.quiet(0.3)
        assert session.lines.count("roll") == 1
    async with playing(Scripted(double=True)) as (_, session, _client):
        await session.send(board(Colour.X), replies.ROLL_OR_DOUBLE)
        await session.expect("double")


async def test_the_opponents_turn_and_a_crawford_game_need_no_action() -> None:
    async with playing(Scripted(double=True)) as (_, session, _client):
        await session.send(board(Colour.O, turn=Colour.X))
        await session.send(board(Colour.O, may_double=(False, False), score=(2, 0)))
        assert not await session.quiet(0.4)


@pytest.mark.parametrize(
    ("answer", "command"), [(CubeAnswer.TAKE, "accept"), (CubeAnswer.DROP, "reject")]
)
@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
async def test_a_double_is_answered_when_was_doubled_is_set(
    colour: Colour, answer: CubeAnswer, command: str
) -> None:
    async with playing(Scripted(answer=answer)) as (_, session, _client):
        await session.send(replies.doubles_offer("alice"))
        await session.send(board(colour, doubled=True, may_double=(False, False)))
        await session.expect(command)


async def test_a_beaver_becomes_accept_when_the_match_allows_no_redoubles() -> None:
    async with playing(Scripted(answer=CubeAnswer.BEAVER)) as (_, session, _client):
        await session.send(board(Colour.O, doubled=True, may_double=(False, False)))
        await session.expect("accept")


async def test_a_missing_board_is_requested() -> None:
    async with playing() as (_, session, _client):
        await session.send(board(Colour.O, turn=Colour.X))  # after the opponent's move
        await session.send(replies.you_roll(3, 1), replies.please_move(2))
        await session.expect("board", timeout=3.0)


async def test_a_refused_move_is_retried_after_asking_for_the_board() -> None:
    async with playing() as (_, session, _client):
        line = board(Colour.O, dice=(3, 1))
        await session.send(line)
        first = await session.expect(MOVE)
        await session.send("** You can't move from 8 in your first move.")
        await session.expect("board")
        await session.send(line)
        assert await session.expect(MOVE) == first


async def test_a_refused_double_is_retried_as_a_roll() -> None:
    async with playing(Scripted(double=True)) as (_, session, _client):
        line = board(Colour.X)
        await session.send(line)
        await session.expect("double")
        await session.send(replies.CRAWFORD_NO_DOUBLE)
        await session.expect("board")
        await session.send(line)
        await session.expect("roll")


async def test_the_old_slow_down_text_is_no_reason_to_resend() -> None:
    # Servers read commands beyond their rate later (issue 19): the text is no longer
    # special. Like any unexplained ``** `` reply it makes the bot look at the board, and
    # a board that shows the move made gets no second move.
    async with playing() as (_, session, _client):
        await session.send(board(Colour.O, dice=(3, 1)))
        await session.expect(MOVE)
        await session.send("** You are sending commands too fast. Please slow down.")
        await session.expect("board", timeout=0.4)  # at once: no second of waiting
        await session.send(board(Colour.O, turn=Colour.X))  # the move was made
        await session.quiet(0.6)
        assert sum(1 for x in session.lines if x.startswith("move")) == 1


async def test_resignation_next_game_and_match_end() -> None:
    async with playing() as (_, session, client):
        await session.send(replies.wants_to_resign("alice", 2))
        await session.expect("accept")
        await session.send(replies.you_win_game(2), replies.JOIN_NEXT_GAME)
        await session.expect("join")
        await session.send(replies.you_win_match(3, 3, 0))
        await session.quiet(0.2)
        assert client.matches_finished == 1


async def test_max_matches_logs_out_after_the_last_match() -> None:
    async with FakeFibs({NAME: PASSWORD}) as fibs:
        client = FibsClient(config(fibs, max_matches=1), Scripted())
        task = asyncio.create_task(client.run())
        session = await fibs.session()
        await session.send(replies.wins_match("alice", 1, 1, 0))
        await session.expect("bye")
        await asyncio.wait_for(task, 5.0)


async def test_the_bot_invites_its_configured_opponent_when_free() -> None:
    async with FakeFibs({NAME: PASSWORD}, others=[who("alice")]) as fibs:
        client = FibsClient(config(fibs, invite="alice", invite_length=3), Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("invite alice 3")


async def test_an_invitation_refused_as_too_frequent_is_sent_again_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # issue 27: GammonBot, restarted after each of its exits, was invited to resume that
    # often that the server refused the next invitation (D301); the bot then never
    # invited again and both waited for ever
    monkeypatch.setattr(bots.client, "_INVITE_BACKOFF", 1.0)
    async with FakeFibs({NAME: PASSWORD}, others=[who("alice")]) as fibs:
        client = FibsClient(config(fibs, invite="alice", invite_length=3), Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("invite alice 3")
            await session.send(replies.invited_too_often("alice"))
            assert "invite alice 3" not in await session.quiet(0.5)
            await session.expect("invite alice 3", timeout=3.0)


# -- several invitations ---------------------------------------------------------------------


async def finish_match(session: FakeSession, opponent: str) -> None:
    """The bot plays a 1-point match with ``opponent`` and wins it."""
    await session.send(replies.now_playing(opponent, 1))
    await session.send(board(Colour.O, dice=(3, 1), length=1, opponent=opponent))
    await session.expect(MOVE)
    await session.send(replies.you_win_game(1), replies.you_win_match(1, 1, 0))


async def test_invitations_that_come_while_the_bot_plays_are_all_played() -> None:
    async with playing() as (_, session, client):
        await session.send(*replies.invitation("alice", 1))
        await session.expect("join alice")
        await session.send(replies.now_playing("alice", 1))
        # two more within a second, while the bot plays: they wait, in order
        await session.send(*replies.invitation("carol", 1), *replies.invitation_resume("dave"))
        assert not [x for x in await session.quiet(0.3) if x.startswith("join")]
        await session.send(board(Colour.O, dice=(3, 1), length=1))
        await session.expect(MOVE)
        await session.send(replies.you_win_game(1), replies.you_win_match(1, 1, 0))
        await session.expect("join carol")
        await finish_match(session, "carol")
        await session.expect("join dave")
        await session.send(replies.now_playing_resumed("dave"))
        await session.quiet(0.1)
        assert client.matches_finished == 2
        assert client.playing and client.opponent == "dave"


async def test_an_invitation_that_is_gone_is_skipped_for_the_next_one() -> None:
    async with playing() as (_, session, _client):
        await session.send(replies.now_playing("alice", 1))
        await session.send(
            *replies.invitation("carol", 1),
            *replies.invitation("dave", 1),
            *replies.invitation("erin", 1),
            *replies.invitation("fred", 1),
            *replies.invitation("hank", 1),
        )
        await session.send(Logout("carol", "carol logs out.").format())  # carol left
        await session.send(replies.you_win_match(1, 1, 0))
        await session.expect("join dave")
        await session.send(replies.didnt_invite_you("dave"))  # dave invited someone else
        await session.expect("join erin")
        await session.send(replies.cant_find_player("erin"))  # erin logged out unseen
        await session.expect("join fred")
        await session.send(replies.join_already_playing("fred"))  # fred plays meanwhile
        await session.expect("join hank")
        await session.send(replies.refusing_games("hank"))  # hank turned ready off
        await session.quiet(0.3)
        joins = [x for x in session.lines if x.startswith("join")]
        assert joins == ["join dave", "join erin", "join fred", "join hank"]
        await session.send(*replies.invitation("gina", 1))  # the bot is free: at once
        await session.expect("join gina")


async def test_an_own_who_line_that_comes_late_does_not_make_the_bot_busy() -> None:
    async with playing() as (_, session, _client):
        await finish_match(session, "alice")
        await session.send(who(NAME, "alice").format())  # CLIP 5 from before the end
        await session.send(*replies.invitation("carol", 3))
        await session.expect("join carol")


async def test_an_invitation_refused_because_the_bot_plays_waits_for_the_match_end() -> None:
    async with playing() as (_, session, _client):
        await session.send(*replies.invitation("carol", 3))
        await session.expect("join carol")
        await session.send(replies.CANT_PLAY_TWO)  # a match the bot did not know of
        await session.send(replies.wins_match("alice", 1, 1, 0))
        await session.expect("join carol")


async def test_an_invitation_held_back_by_the_two_second_interval_is_sent_later() -> None:
    saved = [replies.saved_line(replies.SavedMark.ONLINE, "alice", 3, 1, 2)]
    async with FakeFibs({NAME: PASSWORD}, saved=saved) as fibs:
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("invite alice")
            # alice was busy, and is free again within the interval: no CLIP 5 will
            # come again, so the bot must invite her when the interval is over
            await session.send(who("alice", "carol").format(), who("alice").format())
            assert "invite alice" not in await session.quiet(0.5)
            await session.expect("invite alice", timeout=3.0)


# -- offers after a resume and refusals --------------------------------------------------------


async def test_a_resumed_match_asks_for_the_board_at_once_and_answers_its_double() -> None:
    async with playing() as (_, session, _client):
        await session.send(replies.now_playing_resumed("alice"))
        await session.send(*replies.resume_synopsis("alice", 3, "alice", 1, NAME, 0))
        await session.expect("board", timeout=0.3)  # FIBS pushes no board here
        line = board(Colour.O, doubled=True, may_double=(False, False))
        await session.send(line, line)  # a pushed copy too (another server)
        await session.expect("accept")
        await session.quiet(0.3)
        assert session.lines.count("accept") == 1


async def test_a_resumed_match_with_the_bot_on_roll_is_rolled_without_a_prompt() -> None:
    async with playing(Scripted(double=True)) as (_, session, _client):
        await session.send(replies.now_playing_resumed("alice"))
        await session.expect("board")
        # the opponent owns the cube: the bot may not double, and no prompt comes
        await session.send(board(Colour.O, may_double=(False, True), cube=2))
        await session.expect("roll")
        await session.send(replies.you_roll(3, 1), board(Colour.O, dice=(3, 1), cube=2))
        await session.expect(MOVE)
        await session.send(board(Colour.O, turn=Colour.X, cube=2))
        # the bot's next turn, before the server's automatic roll: nothing to do
        await session.send(board(Colour.O, may_double=(False, True), cube=2))
        await session.quiet(0.3)
        assert session.lines.count("roll") == 1


async def test_a_double_announced_again_after_a_resume_is_answered() -> None:
    async with playing(Scripted(answer=CubeAnswer.DROP)) as (_, session, _client):
        await session.send(replies.now_playing_resumed("alice"))
        await session.send(*replies.resume_synopsis("alice", 3, "alice", 1, NAME, 0))
        await session.send(replies.doubles_offer("alice"))
        await session.expect("board")
        await session.send(board(Colour.X, doubled=True, may_double=(False, False)))
        await session.expect("reject")
        assert session.lines.count("board") == 1  # asked for once, at the resume


async def test_a_resignation_announced_again_after_a_resume_is_answered() -> None:
    class Seeing(Scripted):
        def __init__(self) -> None:
            super().__init__()
            self.views: list[BoardView | None] = []

        async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
            self.views.append(view)
            return True

    strategy = Seeing()
    async with playing(strategy) as (_, session, _client):
        await session.send(replies.now_playing_resumed("alice"))
        await session.send(replies.wants_to_resign("alice", 2))
        await session.expect("board")
        assert not strategy.views  # the strategy gets the board, so it waits for it
        await session.send(board(Colour.O, turn=Colour.X, cube=2))
        await session.expect("accept")
        assert strategy.views[0] is not None and strategy.views[0].cube == 2


async def test_an_answer_still_thought_about_at_a_save_does_not_block_the_next_one() -> None:
    class SlowFirst(Scripted):
        asked = 0

        async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
            self.asked += 1
            if self.asked == 1:
                await asyncio.Event().wait()  # hangs (a stuck engine) until cancelled
            return True

    strategy = SlowFirst()
    async with playing(strategy) as (_, session, _client):
        await session.send(replies.wants_to_resign("alice", 1))
        await session.quiet(0.1)
        await session.send(replies.saved_after(replies.drops_connection("alice")))
        await session.send(replies.now_playing_resumed("alice"))
        await session.send(replies.wants_to_resign("alice", 1))  # announced again
        await session.expect("accept")
        await session.quiet(0.3)
        assert strategy.asked == 2
        assert session.lines.count("accept") == 1


class Rejecter(Scripted):
    def __init__(self) -> None:
        super().__init__()
        self.offers: list[int] = []

    async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
        self.offers.append(points)
        return False


async def test_a_refusal_for_a_resignation_never_seen_makes_the_bot_answer_it() -> None:
    strategy = Rejecter()
    async with playing(strategy) as (_, session, _client):
        await session.send(board(Colour.O, dice=(3, 1), cube=2))
        first = await session.expect(MOVE)
        await session.send(replies.wanted_to_resign("alice"))
        await session.expect("reject")
        # the game goes on without a new board (§4.7): the held-up move is sent again
        assert await session.expect(MOVE) == first
        assert strategy.offers == [2]  # the least offer: a normal resignation at cube 2
        await session.quiet(0.3)
        assert session.lines.count("reject") == 1


async def test_a_refusal_for_a_pending_double_makes_the_bot_answer_it() -> None:
    async with playing(Scripted(double=False)) as (_, session, _client):
        await session.send(board(Colour.O), replies.ROLL_OR_DOUBLE)
        await session.expect("roll")
        await session.send(replies.doubles_offer("alice"))  # the refusal of "roll"
        await session.expect("board", timeout=0.3)
        await session.send(board(Colour.O, doubled=True, may_double=(False, False)))
        await session.expect("accept")
        assert len([x for x in session.lines if x == "board"]) == 1


async def test_the_bot_asks_for_the_board_when_the_opponent_cannot_move() -> None:
    async with playing(Scripted(double=False)) as (_, session, _client):
        await session.send(board(Colour.O, dice=(6, 6), turn=Colour.X))
        await session.send(replies.cant_move("alice"), replies.ROLL_OR_DOUBLE)
        await session.expect("board", timeout=0.3)  # FIBS pushes no board here
        mine = board(Colour.O)
        await session.send(mine, mine)
        await session.expect("roll")
        await session.quiet(0.3)
        assert session.lines.count("roll") == 1


# -- saved matches and reconnecting ---------------------------------------------------------


async def test_saved_matches_with_online_opponents_are_resumed() -> None:
    saved = [
        replies.saved_line(replies.SavedMark.ONLINE, "alice", 3, 1, 2),
        replies.saved_line(replies.SavedMark.OFFLINE, "carol", 5, 0, 0),
    ]
    async with FakeFibs({NAME: PASSWORD}, saved=saved) as fibs:
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            session = await fibs.session()
            await session.expect("invite alice")
            await session.send(*replies.invitation_resume("alice"))
            await session.expect("join alice")
            assert "invite carol" not in session.lines
            await session.send(replies.now_playing_resumed("alice"))
            await session.quiet(0.1)
            assert client.playing and client.opponent == "alice"


async def test_an_opponent_who_comes_back_is_invited_to_resume() -> None:
    async with playing() as (_, session, client):
        await session.send(replies.saved_after(replies.drops_connection("alice")))
        await session.quiet(0.1)
        assert client.saved == {"alice": False}
        await session.send(who("alice").format(), "6")
        await session.expect("invite alice", timeout=6.0)


async def test_the_client_reconnects_after_the_server_drops_it() -> None:
    async with FakeFibs({NAME: PASSWORD}, toggles={NAME: {"ready": True}}) as fibs:
        client = FibsClient(config(fibs), Scripted())
        async with running(client):
            first = await fibs.session()
            await first.expect("show saved")
            await first.drop()
            second = await fibs.session()
            await second.expect("set boardstyle 3")
            assert fibs.connections == 2
            await second.send(board(Colour.O, dice=(3, 1)))
            await second.expect(MOVE)


async def test_connection_refused_is_retried_then_given_up() -> None:
    async with FakeFibs() as fibs:
        port = fibs.port
    cfg = ClientConfig(
        "127.0.0.1",
        port,
        NAME,
        PASSWORD,
        timeout=1.0,
        backoff=Backoff(initial=0.01, maximum=0.02),
        max_attempts=2,
    )
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(FibsClient(cfg, Scripted()).run(), 5.0)


async def test_stop_says_bye_and_ends_run() -> None:
    async with FakeFibs({NAME: PASSWORD}) as fibs:
        client = FibsClient(config(fibs), Scripted())
        task = asyncio.create_task(client.run())
        session = await fibs.session()
        await session.expect("show saved")
        await client.stop()
        await session.expect("bye")
        await asyncio.wait_for(task, 5.0)


def test_own_info_helper_matches_clip_2() -> None:
    assert own_info("x").format().startswith("2 x ")
