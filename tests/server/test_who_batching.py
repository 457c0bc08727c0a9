"""Who updates are batched (D79): one who list per batch, at most one batch per interval."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import clip, replies
from server import registry
from server.app import App
from server.config import ConfigError, load
from server.registry import Registry

from .conftest import Connect, FibsClient, clip_login, make_user
from .sessions import login_all, online, who_update_seen


async def _batch_sent(app: App, clients: tuple[FibsClient, ...]) -> None:
    """Send a batch (alice's line) and read it everywhere: the interval starts now."""
    app.registry.who_update(online(app, "alice"))
    app.registry.flush_status()
    for client in clients:
        await who_update_seen(client, "alice")


async def test_a_match_start_reaches_the_others_as_one_who_update(
    connect: Connect, app: App
) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await bob.send("toggle ready")
    assert await bob.line() == replies.toggle_message("ready", True)
    for client in (alice, bob, carol):
        await who_update_seen(client, "bob")
    await alice.send("invite bob 1")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await alice.expect(replies.player_joined("bob", 1))
    before = await carol.expect("6")  # the match report (toggle report), then the batch
    block = [clip.WhoInfo.parse(line) for line in before if line.startswith("5 ")]
    assert sorted(info.name for info in block) == ["alice", "bob"]
    assert all(info.opponent != "-" for info in block)
    await carol.nothing()


async def test_changes_within_the_interval_wait_and_merge(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await _batch_sent(app, (alice, bob))
    monkeypatch.setattr(app.registry, "status_interval", 3600.0)
    for value in (True, False, True):
        await bob.send("toggle ready")
        assert await bob.line() == replies.toggle_message("ready", value)
    await alice.send("away back soon")
    assert await alice.line() == replies.YOURE_AWAY
    await bob.nothing()  # within the interval: nothing yet
    app.registry.flush_status()
    for client in (alice, bob):
        block = await client.expect("6")
        infos = [clip.WhoInfo.parse(line) for line in block]
        assert [(i.name, i.ready, i.away) for i in infos] == [
            ("bob", True, False),  # the latest state only, once
            ("alice", False, True),
        ]
    await bob.nothing()


async def test_no_who_update_follows_a_logout(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await _batch_sent(app, (alice, bob, carol))
    monkeypatch.setattr(app.registry, "status_interval", 3600.0)
    await bob.send("toggle ready")
    assert await bob.line() == replies.toggle_message("ready", True)
    await carol.send("toggle ready")
    assert await carol.line() == replies.toggle_message("ready", True)
    await bob.send("bye")
    await bob.closed()
    await alice.nothing()  # the logout waits for the batch too
    app.registry.flush_status()
    block = await alice.expect("6")
    assert block[0].startswith("8 bob ")  # the logout, then only carol's who line
    assert [clip.WhoInfo.parse(line).name for line in block[1:]] == ["carol"]
    await alice.nothing()


async def test_one_change_alone_is_sent_at_once(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await _batch_sent(app, (alice, bob))
    await alice.nothing(app.registry.status_interval)  # the interval has passed
    await bob.send("toggle ready")
    assert await bob.line() == replies.toggle_message("ready", True)
    assert clip.WhoInfo.parse(await who_update_seen(alice, "bob")).ready


async def test_a_batch_goes_out_in_chunks_and_in_order(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One recipient per turn of the loop: everyone still gets every notice, in order."""
    monkeypatch.setattr(registry, "BROADCAST_CHUNK", 1)
    clients = await login_all(connect, app, "alice", "bob", "carol", "dave")
    await make_user(app, "eve")
    eve = await clip_login(connect, app, "eve")
    await eve.send("bye")
    for client in clients:
        await client.expect_prefix("7 eve ")
        await client.expect_prefix("8 eve ")


def test_the_interval_comes_from_fibs_conf(tmp_path: Path) -> None:
    conf = tmp_path / "fibs.conf"
    conf.write_text("[limits]\nstatus_interval = 0.25\n", encoding="utf-8")
    assert load(conf).status_interval == 0.25
    assert load(None).status_interval == registry.DEFAULT_STATUS_INTERVAL
    conf.write_text("[limits]\nstatus_interval = -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="status_interval"):
        load(conf)
    assert Registry(0.25).status_interval == 0.25
