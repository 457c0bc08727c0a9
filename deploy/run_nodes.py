"""``python -m deploy.run_nodes``: N server nodes on this machine behind one HAProxy.

Starts ``--nodes`` nodes (``python -m server --cluster``), each on its own telnet, web
and agent-check ports on 127.0.0.1, sharing one PostgreSQL database and one NATS, each
reading the PROXY header on both doors; then Debian's ``haproxy`` in front of them,
with the configuration :func:`haproxy_config` writes (``deploy/haproxy.cfg`` is that
configuration for two nodes with the default ports). Users connect to the one telnet
port and the one web port. Ctrl-C (or SIGTERM) stops HAProxy and then every node.

Draining a node: ``kill -USR1 <pid>`` (the pids are printed at start); its agent check
then says ``drain`` and HAProxy sends it no new connection; ``kill -USR2 <pid>`` makes
it ready again (docs/cluster.md).

``--print-config`` prints the HAProxy configuration and starts nothing.
"""

from __future__ import annotations

import argparse
import configparser
import contextlib
import io
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from server.config import ConfigError, Settings, load

ROOT = Path(__file__).resolve().parents[1]
HAPROXY = "/usr/sbin/haproxy"
"""Debian's haproxy (2.6 on bookworm)."""
LISTENING = b"fibs-server listening on"
"""What a node prints once it listens (server/__main__.py)."""
MAXCONN = 30000
"""HAProxy's connections at most (both ports): 15,000 users over their nodes need about
as many; HAProxy must be able to open twice as many files."""
NO_IDLE_LIMIT_SECONDS = 86400
"""HAProxy's idle limit for a server without one (``[limits] idle_timeout = 0``)."""


DEFAULT_SERVER = (
    "default-server send-proxy-v2 check-send-proxy check inter 2s fall 3 rise 2 "
    "agent-check agent-inter 2s"
)
"""Every node: the PROXY header v2 on its connections and health checks, a health
check every 2 s (down after 3 failures, up after 2 successes), the agent asked every 2 s."""


@dataclass(frozen=True)
class Node:
    """One node as HAProxy reaches it."""

    name: str
    host: str
    telnet_port: int
    web_port: int
    agent_port: int


def default_nodes(count: int, first_port: int = 14321) -> list[Node]:
    """``count`` nodes on 127.0.0.1: telnet ports from ``first_port``, web ports from
    ``first_port + 1000``, agent-check ports from ``first_port + 2000``."""
    return [
        Node(
            f"node{i + 1}",
            "127.0.0.1",
            first_port + i,
            first_port + 1000 + i,
            first_port + 2000 + i,
        )
        for i in range(count)
    ]


def haproxy_config(
    nodes: Sequence[Node],
    *,
    telnet_bind: str = "*:4321",
    web_bind: str = "*:8080",
    stats_socket: str = "/run/haproxy/fibs-admin.sock",
    idle_limit: float = Settings().idle_timeout,
    maxconn: int = MAXCONN,
) -> str:
    """The HAProxy configuration of one telnet port and one web port in front of
    ``nodes`` (HAProxy 2.6's directives; docs/cluster.md explains each choice).
    ``idle_limit`` is the nodes' ``[limits] idle_timeout``: HAProxy's ``timeout tunnel``
    is longer, so that it never cuts an idle user before the server warns them."""
    idle_limit = int(idle_limit or NO_IDLE_LIMIT_SECONDS)
    tunnel = idle_limit + 300

    def servers(port: str) -> str:
        return "".join(
            f"    server {n.name} {n.host}:{getattr(n, port)} agent-port {n.agent_port}\n"
            for n in nodes
        )

    return f"""\
# HAProxy in front of the FIBS server's nodes: one telnet port, one web port.
# Written by deploy/run_nodes.py (python -m deploy.run_nodes --print-config); see
# docs/cluster.md. Each node runs with [server] proxy_protocol = yes, [web]
# proxy_protocol = yes and [server] agent_port set: HAProxy sends the PROXY header
# (send-proxy-v2) on every connection, health checks too (check-send-proxy), and asks
# each node's agent port whether it takes new connections (ready or drain).
global
    log stdout format raw local0 notice
    # Two open files per connection: HAProxy needs a limit of 2 * maxconn (+ a few).
    maxconn {maxconn}
    stats socket {stats_socket} mode 600 level admin

defaults
    mode tcp
    log global
    option dontlognull
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    # An idle user is warned and logged out by the server after [limits] idle_timeout
    # ({idle_limit} s by default); the proxy must not cut the connection before.
    timeout tunnel {tunnel}s
    timeout client-fin 10s
    timeout check 5s
    {DEFAULT_SERVER}

frontend fibs_telnet
    bind {telnet_bind}
    default_backend fibs_telnet_nodes

backend fibs_telnet_nodes
    balance leastconn
    # Healthy: the node answers a new connection with its login prompt.
    option tcp-check
    tcp-check expect string login:
{servers("telnet_port")}
frontend fibs_web
    bind {web_bind}
    default_backend fibs_web_nodes

backend fibs_web_nodes
    # The page and its WebSocket: the HTTP bytes pass through unchanged (TCP mode),
    # the WebSocket is a tunnel like a telnet connection.
    balance leastconn
    option httpchk GET /
    http-check expect status 200
{servers("web_port")}"""


def affordable_maxconn() -> int:
    """:data:`MAXCONN`, or less when this machine's open-file limit (the hard one, which
    HAProxy raises its own to) cannot hold two files per connection."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return MAXCONN
    return max(100, min(MAXCONN, (hard - 1000) // 2))


def node_config(base: Path | None, node: Node, prefix: str) -> str:
    """A node's fibs.conf: ``base`` (if any) with what the node behind HAProxy needs."""
    parser = configparser.ConfigParser(interpolation=None)
    if base is not None:
        parser.read(base, encoding="utf-8")
    for section in ("server", "web", "cluster"):
        if not parser.has_section(section):
            parser.add_section(section)
    parser.set("server", "host", node.host)
    parser.set("server", "port", str(node.telnet_port))
    parser.set("server", "proxy_protocol", "yes")
    parser.set("server", "agent_port", str(node.agent_port))
    parser.set("web", "host", node.host)
    parser.set("web", "port", str(node.web_port))
    parser.set("web", "proxy_protocol", "yes")
    parser.set("cluster", "node", node.name)
    parser.set("cluster", "prefix", prefix)
    text = io.StringIO()
    parser.write(text)
    return text.getvalue()


def wait_listening(process: subprocess.Popen[bytes], log: Path, timeout: float = 60.0) -> bool:
    """Wait until a node says it listens (its log), one node after the other: the
    first creates the database's schema, which the others then find."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if LISTENING in log.read_bytes():
            return True
        time.sleep(0.1)
    return False


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.run_nodes",
        description="Run N FIBS server nodes on this machine behind one HAProxy.",
    )
    parser.add_argument("--nodes", type=int, default=2, help="how many nodes (default 2)")
    parser.add_argument("--database", help="the nodes' PostgreSQL URL (postgresql+asyncpg://...)")
    parser.add_argument("--nats", default="nats://127.0.0.1:4222", help="NATS URL(s)")
    parser.add_argument("--prefix", default="fibs", help="the world's NATS subject prefix")
    parser.add_argument("--telnet", default="*:4321", help="HAProxy's telnet address")
    parser.add_argument("--web", default="*:8080", help="HAProxy's web address")
    parser.add_argument("--first-port", type=int, default=14321, help="node 1's telnet port")
    parser.add_argument("--config", type=Path, help="a fibs.conf every node starts from")
    parser.add_argument("--dir", type=Path, default=Path("run-nodes"), help="run files go here")
    parser.add_argument(
        "--print-config", action="store_true", help="print haproxy.cfg, run nothing"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    nodes = default_nodes(args.nodes, args.first_port)
    folder: Path = args.dir.resolve()
    try:
        idle_limit = load(args.config).idle_timeout
    except ConfigError as exc:
        print(f"run_nodes: {exc}", file=sys.stderr)
        return 2
    binds = {"telnet_bind": args.telnet, "web_bind": args.web, "idle_limit": idle_limit}
    if args.print_config:
        sys.stdout.write(haproxy_config(nodes, **binds))
        return 0
    config = haproxy_config(
        nodes, stats_socket=str(folder / "haproxy.sock"), maxconn=affordable_maxconn(), **binds
    )
    if not args.database:
        print("run_nodes: --database postgresql+asyncpg://... is needed", file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "haproxy.cfg").write_text(config, encoding="utf-8")
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for node in nodes:
            conf = folder / f"{node.name}.conf"
            conf.write_text(node_config(args.config, node, args.prefix), encoding="utf-8")
            command = [sys.executable, "-m", "server", "--config", str(conf)]
            command += ["--database", args.database, "--cluster", args.nats]
            log_path = folder / f"{node.name}.log"
            log_path.write_bytes(b"")
            with log_path.open("ab") as log:
                process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
            processes.append(process)
            if not wait_listening(process, log_path):
                print(f"run_nodes: {node.name} did not start; see {log_path}", file=sys.stderr)
                return 1
            print(
                f"{node.name}: pid {process.pid}, telnet {node.telnet_port}, web "
                f"{node.web_port}, agent {node.agent_port}",
                flush=True,
            )
        haproxy = subprocess.Popen([HAPROXY, "-db", "-f", str(folder / "haproxy.cfg")])
        processes.append(haproxy)
        print(
            f"haproxy: pid {haproxy.pid}, telnet {args.telnet}, web {args.web}; "
            f"drain a node with kill -USR1 <pid>, Ctrl-C stops all",
            flush=True,
        )
        signal.signal(signal.SIGTERM, lambda *_: haproxy.terminate())
        with contextlib.suppress(KeyboardInterrupt):
            haproxy.wait()
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
