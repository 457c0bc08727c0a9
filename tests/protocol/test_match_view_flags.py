"""The flag fields of ``board:`` lines are FIBS's in every state (§3.4; D24, D100-D102).

Field by field (indices of §3.1: 32 turn, 33-36 dice, 37 cube, 38/39 may double, 40 was
doubled, 49 can move, 50/51 the Crawford fields) for both players' views and a watcher's,
in a normal game, the Crawford game, a post-Crawford game, with a double pending, with a
resignation pending, with an owned cube and between games.
"""

from __future__ import annotations

from backgammon.board import Colour, Position
from backgammon.dice import ScriptedDice
from backgammon.events import WinKind
from backgammon.match import Match, MatchOptions, Phase
from protocol.match_view import board_lines, board_state

NAMES = ("alice", "bob")
FLAGS = (32, 33, 34, 35, 36, 37, 38, 39, 40, 49, 50, 51)


def fields(match: Match, colour: Colour, *, you: bool = True) -> dict[int, int]:
    """The flag fields of the ``colour`` side's board line (``you``: as a player)."""
    (line,) = board_lines(board_state(match, NAMES), colour, 3, you=you)
    tokens = line.split(":")
    assert len(tokens) == 53
    return {i: int(tokens[i]) for i in FLAGS}


def expect(
    turn: int,
    dice: tuple[int, int, int, int] = (0, 0, 0, 0),
    cube: int = 1,
    may: tuple[int, int] = (1, 1),
    doubled: int = 0,
    can_move: int = 0,
    crawford: tuple[int, int] = (0, 0),
) -> dict[int, int]:
    return dict(zip(FLAGS, (turn, *dice, cube, *may, doubled, can_move, *crawford), strict=True))


def crawford_match(dice: tuple[int, ...], *, played: bool = False) -> Match:
    """A 3-point match at 2-0 for alice (O in the first game): the next game is the
    Crawford game, or a post-Crawford game if ``played``."""
    match = Match(MatchOptions(length=3), ScriptedDice(dice), o_player=0)
    match.score = [2, 0]
    match.crawford_played = played
    return match


def test_crawford_game_sends_one_one_on_every_turn() -> None:
    # Opening: alice (O) 3, bob (X) 1; alice moves 3-1 first.
    match = crawford_match((3, 1, 6, 5))
    match.start_game()
    assert match.crawford_game
    assert fields(match, Colour.O) == expect(1, dice=(3, 1, 0, 0), can_move=2)
    assert fields(match, Colour.X) == expect(1, dice=(0, 0, 3, 1))
    assert fields(match, Colour.O, you=False) == expect(1, dice=(3, 1, 0, 0), can_move=2)
    assert fields(match, Colour.X, you=False) == expect(1, dice=(0, 0, 3, 1))
    match.move(0, match.legal_plays()[0].moves)
    # bob's turn, no dice: FIBS sends 1:1 (0:0 would read as a pending double), and the
    # rules core still refuses his double.
    assert match.phase is Phase.TURN and match.turn == 1
    assert fields(match, Colour.X) == expect(-1)
    assert fields(match, Colour.O) == expect(-1)
    assert fields(match, Colour.X, you=False) == expect(-1)
    assert not match.may_double(1)
    match.roll(1)
    assert fields(match, Colour.X) == expect(-1, dice=(6, 5, 0, 0), can_move=2)
    assert fields(match, Colour.O) == expect(-1, dice=(0, 0, 6, 5))


def test_post_crawford_game_sets_field_51() -> None:
    match = crawford_match((3, 1), played=True)
    match.start_game()
    assert not match.crawford_game and match.post_crawford
    # A new game swaps colours only after the first one: alice is still O here.
    assert fields(match, Colour.O) == expect(1, dice=(3, 1, 0, 0), can_move=2, crawford=(0, 1))
    assert fields(match, Colour.X) == expect(1, dice=(0, 0, 3, 1), crawford=(0, 1))


def test_no_crawford_rule_sets_field_50_to_3() -> None:
    match = Match(MatchOptions(length=3, crawford=False), ScriptedDice((3, 1)), o_player=0)
    match.score = [2, 0]
    match.start_game()
    assert fields(match, Colour.X) == expect(1, dice=(0, 0, 3, 1), crawford=(3, 0))


def opened(dice: tuple[int, ...]) -> Match:
    """A 5-point match: alice (O) opened with 3-1 and moved; bob (X) is on turn."""
    match = Match(MatchOptions(length=5), ScriptedDice(dice), o_player=0)
    match.start_game()
    match.move(0, match.legal_plays()[0].moves)
    return match


def test_double_pending_owned_cube_and_the_doublers_roll() -> None:
    match = opened((3, 1, 6, 5))
    assert fields(match, Colour.X) == expect(-1)
    match.double(1)
    # Pending: turn = the side that must answer (O), 0:0 for everyone, "was doubled" only
    # in the doubled player's own line.
    assert fields(match, Colour.O) == expect(1, may=(0, 0), doubled=1)
    assert fields(match, Colour.X) == expect(1, may=(0, 0))
    assert fields(match, Colour.O, you=False) == expect(1, may=(0, 0))
    assert fields(match, Colour.X, you=False) == expect(1, may=(0, 0))
    match.take(0)
    # alice owns the cube at 2; the server rolls for bob at once (6-5).
    assert fields(match, Colour.O) == expect(-1, (0, 0, 6, 5), cube=2, may=(1, 0))
    assert fields(match, Colour.X) == expect(-1, (6, 5, 0, 0), cube=2, may=(0, 1), can_move=2)
    assert fields(match, Colour.X, you=False) == expect(
        -1, (6, 5, 0, 0), cube=2, may=(0, 1), can_move=2
    )
    match.move(1, match.legal_plays()[0].moves)
    # alice's turn without dice: she owns the cube, 1:0 in her line.
    assert fields(match, Colour.O) == expect(1, cube=2, may=(1, 0))


def test_resignation_pending_changes_no_flag() -> None:
    match = Match(MatchOptions(length=5), ScriptedDice((3, 1)), o_player=0)
    match.start_game()
    before = {c: fields(match, c) for c in Colour}
    match.resign(1, WinKind.SINGLE)
    assert match.to_act == 0
    # alice (O) still has her dice and her turn; the flags are as before the offer.
    assert fields(match, Colour.O) == before[Colour.O] == expect(1, (3, 1, 0, 0), can_move=2)
    assert fields(match, Colour.X) == before[Colour.X]
    match.reject_resignation(0)
    assert fields(match, Colour.O) == before[Colour.O]


def test_between_games_is_the_next_games_opening_table() -> None:
    match = opened((3, 1, 6, 5))
    match.double(1)
    match.take(0)
    match.resign(1, WinKind.SINGLE)
    match.accept_resignation(0)
    assert match.phase is Phase.GAME_OVER and match.score == [2, 0]
    # Turn 0, no dice, a centred cube at 1 with 1:1, the opening position (the real
    # FIBS board quoted in BaldLies' Match.pm); the score makes the next game Crawford.
    for colour in Colour:
        for you in (True, False):
            assert fields(match, colour, you=you) == expect(0)
    assert board_state(match, NAMES).board == Position.start().fibs_board(0)


def test_between_games_after_the_crawford_game_is_post_crawford() -> None:
    match = crawford_match((3, 1))
    match.start_game()
    match.resign(1, WinKind.SINGLE)
    match.accept_resignation(0)
    assert match.phase is Phase.MATCH_OVER  # 3-0: alice won; now a game that ends 2-1
    match = crawford_match((3, 1))
    match.start_game()
    match.resign(0, WinKind.SINGLE)
    match.accept_resignation(1)
    assert match.phase is Phase.GAME_OVER and match.score == [2, 1]
    assert fields(match, Colour.O) == expect(0, crawford=(0, 1))
