"""An asyncio CLIP client that plays on a FIBS server through a :class:`~bots.strategy.Strategy`.

:class:`FibsClient` connects, logs in (registering the account when it does not exist,
§1.7), switches to ``boardstyle 3`` and the toggles a bot needs, then reads every line as a
typed event (:mod:`bots.events`) and answers what is due: invitations (queued while the bot
plays, answered one after the other), the bot's moves and cube decisions (decided from the
``board:`` lines, :mod:`bots.decide`), every double or resignation offered to it (also one
seen only in a board or in a refusal of its own command), the next game, resuming saved
matches. Strategy calls run as tasks, so the client keeps reading while a bot thinks; an
answer is sent only if its board is still the latest one, and one board is never acted on
twice. Where FIBS sends no board (after a resume, after the opponent's ``can't move``) the
client asks for one. A dropped connection is retried with bounded, jittered exponential
backoff (:class:`bots.backoff.Backoff`). See docs/bots.md.
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
from protocol.clip import Logout, OwnInfo, WhoInfo

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

_NO_SAVED_MATCH: Final = re.compile(r"\*\* There's no saved match with (?P<name>[^\s.]+)")
"""The answer to ``invite <name>`` when the match to resume is gone (§4.3)."""
_MAX_FAILURES: Final = 3
"""Refused attempts at one board before the client stops retrying it."""
_JOIN_FAILED: Final = re.compile(
    r"\*\* (?:Error: )?(?:(?P<a>[^\s.]+) didn't invite you"
    r"|can't find player (?P<b>[^\s.]+)"
    r"|(?P<c>[^\s.]+) is already playing with someone else"
    r"|(?P<d>[^\s.]+) is refusing games"
    r"|Join who\?)"
)
"""The refusals of ``join <name>`` (§4.3): the inviter is gone, invites someone else,
plays, or turned ``ready`` off; the bot then answers the next invitation."""
_CANT_PLAY_TWO: Final = "** You can't play two games at once"
"""The refusal of ``join`` while the bot plays (§4.3): the invitation waits."""
_INVITE_INTERVAL: Final = 2.0
"""Least seconds between two invitations of the bot to one player."""
_INVITED_TOO_OFTEN: Final = re.compile(r"\*\* You invited (?P<name>[^\s.]+) too often\.")
"""The server's refusal of an invitation past ``[limits] invitations_per_minute`` (D301):
not sent, so the bot invites again after :data:`_INVITE_BACKOFF`."""
_INVITE_BACKOFF: Final = 15.0
"""Seconds before the bot invites a player again whose invitation was refused as too
frequent: a resume after each of the opponent's reconnections can reach the limit, and
without a retry the bot waited for ever (issue 27, GammonBot restarted after its exits)."""
_STALE_WHO: Final = 5.0
"""Seconds after the last match line before the bot's own CLIP 5 ``not playing`` is
believed: CLIP 5 can come late (a server coalesces them) and must not undo a newer
``You are now playing ...``."""


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
    server reads commands beyond its rate later, never drops them); GammonBot waited 1.5 s."""
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
        self._invite_retry: dict[str, asyncio.Task[None]] = {}
        """Per player: a task that invites again once :data:`_INVITE_INTERVAL` is over."""
        self._invitations: dict[str, ev.Invitation] = {}
        """Invitations not answered yet, oldest first (one per inviter, the latest)."""
        self._joining: ev.Invitation | None = None
        """The invitation being answered (strategy asked, ``join`` sent, no reply yet)."""
        self._join_settled = asyncio.Event()
        self._who: dict[str, WhoInfo] = {}
        """The latest CLIP 5 of every other user online."""
        self._last_match_line = 0.0
        self._resign_points: int | None = None
        """The points of the resignation offered to the bot in this game, if seen."""
        self._resignation_task: asyncio.Task[None] | None = None
        """The answer to a resignation being decided (one at a time)."""
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
        # The registration leaves the account logged in (in telnet mode). That
        # connection stays open until the CLIP login has replaced it, so the others
        # never see the new bot drop its connection between the two (D180).
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
        # invitations, offers and what the bot knew of others do not outlive the session
        self._invitations.clear()
        self._joining = None
        self._invite_retry.clear()
        self._who.clear()
        self._resign_points = None
        self._resignation_task = None

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
            case ev.Clip(message=Logout(name=name)):
                self._who.pop(name, None)
                if name in self.saved:
                    self.saved[name] = False
                self._drop_invitation(name, "logged out")
            case ev.Invitation():
                self._on_invitation(event)
            case ev.MatchStarted():
                self._on_match_started(event)
            case ev.RollOrDouble():
                self._roll_prompt = True
                self._decide()
                view = self.view
                if view is None:  # a resume: the board asked for is coming
                    self._expect_board(force=True)
                elif due(view, roll_prompt=True) is not Due.CUBE:
                    # the opponent could not move: FIBS sends no board (§4.5), ask for it
                    self._request_board()
                else:
                    self._expect_board()
            case ev.YourTurnToMove() | ev.PleaseMove() | ev.YouRoll():
                self._expect_board()
            case ev.DoubleOffered():
                self._on_double_offered()
            case ev.NewGame(opponent=opponent):
                self._last_action = None  # errors from now on are not about old boards
                self._resign_points = None
                self.playing, self.opponent = True, opponent
                self._last_match_line = time.monotonic()
            case ev.GameOver():
                self._last_action = None
                self._resign_points = None
            case ev.JoinNextGame():
                self._last_action = None
                self._spawn(self._send("join"), "join")
            case ev.ResignOffered(points=points):
                self._resign_points = points
                self._on_resignation(points)
            case ev.ResignPending():
                self._on_resign_pending()
            case ev.MatchOver():
                self._on_match_over(event)
            case ev.MatchSaved(opponent=opponent):
                log.info("%s: match with %s saved", self.config.name, opponent)
                self._forget_offers()
                self.saved[opponent] = False
                self.playing, self.opponent, self.view = False, None, None
                self._board_line = ""
                self._last_match_line = time.monotonic()
                self._now_free()
            case ev.SavedMatch():
                self.saved[event.opponent] = event.online
                if event.online:
                    self._try_invite(event.opponent)
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
        if _match_over(view):
            return  # a late answer to ``board``: nothing to do, and no longer playing
        if self._board_timer is not None:
            self._board_timer.cancel()
            self._board_timer = None
        if event.line != self._board_line:
            self._board_number += 1
            self._last_action = None
            if view.player_dice != (0, 0) or view.was_doubled or view.turn is not view.colour:
                self._roll_prompt = False
        self._board_line = event.line
        self.view = view
        self.playing = True
        self._last_match_line = time.monotonic()
        self._decide()

    def _on_who(self, info: WhoInfo) -> None:
        if info.name == self.config.name:
            # Only a late-enough "not playing" counts: the match texts are in order,
            # a coalesced CLIP 5 may not be (see _STALE_WHO).
            quiet = time.monotonic() - self._last_match_line >= _STALE_WHO
            if info.opponent is None and self.playing and quiet:
                log.info("%s: the server says the bot is not playing", self.config.name)
                self.playing, self.opponent, self.view = False, None, None
                self._board_line = ""
                self._now_free()
            return
        # An inviter who plays is not dropped here: CLIP 5 may come late, and a join
        # that comes too late is refused politely (_join_refused).
        self._who[info.name] = info
        if info.name in self.saved:  # a saved match comes before a new one
            self.saved[info.name] = True
        if info.opponent is None and info.ready:
            self._try_invite(info.name)

    def _on_match_started(self, event: ev.MatchStarted) -> None:
        self.playing, self.opponent = True, event.opponent
        self._acted.clear()
        self._forget_offers()
        self._last_match_line = time.monotonic()
        self._invitations.pop(event.opponent, None)
        self._settle_join()
        log.info("%s: playing with %s", self.config.name, event.opponent)
        if event.resumed:
            # FIBS sends no board after the resume synopsis (§4.3): ask for it at once.
            # A pushed copy (another server) has the same text: it is acted on once.
            # Nor a new "roll or double": if the board shows the bot on roll without
            # dice, the bot rolls (or doubles) itself.
            self.view, self._board_line = None, ""
            self._roll_prompt = True
            self._request_board()

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
        self._forget_offers()
        self.playing, self.opponent, self.view = False, None, None
        self._board_line = ""
        self._last_match_line = time.monotonic()
        if self._board_timer is not None:
            self._board_timer.cancel()
            self._board_timer = None
        self._now_free()

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
        too_often = _INVITED_TOO_OFTEN.match(text)
        if too_often is not None:
            name = too_often["name"]
            log.info("%s: server: %s", self.config.name, text)
            self._last_invite[name] = time.monotonic() + _INVITE_BACKOFF - _INVITE_INTERVAL
            self._try_invite(name)
            return
        unsaved = _NO_SAVED_MATCH.match(text)
        if unsaved is not None:
            self.saved.pop(unsaved["name"], None)
        if self._joining is not None and self._join_refused(text):
            return
        key = self._last_action
        if key is None or key[1] != self._board_number:
            log.info("%s: server: %s", self.config.name, text)
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

    def _forget_last_action(self) -> None:
        """The last command was refused because an offer waits for the bot: not a failure
        of the decision, which is taken again once the offer is answered."""
        key = self._last_action
        self._last_action = None
        if key is not None and key in self._acted:
            self._acted.remove(key)

    # -- offers to the bot ---------------------------------------------------------------

    def _on_double_offered(self) -> None:
        """``X doubles. Type 'accept' or 'reject'.``: announced (a board with "was doubled"
        follows), re-announced after a resume, or the refusal of the bot's own command
        while the double waits. The answer is decided from the board (field 40)."""
        refused = self._last_action is not None and self._last_action[1] == self._board_number
        self._forget_last_action()
        view = self.view
        if view is not None and view.was_doubled:
            self._decide()  # the board already shows it (answered once per board)
        elif refused:
            self._request_board()  # the board the bot holds is stale: ask now
        else:  # the announced board, or the one asked for after a resume, is coming
            self._expect_board(force=True)

    def _on_resignation(self, points: int | None) -> None:
        task = self._resignation_task
        if task is not None and not task.done():
            return
        self._resignation_task = self._spawn(self._answer_resignation(points), "resignation")

    def _forget_offers(self) -> None:
        """A match started, stopped or was saved: an answer still being decided is about
        an offer of the old table (after a resume the offer is seen and answered anew)."""
        self._resign_points = None
        task, self._resignation_task = self._resignation_task, None
        if task is not None:
            task.cancel()

    def _on_resign_pending(self) -> None:
        """``** X wanted to resign. Type 'accept' or 'reject'.``: the bot's command was
        refused for a resignation it may never have seen (offered before a save). The
        points are not said: the bot answers as for the least offer possible (a normal
        resignation at the current cube; a strategy that accepts that accepts more)."""
        self._forget_last_action()
        self._on_resignation(self._resign_points)

    async def _answer_resignation(self, points: int | None) -> None:
        """Ask the strategy (with the board: right after a resume it is waited for) and
        send its answer. ``points`` None: not said, the least offer (see
        :meth:`_on_resign_pending`)."""
        if self.view is None and self.playing:
            self._expect_board(force=True)
            deadline = time.monotonic() + 2 * self.config.board_wait
            while self.view is None and self.playing and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        if points is None:
            points = self.view.cube if self.view is not None else 1
        try:
            accept = await self.strategy.answer_resignation(self.view, points)
        except Exception:
            log.exception("%s: answer_resignation failed; accepting", self.config.name)
            accept = True
        self._resignation_task = None  # sent from here on: a new offer is a new answer
        await self._send("accept" if accept else "reject")
        if not accept:
            self._resign_points = None
            # FIBS sends no board after a rejected resignation (§4.7): the decision the
            # offer held up is taken on the board the bot has.
            self._decide()

    # -- invitations to the bot ----------------------------------------------------------

    def _on_invitation(self, event: ev.Invitation) -> None:
        """Queue it (one per inviter, the latest); it is answered when the bot is free."""
        if event.name in self._invitations:
            log.info("%s: %s invites again", self.config.name, event.name)
        self._invitations[event.name] = event
        if self.playing or self._joining is not None:
            log.info("%s: busy; the invitation of %s waits", self.config.name, event.name)
        self._serve_invitations()

    def _drop_invitation(self, name: str, why: str) -> None:
        if self._invitations.pop(name, None) is not None:
            log.info("%s: dropping the invitation of %s (%s)", self.config.name, name, why)

    def _serve_invitations(self) -> None:
        """Answer the oldest waiting invitation, if the bot is free and answers none."""
        if self.playing or self._joining is not None or self._conn is None or self._done():
            return
        if not self._invitations:
            return
        name = next(iter(self._invitations))
        invitation = self._invitations.pop(name)
        self._joining = invitation
        self._join_settled = asyncio.Event()
        self._spawn(self._answer_invitation(invitation), "invitation")

    async def _answer_invitation(self, invitation: ev.Invitation) -> None:
        name = invitation.name
        settled = self._join_settled
        done = False
        try:
            accept = True
            if not invitation.resume:
                try:
                    accept = await self.strategy.accept_invitation(name, invitation.length)
                except Exception:
                    log.exception("%s: accept_invitation failed; declining", self.config.name)
                    accept = False
            if accept and self.playing:  # a match started meanwhile: answer it later
                self._invitations = {name: invitation, **self._invitations}
            elif accept and self._joining is invitation:
                what = "resuming the saved match with" if invitation.resume else "joining"
                log.info("%s: %s %s", self.config.name, what, name)
                await self._send(f"join {name}")
                # the reply: the match starts, or a refusal (_join_refused)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(settled.wait(), self.config.timeout)
            done = True
        finally:
            if self._joining is invitation:
                self._joining = None
                if done:  # not while the session ends (the task is cancelled then)
                    self._now_free()

    def _settle_join(self) -> None:
        self._joining = None
        self._join_settled.set()

    def _join_refused(self, text: str) -> bool:
        """Whether ``text`` refuses the pending ``join``; if so, on to the next one."""
        invitation = self._joining
        assert invitation is not None
        if text.startswith(_CANT_PLAY_TWO):
            # the server says the bot plays: the invitation waits for the end of that match
            log.info("%s: join refused, the bot plays", self.config.name)
            self._invitations = {invitation.name: invitation, **self._invitations}
            self.playing = True
            self._last_match_line = time.monotonic()
        else:
            refused = _JOIN_FAILED.match(text)
            if refused is None:
                return False
            named = refused["a"] or refused["b"] or refused["c"] or refused["d"]
            if named is not None and named != invitation.name:
                return False
            log.info("%s: the invitation of %s is gone: %s", self.config.name, named, text)
        self._settle_join()
        self._now_free()
        return True

    # -- resuming and inviting -----------------------------------------------------------

    def _now_free(self) -> None:
        """The bot plays no more: answer a waiting invitation, else resume a saved match or
        invite :attr:`ClientConfig.invite` if they are known to be free."""
        if self.playing or self._conn is None:
            return
        self._serve_invitations()
        if self._joining is not None:
            return
        for name, online in list(self.saved.items()):
            if online:
                self._try_invite(name)
        if self.config.invite is not None:
            self._try_invite(self.config.invite)

    def _invite_command(self, name: str, *, unseen: bool = False) -> str | None:
        """The ``invite`` the bot sends ``name`` now, or None if there is no reason to.
        ``unseen``: invite :attr:`ClientConfig.invite` even without a CLIP 5 of them."""
        if self.playing or self._joining is not None or self._invitations:
            return None
        if self._conn is None or self._done():
            return None
        info = self._who.get(name)
        if info is not None and (info.opponent is not None or not info.ready):
            return None
        if self.config.resume and self.saved.get(name):
            return f"invite {name}"  # resume the saved match (§4.3)
        if name == self.config.invite and (info is not None or unseen):
            length = self.config.invite_length
            return f"invite {name} {'unlimited' if length is None else length}"
        return None

    def _try_invite(self, name: str, *, unseen: bool = False) -> None:
        """Invite ``name`` if there is a reason to; at most one invitation per player every
        :data:`_INVITE_INTERVAL` seconds, and one held back by that is tried again when
        the interval is over (the reason is checked again then)."""
        command = self._invite_command(name, unseen=unseen)
        if command is None:
            return
        wait = self._last_invite.get(name, -_INVITE_INTERVAL) + _INVITE_INTERVAL - time.monotonic()
        if wait > 0:
            if name not in self._invite_retry:
                self._invite_retry[name] = self._spawn(self._invite_later(name, wait), "invite")
            return
        self._last_invite[name] = time.monotonic()
        log.info("%s: %s", self.config.name, command)
        self._spawn(self._send(command), "invite")

    async def _invite_later(self, name: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            self._invite_retry.pop(name, None)
        self._try_invite(name)

    async def invite(self, name: str, length: int | None) -> None:
        """Invite ``name`` to a ``length``-point match (None: unlimited) once, now.

        :raises ConnectionError: if the bot is not connected.
        """
        self._last_invite[name] = time.monotonic()
        await self._send(f"invite {name} {'unlimited' if length is None else length}")

    def invite_now(self) -> None:
        """Invite :attr:`ClientConfig.invite` at once (if free), without waiting for a CLIP 5."""
        target = self.config.invite
        if target is not None:
            self._last_invite.pop(target, None)
            self._try_invite(target, unseen=True)

    # -- decisions -------------------------------------------------------------------------

    def _expect_board(self, *, force: bool = False) -> None:
        """Ask for the board if the one these lines announce does not come (§6.3): any
        board cancels the wait. Without ``force`` it is asked for only if the bot's
        latest board leaves it nothing to do."""
        if self._conn is None:
            return
        if self._board_timer is not None:
            if not force:
                return
            self._board_timer.cancel()  # a forced wait replaces a conditional one
        self._board_timer = self._spawn(self._request_board_later(force), "board")

    def _request_board(self) -> None:
        """Ask for the board now (FIBS sends none there). A second copy of a board is
        acted on once: decisions are keyed by the board, not by its arrival."""
        if self._conn is None:
            return
        if self._board_timer is not None:
            self._board_timer.cancel()
            self._board_timer = None
        log.debug("%s: asking for the board", self.config.name)
        self._spawn(self._send("board"), "board")

    async def _request_board_later(self, force: bool) -> None:
        try:
            await asyncio.sleep(self.config.board_wait)
            self._board_timer = None
            view = self.view
            idle = view is None or due(view, roll_prompt=self._roll_prompt) is None
            if self.playing and (force or idle):
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


def _match_over(view: BoardView) -> bool:
    """The board of a finished match (a player has the match length, §3.4)."""
    length = view.match_length
    return length is not None and max(view.player_score, view.opponent_score) >= length


def _checked(play: Play, position: Position, roll: Roll, plays: list[Play]) -> Play:
    """``play`` if it is one of ``plays``, else the legal play its moves make.

    :raises BackgammonError: if its moves are not a legal play of ``roll``.
    """
    if play in plays:
        return play
    return validate_play(position, ME, roll, play.moves)
