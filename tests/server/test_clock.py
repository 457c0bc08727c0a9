"""What reads time reads the injected clock: the command rate and the idle time follow a
hand-driven :class:`~tests.server.fake_clock.FakeTimer`, without sleeping. (The idle
warning and the idle and login time-outs: tests/server/test_abuse.py.)"""

from __future__ import annotations

import asyncio

from server.connection import RateLimit
from server.world.session import Session

from .fake_clock import FakeTimer
from .sessions import RecordingOutput


def test_the_command_rate_refills_on_the_timer() -> None:
    timer = FakeTimer(start=100.0)
    limit = RateLimit(4.0, 2, timer)
    for _ in range(2):
        assert limit.delay() == 0.0
        limit.take()
    assert limit.delay() == 0.25
    timer.advance(0.125)
    assert limit.delay() == 0.125
    timer.advance(0.125)
    assert limit.delay() == 0.0
    timer.advance(60.0)
    limit.take()
    limit.take()
    assert limit.delay() == 0.25  # the bucket holds no more than the burst


def test_idle_time_is_read_on_the_sessions_clock() -> None:
    timer = FakeTimer(start=100.0)
    session = Session(RecordingOutput(), monotonic=timer.now, name="alice")
    assert session.last_input == 100.0 and session.idle_seconds() == 0
    timer.advance(7.75)
    assert session.idle_seconds() == 7
    assert session.who_info().idle == 7
    assert session.who_line().split(" ")[8] == "7"


async def test_the_fake_timer_wakes_only_on_advance() -> None:
    timer = FakeTimer(start=0.0)
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(timer.wait(never, 2.0))
    await timer.until_pending(1)
    timer.advance(1.5)
    await asyncio.sleep(0)
    assert not waiting.done()
    timer.advance(0.5)
    assert await waiting is False
    assert timer.pending == 0
