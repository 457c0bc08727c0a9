"""Idle times are read on the injected timer (``App.timer``), also where the presence and
the info commands make them: the login who list, the batched who updates, ``rawwho``,
``who`` and ``whois`` follow a hand-driven :class:`~tests.server.fake_clock.FakeTimer`,
not the machine's monotonic clock (issue 15 item 7)."""

from __future__ import annotations

import asyncio

from protocol import replies
from protocol.replies import Mode
from server.config import Settings
from server.world.registry import LocalPresence
from server.world.session import Session
from tests.conftest import DbTarget

from .conftest import ScriptedClient, make_user, running
from .fake_clock import FakeTimer
from .sessions import RecordingOutput

IAC_WONT_TTYPE = b"\xff\xfc\x18"
"""What a plain client answers to the server's terminal-type question."""


def _idle(who_line: str) -> int:
    """The idle field of a CLIP 5 line (§2.3)."""
    return int(who_line.split(" ")[8])


def _online(presence: LocalPresence, timer: FakeTimer, name: str) -> RecordingOutput:
    """``name`` logged in to ``presence`` in CLIP mode, their clock ``timer``."""
    output = RecordingOutput()
    session = Session(output, monotonic=timer.now, name=name, mode=Mode.CLIP)
    session.enter_lobby()
    presence.add(session)
    return output


def test_the_who_list_counts_idle_time_on_the_timer() -> None:
    timer = FakeTimer(start=0.0)  # far from time.monotonic(): a wrong clock shows
    presence = LocalPresence(timer=timer)
    _online(presence, timer, "alice")
    timer.advance(90.0)
    assert [_idle(line) for line in presence.who_list()] == [90]


def test_a_batched_who_update_counts_idle_time_on_the_timer() -> None:
    timer = FakeTimer(start=0.0)
    presence = LocalPresence(timer=timer)
    _online(presence, timer, "alice")
    bob = _online(presence, timer, "bob")
    timer.advance(42.0)
    alice = presence.get("alice")
    assert alice is not None
    presence.who_update(alice)  # no event loop: the batch leaves at once
    assert [_idle(line) for line in bob.sent if line.startswith("5 alice ")] == [42]


async def test_who_and_whois_count_idle_time_on_the_apps_timer(
    settings: Settings, db_target: DbTarget
) -> None:
    timer = FakeTimer()
    async with running(settings, db_target, timer=timer) as app:
        clients: list[ScriptedClient] = []

        async def login(name: str) -> ScriptedClient:
            await make_user(app, name)
            reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
            client = ScriptedClient(reader, writer)
            clients.append(client)
            await client.send_raw(IAC_WONT_TTYPE)
            await client.prompt(replies.LOGIN_PROMPT)
            await client.send(f"login test_client 1008 {name} secret")
            await client.expect("6")
            return client

        try:
            await login("alice")
            bob = await login("bob")
            timer.advance(125.0)
            await bob.send("rawwho alice")
            line = await bob.expect_prefix("5 alice ")
            assert _idle(line) == 125
            await bob.send("whois alice")
            await bob.expect("  Still logged in. 2:05 minutes idle.")
        finally:
            for client in clients:
                await client.close()
