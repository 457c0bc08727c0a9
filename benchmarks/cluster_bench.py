"""``benchmarks/load.py --nodes N``: the load benchmark against several nodes (issue 32).

Starts N server nodes (``python -m server --cluster``) on a fresh PostgreSQL database made
for the run (dropped after), a ``nats-server`` of the run's own on a free port (or the
NATS of ``--nats``), and Debian's HAProxy in front of them, each node configured as
``deploy/run_nodes.py`` configures it (the PROXY header on both doors, an agent port);
or, with ``--addresses host:port,...``, drives nodes already running (their own telnet
ports; the accounts are created in ``--database``, the nodes' database).

**Placement.** Every client connects to the telnet port of the node it is placed on,
not to HAProxy's one address, and sends the PROXY v1 header HAProxy would send
(``PROXY TCP4 127.0.0.1 127.0.0.1 ...``, a source inside ``[limits] trusted_networks``):
so which node holds which user is known, and "cross-node" is guaranteed. One more
client logs in through HAProxy at the end and asks ``rawwho`` there too.

* ``idle`` (``--clients``): users spread round robin over the nodes; RSS per node once
  they are all in, and whether ``rawwho`` asked on node 1 (and through HAProxy) lists
  every one of them.
* ``chat`` (``--chatters``, ``--chat-rate``): pairs of users telling each other; with
  ``--placement cross`` the two of a pair are on different nodes (pair i: nodes i and
  i+1), with ``same`` on one node (pairs spread over the nodes). Timed twice: the
  sender's ``16`` echo and the receiver's ``12`` line (delivery).
* ``matches`` (``--pairs``, ``--rate``): load.py's players, the inviter on node i and
  the invitee on node i+1 (``cross``) or both on node i (``same``).

The server CPU per tell or per action is the nodes' CPU time (and NATS's apart) over the
measured window, divided by the tells delivered or the actions answered in it.
PostgreSQL's is not counted: the machine's PostgreSQL serves other work too.

``--netns-delay MS`` (root only) puts each node in a network namespace of its own
(``ip netns``), joined to this one by a veth pair (10.77.K.2 there, 10.77.K.1 here), as
if on a host of its own. Each node reaches NATS through ``socat`` on 10.77.K.1 and
``benchmarks/delayproxy.py``, which holds every chunk MS/2 each way: a message from one
node to another through NATS takes MS more. ``tc netem`` would be the usual tool, but
this machine's kernel has no ``netem`` (nor ``prio``) qdisc (``tc qdisc add dev ...
root netem delay 1ms``: "Error: Specified qdisc kind is unknown."; no /lib/modules to
load it from). The database (socat, no delay: PostgreSQL listens on 127.0.0.1 only)
and the clients get no delay.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import load  # benchmarks/load.py, beside this script

from db.records import UserSettings
from db.repository import Database
from deploy.run_nodes import HAPROXY, LISTENING, Node, affordable_maxconn, haproxy_config
from deploy.run_nodes import node_config as deploy_node_config
from server.world.passwords import hash_password_sync

NATS_SERVER = "/usr/sbin/nats-server"
DEFAULT_ADMIN = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
"""Where the run's database is made when ``--postgres`` names none."""
NODE_START_TIMEOUT = 60.0
NETNS_PREFIX = "fibsb"
"""The run's network namespaces: fibsb1..fibsbN (removed after)."""


@dataclass
class NodeProc:
    """One node: where clients reach it, and its process when the run started it."""

    name: str
    host: str
    port: int
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    samples: dict[str, load.ProcSample] = field(default_factory=dict)


# -- clients --------------------------------------------------------------------------------


class PlacedClient(load.Client):
    """A client that begins with the PROXY v1 header a node behind HAProxy expects."""

    def __init__(self, bench: load.Bench, name: str, role: load.Role, proxy: bool) -> None:
        super().__init__(bench, name, role)
        self.proxy = proxy

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if self.proxy:
            port = transport.get_extra_info("sockname")[1]
            transport.write(f"PROXY TCP4 127.0.0.1 127.0.0.1 {port} 4321\r\n".encode())


class Teller(load.Role):
    """Tells its partner ``m<seq>`` at every tick; times the ``16`` echo of its own
    tells and the ``12`` line of its partner's (the delivery)."""

    wants_lines = True

    def __init__(self, partner: str, rate: float, rng: random.Random) -> None:
        self.partner = partner
        self.ticker = load.Ticker(rate, rng)
        self.seq = 0
        self.handle: asyncio.TimerHandle | None = None

    def on_login(self) -> None:
        self._schedule()

    def _schedule(self) -> None:
        at = self.ticker.next_tick(time.monotonic() + 1e-6)
        self.handle = asyncio.get_running_loop().call_at(at, self._tick)

    def _tick(self) -> None:
        client = self.client
        bench = client.bench
        assert isinstance(bench, ClusterBench)
        if not client.open or not bench.acting:
            return
        if bench.meter.phase not in ("warmup", "measure"):
            self._schedule()  # the partner may not be known here yet
            return
        self.seq += 1
        text = f"m{self.seq}"
        bench.sent[(client.name, text)] = bench.unechoed[(client.name, text)] = time.monotonic()
        bench.meter.count("tell_sent")
        client.send(f"tell {self.partner} {text}")
        self._schedule()

    def on_line(self, line: bytes) -> None:
        bench = self.client.bench
        assert isinstance(bench, ClusterBench)
        now = time.monotonic()
        if line.startswith(b"16 "):
            _, _, text = line.decode(errors="replace").split(" ", 2)
            sent = bench.unechoed.pop((self.client.name, text), None)
            if sent is not None:
                bench.meter.latency("tell_echo", now - sent)
        elif line.startswith(b"12 "):
            _, sender, text = line.decode(errors="replace").split(" ", 2)
            sent = bench.sent.pop((sender, text), None)
            if sent is not None:
                bench.meter.latency("tell_delivery", now - sent)
                bench.meter.count("tell_delivered")
        elif line.startswith(b"** "):
            bench.meter.error("tell_refused", self.client.name, line.decode(errors="replace"))

    def on_closed(self) -> None:
        if self.handle is not None:
            self.handle.cancel()


class WhoAsker(load.Role):
    """Asks ``rawwho`` and collects the names of its CLIP 5 lines up to the ``6``."""

    wants_lines = True

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.asked = False
        self.done: asyncio.Future[set[str]] = asyncio.get_running_loop().create_future()

    def ask(self) -> None:
        self.names.clear()
        self.asked = True
        self.client.send("rawwho")

    def on_line(self, line: bytes) -> None:
        if not self.asked:
            return
        if line.startswith(b"5 "):
            self.names.add(line.split(b" ", 2)[1].decode())
        elif line == b"6" and not self.done.done():
            self.done.set_result(set(self.names))


# -- the benchmark ------------------------------------------------------------------------


class ClusterBench(load.Bench):
    """load.py's bench with the clients placed on the nodes (``placement``)."""

    def __init__(self, args: argparse.Namespace, nodes: list[NodeProc]) -> None:
        super().__init__(args, None)  # type: ignore[arg-type]  # no single server
        self.nodes = nodes
        self.placement: dict[str, int] = {}
        """Each client's node (an index of ``nodes``)."""
        self.sent: dict[tuple[str, str], float] = {}
        """(sender, text) -> when it was told (until the partner reads it)."""
        self.unechoed: dict[tuple[str, str], float] = {}
        """(sender, text) -> when it was told (until the sender reads its echo)."""
        self.proxy = not args.no_proxy_header
        self.client_cpu: dict[str, float] = {}
        """This process's CPU seconds at each mark: the clients share the machine."""

    def player_ready(self, player: load.Player) -> None:
        """Logged in: the pair starts only once every node knows everyone
        (:meth:`start_pairs`): an invitation to a user whose login has not yet reached
        the inviter's node is refused (``** There is no one called ...``)."""
        player.ready = True

    def start_pairs(self) -> None:
        for inviter, invitee in self.pairs:
            if inviter.ready and invitee.ready:
                inviter.start()

    async def connect(self, name: str, role: load.Role) -> load.Client:
        node = self.nodes[self.placement[name]]
        return await self.connect_to(name, role, node.host, node.port)

    async def connect_to(self, name: str, role: load.Role, host: str, port: int) -> load.Client:
        loop = asyncio.get_running_loop()
        client = PlacedClient(self, name, role, self.proxy)
        self.clients.append(client)
        try:
            await loop.create_connection(lambda: client, host, port)
        except OSError as exc:
            self.meter.error("connect_failed", name, repr(exc))
            client.state = load.State.CLOSED
            client.login_done.set_result(False)
        return client

    def sample_nodes(self, mark: str, extra: dict[str, int]) -> None:
        """Every started node's /proc figures (and the pids of ``extra``) under ``mark``."""
        for node in self.nodes:
            if node.proc is not None and node.proc.poll() is None:
                node.samples[mark] = load.read_proc(node.proc.pid)
        for name, pid in extra.items():
            with contextlib.suppress(OSError):
                self.marks[f"{name}:{mark}"] = load.read_proc(pid)
        self.client_cpu[mark] = time.process_time()


def partner_nodes(i: int, count: int, placement: str) -> tuple[int, int]:
    """The nodes of pair ``i``'s two users: neighbours (``cross``) or one (``same``)."""
    first = i % count
    if placement == "same" or count == 1:
        return first, first
    return first, (first + 1) % count


def plan(args: argparse.Namespace, count: int) -> tuple[dict[str, int], dict[str, Any]]:
    """The scenario's users: name -> node, and the groups (idle names; teller and player
    pairs)."""
    placement: dict[str, int] = {}
    idle = [load.to_letters(n) for n in load.names("idle_", args.clients)]
    for i, name in enumerate(idle):
        placement[name] = i % count
    tellers: list[tuple[str, str]] = []
    pairs: list[tuple[str, str]] = []
    for prefix, number, out in (
        ("chat_", args.chatters // 2, tellers),
        ("play_", args.pairs, pairs),
    ):
        for i in range(number):
            a, b = (load.to_letters(f"{prefix}{i:05d}{side}") for side in ("a", "b"))
            placement[a], placement[b] = partner_nodes(i, count, args.placement)
            out.append((a, b))
    return placement, {"idle": idle, "tellers": tellers, "pairs": pairs}


async def create_accounts(url: str, names: dict[str, str]) -> float:
    """Every account (name -> "play" or "person") at the cheap hash cost; seconds."""
    started = time.monotonic()
    cheap = hash_password_sync(load.PASSWORD, load.CHEAP_COST)
    settings = UserSettings(boardstyle=3)
    db = await Database.open(url)
    try:
        items = list(names.items())
        for i in range(0, len(items), 500):
            await asyncio.gather(
                *(
                    db.create_user(
                        n,
                        cheap,
                        toggles=load.BOT_TOGGLES if kind == "play" else load.PERSON_TOGGLES,
                        settings=settings,
                    )
                    for n, kind in items[i : i + 500]
                )
            )
    finally:
        await db.close()
    return time.monotonic() - started


# -- network namespaces ---------------------------------------------------------------------


def _ip(*words: str) -> None:
    subprocess.run(["ip", *words], check=True, capture_output=True, text=True)


def netns_up(count: int) -> list[tuple[str, str, str]]:
    """Namespaces fibsb1..N, each joined by a veth pair (10.77.K.1 here, 10.77.K.2
    there); (namespace, node address, this side's address) of each."""
    out = []
    for k in range(1, count + 1):
        ns, here, there = f"{NETNS_PREFIX}{k}", f"fb{k}r", f"fb{k}n"
        _ip("netns", "add", ns)
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", ns)
        _ip("addr", "add", f"10.77.{k}.1/24", "dev", here)
        _ip("link", "set", here, "up")
        _ip("-n", ns, "addr", "add", f"10.77.{k}.2/24", "dev", there)
        _ip("-n", ns, "link", "set", there, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        out.append((ns, f"10.77.{k}.2", f"10.77.{k}.1"))
    return out


def netns_down(count: int) -> None:
    for k in range(1, count + 1):
        subprocess.run(["ip", "netns", "del", f"{NETNS_PREFIX}{k}"], capture_output=True)


# -- the run --------------------------------------------------------------------------------


async def wait_listening(proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + NODE_START_TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        if LISTENING in log.read_bytes():
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"a node did not start; see {log}")


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (if still running), then SIGKILL after 15 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Cluster:
    """The processes of a started run: NATS, the nodes, HAProxy, socat forwarders."""

    def __init__(self, args: argparse.Namespace, workdir: Path) -> None:
        self.args = args
        self.workdir = workdir
        self.nodes: list[NodeProc] = []
        self.nats: subprocess.Popen[bytes] | None = None
        self.haproxy: subprocess.Popen[bytes] | None = None
        self.haproxy_port = 0
        self.others: list[subprocess.Popen[bytes]] = []
        self.namespaces = 0
        self.prefix = f"loadbench{os.getpid()}"
        """The world's NATS subjects (its own, should ``--nats`` be shared)."""

    async def start(self, database_url: str) -> None:
        args = self.args
        count = args.nodes
        nats_url = args.nats
        nats_port = 0
        if not nats_url:
            nats_port = load.free_port()
            with (self.workdir / "nats.log").open("wb") as sink:
                self.nats = subprocess.Popen(
                    [NATS_SERVER, "-a", load.HOST, "-p", str(nats_port)],
                    stdout=subprocess.DEVNULL,
                    stderr=sink,
                )
            await asyncio.sleep(0.3)
        links: list[tuple[str, str, str]] = []
        if args.netns_delay is not None:
            self.namespaces = count
            links = netns_up(count)
        shipped = load.read_config(load.SHIPPED_CONFIG)
        base = load.run_config(shipped, load.requested_overrides(args), {})
        base_path = self.workdir / "base.conf"
        with base_path.open("w", encoding="utf-8") as f:
            base.write(f)
        deploy_nodes: list[Node] = []
        for k in range(count):
            name = f"node{k + 1}"
            host, url, nats = load.HOST, database_url, nats_url or f"nats://127.0.0.1:{nats_port}"
            command = [sys.executable, "-m", "server"]
            if links:
                ns, host, here = links[k]
                nats = f"nats://{here}:{nats_port}"
                self.others += self.forward(here, nats_port, args.netns_delay / 2e3)
                self.others += self.forward(here, 5432, None)
                url = database_url.replace("@127.0.0.1:", f"@{here}:")
                command = ["ip", "netns", "exec", ns, *command]
            node = Node(name, host, load.free_port(), load.free_port(), load.free_port())
            deploy_nodes.append(node)
            conf = self.workdir / f"{name}.conf"
            conf.write_text(deploy_node_config(base_path, node, self.prefix), "utf-8")
            log = self.workdir / f"{name}.log"
            command += ["--config", str(conf), "--database", url, "--cluster", nats]
            command += ["--log-level", args.server_log_level]
            with log.open("wb") as out:
                proc = subprocess.Popen(
                    command,
                    cwd=load.ROOT,
                    stdout=out,
                    stderr=out,
                    stdin=subprocess.DEVNULL,
                    preexec_fn=load._raise_fd_limit,
                )
            self.nodes.append(NodeProc(name, host, node.telnet_port, proc, log))
        # all at once: the schema is there already (the accounts were created)
        for started in self.nodes:
            assert started.proc is not None and started.log is not None
            await wait_listening(started.proc, started.log)
        self.haproxy_port = load.free_port()
        config = haproxy_config(
            deploy_nodes,
            telnet_bind=f"{load.HOST}:{self.haproxy_port}",
            web_bind=f"{load.HOST}:{load.free_port()}",
            stats_socket=str(self.workdir / "haproxy.sock"),
            maxconn=min(affordable_maxconn(), 2000),
        )
        (self.workdir / "haproxy.cfg").write_text(config, encoding="utf-8")
        with (self.workdir / "haproxy.log").open("wb") as sink:
            self.haproxy = subprocess.Popen(
                [HAPROXY, "-db", "-f", str(self.workdir / "haproxy.cfg")],
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )

    @staticmethod
    def forward(here: str, port: int, delay: float | None) -> list[subprocess.Popen[bytes]]:
        """``here:port`` (this side of a node's veth) forwarded to ``127.0.0.1:port``
        by socat; through benchmarks/delayproxy.py (``delay`` s each way, 0 too: the
        proxy's own time is then the baseline) unless ``delay`` is None."""
        target = port
        started = []
        if delay is not None:
            target = load.free_port()
            proxy = [sys.executable, str(Path(__file__).with_name("delayproxy.py"))]
            started.append(subprocess.Popen([*proxy, str(target), str(port), str(delay)]))
        listen = f"TCP-LISTEN:{port},bind={here},fork,reuseaddr"
        started.append(subprocess.Popen(["socat", listen, f"TCP:127.0.0.1:{target}"]))
        return started

    def pids(self) -> dict[str, int]:
        out = {}
        if self.nats is not None:
            out["nats"] = self.nats.pid
        if self.haproxy is not None:
            out["haproxy"] = self.haproxy.pid
        return out

    def stop(self) -> None:
        """HAProxy, then every node (SIGTERM to all, then each waited for), then NATS
        and the forwarders; the namespaces removed."""
        if self.haproxy is not None:
            stop_process(self.haproxy)
        nodes = [node.proc for node in self.nodes if node.proc is not None]
        for proc in nodes:
            if proc.poll() is None:
                proc.terminate()
        for proc in [*nodes, *self.others, *([self.nats] if self.nats is not None else [])]:
            stop_process(proc)
        if self.namespaces:
            netns_down(self.namespaces)

    def log_errors(self) -> dict[str, dict[str, int]]:
        """Per node: ERROR lines and tracebacks in its log, and how often it took
        another node for gone (a heartbeat missed for 3 s: a node starved of CPU)."""
        out = {}
        for node in self.nodes:
            if node.log is not None and node.log.exists():
                text = node.log.read_text(errors="replace").splitlines()
                out[node.name] = {
                    "errors": sum(
                        1 for line in text if " ERROR " in line or line.startswith("Traceback")
                    ),
                    "peers_taken_for_gone": sum(1 for line in text if line.endswith(" is gone")),
                }
        return out


def parse_addresses(text: str) -> list[NodeProc]:
    nodes = []
    for i, item in enumerate(text.split(",")):
        host, _, port = item.strip().rpartition(":")
        nodes.append(NodeProc(f"node{i + 1}", host or load.HOST, int(port)))
    return nodes


async def run(args: argparse.Namespace) -> dict[str, Any]:
    """One ``--nodes``/``--addresses`` run: its JSON summary."""
    workdir = Path(tempfile.mkdtemp(prefix="fibs-cluster-load-", dir=args.tmpdir))
    database: load.PostgresDatabase | None = None
    cluster: Cluster | None = None
    load.fd_report(args.clients + args.chatters + 2 * args.pairs + 200)
    try:
        if args.addresses:
            nodes = parse_addresses(args.addresses)
            if not args.database:
                raise SystemExit("load.py: --addresses needs --database (the nodes' database)")
            url = args.database
        else:
            database = await load.PostgresDatabase.create(args.postgres or DEFAULT_ADMIN)
            url = database.url
        count = len(nodes) if args.addresses else args.nodes
        placement, groups = plan(args, count)
        kinds = {n: ("play" if n.startswith("play") else "person") for n in placement}
        kinds["whoasker"] = kinds["whoproxy"] = "person"
        created = await create_accounts(url, kinds)
        if not args.addresses:
            cluster = Cluster(args, workdir)
            await cluster.start(url)
            nodes = cluster.nodes
        bench = ClusterBench(args, nodes)
        bench.placement = placement
        summary = await asyncio.wait_for(scenario(bench, groups, cluster), args.time_limit)
        summary["account_creation_seconds"] = round(created, 1)
        if cluster is not None:
            summary["node_logs"] = cluster.log_errors()
        return summary
    finally:
        if cluster is not None:
            cluster.stop()
        if database is not None:
            await database.drop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


async def scenario(
    bench: ClusterBench, groups: dict[str, Any], cluster: Cluster | None
) -> dict[str, Any]:
    args = bench.args
    rng = bench.rng
    pids = cluster.pids() if cluster is not None else {}
    conc = args.login_concurrency
    bench.sample_nodes("baseline", pids)
    bench.lag_probe = asyncio.create_task(load._lag_probe(bench))
    out: dict[str, Any] = {
        "nodes": len(bench.nodes),
        "placement": args.placement,
        "netns_delay_ms": args.netns_delay,
        "scenario": args.scenario,
    }
    login_started = time.monotonic()
    if groups["idle"]:
        await bench.login_all(((n, load.Role()) for n in groups["idle"]), "login_idle", conc)
    specs: list[tuple[str, load.Role]] = []
    for a, b in groups["tellers"]:
        specs.append((a, Teller(b, args.chat_rate, random.Random(rng.random()))))
        specs.append((b, Teller(a, args.chat_rate, random.Random(rng.random()))))
    for a, b in groups["pairs"]:
        for me, partner, inviter in ((a, b, True), (b, a, False)):
            player = load.Player(
                partner, inviter, args.rate, args.length, random.Random(rng.random()), False
            )
            bench.players[me] = player
            specs.append((me, player))
        bench.pairs.append((bench.players[a], bench.players[b]))
    if specs:
        await bench.login_all(specs, "login_active", conc)
    out["login_seconds"] = round(time.monotonic() - login_started, 1)
    out["logged_in"] = len(bench.online)
    await asyncio.sleep(args.settle if groups["idle"] else 0.5)
    bench.sample_nodes("held", pids)
    out["rss_mb_per_node"] = {
        n.name: load.mb(n.samples["held"].rss) for n in bench.nodes if "held" in n.samples
    }
    out["rss_mb_per_node_before"] = {
        n.name: load.mb(n.samples["baseline"].rss) for n in bench.nodes if "baseline" in n.samples
    }
    # the nodes' CPU from before the first login until the users are held: with idle
    # users, what their logins cost (each login's who list and everyone's notices)
    out["login_cpu_seconds_per_node"] = {
        n.name: round(n.samples["held"].cpu - n.samples["baseline"].cpu, 2)
        for n in bench.nodes
        if "held" in n.samples and "baseline" in n.samples
    }
    out["who"] = await who_check(bench, cluster)
    bench.start_pairs()
    if specs:
        bench.meter.phase = "warmup"
        await asyncio.sleep(args.warmup)
        bench.meter.phase = "measure"
        bench.sample_nodes("start", pids)
        started = time.monotonic()
        await asyncio.sleep(args.duration)
        window = time.monotonic() - started
        bench.sample_nodes("end", pids)
        bench.meter.phase = "end"
        bench.acting = False
        out.update(window_figures(bench, window, pids))
        await asyncio.sleep(2.0)
    out["errors"] = dict(bench.meter.errors)
    out["error_samples"] = bench.meter.error_samples[:10]
    out["client_loop_lag_ms"] = {
        phase: round(load.percentile(values, 0.99) * 1e3, 1)
        for phase, values in bench.meter.lag.items()
    }
    out["held_at_end"] = sum(1 for c in bench.clients if c.open)
    bench.lag_probe.cancel()
    await bench.close_all()
    return out


async def who_check(bench: ClusterBench, cluster: Cluster | None) -> dict[str, Any]:
    """``rawwho`` on node 1 (placed there) and through HAProxy: does it list everyone?"""
    expected = set(bench.online)
    result: dict[str, Any] = {"online": len(expected)}
    askers: list[tuple[str, str, int]] = [("node1", bench.nodes[0].host, bench.nodes[0].port)]
    if cluster is not None and cluster.haproxy is not None:
        askers.append(("haproxy", load.HOST, cluster.haproxy_port))
    for (label, host, port), name in zip(askers, ("whoasker", "whoproxy"), strict=False):
        role = WhoAsker()
        proxy = bench.proxy
        if label == "haproxy":
            bench.proxy = False  # HAProxy sends the header itself
        client = await bench.connect_to(name, role, host, port)
        bench.proxy = proxy
        if not await asyncio.wait_for(asyncio.shield(client.login_done), 60):
            result[label] = {"error": "login failed"}
            continue
        started = time.monotonic()
        deadline = started + 5.0
        missing: set[str] = expected
        while time.monotonic() < deadline:  # a login reaches the other nodes within ~1 s
            role.done = asyncio.get_running_loop().create_future()
            role.ask()
            listed = await asyncio.wait_for(role.done, 30)
            missing = expected - listed
            if not missing:
                break
            await asyncio.sleep(0.5)
        result[label] = {
            "listed_everyone": not missing,
            "missing": len(missing),
            "seconds": round(time.monotonic() - started, 2),
        }
        client.close()
    return result


def window_figures(bench: ClusterBench, window: float, pids: dict[str, int]) -> dict[str, Any]:
    """Latencies, rates and CPU per tell / per action over the measured window."""
    lat = bench.meter.latencies["measure"]
    counts = bench.meter.phase_counts["measure"]
    out: dict[str, Any] = {"window_seconds": round(window, 1)}
    # the unit of the CPU figures: an action where there are matches, else a tell
    done = counts["actions_answered"] or counts["tell_delivered"]
    if counts["tell_sent"]:
        out["tells_per_second"] = round(counts["tell_delivered"] / window, 1)
        out["tell_delivery"] = load.latency_summary(lat["tell_delivery"])
        out["tell_echo"] = load.latency_summary(lat["tell_echo"])
        out["tells_undelivered"] = sum(
            1 for t in bench.sent.values() if time.monotonic() - t > load.ANSWER_TIMEOUT
        )
    if bench.pairs:
        out["actions_per_second"] = round(counts["actions_answered"] / window, 1)
        out["action"] = load.latency_summary(lat["action"])
        out["moves_verified"] = counts["moves_verified"]
        out["matches_finished"] = counts["matches_finished"]
    cpu: dict[str, float] = {}
    for node in bench.nodes:
        if "start" in node.samples and "end" in node.samples:
            cpu[node.name] = node.samples["end"].cpu - node.samples["start"].cpu
    for name in pids:
        a, b = bench.marks.get(f"{name}:start"), bench.marks.get(f"{name}:end")
        if a is not None and b is not None:
            cpu[name] = b.cpu - a.cpu
    cpu["clients"] = bench.client_cpu["end"] - bench.client_cpu["start"]
    out["cpu_seconds"] = {k: round(v, 2) for k, v in cpu.items()}
    if done and cpu:
        nodes_cpu = sum(v for k, v in cpu.items() if k.startswith("node"))
        out["cpu_unit"] = "action" if counts["actions_answered"] else "tell"
        out["node_cpu_ms_per_unit"] = round(nodes_cpu / done * 1e3, 3)
        out["nats_cpu_ms_per_unit"] = round(cpu.get("nats", 0.0) / done * 1e3, 3)
    return out
