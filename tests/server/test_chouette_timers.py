"""The chouette's timers, absences and records without sockets (docs/chouette.md; D360-D363):
the desk of test_chouette_desk.py on a hand-driven clock (tests/server/fake_clock.py), so
that a 10-second window or a 30-second answer passes when the test says so."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from backgammon.chouette import Chouette
from backgammon.chouette_settings import ChouetteSettings
from backgammon.chouette_state import BOX, TEAM, ChouettePhase, CubeOwner
from backgammon.dice import SeededDice
from protocol import replies
from protocol.commands import SessionState
from server.app import App
from server.config import Settings
from server.connection import end_session
from server.tables.chouette_table import LiveChouette
from server.tables.chouette_timers import Timed, next_timer

from .desk import Desk
from .fake_clock import FakeTimer
from .test_chouette_desk import play_turn, started

ANSWER = 30.0
"""fibs.conf's chouette_answer_time (the default)."""


@pytest.fixture
async def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
async def desk(settings: Settings, db_target: object, timer: FakeTimer) -> AsyncIterator[Desk]:
    db = await db_target.open()  # type: ignore[attr-defined]
    app = App(settings, db, dice=lambda: SeededDice(11), coin=lambda: 0, timer=timer)
    try:
        yield Desk(app)
    finally:
        await db.close()


async def until(table: LiveChouette, check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Return once ``check()`` holds and the action that made it so is saved and
    announced (the table's lock is free): what a timer set off has run."""
    async with asyncio.timeout(timeout):
        while not check() or table.lock.locked():
            await asyncio.sleep(0.005)


def phase(table: LiveChouette) -> ChouettePhase:
    """The table's phase (a call: not narrowed by an earlier assert)."""
    return table.core.phase


async def team_to_roll(desk: Desk, table: LiveChouette) -> None:
    """Play on until the team is to roll (its doubling window open)."""
    core = table.core
    while not (core.turn == TEAM and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)


async def box_to_roll(desk: Desk, table: LiveChouette) -> None:
    core = table.core
    while not (core.turn == BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)


def test_what_is_due_is_read_from_the_table() -> None:
    core = Chouette(ChouetteSettings(), SeededDice(3))
    for name in ("ann", "bob", "cat"):
        core.join(name)
    assert next_timer(core, ANSWER) is None  # no game
    core.start_game()
    while not (core.turn == TEAM and core.phase is ChouettePhase.TURN):
        mover = core.mover()
        assert mover is not None
        if core.phase is ChouettePhase.TURN:
            assert next_timer(core, ANSWER) is None  # the box rolls by hand
            core.roll(mover)
        else:
            assert next_timer(core, ANSWER) is None  # a move has no timer
            core.move(mover, core.legal_plays()[0].moves)
    assert next_timer(core, ANSWER) == (Timed.ROLL, 10.0)
    captain, other = core.line
    core.double(other)
    assert next_timer(core, ANSWER) == (Timed.ROLL, 10.0)  # the captain may still double
    core.roll(captain)  # closes the window: the box answers
    assert core.phase.value == ChouettePhase.BOX_ANSWER.value
    assert next_timer(core, ANSWER) == (Timed.TIME_OUT, ANSWER)
    assert next_timer(core, 0) is None  # chouette_answer_time = 0: no timer
    box = core.box
    assert box is not None
    core.set_present(box, False)
    assert next_timer(core, ANSWER) is None  # the box away holds the table (D361)
    quiet = Chouette(ChouetteSettings(team_autoroll=False), SeededDice(3))
    quiet.join("ann")
    quiet.join("bob")
    quiet.start_game()
    while not (quiet.turn == TEAM and quiet.phase is ChouettePhase.TURN):
        mover = quiet.mover()
        assert mover is not None
        if quiet.phase is ChouettePhase.TURN:
            quiet.roll(mover)
        else:
            quiet.move(mover, quiet.legal_plays()[0].moves)
    assert next_timer(quiet, ANSWER) is None  # autoroll off: the captain rolls by hand


async def test_the_team_rolls_after_the_window_and_the_box_answers_by_default(
    desk: Desk, timer: FakeTimer
) -> None:
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await team_to_roll(desk, table)
    box, (captain, other) = core.box, core.line
    assert box is not None
    await desk.run(other, "double")
    timer.advance(9)
    await desk.settle()
    assert core.phase is ChouettePhase.TURN  # the window is open 10 seconds
    timer.advance(1)
    await until(table, lambda: core.phase is ChouettePhase.BOX_ANSWER)
    assert replies.chouette_box_answers([other]) in desk.heard(captain)
    timer.advance(ANSWER - 1)
    await desk.settle()
    assert phase(table) is ChouettePhase.BOX_ANSWER
    timer.advance(1)
    await until(table, lambda: core.phase is not ChouettePhase.BOX_ANSWER)
    heard = desk.heard(other)
    assert replies.chouette_timed_out([box]) in heard
    assert replies.chouette_box_accepts(other, 2) in heard  # the default answer: accept
    assert core.cubes[other].value == 2 and core.cubes[other].owner is CubeOwner.BOX
    assert core.turn == TEAM and phase(table) is ChouettePhase.MOVE  # the team's roll followed
    assert any(line.startswith(f"{captain} rolls ") for line in heard)


async def test_the_box_timer_rejects_when_the_table_says_so(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob", words="box_timeout_accepts=off")
    core = table.core
    await team_to_roll(desk, table)
    captain = core.line[0]
    await desk.run(captain, "double")  # nobody else could double: to the box at once
    assert core.phase is ChouettePhase.BOX_ANSWER
    timer.advance(ANSWER)
    await until(table, lambda: core.game == 2)  # the captain won 1; the next game began
    assert core.totals[captain] == 1


async def test_silent_members_follow_the_captain(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await box_to_roll(desk, table)
    box, (captain, other) = core.box, core.line
    assert box is not None
    await desk.run(box, "double")
    await desk.run(captain, "reject")
    timer.advance(ANSWER)
    await until(table, lambda: other in core.results or core.game == 2)
    assert replies.chouette_timed_out([other]) in desk.heard(other)
    assert core.totals[other] == -1 and core.totals[captain] == -1  # both dropped


async def captain_doubles(desk: Desk, table: LiveChouette, answer: str) -> tuple[str, str]:
    """At a two-player table, the captain doubles on the team's turn and the box gives
    ``answer``; the box and the captain."""
    core = table.core
    await team_to_roll(desk, table)
    captain, box = core.line[0], core.box
    assert box is not None
    await desk.run(captain, "double")
    await desk.run(box, answer)
    return box, captain


async def test_nobody_able_to_double_the_team_rolls_at_once(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob")
    core = table.core
    box, captain = await captain_doubles(desk, table, "accept")  # the box owns the only cube
    await box_to_roll(desk, table)
    await play_turn(desk, table)  # the box rolls
    while core.turn == BOX and core.phase is ChouettePhase.MOVE:
        await play_turn(desk, table)
    # the team's turn: nobody may double, so its roll goes ahead without a window
    await until(table, lambda: core.turn == BOX or core.phase is ChouettePhase.MOVE)
    assert any(line.startswith(f"{captain} rolls ") for line in desk.heard(box))


async def test_an_absent_captain_is_replaced_and_returns(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await team_to_roll(desk, table)
    box, (captain, other) = core.box, core.line
    assert box is not None
    await end_session(desk.app, desk.sessions[captain])
    heard = desk.heard(other)
    assert replies.chouette_presence(captain, False) in heard
    assert replies.chouette_acting_captain(other) in heard
    assert captain in desk.app.local_tables.chouettes  # still at the table, away
    timer.advance(10)  # the window: the acting captain's roll goes ahead
    await until(table, lambda: core.phase is ChouettePhase.MOVE)
    assert any(line.startswith(f"{other} rolls ") for line in desk.heard(other))
    await desk.login(captain, clip=False)
    assert replies.NOT_AT_CHOUETTE not in await desk.run(captain, "chouette return")
    assert replies.chouette_presence(captain, True) in desk.heard(other)
    assert captain not in core.absent
    assert await desk.run(captain, "chouette return") == [replies.CHOUETTE_NOT_AWAY, "> "]


async def test_an_absent_box_holds_the_table_until_it_returns(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await team_to_roll(desk, table)
    box, (captain, other) = core.box, core.line
    assert box is not None
    await desk.run(other, "double")
    await desk.run(captain, "roll")  # the box must answer
    await end_session(desk.app, desk.sessions[box])
    assert replies.chouette_held(box) in desk.heard(captain)
    version = core.version
    timer.advance(10 * ANSWER)
    await desk.settle()
    assert core.version == version and core.phase is ChouettePhase.BOX_ANSWER  # held
    await desk.login(box, clip=False)
    await desk.run(box, "chouette return")
    assert replies.chouette_presence(box, True) in desk.heard(captain)
    timer.advance(ANSWER)  # its timer runs again
    await until(table, lambda: core.phase is not ChouettePhase.BOX_ANSWER)
    assert core.cubes[other].value == 2


async def test_a_table_left_by_everyone_is_restored_from_the_database(
    desk: Desk, timer: FakeTimer
) -> None:
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await team_to_roll(desk, table)
    other = core.line[1]
    await desk.run(other, "double")
    tables = desk.app.local_tables.chouettes
    for name in ("ann", "bob", "cat"):
        await end_session(desk.app, desk.sessions[name])
    assert not tables  # out of the process, saved
    await desk.login("dan", clip=False)
    assert await desk.run("dan", "chouette return") == [replies.NOT_AT_CHOUETTE, "> "]
    await desk.login("bob", clip=False)  # restored as bob logs in (D410)
    assert await desk.run("bob", "chouette open") == [replies.ALREADY_AT_CHOUETTE, "> "]
    assert await desk.run("bob", "chouette return") == [replies.CHOUETTE_NOT_AWAY, "> "]
    restored = tables["bob"]
    assert restored is not table and restored.table_id == table.table_id
    after = restored.core
    assert after.team_doubles == [other] and after.position == core.position
    assert set(after.absent) == {"ann", "bob", "cat"} - {"bob"}
    assert set(tables) == {"ann", "bob", "cat"}
    await desk.login("cat", clip=False)
    await desk.run("cat", "chouette leave")  # a saved seat may be left
    assert "cat" not in tables and not after.at_table("cat")


async def test_each_game_is_recorded_with_standings(desk: Desk, timer: FakeTimer) -> None:
    table = await started(desk, "ann", "bob")
    box, captain = await captain_doubles(desk, table, "reject")  # game 1: the captain wins 1
    desk.heard("ann")
    heard = await desk.run("ann", "chouette record")
    assert heard[:3] == [
        replies.chouette_record_heading("ann"),
        replies.chouette_record_line(captain, 1, 1),
        replies.chouette_record_line(box, 1, -1),
    ]
    assert await desk.run("ann", f"chouette record {captain}") == [
        replies.chouette_player_record(captain, 1, 1, 1),
        "> ",
    ]


async def test_a_saved_seat_is_left_without_returning(desk: Desk) -> None:
    table = await started(desk, "ann", "bob", "cat")
    for name in ("ann", "bob", "cat"):
        await end_session(desk.app, desk.sessions[name])
    tables = desk.app.local_tables.chouettes
    await desk.login("ann", clip=False)
    assert replies.chouette_leaves("ann") in await desk.run("ann", "chouette leave")
    assert not tables  # restored to be left; the others still away: unloaded again
    assert await desk.app.db.load_chouette_of("ann") is None
    saved = await desk.app.db.load_chouette_of("bob")
    assert saved is not None and saved.table_id == table.table_id
    assert await desk.run("ann", "chouette open") != [replies.CHOUETTE_SAVED_TABLE, "> "]


async def test_a_second_login_takes_the_seat_as_it_is(desk: Desk) -> None:
    """A login that replaces a session at the table keeps the seat (D361) and is seated in
    its place (D410): it plays on at once, and nobody hears of it."""
    table = await started(desk, "ann", "bob", "cat")
    core = table.core
    await box_to_roll(desk, table)
    box = core.box
    assert box is not None
    other = core.line[0]
    old = desk.sessions[box]
    new = await desk.login(box)
    await end_session(desk.app, old)  # the replaced session's end: no absence
    assert box not in core.absent and new.state is SessionState.PLAYING
    assert not any(replies.chouette_presence(box, True) == line for line in desk.heard(other))
    heard = await desk.run(box, "roll")
    assert any(line.startswith(f"{box} rolls ") for line in heard)
