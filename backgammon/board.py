"""Positions: the checkers of both players, on the points, on the bar and borne off.

Each player sees the board in their own numbering: their checkers move from their
24-point toward their 1-point and bear off. Index 0 is "off" (borne off), 1..24 are
the points, 25 is the bar. A point that is player A's ``n`` is player B's ``25 - n``.

FIBS uses one absolute numbering for both sides (shared/docs/fibs-protocol.md §3.2):
the colour O moves 24 -> 1 (so O's own numbering *is* the absolute one, O's bar is
``board[25]``), the colour X moves 1 -> 24 (X's own point ``n`` is absolute
``25 - n``, X's bar is ``board[0]``). :func:`to_absolute` and :func:`from_absolute`
convert points; :meth:`Position.fibs_board` and :meth:`Position.from_fibs_board` convert
whole boards.

Internally each side is one integer with four bits per index (index ``i`` at bits
``4i .. 4i+3``): moving a checker is one subtraction and one addition, which keeps
legal-play generation fast in pure Python.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple, TypeAlias

from backgammon.errors import InvalidPositionError

Player: TypeAlias = int
"""A player of a game or match: 0 or 1."""

OFF = 0
"""Index of the borne-off checkers in a player's own numbering."""
BAR = 25
"""Index of the bar in a player's own numbering."""
CHECKERS = 15
"""Checkers per side."""

SHIFT = tuple(4 * i for i in range(27))
"""Bit offset of each index in the packed form."""
UNIT = tuple(1 << s for s in SHIFT)
"""One checker at each index, packed."""
NIBBLE = 15


class Colour(enum.Enum):
    """FIBS colours (§3.2): O moves from 24 to 1, X from 1 to 24."""

    O = 1
    X = -1

    @property
    def other(self) -> Colour:
        return Colour.X if self is Colour.O else Colour.O


def to_absolute(point: int, colour: Colour) -> int:
    """Convert a player's own point (1..24) to the FIBS absolute number for ``colour``."""
    return point if colour is Colour.O else 25 - point


def from_absolute(point: int, colour: Colour) -> int:
    """Convert a FIBS absolute point (1..24) to the own number of the ``colour`` player."""
    return point if colour is Colour.O else 25 - point


def pack(counts: Sequence[int]) -> int:
    """Pack 26 counts (off, points 1..24, bar) into the nibble form."""
    packed = 0
    for i, n in enumerate(counts):
        packed |= n << SHIFT[i]
    return packed


_SIDE_MASK = (1 << SHIFT[26]) - 1
"""The 26 nibbles of a packed side (off, points 1..24, bar)."""
_HEX_DIGIT_VALUE = bytes.maketrans(b"0123456789abcdef", bytes(range(16)))


def _nibbles_high_first(packed: int) -> bytes:
    """The 26 nibbles of ``packed`` as byte values, index 25 (the bar) first.

    One hex digit is one nibble: formatting and translating the digits is several times
    faster than 26 shifts and masks in Python (boards are unpacked for every board sent).
    """
    return format(packed & _SIDE_MASK, "026x").encode().translate(_HEX_DIGIT_VALUE)


def unpack(packed: int) -> tuple[int, ...]:
    """Unpack the nibble form into 26 counts (off, points 1..24, bar)."""
    return tuple(_nibbles_high_first(packed)[::-1])


_START_COUNTS = [0] * 26
_START_COUNTS[24], _START_COUNTS[13], _START_COUNTS[8], _START_COUNTS[6] = 2, 5, 3, 5
_START = pack(_START_COUNTS)


class Position(NamedTuple):
    """An immutable backgammon position: both players' checkers in their own numbering.

    ``side0`` and ``side1`` are the players' packed sides (four bits per index). Build
    one with :meth:`start`, :meth:`from_counts`, :meth:`from_fibs_board` or
    ``backgammon.notation.decode_position_id``; the constructor itself does no checks.
    A NamedTuple because it is the cheapest immutable value to create, and legal-play
    generation creates one per distinct play.
    """

    side0: int
    side1: int

    # -- construction ---------------------------------------------------------------

    @classmethod
    def start(cls) -> Position:
        """The standard starting position: 2 on the 24, 5 on the 13, 3 on the 8, 5 on the 6."""
        return cls(_START, _START)

    @classmethod
    def from_counts(cls, side0: Sequence[int], side1: Sequence[int]) -> Position:
        """Build a position from 26 counts per player (off, points 1..24, bar), checked.

        A side may list 25 counts (points 1..24 and bar, gnubg's order); the rest of
        its fifteen checkers are then borne off.

        :raises InvalidPositionError: on wrong lengths, negative counts, more than
            fifteen checkers, or both players on one point.
        """
        sides = (_normalise(side0, 0), _normalise(side1, 1))
        for n in range(1, 25):
            if sides[0][n] and sides[1][25 - n]:
                raise InvalidPositionError(f"both players have checkers on player 0's point {n}")
        return cls(pack(sides[0]), pack(sides[1]))

    @classmethod
    def from_fibs_board(cls, board: Sequence[int], o_player: Player = 0) -> Position:
        """Build a position from the 26 signed FIBS board numbers of a ``board:`` line.

        ``board[i]`` > 0 counts O's checkers on absolute point ``i``, < 0 X's; ``board[25]``
        is O's bar and ``board[0]`` X's bar (§3.2). Borne-off checkers are what is missing
        from fifteen. ``o_player`` says which player of the result is O.
        """
        if len(board) != 26:
            raise InvalidPositionError(f"a FIBS board has 26 numbers, not {len(board)}")
        o = [0] * 26
        x = [0] * 26
        for i, v in enumerate(board):
            if i in (0, 25):
                if (i == 25 and v < 0) or (i == 0 and v > 0):
                    raise InvalidPositionError(f"wrong colour on the bar at board[{i}]")
                if i == 25:
                    o[BAR] = v
                else:
                    x[BAR] = -v
            elif v > 0:
                o[i] = v
            elif v < 0:
                x[25 - i] = -v
        o[OFF] = CHECKERS - sum(o)
        x[OFF] = CHECKERS - sum(x)
        if o_player == 0:
            return cls.from_counts(o, x)
        return cls.from_counts(x, o)

    # -- reading --------------------------------------------------------------------

    def packed(self, player: Player) -> int:
        """The packed (four bits per index) form of ``player``'s side."""
        return self[player]

    def counts(self, player: Player) -> tuple[int, ...]:
        """``player``'s 26 counts in their own numbering: off, points 1..24, bar."""
        return unpack(self[player])

    def point(self, player: Player, n: int) -> int:
        """Number of ``player``'s checkers on their own point ``n`` (0 off, 25 bar)."""
        return (self[player] >> SHIFT[n]) & NIBBLE

    def bar(self, player: Player) -> int:
        """Checkers of ``player`` on the bar."""
        return self.point(player, BAR)

    def off(self, player: Player) -> int:
        """Checkers of ``player`` borne off."""
        return self.point(player, OFF)

    def pips(self, player: Player) -> int:
        """Pip count: what ``player`` needs to bear everything off (the bar counts 25)."""
        packed = self[player]
        return sum(i * ((packed >> SHIFT[i]) & NIBBLE) for i in range(1, 26))

    def is_race(self) -> bool:
        """True when the sides can no longer hit each other (no contact)."""
        c0 = self.counts(0)
        c1 = self.counts(1)
        back0 = max((i for i in range(1, 26) if c0[i]), default=0)
        back1 = max((i for i in range(1, 26) if c1[i]), default=0)
        return back0 + back1 <= 25 and c0[BAR] == 0 and c1[BAR] == 0

    def __repr__(self) -> str:
        return f"Position(side0={self.side0:#x}, side1={self.side1:#x})"

    def swapped(self) -> Position:
        """The same position with the players' indices exchanged."""
        return Position(self.side1, self.side0)

    def fibs_board(self, o_player: Player = 0) -> tuple[int, ...]:
        """The 26 signed absolute numbers of a FIBS ``board:`` line (§3.1, §3.2)."""
        o = _nibbles_high_first(self[o_player])[::-1]  # o[n]: O's checkers on n
        x = _nibbles_high_first(self[1 - o_player])  # x[n]: X's on their 25 - n, i.e. on n
        # Point n shows O's checkers if O has any there, else X's (negative); O's bar is
        # board[25] and X's bar (X's own index 25) board[0].
        board = [a or -b for a, b in zip(o, x, strict=True)]
        board[0] = -x[0]
        board[25] = o[BAR]
        return tuple(board)


def _normalise(counts: Sequence[int], player: int) -> list[int]:
    """Check one side's counts and return 26 entries (off first)."""
    if len(counts) == 25:
        side = [0, *counts]
        side[OFF] = CHECKERS - sum(counts)
    elif len(counts) == 26:
        side = list(counts)
    else:
        raise InvalidPositionError(
            f"player {player} needs 26 counts (off, 1..24, bar), not {len(counts)}"
        )
    if any(n < 0 for n in side):
        raise InvalidPositionError(f"player {player} has a negative count")
    if sum(side) != CHECKERS:
        raise InvalidPositionError(f"player {player} has {sum(side)} checkers, not {CHECKERS}")
    return side
