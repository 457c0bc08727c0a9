"""The ASCII boards of boardstyles 1 and 2, drawn from one viewer's :class:`BoardView` (§3.7).

Layout (columns 0-based, §3.7): frame ``|`` at column 3, six 3-character point cells at
4-21 (checkers at 5, 8, ..., 20), the bar group ``| c | `` at 22-27, six cells at 28-45
(checkers at 29, ..., 44), closing ``|`` at 46. Five rows per half; rows 1-4 show a checker
if the point holds at least that many, row 5 shows the fifth checker or, past five, the
count right-aligned in two characters. The board is drawn from the perspective player's
side: O sees 13-18 | 19-24 over 12-7 | 6-1, X the same rotated by 180 degrees.

Lines carry no trailing whitespace (the spec allows clients to ignore it, §1.1, and the
golden examples are compared right-stripped); they have no line terminators either - the
server adds CR LF. Choices where §3.7 is open are D28-D33 in docs/protocol-decisions.md.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Final, NamedTuple

from backgammon.board import Colour
from protocol.board_fibs import format_board
from protocol.board_view import BoardStyle, BoardView

NAME_WIDTH: Final = 15
"""Frame labels show at most this many characters of a name (§3.7, fibsboard.c)."""

_LEFT_CHECKER_COLS: Final = tuple(5 + 3 * i for i in range(6))
_RIGHT_CHECKER_COLS: Final = tuple(29 + 3 * i for i in range(6))
_FRAME_START: Final = 3
_FRAME_END: Final = 46

# Points per row, left to right (§3.7): (top left, top right, bottom left, bottom right).
_LAYOUT: Final = {
    Colour.O: (range(13, 19), range(19, 25), range(12, 6, -1), range(6, 0, -1)),
    Colour.X: (range(1, 7), range(7, 13), range(24, 18, -1), range(18, 12, -1)),
}


def _letter(colour: Colour) -> str:
    return "O" if colour is Colour.O else "X"


def _cell(count: int, letter: str, row: int) -> str:
    """One 3-character cell: row 1-4 a checker if ``count >= row``; row 5 the fifth or the count."""
    if row < 5:
        return f" {letter} " if count >= row else "   "
    if count == 5:
        return f" {letter} "
    if count > 5:
        return f"{count:>2} "
    return "   "


def _point_cell(value: int, row: int) -> str:
    return _cell(abs(value), "O" if value > 0 else "X", row)


class _PointStrips(dict[int, tuple[str, ...]]):
    """A point's five cells (rows 1-5) by its board number; -15..15 made in advance."""

    def __missing__(self, value: int) -> tuple[str, ...]:
        return tuple(_point_cell(value, row) for row in range(1, 6))


class _BarStrips(dict[tuple[int, str], tuple[str, ...]]):
    """The bar's five cells (rows 1-5) by (checkers, letter), with the frame on both sides
    of the bar (``|c| ``); 0..15 made in advance."""

    def __missing__(self, key: tuple[int, str]) -> tuple[str, ...]:
        return tuple(f"|{_cell(key[0], key[1], row)}| " for row in range(1, 6))


_POINT_STRIPS: Final = _PointStrips()
_POINT_STRIPS.update((v, _POINT_STRIPS[v]) for v in range(-15, 16))
_BAR_STRIPS: Final = _BarStrips()
_BAR_STRIPS.update(((n, c), _BAR_STRIPS[n, c]) for n in range(16) for c in "OX")
_ROW_START: Final = ("   |",) * 5
_ROW_END: Final = ("|",) * 5


def _numbers(points: tuple[range, range], fill: str) -> str:
    """Point numbers right-aligned on their checker columns, over ``fill`` (§3.7)."""
    chars = [" "] * (_FRAME_END + 1)
    for col in range(_FRAME_START, _FRAME_END + 1):
        chars[col] = fill
    for cols, pts in zip((_LEFT_CHECKER_COLS, _RIGHT_CHECKER_COLS), points, strict=True):
        for col, point in zip(cols, pts, strict=True):
            text = str(point)
            chars[col - len(text) + 1 : col + 1] = list(text)
    return "".join(chars).rstrip()


def _frame(points: tuple[range, range], style: BoardStyle) -> list[str]:
    """The frame line (with numbers in style 1) and, for style 2, the separate number line."""
    if style is BoardStyle.ASCII:
        line = _numbers(points, "-")
        return [line[:_FRAME_START] + "+" + line[_FRAME_START + 1 : _FRAME_END] + "+"]
    return ["   +" + "-" * 42 + "+", _numbers(points, " ")]


class _Side(NamedTuple):
    """What an ASCII board drawn from one colour's side takes from that colour alone
    (made once per colour, not per board)."""

    letter: str
    """The perspective player's letter (bottom label, lower bar)."""
    other_letter: str
    """The opponent's letter (top label, upper bar)."""
    frames: dict[int, tuple[tuple[str, ...], tuple[str, ...]]]
    """By style, the top and the bottom frame lines of :func:`_frame`."""
    upper: Callable[[tuple[int, ...]], tuple[int, ...]]
    """The board numbers of the upper half's twelve points, left to right."""
    lower: Callable[[tuple[int, ...]], tuple[int, ...]]
    """The same for the lower half."""
    middle: str
    """The middle line up to the match length."""


def _side(colour: Colour) -> _Side:
    top_left, top_right, bottom_left, bottom_right = _LAYOUT[colour]
    bottom = (bottom_left, bottom_right)
    if colour is Colour.O:
        middle = "  v|" + " " * 18 + "|BAR|" + " " * 19 + "|"
    else:
        middle = "   |" + " " * 18 + "|BAR|" + " " * 19 + "|v"
    return _Side(
        letter=_letter(colour),
        other_letter=_letter(colour.other),
        frames={
            style: (tuple(_frame((top_left, top_right), style)), tuple(_frame(bottom, style)))
            for style in (BoardStyle.ASCII, BoardStyle.ASCII_NUMBERS_OUTSIDE)
        },
        upper=itemgetter(*top_left, *top_right),
        lower=itemgetter(*bottom_left, *bottom_right),
        middle=middle,
    )


# Colours are looked up with ``is``, not as dict keys: an Enum's hash is Python code.
_O_SIDE: Final = _side(Colour.O)
_X_SIDE: Final = _side(Colour.X)


def _label(letter: str, name: str, score: int) -> str:
    return f" {letter}: {name[:NAME_WIDTH]} - score: {score}"


def _redoubles_text(redoubles: int | None) -> str:
    if redoubles is None:
        return "Unlimited redoubles"
    if redoubles == 0:
        return "No redoubles"
    if redoubles == 1:
        return "1 redouble"
    return f"{redoubles} redoubles"


def _status(view: BoardView) -> str:
    """``BAR: ... OFF: ... Cube: c [(owned by n)] [n rolled a b. | turn: n]`` (§3.7)."""
    if view.colour is Colour.O:
        o_bar, x_bar = view.player_bar, view.opponent_bar
        o_off, x_off = view.player_home, view.opponent_home
    else:
        o_bar, x_bar = view.opponent_bar, view.player_bar
        o_off, x_off = view.opponent_home, view.player_home
    line = f"   BAR: O-{o_bar} X-{x_bar}   OFF: O-{o_off} X-{x_off}   Cube: {view.cube}"
    if view.player_may_double != view.opponent_may_double:
        owner = view.player if view.player_may_double else view.opponent
        line += f" (owned by {owner})"
    if any(view.player_dice):
        line += f"  {view.player} rolled {view.player_dice[0]} {view.player_dice[1]}."
    elif any(view.opponent_dice):
        line += f"  {view.opponent} rolled {view.opponent_dice[0]} {view.opponent_dice[1]}."
    elif view.turn is not None:
        line += f"  turn: {view.side_name(view.turn)}"
    return line


def _rows(numbers: tuple[int, ...], bar: tuple[str, ...]) -> list[str]:
    """Rows 1-5 of a half (``   |`` six cells ``|c| `` six cells ``|``), from its twelve
    board numbers and the bar's cells: the columns' strips joined row by row."""
    strips = _POINT_STRIPS
    columns = [_ROW_START, *map(strips.__getitem__, numbers), _ROW_END]
    columns.insert(7, bar)
    return list(map("".join, zip(*columns, strict=True)))


def render_ascii(view: BoardView, style: BoardStyle | int = BoardStyle.ASCII) -> list[str]:
    """The ASCII board of ``view`` in boardstyle 1 or 2 (§3.7), one string per line.

    :raises ValueError: for a style other than 1 or 2.
    """
    style = BoardStyle(style)
    if style is BoardStyle.RAW:
        raise ValueError("boardstyle 3 is the board: line, use board_fibs.format_board")
    side = _O_SIDE if view.colour is Colour.O else _X_SIDE
    top, bottom = side.frames[style]

    middle = side.middle
    if view.match_length is None:
        middle += "    unlimited match"
    else:
        middle += f"    {view.match_length}-point match"

    top_label = _label(side.other_letter, view.opponent, view.opponent_score)
    bottom_label = _label(side.letter, view.player_name, view.player_score)

    lines: list[str] = []
    if style is BoardStyle.ASCII:
        lines.append(top[0] + top_label)
    else:
        lines += [top[1], top[0] + top_label]
    lines += _rows(side.upper(view.board), _BAR_STRIPS[view.opponent_bar, side.other_letter])
    lines.append(middle)
    lower = _rows(side.lower(view.board), _BAR_STRIPS[view.player_bar, side.letter])
    lower.reverse()  # rows 5 to 1, from the middle line down
    if view.match_length is None:
        # Unlimited matches: the redoubles allowed, after the first row below the middle
        # line, five spaces as in the real FIBS capture (§3.7; fibsboard.c used four).
        lower[0] += "     " + _redoubles_text(view.redoubles)
    lines += lower
    if style is BoardStyle.ASCII:
        lines.append(bottom[0] + bottom_label)
    else:
        lines += [bottom[0] + bottom_label, bottom[1]]
    lines += ["", _status(view)]
    return lines


def render_board(view: BoardView, style: BoardStyle | int) -> list[str]:
    """A board in the receiver's ``boardstyle`` (§3.6): the ``board:`` line or an ASCII board.

    :raises ValueError: for a style other than 1, 2 or 3.
    """
    if style == BoardStyle.RAW:
        return [format_board(view)]
    return render_ascii(view, style)  # checks the style
