"""One address: two nodes behind a real HAProxy (Debian's ``/usr/sbin/haproxy``), with
the configuration ``deploy/run_nodes.py`` writes (issue 32 item 2; D368, D369).

The test starts two nodes (``python -m server --cluster``, each with the fibs.conf
``deploy.run_nodes.node_config`` makes: the PROXY header on both doors, an agent-check
port), sharing a fresh PostgreSQL database and the NATS at 127.0.0.1:4222 under a
prefix of its own, then HAProxy on free ports in front of them. A telnet user and a
web user log in through the one address and see each other; the nodes see the telnet
client's own address (127.0.0.5), not the proxy's; a connection straight to a node
without the header is refused; a drained node (SIGUSR1) gets no new connection through
HAProxy while its user goes on. A drained node moves its users (D415): warned, their
connections closed after ``[server] drain_grace``, they log in again through HAProxy
at the other node and resume their match where it was. HAProxy's own view (which node
has which connection, each node's state) is read from its stats socket. Every process
is killed at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import format_moves
from deploy.run_nodes import (
    HAPROXY,
    Node,
    affordable_maxconn,
    default_nodes,
    haproxy_config,
    node_config,
)
from protocol import clip, replies
from protocol.board_fibs import parse_board
from tests.ports import free_port

from .conftest import IAC_WONT_TTYPE, TEST_COST, TIMEOUT, ScriptedClient
from .test_cluster_start import NATS_URL, ROOT, database_with
from .web_clients import WebClient

pytestmark = pytest.mark.skipif(not Path(HAPROXY).is_file(), reason="needs Debian's haproxy")

_PORTS = {
    "telnet": re.compile(rb"fibs-server listening on \S+:(\d+)"),
    "web": re.compile(rb"fibs-server web page on http://\S+:(\d+)/"),
    "agent": re.compile(rb"fibs-server agent check on \S+:(\d+)"),
}
CLIENT_ADDRESS = "127.0.0.5"
"""Where the telnet user connects from: an address of the loopback network other than
HAProxy's own 127.0.0.1, so that the nodes can only know it from the PROXY header."""


@dataclass
class Running:
    """A node process and the node as HAProxy reaches it."""

    process: asyncio.subprocess.Process
    node: Node


@contextlib.asynccontextmanager
async def server_node(
    url: str, prefix: str, name: str, folder: Path, *, drain_grace: float = 60
) -> AsyncIterator[Running]:
    """One node with the fibs.conf of deploy/run_nodes.py, on free ports."""
    base = folder / "base.conf"
    base.write_text(
        f"[server]\ndrain_grace = {drain_grace}\n"
        "[passwords]\n"
        f"scrypt_n = {TEST_COST.n}\nscrypt_r = {TEST_COST.r}\nscrypt_p = {TEST_COST.p}\n"
        "[analysis]\nenabled = no\n"
    )
    wanted = Node(name, "127.0.0.1", 0, free_port(), free_port())  # telnet on port 0
    conf = folder / f"{name}.conf"
    conf.write_text(node_config(base, wanted, prefix))
    with (folder / f"{name}.log").open("ab") as stderr:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            # web port in its configuration (node_config: wanted.web)
            *("-m", "server", "--config", str(conf), "--database", url),
            *("--cluster", NATS_URL, "--log-level", "WARNING"),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    try:
        assert process.stdout is not None
        ports: dict[str, int] = {}
        while len(ports) < len(_PORTS):
            line = await asyncio.wait_for(process.stdout.readline(), 30)
            assert line, (folder / f"{name}.log").read_text()[-2000:]
            for door, pattern in _PORTS.items():
                if found := pattern.search(line):
                    ports[door] = int(found[1])
        assert ports["agent"] == wanted.agent_port
        yield Running(
            process, Node(name, "127.0.0.1", ports["telnet"], ports["web"], ports["agent"])
        )
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


@dataclass
class Proxy:
    """The running HAProxy: its two ports and its stats socket."""

    telnet: int
    web: int
    stats: Path

    async def stats_rows(self) -> dict[tuple[str, str], dict[str, str]]:
        """``show stat``: each server's row by (backend, server)."""
        reader, writer = await asyncio.open_unix_connection(str(self.stats))
        writer.write(b"show stat\n")
        text = (await asyncio.wait_for(reader.read(), TIMEOUT)).decode()
        writer.close()
        rows = csv.DictReader(text.removeprefix("# ").splitlines())
        return {(r["pxname"], r["svname"]): r for r in rows if r["svname"].startswith("node")}

    async def wait_for(self, server: str, status: str) -> None:
        """Until ``server`` has ``status`` in both backends (HAProxy's checks every 2 s)."""
        states: set[str] = set()
        for _ in range(100):
            rows = await self.stats_rows()
            states = {r["status"] for (_, name), r in rows.items() if name == server}
            # "UP", "DRAIN (agent)": the state, and what set it
            if {state.partition(" ")[0] for state in states} == {status}:
                return
            await asyncio.sleep(0.2)
        raise AssertionError(f"{server} is {states}, not {status}")


@contextlib.asynccontextmanager
async def haproxy(nodes: list[Node]) -> AsyncIterator[Proxy]:
    """HAProxy on free ports in front of ``nodes``, with deploy/run_nodes.py's
    configuration; every node up (its health check passed) before it is used."""
    folder = Path(tempfile.mkdtemp(prefix="fibs-haproxy-"))  # a short unix socket path
    proxy = Proxy(free_port(), free_port(), folder / "stats.sock")
    config = folder / "haproxy.cfg"
    config.write_text(
        haproxy_config(
            nodes,
            telnet_bind=f"127.0.0.1:{proxy.telnet}",
            web_bind=f"127.0.0.1:{proxy.web}",
            stats_socket=str(proxy.stats),
            maxconn=affordable_maxconn(),
        )
    )
    with (folder / "haproxy.log").open("ab") as log:
        process = await asyncio.create_subprocess_exec(
            HAPROXY, "-db", "-f", str(config), stdout=log, stderr=log
        )
    try:
        async with asyncio.timeout(20):
            while not proxy.stats.exists():
                assert process.returncode is None, (folder / "haproxy.log").read_text()
                await asyncio.sleep(0.05)
        for node in nodes:
            await proxy.wait_for(node.name, "UP")
        yield proxy
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        shutil.rmtree(folder, ignore_errors=True)


async def telnet_user(port: int, name: str) -> ScriptedClient:
    """``name`` logged in (CLIP) through ``port`` from :data:`CLIENT_ADDRESS`."""
    client = await telnet_client(port)
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send(f"login haproxy_test 1008 {name} secret")
    await client.expect("6")
    return client


async def telnet_client(port: int) -> ScriptedClient:
    reader, writer = await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(CLIENT_ADDRESS, 0)), TIMEOUT
    )
    client = ScriptedClient(reader, writer)
    await client.send_raw(IAC_WONT_TTYPE)
    return client


async def web_user(port: int, name: str) -> WebClient:
    """``name`` logged in (CLIP) over the WebSocket of ``port``."""
    http = aiohttp.ClientSession()
    ws = await asyncio.wait_for(http.ws_connect(f"http://127.0.0.1:{port}/ws"), TIMEOUT)
    client = WebClient(http, ws)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send(f"login haproxy_test 1008 {name} secret")
    await client.expect("6")
    return client


async def who_names(client: ScriptedClient | WebClient) -> list[str]:
    await client.send("rawwho")
    lines = await client.expect("6")
    return sorted(clip.WhoInfo.parse(line).name for line in lines if line.startswith("5 "))


async def see_each_other(client: ScriptedClient | WebClient, names: list[str]) -> None:
    """Until ``client``'s ``rawwho`` lists exactly ``names`` (the other node's user
    comes with its node's message)."""
    async with asyncio.timeout(TIMEOUT):
        while await who_names(client) != names:
            await asyncio.sleep(0.1)


async def test_one_address_in_front_of_two_nodes(tmp_path: Path) -> None:
    prefix = f"fibstest{uuid.uuid4().hex}"
    async with (
        asyncio.timeout(120),
        database_with("alice", "bob") as url,
        server_node(url, prefix, "node1", tmp_path) as one,
        server_node(url, prefix, "node2", tmp_path) as two,
        haproxy([one.node, two.node]) as proxy,
    ):
        alice = await telnet_user(proxy.telnet, "alice")
        bob = await web_user(proxy.web, "bob")
        await see_each_other(alice, ["alice", "bob"])
        await see_each_other(bob, ["alice", "bob"])

        # The nodes know the telnet user's own address, never HAProxy's.
        await bob.send("where alice")
        await bob.expect(replies.where("alice", CLIENT_ADDRESS))

        # Straight to a node, without the PROXY header: closed before the banner.
        for node in (one.node, two.node):
            direct = await telnet_client(node.telnet_port)
            assert await direct.closed() and direct.buffer == b""
            await direct.close()

        # Drain alice's node: HAProxy sends it nothing new; alice goes on.
        rows = await proxy.stats_rows()
        drained = next(
            r
            for (backend, name), r in rows.items()
            if backend == "fibs_telnet_nodes" and r["scur"] == "1"
        )["svname"]
        running = one if drained == one.node.name else two
        other = two if running is one else one
        running.process.send_signal(signal.SIGUSR1)
        await proxy.wait_for(drained, "DRAIN")
        before = await proxy.stats_rows()
        newcomers = [await telnet_client(proxy.telnet) for _ in range(3)]
        for client in newcomers:
            await client.prompt(replies.LOGIN_PROMPT)
        async with aiohttp.ClientSession() as http:
            for _ in range(3):
                async with http.get(f"http://127.0.0.1:{proxy.web}/") as page:
                    assert page.status == 200
        after = await proxy.stats_rows()
        for backend in ("fibs_telnet_nodes", "fibs_web_nodes"):
            assert after[backend, drained]["stot"] == before[backend, drained]["stot"]
            assert int(after[backend, other.node.name]["stot"]) > int(
                before[backend, other.node.name]["stot"]
            )
        await see_each_other(alice, ["alice", "bob"])  # the drained node's user goes on
        await alice.send("tell bob still here")
        await bob.expect(replies.says("alice", "still here", replies.Mode.CLIP))

        # SIGUSR2: ready again.
        running.process.send_signal(signal.SIGUSR2)
        await proxy.wait_for(drained, "UP")
        for client in [alice, *newcomers]:
            await client.close()
        await bob.close()


async def board_of(client: ScriptedClient, command: str = "board") -> str:
    """The last board ``client`` is sent up to ``command``'s answer (the boards sent
    before, of earlier moves, are skipped: a setting's echo marks the end)."""
    await client.send(command)
    await client.send("set boardstyle 3")
    lines = await client.expect("Value of 'boardstyle' set to 3.")
    return [line for line in lines if line.startswith("board:")][-1]


async def play_turns(players: dict[str, ScriptedClient], turns: int) -> None:
    """``turns`` turns of the match between ``players``: the player to move rolls if
    need be and plays the first legal play; the turn ends when the opponent hears it."""
    for _ in range(turns):
        views = {name: parse_board(await board_of(c)) for name, c in players.items()}
        name = next(n for n, view in views.items() if view.turn is view.colour)
        client, view = players[name], views[name]
        opponent = next(c for n, c in players.items() if n != name)
        if view.player_dice == (0, 0):
            view = parse_board(await board_of(client, "roll"))
        if view.can_move:
            plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
            await client.send("move " + format_moves(plays[0].moves, view.colour))
            await opponent.expect_prefix(f"{name} moves ")
        else:
            await opponent.expect_prefix(f"{name} can't move")


async def telnet_node_of(proxy: Proxy) -> dict[str, int]:
    """Each node's telnet connections now, as HAProxy counts them."""
    rows = await proxy.stats_rows()
    return {
        name: int(r["scur"])
        for (backend, name), r in rows.items()
        if backend == "fibs_telnet_nodes"
    }


async def test_a_drained_node_moves_its_users_and_their_match(tmp_path: Path) -> None:
    """D415: alice (on one node) and bob (on the other) play; alice's node owns the
    match. Drained (SIGUSR1), it tells alice the server restarts, saves the match and
    closes her connection after its grace; she logs in again through HAProxy (at bob's
    node, HAProxy's only ready one), invites bob, and both resume at the very position
    they left, and play on."""
    prefix = f"fibstest{uuid.uuid4().hex}"
    grace = 2
    async with (
        asyncio.timeout(90),
        database_with("alice", "bob") as url,
        server_node(url, prefix, "node1", tmp_path, drain_grace=grace) as one,
        server_node(url, prefix, "node2", tmp_path, drain_grace=grace) as two,
        haproxy([one.node, two.node]) as proxy,
    ):
        alice = await telnet_user(proxy.telnet, "alice")
        counts = await telnet_node_of(proxy)
        drained = next(name for name, count in counts.items() if count == 1)
        bob = await telnet_user(proxy.telnet, "bob")
        assert await telnet_node_of(proxy) == {"node1": 1, "node2": 1}  # one on each
        await see_each_other(alice, ["alice", "bob"])
        for client in (alice, bob):
            await client.send("set boardstyle 3")
            await client.expect("Value of 'boardstyle' set to 3.")
        await bob.send("toggle ready")
        await bob.expect(replies.toggle_message(replies.Toggle.READY, True))
        await alice.expect_prefix("5 bob - - 1 ")  # alice's node knows he is ready
        await alice.send("invite bob 5")
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        await alice.expect_prefix("board:")
        players = {"alice": alice, "bob": bob}
        await play_turns(players, 3)
        before = {name: await board_of(client) for name, client in players.items()}

        running = one if drained == one.node.name else two
        running.process.send_signal(signal.SIGUSR1)
        await alice.expect(replies.shutdown_warning(grace, restart=True))
        assert await alice.closed(grace + TIMEOUT)
        await bob.expect(replies.saved_after(replies.drops_connection("alice")))
        await alice.close()
        stats = await proxy.stats_rows()
        served = stats["fibs_telnet_nodes", drained]["stot"]

        alice = await telnet_user(proxy.telnet, "alice")
        stats = await proxy.stats_rows()
        assert stats["fibs_telnet_nodes", drained]["stot"] == served  # the other node's
        players["alice"] = alice
        await alice.send("invite bob")
        await bob.expect(replies.type_join("alice"))
        await bob.send("join alice")
        await alice.expect(replies.joined_resumed("bob"))
        await bob.expect(replies.now_playing_resumed("alice"))
        after = {name: await board_of(client) for name, client in players.items()}
        assert after == before
        await play_turns(players, 2)  # the new owner writes on
        for client in players.values():
            await client.close()


def test_the_deploy_configuration_is_the_one_run_nodes_writes_and_haproxy_accepts() -> None:
    """deploy/haproxy.cfg is :func:`haproxy_config` for two nodes with the default
    ports (so the file and what the test runs cannot drift apart), and Debian's haproxy
    finds it valid."""
    path = ROOT / "deploy" / "haproxy.cfg"
    assert path.read_text() == haproxy_config(default_nodes(2))
    checked = subprocess.run([HAPROXY, "-c", "-f", str(path)], capture_output=True, check=False)
    assert checked.returncode == 0, checked.stderr.decode()
