"""The chouette's state and what its rules allow in it (``shared/docs/chouette-rules.md``,
cited as §n).

:class:`ChouetteState` holds one table: its settings, standings, seats, presence and
delegations, and the game under way (the board, every member's cube, the decisions
waiting); it answers who must act, what each player may do, and why an action is
refused. The actions that change it are :class:`backgammon.chouette.Chouette`'s; the
value types here (:class:`Cube`, :class:`BoxOffer`, ...) are also what
:mod:`backgammon.chouette_snapshot` saves.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from backgammon.board import Player, Position
from backgammon.chouette_events import ChouetteEvent
from backgammon.chouette_seats import Seats
from backgammon.chouette_settings import ChouetteSettings, Consultation, InitialDoubles
from backgammon.dice import DiceRoller, Roll
from backgammon.errors import ActionError, Refusal
from backgammon.events import WinKind
from backgammon.moves import LegalResults, Play, legal_plays, legal_results

BOX: Player = 0
"""The box's side of the board."""
TEAM: Player = 1
"""The team's side of the board (the captain plays it)."""
MIN_PLAYERS = 2
MAX_PLAYERS = 10
"""§1: a table holds 2 to 10 players."""

Refused = tuple[Refusal, str] | None
"""Why an action is refused, as (reason, message), or None when it is allowed."""


class ChouettePhase(enum.Enum):
    """Where a table stands."""

    WAITING = "waiting"  # between games, or before the first
    AUTO_DOUBLE = "auto_double"  # an opening tie: the box chooses whether every cube doubles
    TURN = "turn"  # the side on roll may double, then roll
    MOVE = "move"  # the side on roll has dice and must move
    BOX_ANSWER = "box_answer"  # the team's doubles wait for the box's answer
    TEAM_ANSWER = "team_answer"  # the box's doubles wait for the members' answers
    RACCOON = "raccoon"  # the members answered; the box may raccoon the beavers


class ChouetteAction(enum.Enum):
    """What a player can do at a table (:meth:`ChouetteState.allowed`)."""

    START_GAME = "start_game"
    ANSWER_PARTNER = "answer_partner"
    AUTO_DOUBLE = "auto_double"
    DOUBLE = "double"
    BOX_DOUBLE = "box_double"
    ANSWER_DOUBLES = "answer_doubles"
    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"
    RACCOON = "raccoon"
    ROLL = "roll"
    MOVE = "move"
    RESIGN = "resign"
    ACCEPT_RESIGNATION = "accept_resignation"
    REJECT_RESIGNATION = "reject_resignation"


class CubeOwner(enum.Enum):
    CENTRE = "centre"
    BOX = "box"
    MEMBER = "member"


@dataclass(frozen=True)
class Cube:
    """One member's cube against the box (§2). With a single cube every member still in
    the game has the same value and owner."""

    value: int = 1
    owner: CubeOwner = CubeOwner.CENTRE
    turned: bool = False
    """A double was accepted on it this game (automatic doubles do not count): the
    Jacoby rule lets gammons count for it."""


class Answer(enum.Enum):
    """A member's answer to a box double."""

    TAKE = "take"
    DROP = "drop"
    BEAVER = "beaver"


@dataclass(frozen=True)
class BoxOffer:
    """The box's double waiting for the members' answers."""

    members: tuple[str, ...]
    """The members doubled, in line order."""
    leader: str | None
    """Whose answer absent members follow (§8): the acting captain when the box doubled,
    or the acting captain after them when they could not answer."""
    everyone: bool
    """Every member still in the game was doubled (the lone taker rule, §2)."""


@dataclass(frozen=True)
class ChouetteResignation:
    """A resignation waiting for its answer: between the box and one member (§4)."""

    member: str
    by_box: bool
    """True: the box resigns to the member; False: the member resigns to the box."""
    kind: WinKind
    points: int


class ChouetteState:
    """One chouette table's state, and what the rules allow in it.

    Only :class:`backgammon.chouette.Chouette` (its actions) and
    :mod:`backgammon.chouette_snapshot` (restoring) change it.
    """

    def __init__(self, settings: ChouetteSettings, roller: DiceRoller) -> None:
        self.settings = settings
        self.roller = roller
        self.totals: dict[str, int] = {}
        """Every player who ever sat at the table and their running total (§4); the sum
        is always 0."""
        self.waiting: list[str] = []
        """Players at the table without a seat: all of them before the first draw, then
        those who joined during a game (seated at the bottom when it ends)."""
        self.seats: Seats | None = None
        self.absent: set[str] = set()
        self.proxies: dict[str, str] = {}
        """Delegated cube decisions: member to proxy (§8)."""
        self.declined: set[str] = set()
        """Who declined the partner's seat under the present box (not asked again)."""
        self.partner_offer: str | None = None
        self.leaving: set[str] = set()
        """Left during the game; they leave the seats when it ends."""
        self.game = 0
        self.phase = ChouettePhase.WAITING
        self.turn: Player = BOX
        self.position = Position.start()
        self.dice: Roll | None = None
        self.cubes: dict[str, Cube] = {}
        """Every member of the game's line, in line order, and their cube."""
        self.results: dict[str, int] = {}
        """The members whose cube is settled and what each won against the box."""
        self.team_doubles: list[str] = []
        """Members who doubled the box in this doubling window, in line order."""
        self.box_offer: BoxOffer | None = None
        self.answers: dict[str, Answer] = {}
        """The members' answers to :attr:`box_offer` so far."""
        self.auto_doubled = False
        """This game's automatic double (or the box's choice against it) happened."""
        self.resignation: ChouetteResignation | None = None
        self.record: list[ChouetteEvent] = []
        """The events since the last game ended (the table's, then the game's)."""
        self.history: list[list[ChouetteEvent]] = []
        """The records of the finished games."""
        self.version = 0
        """Counts the actions that changed the table. Not part of the snapshot."""
        self._legal: LegalResults | None = None
        self.announced_captain: str | None = None
        """The acting captain last announced (:class:`ActingCaptain`)."""

    # -- who and what ----------------------------------------------------------------

    @property
    def box(self) -> str | None:
        return self.seats.box if self.seats else None

    @property
    def line(self) -> tuple[str, ...]:
        """The line in rank order; in a game, the team (its first is the captain)."""
        return self.seats.line if self.seats else ()

    @property
    def players(self) -> tuple[str, ...]:
        """Everyone at the table: the seats (with those leaving at the end of the game),
        then the waiting."""
        seated = self.seats.players if self.seats else ()
        return (*seated, *self.waiting)

    def at_table(self, name: str) -> bool:
        """``name`` is at the table and has not left it."""
        return name in self.players and name not in self.leaving

    def in_game(self, member: str) -> bool:
        """``member``'s cube is still in the game (not settled)."""
        return member in self.cubes and member not in self.results

    def members_in_game(self) -> tuple[str, ...]:
        """The members whose cube is still in the game, in line order."""
        return tuple(m for m in self.cubes if m not in self.results)

    def acting_captain(self) -> str | None:
        """Who plays the team's checkers (§3, §8): the highest-ranked member who is still
        in the game, present and not leaving; between games, the captain."""
        if self.phase is ChouettePhase.WAITING:
            return self.seats.captain if self.seats else None
        for member in self.members_in_game():
            if member not in self.absent and member not in self.leaving:
                return member
        return None

    def mover(self) -> str | None:
        """Who rolls and moves for the side on roll (None between games)."""
        if self.phase is ChouettePhase.WAITING:
            return None
        return self.box if self.turn == BOX else self.acting_captain()

    def standings(self) -> tuple[tuple[str, int], ...]:
        """Every player's running total, in the order they first joined (sum 0)."""
        return tuple(self.totals.items())

    def may_consult(self, name: str) -> bool:
        """§6: ``name`` may use team talk now (the box never sees it; members out of the
        game may not use it). Cube decisions are never consulted on: not enforced."""
        if not self.in_game(name) or name in self.absent or name in self.leaving:
            return False
        if self.settings.consultation is Consultation.FREE:
            return True
        if self.settings.consultation is Consultation.NONE:
            return False
        return self.cubes[name].turned

    def may_talk_to_box(self, name: str) -> bool:
        """§6: the box partner may always talk to the box."""
        return self.seats is not None and name == self.seats.partner

    def waiting_for(self) -> tuple[str, ...]:
        """Whose decision the table waits for now (members whose answer is awaited, even
        when a proxy or the captain will give it)."""
        if self.phase is ChouettePhase.WAITING:
            return () if self.partner_offer is None else (self.partner_offer,)
        if self.resignation is not None:
            return (self._resign_answerer(self.resignation),)
        if self.phase is ChouettePhase.TEAM_ANSWER:
            return self._unanswered()
        if self.phase is ChouettePhase.TURN or self.phase is ChouettePhase.MOVE:
            mover = self.mover()
            return () if mover is None else (mover,)
        return (self._box(),)

    def allowed(self, name: str) -> frozenset[ChouetteAction]:
        """Every action ``name`` may take now."""
        acts = set()
        if self.at_table(name) and self._start_refusal() is None:
            acts.add(ChouetteAction.START_GAME)
        checks = {
            ChouetteAction.ANSWER_PARTNER: self._partner_refusal(name),
            ChouetteAction.AUTO_DOUBLE: self._auto_double_refusal(name),
            ChouetteAction.BOX_DOUBLE: self._box_double_refusal(name, None),
            ChouetteAction.ANSWER_DOUBLES: self._answer_doubles_refusal(name, None),
            ChouetteAction.RACCOON: self._raccoon_refusal(name, ()),
            ChouetteAction.ROLL: self._roll_refusal(name),
            ChouetteAction.MOVE: self._move_refusal(name),
            ChouetteAction.RESIGN: self._resign_refusal(name, None),
            ChouetteAction.ACCEPT_RESIGNATION: self._resign_answer_refusal(name),
            ChouetteAction.REJECT_RESIGNATION: self._resign_answer_refusal(name),
        }
        acts.update(action for action, refused in checks.items() if refused is None)
        if self.doubles_for(name):
            acts.add(ChouetteAction.DOUBLE)
        answerable = self.answers_for(name)
        if answerable:
            acts.update((ChouetteAction.TAKE, ChouetteAction.DROP))
            if self._answer_refusal(name, answerable[0], Answer.BEAVER) is None:
                acts.add(ChouetteAction.BEAVER)
        return frozenset(acts)

    def doubles_for(self, by: str) -> tuple[str, ...]:
        """The members whose cube ``by`` may double now (their own, those delegated to
        them; with a single cube, every member's when ``by`` is the acting captain)."""
        if not self.settings.multiple:
            if self._double_refusal(by, by) is None:
                return self.members_in_game()
            return ()
        return tuple(m for m in self.cubes if self._double_refusal(by, m) is None)

    def box_may_double(self) -> tuple[str, ...]:
        """The members whose cubes the box may turn (centred or its own), in line order."""
        return tuple(
            m for m in self.members_in_game() if self.cubes[m].owner is not CubeOwner.MEMBER
        )

    def answers_for(self, by: str) -> tuple[str, ...]:
        """The members whose answer to the box's double ``by`` may give now."""
        if self.box_offer is None:
            return ()
        return tuple(
            m for m in self.box_offer.members if self._answer_refusal(by, m, Answer.TAKE) is None
        )

    def raccoons_possible(self) -> tuple[str, ...]:
        """The beavered members the box may raccoon now."""
        if self.phase is not ChouettePhase.RACCOON:
            return ()
        return self._beavered()

    def legal_plays(self) -> list[Play]:
        """The legal plays of the dice out (empty when no dice are out)."""
        if self.phase is not ChouettePhase.MOVE or self.dice is None:
            return []
        return legal_plays(self.position, self.turn, self.dice)

    def moves_required(self) -> int:
        """How many checkers the side with dice must move (0 when none are out)."""
        legal = self._legal_results()
        return legal.required if legal is not None else 0

    # -- refusals --------------------------------------------------------------------

    def _actor_refusal(self, by: str) -> Refused:
        if not self.at_table(by):
            return (Refusal.NOT_SEATED, f"{by} is not at the table")
        if by in self.absent:
            return (Refusal.ABSENT, f"{by} is absent")
        return None

    def _board_refusal(self, by: str) -> Refused:
        """Why ``by`` may not act on the board at all now."""
        refused = self._actor_refusal(by)
        if refused is None and self.phase is ChouettePhase.WAITING:
            return (Refusal.NO_GAME, "no game is in progress")
        return refused

    def _play_refusal(self, by: str) -> Refused:
        """Why ``by`` may not roll, move or double now, whatever the turn."""
        refused = self._board_refusal(by)
        if refused is not None or self.resignation is None:
            return refused
        if by == self._resign_offerer(self.resignation):
            return (Refusal.RESIGN_PENDING_YOURS, "your resignation waits for an answer")
        return (Refusal.RESIGN_PENDING_THEIRS, "a resignation waits for its answer")

    def _turn_refusal(self, side: Player, *, rolled: bool = False) -> Refused:
        """Why ``side`` may not act in its turn now (``rolled``: it must have dice out)."""
        phase = self.phase
        if self.turn == side and phase is ChouettePhase.TURN:
            return (Refusal.MUST_ROLL, "roll the dice first") if rolled else None
        if self.turn == side and phase is ChouettePhase.MOVE:
            return None if rolled else (Refusal.ALREADY_ROLLED, "the dice are already rolled")
        box_decides = (ChouettePhase.BOX_ANSWER, ChouettePhase.RACCOON, ChouettePhase.AUTO_DOUBLE)
        if (side == BOX and phase in box_decides) or (
            side == TEAM and phase is ChouettePhase.TEAM_ANSWER
        ):
            return (Refusal.MUST_ANSWER_DOUBLE, "answer the cube first")
        if phase in (ChouettePhase.BOX_ANSWER, ChouettePhase.TEAM_ANSWER):
            return (Refusal.DOUBLE_PENDING_YOURS, "the double waits for an answer")
        return (Refusal.NOT_YOUR_TURN, "it is not your turn")

    def _side_of(self, by: str) -> Player | None:
        """The side ``by`` plays the checkers for now, if any."""
        if by == self.box:
            return BOX
        return TEAM if by == self.acting_captain() else None

    def _roll_refusal(self, by: str) -> Refused:
        return self._checker_refusal(by, rolled=False)

    def _move_refusal(self, by: str) -> Refused:
        return self._checker_refusal(by, rolled=True)

    def _checker_refusal(self, by: str, *, rolled: bool) -> Refused:
        refused = self._play_refusal(by)
        if refused is not None:
            return refused
        side = self._side_of(by)
        if side is None:
            if by in self.line:
                return (Refusal.NOT_CAPTAIN, "the captain plays the team's checkers")
            return (Refusal.NOT_YOUR_TURN, "it is not your turn")
        return self._turn_refusal(side, rolled=rolled)

    def _double_refusal(self, by: str, member: str) -> Refused:
        refused = self._play_refusal(by)
        if refused is not None:
            return refused
        if self.settings.multiple:
            if not self._decides_for(by, member):
                return (Refusal.NOT_YOUR_CUBE, f"{by} does not decide for {member}")
        elif by != self.acting_captain():
            return (Refusal.NOT_CAPTAIN, "with a single cube the captain doubles")
        refused = self._turn_refusal(TEAM)
        if refused is not None:
            return refused
        if not self.in_game(member):
            return (Refusal.NOT_IN_GAME, f"{member}'s cube is not in the game")
        if self.cubes[member].owner is CubeOwner.BOX:
            return (Refusal.NOT_OWNER, "the box owns the cube")
        if member in self.team_doubles:
            return (Refusal.ALREADY_DOUBLED, f"{member}'s cube is already doubled")
        return None

    def _box_double_refusal(self, by: str, members: tuple[str, ...] | None) -> Refused:
        """Why the box may not double ``members`` (None: anyone) now."""
        refused = self._play_refusal(by) or self._box_only(by) or self._turn_refusal(BOX)
        if refused is not None:
            return refused
        turnable = self.box_may_double()
        if not turnable:
            return (Refusal.NOT_OWNER, "the box may turn no cube")
        if members is None:
            return None
        if not members or len(set(members)) != len(members):
            return (Refusal.NOT_IN_GAME, "name each member to double once")
        for member in members:
            if not self.in_game(member):
                return (Refusal.NOT_IN_GAME, f"{member}'s cube is not in the game")
            if member not in turnable:
                return (Refusal.NOT_OWNER, f"{member} owns their cube")
        if not self.settings.multiple and set(members) != set(self.members_in_game()):
            return (Refusal.SINGLE_CUBE, "the single cube is doubled for the whole team")
        captain = self.acting_captain()
        if (
            self.settings.box_double_takes_captain
            and len({self.cubes[m].value for m in self.members_in_game()}) == 1
            and captain in turnable
            and captain not in members
        ):
            return (Refusal.BOX_DOUBLE_NEEDS_CAPTAIN, "with the cubes level, double the captain")
        return None

    def _answer_doubles_refusal(self, by: str, accepted: tuple[str, ...] | None) -> Refused:
        refused = self._board_refusal(by) or self._box_only(by)
        if refused is not None:
            return refused
        if self.phase is not ChouettePhase.BOX_ANSWER:
            return (Refusal.NOTHING_OFFERED, "no team double waits for an answer")
        if accepted is None:
            return None
        if not set(accepted) <= set(self.team_doubles):
            return (Refusal.NOTHING_OFFERED, "accept only the doubles offered")
        taken = len(set(accepted))
        offered = len(self.team_doubles)
        if not self.settings.multiple and taken not in (0, offered):
            return (Refusal.SINGLE_CUBE, "the single cube is accepted or rejected for all")
        if (
            self.settings.multiple
            and self.settings.initial_doubles is InitialDoubles.HALF_OR_NONE
            and offered >= 2
            and set(self.team_doubles) == set(self.members_in_game())
            and not any(self.cubes[m].turned for m in self.team_doubles)
            and taken
            and (taken < offered if offered == 2 else 2 * taken < offered)
        ):
            return (Refusal.BOX_MUST_ACCEPT_HALF, "accept at least half, or reject all")
        return None

    def _answer_refusal(self, by: str, member: str, answer: Answer) -> Refused:
        refused = self._board_refusal(by)
        if refused is not None:
            return refused
        offer = self.box_offer
        if (
            self.phase is not ChouettePhase.TEAM_ANSWER
            or offer is None
            or member not in offer.members
            or member in self.answers
            or not self.in_game(member)
        ):
            return (Refusal.NOTHING_OFFERED, f"no box double waits for {member}'s answer")
        if not self._decides_for(by, member):
            return (Refusal.NOT_YOUR_CUBE, f"{by} does not decide for {member}")
        if answer is Answer.BEAVER and not self.settings.beavers:
            return (Refusal.BEAVERS_OFF, "beavers are off at this table")
        return None

    def _raccoon_refusal(self, by: str, members: tuple[str, ...]) -> Refused:
        refused = self._board_refusal(by) or self._box_only(by)
        if refused is not None:
            return refused
        if self.phase is not ChouettePhase.RACCOON:
            return (Refusal.NOTHING_OFFERED, "no beaver to raccoon")
        if not set(members) <= set(self._beavered()):
            return (Refusal.NOTHING_OFFERED, "raccoon only beavered cubes")
        return None

    def _auto_double_refusal(self, by: str) -> Refused:
        refused = self._board_refusal(by) or self._box_only(by)
        if refused is None and self.phase is not ChouettePhase.AUTO_DOUBLE:
            return (Refusal.NOTHING_OFFERED, "no opening tie waits for the box's choice")
        return refused

    def _resign_refusal(self, by: str, member: str | None) -> Refused:
        """Why ``by`` may not offer a resignation on ``member``'s cube (None: anyone's)."""
        refused = self._board_refusal(by)
        if refused is not None:
            return refused
        if self.resignation is not None:
            if by == self._resign_offerer(self.resignation):
                return (Refusal.ALREADY_RESIGNED, "you already offered to resign")
            return (Refusal.RESIGN_PENDING_THEIRS, "a resignation waits for its answer")
        if self.phase not in (ChouettePhase.TURN, ChouettePhase.MOVE) or self.team_doubles:
            return (Refusal.MUST_ANSWER_DOUBLE, "the cubes are being decided")
        if by == self.box:
            candidates = [m for m in self.members_in_game() if self._actor_refusal(m) is None]
        else:
            candidates = [by] if self.in_game(by) else []
        if member is None:
            return None if candidates else (Refusal.NOT_IN_GAME, "no cube to resign on")
        if member in candidates:
            return None
        if not self.in_game(member):
            return (Refusal.NOT_IN_GAME, f"{member}'s cube is not in the game")
        if by == self.box:
            return (Refusal.ABSENT, f"{member} cannot answer now")
        return (Refusal.NOT_YOUR_CUBE, "a resignation is on your own cube")

    def _resign_answer_refusal(self, by: str) -> Refused:
        refused = self._board_refusal(by)
        if refused is not None:
            return refused
        offer = self.resignation
        if offer is None:
            return (Refusal.NOTHING_OFFERED, "nobody offered to resign")
        if by == self._resign_answerer(offer):
            return None
        if by == self._resign_offerer(offer):
            return (Refusal.RESIGN_PENDING_YOURS, "your resignation waits for an answer")
        return (Refusal.NOT_YOUR_TURN, "the resignation is not yours to answer")

    def _start_refusal(self) -> Refused:
        if self.phase is not ChouettePhase.WAITING:
            return (Refusal.GAME_IN_PROGRESS, "a game is in progress")
        if self.partner_offer is not None:
            return (Refusal.PARTNER_UNANSWERED, "the box partner offer waits for its answer")
        seated = len(self.waiting) if self.seats is None else len(self.seats.players)
        if seated < MIN_PLAYERS:
            return (Refusal.NOT_ENOUGH_PLAYERS, "a game needs two players")
        return None

    def _partner_refusal(self, by: str) -> Refused:
        refused = self._actor_refusal(by)
        if refused is None and by != self.partner_offer:
            return (Refusal.NOTHING_OFFERED, "no partner seat is offered to you")
        return refused

    def _box_only(self, by: str) -> Refused:
        return None if by == self.box else (Refusal.NOT_BOX, "only the box may do that")

    # -- rules -----------------------------------------------------------------------

    def _decides_for(self, by: str, member: str) -> bool:
        """``by`` makes ``member``'s cube decisions: the member or their proxy (§8)."""
        return member in self.cubes and (by == member or self.proxies.get(member) == by)

    def _can_answer(self, member: str) -> bool:
        """Someone present decides for ``member`` (else they follow the captain, §8)."""
        proxy = self.proxies.get(member)
        return any(
            name is not None and self.at_table(name) and name not in self.absent
            for name in (member, proxy)
        )

    def _doubles_still_possible(self) -> bool:
        """Some member not yet doubling this window could still double."""
        return any(
            m not in self.team_doubles
            and self.cubes[m].owner is not CubeOwner.BOX
            and self._can_answer(m)
            for m in self.members_in_game()
        )

    def _counted(self, member: str, kind: WinKind) -> WinKind:
        """``kind`` as it counts for ``member``'s cube: single under the Jacoby rule while
        the cube was never turned (§2)."""
        if self.settings.jacoby and not self.cubes[member].turned:
            return WinKind.SINGLE
        return kind

    def _unanswered(self) -> tuple[str, ...]:
        offer = self.box_offer
        if offer is None:
            return ()
        return tuple(m for m in offer.members if m not in self.answers and self.in_game(m))

    def _beavered(self) -> tuple[str, ...]:
        offer = self.box_offer
        if offer is None:
            return ()
        return tuple(
            m for m in offer.members if self.answers.get(m) is Answer.BEAVER and self.in_game(m)
        )

    def _resign_offerer(self, offer: ChouetteResignation) -> str:
        return self._box() if offer.by_box else offer.member

    def _resign_answerer(self, offer: ChouetteResignation) -> str:
        return offer.member if offer.by_box else self._box()

    def _legal_results(self) -> LegalResults | None:
        if self.phase is not ChouettePhase.MOVE or self.dice is None:
            return None
        if self._legal is None:
            self._legal = legal_results(self.position, self.turn, self.dice)
        return self._legal

    def _seats(self) -> Seats:
        assert self.seats is not None
        return self.seats

    def _box(self) -> str:
        return self._seats().box


def raise_refused(refused: Refused) -> None:
    """Raise the refusal as an :class:`ActionError`, if there is one."""
    if refused is not None:
        raise ActionError(refused[1], refused[0])
