"""The one walk over a game's events (protocol/game_record.py) and the ``oldmoves`` text."""

from __future__ import annotations

from backgammon.dice import Roll
from backgammon.events import (
    CheckersMoved,
    CubeOffered,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    Event,
    GameEnd,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    ResignationAccepted,
    TurnPassed,
    WinKind,
)
from backgammon.moves import Move
from protocol.game_record import (
    Cube,
    CubeAction,
    Played,
    Unplayed,
    Won,
    game_turns,
    oldmoves_lines,
)

OPENING = (13, 10), (24, 23)
GAME: list[Event] = [
    GameStarted(1, 1, False, (0, 0)),
    OpeningRoll((5, 5), None),
    OpeningRoll((1, 3), 1),
    CheckersMoved(1, (Move.of(*OPENING[0]), Move.of(*OPENING[1])), ()),
    DiceRolled(0, Roll(6, 6), 0),
    TurnPassed(0),
    CubeOffered(1, 2),
    CubeRedoubled(0, 4, 1),
    CubeTaken(1, 4, True),
    DiceRolled(1, Roll(2, 1), 2),
    ResignationAccepted(0, 4),
    GameWon(0, WinKind.SINGLE, GameEnd.RESIGNED, 4, (4, 0)),
    MatchWon(0, (4, 0)),
]


def test_each_roll_is_paired_with_its_play() -> None:
    assert list(game_turns(GAME)) == [
        Played(1, Roll(3, 1), (Move.of(13, 10), Move.of(24, 23)), ()),
        Played(0, Roll(6, 6), (), ()),
        Cube(1, CubeAction.DOUBLE, 2),
        Cube(0, CubeAction.REDOUBLE, 4),
        Cube(1, CubeAction.TAKE, 4, True),
        Unplayed(1, Roll(2, 1)),
        Won(0, 4, True),
    ]


def test_a_roll_not_yet_played_ends_an_unfinished_game() -> None:
    assert list(game_turns(GAME[:5])) == [
        Played(1, Roll(3, 1), (Move.of(13, 10), Move.of(24, 23)), ()),
        Unplayed(0, Roll(6, 6)),
    ]


def test_oldmoves_lines() -> None:
    assert oldmoves_lines(GAME, ("alice", "bob"), 3, 0) == [
        "Score is 0-0 in a 3 point match.",
        "alice is X - bob is O",
        "",
        "O: (3 1) 13-10 24-23",
        "X: (6 6) can't move",
        "O: doubles",
        "X: doubles",
        "O: accepts",
        "X: wins",
    ]
    assert oldmoves_lines([], ("alice", "bob"), None, 0) == []
