"""Two server nodes, one FIBS world, through real sockets (issue 33, item 4).

Two :class:`App` s in this process share one database and a
:class:`~server.world.bus.LoopbackBus`, each with its own listening port and its own
:class:`~server.world.cluster.ClusterPresence`: users connected to either see one world
(who, tells, shouts, login and logout notices in order, a second login replacing the
first on the other node). The presence's own contract with users on two nodes is in
tests/server/test_presence_contract.py; the cluster of issue 32 replaces the loopback.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from protocol import clip, replies
from protocol.replies import Mode
from server.app import App
from server.config import Settings
from server.service import Service
from server.world.bus import LoopbackBus
from server.world.cluster import ClusterPresence

from ..conftest import DbTarget
from .conftest import Connect, ScriptedClient, clip_login, connect_from
from .sessions import telnet_login, who_update_seen


class Nodes:
    """Two nodes joined by a loopback bus; clients connected to either."""

    def __init__(self, apps: list[App]) -> None:
        self.apps = apps
        self.clients: list[ScriptedClient] = []

    def connect_to(self, node: int) -> Connect:
        async def open_client() -> ScriptedClient:
            client = await connect_from(self.apps[node])
            self.clients.append(client)
            return client

        return open_client

    async def clip(self, node: int, name: str) -> ScriptedClient:
        return await clip_login(self.connect_to(node), self.apps[node], name)

    async def telnet(self, node: int, name: str) -> ScriptedClient:
        return await telnet_login(self.connect_to(node), self.apps[node], name)


async def who(client: ScriptedClient) -> list[str]:
    """The names ``rawwho`` lists to a CLIP client, in order."""
    await client.send("rawwho")
    lines = await client.expect("6")
    return [clip.WhoInfo.parse(line).name for line in lines if line.startswith("5 ")]


@pytest.fixture
async def nodes(settings: Settings, db_target: DbTarget) -> AsyncIterator[Nodes]:
    bus = LoopbackBus()
    async with contextlib.AsyncExitStack() as stack:
        apps = []
        for name in ("a", "b"):
            db = await db_target.open()
            stack.push_async_callback(db.close)
            app = App(settings, db, presence=ClusterPresence.on(bus.connect(name)))
            service = Service(app)
            await service.start()
            stack.push_async_callback(service.stop)
            apps.append(app)
        made = Nodes(apps)
        yield made
        for client in made.clients:
            await client.close()


async def test_users_of_both_nodes_see_one_world(nodes: Nodes) -> None:
    alice = await nodes.clip(0, "alice")
    bob = await nodes.clip(1, "bob")
    notice = await alice.expect_prefix("7 bob ")
    assert notice == clip.Login("bob", replies.logs_in("bob")).format()
    await who_update_seen(alice, "bob")
    assert await who(alice) == ["alice", "bob"]
    await alice.send("tell bob hello across")
    await bob.expect(replies.says("alice", "hello across", Mode.CLIP))
    await alice.expect(replies.you_say("bob", "hello across", Mode.CLIP))
    carol = await nodes.telnet(1, "carol")
    await who_update_seen(alice, "carol")
    await alice.send("shout hi all")
    line = await carol.expect_prefix("alice shouts")
    assert line == replies.shouts("alice", "hi all", Mode.TELNET)
    await bob.expect(replies.shouts("alice", "hi all", Mode.CLIP))


async def test_a_login_notice_reaches_the_other_node_before_the_user_s_tell(
    nodes: Nodes,
) -> None:
    """D140 rule 1 across nodes: dave's tell, sent as soon as he is in, comes after his
    CLIP 7 on alice's node, however the status batches are timed."""
    alice = await nodes.clip(0, "alice")
    dave = await nodes.clip(1, "dave")
    await dave.send("tell alice first words")
    heard = await alice.expect(replies.says("dave", "first words", Mode.CLIP))
    notices = [line for line in heard if line.startswith("7 dave ")]
    assert len(notices) == 1
    await dave.expect(replies.you_say("alice", "first words", Mode.CLIP))


async def test_a_logout_on_one_node_is_announced_on_the_other(nodes: Nodes) -> None:
    alice = await nodes.clip(0, "alice")
    bob = await nodes.clip(1, "bob")
    await who_update_seen(alice, "bob")
    await bob.send("bye")
    line = await alice.expect_prefix("8 bob ")
    assert line == clip.Logout("bob", replies.logs_out("bob")).format()
    assert await who(alice) == ["alice"]


async def test_a_second_login_on_the_other_node_replaces_the_first(nodes: Nodes) -> None:
    """§1.4 across nodes: the session on node b is closed, the others see no logout."""
    alice = await nodes.clip(0, "alice")
    bob_b = await nodes.clip(1, "bob")
    await who_update_seen(alice, "bob")
    bob_a = await nodes.clip(0, "bob")
    assert await bob_b.closed()
    await bob_a.send("tell alice still here")
    heard = await alice.expect(replies.says("bob", "still here", Mode.CLIP))
    assert not [line for line in heard if line.startswith(("7 bob ", "8 bob "))]
    assert await who(alice) == ["alice", "bob"]
