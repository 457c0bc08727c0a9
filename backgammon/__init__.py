"""The rules of backgammon as a pure library: positions, legal plays, matches, ratings.

Standard library only: no I/O, no asyncio, no logging. See docs/rules.md.
"""

from backgammon.board import BAR, OFF, Colour, Player, Position
from backgammon.dice import DiceRoller, Roll, ScriptedDice, SeededDice, SystemDice
from backgammon.errors import (
    ActionError,
    BackgammonError,
    IllegalMoveError,
    IllegalReason,
    InvalidIdError,
    InvalidPositionError,
    InvalidRollError,
    MoveSyntaxError,
    Refusal,
    SnapshotError,
)
from backgammon.match import Action, Match, MatchOptions, Phase
from backgammon.moves import LegalResults, Move, Play, legal_plays, legal_results
from backgammon.notation import (
    decode_match_id,
    decode_position_id,
    encode_match_id,
    encode_position_id,
    format_moves,
    parse_moves,
)

__all__ = [
    "BAR",
    "OFF",
    "Action",
    "ActionError",
    "BackgammonError",
    "Colour",
    "DiceRoller",
    "IllegalMoveError",
    "IllegalReason",
    "InvalidIdError",
    "InvalidPositionError",
    "InvalidRollError",
    "LegalResults",
    "Match",
    "MatchOptions",
    "Move",
    "MoveSyntaxError",
    "Phase",
    "Play",
    "Player",
    "Position",
    "Refusal",
    "Roll",
    "ScriptedDice",
    "SeededDice",
    "SnapshotError",
    "SystemDice",
    "decode_match_id",
    "decode_position_id",
    "encode_match_id",
    "encode_position_id",
    "format_moves",
    "legal_plays",
    "legal_results",
    "parse_moves",
]
