"""The rules core's running match as the protocol's :class:`BoardState` (§3).

The one place that reads a :class:`backgammon.match.Match` for display: who is O and
X, the absolute board, whose turn, the dice, the cube and who may double, the
Crawford fields, the redouble limit. :func:`board_lines` then renders it for one
receiver in their board style.
"""

from __future__ import annotations

from collections.abc import Sequence

from backgammon.board import Colour, Player
from backgammon.match import Match, Phase
from protocol.board_ascii import render_board
from protocol.board_view import NO_DICE, BoardState, BoardView, SideState


def board_state(match: Match, names: Sequence[str]) -> BoardState:
    """The absolute state of ``match``; ``names[p]`` is player ``p``'s login name."""
    # Read once per match state (the boards of all its viewers come from it): the match's
    # attributes are read once each.
    o = match.o_player
    x = 1 - o
    o_dice = x_dice = NO_DICE
    dice = match.dice
    if match.phase is Phase.MOVE and dice is not None:
        # Only the side on turn has dice out.
        if match.turn == o:
            o_dice = (dice.d1, dice.d2)
        elif match.turn == x:
            x_dice = (dice.d1, dice.d2)
    score = match.score
    options = match.options
    to_act = match.to_act
    length = options.length
    doubled = None
    if match.phase is Phase.DOUBLED and match.offer is not None:
        doubled = match.colour(1 - match.offer.doubler)
    one_away = bool(length) and (length - 1) in score
    return BoardState(
        o=SideState(names[o], score[o], o_dice, match.cube_available(o)),
        x=SideState(names[x], score[x], x_dice, match.cube_available(x)),
        board=match.position.fibs_board(o),
        match_length=length or None,
        turn=None if to_act is None else match.colour(to_act),
        cube=match.cube,
        doubled=doubled,
        can_move=match.moves_required(),
        # §3.4 recommendation: field 50 is 0 with the Crawford rule, 3 without it at 1-away.
        no_crawford=3 if length and not options.crawford and one_away else 0,
        post_crawford=1 if match.post_crawford else 0,
        redoubles=options.instant_redoubles if options.unlimited else 0,
    )


def board_lines(
    state: BoardState, perspective: Colour, style: int, *, you: bool = True
) -> list[str]:
    """One receiver's board: a ``board:`` line (style 3) or the ASCII board (1, 2)."""
    return render_board(BoardView.for_viewer(state, perspective, you=you), style)


def perspective_of(match: Match, player: Player) -> Colour:
    """The colour whose view ``player`` gets (their own)."""
    return Colour.O if player == match.o_player else Colour.X
