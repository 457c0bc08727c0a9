"""What one viewer sees of a table: the value behind a ``board:`` line and the ASCII boards.

Two frozen value types:

* :class:`BoardState` - one table in absolute FIBS terms (§3.2): the O side, the X side,
  the 26 signed board numbers, whose turn, the cube. It knows nothing about receivers. The
  server's adapter builds it from the rules core's match snapshot.
* :class:`BoardView` - the same moment for ONE receiver (§3.3): "player" is the perspective
  player (the receiver when playing, the watched/looked-at player otherwise), "opponent" the
  other one; every player/opponent pair is in that order. :meth:`BoardView.for_viewer`
  does the per-receiver swap; :mod:`protocol.board_fibs` writes and reads it as a
  ``board:`` line, :mod:`protocol.board_ascii` draws it.

Unlimited values are ``None`` in Python and ``9999`` on the wire: the match length
(field 3, §3.1) and the number of instant redoubles (field 52; the FIBS author's
``fibsboard.c`` uses 9999 for "unlimited redoubles", §3.7). Decisions: D22-D27 in
docs/protocol-decisions.md.
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from backgammon.board import CHECKERS, Colour, Player, Position

Dice: TypeAlias = tuple[int, int]
"""Two dice as shown on a board, ``(0, 0)`` for "not rolled" (§3.4, fields 33-36)."""

NO_DICE: Final[Dice] = (0, 0)
UNLIMITED_WIRE: Final = 9999
"""How an unlimited match length or unlimited redoubles appear on the wire (§3.1)."""
YOU: Final = "You"
"""Field 1 of a ``board:`` line sent to a playing user (§3.1)."""


class BoardStyle(enum.IntEnum):
    """The ``boardstyle`` setting (§3.6): how a board is shown to a user."""

    ASCII = 1
    """Point numbers in the frame lines."""
    ASCII_NUMBERS_OUTSIDE = 2
    """Point numbers on their own lines above and below the frame."""
    RAW = 3
    """The ``board:`` line."""


def _check_dice(dice: Dice, what: str) -> None:
    if len(dice) != 2 or not (0 <= dice[0] <= 6 and 0 <= dice[1] <= 6):
        raise ValueError(f"{what} must be two numbers 0..6, not {dice!r}")


def _check_board(board: Sequence[int]) -> None:
    if len(board) != 26:
        raise ValueError(f"a FIBS board has 26 numbers, not {len(board)}")
    if board[0] > 0 or board[25] < 0:
        raise ValueError("board[0] is X's bar (<= 0) and board[25] O's bar (>= 0), §3.2")


def _normalise_board_and_length(value: BoardState | BoardView) -> tuple[int, ...]:
    """Store ``value``'s board as a tuple and its match length normalised; check the
    board and return it. Attributes are set only when normalising changes them: each
    set of a frozen field is a call of ``object.__setattr__``, and a state is made per
    match action."""
    board = value.board
    if type(board) is not tuple:
        board = tuple(board)
        object.__setattr__(value, "board", board)
    length = _normalise_length(value.match_length)
    if length is not value.match_length:
        object.__setattr__(value, "match_length", length)
    _check_board(board)
    return board


_NUMBER_TEXT: Final = {n: str(n) for n in range(-CHECKERS, CHECKERS + 1)}


def _board_text(board: tuple[int, ...]) -> str:
    """Fields 6-31 of a ``board:`` line: the 26 numbers joined by ``:`` (§3.1)."""
    try:
        # The texts of -15..15 looked up rather than made: twice as fast.
        return ":".join(map(_NUMBER_TEXT.__getitem__, board))
    except KeyError:
        return ":".join(map(str, board))


def _normalise_length(length: int | None) -> int | None:
    if length is None or length == 0:
        return None
    if length < 0 or length == UNLIMITED_WIRE:
        raise ValueError(f"match length must be >= 1 or None (unlimited), not {length}")
    return length


@dataclass(frozen=True, slots=True)
class SideState:
    """One player of a table in absolute terms (the O or the X side of :class:`BoardState`)."""

    name: str
    """Login name."""
    score: int = 0
    """Points won so far in this match."""
    dice: Dice = NO_DICE
    """The dice this side rolled and has not finished moving with, else ``(0, 0)`` (§3.4)."""
    may_double: bool = False
    """Field 38/39 for this side as FIBS sends it (§3.4, D24): the cube is centred or this
    side owns it, and no double is pending. Not "may double now": FIBS sends 1 in the
    Crawford game too, and bots read 0/0 on the mover's turn as a pending double."""


@dataclass(frozen=True, slots=True)
class BoardState:
    """One table at one moment in absolute O/X terms (§3.2), independent of any receiver.

    :raises ValueError: on a board that is not 26 numbers, dice outside 0..6, or a cube < 1.
    """

    o: SideState
    """The player who has the colour O (positive numbers, moves 24 -> 1)."""
    x: SideState
    """The player who has the colour X (negative numbers, moves 1 -> 24)."""
    board: tuple[int, ...]
    """The 26 signed absolute numbers of §3.1, e.g. ``position.fibs_board(o_player)``."""
    match_length: int | None
    """Points to win, or ``None`` (or ``0``, normalised to ``None``) for unlimited."""
    turn: Colour | None = None
    """The colour that has to act (during a pending double: the side that must answer),
    ``None`` between games (§3.4, field 32)."""
    cube: int = 1
    doubled: Colour | None = None
    """The colour that must answer a pending double, if any (drives "was doubled", §3.4)."""
    can_move: int = 0
    """How many checkers the side on turn must move with its dice (``Please move N pieces.``)."""
    no_crawford: int = 0
    """Field 50: 0 when the match uses the Crawford rule, e.g. 3 when it does not and a
    player is 1-away (§3.4 recommendation)."""
    post_crawford: int = 0
    """Field 51: 1 in post-Crawford games, else 0 (§3.4 recommendation)."""
    redoubles: int | None = 0
    """Instant redoubles allowed in this (unlimited) match, ``None`` for unlimited; 0 for
    limited matches (§3.4, field 52)."""

    # Derived once per state, for every view of it (a state is shown to both players
    # and the watchers): not arguments, not compared, not in the repr.
    board_text: str = field(init=False, repr=False, compare=False)
    """Fields 6-31 of every view's ``board:`` line: the 26 numbers joined by ``:``."""
    _off_and_bar: tuple[int, int, int, int] = field(init=False, repr=False, compare=False)
    """O's and X's checkers borne off, O's and X's checkers on the bar."""

    def __post_init__(self) -> None:
        board = _normalise_board_and_length(self)
        _check_dice(self.o.dice, "O's dice")
        _check_dice(self.x.dice, "X's dice")
        if self.cube < 1:
            raise ValueError(f"the cube is at least 1, not {self.cube}")
        object.__setattr__(self, "board_text", _board_text(board))
        object.__setattr__(self, "_off_and_bar", _off_and_bar(board))

    def side(self, colour: Colour) -> SideState:
        """The :class:`SideState` of ``colour``."""
        return self.o if colour is Colour.O else self.x

    def with_sides(self, o: SideState, x: SideState) -> BoardState:
        """This state with other sides (a flag or dice of theirs changed): the board and
        what was derived from it stay, so nothing is checked or derived again (the
        boards before every roll the server makes for a player take one, D278:
        ``dataclasses.replace`` ran the checks and derivations each time)."""
        state = object.__new__(BoardState)
        set_ = object.__setattr__
        for name, value in zip(_STATE_SLOTS, _state_values(self), strict=True):
            set_(state, name, value)
        set_(state, "o", o)
        set_(state, "x", x)
        return state

    def position(self, o_player: Player = 0) -> Position:
        """The core :class:`Position` of this board, with ``o_player`` as the O player."""
        return Position.from_fibs_board(self.board, o_player)


_STATE_SLOTS: Final[tuple[str, ...]] = BoardState.__slots__
_state_values: Final = operator.attrgetter(*_STATE_SLOTS)
"""Every slot's value of a :class:`BoardState` in one call (:meth:`BoardState.with_sides`)."""


def _off_and_bar(board: Sequence[int]) -> tuple[int, int, int, int]:
    """O's and X's checkers borne off (what is missing from fifteen, §3.4), O's and X's
    checkers on the bar (``board[25]`` and ``-board[0]``, §3.2)."""
    # O's checkers are the positive numbers, X's the negative ones: their sums are
    # (sum + sum of absolute values) / 2 and (sum - sum of absolute values) / 2, two
    # loops in C instead of two in Python.
    total, size = sum(board), sum(map(abs, board))
    return CHECKERS - (total + size) // 2, CHECKERS + (total - size) // 2, board[25], -board[0]


@dataclass(frozen=True, slots=True)
class BoardView:
    """One receiver's view of a table: the 53 fields of a ``board:`` line (§3.1), typed.

    Field numbers of §3.1 are given per attribute. Direction, home and bar (fields 42-44)
    are not stored: §3.2 allows only two patterns, both fixed by :attr:`colour`.

    :raises ValueError: on a board that is not 26 numbers or dice outside 0..6.
    """

    player: str
    """Field 1: ``You`` for a playing receiver, else the perspective player's name."""
    opponent: str
    """Field 2: the other player's name."""
    match_length: int | None
    """Field 3: points to win; ``None`` (wire ``9999``) for unlimited; 0 is read as None."""
    player_score: int
    """Field 4."""
    opponent_score: int
    """Field 5."""
    board: tuple[int, ...]
    """Fields 6-31: the 26 absolute numbers, never transformed per receiver (§3.3)."""
    turn: Colour | None
    """Field 32: colour to act, ``None`` (wire ``0``) between games."""
    player_dice: Dice
    """Fields 33-34."""
    opponent_dice: Dice
    """Fields 35-36."""
    cube: int
    """Field 37."""
    player_may_double: bool
    """Field 38."""
    opponent_may_double: bool
    """Field 39."""
    was_doubled: bool
    """Field 40: the opponent doubled and the player must answer (§3.4)."""
    colour: Colour
    """Field 41: the perspective player's colour (fields 42-44 follow from it)."""
    player_home: int
    """Field 45: the player's checkers borne off."""
    opponent_home: int
    """Field 46."""
    player_bar: int
    """Field 47: the player's checkers on the bar."""
    opponent_bar: int
    """Field 48."""
    can_move: int
    """Field 49: checkers the player must move now (0 unless the player has dice)."""
    no_crawford: int = 0
    """Field 50 (FIBS: "forced move"); see :attr:`BoardState.no_crawford`."""
    post_crawford: int = 0
    """Field 51 (FIBS: "did crawford"); see :attr:`BoardState.post_crawford`."""
    redoubles: int | None = 0
    """Field 52: instant redoubles allowed, ``None`` (wire ``9999``) for unlimited."""
    player_login: str | None = field(default=None, compare=False)
    """The perspective player's login name when field 1 is ``You``. Not on the wire (a
    parsed line leaves it ``None``) and ignored by ``==``; the ASCII board's frame label
    needs it (§3.7)."""
    board_text: str = field(init=False, repr=False, compare=False)
    """Fields 6-31: :attr:`board` joined by ``:`` (derived, the same for every viewer)."""

    def __post_init__(self) -> None:
        board = _normalise_board_and_length(self)
        _check_dice(self.player_dice, "player's dice")
        _check_dice(self.opponent_dice, "opponent's dice")
        object.__setattr__(self, "board_text", _board_text(board))

    # -- construction ---------------------------------------------------------------

    @classmethod
    def for_viewer(
        cls,
        state: BoardState,
        perspective: Colour,
        *,
        you: bool = True,
    ) -> BoardView:
        """The view of ``state`` for a receiver whose perspective player has ``perspective``.

        ``you`` is true when the receiver is that player (field 1 = ``You``), false for a
        watcher or a ``look`` (field 1 = the player's name, §3.3, §3.5). "Was doubled" is
        set only for the playing receiver who must answer a double (§3.4); "can move" only
        when the perspective player is the one to move with dice.
        """
        # ``state`` was checked when it was made (board, dice, match length) and its
        # borne-off and bar counts computed once for all views: the view is filled in
        # directly, without the constructor's checks.
        view = object.__new__(cls)
        set_ = object.__setattr__
        for name, value in zip(_VIEW_SLOTS, viewer_fields(state, perspective, you), strict=True):
            set_(view, name, value)
        return view

    # -- derived fields ---------------------------------------------------------------

    @property
    def direction(self) -> int:
        """Field 42: -1 when the player moves 24 -> 1 (O), 1 when 1 -> 24 (X), §3.2."""
        return -1 if self.colour is Colour.O else 1

    @property
    def home(self) -> int:
        """Field 43: 0 for O, 25 for X ("obsolete but included", §3.1)."""
        return 0 if self.colour is Colour.O else 25

    @property
    def bar(self) -> int:
        """Field 44: 25 for O, 0 for X (§3.1)."""
        return 25 if self.colour is Colour.O else 0

    @property
    def unlimited(self) -> bool:
        """True for an unlimited match (wire length 9999)."""
        return self.match_length is None

    @property
    def player_name(self) -> str:
        """The perspective player's login name if known, else field 1."""
        return self.player_login if self.player_login is not None else self.player

    def side_name(self, colour: Colour) -> str:
        """Field 1 or 2, whichever belongs to ``colour`` (``You`` for a playing receiver)."""
        return self.player if colour is self.colour else self.opponent

    def position(self, player_index: Player = 0) -> Position:
        """The core :class:`Position`, with the perspective player as ``player_index``."""
        o_player = player_index if self.colour is Colour.O else 1 - player_index
        return Position.from_fibs_board(self.board, o_player)


_VIEW_SLOTS: Final[tuple[str, ...]] = BoardView.__slots__
"""A view's fields in the order :func:`viewer_fields` gives their values."""

ViewerFields: TypeAlias = tuple[
    str, str, int | None, int, int, tuple[int, ...], Colour | None, Dice, Dice, int,
    bool, bool, bool, Colour, int, int, int, int, int, int, int, int | None, str, str,
]  # fmt: skip
"""A :class:`BoardView`'s values in its slots' order (``player`` ... ``board_text``)."""


def viewer_fields(state: BoardState, perspective: Colour, you: bool) -> ViewerFields:
    """The values of :meth:`BoardView.for_viewer` ``(state, perspective, you=you)``, in
    the order of :class:`BoardView`'s slots, without making the view: the ``board:``
    line is written straight from them (:func:`protocol.board_fibs.board_line`), and a
    view made costs one ``object.__setattr__`` per field (docs/performance.md §24).

    The per-receiver swap of §3.3: the perspective player's fields first; "was
    doubled" only for the playing receiver who must answer a double (§3.4); "can move"
    only when the perspective player is the one to move with dice.
    """
    if perspective is Colour.O:
        me, other = state.o, state.x
        home, other_home, bar, other_bar = state._off_and_bar
    else:
        me, other = state.x, state.o
        other_home, home, other_bar, bar = state._off_and_bar
    turn = state.turn
    return (
        YOU if you else me.name,
        other.name,
        state.match_length,
        me.score,
        other.score,
        state.board,
        turn,
        me.dice,
        other.dice,
        state.cube,
        me.may_double,
        other.may_double,
        you and state.doubled is perspective,
        perspective,
        home,
        other_home,
        bar,
        other_bar,
        state.can_move if turn is perspective and me.dice != NO_DICE else 0,
        state.no_crawford,
        state.post_crawford,
        state.redoubles,
        me.name,
        state.board_text,
    )
