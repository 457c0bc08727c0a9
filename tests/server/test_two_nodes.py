"""Two server nodes, one FIBS world, through real sockets (issue 33, item 4).

Two :class:`App` s in this process share one database and a
:class:`~server.world.bus.LoopbackBus`, each with its own listening port, its own
:class:`~server.world.cluster.ClusterPresence` and :class:`~server.tables.cluster.ClusterTables`:
users connected to either see one world (who, tells, shouts, login and logout notices in
order, a second login replacing the first on the other node), and play, watch and kibitz
at tables owned by the other node, hearing every line one node would send, in the same
order. The presence's own contract with users on two nodes is in
tests/server/test_presence_contract.py; the cluster of issue 32 replaces the loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from backgammon.dice import SeededDice
from backgammon.events import WinKind
from protocol import clip, replies
from protocol.arguments import VISITOR
from protocol.replies import Mode, Toggle
from server.app import App
from server.config import Settings
from server.service import Service
from server.tables.cluster import ClusterTables, command_from_json, command_to_json
from server.tables.seam import (
    Accept,
    BearOff,
    Double,
    Moves,
    Redouble,
    Reject,
    Resign,
    Roll,
    TableCommand,
)
from server.world.bus import LOST_AFTER, Bus, LoopbackBus, LoopbackConnection
from server.world.cluster import ClusterPresence
from server.world.nats_bus import NatsBus
from tests.ports import free_port

from ..conftest import DbTarget
from .conftest import Connect, ScriptedClient, clip_login, connect_from
from .match_driver import Player, play_out
from .sessions import command, telnet_login, who_update_seen


class Nodes:
    """Nodes joined by a bus; clients connected to either."""

    def __init__(self, apps: list[App], buses: list[Bus], services: list[Service]) -> None:
        self.apps = apps
        self.buses = buses
        self.services = services
        """Each node's service (its drain, D415)."""
        self.clients: list[ScriptedClient] = []

    async def lose(self, node: int) -> None:
        """Node ``node`` falls silent, as if its process died (its users' connections
        stay open: nobody tells them)."""
        bus = self.buses[node]
        if isinstance(bus, LoopbackConnection):
            bus.disconnect()
        else:
            assert isinstance(bus, NatsBus)
            await bus.close(goodbye=False)

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


BUSES = ("loopback", "nats")
"""The buses the two-node worlds run on: in memory, and the machine's NATS."""

NATS_URL = "nats://127.0.0.1:4222"


async def connect_bus(
    stack: contextlib.AsyncExitStack, kind: str, nodes: int, url: str = NATS_URL
) -> list[Bus]:
    """``nodes`` connections to a new bus of ``kind`` (NATS: at ``url``), every node known
    to every other."""
    if kind == "loopback":
        loopback = LoopbackBus()
        return [loopback.connect(f"node{i}") for i in range(nodes)]
    prefix = f"fibstest{uuid.uuid4().hex}"
    buses = []
    for i in range(nodes):
        bus = await NatsBus.connect(url, f"node{i}", prefix=prefix)
        stack.push_async_callback(bus.close)
        buses.append(bus)
    for _ in range(500):
        if all(len(bus.known) == nodes - 1 for bus in buses):
            return list(buses)
        await asyncio.sleep(0.01)
    raise AssertionError("the nodes never met on NATS")


@contextlib.asynccontextmanager
async def world(
    settings: Settings,
    db_target: DbTarget,
    count: int,
    bus: str = "loopback",
    nats_url: str = NATS_URL,
) -> AsyncIterator[Nodes]:
    """``count`` nodes on one database: one is a plain single-node server (the
    reference), more are joined by a bus of the kind ``bus``. Seeded dice, O for the
    inviter's opponent."""
    async with contextlib.AsyncExitStack() as stack:
        buses = await connect_bus(stack, bus, count, nats_url) if count > 1 else []
        apps = []
        services = []
        for index in range(count):
            db = await db_target.open()
            stack.push_async_callback(db.close)
            options: dict[str, Any] = {"dice": lambda: SeededDice(5), "coin": lambda: 0}
            if buses:
                connection = buses[index]
                options["presence"] = ClusterPresence.on(connection)
                options["tables"] = ClusterTables.on(connection)
            app = App(settings, db, **options)
            service = Service(app)
            await service.start()
            stack.push_async_callback(service.stop)
            apps.append(app)
            services.append(service)
        made = Nodes(apps, buses, services)
        try:
            yield made
        finally:
            for client in made.clients:
                await client.close()


@pytest.fixture(params=BUSES)
def bus(request: pytest.FixtureRequest) -> str:
    """The kind of bus the two nodes are joined by."""
    kind: str = request.param
    return kind


@pytest.fixture
async def nodes(settings: Settings, db_target: DbTarget, bus: str) -> AsyncIterator[Nodes]:
    async with world(settings, db_target, 2, bus) as made:
        yield made


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


STATUS = ("5 ", "6", "7 ", "8 ")
"""CLIP status notices (and their telnet form, ``<name> logs in.``): batched on each
node's own timer (D79), so where they fall between other lines is a matter of timing,
on one node as on two."""


async def players(nodes: Nodes, placed: dict[str, int]) -> tuple[ScriptedClient, ScriptedClient]:
    """alice and bob logged in on their nodes, with ``board:`` lines, bob ready."""
    alice = await nodes.clip(placed["alice"], "alice")
    bob = await nodes.clip(placed["bob"], "bob")
    for client in (alice, bob):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    ready = replies.toggle_message(Toggle.READY, True)
    while ready not in await command_clip(bob, "toggle ready"):
        pass  # stored by an earlier run on this database
    await until(lambda: bob_is_ready(nodes.apps[placed["alice"]]))
    return alice, bob


def bob_is_ready(app: App) -> bool:
    """Whether ``app``'s node sees bob ready (across nodes: once his state arrived)."""
    bob = app.presence.get("bob")
    return bob is not None and bob.toggles[Toggle.READY]


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait until ``condition`` holds, looking every few milliseconds."""
    for _ in range(int(timeout / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


async def match_with_a_watcher(nodes: Nodes, placed: dict[str, int]) -> dict[str, list[str]]:
    """alice invites bob to a 1-point match and they play it out; carol (telnet)
    watches alice and kibitzes. ``placed``: each user's node. Returns what each heard,
    status notices left out."""
    alice, bob = await players(nodes, placed)
    carol = await nodes.telnet(placed["carol"], "carol")
    await command(carol, "watch alice")
    await alice.expect(replies.is_watching_you("carol"))  # before alice's next command
    clients = {"alice": alice, "bob": bob, "carol": carol}
    start = {name: len(client.seen) for name, client in clients.items()}
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await carol.expect(replies.match_start_report("alice", "bob", 1))
    await carol.expect_prefix("   BAR: ")  # the last line of the first board (style 2)
    bobs_node = nodes.apps[placed["bob"]]
    assert bobs_node.tables.playing("alice") and bobs_node.tables.opponent_of("bob") == "alice"
    assert [g.names for g in bobs_node.tables.games()] == [("alice", "bob")]
    await command(carol, "kibitz good luck")
    await play_out(Player(alice, "alice"), Player(bob, "bob"))
    while " wins the 1 point match " not in await carol.line():
        pass
    await bob.send("board")
    await bob.expect(replies.NOT_PLAYING)
    return heard_since(clients, start)


def heard_since(clients: dict[str, ScriptedClient], start: dict[str, int]) -> dict[str, list[str]]:
    """What each client heard since its ``start`` (a count of lines seen), without the
    status notices and the logins of the others, whose order across nodes may differ."""
    notices = {replies.logs_in(name) for name in clients}
    return {
        name: [
            line
            for line in client.seen[start[name] :]
            if not line.startswith(STATUS) and line not in notices
        ]
        for name, client in clients.items()
    }


async def command_clip(client: ScriptedClient, line: str) -> str:
    """A CLIP client's command and its one-line reply (status notices skipped)."""
    await client.send(line)
    while (reply := await client.line()).startswith(STATUS):
        pass
    return reply


async def test_a_match_across_two_nodes_sounds_as_on_one(
    settings: Settings, db_target: DbTarget, bus: str
) -> None:
    """The table contract across nodes: invite, join, play, watch and kibitz, with the
    table owned by alice's node and bob and his watcher on the other; every line each
    of them hears is the one a single node sends, in the same order."""
    async with world(settings, db_target, 1) as one:
        alone = await match_with_a_watcher(one, {"alice": 0, "bob": 0, "carol": 0})
    async with world(settings, db_target, 2, bus) as two:
        spread = await match_with_a_watcher(two, {"alice": 0, "bob": 1, "carol": 1})
    assert len(alone["bob"]) > 20
    assert spread == alone


async def interrupted_and_resumed(nodes: Nodes, placed: dict[str, int]) -> dict[str, list[str]]:
    """alice invites bob to a 3-point match; bob drops after the opening, logs in
    again, resumes at alice's invitation, asks for the board and the pips, and leaves.
    Returns what alice and bob's second connection heard from the drop on."""
    alice, bob = await players(nodes, placed)
    await alice.send("invite bob 3")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect_prefix("board:")
    start = len(alice.seen)
    await bob.close()
    await alice.expect(replies.saved_after(replies.drops_connection("bob")))
    bob = await nodes.clip(placed["bob"], "bob")
    again = len(bob.seen)
    await alice.expect_prefix("7 bob ")  # alice's node knows he is back
    await alice.send("invite bob")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.joined_resumed("bob"))
    await bob.expect(replies.now_playing_resumed("alice"))
    await bob.send("board")
    await bob.expect_prefix("board:")
    await bob.send("pip")
    await bob.expect_prefix("Pipcounts: ")
    await bob.send("leave")
    await bob.expect(replies.YOU_TERMINATED)
    await alice.expect(replies.has_left("bob"))
    await bob.send("board")
    await bob.expect(replies.NOT_PLAYING)
    notices = {replies.logs_in("alice"), replies.logs_in("bob")}
    return {
        name: [line for line in lines if not line.startswith(STATUS) and line not in notices]
        for name, lines in (("alice", alice.seen[start:]), ("bob", bob.seen[again:]))
    }


async def test_a_match_interrupted_on_the_other_node_resumes_as_on_one(
    settings: Settings, db_target: DbTarget, bus: str
) -> None:
    """A player of another node's table drops (its cleanup runs at the owner), comes
    back, resumes and leaves: the same lines as on one node."""
    async with world(settings, db_target, 1) as one:
        alone = await interrupted_and_resumed(one, {"alice": 0, "bob": 0})
    async with world(settings, db_target, 2, bus) as two:
        spread = await interrupted_and_resumed(two, {"alice": 0, "bob": 1})
    assert replies.YOU_TERMINATED in alone["bob"]
    assert spread == alone


async def watched_by_a_visitor(nodes: Nodes, placed: dict[str, int]) -> list[str]:
    """A CLIP visitor watches alice before she invites bob to a 1-point match they
    play out; returns what the visitor heard from the invitation on, status notices
    left out."""
    alice, bob = await players(nodes, placed)
    visitor = await nodes.connect_to(placed["visitor"])()
    await visitor.prompt(replies.LOGIN_PROMPT)
    await visitor.send(f"login test_client 1008 {VISITOR}")
    await visitor.expect("6")
    await visitor.send("watch alice")
    await visitor.expect(replies.nothing_interesting("alice"))
    start = len(visitor.seen)
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await play_out(Player(alice, "alice"), Player(bob, "bob"))
    while " wins the 1 point match " not in await visitor.line():
        pass
    return [line for line in visitor.seen[start:] if not line.startswith(STATUS)]


async def test_a_visitor_of_one_node_watches_a_match_of_the_other(
    settings: Settings, db_target: DbTarget, bus: str
) -> None:
    """A visitor's state crosses the bus like a user's (D256: in no list): the owner of
    the table sends it every board, as one node does."""
    async with world(settings, db_target, 1) as one:
        alone = await watched_by_a_visitor(one, {"alice": 0, "bob": 0, "visitor": 0})
    async with world(settings, db_target, 2, bus) as two:
        spread = await watched_by_a_visitor(two, {"alice": 0, "bob": 0, "visitor": 1})
    assert sum(line.startswith("board:") for line in alone) > 5
    assert spread == alone


@pytest.mark.parametrize(
    "command",
    [
        Roll(),
        Double(),
        Double(("carol", "dave")),
        Moves("1-7 bar-20"),
        BearOff(),
        Accept(),
        Accept(("carol",)),
        Reject(("dave",)),
        Redouble("beaver"),
        Resign(WinKind.GAMMON),
    ],
    ids=repr,
)
def test_a_game_action_crosses_the_bus_unchanged(command: TableCommand) -> None:
    """What a forwarded command carries (a chouette's member names too)."""
    data = json.loads(json.dumps(command_to_json(command)))
    assert command_from_json(data) == command


async def test_a_node_lost_takes_its_users_and_saves_their_matches(nodes: Nodes) -> None:
    """Issue 32 item 5: a node dies (on NATS: silent for 3 s); the others see its users
    leave (no ghost in who), and a match with one of them, owned here, is saved with
    the drop notice to the opponent, as after a dropped connection."""
    alice, bob = await players(nodes, {"alice": 0, "bob": 1})
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.player_joined("bob", 1))
    await nodes.lose(1)
    # the save's notice and bob's logout (CLIP 8, in the next status batch) come in
    # either order: which is first depends on how long the save takes
    saved = replies.saved_after(replies.drops_connection("bob"))
    wanted = {saved: False, "8 bob ": False}
    while not all(wanted.values()):
        line = await alice.line(10)
        wanted[saved] = wanted[saved] or line == saved
        wanted["8 bob "] = wanted["8 bob "] or line.startswith("8 bob ")
    assert await who(alice) == ["alice"]
    tables = nodes.apps[0].tables
    assert not tables.playing("alice") and tables.games() == []


async def test_the_players_of_a_lost_node_s_match_are_told_elsewhere(nodes: Nodes) -> None:
    """D345: the node that runs a match dies; its player on another node is told the
    game was saved and is back in the lobby, free to resume it anywhere."""
    alice, bob = await players(nodes, {"alice": 1, "bob": 0})
    await alice.send("invite bob 1")  # the table is on alice's node, node 1
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect_prefix("board:")
    await nodes.lose(1)
    await bob.expect(replies.TABLE_NODE_GONE, timeout=10)
    tables = nodes.apps[0].tables
    assert not tables.playing("bob") and tables.games() == []
    await bob.send("board")
    await bob.expect(replies.NOT_PLAYING)


async def test_a_command_for_another_node_s_table_is_refused_when_the_bus_is_away(
    settings: Settings, db_target: DbTarget
) -> None:
    """D345: without the bus, a command that needs the table's node is refused at once."""
    async with world(settings, db_target, 2) as nodes:
        alice, bob = await players(nodes, {"alice": 1, "bob": 0})
        await alice.send("invite bob 1")
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        await bob.expect_prefix("board:")
        await nodes.lose(0)  # bob's own node loses the bus
        await bob.send("board")
        await bob.expect(replies.CLUSTER_UNREACHABLE)


@contextlib.asynccontextmanager
async def private_nats() -> AsyncIterator[Callable[..., Awaitable[None]]]:
    """A NATS server of this test's own on a free port (the machine's runs on 4222);
    yields its restart: killed, then started again on the same port (``meanwhile``, if
    given, awaited once the nodes have taken each other for gone, before the start)."""
    port = free_port()
    command = [NATS_SERVER, "-a", "127.0.0.1", "-p", str(port)]
    processes: list[asyncio.subprocess.Process] = []

    async def start() -> None:
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        processes.append(process)
        for _ in range(500):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                return
            await asyncio.sleep(0.01)
        raise AssertionError("nats-server never listened")

    async def restart(meanwhile: Callable[[], Awaitable[None]] | None = None) -> None:
        processes[-1].kill()
        await processes[-1].wait()
        await asyncio.sleep(LOST_AFTER + 1)  # long enough for the nodes to lose each other
        if meanwhile is not None:
            await meanwhile()
        await start()

    await start()
    private_nats.url = f"nats://127.0.0.1:{port}"  # type: ignore[attr-defined]
    try:
        yield restart
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()


NATS_SERVER = shutil.which("nats-server") or "/usr/sbin/nats-server"
"""Debian's nats-server (shared/docs/cluster-design.md)."""


async def test_nats_restarted_and_the_world_is_whole_again(
    settings: Settings, db_target: DbTarget
) -> None:
    """Issue 32 item 5: NATS goes away long enough for the nodes to take each other for
    gone (each user sees the other leave), then comes back: the nodes reconnect, meet
    again and the world is whole without a restart: each CLIP client, told the other
    dropped, gets the other's CLIP 5 line again (D425), who lists both, a tell crosses."""
    async with private_nats() as restart:
        url = private_nats.url  # type: ignore[attr-defined]
        async with world(settings, db_target, 2, "nats", url) as nodes:
            alice = await nodes.clip(0, "alice")
            bob = await nodes.clip(1, "bob")
            await who_update_seen(alice, "bob")
            await restart()
            await alice.expect_prefix("8 bob ", timeout=10)
            await bob.expect_prefix("8 alice ", timeout=10)
            await who_update_seen(alice, "bob")  # listed again, with no login notice
            await who_update_seen(bob, "alice")
            await until(lambda: all(b.connected for b in nodes.buses), timeout=15)
            await until(lambda: nodes.apps[0].presence.get("bob") is not None, timeout=15)
            await until(lambda: nodes.apps[1].presence.get("alice") is not None, timeout=15)
            await bob.send("tell alice still here")
            await alice.expect(replies.says("bob", "still here", Mode.CLIP), timeout=10)
            assert await who(alice) == ["alice", "bob"]


async def test_a_match_with_its_watcher_on_a_third_node_sounds_as_on_one(
    settings: Settings, db_target: DbTarget, bus: str
) -> None:
    """Issue 32's check: the players on two nodes, their watcher (telnet, kibitzing) on a
    third; every line each hears is the one a single node sends."""
    async with world(settings, db_target, 1) as one:
        alone = await match_with_a_watcher(one, {"alice": 0, "bob": 0, "carol": 0})
    async with world(settings, db_target, 3, bus) as three:
        spread = await match_with_a_watcher(three, {"alice": 0, "bob": 1, "carol": 2})
    assert spread == alone


async def test_a_node_cut_off_cannot_write_a_match_another_node_took(nodes: Nodes) -> None:
    """Issue 32 item 4 (D370): node 0 runs alice and bob's match, then loses the bus
    while it still reaches the database (a partition, or a pause). Taken for gone, its
    users log in on node 1 and resume the match there, which takes the table (its epoch
    goes up). Node 0's next action of that match is refused by the database: its players
    there are told and the match leaves node 0, the stored match unchanged; at node 1
    the match goes on."""
    alice, bob = await players(nodes, {"alice": 0, "bob": 0})
    await alice.send("invite bob 5")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await bob.expect_prefix("board:")
    await alice.expect_prefix("board:")
    await nodes.lose(0)
    await until(lambda: nodes.apps[1].presence.get("alice") is None, timeout=10)
    alice1, bob1 = await players(nodes, {"alice": 1, "bob": 1})
    await alice1.send("invite bob")
    await bob1.expect(replies.type_join("alice"))
    await bob1.send("join alice")
    await alice1.expect(replies.joined_resumed("bob"))
    await bob1.expect(replies.now_playing_resumed("alice"))
    db = nodes.apps[1].db
    before = await db.load_match("alice", "bob")

    await alice.send("resign n")  # at node 0, which still holds the match in memory
    await alice.expect(replies.MATCH_TAKEN_OVER)
    await bob.expect(replies.MATCH_TAKEN_OVER)
    assert not nodes.apps[0].tables.playing("alice") and nodes.apps[0].tables.games() == []
    await alice.send("board")
    await alice.expect(replies.NOT_PLAYING)
    assert await db.load_match("alice", "bob") == before

    await alice1.send("resign n")  # the owner writes on
    await bob1.expect_prefix("alice wants to resign.")
    after = await db.load_match("alice", "bob")
    assert after is not None and before is not None and after.events != before.events


async def test_the_watchers_of_a_lost_node_s_match_are_told(
    settings: Settings, db_target: DbTarget
) -> None:
    """D416: the node running alice and bob's match dies with alice; on a third node,
    carol watching bob hears what the opponent's watchers hear when a player drops on
    one node (the game saved), and dave watching alice hears he watches no more, as
    when a watched player's connection drops; nobody is left watching silence."""
    async with world(settings, db_target, 3) as nodes:
        alice, bob = await players(nodes, {"alice": 1, "bob": 0})
        await alice.send("invite bob 1")  # the table is on alice's node, node 1
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        await bob.expect_prefix("board:")
        carol = await nodes.clip(2, "carol")
        dave = await nodes.clip(2, "dave")
        for watcher, player in ((carol, "bob"), (dave, "alice")):
            await watcher.send(f"watch {player}")
            await watcher.expect(replies.now_watching(player))
        await nodes.lose(1)
        dropped = replies.drops_connection("alice")
        await bob.expect(replies.TABLE_NODE_GONE)
        await carol.expect(replies.saved_after(dropped))
        await dave.expect(replies.not_watching_anymore(dropped))
        assert nodes.apps[2].presence.get("dave").watching is None  # type: ignore[union-attr]
        assert nodes.apps[2].presence.get("carol").watching == "bob"  # type: ignore[union-attr]
