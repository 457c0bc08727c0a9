"""The ``board:`` line (boardstyle 3) for one viewer, and back (§3.1-§3.5).

``board`` and 52 colon-separated integers or names: exactly 53 fields when split on ``:``,
no spaces (§3.1). The per-receiver swap of the player/opponent pairs is done by
:meth:`protocol.board_view.BoardView.for_viewer` (§3.3); this module only writes and
reads the fields. Parsing is strict: only the text :func:`format_board` would write is
accepted, so ``format_board(parse_board(line)) == line`` for every line that parses.
"""

from __future__ import annotations

import operator
import re
from typing import Final

from backgammon.board import Colour, Player, Position
from protocol.board_view import UNLIMITED_WIRE, BoardState, BoardView, Dice, viewer_fields
from protocol.errors import BoardLineError

PREFIX: Final = "board"
FIELDS: Final = 53
"""Tokens of a ``board:`` line when split on ``:`` (§3.1)."""

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_NAME = re.compile(r"[^:\s]+\Z")
_NUMBERS = re.compile(rf"(?:-?(?:0|[1-9][0-9]*):){{{FIELDS - 4}}}-?(?:0|[1-9][0-9]*)\Z")
"""Fields 3-52 of a ``board:`` line: :data:`_INT` each, joined by ``:``."""


_O_SIDE: Final = "1:-1:0:25"
_X_SIDE: Final = "-1:1:25:0"
"""Fields 41-44 (colour, direction, home, bar) of O's and of X's view: the two patterns
of §3.2, i.e. :attr:`BoardView.colour` and its ``direction``, ``home`` and ``bar``."""


def format_board(view: BoardView) -> str:
    """The ``board:`` line of ``view`` (§3.1), without a line terminator.

    :raises ValueError: if a name is empty or contains ``:`` or whitespace.
    """
    return _format_fields(*_view_fields(view))


def board_line(state: BoardState, perspective: Colour, *, you: bool = True) -> str:
    """The ``board:`` line of ``state`` for one receiver (§3.3): the text of
    ``format_board(BoardView.for_viewer(state, perspective, you=you))``, written from
    the view's values without making the view (:func:`protocol.board_view.viewer_fields`:
    a board is sent to every player and watcher after nearly every action, and a view
    costs one ``object.__setattr__`` per field, docs/performance.md §24).

    :raises ValueError: if a name is empty or contains ``:`` or whitespace.
    """
    return _format_fields(*viewer_fields(state, perspective, you))


_view_fields: Final = operator.attrgetter(*BoardView.__slots__)
"""A view's values in its slots' order, as :func:`viewer_fields` gives them (one call)."""


def _format_fields(
    player: str,
    opponent: str,
    length: int | None,
    player_score: int,
    opponent_score: int,
    board: tuple[int, ...],
    turn: Colour | None,
    p_dice: Dice,
    o_dice: Dice,
    cube: int,
    player_may_double: bool,
    opponent_may_double: bool,
    was_doubled: bool,
    colour: Colour,
    player_home: int,
    opponent_home: int,
    player_bar: int,
    opponent_bar: int,
    can_move: int,
    no_crawford: int,
    post_crawford: int,
    redoubles: int | None,
    player_login: str | None,
    board_text: str,
) -> str:
    """The ``board:`` line of a view given as its values in :class:`BoardView`'s slot
    order (``board`` and ``player_login`` are not written: fields 6-31 are the
    precomputed ``board_text``)."""
    for name in (player, opponent):
        if not _NAME.match(name):
            raise ValueError(f"a board: line cannot carry the name {name!r}")
    # One f-string over the 53 fields (this runs for every board sent). Unlimited values
    # are 9999 (§3.1), flags 0/1. Colours are compared with ``is``: an Enum's ``value``
    # and hash are Python code.
    return (
        f"{PREFIX}:{player}:{opponent}"
        f":{UNLIMITED_WIRE if length is None else length}"
        f":{player_score}:{opponent_score}"
        f":{board_text}"
        f":{0 if turn is None else 1 if turn is Colour.O else -1}"
        f":{p_dice[0]}:{p_dice[1]}:{o_dice[0]}:{o_dice[1]}"
        f":{cube}"
        f":{1 if player_may_double else 0}"
        f":{1 if opponent_may_double else 0}"
        f":{1 if was_doubled else 0}"
        f":{_O_SIDE if colour is Colour.O else _X_SIDE}"
        f":{player_home}:{opponent_home}"
        f":{player_bar}:{opponent_bar}"
        f":{can_move}:{no_crawford}:{post_crawford}"
        f":{UNLIMITED_WIRE if redoubles is None else redoubles}"
    )


def parse_board(line: str) -> BoardView:
    """Read a ``board:`` line back into a :class:`BoardView`.

    A trailing CR/LF is tolerated; anything else that :func:`format_board` would not write
    (a field count other than 53, a non-canonical number, a colour/direction/home/bar
    pattern other than the two of §3.2, a flag other than 0/1) is refused.

    :raises BoardLineError: if the line is not a well-formed ``board:`` line.
    """
    text = line.rstrip("\r\n")
    tokens = text.split(":")
    if len(tokens) != FIELDS or tokens[0] != PREFIX:
        raise BoardLineError(f"a board: line has {FIELDS} fields, got {len(tokens)}", line)
    player, opponent = tokens[1], tokens[2]
    if not (_NAME.match(player) and _NAME.match(opponent)):
        raise BoardLineError("bad player name", line)
    # Fields 3-52 checked by one match over their text (a bot reads a board per turn);
    # only a line that fails is looked at field by field, for the message.
    if not _NUMBERS.match(text, len(player) + len(opponent) + len(PREFIX) + 3):
        for i, token in enumerate(tokens[3:], start=3):
            if not _INT.match(token):
                raise BoardLineError(f"field {i} is not an integer", line)
    n = [0, 0, 0, *map(int, tokens[3:])]  # the numbers by field index (0-2 are words)

    def flag(i: int) -> bool:
        if n[i] not in (0, 1):
            raise BoardLineError(f"field {i} must be 0 or 1", line)
        return n[i] == 1

    def count(i: int) -> int:
        if n[i] < 0:
            raise BoardLineError(f"field {i} must not be negative", line)
        return n[i]

    if n[3] < 1:
        raise BoardLineError("match length must be >= 1 (9999 = unlimited)", line)
    if n[32] not in (-1, 0, 1):
        raise BoardLineError("turn must be -1, 0 or 1", line)
    if n[41] not in (-1, 1):
        raise BoardLineError("colour must be -1 or 1", line)
    colour = Colour(n[41])
    try:
        view = BoardView(
            player=player,
            opponent=opponent,
            match_length=None if n[3] == UNLIMITED_WIRE else n[3],
            player_score=count(4),
            opponent_score=count(5),
            board=tuple(n[6:32]),
            turn=Colour(n[32]) if n[32] else None,
            player_dice=(n[33], n[34]),
            opponent_dice=(n[35], n[36]),
            cube=count(37),
            player_may_double=flag(38),
            opponent_may_double=flag(39),
            was_doubled=flag(40),
            colour=colour,
            player_home=count(45),
            opponent_home=count(46),
            player_bar=count(47),
            opponent_bar=count(48),
            can_move=count(49),
            no_crawford=n[50],
            post_crawford=n[51],
            redoubles=None if n[52] == UNLIMITED_WIRE else count(52),
        )
    except ValueError as exc:
        raise BoardLineError(str(exc), line) from exc
    if (n[42], n[43], n[44]) != (view.direction, view.home, view.bar):
        raise BoardLineError("colour/direction/home/bar must be 1:-1:0:25 or -1:1:25:0", line)
    return view


def parse_position(line: str, player_index: Player = 0) -> Position:
    """The core :class:`Position` of a ``board:`` line, the perspective player as ``player_index``.

    :raises BoardLineError: if the line does not parse or the checkers are impossible.
    """
    view = parse_board(line)
    try:
        return view.position(player_index)
    except ValueError as exc:
        raise BoardLineError(str(exc), line) from exc
