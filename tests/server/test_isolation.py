"""No client can hurt another through its own connection (issue 18 item 1, D210).

A client that negotiates a character set the server cannot write (``IAC SB CHARSET
ACCEPTED "ebcdic" IAC SE``) keeps a UTF-8 connection. And should a write to one
session fail all the same, that session alone is closed, logged once, and every loop
over sessions goes on: shouts, status notices, match reports, watchers, the shutdown
notice. Each test breaks one session's writes the way the charset once did: its
connection's encoding becomes one that Python cannot encode to.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from backgammon.dice import SeededDice
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from tests.conftest import DbTarget

from .conftest import IAC_WONT_TTYPE, Connect, ScriptedClient, clip_login, serving
from .match_driver import Player, play_out
from .sessions import login_all, online, who_update_seen

IAC, SB, SE, WILL, DO = b"\xff", b"\xfa", b"\xf0", b"\xfb", b"\xfd"
CHARSET, REQUEST, ACCEPTED, REJECTED = b"\x2a", b"\x01", b"\x02", b"\x03"
ACCEPT_EBCDIC = IAC + SB + CHARSET + ACCEPTED + b"ebcdic" + IAC + SE
"""The issue's bytes: ff fa 2a 02 65 62 63 64 69 63 ff f0."""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


def break_writes(app: App, name: str) -> None:
    """From now on every write to ``name``'s connection raises (LookupError), as the
    negotiated "ebcdic" made it before D210."""
    writer: Any = online(app, name).output._writer  # type: ignore[attr-defined]
    writer.fn_encoding = lambda **_: "ebcdic"


def failures(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.get_records("call")
        if r.levelno >= logging.ERROR and "failed; connection closed" in r.getMessage()
    ]


async def closed_once(mallory: ScriptedClient, caplog: pytest.LogCaptureFixture, app: App) -> None:
    """mallory's connection was closed, the failure logged once, and mallory is gone."""
    with pytest.raises(ConnectionError):
        while True:
            await mallory._fill(5.0)
    for _ in range(100):
        if app.registry.get("mallory") is None:
            break
        await asyncio.sleep(0.02)
    assert app.registry.get("mallory") is None
    logged = failures(caplog)
    assert len(logged) == 1, logged


async def _raw_until(client: ScriptedClient, wanted: bytes) -> bytes:
    data = client.buffer
    while wanted not in data:
        chunk = await asyncio.wait_for(client.reader.read(65536), 5)
        assert chunk, f"closed before {wanted!r}; got {data!r}"
        data += chunk
    client.buffer = b""
    return data


async def test_a_negotiated_ebcdic_keeps_the_connection_utf8(connect: Connect, app: App) -> None:
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    await mallory.send_raw(ACCEPT_EBCDIC)  # unsolicited: ignored
    await mallory.send_raw(IAC + WILL + CHARSET)
    offer = await _raw_until(mallory, IAC + SE)
    assert IAC + SB + CHARSET + REQUEST + b" UTF-8 US-ASCII" + IAC + SE in offer
    await mallory.send_raw(ACCEPT_EBCDIC)  # an answer to the offer, not one of its names
    await mallory.send_raw(IAC + SB + CHARSET + REQUEST + b";EBCDIC-US;CP500" + IAC + SE)
    refused = await _raw_until(mallory, IAC + SE)
    assert refused.endswith(IAC + SB + CHARSET + REJECTED + IAC + SE)
    await mallory.send_raw(IAC + SB + CHARSET + REQUEST + b";CP500;utf-8" + IAC + SE)
    accepted = await _raw_until(mallory, IAC + SE)
    assert accepted.endswith(IAC + SB + CHARSET + ACCEPTED + b"utf-8" + IAC + SE)
    await alice.send("tell mallory hello")
    assert await mallory.line() == "12 alice hello"
    await alice.send("shout still there?")
    assert await mallory.line() == "13 alice still there?"
    await mallory.send("tell alice yes")
    assert await alice.expect_prefix("12 ") == "12 mallory yes"
    assert online(app, "mallory").output._writer.fn_encoding(outgoing=True) == "utf8"  # type: ignore[attr-defined]


@pytest.mark.logs_errors
async def test_a_failing_recipient_stops_no_shout_or_tell(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    alice, mallory, carol = await login_all(connect, app, "alice", "mallory", "carol")
    break_writes(app, "mallory")
    await alice.send("shout hello")
    assert await carol.expect_prefix("13 ") == "13 alice hello"
    await closed_once(mallory, caplog, app)
    await alice.send("tell carol hi")
    assert await carol.expect_prefix("12 ") == "12 alice hi"


@pytest.mark.logs_errors
async def test_a_failing_recipient_stops_no_status_notice(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    alice, mallory = await login_all(connect, app, "alice", "mallory")
    break_writes(app, "mallory")
    dave = await clip_login(connect, app, "dave")  # its CLIP 7 and 5 go to everyone
    assert await alice.expect_prefix("7 dave ") == replies.login_notice("dave", replies.Mode.CLIP)
    await who_update_seen(alice, "dave")
    await closed_once(mallory, caplog, app)
    assert await alice.expect_prefix("8 mallory ")
    await dave.send("toggle ready")  # and the batches after it still go out
    assert (await who_update_seen(alice, "dave")).split(" ")[4] == "1"
    erin = await clip_login(connect, app, "erin")
    assert await dave.expect_prefix("7 erin ")
    await erin.close()


async def _watched_match(connect: Connect, app: App) -> tuple[ScriptedClient, ...]:
    """alice and bob start a 1-point match; carol and mallory watch alice."""
    app.dice = lambda: SeededDice(11)
    app.coin = lambda: 0
    alice, bob, carol, mallory = await login_all(connect, app, "alice", "bob", "carol", "mallory")
    for client in (alice, bob, carol, mallory):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    for client in (carol, mallory):
        await client.send("watch alice")
        await client.expect(replies.now_watching("alice"))
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    return alice, bob, carol, mallory


@pytest.mark.logs_errors
async def test_a_failing_watcher_stops_no_match(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob, carol, mallory = await _watched_match(connect, app)
    await bob.send("join alice")
    break_writes(app, "mallory")  # the match's every roll and move goes to its watchers
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    assert await carol.expect_prefix("board:")
    await closed_once(mallory, caplog, app)
    assert "internal error" not in " ".join(alice.seen + bob.seen).lower()


@pytest.mark.logs_errors
async def test_a_failing_recipient_stops_no_match_report(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """The end of a match with ``report`` on (the default) for everyone: carol hears the
    result, and both players are free again (before D210 they stayed "playing")."""
    alice, bob, carol, mallory = await _watched_match(connect, app)
    for client in (carol, mallory):
        await client.send("unwatch")
        await client.expect(replies.you_stop_watching("alice"))
    break_writes(app, "mallory")
    await bob.send("join alice")
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    winner = "alice" if any(line.startswith("You win the ") for line in alice.seen) else "bob"
    loser = "bob" if winner == "alice" else "alice"
    await carol.expect(replies.match_end_report(winner, loser, 1, 1, 0))
    await closed_once(mallory, caplog, app)
    assert online(app, "alice").opponent is None and online(app, "bob").opponent is None
    await alice.send("show saved")  # the finished match did not stay behind as a saved one
    await alice.expect(replies.NO_SAVED_GAMES)
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))


@pytest.mark.logs_errors
async def test_a_failing_recipient_stops_no_shutdown(
    settings: Settings, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving(settings, db_target) as service:
        clients = []
        for _ in range(3):
            reader, writer = await asyncio.open_connection("127.0.0.1", service.app.port)
            client = ScriptedClient(reader, writer)
            await client.send_raw(IAC_WONT_TTYPE)
            clients.append(client)

        async def connect() -> ScriptedClient:
            return clients.pop(0)

        alice = await clip_login(connect, service.app, "alice")
        mallory = await clip_login(connect, service.app, "mallory")
        carol = await clip_login(connect, service.app, "carol")
        break_writes(service.app, "mallory")
        await stop_cleanly(service)
        for client in (alice, carol):
            await client.expect(replies.shutdown_warning(0, restart=False))
            assert await client.closed()
        assert await mallory.closed()
        assert len(failures(caplog)) == 1
        for client in (alice, mallory, carol):
            await client.close()


async def stop_cleanly(service: Service) -> None:
    await service.stop()  # raises nothing: SIGTERM's exit status comes from here


class _FailingOutput:
    """A transport whose writes raise (any transport, not only telnet's): the session's
    own connection underneath is what gets closed."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.host = real.host

    def send(self, lines: Any) -> None:
        raise RuntimeError("transport broken")

    def send_payload(self, payload: Any) -> None:
        raise RuntimeError("transport broken")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.mark.logs_errors
async def test_a_failing_transport_stops_no_status_batch_or_broadcast(
    connect: Connect, app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """Not telnet's write but the transport itself raises (as another transport could):
    the batch of status notices and a shout still reach everyone else."""
    alice, mallory, carol = await login_all(connect, app, "alice", "mallory", "carol")
    session = online(app, "mallory")
    session.output = _FailingOutput(session.output)
    dave = await clip_login(connect, app, "dave")
    for client in (alice, carol):
        assert await client.expect_prefix("7 dave ")
    await dave.send("shout hi")
    for client in (alice, carol):
        assert await client.expect_prefix("13 ") == "13 dave hi"
    await closed_once(mallory, caplog, app)
