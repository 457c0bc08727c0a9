"""The rules core's exception tree: every error is a :class:`ValueError`.

The core never prints or logs; callers map these to user replies in one place
(``protocol`` turns them into FIBS texts). Each class separates one kind of
failure so a caller can tell syntax from legality from turn/phase problems.
"""

from __future__ import annotations

import enum


class BackgammonError(ValueError):
    """Base of every error the rules core raises."""


class InvalidPositionError(BackgammonError):
    """A position that cannot exist (wrong checker count, both sides on one point...)."""


class InvalidIdError(BackgammonError):
    """A gnubg Position ID or Match ID that does not decode."""


class InvalidRollError(BackgammonError):
    """Dice text or values outside 1..6."""


class MoveSyntaxError(BackgammonError):
    """Move text that does not parse (an unknown word, a half move).

    :ivar index: 0-based index of the offending move in the text.
    :ivar word: the word that was not understood.
    :ivar incomplete: the text ended in the middle of a move (a source with no
        destination), which FIBS answers as a wrong count of moves.
    """

    def __init__(
        self, message: str, *, index: int = 0, word: str = "", incomplete: bool = False
    ) -> None:
        super().__init__(message)
        self.index = index
        self.word = word
        self.incomplete = incomplete


class IllegalReason(enum.Enum):
    """Why a submitted play was refused (see docs/rules.md for the FIBS texts)."""

    TOO_FEW = "too_few"  # fewer moves than the dice allow
    TOO_MANY = "too_many"  # more moves than the dice allow
    NO_CHECKER = "no_checker"  # nothing of the mover's on the source point
    WRONG_DISTANCE = "wrong_distance"  # no remaining die fits, or the die may not be used
    BLOCKED = "blocked"  # destination held by two or more opposing checkers
    MUST_ENTER = "must_enter"  # a checker on the bar must enter first
    NOT_ALL_HOME = "not_all_home"  # bearing off before all fifteen are home
    CANNOT_BEAR_OFF = "cannot_bear_off"  # bear-off with a die too small, or checkers above
    BACKWARDS = "backwards"  # a move that does not go toward home


class IllegalMoveError(BackgammonError):
    """A play that the rules do not allow.

    :ivar reason: which rule refused it.
    :ivar index: 0-based index of the offending move (0 for count errors).
    :ivar point: the point named in the reply (source, distance or destination), if any.
    :ivar count: for TOO_FEW/TOO_MANY, the number of moves required.
    """

    def __init__(
        self,
        message: str,
        reason: IllegalReason,
        *,
        index: int = 0,
        point: int | None = None,
        count: int = 0,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.index = index
        self.point = point
        self.count = count


class Refusal(enum.Enum):
    """Why an action is not allowed now (:class:`ActionError`); the values are stable codes.

    ``protocol.replies.refusal`` gives the FIBS text for each, per command.
    """

    MATCH_OVER = "match_over"
    GAME_IN_PROGRESS = "game_in_progress"  # a new game while one is being played
    NO_GAME = "no_game"  # between games: nobody has joined the next one yet
    ALREADY_RESIGNED = "already_resigned"  # a second resignation while one waits
    RESIGN_PENDING_YOURS = "resign_pending_yours"  # your resignation waits for an answer
    RESIGN_PENDING_THEIRS = "resign_pending_theirs"  # answer the opponent's resignation first
    NOTHING_OFFERED = "nothing_offered"  # accept/reject/redouble with no offer to answer
    DOUBLE_PENDING_YOURS = "double_pending_yours"  # your cube offer waits for an answer
    MUST_ANSWER_DOUBLE = "must_answer_double"  # answer the opponent's cube offer first
    REDOUBLES_UNLIMITED_ONLY = "redoubles_unlimited_only"  # instant redoubles in a match
    REDOUBLE_LIMIT = "redouble_limit"  # no more instant redoubles allowed
    NOT_YOUR_TURN = "not_your_turn"
    ALREADY_ROLLED = "already_rolled"
    MUST_ROLL = "must_roll"  # a move before the roll
    NOT_OWNER = "not_owner"  # a double while the opponent owns the cube
    CRAWFORD = "crawford"  # no doubling in the Crawford game
    HOLLAND = "holland"  # the Holland rule: both sides roll twice first
    DEAD_CUBE = "dead_cube"  # the cube already wins the match as it is
    CUBE_LIMIT = "cube_limit"  # the cube reached its limit
    # The chouette (backgammon/chouette.py, docs/chouette.md):
    TABLE_FULL = "table_full"  # ten players already at the table
    ALREADY_SEATED = "already_seated"  # a join by someone already at the table
    NOT_SEATED = "not_seated"  # the player is not at the table (or has left it)
    NOT_ENOUGH_PLAYERS = "not_enough_players"  # a game needs two players
    ABSENT = "absent"  # an absent player acts, or is asked to answer
    PARTNER_UNANSWERED = "partner_unanswered"  # the box partner offer waits for its answer
    NOT_BOX = "not_box"  # only the box may do that
    NOT_CAPTAIN = "not_captain"  # only the (acting) captain may do that
    NOT_IN_GAME = "not_in_game"  # that member's cube is not in the game (settled, or none)
    NOT_YOUR_CUBE = "not_your_cube"  # a cube decision for a member who did not delegate it
    ALREADY_DOUBLED = "already_doubled"  # a second double on one cube before the box answers
    BOX_MUST_ACCEPT_HALF = "box_must_accept_half"  # the box's constraint on initial doubles
    BOX_DOUBLE_NEEDS_CAPTAIN = "box_double_needs_captain"  # L.A.: cubes level, captain included
    SINGLE_CUBE = "single_cube"  # the single cube moves for the whole team, never in part
    BEAVERS_OFF = "beavers_off"  # a beaver (or raccoon) the table's settings do not allow
    BAD_PROXY = "bad_proxy"  # a delegation to someone who cannot be a proxy
    NO_DECISION = "no_decision"  # a time-out with no decision waiting


class ActionError(BackgammonError):
    """An action that is not allowed now: wrong player, wrong phase, rule forbids it.

    :ivar reason: why, which ``protocol`` maps to the FIBS reply.
    """

    def __init__(self, message: str, reason: Refusal) -> None:
        super().__init__(message)
        self.reason = reason


class SnapshotError(BackgammonError):
    """A match snapshot that does not describe a valid match."""
