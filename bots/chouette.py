"""A bot at a chouette table (docs/bots.md "At a chouette", docs/chouette.md).

:class:`ChouetteClient` is a :class:`~bots.client.FibsClient` that also joins the chouette
tables it is invited to and plays at them with the same :class:`~bots.strategy.Strategy`:

* as the box or the acting captain it rolls and moves for its side (its board says
  ``You``);
* as the box it decides each member's cube on its own, from that cube's value and owner
  in a fresh ``show chouette`` (:func:`box_doubles`, :func:`box_accepts`): before each
  roll ``double <names>`` for the cubes the strategy would double, and to the team's
  doubles ``accept <names>`` for those it takes (``reject`` when none);
* as a member (the captain too) it decides its own cube: ``double`` in the team's window
  before the roll, and ``accept``/``reject``/``beaver`` when the box doubles it.

What is due is read from the boards (:func:`chouette_due`): a member's board shows the
team from the captain's side with the member's own cube (D311), a pending box double as
both may-double flags 0. The strategy sees the board as a match board of a money game
(an unlimited match), so ``should_double``/``answer_double`` are the money-game cube
decisions (gnubg's, for the gnubg bot), with the table's Jacoby rule
(:attr:`~bots.strategy.Strategy.jacoby`, from its rules line). A bot that logs in again
is seated by the server (D410) and learns its table again from the rules line and the
``show chouette`` that follow. Chouette lines are :mod:`bots.chouette_events`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterable, Mapping

from backgammon.board import Colour
from bots import events as ev
from bots.chouette_events import (
    AutoDoubleOption,
    BoxAnswers,
    BoxDoubles,
    BoxDoublesYou,
    ChouetteBack,
    ChouetteCube,
    ChouetteEnd,
    ChouetteEvent,
    ChouetteGameOver,
    ChouetteGameStarts,
    ChouetteInvited,
    ChouetteJoined,
    ChouetteJoinHint,
    ChouetteLeft,
    ChouetteResignOffered,
    ChouetteRules,
    ChouetteSeats,
    ChouetteShow,
    ChouetteTable,
    ChouetteTotal,
    CubeAnswered,
    PartnerOffered,
    parse_chouette,
)
from bots.client import ClientConfig, FibsClient, _Key
from bots.decide import Due, beaver_allowed
from bots.strategy import CubeAnswer, Strategy
from protocol.board_view import NO_DICE, YOU, BoardView

log = logging.getLogger(__name__)


def chouette_due(view: BoardView, *, box_offer: bool) -> Due | None:
    """What the bot must do on its chouette board ``view``, if anything.

    ``box_offer``: the box has doubled in this turn (a ``The box doubles`` line came
    since the last board with the box on turn), so a team board without dice is the
    members' answer, not the team's doubling window.
    """
    if view.turn is None:
        return None
    acting = view.player == YOU
    if view.colour is Colour.O:  # the box's side: the box acts, its partner never
        if not acting:
            return None
        if view.was_doubled:
            return Due.ANSWER
        if view.turn is not Colour.O or view.opponent_dice != NO_DICE:
            return None
        return Due.MOVE if view.player_dice != NO_DICE else Due.CUBE
    if view.turn is not Colour.X or view.opponent_dice != NO_DICE:
        return None
    if view.player_dice != NO_DICE:
        return Due.MOVE if acting else None
    pending = not view.player_may_double and not view.opponent_may_double
    if box_offer:
        return Due.ANSWER if pending else None
    return Due.CUBE if (acting or view.player_may_double) else None


SHOW_TIMEOUT = 10.0
"""Seconds the bot waits for the ``show chouette`` it asked before a box decision (the
box's answer time is 30 s by default)."""


def cube_view(view: BoardView, cube: ChouetteCube, *, doubled: bool = False) -> BoardView:
    """The box's board ``view`` with ``cube`` in its cube fields: its value, and the
    may-double flags its owner gives (the box's first); ``doubled``: the member doubled it."""
    return dataclasses.replace(
        view,
        cube=cube.value,
        player_may_double=cube.owner != "member",
        opponent_may_double=cube.owner != "box",
        was_doubled=doubled,
    )


async def box_doubles(
    strategy: Strategy, view: BoardView, cubes: Iterable[ChouetteCube]
) -> list[str]:
    """The members whose cubes the box doubles, each cube decided on its own: every cube
    in the game that the box may turn (centred or its own), on the box's board ``view``
    with that cube's value and owner. The position is the same for all; the cubes are
    not (a centred cube under the Jacoby rule is doubled where an owned one is too good)."""
    chosen = []
    for cube in cubes:
        may_turn = cube.result is None and cube.owner != "member"
        if may_turn and await strategy.should_double(cube_view(view, cube)):
            chosen.append(cube.member)
    return chosen


async def box_accepts(
    strategy: Strategy,
    view: BoardView,
    cubes: Mapping[str, ChouetteCube],
    doublers: Iterable[str],
) -> list[str]:
    """The team doubles the box takes, each decided on the doubled cube's own value and
    owner (the board ``view`` otherwise; a beaver is a take: the box answers accept or
    reject only)."""
    accepted = []
    for member in doublers:
        cube = cubes.get(member)
        if cube is None:
            asked = dataclasses.replace(view, was_doubled=True)
        else:
            asked = cube_view(view, cube, doubled=True)
        if await strategy.answer_double(asked) is not CubeAnswer.DROP:
            accepted.append(member)
    return accepted


class ChouetteClient(FibsClient):
    """A bot that plays matches as :class:`FibsClient` does and sits at chouette tables."""

    def __init__(
        self, config: ClientConfig, strategy: Strategy, *, accept_chouettes: bool = True
    ) -> None:
        super().__init__(config, strategy)
        self.accept_chouettes = accept_chouettes
        """Join every chouette table the bot is invited to while it is free."""
        self.table: str | None = None
        """The host of the chouette table the bot sits at."""
        self.rules = ChouetteRules({})
        """The settings of the table (from its invitation)."""
        self.seats: ChouetteSeats | None = None
        """The latest seats (after the draw and after every rotation)."""
        self.seat_history: list[ChouetteSeats] = []
        """Every seats line seen: the first draw, then the seats after each game."""
        self.games_over: list[ChouetteGameOver] = []
        """Every game over seen at the table, in order."""
        self.show: ChouetteShow | None = None
        """The latest whole ``show chouette`` (asked for at the start of each game)."""
        self._invited: dict[str, ChouetteRules] = {}
        self._pending_rules = ChouetteRules({})
        self._box_offer = False
        self._show_lines: list[ChouetteEvent] = []
        self._joining_table: str | None = None
        """The host whose table the bot asked to join (no answer yet)."""
        self._out = False
        """The bot's own cube is out of the current game (it dropped a double)."""
        self._doublers: tuple[str, ...] = ()
        """The members whose doubles the box answers now (``The box answers ...``)."""
        self._show_waiters: list[asyncio.Future[ChouetteShow]] = []
        self._returning = False
        """Seated again at a login (D410): the table is known from the ``show chouette``
        that follows; the boards before it wait for it."""

    # -- lines ----------------------------------------------------------------------------

    def _handle(self, event: ev.Event) -> None:
        text = event.text if isinstance(event, ev.Text | ev.Error) else None
        chouette = parse_chouette(text) if text is not None else None
        if chouette is None:
            super()._handle(event)
            return
        for listener in self.listeners:
            listener(event)
        self._on_chouette(chouette)

    def _on_chouette(self, event: ChouetteEvent) -> None:
        name = self.config.name
        match event:
            case ChouetteInvited():
                self._pending_rules = ChouetteRules({})
            case ChouetteRules():
                self._pending_rules = event
            case ChouetteJoinHint(host=host):
                self._invited[host] = self._pending_rules
                self._join_chouette()
            case ChouetteJoined(name=joined) if joined == name:
                self.table, self._joining_table = self._joining_table, None
                self._use_rules(self._invited.pop(self.table or "", self.rules))
                log.info("%s: at the chouette of %s", name, self.table)
            case ChouetteLeft(name=left) if left == name:
                self.table, self.seats, self.view = None, None, None
                self.strategy.jacoby = False  # matches have no Jacoby rule
                self._now_free()
            case ChouetteBack(name=back) if back == name and self.table is None:
                self._returning = True
            case ChouetteSeats():
                self.seats = event
                self.seat_history.append(event)
            case ChouetteGameStarts():
                self._box_offer = self._out = False
                self._doublers = ()
                self._spawn(self._send("chouette show"), "show")
            case BoxAnswers(members=members):
                self._doublers = members
            case BoxDoubles():
                self._box_offer = True
            case BoxDoublesYou():
                self._box_offer = True
                self._decide()
            case CubeAnswered(member=member, value=None) if member == name:
                self._out = True  # dropped: the bot's cube is out of this game
            case ChouetteGameOver():
                self.games_over.append(event)
                self._box_offer = False
            case ChouetteResignOffered(to=to, points=points) if to == name:
                self._on_resignation(points)
            case PartnerOffered(name=candidate) if candidate == name:
                self._spawn(self._send("reject"), "partner")  # the bot stays in the line
            case AutoDoubleOption():
                self._spawn(self._send("reject"), "auto double")
            case ChouetteTable():
                self._show_lines = [event]
            case ChouetteCube() | ChouetteTotal():
                self._show_lines.append(event)
            case ChouetteEnd():
                self._finish_show()
            case _:
                pass

    def _finish_show(self) -> None:
        lines, self._show_lines = self._show_lines, []
        if not lines or not isinstance(lines[0], ChouetteTable):
            return
        cubes = {c.member: c for c in lines if isinstance(c, ChouetteCube)}
        totals = {t.name: t for t in lines if isinstance(t, ChouetteTotal)}
        self.show = show = ChouetteShow(lines[0], cubes, totals)
        mine = totals.get(self.config.name)
        if self.table is None and mine is not None and mine.seat != "gone":
            # Seated again by the server at a login (D410): the rules line came first.
            self.table, self._returning = show.table.host, False
            self._use_rules(self._pending_rules)
            log.info("%s: back at the chouette of %s", self.config.name, self.table)
            self._decide()  # on the board that came before
        waiters, self._show_waiters = self._show_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(show)

    def _use_rules(self, rules: ChouetteRules) -> None:
        """The table's settings, and its Jacoby rule for the strategy's cube decisions."""
        self.rules = rules
        self.strategy.jacoby = rules.on("jacoby", True)

    async def _fresh_show(self) -> ChouetteShow | None:
        """A ``show chouette`` asked now (every cube as it is), or the latest one seen
        when none comes in :data:`SHOW_TIMEOUT` seconds."""
        waiter: asyncio.Future[ChouetteShow] = asyncio.get_running_loop().create_future()
        self._show_waiters.append(waiter)
        await self._send("chouette show")
        try:
            return await asyncio.wait_for(waiter, SHOW_TIMEOUT)
        except TimeoutError:
            log.warning("%s: no show chouette came; the cubes as last seen", self.config.name)
            return self.show

    async def _cleanup(self) -> None:
        """The session is over: the table is forgotten with it. The server seats the bot
        again as it logs in (D410) and says the table again (the rules line, ``show
        chouette``), as to a bot process started anew."""
        await super()._cleanup()
        self.table, self.seats, self._joining_table = None, None, None
        self._invited.clear()
        self._box_offer = self._out = self._returning = False
        self._doublers = ()
        for waiter in self._show_waiters:
            waiter.cancel()
        self._show_waiters.clear()
        self.strategy.jacoby = False

    # -- joining --------------------------------------------------------------------------

    def _join_chouette(self) -> None:
        """Join the oldest chouette invitation if the bot is free and wants to."""
        if not self.accept_chouettes or self.table is not None or self.playing:
            return
        if self._joining_table is not None or not self._invited:
            return
        host = next(iter(self._invited))
        self._joining_table = host
        log.info("%s: chouette join %s", self.config.name, host)
        self._spawn(self._send(f"chouette join {host}"), "chouette join")

    def _serve_invitations(self) -> None:
        if self.table is None:  # at a chouette table the bot plays no match
            super()._serve_invitations()

    def _on_error(self, text: str) -> None:
        joining = self._joining_table
        if joining is not None and self.table is None and "chouette" in text:
            log.info("%s: chouette join refused: %s", self.config.name, text)
            self._invited.pop(joining, None)
            self._joining_table = None
            self._join_chouette()
            return
        super()._on_error(text)

    # -- boards and decisions ----------------------------------------------------------------

    def _on_board(self, event: ev.Board) -> None:
        if self.table is None and not self._returning:
            super()._on_board(event)
            return
        view = event.view
        if view.turn is Colour.O:
            self._box_offer = False
        if event.line != self._board_line:
            self._board_number += 1
            self._last_action = None
        self._board_line = event.line
        self.view = view
        self._decide()

    def _decide(self) -> None:
        if self.table is None:
            if not self._returning:
                super()._decide()
            return
        view = self.view
        if view is None or self._conn is None:
            return
        what = chouette_due(view, box_offer=self._box_offer)
        if what is None or (what is Due.CUBE and self._out and view.player != YOU):
            return
        key = (what, self._board_number)
        if key in self._acted or key in self._thinking or self._failures.get(key, 0) >= 3:
            return
        task = self._spawn(self._chouette_act(what, view, key), f"chouette {what.value}")
        self._thinking[key] = task
        task.add_done_callback(lambda _t: self._thinking.pop(key, None))

    async def _chouette_act(self, what: Due, view: BoardView, key: _Key) -> None:
        fallback = self._failures.get(key, 0) >= 1
        commands: list[str] = []
        if what is Due.MOVE:
            move = await self._move(view, fallback=fallback)
            commands = [move] if move is not None else []
        elif what is Due.ANSWER:
            commands = [await self._chouette_answer(view)]
        else:
            commands = await self._chouette_cube(view, fallback=fallback)
        if key[1] != self._board_number or key in self._acted:
            return
        self._acted.append(key)
        for command in commands:
            self._last_action = key
            log.info("%s: %s", self.config.name, command)
            await self._send(command)

    async def _chouette_answer(self, view: BoardView) -> str:
        """The box's answer to the team's doubles, or a member's to the box's double."""
        if view.colour is Colour.O and self._doublers and not self._single():
            doublers, self._doublers = self._doublers, ()  # a retry answers all alike
            return await self._box_answer(view, doublers)
        if view.colour is Colour.X:  # the member's board shows the offer as 0/0 flags
            view = dataclasses.replace(view, was_doubled=True)
        try:
            answer = await self.strategy.answer_double(view)
        except Exception:
            log.exception("%s: answer_double failed; taking", self.config.name)
            answer = CubeAnswer.TAKE
        beaver = view.colour is Colour.X and beaver_allowed(view)  # redoubles: beavers on
        if answer is CubeAnswer.BEAVER and not beaver:
            answer = CubeAnswer.TAKE  # the box answers accept or reject only
        return answer.value

    async def _box_answer(self, view: BoardView, doublers: tuple[str, ...]) -> str:
        """``accept <names>`` for the team doubles the box takes, cube by cube, or
        ``reject`` (all) when it takes none."""
        show = await self._fresh_show()
        cubes = show.cubes if show is not None else {}
        try:
            accepted = await box_accepts(self.strategy, view, cubes, doublers)
        except Exception:
            log.exception("%s: answer_double failed; accepting", self.config.name)
            accepted = list(doublers)
        return f"accept {' '.join(accepted)}" if accepted else "reject"

    async def _box_cube(self, view: BoardView) -> list[str]:
        """The box's turn before its roll: ``double <names>`` for the cubes it doubles,
        each decided on its own, or ``roll``."""
        show = await self._fresh_show()
        chosen: list[str] = []
        if show is not None:
            try:
                chosen = await box_doubles(self.strategy, view, show.cubes.values())
            except Exception:
                log.exception("%s: should_double failed; no double", self.config.name)
        return [f"double {' '.join(chosen)}"] if chosen else ["roll"]

    def _single(self) -> bool:
        return self.rules.settings.get("cubes") == "single"

    async def _chouette_cube(self, view: BoardView, *, fallback: bool) -> list[str]:
        """Before a roll: the box doubles some cubes or rolls; a member doubles their own
        cube or not; the acting captain then rolls unless the team's roll is automatic."""
        acting = view.player == YOU
        box = view.colour is Colour.O
        single = self._single()
        if box and not single and not fallback:
            return await self._box_cube(view)
        may = view.player_may_double and not fallback and (box or acting or not single)
        double = False
        if may:
            try:
                double = await self.strategy.should_double(view)
            except Exception:
                log.exception("%s: should_double failed; no double", self.config.name)
        commands = ["double"] if double else []
        if box:
            return commands or ["roll"]
        if acting and not self.rules.on("team_autoroll", True):
            commands.append("roll")
        return commands
