"""HAProxy's agent check: the node tells the proxy in front whether it takes new users.

With ``[server] agent_port``, the server listens there (on ``[server] host``) for
HAProxy's ``agent-check`` (deploy/haproxy.cfg): to each connection it writes one line and
closes it, as HAProxy's agent protocol asks (HAProxy 2.6 configuration manual,
``agent-check``): ``up ready`` while the node takes new connections, ``drain`` once it
is drained (SIGUSR1; SIGUSR2 makes it ready again; docs/cluster.md). HAProxy sends a
drained node no new connection (D369); once the agent has said ``drain``, the node warns
its users and, after ``[server] drain_grace``, closes their connections
(:meth:`server.service.Service.drain`, D415).

Nothing the agent's client sends is read: the answer is the same for any connection,
and a connection costs one write.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Final, cast

log = logging.getLogger(__name__)

READY: Final = b"up ready\n"
"""The answer of a node that takes new connections: HAProxy's operational state up and
its administrative state ready (out of drain)."""
DRAIN: Final = b"drain\n"
"""The answer of a drained node: HAProxy sends it no new connection."""


def answer(draining: bool) -> bytes:
    """The agent's line for a node that is (or is not) drained."""
    return DRAIN if draining else READY


class AgentAnswer(asyncio.Protocol):
    """One agent connection: the node's state, then closed."""

    def __init__(self, draining: Callable[[], bool]) -> None:
        self._draining = draining

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        stream = cast(asyncio.Transport, transport)
        stream.write(answer(self._draining()))
        stream.close()

    def data_received(self, data: bytes) -> None:
        """What HAProxy may send (``agent-send``) is not read."""


async def start_agent(host: str, port: int, draining: Callable[[], bool]) -> asyncio.Server:
    """Listen for agent checks on ``host``:``port``; each is answered by ``draining``'s
    state at that moment."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: AgentAnswer(draining), host, port)
    log.info("agent check on %s:%d", host, port)
    return server
