"""Every line a bot reads, as a typed value: CLIP messages, boards and the match-flow prose.

:func:`parse_event` tries, in order: a ``board:`` line (:func:`protocol.board_fibs.parse_board`),
a CLIP message 1-20 (:func:`protocol.clip.parse_clip`), then the prose of
shared/docs/fibs-protocol.md §4.3-§4.9 and §6 that a bot acts on. Anything else is
:class:`Text`. The patterns accept the exact texts of :mod:`protocol.replies` and the
variants real FIBS servers are known to send (a period or not, ``piece``/``pieces``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias, TypeVar

from backgammon.board import Position
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView
from protocol.clip import ClipMessage, parse_clip
from protocol.errors import BoardLineError, ClipParseError

# -- event types -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Clip:
    """A CLIP message (§2)."""

    message: ClipMessage


@dataclass(frozen=True, slots=True)
class Board:
    """A ``board:`` line (§3) and its parsed view."""

    line: str
    view: BoardView

    def position(self) -> Position:
        """The position with the perspective player (the bot when playing) as player 0."""
        return self.view.position(0)


@dataclass(frozen=True, slots=True)
class Invitation:
    """``X wants to play a N point match with you.`` / ``... an unlimited match ...`` /
    ``X wants to resume a saved match with you.`` (§4.3). ``length`` is None for an
    unlimited match or a resume."""

    name: str
    length: int | None
    resume: bool = False


@dataclass(frozen=True, slots=True)
class MatchStarted:
    """We now play with ``opponent`` (§4.3 join replies, new or resumed match)."""

    opponent: str
    length: int | None
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class NewGame:
    """``Starting a new game with X.`` (§4.4)."""

    opponent: str


@dataclass(frozen=True, slots=True)
class YourTurnToMove:
    """``It's your turn to move.`` after the opening roll (§4.4)."""


@dataclass(frozen=True, slots=True)
class RollOrDouble:
    """``It's your turn. Please roll or double`` (§4.5)."""


@dataclass(frozen=True, slots=True)
class YouRoll:
    """``You roll 3 and 1.`` (§4.5)."""

    dice: tuple[int, int]


@dataclass(frozen=True, slots=True)
class PleaseMove:
    """``Please move N pieces.`` (§4.5)."""

    count: int


@dataclass(frozen=True, slots=True)
class CantMove:
    """``You can't move.`` (§4.5): the turn passes."""


@dataclass(frozen=True, slots=True)
class OpponentMoved:
    """``X moves 8-5 6-5 .`` (§4.5), or ``X can't move.`` (``moves`` empty)."""

    name: str
    moves: str


@dataclass(frozen=True, slots=True)
class DoubleOffered:
    """``X doubles. Type 'accept' or 'reject'.`` or ``X redoubles to N. Type ...`` (§4.6).

    The same text (with or without ``** ``) is also the server's refusal of another
    command while the double waits for the bot's answer, and its re-announcement after a
    resume."""

    name: str
    redouble_allowed: bool
    cube: int | None = None
    """The value on offer for a redouble, else None."""


@dataclass(frozen=True, slots=True)
class ResignOffered:
    """``X wants to resign. You will win N points. Type 'accept' or 'reject'.`` (§4.7)."""

    name: str
    points: int


@dataclass(frozen=True, slots=True)
class ResignPending:
    """``** X wanted to resign. Type 'accept' or 'reject'.`` (§4.7): the server refused the
    bot's command because ``X``'s resignation waits for an answer. The points are not
    said; the bot may never have seen the offer (it was made before a save)."""

    name: str


@dataclass(frozen=True, slots=True)
class GameOver:
    """A game ended: ``You win the game and get N points. ...`` / ``X wins the game and
    gets N points. Sorry.`` / ``... gives up ...`` / ``... accepts and wins ...`` (§4.6-§4.8).
    ``winner`` is None when we won."""

    winner: str | None
    points: int


@dataclass(frozen=True, slots=True)
class JoinNextGame:
    """``Type 'join' if you want to play the next game, type 'leave' if you don't.`` (§4.8)."""


@dataclass(frozen=True, slots=True)
class MatchOver:
    """``You win the N point match a-b .`` / ``X wins the N point match a-b .`` (§4.8).
    ``winner`` is None when we won."""

    winner: str | None
    length: int
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MatchSaved:
    """The opponent left and the match was saved (§4.9): leave, logout, drop, time-out,
    network error, double login."""

    opponent: str


@dataclass(frozen=True, slots=True)
class SavedMatch:
    """One line of ``show saved`` (§4.14): ``**bonehead   3   1 -  2``."""

    opponent: str
    online: bool
    """The two-character mark is ``**`` (the opponent is logged in)."""
    playing: bool
    """The mark is `` *`` (the match we are playing now)."""
    length: int | None
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ToggleChanged:
    """The reply to ``toggle <name>`` (§4.15): the toggle's new value."""

    name: str
    value: bool


@dataclass(frozen=True, slots=True)
class SetChanged:
    """``Value of 'boardstyle' set to 3.`` (§4.16)."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class ServerShutdown:
    """``*** ATTENTION ! FIBS will restart in N seconds`` (§6.4)."""

    seconds: int
    restart: bool


@dataclass(frozen=True, slots=True)
class Goodbye:
    """The logout text: a line ``<spaces>Goodbye.`` (§1.8)."""


@dataclass(frozen=True, slots=True)
class Error:
    """Any other ``** `` line: usually the server refusing a command (§4)."""

    text: str


@dataclass(frozen=True, slots=True)
class Text:
    """A line no other event describes."""

    text: str


Event: TypeAlias = (
    Clip
    | Board
    | Invitation
    | MatchStarted
    | NewGame
    | YourTurnToMove
    | RollOrDouble
    | YouRoll
    | PleaseMove
    | CantMove
    | OpponentMoved
    | DoubleOffered
    | ResignOffered
    | ResignPending
    | GameOver
    | JoinNextGame
    | MatchOver
    | MatchSaved
    | SavedMatch
    | ToggleChanged
    | SetChanged
    | ServerShutdown
    | Goodbye
    | Error
    | Text
)

# -- patterns --------------------------------------------------------------------------

_NAME = r"(?P<name>[^\s:.]+)"
_LENGTH = r"(?:a (?P<length>\d+) point|an (?P<unlimited>unlimited)) match"
_POINTS = r"(?P<points>\d+) points?"
_END = r" ?\.?"


def _length(m: re.Match[str]) -> int | None:
    return int(m["length"]) if m["length"] else None


_Builder = Callable[[re.Match[str]], Event]

T = TypeVar("T")
Patterns: TypeAlias = Sequence[tuple[re.Pattern[str], Callable[[re.Match[str]], T]]]
"""Lines to read: each a pattern for the whole line and what its match is read as."""


def first_match(patterns: Patterns[T], text: str) -> T | None:
    """What the first of ``patterns`` that matches all of ``text`` reads it as, or None
    (the match lines here, the chouette's in :mod:`bots.chouette_events`)."""
    for pattern, build in patterns:
        match = pattern.fullmatch(text)
        if match is not None:
            return build(match)
    return None


_SAVED_REASONS = tuple(
    reason.replace("NAME", rf"(?P<n{i}>[^\s:.]+)")
    for i, reason in enumerate(
        (
            r"\*\* Player NAME has left the game",
            r"\*\* Player NAME terminated the game",
            r"\*\* NAME terminated the game",
            r"NAME logs out",
            r"NAME drops connection",
            r"Connection with NAME timed out",
            r"Network error with NAME",
            r"Closed old connection with user NAME",
        )
    )
)
"""The ways a match gets saved (§4.9); each names the opponent in its own group."""

_TOGGLE_TEXTS: Final[dict[str, tuple[str, bool]]] = {
    replies.toggle_message(name, value): (name, value)
    for name in replies.TOGGLES
    for value in (True, False)
}

_PATTERNS: Final[list[tuple[re.Pattern[str], _Builder]]] = [
    (
        re.compile(rf"{_NAME} wants to play {_LENGTH} with you\.\x07?"),
        lambda m: Invitation(m["name"], _length(m)),
    ),
    (
        re.compile(rf"{_NAME} wants to resume a saved match with you\.\x07?"),
        lambda m: Invitation(m["name"], None, resume=True),
    ),
    (
        re.compile(rf"\*\* You are now playing {_LENGTH} with {_NAME}\.?"),
        lambda m: MatchStarted(m["name"], _length(m)),
    ),
    (
        re.compile(rf"(?:\*\* )?Player {_NAME} has joined you for {_LENGTH}\.?"),
        lambda m: MatchStarted(m["name"], _length(m)),
    ),
    (
        re.compile(rf"You are now playing with {_NAME}\. Your running match was loaded\."),
        lambda m: MatchStarted(m["name"], None, resumed=True),
    ),
    (
        re.compile(rf"{_NAME} has joined you\. Your running match was loaded\."),
        lambda m: MatchStarted(m["name"], None, resumed=True),
    ),
    (re.compile(rf"Starting a new game with {_NAME}\."), lambda m: NewGame(m["name"])),
    (re.compile(r"It's your turn to move\."), lambda m: YourTurnToMove()),
    (
        re.compile(r"It's your turn(?:\. Please| to) roll or double\.?"),
        lambda m: RollOrDouble(),
    ),
    (
        re.compile(r"You roll (?P<a>[1-6]) and (?P<b>[1-6])\."),
        lambda m: YouRoll((int(m["a"]), int(m["b"]))),
    ),
    (
        re.compile(r"(?:\*\* )?Please move (?P<n>\d+) pieces?\."),
        lambda m: PleaseMove(int(m["n"])),
    ),
    (re.compile(r"You can't move\."), lambda m: CantMove()),
    (
        re.compile(rf"{_NAME} moves (?P<moves>.*?) ?\.?"),
        lambda m: OpponentMoved(m["name"], m["moves"]),
    ),
    (re.compile(rf"{_NAME} can't move\."), lambda m: OpponentMoved(m["name"], "")),
    (
        re.compile(rf"(?:\*\* )?{_NAME} doubles\. Type 'accept'(?P<re>,)? (?:or )?'?reject'?.*"),
        lambda m: DoubleOffered(m["name"], m["re"] is not None),
    ),
    (
        re.compile(rf"(?:\*\* )?{_NAME} redoubles to (?P<cube>\d+)\. Type 'accept'(?P<re>,)?.*"),
        lambda m: DoubleOffered(m["name"], m["re"] is not None, int(m["cube"])),
    ),
    (
        re.compile(rf"{_NAME} wants to resign\. You will win {_POINTS}\..*"),
        lambda m: ResignOffered(m["name"], int(m["points"])),
    ),
    (
        re.compile(rf"\*\* {_NAME} wanted to resign\..*"),
        lambda m: ResignPending(m["name"]),
    ),
    (
        re.compile(rf"You win the game and get {_POINTS}\..*"),
        lambda m: GameOver(None, int(m["points"])),
    ),
    (
        re.compile(rf"{_NAME} wins the game and gets {_POINTS}\..*"),
        lambda m: GameOver(m["name"], int(m["points"])),
    ),
    (
        re.compile(rf"{_NAME} gives up\. You win {_POINTS}\."),
        lambda m: GameOver(None, int(m["points"])),
    ),
    (
        re.compile(rf"You give up\. {_NAME} wins {_POINTS}\."),
        lambda m: GameOver(m["name"], int(m["points"])),
    ),
    (
        re.compile(rf"You accept and win {_POINTS}\."),
        lambda m: GameOver(None, int(m["points"])),
    ),
    (
        re.compile(rf"{_NAME} accepts and wins {_POINTS}\."),
        lambda m: GameOver(m["name"], int(m["points"])),
    ),
    (re.compile(re.escape(replies.JOIN_NEXT_GAME)), lambda m: JoinNextGame()),
    (
        re.compile(rf"You win the (?P<n>\d+) point match (?P<a>\d+)-(?P<b>\d+){_END}"),
        lambda m: MatchOver(None, int(m["n"]), (int(m["a"]), int(m["b"]))),
    ),
    (
        re.compile(rf"{_NAME} wins the (?P<n>\d+) point match (?P<a>\d+)-(?P<b>\d+){_END}"),
        lambda m: MatchOver(m["name"], int(m["n"]), (int(m["a"]), int(m["b"]))),
    ),
    (
        re.compile(rf"(?:{'|'.join(_SAVED_REASONS)})\.* The game was saved\."),
        lambda m: MatchSaved(_named(m.groupdict())),
    ),
    (
        re.compile(
            r"(?P<mark>\*\*| \*|  )(?P<name>[A-Za-z_<>][^\s]*)\s+(?P<len>\d+|unlimited)"
            r"\s+(?P<a>\d+)\s*-\s*(?P<b>\d+)"
        ),
        lambda m: SavedMatch(
            m["name"],
            online=m["mark"] == "**",
            playing=m["mark"] == " *",
            length=None if m["len"] == "unlimited" else int(m["len"]),
            score=(int(m["a"]), int(m["b"])),
        ),
    ),
    (
        re.compile(r"Value of '(?P<name>\w+)' set to '?(?P<value>[^']*?)'?\.?"),
        lambda m: SetChanged(m["name"], m["value"]),
    ),
    (
        re.compile(r"\*\*\* ATTENTION ! FIBS will (?P<what>restart|shut down) in (?P<n>\d+).*"),
        lambda m: ServerShutdown(int(m["n"]), restart=m["what"] == "restart"),
    ),
    (re.compile(r" {11,}Goodbye\..*"), lambda m: Goodbye()),
]
# The ``moves`` pattern would also read "X moves ..." inside other texts; it is anchored by
# fullmatch and names contain no spaces, so "The only possible move is ..." does not match.


def _named(groups: dict[str, str | None]) -> str:
    return next(v for v in groups.values() if v)


def parse_event(line: str) -> Event:
    """The typed event of one line read from the server (terminator already removed)."""
    text = line.rstrip("\r\n")
    if text.startswith("board:"):
        try:
            return Board(text, parse_board(text))
        except BoardLineError:
            return Text(text)
    if text[:1].isdigit():
        try:
            return Clip(parse_clip(text))
        except ClipParseError:
            pass
    stripped = text.rstrip()
    toggle = _TOGGLE_TEXTS.get(stripped)
    if toggle is not None:
        return ToggleChanged(*toggle)
    event = first_match(_PATTERNS, stripped)
    if event is not None:
        return event
    if stripped.startswith("** "):
        return Error(stripped)
    return Text(text)
