"""Board lines for GNU Backgammon's external interface, and its answers back to FIBS moves.

Facts found by experiment with Debian's gnubg 1.07.001 (docs/bots.md, "gnubg's external
mode", has the transcripts):

* gnubg reads a FIBS ``board:`` line, but its view of who is who differs from FIBS:
  the side to act comes from the turn field; the answer to a double is computed as if
  the *player of field 1* had doubled; and in boards without a double the score of field 4
  is taken as the *opponent's*. So every request is rewritten into one canonical form:
  the deciding side (or the doubler) is field 1, colour O (positive, moving 24 -> 1) and on
  turn; X boards are mirrored. Moves then come back in the bot's own numbering.
* Both may-double flags 0 without "was doubled" make gnubg assume a double is pending
  (it answers ``take`` even with dice): the canonical form never sends 0/0 that way.
* The Crawford game is "a player is 1-away and field 51 is 0"; field 51 = 1 means
  post-Crawford (or no Crawford rule).
* Options may follow the board: ``jacobyrule on|off`` (FIBS has no Jacoby rule: off; a
  chouette's money games follow the table's ``jacoby`` setting, gnubg's own default on) and
  ``resignation N`` (then gnubg answers ``accept``/``reject`` for the side *not* in
  field 1). A request line must stay under 256 bytes (gnubg's buffer).
* Answers: ``24/18 13/11`` (points in the mover's numbering, 25 = bar, 0 = off, ``*`` for
  a hit; ``bar``/``off`` words, ``(2)`` repeats and ``24/18/13`` chains are accepted too),
  an empty line when no move is possible, ``roll``/``double``, ``take``/``drop``/``beaver``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from backgammon.board import BAR, CHECKERS, OFF, Colour, Position
from backgammon.dice import Roll
from backgammon.moves import Move, Play, apply_moves
from backgammon.validate import validate_play
from bots.decide import crawford_game
from bots.strategy import ME
from protocol.board_fibs import format_board
from protocol.board_view import NO_DICE, BoardView

MAX_LINE: Final = 255
"""gnubg reads at most 256 bytes per request, newline included."""


class GnubgAnswerError(ValueError):
    """gnubg's answer does not parse or is not a legal play."""


@dataclass(frozen=True, slots=True)
class Conventions:
    """How the running gnubg reads scores (calibrated at start, :mod:`bots.gnubg.engine`)."""

    swap_scores: bool = True
    """Boards without a double: put the opponent's score in field 4 (gnubg 1.07 reads it as
    the score of the side *not* on roll)."""
    swap_doubled_scores: bool = False
    """Boards with a double: the same for the doubler's board (gnubg 1.07: not needed)."""


def mirror(board: Sequence[int]) -> tuple[int, ...]:
    """The 26 FIBS numbers with the colours exchanged: X's checkers become O's, §3.2."""
    return tuple(-board[25 - i] for i in range(26))


def _off(board: Sequence[int], sign: int) -> int:
    return CHECKERS - sum(v * sign for v in board if v * sign > 0)


def _canonical(
    view: BoardView,
    side: Colour,
    *,
    dice: tuple[int, int],
    may_double: tuple[bool, bool],
    doubled: bool,
    swap: bool,
    jacoby: bool,
) -> str:
    """The line with ``side`` as field 1, colour O, on turn; ``jacoby``: the money game's
    Jacoby rule (gammons count only once the cube was turned)."""
    board = tuple(view.board) if side is Colour.O else mirror(view.board)
    mine_first = side is view.colour
    scores = (view.player_score, view.opponent_score)
    if not mine_first:
        scores = scores[::-1]
    if swap:
        scores = scores[::-1]
    one_away = view.match_length is not None and view.match_length - 1 in scores
    canonical = BoardView(
        player="gnubg",
        opponent="opponent",
        match_length=view.match_length,
        player_score=scores[0],
        opponent_score=scores[1],
        board=board,
        turn=Colour.O,
        player_dice=dice,
        opponent_dice=NO_DICE,
        cube=view.cube,
        player_may_double=may_double[0],
        opponent_may_double=may_double[1],
        was_doubled=doubled,
        colour=Colour.O,
        player_home=_off(board, 1),
        opponent_home=_off(board, -1),
        player_bar=board[25],
        opponent_bar=-board[0],
        can_move=view.can_move if dice != NO_DICE else 0,
        no_crawford=0,
        post_crawford=1 if one_away and not crawford_game(view) else 0,
        redoubles=0,
    )
    line = format_board(canonical) + (" jacobyrule on" if jacoby else " jacobyrule off")
    if len(line) > MAX_LINE:
        raise ValueError(f"a gnubg request of {len(line)} bytes is too long")
    return line


def _flags(view: BoardView, mover_first: bool) -> tuple[bool, bool]:
    """May-double flags (field 1 side first) that never read as "cube turned"."""
    flags = (view.player_may_double, view.opponent_may_double)
    if not mover_first:
        flags = flags[::-1]
    if not any(flags):
        return (True, True)  # the Crawford game (field 51 tells gnubg) or a dead cube
    return flags


def move_request(
    view: BoardView, conventions: Conventions = Conventions(), *, jacoby: bool = False
) -> str:
    """The request for the bot's move (dice shown) or its roll-or-double decision."""
    return _canonical(
        view,
        view.colour,
        dice=view.player_dice,
        may_double=_flags(view, True),
        doubled=False,
        swap=conventions.swap_scores,
        jacoby=jacoby,
    )


def take_request(
    view: BoardView, conventions: Conventions = Conventions(), *, jacoby: bool = False
) -> str:
    """The request for the bot's answer to a double: the doubler (the opponent) as field 1.

    The cube still shows its value before the double; the doubler owned it unless it was
    centred.
    """
    doubler_owns = view.cube > 1
    return _canonical(
        view,
        view.colour.other,
        dice=NO_DICE,
        may_double=(True, not doubler_owns),
        doubled=True,
        swap=conventions.swap_doubled_scores,
        jacoby=jacoby,
    )


def resign_request(
    view: BoardView, points: int, conventions: Conventions = Conventions(), *, jacoby: bool = False
) -> str:
    """The request whether to accept the opponent's resignation worth ``points``: the
    resigner as field 1, ``resignation 1|2|3`` (single, gammon, backgammon)."""
    level = max(1, min(3, round(points / max(1, view.cube))))
    line = _canonical(
        view,
        view.colour.other,
        dice=NO_DICE,
        may_double=_flags(view, False),
        doubled=False,
        swap=conventions.swap_scores,
        jacoby=jacoby,
    )
    return f"{line} resignation {level}"


# -- answers ------------------------------------------------------------------------------

_PATH = re.compile(
    r"(?P<path>(?:bar|off|\d{1,2})\*?(?:/(?:bar|off|\d{1,2})\*?)+)(?:\((?P<n>[1-4])\))?"
)


def _point(word: str) -> int:
    if word == "bar":
        return BAR
    if word == "off":
        return OFF
    value = int(word)
    if not 0 <= value <= 25:
        raise GnubgAnswerError(f"no point {value}")
    return value


def parse_paths(text: str) -> list[tuple[int, ...]]:
    """The checker paths of a gnubg move answer, in the mover's numbering (25 bar, 0 off).

    ``13/7(2)`` gives two paths, ``24/18*/13`` one path through 18.

    :raises GnubgAnswerError: on anything else.
    """
    paths: list[tuple[int, ...]] = []
    for token in text.lower().split():
        match = _PATH.fullmatch(token)
        if match is None:
            raise GnubgAnswerError(f"not a gnubg move: {token!r}")
        points = tuple(_point(p.rstrip("*")) for p in match["path"].split("/"))
        paths.extend([points] * int(match["n"] or 1))
    return paths


def play_from_answer(text: str, position: Position, roll: Roll, plays: Sequence[Play]) -> Play:
    """The legal play (one move per die) that gnubg's answer describes.

    The paths are carried out on ``position`` (a hit wherever a path stops on a blot); the
    legal play with the same result is then checked with
    :func:`backgammon.validate.validate_play`.

    :raises GnubgAnswerError: if the answer does not parse or is not a legal play.
    """
    paths = parse_paths(text)
    if not paths:
        if plays:
            raise GnubgAnswerError("gnubg passed, but a move is possible")
        raise GnubgAnswerError("no play to return")
    after = position
    for path in paths:
        for src, dst in itertools.pairwise(path):
            if dst >= src or after.point(ME, src) == 0:
                raise GnubgAnswerError(f"impossible step {src}/{dst} in {text!r}")
            after, _ = apply_moves(after, ME, [Move(src, dst)])
    by_result = {play.result: play for play in plays}
    play = by_result.get(after)
    if play is None:
        raise GnubgAnswerError(f"{text!r} is not a legal play of {roll}")
    try:
        return validate_play(position, ME, roll, play.moves)
    except ValueError as exc:  # pragma: no cover - a legal play always validates
        raise GnubgAnswerError(str(exc)) from exc
