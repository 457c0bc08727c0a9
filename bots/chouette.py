"""A bot at a chouette table (docs/bots.md "At a chouette", docs/chouette.md).

:class:`ChouetteClient` is a :class:`~bots.client.FibsClient` that also joins the chouette
tables it is invited to and plays at them with the same :class:`~bots.strategy.Strategy`:

* as the box or the acting captain it rolls and moves for its side (its board says
  ``You``);
* as the box it decides its cube before each roll (``double``: every cube it may turn)
  and answers the team's doubles all at once (``accept`` or ``reject``);
* as a member (the captain too) it decides its own cube: ``double`` in the team's window
  before the roll, and ``accept``/``reject``/``beaver`` when the box doubles it.

What is due is read from the boards (:func:`chouette_due`): a member's board shows the
team from the captain's side with the member's own cube (D311), a pending box double as
both may-double flags 0. The strategy sees the board as a match board of a money game
(an unlimited match), so ``should_double``/``answer_double`` are the money-game cube
decisions (gnubg's, for the gnubg bot). Chouette lines are :mod:`bots.chouette_events`.
"""

from __future__ import annotations

import dataclasses
import logging

from backgammon.board import Colour
from bots import events as ev
from bots.chouette_events import (
    AutoDoubleOption,
    BoxDoubles,
    BoxDoublesYou,
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
                self.rules = self._invited.pop(self.table or "", self.rules)
                log.info("%s: at the chouette of %s", name, self.table)
            case ChouetteLeft(name=left) if left == name:
                self.table, self.seats, self.view = None, None, None
                self._now_free()
            case ChouetteSeats():
                self.seats = event
                self.seat_history.append(event)
            case ChouetteGameStarts():
                self._box_offer = self._out = False
                self._spawn(self._send("chouette show"), "show")
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
        self.show = ChouetteShow(lines[0], cubes, totals)

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
        if self.table is None:
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
        """The box's answer to every team double, or a member's to the box's double."""
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

    async def _chouette_cube(self, view: BoardView, *, fallback: bool) -> list[str]:
        """Before a roll: the box doubles or rolls; a member doubles their own cube or
        not; the acting captain then rolls unless the team's roll is automatic."""
        acting = view.player == YOU
        box = view.colour is Colour.O
        single = self.rules.settings.get("cubes") == "single"
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
