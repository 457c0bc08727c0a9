"""The gnubg bridge against the real /usr/games/gnubg (skipped when it is not installed)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import AsyncIterator

import pytest

from backgammon.board import Colour
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import parse_moves
from backgammon.validate import validate_play
from bots.chouette import box_accepts, box_doubles
from bots.chouette_events import ChouetteCube
from bots.decide import move_command
from bots.gnubg import GnubgEngine, GnubgStrategy
from bots.gnubg.engine import find_gnubg
from bots.gnubg.translate import move_request
from bots.strategy import ME, CubeAnswer
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView
from tests.bots.fakefibs import board
from tests.conftest import GNUBG_MISSING
from tests.ports import free_port

pytestmark = [
    pytest.mark.gnubg,
    pytest.mark.skipif(find_gnubg() is None, reason=GNUBG_MISSING),
]


@pytest.fixture
async def engine() -> AsyncIterator[GnubgEngine]:
    async with GnubgEngine(plies=0, timeout=30.0) as e:
        yield e


def points(**where: int) -> tuple[int, ...]:
    """26 FIBS numbers from ``p<n>=count`` (positive O, negative X)."""
    b = [0] * 26
    for key, value in where.items():
        b[int(key[1:])] = value
    return tuple(b)


def view(line: str) -> BoardView:
    return parse_board(line)


async def checked_move(strategy: GnubgStrategy, v: BoardView) -> str:
    """Ask the strategy for a move; check it is legal; return the FIBS command."""
    position = v.position(ME)
    roll = Roll(*v.player_dice)
    plays = legal_plays(position, ME, roll)
    play = await strategy.choose_play(position, roll, plays, v)
    assert play in plays
    command = move_command(play, v.colour)
    validate_play(position, ME, roll, parse_moves(command, v.colour))
    return command


async def test_calibration_finds_the_score_fields(engine: GnubgEngine) -> None:
    assert engine.conventions.swap_scores  # gnubg 1.07 reads field 4 as the opponent's


@pytest.mark.parametrize(
    ("colour", "expected"),
    [(Colour.O, {"8-5", "6-5"}), (Colour.X, {"17-20", "19-20"})],
)
async def test_opening_31_makes_the_five_point_for_both_colours(
    engine: GnubgEngine, colour: Colour, expected: set[str]
) -> None:
    strategy = GnubgStrategy(engine)
    command = await checked_move(strategy, view(board(colour, dice=(3, 1))))
    assert set(command.removeprefix("move ").split()) == expected
    assert strategy.fallbacks == 0


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
@pytest.mark.parametrize("dice", [(6, 5), (6, 6), (2, 1), (4, 4)])
async def test_opening_rolls_give_legal_plays(
    engine: GnubgEngine, colour: Colour, dice: tuple[int, int]
) -> None:
    strategy = GnubgStrategy(engine)
    await checked_move(strategy, view(board(colour, dice=dice)))
    assert strategy.fallbacks == 0


async def test_a_bear_off_for_x_uses_off(engine: GnubgEngine) -> None:
    strategy = GnubgStrategy(engine)
    line = board(Colour.X, dice=(6, 5), points=points(p24=-2, p22=-1, p6=15))
    command = await checked_move(strategy, view(line))
    assert command.count("-off") == 2
    assert strategy.fallbacks == 0


async def test_a_bear_off_for_o_uses_off(engine: GnubgEngine) -> None:
    strategy = GnubgStrategy(engine)
    line = board(Colour.O, dice=(4, 4), points=points(p1=2, p3=2, p19=-15))
    command = await checked_move(strategy, view(line))
    assert command.count("-off") == 4


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
async def test_a_bar_entry_hits(engine: GnubgEngine, colour: Colour) -> None:
    # The bot has one checker on the bar; the opponent has a blot on the bot's 22 point.
    if colour is Colour.O:
        b = points(p25=1, p24=1, p13=5, p8=3, p6=5, p22=-1, p1=-2, p12=-5, p17=-3, p19=-4)
    else:
        b = points(p0=-1, p1=-1, p12=-5, p17=-3, p19=-5, p22=1, p24=2, p13=5, p8=3, p6=4)
    strategy = GnubgStrategy(engine)
    command = await checked_move(strategy, view(board(colour, dice=(3, 1), points=b)))
    assert command.startswith("move bar-")
    assert strategy.fallbacks == 0


async def test_no_legal_move_returns_nothing(engine: GnubgEngine) -> None:
    b = points(p25=1, p19=-2, p20=-2, p21=-2, p22=-2, p23=-2, p24=-2, p1=-3, p6=14)
    request = move_request(view(board(Colour.O, dice=(6, 5), points=b)), engine.conventions)
    answer = await engine.ask(request)
    assert answer == ""


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
async def test_cube_decisions(engine: GnubgEngine, colour: Colour) -> None:
    strategy = GnubgStrategy(engine)
    s = colour.value
    # Last roll: the bot has two checkers on its 4 and 2 points (23/36 to get off), the
    # opponent gets off with any roll: double, and the opponent should take.
    if colour is Colour.O:
        b = points(p4=1, p2=1, p23=-1, p24=-1)
    else:
        b = points(p21=-1, p23=-1, p1=1, p2=1)
    assert await strategy.should_double(view(board(colour, points=b)))
    # Starting position: no double.
    assert not await strategy.should_double(view(board(colour)))
    # The opponent doubled and wins with any roll: drop.
    far = points(**{f"p{24 if s > 0 else 1}": -2 * s, f"p{6 if s > 0 else 19}": 15 * s})
    doubled = board(colour, doubled=True, may_double=(False, False), points=far)
    assert await strategy.answer_double(view(doubled)) is CubeAnswer.DROP
    # The opponent doubled in a last-roll position with 23/36: take.
    if colour is Colour.O:
        last = points(p21=-1, p23=-1, p1=1, p2=1)
    else:
        last = points(p4=1, p2=1, p23=-1, p24=-1)
    doubled = board(colour, doubled=True, may_double=(False, False), points=last)
    assert await strategy.answer_double(view(doubled)) is CubeAnswer.TAKE
    # ... but not when the bot is 1-away and the doubler 2-away (post-Crawford): a drop
    # leaves 1-away/1-away (50%), a take wins only 36%.
    doubled = board(
        colour,
        doubled=True,
        may_double=(False, False),
        points=last,
        score=(2, 1),
        post_crawford=True,
    )
    assert await strategy.answer_double(view(doubled)) is CubeAnswer.DROP
    assert strategy.fallbacks == 0


async def test_a_resignation_is_judged(engine: GnubgEngine) -> None:
    strategy = GnubgStrategy(engine)
    # The opponent (X) has 15 checkers on its 24 point (in the bot's home board), the bot
    # bears off its last two checkers next roll: a backgammon. Resigning a single: reject.
    b = points(p1=-15, p2=2)
    v = view(board(Colour.O, turn=Colour.X, points=b, length=5))
    assert not await strategy.answer_resignation(v, 1)
    assert await strategy.answer_resignation(v, 3)


async def test_a_killed_gnubg_is_restarted(engine: GnubgEngine) -> None:
    pid = engine.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await asyncio.sleep(0.1)
    strategy = GnubgStrategy(engine)
    await checked_move(strategy, view(board(Colour.O, dice=(3, 1))))
    assert engine.restarts == 1
    assert engine.pid != pid


async def test_close_kills_the_process() -> None:
    engine = GnubgEngine(plies=0)
    await engine.start()
    pid = engine.pid
    assert pid is not None
    await engine.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_two_plies_still_answer_in_time() -> None:
    async with GnubgEngine(plies=2, timeout=60.0) as engine:
        strategy = GnubgStrategy(engine)
        await checked_move(strategy, view(board(Colour.X, dice=(5, 2))))
        assert strategy.fallbacks == 0


async def test_the_external_port_can_be_chosen(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    caplog.set_level(logging.INFO, logger="bots.gnubg.engine")
    async with GnubgEngine(plies=0, timeout=30.0, port=port) as chosen:
        strategy = GnubgStrategy(chosen)
        await checked_move(strategy, view(board(Colour.O, dice=(3, 1))))
    assert f"listening on port {port} " in caplog.text


def test_a_port_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"port must be 0\.\.65535"):
        GnubgEngine(port=70000)  # parsed only: refused


async def test_the_box_decides_each_members_cube_on_its_own(engine: GnubgEngine) -> None:
    """gnubg as a chouette's box (docs/bots.md, "At a chouette"): one position, three
    cubes. The box has a closed board against three checkers on the bar, far too good
    for an owned cube (it plays on for the gammon), but under the table's Jacoby rule a
    centred cube counts no gammon until it is turned: that one is doubled. A member's own
    cube cannot be turned by the box, a settled one is out of the game. Without the Jacoby
    rule the centred cube is too good as well."""
    strategy = GnubgStrategy(engine)
    blitz = points(p6=3, p5=3, p4=2, p3=2, p2=2, p8=2, p13=1, p0=-3, p12=-4, p17=-4, p19=-4)
    box = view(board(Colour.O, points=blitz, length=None))
    cubes = [
        ChouetteCube("bob", 2, "box", True, None),
        ChouetteCube("cat", 1, "centre", False, None),
        ChouetteCube("dan", 2, "member", True, None),
        ChouetteCube("eve", 1, "centre", False, -1),
    ]
    strategy.jacoby = True  # the table's default
    assert "jacobyrule on" in move_request(box, jacoby=True)
    assert await box_doubles(strategy, box, cubes) == ["cat"]
    strategy.jacoby = False
    assert await box_doubles(strategy, box, cubes) == []
    # The team's doubles are answered by name: in a last roll the box takes them all...
    last = points(p21=-1, p23=-1, p1=1, p2=1)
    answering = view(board(Colour.O, points=last, length=None, doubled=True))
    by_name = {c.member: c for c in cubes}
    assert await box_accepts(strategy, answering, by_name, ("cat", "dan")) == ["cat", "dan"]
    # ... and drops them all when every roll wins for the team.
    far = points(p24=-2, p6=15)
    lost = view(board(Colour.O, points=far, length=None, doubled=True))
    assert await box_accepts(strategy, lost, by_name, ("cat", "dan")) == []
    assert strategy.fallbacks == 0
