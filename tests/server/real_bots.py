"""Scripted clients that behave like three real FIBS bots, and the opponent that plays them.

Issue 19 asks that existing FIBS bots finish their matches here unchanged. Each class below
reproduces, line for line, what one real bot reads and what it sends back, as read in its
public source (cited per method; no code is copied). The decisions themselves (moves, cube
answers) come from GNU Backgammon through the project's :class:`bots.gnubg.GnubgEngine`:
the BaldLies client and MatchDog give gnubg's ``external`` socket the *raw* ``board:`` line
they received (:meth:`ScriptedBot.ask_raw`, no translation), as they do; GammonBot drives
gnubg's console with position IDs, which the project's translated requests stand in for
(only its FIBS side is under test).

Like the real bots, each one talks to gnubg *beside* its FIBS reading (a queue and a worker
task): a line from FIBS is handled at once, gnubg's answer is sent when it comes. That is
what makes the BaldLies client send each move twice.

:class:`Opponent` is the other side of every match: a scripted player (the heuristic's
moves) that doubles, leaves and resumes, and resigns on cue, so that every match passes a
double, a save and resume, a resignation and a Crawford game.

Every read has a timeout (:data:`READ_TIMEOUT`); a bot that hangs fails with
:class:`Stalled`, naming what it was waiting for and the last lines it saw and sent.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import ClassVar

from backgammon.dice import Roll
from backgammon.moves import Play, legal_plays
from bots.decide import move_command
from bots.gnubg import GnubgStrategy
from bots.gnubg.engine import GnubgEngine
from bots.heuristic import best_play
from bots.strategy import ME, CubeAnswer
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView

from .conftest import ScriptedClient

READ_TIMEOUT = 15.0
"""Seconds a scripted client waits for its next line before the test fails: far above any
answer time of the server or gnubg at 0 plies, so only a hang reaches it."""

_MATCH_END = re.compile(r"^(You win|\S+ wins) the \d+ point match ")


_RATE_REFUSALS = ("** You are sending commands too fast", replies.TOO_MUCH_INPUT)
"""How a server refuses input for its rate: the old drop text (the server no longer sends
it, D120) and the disconnect past ``max_unread_input``."""


def refused_for_rate(line: str) -> bool:
    """True for a line that refused or ended input for coming too fast."""
    return line.startswith(_RATE_REFUSALS)


class Stalled(AssertionError):
    """A scripted client got no line for :data:`READ_TIMEOUT` seconds (a hang)."""


class BotExited(AssertionError):
    """A scripted bot reached a point where the real bot exits (it says which)."""


def fields(line: str) -> list[str]:
    """A ``board:`` line split on ``:`` as the bots do: index = field number (§3.1)."""
    return line.split(":")


class ScriptedBot:
    """A bot on a raw socket: its own line end, a gnubg queue beside the FIBS reading.

    :param client: the connection (reads split on the server's CR LF; see
        :class:`tests.server.conftest.ScriptedClient`).
    :param engine: gnubg over ``external`` (shared; it serves one request at a time).
    """

    kind: ClassVar[str] = "bot"
    eol: ClassVar[bytes] = b"\r\n"
    client_name: ClassVar[str] = "bot"

    def __init__(self, client: ScriptedClient, name: str, engine: GnubgEngine) -> None:
        self.client = client
        self.name = name
        self.engine = engine
        self.opponent = ""
        self.sent: list[str] = []
        self.done = False
        self.ready = asyncio.Event()
        self._jobs: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._unfinished = 0
        """Jobs queued or running: a job's reaction is on the wire once it finished."""
        self._failure: BaseException | None = None
        self.gnubg_requests: list[str] = []

    # -- wire ------------------------------------------------------------------------------

    async def send(self, command: str) -> None:
        """One command with this bot's line end."""
        self.sent.append(command)
        await self.client.send_raw(command.encode() + self.eol)

    async def login(self, password: str) -> None:
        """Wait for ``login: `` and send the CLIP login line (§1.3) with this bot's name
        for its client software."""
        await self.client.prompt(replies.LOGIN_PROMPT)
        await self.send(f"login {self.client_name} 1008 {self.name} {password}")

    # -- gnubg -----------------------------------------------------------------------------

    async def ask_raw(self, line: str) -> str:
        """Send ``line`` to gnubg's ``external`` socket exactly as received (the raw
        ``board:`` line, or an ``evaluation fibsboard ...`` command) and return its answer:
        what the BaldLies client and MatchDog do. The project's engine translates its own
        requests (:mod:`bots.gnubg.translate`); this one does not."""
        self.gnubg_requests.append(line)
        return await self.engine.ask(line)

    def queue(self, job: Callable[[], Awaitable[None]]) -> None:
        """Run ``job`` (a gnubg request and the reaction to its answer) in order, beside
        the FIBS reading."""
        self._unfinished += 1
        self._jobs.put_nowait(job)

    async def _worker(self) -> None:
        try:
            while True:
                job = await self._jobs.get()
                await job()
                self._unfinished -= 1
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported by the reading loop
            self._failure = exc

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and react until the match-end line; every read under :data:`READ_TIMEOUT`."""
        worker = asyncio.create_task(self._worker())
        try:
            while not self.done:
                try:
                    line = await self.client.line(timeout=READ_TIMEOUT)
                except TimeoutError:
                    if self._failure is not None:
                        raise self._failure from None
                    raise Stalled(self.report(f"no line for {READ_TIMEOUT:.0f} s")) from None
                if self._failure is not None:
                    raise self._failure
                if line == "6":
                    self.ready.set()
                if _MATCH_END.match(line):
                    self.done = True
                await self.on_line(line)
                if b"\r\n" not in self.client.buffer:
                    self.read_done()
            # let gnubg's last answer go out
            await asyncio.wait_for(self._drain(), READ_TIMEOUT)
        finally:
            worker.cancel()

    async def _drain(self) -> None:
        while self._unfinished:
            await asyncio.sleep(0.01)

    async def settle(self, since: int, cue: str) -> None:
        """Wait until the bot has read a line containing ``cue`` among the lines after
        the first ``since`` it read, and has sent its reactions to everything before it.

        The opponent waits so before it resumes a match it left on the bot's turn: the
        bot's answer to the last board before the leave (a ``roll``, once gnubg has
        answered) must reach the server before the resume, not after it, where it would
        be a second roll that no board of the resumed match asked for.
        """

        async def settled() -> None:
            while not any(cue in line for line in self.client.seen[since:]) or self._unfinished:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(settled(), READ_TIMEOUT)

    def report(self, what: str) -> str:
        """A failure message: who, what happened, its state, the last lines both ways."""
        refused = sum(refused_for_rate(line) for line in self.client.seen)
        return (
            f"{self.kind} {self.name!r}: {what} while {self.waiting_for()}; "
            f"{refused} of its {len(self.sent)} commands refused as too fast; "
            f"last received {self.client.seen[-12:]!r}; last sent {self.sent[-8:]!r}"
        )

    def waiting_for(self) -> str:
        """What the bot is waiting for, in words (for failure messages)."""
        return "waiting"

    async def on_line(self, line: str) -> None:
        raise NotImplementedError

    def read_done(self) -> None:
        """Every line of the last read from the server has been handled (the bot is about
        to wait for the network again)."""


# -- the BaldLies bot client ------------------------------------------------------------------

_BL_FROM = r"(?:[1-9]|1[0-9]|2[0-5])"
_BL_TO = r"(?:[0-9]|1[0-9]|2[0-4])"
_BL_MOVEMENT = rf"{_BL_FROM}/{_BL_TO}"
_BL_MOVE = re.compile(rf"^{_BL_MOVEMENT}\*?(?: +{_BL_MOVEMENT}\*?){{0,3}}?$")
_BL_INVITE = re.compile(r"^Type[ \t]+'join[ \t]+(.+?)'")
_BL_DOUBLES = re.compile(r"^[^ ]+ doubles. Type 'accept' or 'reject'.$")
_BL_RESIGN = re.compile(
    r"^[^ ]+ wants to resign. You will win ([1-9][0-9]*) points?. Type 'accept' or 'reject'.$"
)
_BL_PLEASE_MOVE = re.compile(r"^Please move [1-4] pieces?\.$")


def _perl_true(value: str) -> bool:
    """Perl's truth of a string field: false for ``""`` and ``"0"`` only."""
    return value not in ("", "0")


class BaldLiesBot(ScriptedBot):
    """The BaldLies bot client (gflohr/BaldLies ``lib/BaldLies/Client.pm`` with the
    backend ``lib/BaldLies/Client/Backend/GNU.pm``).

    * Line ends: ``queueServerOutput`` ends every command with ``\\012\\015`` (LF CR).
    * After login (``__handleClipOwnInfo``, on CLIP 2): toggles autoboard on, autodouble
      off, bell off, crawford on, moreboards on where needed, ``set redoubles none`` if
      its redoubles are not 0, and always ``set boardstyle 3``.
    * ``__handleFIBSInput``: ``Type 'join NAME'`` -> ``join NAME`` (new and resumed
      matches alike); a ``board:You:`` line goes to gnubg *raw* (``__handleClipBoard``,
      GNU.pm ``handleBoard``) when its turn (field 32) is non-zero and either "was
      doubled" (field 40) is set, or not both may-double flags (38, 39) are 0 ("Waiting
      for reply to our double"), the turn is its colour (field 41), and it is not a
      board without dice where only the opponent may double ("Opponent owns the cube
      server will roll"); ``NAME doubles. Type 'accept' or 'reject'.`` -> ``board``
      (GNU.pm ``handleAction('double')``); the join-next-game line -> ``join``;
      ``NAME wants to resign ...`` -> ``reject`` (``handleAction('resign')``: always).
    * GNU.pm ``handlePleaseMove``: ``Please move N pieces.`` -> ``board`` ("We need a new
      board from the server"). With the board pushed after the roll, gnubg is asked
      twice for the same roll, and both answers are sent: every move goes out twice.
    * The boards go to gnubg as the real client writes them: ``queueClientOutput``
      appends each to one buffer while it handles the lines of one read from the server
      (``sysread`` of up to 4096 bytes, every complete line), and its ``select`` loop
      writes that buffer in one ``syswrite`` afterwards. gnubg's ``external`` (1.07)
      reads at most 256 bytes at a time and answers the *first* line of each read only:
      the rest of that read is lost, and a line cut at byte 256 is read with whatever the
      client wrote next as one garbled request (``Error: syntax error, ...``; checked
      against ``/usr/games/gnubg``). So two boards that reach the client in one read get
      one answer, and a board it writes while gnubg still answers may get none
      (:meth:`_gnubg_reads`, :attr:`lost_boards`).
    * GNU.pm ``__processLine``: gnubg's ``roll``/``double`` are sent as they are,
      ``take`` -> ``accept``, ``drop`` -> ``reject``, ``beaver`` -> ``redouble``, a move
      matching its ``$move_re`` -> ``__processMove`` (points reversed with ``25 - n``
      when field 42 of the *last* board it gave gnubg is 1, ``bar``/``home`` words);
      anything else (an empty answer) is logged and nothing is sent.
    """

    kind = "BaldLies client"
    eol = b"\n\r"
    client_name = "BaldLies"

    def __init__(self, client: ScriptedClient, name: str, engine: GnubgEngine) -> None:
        super().__init__(client, name, engine)
        self.last_board = ""
        self.invalid_answers: list[str] = []
        self._client_out = b""
        """Boards queued for gnubg while the lines of one read are handled."""
        self._gnubg_in = bytearray()
        """What the client wrote to gnubg's socket and gnubg has not read yet."""
        self.lost_boards: list[str] = []
        """Boards gnubg never answered (the rest of a 256-byte read, or garbled)."""

    def waiting_for(self) -> str:
        return (
            f"its boards went to gnubg {len(self.gnubg_requests)} times"
            f" (last: {self.gnubg_requests[-1] if self.gnubg_requests else None!r})"
        )

    async def on_line(self, line: str) -> None:
        if not line:
            return
        code = line.split()[0] if line.split() else ""
        if code == "2":
            await self._own_info(line)
            return
        if code in ("1", "12"):
            return  # welcome check; tells get a canned answer (not reproduced)
        if invite := _BL_INVITE.match(line):
            await self.send(f"join {invite[1]}")
        elif line.startswith("board:You:"):
            self._board(line)
        elif _BL_DOUBLES.match(line):
            await self.send("board")
        elif line == replies.JOIN_NEXT_GAME:
            await self.send("join")
        elif _BL_RESIGN.match(line):
            await self.send("reject")
        elif _BL_PLEASE_MOVE.match(line):
            await self.send("board")

    async def _own_info(self, line: str) -> None:
        f = line.split()
        (autoboard, autodouble, away, bell, crawford, moreboards, redoubles) = (
            f[3],
            f[4],
            f[6],
            f[7],
            f[8],
            f[12],
            f[18],
        )
        if not _perl_true(autoboard):
            await self.send("toggle autoboard")
        if _perl_true(autodouble):
            await self.send("toggle autodouble")
        if _perl_true(away):
            await self.send("back")
        if _perl_true(bell):
            await self.send("toggle bell")
        if not _perl_true(crawford):
            await self.send("toggle crawford")
        if not _perl_true(moreboards):
            await self.send("toggle moreboards")
        if _perl_true(redoubles):
            await self.send("set redoubles none")
        await self.send("set boardstyle 3")

    def _board(self, line: str) -> None:
        b = fields(line)
        turn = b[32]
        if not _perl_true(turn):
            return
        if not _perl_true(b[40]):
            if not _perl_true(b[38]) and not _perl_true(b[39]):
                return  # "Waiting for reply to our double."
            if int(b[41]) != int(turn):
                return  # "Not our turn."
            if not any(_perl_true(b[i]) for i in (33, 34, 35, 36, 38)) and _perl_true(b[39]):
                return  # "Opponent owns the cube server will roll."
        self.last_board = line
        self._client_out += line.encode() + b"\n"

    def read_done(self) -> None:
        """The ``select`` loop writes the boards queued during the read in one go."""
        if self._client_out:
            self._gnubg_in += self._client_out
            self._client_out = b""
            self.queue(self._gnubg_reads)

    async def _gnubg_reads(self) -> None:
        """gnubg reads what was written, 256 bytes at a time, and answers the first line
        of each read; what the client writes while it answers joins the unread rest."""
        while self._gnubg_in:
            read = bytes(self._gnubg_in[:256])
            del self._gnubg_in[:256]
            first, _, rest = read.partition(b"\n")
            self.lost_boards += [
                "board:" + part for part in rest.decode().split("board:")[1:] if part
            ]
            request = first.decode()
            if request.startswith("board:") and request.count(":") == 52:
                await self._answer(await self.ask_raw(request))
            else:
                if "board:" in request:
                    self.lost_boards.append(request)
                self.invalid_answers.append("Error: syntax error")

    async def _answer(self, answer: str) -> None:
        answer = answer.strip()
        simple = {"roll": "roll", "double": "double", "drop": "reject", "take": "accept"}
        if answer in simple:
            await self.send(simple[answer])
        elif answer == "beaver":
            await self.send("redouble")
        elif _BL_MOVE.match(answer):
            await self.send(self._move(answer))
        else:
            self.invalid_answers.append(answer)

    def _move(self, answer: str) -> str:
        reverse = fields(self.last_board)[42] == "1"
        parts = []
        for movement in answer.replace("*", "").split():
            src, dst = (int(p) for p in movement.split("/"))
            if reverse:
                a = "bar" if 25 - src == 0 else str(25 - src)
                b = "home" if 25 - dst == 25 else str(25 - dst)
            else:
                a = "bar" if src == 25 else str(src)
                b = "home" if dst == 0 else str(dst)
            parts.append(f"{a}-{b}")
        return "move " + " ".join(parts)


# -- GammonBot -------------------------------------------------------------------------------

BD_OPP, BD_LENGTH, BD_SCORE1, BD_SCORE2 = 2, 3, 4, 5
BD_TURN, BD_DICE1, BD_DICE2, BD_CUBE = 32, 33, 35, 37
BD_MD1, BD_MD2, BD_DOUBLED, BD_COLOR, BD_DIR = 38, 39, 40, 41, 42

_GB_IGNORED = ("7 ", "8 ", "13 ", "16 ", "6")
_GbAnswer = CubeAnswer | Play | bool | None
"""What gnubg's ``hint`` tells GammonBot: a cube answer (it was doubled), a play (it has
dice; None when there is no move to give), or whether to double."""
_GB_INVITE = re.compile(r"^(\w+) wants to play a (\d+) point match with you.")
_GB_RESUME_INVITE = re.compile(r"^(\w+) wants to resume a saved match with you.")
_GB_STARTED = re.compile(r"^\*\* You are now playing a (\d+) point match with (\w+)")
_GB_RESUMED = re.compile(
    r"^You are now playing with (\w+)\. Your running|^(\w+) has joined you\. Your running"
)
_GB_ASK_BOARD = re.compile(r"^\w+ can't move\.|^\w+ doubles\.|^\w+ redoubles to \d+\.")
_GB_RESIGN = re.compile(r"^\w+ wants to resign\. You will win (\d+) point")
_GB_LEFT = re.compile(
    r"^\*\* Player \w+ has left the game\. The game was saved\."
    r"|^\w+ logs out\. The game was saved\."
    r"|^\w+ drops connection\. The game was saved\."
    r"|^Network error with \w+\. The game was saved\."
    r"|^Connection with \w+ timed out\. The game was saved\."
    r"|^Closed old connection with user \w+\. The game was saved\."
)


class GammonBot(ScriptedBot):
    """GammonBot (w2vy/gammonbot ``gbot/gammonbot.pl``).

    * Line ends CR LF (``toFibs``); lines split on LF, blank ones dropped
      (``procUnbufferedInput``); CLIP 5 of others, 6, 7, 8, 13, 16 ignored
      (``procFibsLine``).
    * It asks for a board (``requestBoard``) after ``NAME can't move.``, after
      ``NAME doubles.``, after the resume line (``You are now playing with NAME. Your
      running ...`` / ``NAME has joined you. Your running ...``), after
      ``** You did already roll`` and after ``NAME rejects. The game continues.``
    * On a ``board:`` line (``procFibsLine``): when it is its turn (field 41 x field 32
      > 0, ``isBotTurn``) and it may double (field 38) or has dice (field 33), or when
      field 40 ("was doubled") is 1, it asks gnubg (``setBoard`` + ``hint``). gnubg's
      answer (``procGnubgLine``, ``handleCubeAction``): with field 40 = 1, take/beaver ->
      ``accept``, pass -> ``reject``; else ``double`` or ``roll`` (optional doubles are
      rolled); a move -> ``move ...``, but if the board it holds by then has no dice it
      exits ("Dice are Zero - Bot Spin averted!"). So it rolls when a board says it is
      its turn with no dice and may double - once per such board - and asks gnubg again
      for every board with its dice, sending the move once per answer (D198). gnubg
      answers a board it has evaluated before from its cache, at once (:meth:`_board`).
    * ``NAME wants to resign. You will win N point``: on its own turn ``accept`` if the
      points win the match, else ``reject``; otherwise gnubg decides (``resign N``).
      ``** NAME wanted to resign.`` -> ``reject``.
    * A new invitation: ``show savedcount NAME`` and ``tellx RepBotNG ask NAME``; when
      the server says there is no RepBotNG, ``join NAME``. A resume invitation ->
      ``invite NAME`` ("Don't use join to resume a match"). Between games -> ``join``.
      The opponent leaving (``... The game was saved.``) or the match ending ->
      ``show saved`` (``notPlaying``).
    * Not reproduced: greetings and kibitzes, its own resignations, timers (AFK, resume
      of saved matches, keep-alive, the 8 s board re-request), the 1.5 s pauses.
    """

    kind = "GammonBot"
    eol = b"\r\n"
    client_name = "ParlorBot"

    def __init__(self, client: ScriptedClient, name: str, engine: GnubgEngine) -> None:
        super().__init__(client, name, engine)
        self.strategy = GnubgStrategy(engine)
        self.board: list[str] = []
        self.board_line = ""
        self.board_expected = False
        self.last_inviter = ""
        self.boards_acted_on = 0
        self.answers: dict[str, _GbAnswer] = {}
        """gnubg's answer to each board it was given, by the board line: its evaluation
        cache (see :meth:`_board`)."""
        self.repeated_answers = 0

    def waiting_for(self) -> str:
        expecting = "a board it asked for" if self.board_expected else "the next line"
        return f"waiting for {expecting} (last board {self.board_line!r})"

    def is_bot_turn(self) -> bool:
        return bool(self.board) and int(self.board[BD_COLOR]) * int(self.board[BD_TURN]) > 0

    async def request_board(self) -> None:
        self.board_expected = True
        await self.send("board")

    async def on_line(self, line: str) -> None:
        line = line.rstrip("\r")
        if not line.strip():
            return
        if line.startswith("5 ") and not line.startswith(f"5 {self.name} "):
            return
        if line.startswith(_GB_IGNORED):
            return
        if line.startswith("12 "):
            return
        if line.startswith("** There is no one called RepBotNG"):
            if self.last_inviter:
                await self.send(f"join {self.last_inviter}")
                self.last_inviter = ""
        elif m := _GB_INVITE.match(line):
            self.last_inviter = m[1]
            await self.send(f"show savedcount {m[1]}")
            await self.send(f"tellx RepBotNG ask {m[1]}")
        elif m := _GB_RESUME_INVITE.match(line):
            await self.send(f"invite {m[1]}")
        elif line.startswith("Type 'join' if you want to play the next game"):
            await self.send("join")
        elif m := _GB_STARTED.match(line):
            self.opponent = m[2]
            await self.send("show watchers")
        elif m := _GB_RESUMED.match(line):
            self.opponent = m[1] or m[2]
            await self.send("show watchers")
            await self.request_board()
        elif line.startswith("board:"):
            await self._board(line)
        elif m := _GB_RESIGN.match(line):
            await self._resignation(int(m[1]))
        elif re.search(r"\w+ rejects\. The game continues\.", line):
            await self.request_board()
        elif re.match(r"^\*\* \w+ wanted to resign\.", line):
            await self.send("reject")
        elif _GB_ASK_BOARD.match(line):
            await self.request_board()
        elif _GB_LEFT.match(line):
            await self.send("show saved")
        elif line.startswith("** You did already roll"):
            await self.request_board()
        elif _MATCH_END.match(line):
            await self.send("show saved")

    async def _board(self, line: str) -> None:
        """A ``board:`` line: kept as the board it holds; given to gnubg when it shows its
        turn with may-double or dice, or a double to answer (``procFibsLine``).

        gnubg answers a board it has already evaluated from its cache, at once, while FIBS
        is a network round trip away: the real bot has that second answer before FIBS's
        reply to the move it sent for the first, and sends the move again (refused with
        ``** It's not your turn to move.``, D198). The test server answers in a
        millisecond on the same machine, and a second request to the engine would race
        it. So a board the bot has had answered is answered again from :attr:`answers`:
        at once, before the next line from the server, when no request is pending; else
        in its turn after the pending ones, without waiting for the engine. The exit
        ("Dice are Zero") stays for a board whose dice are gone when the answer comes.
        """
        self.board_expected = False
        self.board = fields(line)
        self.board_line = line
        b = self.board
        if (self.is_bot_turn() and (_perl_true(b[BD_MD1]) or _perl_true(b[BD_DICE1]))) or (
            _perl_true(b[BD_DOUBLED])
        ):
            self.boards_acted_on += 1
            view = parse_board(line)
            if line in self.answers and not self._unfinished:
                self.repeated_answers += 1
                await self._react(view, self.answers[line])
                return

            async def job() -> None:
                await self._hint(line, view)

            self.queue(job)

    async def _hint(self, line: str, view: BoardView) -> None:
        """``setBoard`` + ``hint 1`` (or gnubg's cached answer), then the reaction."""
        if line in self.answers:
            self.repeated_answers += 1
            answer = self.answers[line]
        else:
            answer = self.answers[line] = await self._ask(view)
        await self._react(view, answer)

    async def _ask(self, view: BoardView) -> _GbAnswer:
        """gnubg's ``hint``: the cube answer, the play (None: no move to give) or
        whether to double."""
        if view.was_doubled:
            return await self.strategy.answer_double(view)
        if view.player_dice != (0, 0):
            position = view.position(ME)
            roll = Roll(*view.player_dice)
            plays = legal_plays(position, ME, roll)
            if not plays:
                return None
            return await self.strategy.choose_play(position, roll, plays, view)
        return await self.strategy.should_double(view)

    async def _react(self, view: BoardView, answer: _GbAnswer) -> None:
        """``procGnubgLine``'s reaction to gnubg's answer, on the board it holds *now*."""
        if isinstance(answer, CubeAnswer):
            await self.send("reject" if answer is CubeAnswer.DROP else "accept")
            self.board_expected = True
        elif isinstance(answer, bool):
            await self.send("double" if answer else "roll")
            self.board_expected = True
        elif answer is not None:
            if self.board[BD_DICE1] == "0" or self.board[BD_DICE1 + 1] == "0":
                raise BotExited(self.report("exits: 'Dice are Zero - Bot Spin averted!'"))
            await self.send(move_command(answer, view.colour))
            self.board_expected = True

    async def _resignation(self, points: int) -> None:
        b = self.board
        if self.is_bot_turn():
            if int(b[BD_SCORE1]) + points >= int(b[BD_LENGTH]):
                await self.send("accept")
            else:
                await self.send("reject")
                await self.send("kibitz I can only handle this resignation when it's your turn.")
            return
        view = parse_board(self.board_line)

        async def job() -> None:
            accept = await self.strategy.answer_resignation(view, points)
            await self.send("accept" if accept else "reject")

        self.queue(job)


# -- MatchDog --------------------------------------------------------------------------------


@dataclass
class _MatchDogMatch:
    """MatchDog's ``Match`` fields that its game play reads."""

    opponent: str
    length: int
    round: int = 0
    turn: str = ""
    score: list[int] = field(default_factory=lambda: [0, 0])
    crawford: bool = False
    crawford_score: int = -1
    post_crawford: bool = False
    shift: bool = False
    own_resign: bool = False
    was_resumed: bool = False

    def one_to_win(self) -> bool:
        return self.length - self.score[0] == 1


class MatchDogBot(ScriptedBot):
    """MatchDog (marekful/MatchDog ``src/matchdog/FibsRunner.java`` and ``BGSocket.java``).

    * Line ends LF (``PrintWriter.println``). CLIP-numbered lines never reach the game
      play, nor lines with ``point match`` and ``wins a``/``start a``/``are resuming``
      (``processInput``).
    * After login ``ensureToggleSettings`` turns ``double`` off (its readme's toggles):
      the server rolls for it on every turn, and the opponent's move board before that
      roll goes to gnubg for a cube decision only if field 38 says it may double.
    * A new invitation -> ``join NAME`` twice (``processInput``, "2nd 'join'"; its
      rating, experience and RepBot checks are not reproduced); a resume invitation ->
      ``join NAME``; ``** Player NAME has joined you ...`` / ``** You are now playing a``
      start a match, ``... Your running match was loaded.`` a resumed one
      (``startMatch``), then ``who`` for both players.
    * Resume (``processGamePlay``): it reads ``turn:``, ``match length:`` and both
      ``points for`` lines, then sends ``board`` and gives that board to gnubg if its
      own turn.
    * Its turn: ``You roll`` -> the next board -> ``evaluation fibsboard`` (equities;
      it resigns when they are hopeless) -> the raw board to gnubg. The opponent's turn:
      ``NAME moves`` -> the next board -> to gnubg (roll or double) only if field 38 is 1,
      not Crawford (its own count: the opponent 1-away, first time), not 1-away itself;
      ``NAME can't move`` -> under the same test ``board``; ``NAME doubles.`` -> ``board``
      -> the board to gnubg. Between games ``score in N point match:`` -> ``join``.
    * ``NAME wants to resign``: ``accept`` if it wins the match, else equities decide
      (a single game: reject if its gammon chance is above 1 %).
    * ``BGSocket.processReply``: gnubg's answer with ``25`` -> ``bar``, ``/0`` -> ``/off``,
      ``/`` -> ``-``, ``*`` dropped, ``take`` -> ``accept``, ``drop`` -> ``reject``; a move
      gets ``move`` and, when its direction (field 42) is 1, every point n -> 25 - n
      (``shift``); everything is sent. While gnubg has not answered, a new board for gnubg
      is dropped (``println``: "NOT SENDING new line to socket").
    * Not reproduced: greetings, kibitz commands, stats, ``toggle r``, the pauses
      (``sleepFibs``); equities are asked at 0 plies (it uses 3) to keep tests fast.
    """

    kind = "MatchDog"
    eol = b"\n"
    client_name = "MatchDog"

    def __init__(self, client: ScriptedClient, name: str, engine: GnubgEngine) -> None:
        super().__init__(client, name, engine)
        self.match: _MatchDogMatch | None = None
        self.last_match: _MatchDogMatch | None = None
        self.last_board = ""
        self.resume = False
        self.resume_bits: dict[str, bool] = {}
        self.busy = False
        self.dropped_boards = 0
        self.w_roll = self.w_move = self.w_opp_move = self.w_opp_double = False
        self.w_resume = False
        self.own_double = False

    def waiting_for(self) -> str:
        m = self.match
        if m is None:
            return "not in a match"
        flags = [
            n
            for n, v in (
                ("its roll board", self.w_roll),
                ("the board after its move", self.w_move),
                ("the opponent's move board", self.w_opp_move),
                ("the double board", self.w_opp_double),
                ("the resume board", self.w_resume),
            )
            if v
        ]
        return f"turn {m.turn or '-'} round {m.round}, waiting for {flags or 'the opponent'}"

    # -- gnubg (BGSocket) ------------------------------------------------------------------

    def to_gnubg(self, board: str) -> None:
        if self.busy:
            self.dropped_boards += 1
            return
        self.busy = True

        async def job() -> None:
            try:
                answer = await self.ask_raw(board)
            finally:
                self.busy = False
            await self._reply(answer)

        self.queue(job)

    async def _reply(self, answer: str) -> None:
        command = (
            answer.replace("25", "bar")
            .replace("/0", "/off")
            .replace("/", "-")
            .replace("*", "")
            .replace("take", "accept")
            .replace("drop", "reject")
        )
        if self.match is None:
            return
        if "-" in command:
            if self.match.shift:
                command = self._shift(command)
            command = "move " + command
        await self.send(command)

    @staticmethod
    def _shift(command: str) -> str:
        out = []
        for part in command.split(" "):
            ends = part.split("-")
            for i, end in enumerate(ends):
                if end.isdigit() and 0 < int(end) < 25:
                    ends[i] = str(25 - int(end))
            out.append("-".join(ends))
        return " ".join(out) + " "

    async def equities(self, board: str) -> list[float]:
        answer = await self.ask_raw(f"evaluation fibsboard {board} PLIES 0 CUBE ON CUBEFUL")
        return [float(x) for x in answer.split()[:6]]

    # -- FIBS (FibsRunner) -----------------------------------------------------------------

    async def on_line(self, line: str) -> None:
        if len(line) < 2 and line != "6":
            return
        if line.startswith("board:"):
            self.last_board = line
        if self.match is None:
            await self._lobby(line)
            return
        numbered = line[:2].strip().isdigit()
        filtered = "waves goodbye" in line or (
            "point match" in line
            and ("wins a" in line or "start a" in line or "are resuming" in line)
        )
        if not numbered and not filtered:
            await self._game_play(line)

    async def _lobby(self, line: str) -> None:
        if line.startswith(f"2 {self.name} "):
            # ensureToggleSettings: after login it lists the toggles and turns those
            # its readme names to its values; of those the server has other, ``double``
            # (reset to on at every login, §4.15) is the one that changes the play
            # (off: the server rolls for it on every turn)
            if line.split()[9] == "1":
                await self.send("toggle double")
        elif (
            " wants to play a" in line
            and "unlimited match" not in line
            and "saved match" not in line
            and not line.startswith("board:")
        ):
            opponent = line.split(" wants to play a")[0]
            await self.send(f"join {opponent}")
            await self.send(f"join {opponent}")
        elif "wants to resume a saved match with you" in line:
            await self.send(f"join {line.split(' wants to resume a saved match with you')[0]}")
        elif " has joined you" in line or "You are now playing" in line:
            await self._start(line)

    async def _start(self, line: str) -> None:
        if " has joined you for a " in line:
            head, tail = line.split(" has joined you for a ")
            opponent, length = head.split(" Player ")[1], int(tail.split(" point match.")[0])
        elif "has joined you." in line:
            opponent, length = line.split("has joined you.")[0].strip(), 0
            self.resume = True
        elif line.startswith("You are now playing with"):
            opponent = line.split(" are now playing with ")[1].split(". Your running")[0]
            length = 0
            self.resume = True
        else:  # ** You are now playing a N point match with NAME
            length_text, opponent = line.split("You are now playing a ")[1].split(
                " point match with "
            )
            length = int(length_text)
        self.resume_bits = {}
        self.match = _MatchDogMatch(opponent, length)
        self.opponent = opponent
        self.last_match = None
        await self.send(f"who {self.name}")
        await self.send(f"who {opponent}")

    def _reset_waits(self) -> None:
        self.w_roll = self.w_move = self.w_opp_move = self.w_opp_double = False
        self.w_resume = False

    def _stop(self, *, dropped: bool) -> None:
        if dropped:
            self.last_match = self.match
        self.match = None
        self._reset_waits()

    async def _game_play(self, line: str) -> None:
        m = self.match
        assert m is not None
        low = line.lower()
        opp = m.opponent
        if self.resume:
            m.round = 1
            if low.startswith("match length: "):
                m.length = int(line.split("match length: ")[1])
                self.resume_bits["length"] = True
            if low.startswith(f"points for {self.name.lower()}: "):
                m.score[0] = int(line.rsplit(": ", 1)[1])
                self.resume_bits["mine"] = True
            if low.startswith(f"points for {opp.lower()}: "):
                m.score[1] = int(line.rsplit(": ", 1)[1])
                self.resume_bits["theirs"] = True
            if low.startswith(f"turn: {self.name.lower()}"):
                m.turn, self.resume_bits["turn"] = "me", True
            if low.startswith(f"turn: {opp.lower()}"):
                m.turn, self.resume_bits["turn"] = "opp", True
            if len(self.resume_bits) == 4:
                self.resume = False
                m.was_resumed = True
                self._reset_waits()
                self.w_resume = True
                await self.send("board")
            return
        if line == f"Starting a new game with {opp}.":
            self._reset_waits()
        if line.startswith("You rolled ") and m.round == 0:
            mine, theirs = line.removeprefix("You rolled ").split(f", {opp} rolled ")
            if int(mine) == int(theirs):
                return
            m.round = 1
            if int(mine) > int(theirs):
                m.turn, self.w_roll = "me", True
            else:
                m.turn = "opp"
        if line.startswith((f"** Player {opp} has left the game.", f"{opp} drops connection.")) or (
            low.startswith(f"{opp.lower()} logs out")
        ):
            self._stop(dropped=True)
            await self.send("show saved")
            return
        if (line.startswith("You win ") and "point match" in line) or (
            low.startswith(f"{opp.lower()} wins") and "point match" in line
        ):
            self._stop(dropped=False)
            return
        if (
            line.startswith("You win the game")
            or low.startswith(f"{opp.lower()} wins the game and gets")
            or (line.startswith("You give up") and f"{opp} wins the game" in line)
            or line.startswith("You accept and win ")
            or (f"{opp.lower()} wins" in low and " point" in line)
            or (line.startswith(f"{opp} accepts") and m.own_resign)
        ):
            m.own_resign = False
            m.round, m.turn = 0, ""
            return
        if line.startswith(f"{opp} gives up.") and self.own_double:
            self.own_double = False
            m.round, m.turn = 0, ""
            return
        if line.startswith(f"score in {m.length} point match:"):
            if m.length > 1:
                m.post_crawford = False
                await self.send("join")
            return
        if m.own_resign and line.startswith(f"{opp} rejects"):
            m.own_resign = False
            self.w_move = True
            self.to_gnubg(self.last_board)
            return
        if line.startswith(f"{opp} wants to resign."):
            await self._resignation(line)
            return
        if m.round > 0:
            await self._turn(m, line, low)

    async def _turn(self, m: _MatchDogMatch, line: str, low: str) -> None:
        opp = m.opponent
        board = line.startswith("board:")
        if m.round == 1 and board:
            b = fields(line)
            m.score = [int(b[4]), int(b[5])]
            if m.length > 1 and m.length - m.score[1] == 1 and not m.one_to_win():
                if m.crawford_score == -1 and not (m.was_resumed and b[51] == "1"):
                    m.crawford, m.crawford_score = True, m.score[0]
                elif m.score[0] > m.crawford_score and m.crawford:
                    m.crawford, m.post_crawford = False, True
            else:
                m.post_crawford = False
        if m.turn == "me":
            if board and self.w_resume:
                self.w_resume = False
                b = fields(line)
                m.shift = b[42] == "1"
                if b[33] != "0" and b[34] != "0":
                    m.turn = "opp"
                m.round += 1
                self.to_gnubg(line)
                return
            if line.startswith("You roll "):
                self.w_roll = True
                return
            if board and self.w_roll:
                self.w_roll = False
                m.shift = fields(line)[42] == "1"
                await self._own_roll_board(m, line)
                return
            if (board or line.startswith("You can't move")) and self.w_move:
                self.w_move = False
                m.turn, m.round = "opp", m.round + 1
            if line.startswith("You double."):
                self.own_double = True
                return
        elif m.turn == "opp":
            if board and self.w_resume:
                self.w_resume = False
            if low.startswith(f"{opp.lower()} moves"):
                self.w_opp_move = True
                return
            if line.startswith(f"{opp} can't move"):
                if (
                    m.length > 1
                    and fields(self.last_board)[38] == "1"
                    and not m.crawford
                    and not m.one_to_win()
                    and not (m.was_resumed and m.round == 1)
                ):
                    self.w_opp_move = True
                else:
                    m.turn, m.round = "me", m.round + 1
                    return
                await self.send("board")
                return
            if board and self.w_opp_move:
                self.w_opp_move = False
                m.turn, m.round = "me", m.round + 1
                may_double = fields(line)[38] == "1"
                if m.post_crawford and may_double and m.round == 1:
                    await self.send("double")
                elif m.length > 1 and may_double and not m.crawford and not m.one_to_win():
                    self.to_gnubg(line)
                return
            if low.startswith(f"{opp.lower()} doubles."):
                self.w_opp_double = True
                await self.send("board")
                return
            if board and self.w_opp_double:
                self.w_opp_double = False
                self.to_gnubg(line)

    async def _own_roll_board(self, m: _MatchDogMatch, line: str) -> None:
        """Its roll board: the equities first, read before any further FIBS line (the
        real ``processGamePlay`` waits for ``evaluation`` inline), then resign or give
        the board to gnubg and wait for the move board (``wMoveBoard``)."""
        eq = await self.equities(line)
        on_bar = int(fields(line)[47])
        resign = None
        if m.length == 1:
            if eq[0] < 0.005:
                resign = "resign n"
        else:
            if eq[0] < 0.005 and eq[3] < 0.03 and on_bar == 0:
                resign = "resign n"
            elif eq[0] == 0.0 and eq[4] > 0.99:
                resign = "resign b"
            elif eq[0] == 0.0 and eq[3] > 0.99:
                resign = "resign g"
        if resign is not None:
            m.own_resign = True
            await self.send(resign)
            return
        self.w_move = True
        self.to_gnubg(line)

    async def _resignation(self, line: str) -> None:
        m = self.match
        assert m is not None
        points = int(line.split("You will win ")[1][:2].strip())
        if points >= m.length - m.score[0]:
            await self.send("accept")
            return
        board = self.last_board

        async def job() -> None:
            eq = await self.equities(board)
            cube = int(fields(board)[37])
            if points == cube:
                await self.send("reject" if eq[1] > 0.01 else "accept")
            elif points == 2 * cube:
                if eq[2] > 0.0:
                    await self.send("reject")
                elif eq[2] == 0.0:
                    await self.send("accept")
            elif points == 3 * cube:
                await self.send("accept")

        self.queue(job)


# -- the other side ----------------------------------------------------------------------------


@dataclass
class Opponent:
    """The scripted player every bot meets (CR LF, the heuristic's moves), with cues
    that make each match pass every case issue 19 names:

    * game 1: it doubles at its first chance (the bot must answer a double);
    * game 1, when it has rolled after ``leave_after`` moves of its own: ``leave`` (the
      match is saved with its dice out; resumed, it asks for its ``board``), or with
      ``leave_on_bot_turn`` right after that move (the bot's turn to roll is saved); then
      ``invite BOT`` to resume; it joins when the bot invites it back instead;
    * game 2, its first turn to move after two moves of the bot: ``resign n`` (the bot
      must answer); when the bot rejects, it asks for its ``board``, as GammonBot does;
    * the bot's doubles: the first is refused, later ones taken;
    * a post-Crawford game while trailing: it doubles at its first chance.
    """

    client: ScriptedClient
    name: str
    bot: str
    leave_after: int = 2
    leave_on_bot_turn: bool = False
    """Leave right after its own move (the bot's turn is saved) instead of with its own
    dice out (its own turn is saved)."""
    bot_player: ScriptedBot | None = None
    """The bot, when the opponent should wait for it to settle before a resume."""
    games: int = 0
    my_moves: int = 0
    bot_moves: int = 0
    left: bool = False
    resumed: bool = False
    resigned: bool = False
    doubled_game1: bool = False
    bot_doubles: int = 0
    done: bool = False
    last_board: BoardView | None = None
    events: list[str] = field(default_factory=list)

    async def send(self, command: str) -> None:
        await self.client.send(command)

    async def run(self) -> None:
        """React until the match is over; every read under :data:`READ_TIMEOUT`."""
        while not self.done:
            try:
                line = await self.client.line(timeout=READ_TIMEOUT)
            except TimeoutError:
                raise Stalled(
                    f"opponent {self.name!r}: no line for {READ_TIMEOUT:.0f} s (game "
                    f"{self.games}, events {self.events}); last received "
                    f"{self.client.seen[-12:]!r}"
                ) from None
            await self.on_line(line)

    async def on_line(self, line: str) -> None:
        bot = self.bot
        if line.startswith("Starting a new game with "):
            self.games += 1
            self.bot_moves = 0
        elif line.startswith(f"{bot} moves "):
            self.bot_moves += 1
        elif line == replies.ROLL_OR_DOUBLE:
            view = self.last_board
            if self.games == 1 and not self.doubled_game1 and not self.left:
                self.doubled_game1 = True
                self.events.append("double")
                await self.send("double")
            elif (
                view is not None
                and view.post_crawford
                and (view.player_score < view.opponent_score)
            ):
                self.events.append("post-Crawford double")
                await self.send("double")
            else:
                await self.send("roll")
        elif line.startswith("board:"):
            await self._board(parse_board(line))
        elif line.startswith(f"{bot} doubles."):
            self.bot_doubles += 1
            answer = "reject" if self.bot_doubles == 1 else "accept"
            self.events.append(f"bot double {answer}")
            await self.send(answer)
        elif line.startswith(f"{bot} rejects. The game continues."):
            await self.send("board")  # no board follows a rejected resignation (D104)
        elif line.startswith(f"{bot} wants to resign."):
            self.events.append("bot resigns")
            await self.send("accept")
        elif line == replies.JOIN_NEXT_GAME:
            await self.send("join")
        elif line == replies.type_join(bot) and self.left:
            await self.send(f"join {bot}")
        elif line == replies.joined_resumed(bot) or line == replies.now_playing_resumed(bot):
            self.resumed = True
            self.events.append("resumed")
            if not self.leave_on_bot_turn:
                await self.send("board")  # its own turn to move: it asks for its board
        elif _MATCH_END.match(line):
            self.done = True

    async def _board(self, view: BoardView) -> None:
        self.last_board = view
        if view.turn is not view.colour or view.player_dice == (0, 0) or not view.can_move:
            return
        if (
            self.games == 1
            and not self.left
            and not self.leave_on_bot_turn
            and self.my_moves >= self.leave_after
        ):
            # leave with its own dice out: after the resume it is its turn to move
            await self._leave_and_invite()
            return
        if self.games == 2 and self.bot_moves >= 2 and not self.resigned:
            self.resigned = True
            self.events.append("resign")
            await self.send("resign n")
            return
        position = view.position(ME)
        plays = legal_plays(position, ME, Roll(*view.player_dice))
        if not plays:
            return
        await self.send(move_command(best_play(position, ME, plays), view.colour))
        self.my_moves += 1
        if (
            self.games == 1
            and not self.left
            and self.leave_on_bot_turn
            and self.my_moves >= self.leave_after
        ):
            await self._leave_and_invite()

    async def _leave_and_invite(self) -> None:
        """``leave``, then, once the bot has read that the match was saved and answered
        what it read before (:meth:`ScriptedBot.settle`), ``invite BOT`` to resume."""
        self.left = True
        self.events.append("leave")
        since = len(self.bot_player.client.seen) if self.bot_player is not None else 0
        await self.send("leave")
        if self.bot_player is not None:
            await self.bot_player.settle(since, "The game was saved.")
        await self.send(f"invite {self.bot}")


async def play_match(
    bot: ScriptedBot, opponent: Opponent, *, invite: str, limit: float = 120.0
) -> None:
    """The bot reads from its login on; once it has its who list (CLIP 6), the opponent
    sends ``invite``; both run until the match is over. The first failure (a hang, an
    exit) ends the test with both sides' last lines."""
    tasks = [asyncio.create_task(bot.run())]
    try:
        ready = asyncio.create_task(bot.ready.wait())
        await asyncio.wait([ready, tasks[0]], timeout=READ_TIMEOUT, return_when="FIRST_COMPLETED")
        if not ready.done():
            ready.cancel()
            if tasks[0].done() and tasks[0].exception() is not None:
                raise AssertionError(str(tasks[0].exception()))
            raise AssertionError(bot.report("never logged in"))
        await opponent.send(invite)
        tasks.append(asyncio.create_task(opponent.run()))
        done, pending = await asyncio.wait(
            tasks, timeout=limit, return_when=asyncio.FIRST_EXCEPTION
        )
        for task in done:
            if (exc := task.exception()) is not None:
                side = bot.report("the match stopped") if task is tasks[1] else ""
                raise AssertionError(
                    f"{exc}\n-- {side}\n-- opponent events {opponent.events}; "
                    f"opponent last received {opponent.client.seen[-8:]!r}"
                ) from exc
        if pending:
            # one side finished; the other must follow promptly
            done2, pending2 = await asyncio.wait(pending, timeout=READ_TIMEOUT)
            for task in done2:
                if (exc := task.exception()) is not None:
                    raise AssertionError(str(exc)) from exc
            if pending2:
                raise AssertionError(
                    f"the match did not end for both within {limit:.0f} s: "
                    + bot.report("the test's time ran out")
                )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
