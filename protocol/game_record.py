"""A game's record as its turns: the one walk over a game's events.

Three texts show a finished (or stopped) game turn by turn: the record sent at a game's
end to players with ``toggle moves`` (§4.8), ``oldmoves`` (§4.10) and the Jellyfish
``.mat`` export (:mod:`protocol.mat_export`). They all need the same reading of the
events: which roll a play was made with (the opening roll's two dice, or a
``DiceRolled``), which roll could not be played, the cube actions and the win.
:func:`game_turns` is that reading, once; each format then only lays its entries out.
:func:`oldmoves_lines` is the §4.10 layout.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from backgammon.board import Colour, Player
from backgammon.dice import Roll
from backgammon.events import (
    CheckersMoved,
    CubeDropped,
    CubeOffered,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    Event,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    TurnPassed,
)
from backgammon.match import Match
from backgammon.moves import Move
from backgammon.notation import format_move
from protocol import replies


@dataclass(frozen=True, slots=True)
class Played:
    """``player`` rolled ``roll`` and played ``moves`` (empty: the roll could not be played)."""

    player: Player
    roll: Roll
    """As rolled; an opening roll is the starter's die, then the other player's."""
    moves: tuple[Move, ...]
    hits: tuple[int, ...]
    """The mover's own points where an opposing blot was hit."""


@dataclass(frozen=True, slots=True)
class Unplayed:
    """``player`` rolled ``roll`` and the game ended (a resignation) or stopped before
    they played it."""

    player: Player
    roll: Roll


class CubeAction(enum.Enum):
    """What a player did with the cube."""

    DOUBLE = "double"
    REDOUBLE = "redouble"
    """An instant redouble (beaver, raccoon, ...): take and double again at once."""
    TAKE = "take"
    DROP = "drop"


@dataclass(frozen=True, slots=True)
class Cube:
    """A cube action; ``value`` is the cube offered or taken (0 for a drop)."""

    player: Player
    action: CubeAction
    value: int = 0
    redoubled: bool = False
    """For a take: the offer taken was an instant redouble."""


@dataclass(frozen=True, slots=True)
class Won:
    """``player`` won the game, ``points`` points; ``match``: and with it the match."""

    player: Player
    points: int
    match: bool


Turn = Played | Unplayed | Cube | Won
"""One entry of a game's record."""


def game_turns(events: Sequence[Event]) -> Iterator[Turn]:
    """The entries of one game's record, in the order they happened.

    A roll becomes an entry with the play made with it (:class:`Played`) when that play
    (or the turn passing, for a roll that cannot be played) comes; a roll still waiting
    when the game ends or the events stop is :class:`Unplayed`, just before the
    :class:`Won` or at the end. An opening tie is no entry (nobody plays it).
    """
    pending: tuple[Player, Roll] | None = None
    for position, event in enumerate(events):
        match event:
            case OpeningRoll(dice=dice, starter=starter) if starter is not None:
                pending = (starter, Roll(dice[starter], dice[1 - starter]))
            case DiceRolled(player=player, roll=roll):
                pending = (player, roll)
            case TurnPassed() if pending is not None:
                yield Played(pending[0], pending[1], (), ())
                pending = None
            case CheckersMoved(player=player, moves=moves, hits=hits) if pending is not None:
                yield Played(player, pending[1], moves, hits)
                pending = None
            case CubeOffered(player=player, value=value):
                yield Cube(player, CubeAction.DOUBLE, value)
            case CubeRedoubled(player=player, value=value):
                yield Cube(player, CubeAction.REDOUBLE, value)
            case CubeTaken(player=player, value=value, redoubled=redoubled):
                yield Cube(player, CubeAction.TAKE, value, redoubled)
            case CubeDropped(player=player):
                yield Cube(player, CubeAction.DROP)
            case GameWon(winner=winner, points=points):
                if pending is not None:
                    yield Unplayed(*pending)
                    pending = None
                ended = any(isinstance(e, MatchWon) for e in events[position + 1 :])
                yield Won(winner, points, ended)
    if pending is not None:
        yield Unplayed(*pending)


def game_start(events: Sequence[Event]) -> GameStarted | None:
    """The event that began the game, if the events hold it."""
    return next((e for e in events if isinstance(e, GameStarted)), None)


def last_game(match: Match) -> Sequence[Event]:
    """The events of ``match``'s game in progress, else of its last finished game (empty
    before the first game)."""
    if match.record:
        return match.record
    return match.history[-1] if match.history else ()


_OLDMOVES_CUBE = {
    CubeAction.DOUBLE: "doubles",
    CubeAction.REDOUBLE: "doubles",
    CubeAction.TAKE: "accepts",
    CubeAction.DROP: "rejects",
}
"""§4.10's word for each cube action (an instant redouble is a double there too)."""


def oldmoves_lines(
    events: Sequence[Event], names: Sequence[str], length: int | None, o_player: Player
) -> list[str]:
    """A game's record in the ``oldmoves`` form of §4.10 (also the ``toggle moves`` record).

    ``names`` are the players' names, ``length`` None for unlimited; ``o_player`` is who
    plays O when the events do not say (they begin with ``GameStarted``). Empty for no
    events. Moves are in FIBS's absolute numbers; an unplayed roll is left out.
    """
    if not events:
        return []
    started = game_start(events)
    if started is not None:
        o_player = started.o_player
    letters = {o_player: "O", 1 - o_player: "X"}
    colours = {o_player: Colour.O, 1 - o_player: Colour.X}
    score = started.score if started is not None else (0, 0)
    lines = replies.oldmoves_header(
        score[1 - o_player], score[o_player], length, names[1 - o_player], names[o_player]
    )
    for turn in game_turns(events):
        match turn:
            case Played(player=player, roll=roll, moves=moves):
                texts = [format_move(m, colours[player]) for m in moves]
                lines.append(replies.oldmoves_roll(letters[player], roll.d1, roll.d2, texts))
            case Cube(player=player, action=action):
                lines.append(replies.oldmoves_action(letters[player], _OLDMOVES_CUBE[action]))
            case Won(player=player):
                lines.append(replies.oldmoves_action(letters[player], "wins"))
            case Unplayed():
                pass
    return lines
