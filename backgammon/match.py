"""The match state machine: games, turns, the cube, resignations, scoring.

:class:`Match` is the single source of truth for a running match. At every moment it
says who must act (:attr:`Match.to_act`) and what each player may do
(:meth:`Match.allowed`), so the server never re-derives a rule. Every action checks
that it is allowed, changes the state, and returns the :mod:`backgammon.events` that
describe what happened; a refused action raises and changes nothing.

Rules that differ between FIBS and other rule sets follow FIBS by default and are
match options (:class:`MatchOptions`); docs/rules.md lists each choice. A match as
JSON, and back, is :mod:`backgammon.snapshot`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from backgammon.board import BAR, CHECKERS, Colour, Player, Position
from backgammon.dice import DiceRoller, Roll, roll
from backgammon.errors import ActionError, BackgammonError, Refusal
from backgammon.events import (
    AutoDoubled,
    CheckersMoved,
    CubeDropped,
    CubeOffered,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    Event,
    GameEnd,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    ResignationAccepted,
    ResignationOffered,
    ResignationRejected,
    TurnPassed,
    WinKind,
)
from backgammon.moves import LegalResults, Move, Play, apply_moves, legal_plays, legal_results
from backgammon.notation import (
    GameState,
    MatchIdState,
    encode_match_id,
    encode_position_id,
)
from backgammon.validate import validate_play


class Phase(enum.Enum):
    """Where a match stands."""

    NOT_STARTED = "not_started"  # no game has begun yet
    TURN = "turn"  # ``turn`` may double or roll
    MOVE = "move"  # ``turn`` has rolled and must move
    DOUBLED = "doubled"  # a cube offer waits for an answer
    GAME_OVER = "game_over"  # between games
    MATCH_OVER = "match_over"


class Action(enum.Enum):
    """What a player can do."""

    START_GAME = "start_game"
    ROLL = "roll"
    DOUBLE = "double"
    MOVE = "move"
    TAKE = "take"
    DROP = "drop"
    REDOUBLE = "redouble"
    RESIGN = "resign"
    ACCEPT_RESIGNATION = "accept_resignation"
    REJECT_RESIGNATION = "reject_resignation"


class MatchOptionsError(BackgammonError):
    """Match options that do not go together (a money-play option in match play...)."""


@dataclass(frozen=True)
class MatchOptions:
    """The rules a match is played under.

    FIBS defaults throughout (docs/rules.md): Crawford in match play, no Holland, no
    Jacoby, no beavers, no automatic doubles, doubling allowed even when the cube is
    dead for the doubler.
    """

    length: int = 0
    """Points to win; 0 is an unlimited match (money play)."""
    crawford: bool = True
    """Play the Crawford game (match play only)."""
    holland: bool = False
    """Post-Crawford, the trailer may double only after both sides have rolled twice."""
    jacoby: bool = False
    """Unlimited matches: gammons and backgammons count single while the cube was never turned."""
    instant_redoubles: int | None = 0
    """Unlimited matches: instant redoubles allowed in a row (1 beaver, 2 raccoon...);
    None for no limit. FIBS's ``set redoubles``."""
    auto_doubles: int = 0
    """Unlimited matches: how many opening ties may double the cube automatically."""
    cube_limit: int | None = None
    """The highest value the cube may reach; None for no limit."""
    dead_cube_doubles: bool = True
    """Allow doubling when the doubler would win the match with the current cube
    (FIBS allows it); False refuses such doubles."""

    def __post_init__(self) -> None:
        if self.length < 0:
            raise MatchOptionsError(
                f"match length must be 0 (unlimited) or more, not {self.length}"
            )
        if self.length:
            if self.jacoby:
                raise MatchOptionsError("the Jacoby rule is for unlimited matches only")
            if self.instant_redoubles != 0:
                raise MatchOptionsError("instant redoubles are for unlimited matches only")
            if self.auto_doubles:
                raise MatchOptionsError("automatic doubles are for unlimited matches only")
        if self.instant_redoubles is not None and self.instant_redoubles < 0:
            raise MatchOptionsError("instant redoubles must be 0 or more, or None")
        if self.auto_doubles < 0:
            raise MatchOptionsError("automatic doubles must be 0 or more")
        if self.cube_limit is not None and (
            self.cube_limit < 1 or self.cube_limit & (self.cube_limit - 1)
        ):
            raise MatchOptionsError("the cube limit must be a power of two")

    @property
    def unlimited(self) -> bool:
        return self.length == 0


@dataclass(frozen=True)
class CubeOffer:
    """A cube offer waiting for an answer."""

    doubler: Player
    """Who made the latest offer (the first double or an instant redouble)."""
    value: int
    """The cube's value if the offer is taken."""
    redoubles: int
    """Instant redoubles made so far in this exchange."""


@dataclass(frozen=True)
class Resignation:
    """A resignation waiting for an answer."""

    player: Player
    kind: WinKind
    points: int


def win_kind(position: Position, winner: Player) -> WinKind:
    """Single, gammon or backgammon for a game that ``winner`` just bore off in
    ``position`` (also the chouette's board, backgammon/chouette.py)."""
    loser = 1 - winner
    if position.off(loser):
        return WinKind.SINGLE
    counts = position.counts(loser)
    # The winner's home board (their points 1..6) is the loser's 19..24.
    if counts[BAR] or any(counts[19:25]):
        return WinKind.BACKGAMMON
    return WinKind.GAMMON


class Match:
    """A match between players 0 and 1, to ``options.length`` points or unlimited.

    Create it, then call :meth:`start_game`. ``o_player`` says who plays the FIBS
    colour O in the first game; colours swap at every new game (§3.2).
    """

    def __init__(self, options: MatchOptions, roller: DiceRoller, *, o_player: Player = 0) -> None:
        self.options = options
        self.roller = roller
        self.score = [0, 0]
        self.game = 0
        self.crawford_game = False
        self.crawford_played = False
        self.o_player: Player = o_player
        self.position = Position.start()
        self.phase = Phase.NOT_STARTED
        self.turn: Player = 0
        self.dice: Roll | None = None
        self.cube = 1
        self.cube_owner: Player | None = None
        self.offer: CubeOffer | None = None
        self.resignation: Resignation | None = None
        self.rolls = [0, 0]
        self.cube_turned = False
        self.auto_doubles = 0
        self.record: list[Event] = []
        self.history: list[list[Event]] = []
        self._legal: LegalResults | None = None
        """The legal plays of the dice out, in compact form (computed once a turn)."""
        self.version = 0
        """Counts the actions that changed this match (each ends in :meth:`_recorded`), so
        a cache of what was computed from it (a board, for instance) can tell one state
        from the next for one int compare. Not part of the snapshot."""

    # -- what is going on ------------------------------------------------------------

    @property
    def to_act(self) -> Player | None:
        """Who must act now (None between games and after the match)."""
        if self.resignation is not None:
            return 1 - self.resignation.player
        if self.phase is Phase.DOUBLED and self.offer is not None:
            return 1 - self.offer.doubler
        if self.phase in (Phase.TURN, Phase.MOVE):
            return self.turn
        return None

    @property
    def post_crawford(self) -> bool:
        """True in the games after the Crawford game."""
        return self.crawford_played and not self.crawford_game

    def colour(self, player: Player) -> Colour:
        """The FIBS colour ``player`` has in the current game."""
        return Colour.O if player == self.o_player else Colour.X

    def legal_plays(self) -> list[Play]:
        """The legal plays of the dice rolled (empty when no dice are out).

        Made at each call: the match keeps only their compact form for the turn
        (:class:`~backgammon.moves.LegalResults`), which is all it needs itself.
        """
        if self.phase is not Phase.MOVE or self.dice is None:
            return []
        return legal_plays(self.position, self.turn, self.dice)

    def moves_required(self) -> int:
        """How many checkers the player with dice must move (0 when none are out)."""
        legal = self._legal_results()
        return legal.required if legal is not None else 0

    def _legal_results(self) -> LegalResults | None:
        """The compact legal plays of the dice out (None when no dice are out)."""
        if self.phase is not Phase.MOVE or self.dice is None:
            return None
        if self._legal is None:
            self._legal = legal_results(self.position, self.turn, self.dice)
        return self._legal

    def allowed(self, player: Player) -> frozenset[Action]:
        """Every action ``player`` may take now."""
        return frozenset(a for a in Action if self._refusal(player, a) is None)

    def may(self, player: Player, action: Action) -> bool:
        """True when ``player`` may take ``action`` now: one question of :meth:`allowed`,
        without asking the others."""
        return self._refusal(player, action) is None

    def cube_available(self, player: Player) -> bool:
        """True when ``player`` may double now or later in this game (§3.4 "may double").

        False in the Crawford game, when the other player owns the cube, while an
        offer is pending, and when the cube limit is reached.
        """
        if self.phase not in (Phase.TURN, Phase.MOVE) or self.resignation is not None:
            return False
        if self.crawford_game:
            return False
        if self.cube_owner is not None and self.cube_owner != player:
            return False
        return self.options.cube_limit is None or self.cube * 2 <= self.options.cube_limit

    def may_double(self, player: Player) -> bool:
        """True when ``player`` may double right now."""
        return self.may(player, Action.DOUBLE)

    # -- actions ---------------------------------------------------------------------

    def start_game(self) -> list[Event]:
        """Begin the next game: the opening roll, and the first mover gets both dice."""
        self._check(None, Action.START_GAME)
        if self.game:
            self.o_player = 1 - self.o_player
            if self.crawford_game:
                self.crawford_played = True
        self.game += 1
        length = self.options.length
        self.crawford_game = bool(
            length
            and self.options.crawford
            and not self.crawford_played
            and length - 1 in self.score
            and max(self.score) > 0
        )
        self.position = Position.start()
        self.cube = 1
        self.cube_owner = None
        self.offer = None
        self.resignation = None
        self.rolls = [0, 0]
        self.cube_turned = False
        self.auto_doubles = 0
        self.record = []
        events: list[Event] = [
            GameStarted(self.game, self.o_player, self.crawford_game, self._score())
        ]
        while True:
            dice = (self.roller.die(), self.roller.die())
            if dice[0] != dice[1]:
                break
            events.append(OpeningRoll(dice, None))
            if self.auto_doubles < self.options.auto_doubles and self._cube_below_limit():
                self.auto_doubles += 1
                self.cube *= 2
                events.append(AutoDoubled(self.cube))
        starter: Player = 0 if dice[0] > dice[1] else 1
        events.append(OpeningRoll(dice, starter))
        self.turn = starter
        self._begin_move(Roll.of(dice[starter], dice[1 - starter]), events)
        return self._recorded(events)

    def roll(self, player: Player) -> list[Event]:
        """``player`` rolls the dice at the start of their turn."""
        self._check(player, Action.ROLL)
        events: list[Event] = []
        self._roll_for_turn(events)
        return self._recorded(events)

    def double(self, player: Player) -> list[Event]:
        """``player`` offers the cube before rolling."""
        self._check(player, Action.DOUBLE)
        self.offer = CubeOffer(player, self.cube * 2, 0)
        self.phase = Phase.DOUBLED
        return self._recorded([CubeOffered(player, self.cube * 2)])

    def take(self, player: Player) -> list[Event]:
        """``player`` takes the offered cube; the player whose turn it is then rolls."""
        self._check(player, Action.TAKE)
        assert self.offer is not None
        redoubled = self.offer.redoubles > 0
        self.cube = self.offer.value
        self.cube_owner = player
        self.cube_turned = True
        self.offer = None
        self.phase = Phase.TURN
        events: list[Event] = [CubeTaken(player, self.cube, redoubled)]
        self._roll_for_turn(events)
        return self._recorded(events)

    def drop(self, player: Player) -> list[Event]:
        """``player`` refuses the offer and loses the cube's value before it."""
        self._check(player, Action.DROP)
        assert self.offer is not None
        points = self.offer.value // 2
        events: list[Event] = [CubeDropped(player, points)]
        self._finish_game(1 - player, WinKind.SINGLE, GameEnd.DROPPED, points, events)
        return self._recorded(events)

    def redouble(self, player: Player) -> list[Event]:
        """``player`` takes the offer and at once redoubles (beaver, raccoon, ...)."""
        self._check(player, Action.REDOUBLE)
        assert self.offer is not None
        count = self.offer.redoubles + 1
        self.offer = CubeOffer(player, self.offer.value * 2, count)
        return self._recorded([CubeRedoubled(player, self.offer.value, count)])

    def move(self, player: Player, moves: Sequence[Move]) -> list[Event]:
        """``player`` plays their dice.

        :raises IllegalMoveError: the moves are not one legal play (nothing changes).
        """
        self._check(player, Action.MOVE)
        assert self.dice is not None
        play = validate_play(self.position, player, self.dice, moves, self._legal_results())
        result, hits = apply_moves(self.position, player, play.moves)
        self.position = result
        events: list[Event] = [CheckersMoved(player, play.moves, hits)]
        if result.off(player) == CHECKERS:
            kind = self._win_kind(player)
            points = self.cube * self._multiplier(kind)
            self._finish_game(player, kind, GameEnd.BORNE_OFF, points, events)
        else:
            self._pass_turn()
        return self._recorded(events)

    def resign(self, player: Player, kind: WinKind) -> list[Event]:
        """``player`` offers to resign the game at ``kind``'s value."""
        self._check(player, Action.RESIGN)
        points = self.cube * self._multiplier(kind)
        self.resignation = Resignation(player, kind, points)
        return self._recorded([ResignationOffered(player, kind, points)])

    def accept_resignation(self, player: Player) -> list[Event]:
        """``player`` accepts the opponent's resignation and wins its points."""
        self._check(player, Action.ACCEPT_RESIGNATION)
        assert self.resignation is not None
        offer = self.resignation
        self.resignation = None
        self.offer = None
        events: list[Event] = [ResignationAccepted(player, offer.points)]
        self._finish_game(player, offer.kind, GameEnd.RESIGNED, offer.points, events)
        return self._recorded(events)

    def reject_resignation(self, player: Player) -> list[Event]:
        """``player`` refuses the resignation; the game goes on where it was."""
        self._check(player, Action.REJECT_RESIGNATION)
        self.resignation = None
        return self._recorded([ResignationRejected(player)])

    # -- rules -----------------------------------------------------------------------

    def _check(self, player: Player | None, action: Action) -> None:
        refusal = self._refusal(player, action)
        if refusal is not None:
            raise ActionError(refusal[1], refusal[0])

    def _refusal(self, player: Player | None, action: Action) -> tuple[Refusal, str] | None:
        """Why ``player`` may not take ``action`` now, as (reason, message), or None."""
        if action is Action.START_GAME:
            if self.phase is Phase.MATCH_OVER:
                return (Refusal.MATCH_OVER, "the match is over")
            if self.phase not in (Phase.NOT_STARTED, Phase.GAME_OVER):
                return (Refusal.GAME_IN_PROGRESS, "a game is in progress")
            return None
        if self.phase is Phase.MATCH_OVER:
            return (Refusal.MATCH_OVER, "the match is over")
        if self.phase in (Phase.NOT_STARTED, Phase.GAME_OVER):
            return (Refusal.NO_GAME, "no game is in progress")
        assert player is not None
        if self.resignation is not None:
            if self.resignation.player == player:
                if action is Action.RESIGN:
                    return (Refusal.ALREADY_RESIGNED, "you already offered to resign")
                return (Refusal.RESIGN_PENDING_YOURS, "your resignation waits for an answer")
            if action in (Action.ACCEPT_RESIGNATION, Action.REJECT_RESIGNATION):
                return None
            return (Refusal.RESIGN_PENDING_THEIRS, "the opponent offered to resign")
        if action in (Action.ACCEPT_RESIGNATION, Action.REJECT_RESIGNATION):
            return (Refusal.NOTHING_OFFERED, "nobody offered to resign")
        if action is Action.RESIGN:
            return None
        if self.phase is Phase.DOUBLED:
            assert self.offer is not None
            if self.offer.doubler == player:
                return (Refusal.DOUBLE_PENDING_YOURS, "your cube offer waits for an answer")
            if action in (Action.TAKE, Action.DROP):
                return None
            if action is Action.REDOUBLE:
                return self._redouble_refusal()
            return (Refusal.MUST_ANSWER_DOUBLE, "answer the cube offer first")
        if action in (Action.TAKE, Action.DROP, Action.REDOUBLE):
            if action is Action.REDOUBLE and self.options.length:
                return (
                    Refusal.REDOUBLES_UNLIMITED_ONLY,
                    "instant redoubles are for unlimited matches",
                )
            return (Refusal.NOTHING_OFFERED, "nobody offered the cube")
        if player != self.turn:
            return (Refusal.NOT_YOUR_TURN, "it is not your turn")
        if action is Action.ROLL:
            return (
                (Refusal.ALREADY_ROLLED, "the dice are already rolled")
                if self.phase is Phase.MOVE
                else None
            )
        if action is Action.MOVE:
            return (Refusal.MUST_ROLL, "roll the dice first") if self.phase is Phase.TURN else None
        return self._double_refusal(player)

    def _double_refusal(self, player: Player) -> tuple[Refusal, str] | None:
        """Why ``player``, whose turn it is, may not double now."""
        if self.crawford_game:  # named first: GBOT reacts to FIBS's Crawford text (§4.6)
            return (Refusal.CRAWFORD, "no doubling in the Crawford game")
        if self.phase is Phase.MOVE:
            return (Refusal.ALREADY_ROLLED, "doubling comes before rolling")
        if self.cube_owner is not None and self.cube_owner != player:
            return (Refusal.NOT_OWNER, "the opponent owns the cube")
        if not self._cube_below_limit():
            return (Refusal.CUBE_LIMIT, "the cube has reached its limit")
        length = self.options.length
        trailer = self.score[player] < length - 1
        if self.options.holland and self.post_crawford and trailer and min(self.rolls) < 2:
            return (Refusal.HOLLAND, "the Holland rule: both sides must roll twice first")
        if (
            length
            and not self.options.dead_cube_doubles
            and self.score[player] + self.cube >= length
        ):
            return (Refusal.DEAD_CUBE, "the cube is dead: you win the match with it as it is")
        return None

    def _redouble_refusal(self) -> tuple[Refusal, str] | None:
        assert self.offer is not None
        if self.options.length:
            return (Refusal.REDOUBLES_UNLIMITED_ONLY, "instant redoubles are for unlimited matches")
        limit = self.options.instant_redoubles
        if limit is not None and self.offer.redoubles >= limit:
            return (Refusal.REDOUBLE_LIMIT, "no more instant redoubles are allowed")
        cube_limit = self.options.cube_limit
        if cube_limit is not None and self.offer.value * 2 > cube_limit:
            return (Refusal.CUBE_LIMIT, "the cube has reached its limit")
        return None

    def _cube_below_limit(self) -> bool:
        limit = self.options.cube_limit
        return limit is None or self.cube * 2 <= limit

    def _multiplier(self, kind: WinKind) -> int:
        """Points per cube of a win of ``kind`` (1 under the Jacoby rule before a double)."""
        if self.options.jacoby and self.options.unlimited and not self.cube_turned:
            return 1
        return kind.multiplier

    def _win_kind(self, winner: Player) -> WinKind:
        return win_kind(self.position, winner)

    # -- state changes ---------------------------------------------------------------

    def _roll_for_turn(self, events: list[Event]) -> None:
        """Roll for the player whose turn it is; pass the turn if nothing can move."""
        self._begin_move(roll(self.roller), events, announce=True)

    def _begin_move(self, dice: Roll, events: list[Event], *, announce: bool = False) -> None:
        """The player whose turn it is has ``dice`` (announced unless it is the opening)."""
        self.phase = Phase.MOVE
        self.dice = dice
        self._legal = None
        self.rolls[self.turn] += 1
        required = self.moves_required()
        if announce:
            events.append(DiceRolled(self.turn, dice, required))
        if required == 0:
            events.append(TurnPassed(self.turn))
            self._pass_turn()

    def _pass_turn(self) -> None:
        self.turn = 1 - self.turn
        self.phase = Phase.TURN
        self.dice = None
        self._legal = None

    def _finish_game(
        self, winner: Player, kind: WinKind, end: GameEnd, points: int, events: list[Event]
    ) -> None:
        self.score[winner] += points
        self.dice = None
        self._legal = None
        self.offer = None
        self.resignation = None
        events.append(GameWon(winner, kind, end, points, self._score()))
        length = self.options.length
        if length and self.score[winner] >= length:
            self.phase = Phase.MATCH_OVER
            events.append(MatchWon(winner, self._score()))
        else:
            self.phase = Phase.GAME_OVER

    def _recorded(self, events: list[Event]) -> list[Event]:
        """Append ``events`` to the current game's record and return them; the match
        changed (:attr:`version`)."""
        self.version += 1
        self.record.extend(events)
        if self.phase in (Phase.GAME_OVER, Phase.MATCH_OVER) and any(
            isinstance(e, GameWon) for e in events
        ):
            self.history.append(self.record)
            self.record = []
        return events

    def _score(self) -> tuple[int, int]:
        return (self.score[0], self.score[1])

    # -- gnubg identifiers -----------------------------------------------------------

    def position_id(self) -> str:
        """The gnubg Position ID, seen from the player whose turn it is."""
        return encode_position_id(self.position, self.turn)

    def match_id(self) -> str:
        """The gnubg Match ID of the current state (players 0 and 1 as gnubg's)."""
        if self.phase in (Phase.GAME_OVER, Phase.MATCH_OVER):
            state = GameState.OVER
        elif self.phase is Phase.NOT_STARTED:
            state = GameState.NONE
        else:
            state = GameState.PLAYING
        to_act = self.to_act
        return encode_match_id(
            MatchIdState(
                cube=self.cube,
                cube_owner=self.cube_owner,
                on_roll=self.turn,
                crawford=self.crawford_game,
                state=state,
                turn=self.turn if to_act is None else to_act,
                double_offered=self.phase is Phase.DOUBLED,
                resigned=self.resignation.kind.multiplier if self.resignation else 0,
                dice=(self.dice.d1, self.dice.d2) if self.dice else (0, 0),
                length=self.options.length,
                score=self._score(),
            )
        )
