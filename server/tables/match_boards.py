"""The boards of a running match: every ``board:`` line and ASCII board the server sends.

One place renders a board for a viewer (:meth:`BoardFrame.lines`): the boards announced
after an action, the ``board`` and ``look`` commands, the board a new watcher gets and
``oldboard``. A state of the match is read once (:func:`protocol.match_view.board_state`)
and each distinct board of it (side, style, ``You`` or a name) rendered once, however
many players and watchers see it (docs/performance.md §9).
:class:`MatchBoards` keeps the frame of the match's current state and knows a new state
by :attr:`backgammon.match.Match.version`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from backgammon.board import Colour, Player
from backgammon.dice import Roll
from backgammon.match import Match
from protocol.board_view import BoardState, BoardStyle
from protocol.match_view import board_lines, board_state, rolled_for_state, rolled_state


@dataclass(eq=False)
class BoardFrame:
    """One state of a match and its boards, each rendered at most once."""

    state: BoardState
    o_player: Player
    """Who plays O in this state's game: whose side is whose colour."""
    raw_state: BoardState | None = None
    """The state the ``board:`` lines (style 3) show when it is not :attr:`state`: the
    moment before an automatic roll (:meth:`rolled_for`, D278). The ASCII boards keep
    :attr:`state`: they read the flags as the cube's owner."""
    _lines: dict[tuple[bool, int, bool], tuple[str, ...]] = field(default_factory=dict, repr=False)
    """The boards rendered so far, by (the O side's?, style, you): no Enum in the key,
    whose hash is Python code."""

    def colour(self, player: Player) -> Colour:
        """The colour whose view ``player`` gets (their own)."""
        return Colour.O if player == self.o_player else Colour.X

    def lines(self, player: Player, style: int, *, you: bool) -> tuple[str, ...]:
        """The board seen from ``player``'s side in board ``style``; ``you``: the viewer is
        that player (field 1 ``You``), else a watcher or looker (the player's name).

        The lines are shared by every viewer of the same kind.
        """
        key = (player == self.o_player, style, you)
        lines = self._lines.get(key)
        if lines is None:
            colour = self.colour(player)
            raw = self.raw_state
            state = raw if raw is not None and style == BoardStyle.RAW else self.state
            lines = self._lines[key] = tuple(board_lines(state, colour, style, you=you))
        return lines

    def rolled_for(self, roller: Player) -> BoardFrame:
        """This state as shown right before the server rolls for ``roller`` by itself:
        their may-double flag 0 in the ``board:`` lines
        (:func:`protocol.match_view.rolled_for_state`, D278)."""
        state = rolled_for_state(self.state, self.colour(roller))
        return (
            self if state is self.state else BoardFrame(self.state, self.o_player, raw_state=state)
        )

    def rolled_lines(self, roller: Player, roll: Roll, style: int) -> list[str]:
        """The roller's board of the moment they rolled ``roll`` that cannot be played
        (:func:`protocol.match_view.rolled_state`, D108; not cached: it is one board)."""
        colour = self.colour(roller)
        state = rolled_state(self.state, colour, (roll.d1, roll.d2))
        return board_lines(state, colour, style)


@dataclass(eq=False)
class MatchBoards:
    """The frame of one match's current state, made again only when the match changed."""

    _version: int = -1
    _frame: BoardFrame | None = field(default=None, repr=False)

    def frame(self, match: Match, names: Sequence[str]) -> BoardFrame:
        """``match``'s state now (``names[p]`` is player ``p``'s name) with its boards."""
        frame = self._frame
        if frame is None or match.version != self._version:
            frame = self._frame = BoardFrame(board_state(match, names), match.o_player)
            self._version = match.version
        return frame
