"""Free ports for the servers a test starts in another process (or stops and starts again
on the same port): chosen below the system's ephemeral range, each worker of a parallel
run (pytest-xdist) in a slice of its own.

A port taken with ``bind(port 0)`` and given back comes from the ephemeral range, where
every outgoing connection of every process takes its local port too: between the test
giving it back and the server listening on it, a connection of a test beside it took it
once (an agent check's port, "address already in use"; clean-clone CI with three
workers). Below that range nothing takes a port unless asked for it by number, and the
slices keep the workers apart; the port is still checked free before it is given.
"""

from __future__ import annotations

import os
import random
import re
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
"""Linux's ephemeral ports (``32768 60999`` by default): the lowest is where ours end."""
LOWEST = 10000
"""The lowest port given: above the well-known and the usual fixed service ports."""
_WORKER = re.compile(r"gw(\d+)")


def ephemeral_start() -> int:
    """The lowest port of the ephemeral range (32768 where it cannot be read)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def worker_slice(worker: str | None, workers: int, end: int) -> range:
    """The ports of ``worker`` (xdist's ``gwK``, or None without xdist) among
    ``workers`` sharing ``LOWEST..end``."""
    found = _WORKER.fullmatch(worker or "")
    index = int(found[1]) if found else 0
    count = max(workers, index + 1)
    size = (end - LOWEST) // count
    start = LOWEST + index * size
    return range(start, start + size)


def is_free(port: int) -> bool:
    """Whether a listener could bind 127.0.0.1:``port`` now (without SO_REUSEADDR, so
    a port with connections still in TIME_WAIT is not taken either)."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port no process listens on, below the ephemeral range, in this worker's
    slice (:func:`worker_slice`)."""
    ports = worker_slice(
        os.environ.get("PYTEST_XDIST_WORKER"),
        int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")),
        ephemeral_start(),
    )
    for port in random.sample(ports, min(len(ports), 200)):
        if is_free(port):
            return port
    raise RuntimeError(f"no free port in {ports.start}..{ports.stop - 1}")
