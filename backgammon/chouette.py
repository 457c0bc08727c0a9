"""The chouette state machine: one table, its seats and standings, one game at a time.

A chouette is backgammon for two to ten players on one board: the box plays alone
against a team led by the captain, who rolls and plays the team's checkers; each team
member has a cube of their own against the box (or the team shares a single cube), and
settles it with the box alone. The rules are ``shared/docs/chouette-rules.md`` (cited
as §n); the choices made where it leaves room are in docs/chouette.md.

:class:`Chouette` follows :class:`backgammon.match.Match`: every action checks that it is
allowed, raises :class:`~backgammon.errors.ActionError` (with a
:class:`~backgammon.errors.Refusal`) or :class:`~backgammon.errors.IllegalMoveError`
without changing anything, or changes the state and returns the
:mod:`backgammon.chouette_events` that describe what happened. Checker play is the
match's own: the board is a :class:`~backgammon.board.Position` with the box as side 0
and the team as side 1, plays are checked by :func:`~backgammon.validate.validate_play`
against :func:`~backgammon.moves.legal_results`. The core has no clock: the server's
timers close the doubling window by rolling for the captain, and end a cube decision
with :meth:`Chouette.time_out`. A table as JSON, and back, is
:mod:`backgammon.chouette_snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from backgammon.board import CHECKERS, Player, Position
from backgammon.chouette_events import (
    ActingCaptain,
    AutoDoubleDeclined,
    BoxDoubled,
    ChouetteEvent,
    ChouetteGameFinished,
    ChouetteGameStarted,
    CubeSettled,
    DoubleBeavered,
    DoubleDropped,
    DoubleRaccooned,
    DoublesClosed,
    DoubleTaken,
    PartnerAnswered,
    PartnerOffered,
    PartnerShare,
    PlayerJoined,
    PlayerLeft,
    PresenceChanged,
    ProxyChanged,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    ResignWithdrawn,
    SeatsChanged,
    SettleEnd,
    TeamDoubled,
    TimedOut,
)
from backgammon.chouette_seats import Seats, draw_order
from backgammon.chouette_settings import (
    AutoDoubles,
    BoxPartner,
    Leaving,
    LoneTaker,
    Rotation,
)
from backgammon.chouette_state import (
    BOX,
    MAX_PLAYERS,
    TEAM,
    Answer,
    BoxOffer,
    ChouettePhase,
    ChouetteResignation,
    ChouetteState,
    Cube,
    CubeOwner,
    raise_refused,
)
from backgammon.dice import Roll, roll
from backgammon.errors import ActionError, Refusal
from backgammon.events import (
    AutoDoubled,
    CheckersMoved,
    DiceRolled,
    OpeningRoll,
    TurnPassed,
    WinKind,
)
from backgammon.match import win_kind
from backgammon.moves import Move, apply_moves
from backgammon.validate import validate_play

_PARTNER_FROM: dict[BoxPartner, int | None] = {
    BoxPartner.OFF: None,
    BoxPartner.OPTIONAL_AT_6: 6,
    BoxPartner.MANDATORY_AT_7: 7,
}
"""§7: the number of players from which the box has a partner, by setting."""


class Chouette(ChouetteState):
    """One chouette table and its actions.

    Create it, :meth:`join` players, then :meth:`start_game` (the first one draws the
    seats). Between games players join and leave freely; in a game the table says who
    must act (:meth:`waiting_for`) and what each player may do (:meth:`allowed`).
    """

    # -- the table -------------------------------------------------------------------

    def join(self, name: str) -> list[ChouetteEvent]:
        """``name`` sits down: at the bottom of the line between games, after the game
        during one, at the first draw before it (§1)."""
        if name in self.players:
            raise ActionError(f"{name} is already at the table", Refusal.ALREADY_SEATED)
        if len(self.players) >= MAX_PLAYERS:
            raise ActionError("the table is full", Refusal.TABLE_FULL)
        self.totals.setdefault(name, 0)
        events: list[ChouetteEvent] = []
        if self.seats is None or self.phase is not ChouettePhase.WAITING:
            self.waiting.append(name)
            events.append(PlayerJoined(name, False))
        else:
            events.append(PlayerJoined(name, True))
            self._set_seats(self.seats.joined(name), events)
            self._seat_partner(events)
        return self._recorded(events)

    def leave(self, name: str) -> list[ChouetteEvent]:
        """``name`` leaves the table (§8). Between games that is free (the box leaving
        rotates the seats as if it lost); mid-game a member's cube is resigned at its
        value or follows the captain to the end (:attr:`ChouetteSettings.leaving`), and
        the box resigns every cube still in the game at its value, which ends it."""
        if name in self.waiting:
            self.waiting.remove(name)
            self.absent.discard(name)
            return self._recorded([PlayerLeft(name, False)])
        if not self.at_table(name):
            raise ActionError(f"{name} is not at the table", Refusal.NOT_SEATED)
        seats = self._seats()
        mid_game = self.phase is not ChouettePhase.WAITING
        events: list[ChouetteEvent] = [PlayerLeft(name, mid_game)]
        self.absent.discard(name)
        if not mid_game:
            if name == seats.box:
                seats = seats.rotated(box_stays=False)
            self._set_seats(seats.without({name}), events)
            self._seat_partner(events)
            return self._recorded(events)
        self.leaving.add(name)
        self._lapse_proxies(events)
        self._withdraw_resignation(name, events)
        if name == seats.box:
            for member in self.members_in_game():
                self._settle(
                    member, self.cubes[member].value, WinKind.SINGLE, SettleEnd.LEFT, events
                )
            self._finish_game(events, box_left=True)
            return self._recorded(events)
        if name in self.team_doubles:
            self.team_doubles.remove(name)
        if self.settings.leaving is Leaving.RESIGN and self.in_game(name):
            points = -self.cubes[name].value
            self._settle(name, points, WinKind.SINGLE, SettleEnd.LEFT, events)
        self._continue(events)
        return self._recorded(events)

    def set_present(self, name: str, present: bool) -> list[ChouetteEvent]:
        """``name`` disconnected (False) or came back (True). An absent member follows
        the captain on box doubles and doubles nothing; an absent captain's checkers are
        played by the next member still in (§8). A pending resignation involving an
        absent player is withdrawn. Nothing changes (no events) when ``present`` is
        already so."""
        if not self.at_table(name):
            raise ActionError(f"{name} is not at the table", Refusal.NOT_SEATED)
        if (name not in self.absent) == present:
            return []
        events: list[ChouetteEvent] = [PresenceChanged(name, present)]
        if present:
            self.absent.discard(name)
        else:
            self.absent.add(name)
            self._withdraw_resignation(name, events)
        self._continue(events)
        return self._recorded(events)

    def delegate(self, member: str, proxy: str | None) -> list[ChouetteEvent]:
        """``member`` has ``proxy``, another member of the line, make their cube
        decisions too (None ends it), §8. A delegation lapses when either leaves the line.
        Nothing changes (no events) when it is already so."""
        refused = self._actor_refusal(member)
        if refused is None and member not in self.line:
            refused = (Refusal.NOT_YOUR_CUBE, "only a member of the line has a cube")
        if (
            refused is None
            and proxy is not None
            and (proxy == member or proxy not in self.line or not self.at_table(proxy))
        ):
            refused = (Refusal.BAD_PROXY, "the proxy must be another member of the line")
        raise_refused(refused)
        if self.proxies.get(member) == proxy:
            return []
        if proxy is None:
            del self.proxies[member]
        else:
            self.proxies[member] = proxy
        return self._recorded([ProxyChanged(member, proxy)])

    def answer_partner(self, name: str, accept: bool) -> list[ChouetteEvent]:
        """The next in line accepts or declines the seat of the box's partner (§7)."""
        raise_refused(self._partner_refusal(name))
        events: list[ChouetteEvent] = []
        self._answer_partner(name, accept, events)
        return self._recorded(events)

    def start_game(self) -> list[ChouetteEvent]:
        """Begin the next game: the opening roll, box against team. The first call
        draws the seats (§1); when that seats a box partner who must answer first, the
        game begins at the next call."""
        raise_refused(self._start_refusal())
        events: list[ChouetteEvent] = []
        if self.seats is None:
            order, rounds = draw_order(self.waiting, self.roller)
            events.extend(rounds)
            self.waiting = []
            self._set_seats(Seats(order[0], tuple(order[1:])), events, announce=True)
            self._seat_partner(events)
            if self.partner_offer is not None:
                return self._recorded(events)
        seats = self._seats()
        self.game += 1
        self.position = Position.start()
        self.cubes = {m: Cube() for m in seats.line}
        self.results = {}
        self.auto_doubled = False
        self.phase = ChouettePhase.TURN
        self.announced_captain = seats.captain
        events.append(ChouetteGameStarted(self.game, seats.box, seats.partner, seats.line))
        self._opening(events)
        return self._recorded(events)

    # -- the game --------------------------------------------------------------------

    def auto_double(self, by: str, accept: bool) -> list[ChouetteEvent]:
        """The box's option on an opening tie (§2): every cube doubles, or none."""
        raise_refused(self._auto_double_refusal(by))
        events: list[ChouetteEvent] = []
        self.auto_doubled = True
        if accept:
            self._double_every_cube(events)
        else:
            events.append(AutoDoubleDeclined(by))
        self._opening(events)
        return self._recorded(events)

    def double(self, by: str, member: str | None = None) -> list[ChouetteEvent]:
        """A team double before the captain's roll (§2). Multiple cubes: ``by`` (the
        member or their proxy) doubles ``member``'s cube (``by``'s own by default); the
        window closes at the captain's roll, or at once when no other member could still
        double. Single cube: the acting captain doubles for the whole team and the box
        must answer at once."""
        member = by if member is None else member
        raise_refused(self._double_refusal(by, member))
        events: list[ChouetteEvent] = []
        doubling = self.members_in_game() if not self.settings.multiple else (member,)
        for m in doubling:
            self.team_doubles.append(m)
            events.append(TeamDoubled(m, self.cubes[m].value * 2, by))
        self.team_doubles.sort(key=list(self.cubes).index)
        if not self.settings.multiple or not self._doubles_still_possible():
            self._close_doubles(events)
        return self._recorded(events)

    def roll(self, by: str) -> list[ChouetteEvent]:
        """The box, or the acting captain for the team, rolls. The captain's roll closes
        the doubling window: with doubles made, the box answers them first and the roll
        follows at once."""
        raise_refused(self._roll_refusal(by))
        events: list[ChouetteEvent] = []
        if self.turn == TEAM and self.team_doubles:
            self._close_doubles(events)
        else:
            self._roll_for_turn(events)
        return self._recorded(events)

    def answer_doubles(self, by: str, accepted: Iterable[str]) -> list[ChouetteEvent]:
        """The box answers every team double at once (§2): it accepts those of
        ``accepted`` and rejects the rest (each rejected member wins the cube's value and
        is out of the game). The team's roll follows."""
        chosen = tuple(accepted)
        raise_refused(self._answer_doubles_refusal(by, chosen))
        events: list[ChouetteEvent] = []
        self._box_answers(set(chosen), by, events)
        return self._recorded(events)

    def box_double(self, by: str, members: Iterable[str] | None = None) -> list[ChouetteEvent]:
        """The box, before rolling, doubles the cubes of ``members`` (a subset of
        :meth:`box_may_double`; None for all of them; with a single cube, always all),
        §2. Each doubled member answers; the box's roll follows the last answer."""
        chosen = self.box_may_double() if members is None else tuple(members)
        raise_refused(self._box_double_refusal(by, chosen))
        doubled = tuple(m for m in self.cubes if m in chosen)
        self.box_offer = BoxOffer(
            doubled, self.acting_captain(), set(doubled) == set(self.members_in_game())
        )
        self.answers = {}
        self.phase = ChouettePhase.TEAM_ANSWER
        events: list[ChouetteEvent] = [BoxDoubled(m, self.cubes[m].value * 2) for m in doubled]
        self._continue(events)
        return self._recorded(events)

    def take(self, by: str, member: str | None = None) -> list[ChouetteEvent]:
        """``by`` (the member or their proxy) takes the box's double on ``member``'s cube."""
        return self._answer_action(by, member, Answer.TAKE)

    def drop(self, by: str, member: str | None = None) -> list[ChouetteEvent]:
        """``by`` rejects the box's double on ``member``'s cube: the member loses the
        cube's value and is out of the game."""
        return self._answer_action(by, member, Answer.DROP)

    def beaver(self, by: str, member: str | None = None) -> list[ChouetteEvent]:
        """``by`` takes the box's double on ``member``'s cube and redoubles at once,
        keeping the cube (beavers on, multiple cubes)."""
        return self._answer_action(by, member, Answer.BEAVER)

    def raccoon(self, by: str, members: Iterable[str]) -> list[ChouetteEvent]:
        """The box redoubles the beavered cubes of ``members`` (none: no raccoon) and
        owns them; then the box rolls."""
        chosen = tuple(members)
        raise_refused(self._raccoon_refusal(by, chosen))
        events: list[ChouetteEvent] = []
        for member in self._beavered():
            if member in chosen:
                cube = self.cubes[member]
                self.cubes[member] = Cube(cube.value * 2, CubeOwner.BOX, True)
                events.append(DoubleRaccooned(member, cube.value * 2))
        self._end_box_double(events)
        return self._recorded(events)

    def move(self, by: str, moves: Sequence[Move]) -> list[ChouetteEvent]:
        """The box, or the acting captain for the team, plays the dice.

        :raises IllegalMoveError: the moves are not one legal play (nothing changes).
        """
        raise_refused(self._move_refusal(by))
        assert self.dice is not None
        side = self.turn
        play = validate_play(self.position, side, self.dice, moves, self._legal_results())
        result, hits = apply_moves(self.position, side, play.moves)
        self.position = result
        events: list[ChouetteEvent] = [CheckersMoved(side, play.moves, hits)]
        if result.off(side) == CHECKERS:
            kind = win_kind(result, side)
            for member in self.members_in_game():
                counted = self._counted(member, kind)
                points = self.cubes[member].value * counted.multiplier
                self._settle(
                    member,
                    points if side == TEAM else -points,
                    counted,
                    SettleEnd.BORNE_OFF,
                    events,
                )
            self._continue(events)
        else:
            self._pass_turn()
        return self._recorded(events)

    def resign(self, by: str, member: str, kind: WinKind) -> list[ChouetteEvent]:
        """A resignation on ``member``'s cube at ``kind``'s value (§4): ``by`` is the
        member (resigning to the box) or the box (resigning to the member). The board
        waits for the answer."""
        raise_refused(self._resign_refusal(by, member))
        points = self.cubes[member].value * self._counted(member, kind).multiplier
        self.resignation = ChouetteResignation(member, by == self.box, kind, points)
        return self._recorded([ResignOffered(member, by, kind, points)])

    def accept_resignation(self, by: str) -> list[ChouetteEvent]:
        """The other side accepts the resignation: the member's cube is settled."""
        raise_refused(self._resign_answer_refusal(by))
        offer = self.resignation
        assert offer is not None
        self.resignation = None
        events: list[ChouetteEvent] = [ResignAccepted(offer.member, by, offer.points)]
        points = offer.points if offer.by_box else -offer.points
        kind = self._counted(offer.member, offer.kind)
        self._settle(offer.member, points, kind, SettleEnd.RESIGNED, events)
        self._continue(events)
        return self._recorded(events)

    def reject_resignation(self, by: str) -> list[ChouetteEvent]:
        """The other side refuses the resignation; the game goes on."""
        raise_refused(self._resign_answer_refusal(by))
        offer = self.resignation
        assert offer is not None
        self.resignation = None
        return self._recorded([ResignRejected(offer.member, by)])

    def time_out(self) -> list[ChouetteEvent]:
        """A decision's timer ran out (§8): the box's answer to team doubles is its
        default (:attr:`ChouetteSettings.box_timeout_accepts`); members silent on a box
        double follow the captain's answer (a silent captain takes); the box's raccoon
        and automatic-double options lapse; between games, an offer of the partner's
        seat is declined."""
        events: list[ChouetteEvent] = []
        phase = self.phase
        if phase is ChouettePhase.WAITING and self.partner_offer is not None:
            events.append(TimedOut((self.partner_offer,)))
            self._answer_partner(self.partner_offer, False, events)
        elif phase is ChouettePhase.BOX_ANSWER:
            events.append(TimedOut((self._box(),)))
            accepted = set(self.team_doubles) if self.settings.box_timeout_accepts else set()
            self._box_answers(accepted, None, events)
        elif phase is ChouettePhase.TEAM_ANSWER:
            offer = self.box_offer
            assert offer is not None
            silent = self._unanswered()
            events.append(TimedOut(silent))
            leader = offer.leader
            if leader in silent:
                self._answer(leader, Answer.TAKE, None, events)
            lead = Answer.TAKE if leader is None else self.answers.get(leader, Answer.TAKE)
            for member in silent:
                if member != leader and self.in_game(member):
                    self._answer(member, lead, None, events)
            self._continue(events)
        elif phase is ChouettePhase.RACCOON:
            events.append(TimedOut((self._box(),)))
            self._end_box_double(events)
        elif phase is ChouettePhase.AUTO_DOUBLE:
            events.extend((TimedOut((self._box(),)), AutoDoubleDeclined(self._box())))
            self.auto_doubled = True
            self._opening(events)
        else:
            raise ActionError("no decision is waiting", Refusal.NO_DECISION)
        return self._recorded(events)

    # -- state changes ---------------------------------------------------------------

    def _opening(self, events: list[ChouetteEvent]) -> None:
        """The opening roll, box's die first; ties roll again (with an automatic double,
        or the box's choice of one, at the first tie, §2)."""
        while True:
            dice = (self.roller.die(), self.roller.die())
            if dice[0] != dice[1]:
                break
            events.append(OpeningRoll(dice, None))
            if self.auto_doubled:
                continue
            if self.settings.auto_doubles is AutoDoubles.AT_MOST_ONE:
                self.auto_doubled = True
                self._double_every_cube(events)
            elif self.settings.auto_doubles is AutoDoubles.BOX_OPTION:
                self.phase = ChouettePhase.AUTO_DOUBLE
                return
        starter: Player = BOX if dice[0] > dice[1] else TEAM
        events.append(OpeningRoll(dice, starter))
        self.turn = starter
        self._begin_move(Roll.of(dice[starter], dice[1 - starter]), events)

    def _double_every_cube(self, events: list[ChouetteEvent]) -> None:
        """An automatic double raises every cube (§2); it does not turn them."""
        for member, cube in self.cubes.items():
            self.cubes[member] = Cube(cube.value * 2, cube.owner, cube.turned)
        events.append(AutoDoubled(max(c.value for c in self.cubes.values())))

    def _close_doubles(self, events: list[ChouetteEvent]) -> None:
        self.phase = ChouettePhase.BOX_ANSWER
        events.append(DoublesClosed(tuple(self.team_doubles)))

    def _box_answers(self, accepted: set[str], by: str | None, events: list[ChouetteEvent]) -> None:
        """The box's answer to every team double: accepted ones turn the cube to the box,
        rejected ones settle at the cube's value before the double (§2)."""
        for member in list(self.team_doubles):
            cube = self.cubes[member]
            if member in accepted:
                self.cubes[member] = Cube(cube.value * 2, CubeOwner.BOX, True)
                events.append(DoubleTaken(member, cube.value * 2, by, True))
            else:
                events.append(DoubleDropped(member, by, True))
                self._settle(member, cube.value, WinKind.SINGLE, SettleEnd.DROPPED, events)
        self.team_doubles = []
        self._continue(events)

    def _answer_partner(self, name: str, accept: bool, events: list[ChouetteEvent]) -> None:
        """The candidate takes the partner's seat, or declines it under this box (§7)."""
        self.partner_offer = None
        events.append(PartnerAnswered(name, accept))
        if accept:
            self._set_seats(self._seats().with_partner(name), events)
        else:
            self.declined.add(name)
        self._seat_partner(events)

    def _answer_action(self, by: str, member: str | None, answer: Answer) -> list[ChouetteEvent]:
        member = by if member is None else member
        raise_refused(self._answer_refusal(by, member, answer))
        events: list[ChouetteEvent] = []
        self._answer(member, answer, by, events)
        self._continue(events)
        return self._recorded(events)

    def _answer(
        self, member: str, answer: Answer, by: str | None, events: list[ChouetteEvent]
    ) -> None:
        """``member``'s answer to the box's double, applied at once."""
        self.answers[member] = answer
        cube = self.cubes[member]
        if answer is Answer.DROP:
            events.append(DoubleDropped(member, by, False))
            self._settle(member, -cube.value, WinKind.SINGLE, SettleEnd.DROPPED, events)
            return
        value = cube.value * (4 if answer is Answer.BEAVER else 2)
        self.cubes[member] = Cube(value, CubeOwner.MEMBER, True)
        if answer is Answer.BEAVER:
            events.append(DoubleBeavered(member, value, by, False))
        else:
            events.append(DoubleTaken(member, value, by, False))

    def _resolve_followers(self, events: list[ChouetteEvent]) -> None:
        """Members nobody present decides for follow the captain's answer to the box's
        double (§8). When the captain to follow cannot answer (absent, left), the acting
        captain after them is followed; a leader not doubled, or none, means they take."""
        offer = self.box_offer
        assert offer is not None
        leader = offer.leader
        if (
            leader is not None
            and leader not in self.answers
            and not (self.in_game(leader) and self._can_answer(leader))
        ):
            leader = self.acting_captain()
            self.box_offer = offer = BoxOffer(offer.members, leader, offer.everyone)
        lead = None if leader is None else self.answers.get(leader)
        awaiting_leader = lead is None and leader in offer.members
        for member in offer.members:
            if member in self.answers or not self.in_game(member) or self._can_answer(member):
                continue
            if lead is not None:
                self._answer(member, lead, leader, events)
            elif not awaiting_leader:
                self._answer(member, Answer.TAKE, None, events)

    def _complete_box_double(self, events: list[ChouetteEvent]) -> None:
        """Every doubled member answered: the lone taker's beaver (§2), then the box's
        raccoons if allowed, then the box's roll."""
        offer = self.box_offer
        assert offer is not None
        takers = [m for m in offer.members if m in self.answers and self.in_game(m)]
        if (
            self.settings.lone_taker is LoneTaker.MANDATORY_BEAVER
            and offer.everyone
            and len(offer.members) >= 2
            and len(takers) == 1
            and self.answers[takers[0]] is Answer.TAKE
        ):
            member = takers[0]
            cube = self.cubes[member]
            self.cubes[member] = Cube(cube.value * 2, CubeOwner.MEMBER, True)
            self.answers[member] = Answer.BEAVER
            events.append(DoubleBeavered(member, cube.value * 2, None, True))
        if self.settings.raccoons and self._beavered():
            self.phase = ChouettePhase.RACCOON
            return
        self._end_box_double(events)

    def _end_box_double(self, events: list[ChouetteEvent]) -> None:
        self.box_offer = None
        self.answers = {}
        self.phase = ChouettePhase.TURN
        self._roll_for_turn(events)

    def _continue(self, events: list[ChouetteEvent]) -> None:
        """Carry the game on after anything that may settle cubes or complete a cube
        decision: followers answer, the game ends when no cube is left, a completed
        decision lets the side on roll roll."""
        phase = self.phase
        if phase is ChouettePhase.WAITING:
            return
        if phase is ChouettePhase.TEAM_ANSWER:
            self._resolve_followers(events)
        if all(m in self.leaving for m in self.members_in_game()):
            # Only cubes of members who left (following the captain) are still in: no
            # one is left to play them, so they are resigned at their value.
            for member in self.members_in_game():
                value = self.cubes[member].value
                self._settle(member, -value, WinKind.SINGLE, SettleEnd.LEFT, events)
        if not self.members_in_game():
            self._finish_game(events)
        elif phase is ChouettePhase.TEAM_ANSWER and not self._unanswered():
            self._complete_box_double(events)
        elif phase is ChouettePhase.RACCOON and not self._beavered():
            self._end_box_double(events)
        elif phase is ChouettePhase.BOX_ANSWER and not self.team_doubles:
            self._roll_for_turn(events)

    def _settle(
        self,
        member: str,
        points: int,
        kind: WinKind,
        end: SettleEnd,
        events: list[ChouetteEvent],
    ) -> None:
        """``member`` wins ``points`` from the box (negative: loses) and is out (§4)."""
        self.results[member] = points
        self.totals[member] += points
        self.totals[self._box()] -= points
        if member in self.team_doubles:
            self.team_doubles.remove(member)
        events.append(CubeSettled(member, points, kind, end))

    def _note_acting(self, events: list[ChouetteEvent]) -> None:
        """Announce a new acting captain (§3) while cubes are still in the game."""
        if self.phase is ChouettePhase.WAITING or not self.members_in_game():
            return
        acting = self.acting_captain()
        if acting != self.announced_captain:
            self.announced_captain = acting
            events.append(ActingCaptain(acting))

    def _roll_for_turn(self, events: list[ChouetteEvent]) -> None:
        self._begin_move(roll(self.roller), events, announce=True)

    def _begin_move(
        self, dice: Roll, events: list[ChouetteEvent], *, announce: bool = False
    ) -> None:
        """The side on roll has ``dice`` (announced unless it is the opening roll)."""
        self.phase = ChouettePhase.MOVE
        self.dice = dice
        self._legal = None
        required = self.moves_required()
        self._note_acting(events)
        if announce:
            events.append(DiceRolled(self.turn, dice, required))
        if required == 0:
            events.append(TurnPassed(self.turn))
            self._pass_turn()

    def _pass_turn(self) -> None:
        self.turn = 1 - self.turn
        self.phase = ChouettePhase.TURN
        self.dice = None
        self._legal = None

    def _withdraw_resignation(self, name: str, events: list[ChouetteEvent]) -> None:
        offer = self.resignation
        if offer is not None and name in (offer.member, self.box):
            self.resignation = None
            events.append(ResignWithdrawn(offer.member))

    def _finish_game(self, events: list[ChouetteEvent], *, box_left: bool = False) -> None:
        """Every cube is settled: the partner's share (§7), the rotation (§5), the seats
        for the next game (newcomers at the bottom, leavers gone)."""
        seats = self._seats()
        results = tuple((m, self.results[m]) for m in self.cubes)
        box_net = -sum(points for _, points in results)
        partner = seats.partner
        if partner is not None and partner not in self.leaving:
            share = abs(box_net) // 2 * (1 if box_net > 0 else -1)
            if share:
                self.totals[seats.box] -= share
                self.totals[partner] += share
                events.append(PartnerShare(partner, share))
        if box_left:
            box_stays = False
        elif self.settings.rotation is Rotation.KIT:
            box_stays = self.results[seats.line[0]] < 0
        else:
            box_stays = box_net >= 0
        events.append(ChouetteGameFinished(self.game, results, box_net, box_stays))
        after = seats.rotated(box_stays).without(self.leaving)
        if after is not None:
            for name in self.waiting:
                after = after.joined(name)
            self.waiting = []
        self.leaving = set()
        self.phase = ChouettePhase.WAITING
        self.dice = None
        self._legal = None
        self.cubes = {}
        self.results = {}
        self.team_doubles = []
        self.box_offer = None
        self.answers = {}
        self.resignation = None
        self.announced_captain = None
        self._set_seats(after, events, announce=True)
        self._seat_partner(events)

    def _set_seats(
        self, seats: Seats | None, events: list[ChouetteEvent], *, announce: bool = False
    ) -> None:
        """New seats, announced when they changed (or ``announce``); a new box may be
        offered a partner by anyone again, and delegations out of the line lapse."""
        before = self.seats
        self.seats = seats
        if seats is None or before is None or before.box != seats.box:
            self.declined = set()
        if seats is not None and (announce or seats != before):
            events.append(SeatsChanged(seats.box, seats.partner, seats.line))
        self._lapse_proxies(events)

    def _lapse_proxies(self, events: list[ChouetteEvent]) -> None:
        """A delegation lapses when the member or the proxy is no longer in the line."""
        line = [m for m in self.line if m not in self.leaving]
        for member, proxy in list(self.proxies.items()):
            if member not in line or proxy not in line:
                del self.proxies[member]
                events.append(ProxyChanged(member, None))

    def _seat_partner(self, events: list[ChouetteEvent]) -> None:
        """§7, between games: the partner's seat as the table's size and the setting
        say. Below the size a partnership ends; above it, without a partner, the next in
        line after the captain is offered the seat (optional) or takes it (mandatory),
        unless they declined it under this box."""
        seats = self.seats
        if seats is None or self.phase is not ChouettePhase.WAITING:
            return
        rule = self.settings.box_partner
        size = _PARTNER_FROM[rule]
        offer = None
        if size is None or len(seats.players) < size:
            if seats.partner is not None:
                self._set_seats(seats.without_partner(), events)
        elif seats.partner is None and len(seats.line) > 1 and seats.line[1] not in self.declined:
            candidate = seats.line[1]
            if rule is BoxPartner.MANDATORY_AT_7:
                self._set_seats(seats.with_partner(candidate), events)
            else:
                offer = candidate
                if self.partner_offer != candidate:
                    events.append(PartnerOffered(candidate))
        self.partner_offer = offer

    def _recorded(self, events: list[ChouetteEvent]) -> list[ChouetteEvent]:
        """Append ``events`` to the record and return them; the table changed
        (:attr:`version`). A finished game's record moves to the history."""
        self._note_acting(events)
        self.version += 1
        self.record.extend(events)
        if any(isinstance(e, ChouetteGameFinished) for e in events):
            self.history.append(self.record)
            self.record = []
        return events
