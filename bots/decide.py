"""When a board asks the bot to act, and how an answer becomes a FIBS command. Pure functions.

The board alone says what is due (shared/docs/fibs-protocol.md §3.4, §6.3): a pending double
(``was doubled`` = 1), the bot's dice (move), or the bot's turn without dice while it may
double (roll or double). GammonBot and MatchDog act on exactly these fields.
"""

from __future__ import annotations

import enum

from backgammon.board import Colour
from backgammon.moves import Play
from backgammon.notation import format_moves
from protocol.board_view import NO_DICE, YOU, BoardView


class Due(enum.Enum):
    """What the bot has to do on a board."""

    ANSWER = "answer"
    """The opponent doubled: accept, reject or beaver."""
    MOVE = "move"
    """The bot has dice: move."""
    CUBE = "cube"
    """The bot's turn, no dice yet: roll or double."""


def crawford_game(view: BoardView) -> bool:
    """True in the Crawford game: a player is 1-away, the match uses the Crawford rule
    (field 50 = 0) and it is not a post-Crawford game (field 51 = 0), §3.4."""
    if view.match_length is None or view.no_crawford or view.post_crawford:
        return False
    return view.match_length - 1 in (view.player_score, view.opponent_score)


def due(view: BoardView, *, roll_prompt: bool = False) -> Due | None:
    """What the playing receiver of ``view`` must do now, if anything.

    ``roll_prompt`` says the server asked ``It's your turn. Please roll or double``: then
    the bot acts even if the board says it may not double (it rolls).
    """
    if view.player != YOU or view.turn is None:
        return None
    if view.was_doubled:
        return Due.ANSWER
    if view.turn is not view.colour:
        return None
    if view.player_dice != NO_DICE:
        return Due.MOVE
    if view.opponent_dice != NO_DICE:
        return None
    if roll_prompt or (view.player_may_double and not crawford_game(view)):
        return Due.CUBE
    return None


def may_double(view: BoardView) -> bool:
    """The bot may offer the cube now (its flag is set and this is not the Crawford game)."""
    return view.player_may_double and not crawford_game(view)


def beaver_allowed(view: BoardView) -> bool:
    """Instant redoubles exist only in unlimited matches that allow them (§4.6)."""
    return view.unlimited and view.redoubles != 0


def move_command(play: Play, colour: Colour) -> str:
    """The FIBS command for ``play`` of the player with ``colour``: absolute points, the
    words ``bar`` and ``off``, one entry per die (§4.5), e.g. ``move 13-7 8-7``."""
    return f"move {format_moves(play.moves, colour)}"
