"""A rate for what reaches many users (issue 34 item 4, D300, D301): shouts per user,
invitations per user and target, and ``gag`` stopping invitations. Time on a hand-driven
clock (tests/server/fake_clock.py)."""

from __future__ import annotations

from protocol import replies
from protocol.replies import Mode, Toggle
from server.config import Settings
from server.world.pace import PACE_WINDOW
from tests.conftest import DbTarget

from .conftest import ScriptedClient, clip_login, connect_from, running
from .fake_clock import FakeTimer
from .sessions import who_update_seen


async def test_shouts_past_the_rate_are_refused_and_not_sent(
    settings: Settings, db_target: DbTarget
) -> None:
    """Past ``shouts_per_minute`` the shouter is told and nobody hears it; a minute
    later it may shout again; logging in again does not start the count over."""
    assert Settings().shouts_per_minute == 10
    timer = FakeTimer()
    opened: list[ScriptedClient] = []
    async with running(settings.replace(shouts_per_minute=3), db_target, timer=timer) as app:

        async def connect() -> ScriptedClient:
            client = await connect_from(app)
            opened.append(client)
            return client

        try:
            bob = await clip_login(connect, app, "bob")
            alice = await clip_login(connect, app, "alice")
            await who_update_seen(bob, "alice")
            for i in range(3):
                await alice.send(f"shout hello {i}")
                await alice.expect(replies.you_shout(f"hello {i}", Mode.CLIP))
                await bob.expect(replies.shouts("alice", f"hello {i}", Mode.CLIP))
            await alice.send("shout once more")
            await alice.expect(replies.SHOUTING_TOO_MUCH)
            await alice.close()
            alice = await clip_login(connect, app, "alice")  # a new login: still counted
            await alice.send("shout and again")
            await alice.expect(replies.SHOUTING_TOO_MUCH)
            timer.advance(PACE_WINDOW)
            await alice.send("shout later")
            await alice.expect(replies.you_shout("later", Mode.CLIP))
            got = await bob.expect(replies.shouts("alice", "later", Mode.CLIP))
            assert not [line for line in got if line.startswith("13 ")], got
        finally:
            for client in opened:
                await client.close()


async def test_invitations_are_paced_per_target_and_stopped_by_a_gag(
    settings: Settings, db_target: DbTarget
) -> None:
    """Past ``invitations_per_minute`` invitations to one user the inviter is told and
    the target gets nothing; another target is not affected. A user who gagged the
    inviter gets no invitation from them, and the inviter gets FIBS's line for a tell."""
    assert Settings().invitations_per_minute == 5
    timer = FakeTimer()
    paced = settings.replace(invitations_per_minute=2)
    opened: list[ScriptedClient] = []
    async with running(paced, db_target, timer=timer) as app:

        async def connect() -> ScriptedClient:
            client = await connect_from(app)
            opened.append(client)
            return client

        try:
            clients = {}
            for name in ("bob", "carol", "dave", "alice"):
                clients[name] = await clip_login(connect, app, name)
            alice = clients["alice"]
            for name in ("bob", "carol", "dave"):
                await clients[name].send("toggle ready")
                await clients[name].expect(replies.toggle_message(Toggle.READY, True))
            for _ in range(2):
                await alice.send("invite bob 1")
                await clients["bob"].expect(replies.type_join("alice"))
            await alice.send("invite bob 1")
            await alice.expect(replies.invited_too_often("bob"))
            await alice.send("invite carol 1")
            await clients["carol"].expect(replies.type_join("alice"))
            # An accepted invitation clears the pair's count: pairs that play match
            # after match invite each other again and again.
            await clients["carol"].send("join alice")
            await alice.expect(replies.player_joined("carol", 1))
            await alice.send("leave")
            await alice.expect(replies.YOU_TERMINATED)
            for _ in range(2):
                await alice.send("invite carol 1")
                await clients["carol"].expect(replies.type_join("alice"))
            await clients["dave"].send("gag alice")
            await clients["dave"].expect(replies.you_gag("alice"))
            await alice.send("invite dave 1")
            await alice.expect(replies.wont_listen("dave"))
            await clients["dave"].send("gag alice")  # ungag
            await clients["dave"].expect(replies.you_ungag("alice"))
            await alice.send("invite dave 1")
            await clients["dave"].expect(replies.type_join("alice"))
            timer.advance(PACE_WINDOW)
            await alice.send("invite bob 1")
            got = await clients["bob"].expect(replies.type_join("alice"))
            assert replies.type_join("alice") not in got
        finally:
            for client in opened:
                await client.close()
