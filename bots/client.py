"""An asyncio CLIP client that plays on a FIBS server through a :class:`~bots.strategy.Strategy`.

:class:`FibsClient` connects, logs in (registering the account when it does not exist,
§1.7), switches to ``boardstyle 3`` and the toggles a bot needs, then reads every line as a
typed event (:mod:`bots.events`) and answers what is due: invitations, the bot's moves and
cube decisions (decided from the ``board:`` lines, :mod:`bots.decide`), resignations, the
next game, resuming saved matches. Strategy calls run as tasks, so the client keeps reading
while a bot thinks; an answer is sent only if its board is still the latest one, and one
board is never acted on twice. A dropped connection is retried with bounded, jittered
exponential backoff (:class:`bots.backoff.Backoff`). See docs/bots.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import re
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import Play, legal_plays
from backgammon.validate import validate_play
from bots import events as ev
from bots.backoff import Backoff
from bots.connection import Connection
from bots.decide import Due, beaver_allowed, due, may_double, move_command
from bots.login import LoginError, LoginRefused, bot_client_name, clip_login, register
from bots.strategy import ME, CubeAnswer, Strategy
from protocol.board_view import BoardView
from protocol.clip import OwnInfo, WhoInfo

log = logging.getLogger(__name__)

BOT_TOGGLES: Final[Mapping[str, bool]] = MappingProxyType(
    {
        "ready": True,  # accept invitations (§4.3)
        "moreboards": True,  # a board after every roll (§4.15)
        "autoboard": True,  # a board after every move
        "double": True,  # be asked "roll or double" (the cube is the bot's decision)
        "greedy": False,  # the bot bears off itself
        "notify": False,  # no CLIP 7/8 for every login; CLIP 5 updates still come (§2.3)
        "report": False,  # no match start/end reports about other players
        "bell": False,
    }
)
"""The toggles a bot sets after login, if CLIP 2 shows them otherwise."""

_SLOW_DOWN: Final = "** You are sending commands too fast"
"""A server's rate limit dropped the command (this project's server, D46)."""
_NO_SAVED_MATCH: Final = re.compile(r"\*\* There's no saved match with (?P<name>[^\s.]+)")
"""The answer to ``invite <name>`` when the match to resume is gone (§4.3)."""
_MAX_FAILURES: Final = 3
"""Refused attempts at one board before the client stops retrying it."""


@dataclass
class ClientConfig:
    """How and as whom a :class:`FibsClient` plays."""

    host: str
    port: int
    name: str
    password: str
    client_name: str = field(default_factory=bot_client_name)
    """The CLIP client field: by default the bot marker of :func:`bots.login.bot_client_name`."""
    register: bool = True
    """Create the account through ``guest`` when the login is refused (§1.7)."""
    toggles: Mapping[str, bool] = field(default_factory=lambda: dict(BOT_TOGGLES))
    timeout: float = 30.0
    """Seconds to wait for the login prompt and each login reply."""
    board_wait: float = 2.0
    """Seconds to wait for an expected board before asking for one with ``board``."""
    command_interval: float = 0.1
    """Least seconds between two commands: servers limit the command rate (this project's
    server: 20 a second, docs/protocol-decisions.md D46); GammonBot waited 1.5 s."""
    keepalive: float = 300.0
    """Seconds between ``show saved`` while idle: keeps the session alive and finds
    saved matches whose opponent came back."""
    backoff: Backoff = field(default_factory=Backoff)
    max_attempts: int | None = None
    """Consecutive failed connection attempts before :meth:`FibsClient.run` gives up
    (None: never)."""
    invite: str | None = None
    """A player to invite whenever both are free (bot-vs-bot matches)."""
    invite_length: int | None = 1
    """Match length for :attr:`invite`; None for an unlimited match."""
    max_matches: int | None = None
    """Stop after this many finished matches (None: play forever)."""
    resume: bool = True
    """Resume saved matches: ``invite`` online opponents listed by ``show saved``."""


Listener = Callable[[ev.Event], None]
_Key = tuple[Due, int]
"""A decision: what is due, on which board (:attr:`FibsClient._board_number`)."""


class FibsClient:
    """One bot account on one server. ``await run()`` until :meth:`stop`."""

    def __init__(self, config: ClientConfig, strategy: Strategy) -> None:
        self.config = config
        self.strategy = strategy
        self.listeners: list[Listener] = []
        """Called with every event read (tests, statistics)."""
        self.logged_in = asyncio.Event()
        self.matches_finished = 0
        self.playing = False
        self.opponent: str | None = None
        self.view: BoardView | None = None
        """The latest board this client received as a player."""
        self.toggles: dict[str, bool] = {}
        self.saved: dict[str, bool] = {}
        """Opponents of saved matches, with whether they are logged in."""
        self._conn: Connection | None = None
        self._stopping = asyncio.Event()
        self._session_over = asyncio.Event()
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._board_line = ""
        self._board_number = 0
        """Counts the boards that differ from the one before: a decision is keyed by the
        board's number, not its text, because the same text can come back as a new
        decision (both players on the bar, rolling and passing in turn)."""
        self._acted: collections.deque[_Key] = collections.deque(maxlen=16)
        self._failures: dict[_Key, int] = {}
        self._last_action: _Key | None = None
        self._thinking: dict[_Key, asyncio.Task[None]] = {}
        self._roll_prompt = False
        self._board_timer: asyncio.Task[None] | None = None
        self._toggle_tries: dict[str, int] = {}
        self._last_invite: dict[str, float] = {}
        self._last_sent = 0.0

    # -- lifecycle ---------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, play and reconnect until :meth:`stop`, or :attr:`ClientConfig.max_matches`.

        :raises LoginError: a permanent login failure (wrong password, refused name).
        :raises ConnectionError: after :attr:`ClientConfig.max_attempts` failed attempts.
        """
        failures = 0
        while not self._done():
            try:
                await self._connect_and_serve()
            except LoginError as exc:
                if exc.permanent:
                    log.error("%s: %s", self.config.name, exc)
                    raise
                log.warning("%s: login failed: %s", self.config.name, exc)
            except (OSError, TimeoutError, EOFError) as exc:
                if not self._done():
                    log.warning("%s: connection lost: %r", self.config.name, exc)
            finally:
                await self._cleanup()
            if self._done():
                break
            if self.logged_in.is_set():
                self.config.backoff.reset()
                failures = 0
            self.logged_in.clear()
            failures += 1
            if self.config.max_attempts is not None and failures > self.config.max_attempts:
                raise ConnectionError(f"{self.config.name}: gave up after {failures - 1} attempts")
            delay = self.config.backoff.next_delay()
            log.info("%s: reconnecting in %.1f s", self.config.name, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), delay)
        log.info("%s: stopped", self.config.name)

    async def stop(self) -> None:
        """Log out (``bye``; a running match is saved by the server) and stop :meth:`run`."""
        self._stopping.set()
        conn = self._conn
        if conn is not None and not conn.closed:
            self._session_over.clear()
            with contextlib.suppress(OSError, TimeoutError):
                await asyncio.wait_for(conn.send("bye"), 2.0)
                # let the server say goodbye and close first
                await asyncio.wait_for(self._session_over.wait(), 2.0)
            await conn.close()

    def _done(self) -> bool:
        limit = self.config.max_matches
        return self._stopping.is_set() or (limit is not None and self.matches_finished >= limit)

    async def _connect_and_serve(self) -> None:
        cfg = self.config
        conn = await self._login()
        self._conn = conn
        self.logged_in.set()
        log.info("%s: logged in to %s:%d", cfg.name, cfg.host, cfg.port)
        keepalive = asyncio.create_task(self._keepalive())
        try:
            while not self._done():
                item = await conn.read()
                if isinstance(item, str):
                    self._handle(ev.parse_event(item))
            if not self._stopping.is_set():
                await self._send("bye")  # max_matches reached: log out politely
                with contextlib.suppress(OSError, TimeoutError):
                    while True:  # until the server closes (it says goodbye first)
                        await conn.read(timeout=2.0)
        finally:
            keepalive.cancel()
            await asyncio.gather(keepalive, return_exceptions=True)

    async def _login(self) -> Connection:
        """A logged-in connection, registering the account first if needed (§1.7)."""
        cfg = self.config
        try:
            return await self._clip_login()
        except LoginRefused:
            if not cfg.register:
                raise LoginError(f"login of {cfg.name!r} refused", permanent=True) from None
        log.info("%s: login refused; registering the account", cfg.name)
        async with await Connection.open(cfg.host, cfg.port, timeout=cfg.timeout) as conn:
            await register(conn, cfg.name, cfg.password, timeout=cfg.timeout)
        try:
            return await self._clip_login()
        except LoginRefused:
            msg = f"login of {cfg.name!r} refused after registering"
            raise LoginError(msg, permanent=True) from None

    async def _clip_login(self) -> Connection:
        cfg = self.config
        conn = await Connection.open(cfg.host, cfg.port, timeout=cfg.timeout)
        try:
            result = await clip_login(
                conn, cfg.name, cfg.password, cfg.client_name, timeout=cfg.timeout
            )
        except BaseException:
            await conn.close()
            raise
        self._conn = conn
        await self._setup(result.own_info)
        return conn

    async def _setup(self, info: OwnInfo | None) -> None:
        """``set boardstyle 3``, the toggles that differ from :attr:`ClientConfig.toggles`
        (as CLIP 2 shows them), ``back`` if away, ``show saved``."""
        await self._send("set boardstyle 3")
        if info is not None:
            self.toggles = {
                name: bool(getattr(info, name))
                for name in self.config.toggles
                if isinstance(getattr(info, name, None), bool)
            }
            if info.away:
                await self._send("back")
        for name, wanted in self.config.toggles.items():
            if self.toggles.get(name) != wanted:
                self._toggle_tries[name] = 1
                await self._send(f"toggle {name}")
        if self.config.resume:
            await self._send("show saved")

    async def _cleanup(self) -> None:
        if self._board_timer is not None:
            self._board_timer.cancel()
            self._board_timer = None  # else the next session never asks for a board
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._thinking.clear()
        self._acted.clear()  # a new session: the server may have rolled back (a resume)
        self._failures.clear()
        if self._conn is not None:
            await self._conn.close()
        self._conn = None
        if self.playing and self.opponent is not None:
            self.saved.setdefault(self.opponent, False)  # the server saves it (§4.9)
        self.playing, self.opponent = False, None
        self._session_over.set()
        self.view = None
        self._board_line = ""
        self._roll_prompt = False
        self._last_action = None

    async def _keepalive(self) -> None:
        interval = self.config.keepalive
        while True:
            await asyncio.sleep(interval / 4)
            if not self.playing and time.monotonic() - self._last_sent >= interval:
                await self._send("show saved")

    # -- sending ---------------------------------------------------------------------

    async def _send(self, line: str) -> None:
        conn = self._conn
        if conn is None:
            raise ConnectionError("not connected")
        async with self._send_lock:
            wait = self._last_sent + self.config.command_interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._last_sent = time.monotonic()
            await conn.send(line)

    def _spawn(self, coro: Coroutine[Any, Any, None], what: str) -> asyncio.Task[None]:
        """Run ``coro`` as a task of this session (cancelled when the session ends)."""
        task = asyncio.create_task(coro, name=f"{self.config.name}:{what}")
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, OSError | TimeoutError):
            log.debug("%s: connection problem: %r", task.get_name(), exc)
        elif exc is not None:
            log.error("%s failed", task.get_name(), exc_info=exc)

    # -- events --------------------------------------------------------------------------

    def _handle(self, event: ev.Event) -> None:
        for listener in self.listeners:
            listener(event)
        match event:
            case ev.Board():
                self._on_board(event)
            case ev.Clip(message=WhoInfo() as info):
                self._on_who(info)
            case ev.Invitation():
                self._on_invitation(event)
            case ev.MatchStarted(opponent=opponent, resumed=resumed):
                self.playing, self.opponent = True, opponent
                self._acted.clear()
                log.info("%s: playing with %s", self.config.name, opponent)
                if resumed:
                    self._expect_board()  # FIBS does not always send one (§4.3)
            case ev.RollOrDouble():
                self._roll_prompt = True
                self._decide()
                self._expect_board()
            case ev.YourTurnToMove() | ev.PleaseMove() | ev.YouRoll() | ev.DoubleOffered():
                self._expect_board()
            case ev.NewGame(opponent=opponent):
                self._last_action = None  # errors from now on are not about old boards
                self.playing, self.opponent = True, opponent
            case ev.GameOver():
                self._last_action = None
            case ev.JoinNextGame():
                self._last_action = None
                self._spawn(self._send("join"), "join")
            case ev.ResignOffered(points=points):
                self._spawn(self._answer_resignation(points), "resignation")
            case ev.MatchOver():
                self._on_match_over(event)
            case ev.MatchSaved(opponent=opponent):
                log.info("%s: match with %s saved", self.config.name, opponent)
                self.saved[opponent] = False
                self.playing, self.opponent, self.view = False, None, None
            case ev.SavedMatch():
                self.saved[event.opponent] = event.online
                if event.online:
                    self._maybe_resume(event.opponent)
            case ev.ToggleChanged(name=name, value=value):
                self._on_toggle(name, value)
            case ev.ServerShutdown(seconds=seconds):
                log.warning("%s: server going down in %d s", self.config.name, seconds)
            case ev.Error(text=text):
                self._on_error(text)
            case _:
                pass

    def _on_board(self, event: ev.Board) -> None:
        view = event.view
        if view.player != "You":
            return  # a watched game
        if self._board_timer is not None:
            self._board_timer.cancel()
            self._board_timer = None
        if event.line != self._board_line:
            self._board_number += 1
            self._last_action = None
            if view.player_dice != (0, 0) or view.was_doubled:
                self._roll_prompt = False
        self._board_line = event.line
        self.view = view
        self.playing = True
        self._decide()

    def _on_who(self, info: WhoInfo) -> None:
        if info.name == self.config.name:
            self.playing = info.opponent is not None
            self.opponent = info.opponent
            return
        if info.name in self.saved:  # a saved match comes before a new one
            self.saved[info.name] = True
            if info.opponent is None and info.ready:
                self._maybe_resume(info.name)
        elif info.name == self.config.invite and info.ready and info.opponent is None:
            self._maybe_invite()

    def _on_invitation(self, event: ev.Invitation) -> None:
        if self.playing:
            log.info("%s: busy, ignoring the invitation of %s", self.config.name, event.name)
            return
        if event.resume:
            log.info("%s: resuming the saved match with %s", self.config.name, event.name)
            self._spawn(self._send(f"join {event.name}"), "join")
            return
        self._spawn(self._answer_invitation(event.name, event.length), "invitation")

    def _on_match_over(self, event: ev.MatchOver) -> None:
        self.matches_finished += 1
        outcome = "won" if event.winner is None else f"lost to {event.winner}"
        log.info(
            "%s: match over (%s, %d-%d), %d finished",
            self.config.name,
            outcome,
            *event.score,
            self.matches_finished,
        )
        if self.opponent is not None:
            self.saved.pop(self.opponent, None)
        self.playing, self.opponent, self.view = False, None, None
        self._board_line = ""

    def _on_toggle(self, name: str, value: bool) -> None:
        self.toggles[name] = value
        wanted = self.config.toggles.get(name)
        if wanted is None or wanted == value:
            return
        tries = self._toggle_tries.get(name, 0)
        if tries < 2:
            self._toggle_tries[name] = tries + 1
            self._spawn(self._send(f"toggle {name}"), "toggle")

    def _on_error(self, text: str) -> None:
        unsaved = _NO_SAVED_MATCH.match(text)
        if unsaved is not None:
            self.saved.pop(unsaved["name"], None)
        key = self._last_action
        if key is None or key[1] != self._board_number:
            log.info("%s: server: %s", self.config.name, text)
            return
        if text.startswith(_SLOW_DOWN):
            log.warning("%s: the server dropped a command; slowing down", self.config.name)
            self._last_action = None
            if key in self._acted:
                self._acted.remove(key)
            self._spawn(self._send_later("board", 1.0), "board")
            return
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        self._last_action = None
        if failures >= _MAX_FAILURES:
            log.error("%s: giving up on a board after %r", self.config.name, text)
            return
        log.warning(
            "%s: %s refused: %s; asking for the board again", self.config.name, key[0].value, text
        )
        if key in self._acted:
            self._acted.remove(key)
        self._spawn(self._send("board"), "board")

    async def _send_later(self, line: str, delay: float) -> None:
        await asyncio.sleep(delay)
        await self._send(line)

    # -- resuming and inviting -----------------------------------------------------------

    def _may_invite(self, name: str) -> bool:
        """Rate limit: one invitation per player every two seconds."""
        now = time.monotonic()
        if now - self._last_invite.get(name, -10.0) < 2.0:
            return False
        self._last_invite[name] = now
        return True

    def _maybe_resume(self, opponent: str) -> None:
        if not self.config.resume or self.playing or self._conn is None:
            return
        if not self._may_invite(opponent):
            return
        log.info("%s: inviting %s to resume the saved match", self.config.name, opponent)
        self._spawn(self._send(f"invite {opponent}"), "resume")

    def _maybe_invite(self) -> None:
        target = self.config.invite
        if target is None or self.playing or self._done() or self._conn is None:
            return
        if not self._may_invite(target):
            return
        length = (
            "unlimited" if self.config.invite_length is None else str(self.config.invite_length)
        )
        self._spawn(self._send(f"invite {target} {length}"), "invite")

    def invite_now(self) -> None:
        """Invite :attr:`ClientConfig.invite` at once (if free), without waiting for a CLIP 5."""
        self._last_invite.pop(self.config.invite or "", None)
        self._maybe_invite()

    # -- decisions -------------------------------------------------------------------------

    def _expect_board(self) -> None:
        """Ask for the board if the one these lines announce does not come (§6.3)."""
        if self._board_timer is not None or self._conn is None:
            return
        self._board_timer = self._spawn(self._request_board_later(), "board")

    async def _request_board_later(self) -> None:
        try:
            await asyncio.sleep(self.config.board_wait)
            self._board_timer = None
            view = self.view
            if self.playing and (view is None or due(view, roll_prompt=self._roll_prompt) is None):
                log.debug("%s: no board came; asking for it", self.config.name)
                await self._send("board")
        except (OSError, ConnectionError):
            pass

    def _decide(self) -> None:
        view = self.view
        if view is None or self._conn is None:
            return
        what = due(view, roll_prompt=self._roll_prompt)
        if what is None:
            return
        key = (what, self._board_number)
        if key in self._acted or key in self._thinking:
            return
        if self._failures.get(key, 0) >= _MAX_FAILURES:
            return
        task = self._spawn(self._act(what, view, key), what.value)
        self._thinking[key] = task
        task.add_done_callback(lambda _t: self._thinking.pop(key, None))

    async def _act(self, what: Due, view: BoardView, key: _Key) -> None:
        fallback = self._failures.get(key, 0) >= 1  # refused once: play it safe
        command: str | None
        if what is Due.ANSWER:
            command = await self._cube_answer(view)
        elif what is Due.MOVE:
            command = await self._move(view, fallback=fallback)
        else:
            command = "roll" if fallback else await self._roll_or_double(view)
        if key[1] != self._board_number:
            log.debug("%s: dropping a stale %s decision", self.config.name, what.value)
            return
        if key in self._acted:
            return
        self._acted.append(key)
        if command is None:
            return
        self._last_action = key
        if what is not Due.ANSWER:
            self._roll_prompt = False
        log.info("%s: %s", self.config.name, command)
        await self._send(command)

    async def _cube_answer(self, view: BoardView) -> str:
        try:
            answer = await self.strategy.answer_double(view)
        except Exception:
            log.exception("%s: answer_double failed; taking", self.config.name)
            answer = CubeAnswer.TAKE
        if answer is CubeAnswer.BEAVER and not beaver_allowed(view):
            answer = CubeAnswer.TAKE
        return answer.value

    async def _roll_or_double(self, view: BoardView) -> str:
        if not may_double(view):
            return "roll"
        try:
            double = await self.strategy.should_double(view)
        except Exception:
            log.exception("%s: should_double failed; rolling", self.config.name)
            double = False
        return "double" if double else "roll"

    async def _move(self, view: BoardView, *, fallback: bool) -> str | None:
        position = view.position(ME)
        roll = Roll(*view.player_dice)
        plays = legal_plays(position, ME, roll)
        if not plays:
            return None  # the server announces "You can't move." and passes the turn
        play = plays[0]
        if len(plays) > 1 and not fallback:
            try:
                chosen = await self.strategy.choose_play(position, roll, plays, view)
                play = _checked(chosen, position, roll, plays)
            except Exception:
                log.exception(
                    "%s: choose_play failed; playing the first legal play", self.config.name
                )
        return move_command(play, view.colour)

    async def _answer_invitation(self, name: str, length: int | None) -> None:
        if await self.strategy.accept_invitation(name, length) and not self.playing:
            log.info("%s: joining %s", self.config.name, name)
            await self._send(f"join {name}")

    async def _answer_resignation(self, points: int) -> None:
        try:
            accept = await self.strategy.answer_resignation(self.view, points)
        except Exception:
            log.exception("%s: answer_resignation failed; accepting", self.config.name)
            accept = True
        await self._send("accept" if accept else "reject")


def _checked(play: Play, position: Position, roll: Roll, plays: list[Play]) -> Play:
    """``play`` if it is one of ``plays``, else the legal play its moves make.

    :raises BackgammonError: if its moves are not a legal play of ``roll``.
    """
    if play in plays:
        return play
    return validate_play(position, ME, roll, play.moves)
