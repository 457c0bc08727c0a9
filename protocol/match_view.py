"""The rules core's running match as the protocol's :class:`BoardState` (§3).

The one place that reads a :class:`backgammon.match.Match` for display: who is O and
X, the absolute board, whose turn, the dice, the cube and who may double, the
Crawford fields, the redouble limit. :func:`board_lines` then renders it for one
receiver in their board style.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from backgammon.board import Colour, Player, Position
from backgammon.match import Match, Phase
from protocol.board_ascii import render_board
from protocol.board_fibs import board_line
from protocol.board_view import NO_DICE, BoardState, BoardStyle, BoardView, Dice, SideState


def board_state(match: Match, names: Sequence[str]) -> BoardState:
    """The absolute state of ``match``; ``names[p]`` is player ``p``'s login name.

    Every flag field is FIBS's (§3.4; docs/protocol-decisions.md D24, D100-D102), not the
    rules core's "may double now": the may-double flags follow the cube's ownership only
    (1/1 with a centred cube, in the Crawford game too; 0/0 while a double is pending);
    the turn is the side that must answer a double, else the side whose turn it is (also
    while a resignation is pending); between games the board is the next game's opening
    table with turn 0.
    """
    # Read once per match state (the boards of all its viewers come from it): the match's
    # attributes are read once each.
    o = match.o_player
    x = 1 - o
    phase = match.phase
    score = match.score
    options = match.options
    length = options.length
    one_away = bool(length) and (length - 1) in score
    if phase in _IN_GAME:
        return _game_state(match, names, one_away)
    if phase is Phase.MATCH_OVER:
        # The finished game as it ended, nobody's turn (BaldLies keeps the last game).
        board = _fibs_board(match.position, o)
        cube, owner = match.cube, match.cube_owner
        post_crawford = match.post_crawford
    else:
        # Between games (and before the first): FIBS shows the next game's opening table,
        # a centred cube and turn 0 (D101, the real board quoted in BaldLies' Match.pm).
        board = _START_BOARD
        cube, owner = 1, None
        post_crawford = match.crawford_played or match.crawford_game
    return BoardState(
        o=_side_state(names[o], score[o], NO_DICE, owner != x),
        x=_side_state(names[x], score[x], NO_DICE, owner != o),
        board=board,
        match_length=length or None,
        turn=None,
        cube=cube,
        no_crawford=3 if length and not options.crawford and one_away else 0,
        post_crawford=1 if post_crawford and one_away else 0,
        redoubles=options.instant_redoubles if options.unlimited else 0,
    )


_IN_GAME: Final = frozenset({Phase.TURN, Phase.MOVE, Phase.DOUBLED})
_START_BOARD: Final = Position.start().fibs_board(0)
"""The 26 numbers of the opening position; the same whoever is O (§3.2)."""


def _game_state(match: Match, names: Sequence[str], one_away: bool) -> BoardState:
    """:func:`board_state` of a game in progress (phase TURN, MOVE or DOUBLED)."""
    o = match.o_player
    x = 1 - o
    o_dice = x_dice = NO_DICE
    dice = match.dice
    turn = match.turn
    if match.phase is Phase.MOVE and dice is not None:
        # Only the side on turn has dice out.
        if turn == o:
            o_dice = (dice.d1, dice.d2)
        else:
            x_dice = (dice.d1, dice.d2)
    options = match.options
    length = options.length
    offer = match.offer
    doubled = None
    if match.phase is Phase.DOUBLED and offer is not None:
        # D100: 0/0 while a double is pending; turn and "was doubled" name the side that
        # must answer (BaldLies: "FIBS' behavior when the cube is turned").
        doubled = match.colour(1 - offer.doubler)
        o_may = x_may = False
        turn_colour = doubled
    else:
        # D24: the flags follow the cube only: both with a centred cube (FIBS sends 1:1
        # in the Crawford game too), the owner alone otherwise. A pending resignation
        # changes neither them nor the turn (D102).
        owner = match.cube_owner
        o_may, x_may = owner != x, owner != o
        turn_colour = match.colour(turn)
    return BoardState(
        o=_side_state(names[o], match.score[o], o_dice, o_may),
        x=_side_state(names[x], match.score[x], x_dice, x_may),
        board=_fibs_board(match.position, o),
        match_length=length or None,
        turn=turn_colour,
        cube=match.cube,
        doubled=doubled,
        can_move=match.moves_required(),
        # §3.4 recommendation: field 50 is 0 with the Crawford rule, 3 without it at 1-away.
        no_crawford=3 if length and not options.crawford and one_away else 0,
        post_crawford=1 if match.post_crawford else 0,
        redoubles=options.instant_redoubles if options.unlimited else 0,
    )


_CACHE_SIZE: Final = 4096
"""Entries each cache below holds at most; when full it is emptied and filled anew."""
_BOARDS: dict[tuple[Position, Player], tuple[int, ...]] = {}
_SIDES: dict[tuple[str, int, Dice, bool], SideState] = {}


def _fibs_board(position: Position, o: Player) -> tuple[int, ...]:
    """``position.fibs_board(o)``, kept: a roll changes the dice and not the checkers, so
    the state after a move and the one after the roll that follows show the same board
    (unpacking a position costs as much as the rest of a state, docs/performance.md §24)."""
    key = (position, o)
    board = _BOARDS.get(key)
    if board is None:
        if len(_BOARDS) >= _CACHE_SIZE:
            _BOARDS.clear()
        board = _BOARDS[key] = position.fibs_board(o)
    return board


def _side_state(name: str, score: int, dice: Dice, may_double: bool) -> SideState:
    """``SideState(name, score, dice, may_double)``, the same value shared: from one state
    of a match to the next mostly one side changes, and each frozen field made costs an
    ``object.__setattr__`` (docs/performance.md §24)."""
    key = (name, score, dice, may_double)
    side = _SIDES.get(key)
    if side is None:
        if len(_SIDES) >= _CACHE_SIZE:
            _SIDES.clear()
        side = _SIDES[key] = SideState(name, score, dice, may_double)
    return side


def rolled_for_state(state: BoardState, roller: Colour) -> BoardState:
    """``state`` as shown the moment before the server rolls for ``roller`` by itself:
    ``roller``'s may-double flag is 0 (D278, D346).

    FIBS rolls without asking for a player who may not double (the Crawford game), needs
    one point (D109) or turned ``double`` off; a board there that still says "may
    double" (1:1, D24) makes the BaldLies client and GammonBot ask gnubg and send a
    ``roll`` the server refuses, and MatchDog (``double`` off) ask gnubg for a cube
    decision while its roll's board comes: gnubg lost one and MatchDog hung (D346).
    Both skip a board on their turn with no dice and their own flag 0 (BaldLies:
    "Opponent owns the cube server will roll"), as FIBS shows it when the cube is on
    the other side. Returns ``state`` itself when the flag is 0 already.
    """
    side = state.side(roller)
    if not side.may_double:
        return state
    # made directly, not by dataclasses.replace: this runs before nearly every roll the
    # server makes (docs/performance.md §21)
    barred = _side_state(side.name, side.score, side.dice, False)
    if roller is Colour.O:
        return state.with_sides(barred, state.x)
    return state.with_sides(state.o, barred)


def rolled_state(state: BoardState, roller: Colour, dice: tuple[int, int]) -> BoardState:
    """``state`` as it was the moment ``roller`` rolled ``dice`` that cannot be played.

    The core passes such a turn at once, so the match already shows the other side's
    turn; the roller's board between ``You roll`` and ``You can't move.`` shows the roll
    on the roller's own turn, with nothing to move (D108: MatchDog waits for this board
    after every ``You roll``).
    """
    side = state.o if roller is Colour.O else state.x
    rolled = replace(side, dice=dice)
    return replace(
        state,
        o=rolled if roller is Colour.O else state.o,
        x=rolled if roller is Colour.X else state.x,
        turn=roller,
        can_move=0,
    )


def board_lines(
    state: BoardState, perspective: Colour, style: int, *, you: bool = True
) -> list[str]:
    """One receiver's board: a ``board:`` line (style 3) or the ASCII board (1, 2)."""
    if style == BoardStyle.RAW:  # without a view (:func:`protocol.board_fibs.board_line`)
        return [board_line(state, perspective, you=you)]
    return render_board(BoardView.for_viewer(state, perspective, you=you), style)


def perspective_of(match: Match, player: Player) -> Colour:
    """The colour whose view ``player`` gets (their own)."""
    return Colour.O if player == match.o_player else Colour.X
