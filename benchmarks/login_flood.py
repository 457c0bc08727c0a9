"""Junk and wrong passwords against a real server while a user logs in (issue 34 item 12).

Starts ``python -m server`` as load.py does (the shipped fibs.conf, the web door off,
a fresh SQLite database, accounts at the production scrypt cost), then:

1. **before**: the well-behaved user ``alice`` logs in (CLIP, from 127.0.0.2) again and
   again for ``--quiet`` seconds: her login time, from the login line to CLIP ``6``;
2. **flood**: for ``--seconds``, ``--flooders`` connections at a time from 127.0.0.3 (a
   trusted address as shipped: no pace per address in the login throttle), or spread
   over ``--addresses`` addresses 127.0.1.x, each connecting, sending five CLIP logins
   with wrong passwords for names nobody has and ``--junk`` KB of random bytes, and
   resetting the connection after a random 0-``--hold`` s (the issue's "connect / 20 KB
   of random bytes / abort"), at once again; alice keeps logging in all along;
3. **after**: ``--quiet`` seconds of alice's logins alone again.

The summary (JSON on stdout): alice's login times before, during and after (count, p50,
p99, max, failures), the flood's connections, the server's RSS before, at its peak and
``--quiet`` s after (and ``--later`` s after, when longer), its CPU, tracebacks in its
log, and its SIGTERM time. The server runs with the allocator ``python -m server`` starts
with (``[server] allocator``, D434), unless ``PYTHONMALLOC`` is set here (e.g.
``PYTHONMALLOC=pymalloc``: Python's own, as before D434).

    python benchmarks/login_flood.py --seconds 20 [--later 90]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import socket
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # benchmarks/load.py, beside this script

USER = "alice"
USER_SOURCE = "127.0.0.2"
FLOOD_SOURCE = "127.0.0.3"
LOGIN_TIMEOUT = 30.0
"""Seconds alice's login may take before it counts as failed."""


@dataclass
class Logins:
    """Alice's logins of one phase."""

    times: list[float] = field(default_factory=list)
    failed: int = 0

    def summary(self) -> dict[str, Any]:
        return {**load.latency_summary(self.times), "failed": self.failed}


@dataclass
class Flood:
    connections: int = 0
    refused: int = 0
    bytes_sent: int = 0


async def login_once(port: int) -> float:
    """One CLIP login of alice: seconds from the login line to ``6``."""
    reader, writer = await asyncio.open_connection(load.HOST, port, local_addr=(USER_SOURCE, 0))
    try:
        writer.write(b"\xff\xfc\x18")  # IAC WONT TTYPE: no terminal type to wait for
        buffer = b""
        while b"login: " not in buffer:
            chunk = await reader.read(65536)
            if not chunk:
                raise ConnectionError("closed before login:")
            buffer += chunk
        started = time.monotonic()
        writer.write(f"login {load.CLIENT_NAME} 1008 {USER} {load.PASSWORD}\r\n".encode())
        buffer = b""
        while b"\r\n6\r\n" not in buffer:
            chunk = await reader.read(65536)
            if not chunk:
                raise ConnectionError("closed before 6")
            buffer += chunk[-4096:] if len(chunk) > 4096 else chunk
            buffer = buffer[-8192:]
        return time.monotonic() - started
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def keep_logging_in(port: int, logins: Logins, stop: asyncio.Event, pause: float) -> None:
    while not stop.is_set():
        try:
            async with asyncio.timeout(LOGIN_TIMEOUT):
                logins.times.append(await login_once(port))
        except (TimeoutError, ConnectionError, OSError):
            logins.failed += 1
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(pause):
                await stop.wait()


async def flooder(
    port: int,
    source: str,
    rng: random.Random,
    args: argparse.Namespace,
    flood: Flood,
    stop: asyncio.Event,
) -> None:
    """Connections from ``source`` one after another until ``stop`` (not cancelled:
    Python 3.11's ``wait_for`` can swallow a cancellation)."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection(load.HOST, port, local_addr=(source, 0))
        except OSError:
            flood.refused += 1
            await asyncio.sleep(0.05)
            continue
        flood.connections += 1
        logins = b"".join(
            f"login junk 1008 j{rng.randrange(10**9)} wrong{rng.randrange(10**6)}\r\n".encode()
            for _ in range(5)
        )
        data = b"\xff\xfc\x18" + logins + rng.randbytes(args.junk * 1024)
        writer.write(data)
        flood.bytes_sent += len(data)
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(rng.uniform(0, args.hold)):
                await reader.read(65536)
        sock = writer.get_extra_info("socket")
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()


async def phase(port: int, seconds: float, pause: float) -> Logins:
    logins, stop = Logins(), asyncio.Event()
    task = asyncio.create_task(keep_logging_in(port, logins, stop, pause))
    await asyncio.sleep(seconds)
    stop.set()
    await task
    return logins


async def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    server = load.ServerProcess(workdir, "INFO", [sys.executable, "-m", "server"], [])
    shipped = load.read_config(load.SHIPPED_CONFIG)
    overrides = {load.WEB_PORT: "0"}
    config = load.run_config(
        shipped, overrides, {"host": load.HOST, "port": "0", "database": server.url}
    )
    server.write_config(config)
    prod = load.production_cost(config)
    await server.create_accounts([load.Account(USER, production=True)], prod)
    await server.start()
    port = server.port
    out: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.node()}",
        "settings": load.config_differences(shipped, config),
        "production_scrypt": vars(prod),
        "arguments": vars(args),
    }
    try:
        await phase(port, 2.0, args.pause)  # the first hashes, the imports: not measured
        rss_before = load.read_proc(server.pid)
        before = await phase(port, args.quiet, args.pause)
        flood = Flood()
        sources = (
            [f"127.0.1.{i + 1}" for i in range(args.addresses)]
            if args.addresses
            else [FLOOD_SOURCE]
        )
        stop = asyncio.Event()
        attackers = [
            asyncio.create_task(
                flooder(port, sources[i % len(sources)], random.Random(i), args, flood, stop)
            )
            for i in range(args.flooders)
        ]
        peak = 0
        during_logins = Logins()
        user = asyncio.create_task(keep_logging_in(port, during_logins, stop, args.pause))
        started = time.monotonic()
        while time.monotonic() - started < args.seconds:
            await asyncio.sleep(0.5)
            peak = max(peak, load.read_proc(server.pid).rss)
        stop.set()
        await asyncio.gather(*attackers, user)
        cpu_flood = load.read_proc(server.pid).cpu - rss_before.cpu
        after = await phase(port, args.quiet, args.pause)
        rss_after = load.read_proc(server.pid)
        if args.later > args.quiet:  # a last look, after the second trim (D435)
            await asyncio.sleep(args.later - args.quiet)
        rss_later = load.read_proc(server.pid)
        errors, samples = server.log_errors()
        out.update(
            {
                "logins": {
                    "before": before.summary(),
                    "during_flood": during_logins.summary(),
                    "after": after.summary(),
                },
                "flood": {
                    "sources": len(sources),
                    "connections": flood.connections,
                    "connect_refused": flood.refused,
                    "mb_sent": load.mb(flood.bytes_sent),
                },
                "server": {
                    "rss_mb_before": load.mb(rss_before.rss),
                    "rss_mb_peak": load.mb(max(peak, rss_after.hwm)),
                    "rss_mb_after": load.mb(rss_after.rss),
                    "rss_after_vs_before": round(rss_after.rss / rss_before.rss - 1, 3),
                    "rss_mb_later": load.mb(rss_later.rss),
                    "rss_later_vs_before": round(rss_later.rss / rss_before.rss - 1, 3),
                    "allocator": os.environ.get("PYTHONMALLOC")
                    or config.get("server", "allocator", fallback="pymalloc"),
                    "cpu_seconds_during_flood": round(cpu_flood, 1),
                    "heap_trims": _count_in_log(server.log_path, "heap trimmed"),
                    "log_errors": errors,
                    "log_error_samples": samples,
                },
            }
        )
    finally:
        out.setdefault("server", {})["stop_seconds"] = round(await server.stop(), 2)
    return out


def _count_in_log(path: Path, text: str) -> int:
    """Lines of the server's log with ``text`` in them."""
    with path.open(encoding="utf-8", errors="replace") as f:
        return sum(text in line for line in f)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="the flood's length")
    parser.add_argument("--quiet", type=float, default=30.0, help="seconds before and after")
    parser.add_argument(
        "--later",
        type=float,
        default=0.0,
        help="RSS read once more this many seconds after the flood (after the second "
        "heap trim, about 70 s after the fall, D435)",
    )
    parser.add_argument("--flooders", type=int, default=100, help="connections at a time")
    parser.add_argument(
        "--addresses", type=int, default=0, help="spread over 127.0.1.1-N (0: 127.0.0.3)"
    )
    parser.add_argument("--junk", type=int, default=20, help="KB of random bytes each")
    parser.add_argument("--hold", type=float, default=1.0, help="seconds before the reset")
    parser.add_argument("--pause", type=float, default=0.2, help="between alice's logins")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load._raise_fd_limit()
    with tempfile.TemporaryDirectory(prefix="fibs-login-flood-") as tmp:
        summary = asyncio.run(run(args, Path(tmp)))
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
