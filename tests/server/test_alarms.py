"""Alarms that move later (server/clock.py ``Alarm``) and what runs on them: the idle
warning and time-out of a connection, and a match's reminder and time-out (D55).

Time is a hand-driven clock (tests/server/fake_clock.py): nothing sleeps.
"""

from __future__ import annotations

import asyncio

from backgammon.dice import ScriptedDice
from protocol import replies
from server.clock import Alarm
from server.config import Settings
from tests.conftest import DbTarget

from .conftest import ScriptedClient, clip_login, running
from .fake_clock import FakeTimer
from .sessions import ready_pair
from .test_before_login import clients, open_client
from .test_match_rules import move_first_play, until

# -- the alarm ------------------------------------------------------------------------------


def _alarm() -> tuple[FakeTimer, Alarm, list[float]]:
    """An alarm on a hand-driven clock at 0, and the times it rang at."""
    timer = FakeTimer(start=0.0)
    rings: list[float] = []
    return timer, Alarm(timer, lambda: rings.append(timer.now())), rings


async def test_an_alarm_moved_later_keeps_one_timer_and_rings_once_at_the_last_time() -> None:
    timer, alarm, rings = _alarm()
    for when in (1.0, 2.0, 3.0, 4.0):
        alarm.set(when)
    assert timer.pending == 1 and alarm.due == 4.0
    timer.advance(1.0)  # the first timer goes off early: one for 4.0 instead
    assert rings == [] and timer.pending == 1
    timer.advance(2.5)
    assert rings == []
    timer.advance(0.5)
    assert rings == [4.0] and alarm.due is None and timer.pending == 0
    timer.advance(10.0)
    assert rings == [4.0]


async def test_an_alarm_moved_earlier_rings_at_the_earlier_time() -> None:
    timer, alarm, rings = _alarm()
    alarm.set(5.0)
    alarm.set(2.0)
    assert timer.pending == 1  # the later timer was cancelled
    timer.advance(2.0)
    assert rings == [2.0]
    timer.advance(5.0)
    assert rings == [2.0]


async def test_a_cancelled_alarm_does_not_ring_until_it_is_set_again() -> None:
    timer, alarm, rings = _alarm()
    alarm.set(1.0)
    alarm.cancel()
    assert timer.pending == 0 and alarm.due is None
    timer.advance(2.0)
    assert rings == []
    alarm.set(1.0)  # already due: on the next turn of the loop
    await asyncio.sleep(0)
    assert rings == [2.0]


# -- the idle time-out ----------------------------------------------------------------------


async def test_a_line_after_the_idle_warning_starts_the_quiet_time_again(
    settings: Settings, db_target: DbTarget
) -> None:
    """Warned at 1 s of quiet, mallory types at 1.5 s: no time-out at 2 s, a second
    warning at 2.5 s (1 s after her line), the time-out at 3.5 s."""
    quick = settings.replace(idle_timeout=2.0, idle_warning=1.0)
    timer = FakeTimer()
    async with running(quick, db_target, timer=timer) as app, clients(app) as opened:
        mallory = await clip_login(lambda: open_client(app), app, "mallory")
        opened.append(mallory)
        await timer.until_pending(1)
        timer.advance(1.0)
        assert await mallory.line() == replies.idle_warning(1)
        timer.advance(0.5)
        await mallory.send("time")
        assert (await mallory.line()).endswith(" UTC )")
        timer.advance(0.5)  # 2 s since the warning's quiet spell began: she typed since
        await mallory.nothing(0.05)
        timer.advance(0.5)
        assert await mallory.line() == replies.idle_warning(1)
        timer.advance(0.5)
        await mallory.nothing(0.05)
        timer.advance(0.5)
        assert await mallory.line() == replies.CONNECTION_TIMED_OUT
        assert await mallory.closed(2)


# -- the match's clock (D55) ----------------------------------------------------------------


async def drained(client: ScriptedClient) -> None:
    """Read what the client was sent until nothing more comes for a tenth of a second."""
    while True:
        try:
            await client.line(0.1)
        except TimeoutError:
            return


async def test_the_match_clock_runs_from_the_last_action(
    settings: Settings, db_target: DbTarget
) -> None:
    """The reminder comes ``match_reminder`` seconds after the last action, to whoever
    must act then, and the time-out ``match_timeout`` seconds after it, to the other."""
    quick = settings.replace(
        match_reminder=10.0,
        match_timeout=20.0,
        idle_timeout=0.0,
        commands_per_second=10_000.0,
        command_burst=10_000,
    )
    timer = FakeTimer()
    async with running(quick, db_target, timer=timer) as app, clients(app) as opened:

        async def connect() -> ScriptedClient:
            client = await open_client(app)
            opened.append(client)
            return client

        app.dice = lambda: ScriptedDice((3, 1, 5, 2))
        app.coin = lambda: 0  # alice moves first
        alice, bob = await ready_pair(connect, app)
        await alice.send("invite bob 1")
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        await alice.expect(replies.YOUR_TURN_TO_MOVE)
        _, board = await until(alice, "board:")
        timer.advance(8.0)
        await move_first_play(alice, [board])
        await bob.expect(replies.you_roll(5, 2))  # bob must move now
        await drained(alice)
        await drained(bob)
        timer.advance(8.0)  # 16 s since the match began, 8 since alice moved
        await alice.nothing(0.05)
        await bob.nothing(0.05)
        timer.advance(2.0)
        assert await bob.line() == replies.turn_reminder("alice")
        timer.advance(9.0)
        await alice.nothing(0.05)
        timer.advance(1.0)
        assert await alice.line() == replies.opponent_too_slow("bob", 20)
        assert replies.turn_reminder("bob") not in alice.seen
        timer.advance(100.0)
        await alice.nothing(0.05)
        await bob.nothing(0.05)
