"""Text forms: FIBS move text, GNU Backgammon Position IDs and Match IDs.

Every form parses and formats symmetrically: ``parse(format(x)) == x``.

* FIBS moves (shared/docs/fibs-protocol.md §4.5) use absolute point numbers and the
  words ``bar`` and ``off``; a move's numbers depend on the mover's :class:`Colour`.
* A Position ID (gnubg manual, "Position ID") is 14 base64 characters of an 80-bit
  key: for the player *not* on roll and then the player on roll, for each of their
  points 1..24 and the bar, as many 1 bits as checkers followed by a 0 bit; bytes
  little-endian, bits least significant first.
* A Match ID (gnubg manual, "Match ID") is 12 base64 characters of a 66-bit record
  of the cube, turn, dice, resignation, match length and score.
"""

from __future__ import annotations

import base64
import binascii
import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass

from backgammon.board import BAR, OFF, Colour, Player, Position, from_absolute, to_absolute
from backgammon.errors import InvalidIdError, MoveSyntaxError
from backgammon.moves import Move

# -- FIBS move text ------------------------------------------------------------------

_BAR_WORDS = frozenset({"bar", "b"})
_OFF_WORDS = frozenset({"off", "o", "home", "h"})
_MOVE_WORDS = frozenset({"move", "m"})
_SEPARATORS = re.compile(r"[\s\-]+")


def format_move(move: Move, colour: Colour) -> str:
    """One move in FIBS absolute numbers: ``13-7``, ``bar-22``, ``6-off``."""
    src = "bar" if move.src == BAR else str(to_absolute(move.src, colour))
    dst = "off" if move.dst == OFF else str(to_absolute(move.dst, colour))
    return f"{src}-{dst}"


def format_moves(moves: Sequence[Move], colour: Colour) -> str:
    """Moves separated by single spaces, as FIBS announces them (without the final ``.``)."""
    return " ".join(format_move(m, colour) for m in moves)


def parse_moves(text: str, colour: Colour) -> tuple[Move, ...]:
    """Parse the moves a client sends, in any form FIBS accepts (§4.5).

    ``move 13-7 8-7``, ``m 13 7 8 7``, ``13-7 8-7``, ``bar-22``, ``bar - 5``, ``b 22``
    after ``m``, ``6-off``, ``6 o``, ``6-home``. Points are absolute for ``colour``;
    the bar may also be written as that colour's bar number (25 for O, 0 for X) and
    off as its home number (0 for O, 25 for X).

    :raises MoveSyntaxError: an unknown word, a number out of range, or a move with
        no destination (``incomplete`` is then set).
    """
    words = [w for w in _SEPARATORS.split(text.strip()) if w]
    if words and words[0].lower() in _MOVE_WORDS:
        words = words[1:]
    moves = []
    for index in range(0, len(words), 2):
        if index + 1 >= len(words):
            raise MoveSyntaxError(
                f"move {index // 2 + 1} has no destination: {text!r}",
                index=index // 2,
                word=words[index],
                incomplete=True,
            )
        src = _parse_point(words[index], colour, index // 2, source=True)
        dst = _parse_point(words[index + 1], colour, index // 2, source=False)
        moves.append(Move.of(src, dst))
    return tuple(moves)


def _parse_point(word: str, colour: Colour, index: int, *, source: bool) -> int:
    """One end of a move, in the mover's own numbering (25 bar, 0 off)."""
    lower = word.lower()
    if lower in _BAR_WORDS:
        return BAR
    if lower in _OFF_WORDS:
        return OFF
    if word.isdigit():
        number = int(word)
        if 1 <= number <= 24:
            return from_absolute(number, colour)
        bar_number, home_number = (25, 0) if colour is Colour.O else (0, 25)
        if source and number == bar_number:
            return BAR
        if not source and number == home_number:
            return OFF
    raise MoveSyntaxError(f"not a point: {word!r}", index=index, word=word)


# -- Position ID ---------------------------------------------------------------------


def encode_position_id(position: Position, on_roll: Player) -> str:
    """The gnubg Position ID of ``position`` with ``on_roll`` the player on roll."""
    key = 0
    bit = 0
    for player in (1 - on_roll, on_roll):
        counts = position.counts(player)
        for index in range(1, 26):
            n = counts[index]
            key |= ((1 << n) - 1) << bit
            bit += n + 1
    return base64.b64encode(key.to_bytes(10, "little")).decode("ascii")[:14]


def decode_position_id(text: str, on_roll: Player = 0) -> Position:
    """The position of a gnubg Position ID, with the player on roll as ``on_roll``.

    :raises InvalidIdError: not 14 base64 characters, or not a valid position.
    """
    key = int.from_bytes(_b64(text, 14, 10), "little")
    sides: list[list[int]] = []
    for _ in range(2):
        side = [0] * 25
        index = 0
        while index < 25:
            if key & 1:
                side[index] += 1
            else:
                index += 1
            key >>= 1
        sides.append(side)
    # gnubg orders points 1..24 then the bar, which from_counts accepts as 25 counts.
    opponent, mover = sides
    try:
        if on_roll == 0:
            return Position.from_counts(mover, opponent)
        return Position.from_counts(opponent, mover)
    except ValueError as exc:
        raise InvalidIdError(f"Position ID {text!r} is not a valid position: {exc}") from exc


def _b64(text: str, length: int, size: int) -> bytes:
    """Decode ``length`` base64 characters into ``size`` bytes."""
    if len(text) != length or not re.fullmatch(r"[A-Za-z0-9+/]+", text):
        raise InvalidIdError(f"expected {length} base64 characters, not {text!r}")
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4))
    except binascii.Error as exc:  # pragma: no cover - the regex rules this out
        raise InvalidIdError(f"not base64: {text!r}") from exc
    return raw[:size]


# -- Match ID ------------------------------------------------------------------------


class GameState(enum.IntEnum):
    """gnubg's game states in a Match ID."""

    NONE = 0
    PLAYING = 1
    OVER = 2
    RESIGNED = 3
    DROPPED = 4


@dataclass(frozen=True)
class MatchIdState:
    """The fields of a gnubg Match ID.

    ``cube_owner`` is None for a centred cube; ``dice`` is ``(0, 0)`` before the roll;
    ``length`` 0 is money play (unlimited); ``resigned`` is 0 none, 1 single, 2 gammon,
    3 backgammon.
    """

    cube: int = 1
    cube_owner: Player | None = None
    on_roll: Player = 0
    crawford: bool = False
    state: GameState = GameState.PLAYING
    turn: Player = 0
    double_offered: bool = False
    resigned: int = 0
    dice: tuple[int, int] = (0, 0)
    length: int = 0
    score: tuple[int, int] = (0, 0)
    extra_bits: int = 0
    """Bits 67..72, past the documented fields: newer gnubg versions set some of them;
    they are kept as they are so that every gnubg Match ID round-trips."""


# (name, width in bits) in the order of the gnubg manual.
_MATCH_FIELDS = (
    ("cube_log", 4),
    ("owner", 2),
    ("on_roll", 1),
    ("crawford", 1),
    ("state", 3),
    ("turn", 1),
    ("double_offered", 1),
    ("resigned", 2),
    ("die1", 3),
    ("die2", 3),
    ("length", 15),
    ("score0", 15),
    ("score1", 15),
    ("extra_bits", 6),
)


def encode_match_id(state: MatchIdState) -> str:
    """The 12-character gnubg Match ID of ``state``."""
    if state.cube < 1 or state.cube & (state.cube - 1):
        raise InvalidIdError(f"the cube must be a power of two, not {state.cube}")
    values = {
        "cube_log": state.cube.bit_length() - 1,
        "owner": 3 if state.cube_owner is None else state.cube_owner,
        "on_roll": state.on_roll,
        "crawford": int(state.crawford),
        "state": int(state.state),
        "turn": state.turn,
        "double_offered": int(state.double_offered),
        "resigned": state.resigned,
        "die1": state.dice[0],
        "die2": state.dice[1],
        "length": state.length,
        "score0": state.score[0],
        "score1": state.score[1],
        "extra_bits": state.extra_bits,
    }
    key = 0
    bit = 0
    for name, width in _MATCH_FIELDS:
        value = values[name]
        if not 0 <= value < 1 << width:
            raise InvalidIdError(f"{name} = {value} does not fit a Match ID")
        key |= value << bit
        bit += width
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(text: str) -> MatchIdState:
    """The fields of a gnubg Match ID.

    :raises InvalidIdError: not 12 base64 characters or impossible values.
    """
    key = int.from_bytes(_b64(text, 12, 9), "little")
    values: dict[str, int] = {}
    for name, width in _MATCH_FIELDS:
        values[name] = key & ((1 << width) - 1)
        key >>= width
    if values["owner"] == 2:
        raise InvalidIdError(f"Match ID {text!r} has no valid cube owner")
    if values["state"] > GameState.DROPPED:
        raise InvalidIdError(f"Match ID {text!r} has an unknown game state")
    if values["die1"] > 6 or values["die2"] > 6:
        raise InvalidIdError(f"Match ID {text!r} has a die above 6")
    return MatchIdState(
        cube=1 << values["cube_log"],
        cube_owner=None if values["owner"] == 3 else values["owner"],
        on_roll=values["on_roll"],
        crawford=bool(values["crawford"]),
        state=GameState(values["state"]),
        turn=values["turn"],
        double_offered=bool(values["double_offered"]),
        resigned=values["resigned"],
        dice=(values["die1"], values["die2"]),
        length=values["length"],
        score=(values["score0"], values["score1"]),
        extra_bits=values["extra_bits"],
    )
