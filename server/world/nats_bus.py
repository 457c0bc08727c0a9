"""A :class:`~server.world.bus.Bus` over NATS (``nats-py``; issue 32): the nodes of one
world on one NATS server or cluster. The only module that imports ``nats``.

Subjects, under a prefix of the world's own (``fibs`` by default, so that several worlds
or test runs can share one NATS):

* ``<prefix>.node.<to>.<from>``: everything node ``from`` sends node ``to``. Each node
  holds **one** subscription, ``<prefix>.node.<me>.*``: NATS keeps one publisher
  connection's messages in order, and one subscription is handled in order by the
  client, so one node's messages reach another in the order published, as the bus
  promises (``shared/docs/cluster-design.md``: "one ordered path per pair of nodes").
  A message "to every node" is one message to each node this one knows.
* ``<prefix>.hello.<from>``: a node announces itself when it connects; each node that
  hears it answers on the new node's path, so both know each other before anything else
  passes between them.

Each payload starts with one byte saying what it is: ``D`` data for the subscribers,
``M`` "I am here" (the answer to a hello), ``B`` a barrier and ``A`` its answer
(:meth:`NatsBus.barrier`). A hello and an "I am here" carry the sender's
:data:`~server.world.bus.BUS_VERSION` in ASCII digits (none: version 1, a node of an
earlier release); a node of another version is not met (D424): it is logged, its
messages are dropped, and a hello from it is answered once, so that it logs this one too.

Publishing never awaits: messages queue in order and one task writes them (nats-py's own
publish is a coroutine). The writer sends everything queued for one node as one NATS
message (``D`` then each message as a 4-byte length and its bytes), which the receiver
hands to its subscribers in one go: what one step of this node wrote to several users of
another node reaches all of them before that node runs anything else, as it would on one
node (the order between different nodes' paths is not the bus's to keep).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
import struct
from collections import deque
from collections.abc import Sequence
from typing import Final

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from server.world.bus import BUS_VERSION, LOST_AFTER, Handler, Lost, Met

log = logging.getLogger(__name__)

NATS_WIRE: Final = {
    "prefix": "fibs",
    "client": "fibs-{node}",
    "path": "{prefix}.node.{to}.{sender}",
    "inbox": "{prefix}.node.{node}.*",
    "hello": "{prefix}.hello.{sender}",
    "hellos": "{prefix}.hello.*",
    "length": ">I",
}
"""The names of the connection and of the subjects (see the module), and the format of
a message's length in a packet (4 bytes, big-endian): between nodes, never sent to a
client."""

DATA, HERE, BARRIER, ANSWER, BEAT, BYE, HELLO = b"D", b"M", b"B", b"A", b"H", b"Q", b"W"
"""The first byte of a payload (see the module)."""

_LENGTH = struct.Struct(NATS_WIRE["length"])

BEAT_INTERVAL = 1.0
"""Seconds between two heartbeats to every node known (:data:`server.world.bus.LOST_AFTER`
without a word: the node is gone)."""

RECONNECT_WAIT = 1
"""Seconds between two attempts to reach NATS again."""

PING_INTERVAL = 5
"""Seconds between NATS pings: a dead link is noticed in seconds, not nats-py's
default two minutes (``shared/docs/cluster-design.md``)."""


class NatsBus:
    """One node's :class:`~server.world.bus.Bus` over NATS; :meth:`connect` opens it."""

    def __init__(self, client: Client, node: str, prefix: str, version: int = BUS_VERSION) -> None:
        self._client = client
        self._node = node
        self._prefix = prefix
        self._version = version
        self._said = str(version).encode()
        """The version as a hello and an "I am here" say it."""
        self._refused: dict[str, int] = {}
        """Nodes of another version heard from, and the version each said (D424)."""
        self._handlers: list[Handler] = []
        self._met: list[Met] = []
        self._lost: list[Lost] = []
        self._known: dict[str, float] = {}
        """The other nodes this one knows: when it last heard from each (loop time)."""
        self._beating: asyncio.Task[None] | None = None
        self._outbox: deque[tuple[str, bytes, bytes]] = deque()
        """(subject, kind, body) to publish, in order."""
        self._writer: asyncio.Task[None] | None = None
        self._barriers: dict[int, tuple[asyncio.Future[None], set[str]]] = {}
        self._barrier_ids = itertools.count(1)

    @classmethod
    async def connect(
        cls,
        servers: str | Sequence[str],
        node: str,
        *,
        prefix: str = NATS_WIRE["prefix"],
        version: int = BUS_VERSION,
    ) -> NatsBus:
        """Connect ``node`` to the NATS at ``servers`` (a URL or a list, a cluster), keep
        reconnecting for ever, and announce the node to the others (``version``: what it
        says it speaks; another than :data:`~server.world.bus.BUS_VERSION` only in the
        tests of D424)."""
        holder: list[NatsBus] = []

        async def reconnected() -> None:
            if holder:
                holder[0]._reconnected()

        async def disconnected() -> None:
            log.warning("cluster node %s lost NATS; reconnecting", node)

        async def failed(error: Exception) -> None:
            # Each failed attempt while NATS is away: no traceback (as D296's outages);
            # anything else NATS reports (a slow consumer...) is a warning.
            if isinstance(error, OSError):
                log.debug("NATS: %s", error)
            else:
                log.warning("NATS: %s", error)

        client = await nats.connect(
            servers if isinstance(servers, str) else list(servers),
            name=NATS_WIRE["client"].format(node=node),
            ping_interval=PING_INTERVAL,
            max_reconnect_attempts=-1,
            reconnect_time_wait=RECONNECT_WAIT,
            reconnected_cb=reconnected,
            disconnected_cb=disconnected,
            error_cb=failed,
        )
        bus = cls(client, node, prefix, version)
        holder.append(bus)
        await client.subscribe(
            NATS_WIRE["inbox"].format(prefix=prefix, node=node), cb=bus._on_message
        )
        await client.subscribe(NATS_WIRE["hellos"].format(prefix=prefix), cb=bus._on_hello)
        await client.publish(
            NATS_WIRE["hello"].format(prefix=prefix, sender=node), HELLO + bus._said
        )
        await client.flush()
        bus._beating = asyncio.get_running_loop().create_task(
            bus._beat(), context=contextvars.Context()
        )
        return bus

    @property
    def node(self) -> str:
        return self._node

    @property
    def connected(self) -> bool:
        return bool(self._client.is_connected)

    @property
    def known(self) -> frozenset[str]:
        """The other nodes this one knows (a message to all goes to each)."""
        return frozenset(self._known)

    def publish(self, to: str | None, message: bytes) -> None:
        targets = sorted(self._known) if to is None else [to]
        for target in targets:
            self._send(target, DATA, message)

    def subscribe(self, handler: Handler, met: Met | None = None, lost: Lost | None = None) -> None:
        self._handlers.append(handler)
        if met is not None:
            self._met.append(met)
        if lost is not None:
            self._lost.append(lost)

    async def close(self, *, goodbye: bool = True) -> None:
        """Send what is queued (and, with ``goodbye``, tell the others this node is
        going, so they need not wait for its silence), then leave NATS."""
        if self._beating is not None:
            self._beating.cancel()
        if goodbye:
            for node in sorted(self._known):
                self._send(node, BYE)
        if self._writer is not None:
            await self._writer
        with contextlib.suppress(Exception):
            await self._client.drain()

    async def _beat(self) -> None:
        """Every :data:`BEAT_INTERVAL`: a heartbeat to every node known, and the nodes
        not heard from for :data:`~server.world.bus.LOST_AFTER` seconds are gone."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(BEAT_INTERVAL)
            now = loop.time()
            for node, heard in sorted(self._known.items()):
                if now - heard > LOST_AFTER:
                    self._lose(node)
                else:
                    self._send(node, BEAT)

    def _reconnected(self) -> None:
        """NATS is back: what the others published meanwhile is lost, so every node
        known is met again (both sides push their users and tables anew), and the hello
        goes out again for those that took this node for gone."""
        log.warning("cluster node %s reached NATS again", self._node)
        subject = NATS_WIRE["hello"].format(prefix=self._prefix, sender=self._node)
        self._outbox.append((subject, HELLO, self._said))
        for node in sorted(self._known):
            self._send(node, HERE, self._said)
            self._meet(node, again=True)
        self._write_soon()

    def _lose(self, node: str) -> None:
        """``node`` is gone: the subscribers hear of it once."""
        if self._known.pop(node, None) is None:
            return
        log.warning("cluster node %s is gone", node)
        for lost in self._lost:
            try:
                lost(node)
            except Exception:
                log.exception("losing node %s failed", node)

    async def barrier(self, timeout: float = 5.0) -> None:
        """Until every node this one knows has handled everything it sent them so far
        (each answers a barrier sent down the same ordered path)."""
        if not self._known:
            return
        barrier = next(self._barrier_ids)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._barriers[barrier] = (done, set(self._known))
        for node in sorted(self._known):
            self._send(node, BARRIER, str(barrier).encode())
        try:
            await asyncio.wait_for(done, timeout)
        finally:
            self._barriers.pop(barrier, None)

    # -- sending -------------------------------------------------------------------------------

    def _send(self, to: str, kind: bytes, body: bytes = b"") -> None:
        subject = NATS_WIRE["path"].format(prefix=self._prefix, to=to, sender=self._node)
        self._outbox.append((subject, kind, body))
        self._write_soon()

    def _write_soon(self) -> None:
        """Have the writer publish what is queued (started if it is not running)."""
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(
                self._write(), context=contextvars.Context()
            )

    async def _write(self) -> None:
        """Publish the queued messages in order (one writer: the order is kept), the
        data queued for one node in one NATS message (:func:`packets`)."""
        while self._outbox:
            queued = list(self._outbox)
            self._outbox.clear()
            for subject, payload in packets(queued):
                try:
                    await self._client.publish(subject, payload)
                except Exception:  # the connection is closing: the message is lost
                    log.warning("NATS publish to %s failed", subject, exc_info=True)

    # -- receiving -----------------------------------------------------------------------------

    async def _on_hello(self, msg: Msg) -> None:
        sender = _sender(msg.subject)
        if sender == self._node:
            return
        said = msg.data[1:] if msg.data[:1] == HELLO else b""  # an earlier release: b""
        if not self._speaks_ours(sender, said):
            self._send(sender, HERE, self._said)  # it learns this node's version, once
            return
        self._known.pop(sender, None)  # a restart: a new node of that name
        self._meet(sender)

    def _speaks_ours(self, node: str, said: bytes) -> bool:
        """Whether ``node``, which said ``said`` in a hello or an "I am here", speaks
        this node's version; if not, it is refused (D424): taken as gone if it was
        known (a restart as another version), logged once per version it says."""
        version = int(said) if said.isdigit() else 1  # nothing said: an earlier release
        if version == self._version:
            self._refused.pop(node, None)
            return True
        self._lose(node)
        if self._refused.get(node) != version:
            self._refused[node] = version
            log.error(
                "cluster node %s speaks bus version %d, this node %d: not meeting it "
                "(every node of a world must run one version; docs/cluster.md)",
                node,
                version,
                self._version,
            )
        return False

    def _meet(self, node: str, *, again: bool = False) -> None:
        """The first word from (or of) ``node``: the subscribers hear of it once (and
        again when it says ``HERE``: it took this node for gone, or is new)."""
        known = node in self._known
        self._known[node] = asyncio.get_running_loop().time()
        if known and not again:
            return
        if not known and not again:
            # it learns of this node (again, if it was taken for gone)
            self._send(node, HERE, self._said)
        for met in self._met:
            try:
                met(node)
            except Exception:
                log.exception("meeting node %s failed", node)

    async def _on_message(self, msg: Msg) -> None:
        sender = _sender(msg.subject)
        data = msg.data
        kind, body = data[:1], data[1:]
        if kind == BYE:
            self._lose(sender)
            return
        if kind == HERE and not self._speaks_ours(sender, body):
            return
        if sender in self._refused:
            return  # a node of another version: nothing of it is read
        self._meet(sender, again=kind == HERE)
        if kind == DATA:
            for message in frames(data):
                for handler in self._handlers:
                    try:
                        handler(sender, message)
                    except Exception:  # the handler's own error: the next one goes on
                        log.exception("message from node %s could not be handled", sender)
        elif kind == BARRIER:
            self._send(sender, ANSWER + body)
        elif kind == ANSWER:
            waiting = self._barriers.get(int(body))
            if waiting is not None:
                done, left = waiting
                left.discard(sender)
                if not left and not done.done():
                    done.set_result(None)


PACKET_BYTES: Final = 256 * 1024
"""The most data :func:`packets` puts in one NATS message (a single larger message goes
alone): well under NATS's ``max_payload`` (1 MiB by default), which a node's thousands of
users sent in one go to a node it meets again once exceeded, the publish refused
(``benchmarks/load.py --nodes 3``, docs/performance.md §23)."""


def packets(queued: list[tuple[str, bytes, bytes]]) -> list[tuple[str, bytes]]:
    """``queued`` (subject, kind, body) as NATS messages: in order per subject, the data
    of one subject in one message (``D`` and each as a 4-byte length and its bytes) until
    a bus message to that subject, which goes after it in one of its own, or until the
    message holds :data:`PACKET_BYTES`."""
    open_packets: dict[str, list[bytes]] = {}
    sizes: dict[str, int] = {}
    out: list[tuple[str, list[bytes]]] = []
    for subject, kind, body in queued:
        if kind == DATA:
            frames = open_packets.get(subject)
            if frames is None or sizes[subject] + len(body) > PACKET_BYTES:
                frames = open_packets[subject] = [DATA]
                sizes[subject] = 0
                out.append((subject, frames))
            frames.append(_LENGTH.pack(len(body)) + body)
            sizes[subject] += 4 + len(body)
        else:
            open_packets.pop(subject, None)
            out.append((subject, [kind + body]))
    return [(subject, b"".join(frames)) for subject, frames in out]


def frames(packet: bytes) -> list[bytes]:
    """The messages of a ``D`` packet (:func:`packets`), in order."""
    found = []
    at = 1
    while at < len(packet):
        (size,) = _LENGTH.unpack_from(packet, at)
        found.append(packet[at + 4 : at + 4 + size])
        at += 4 + size
    return found


def _sender(subject: str) -> str:
    """The sending node: the last token of a path or hello subject."""
    return subject.rpartition(".")[2]
