"""The bus between server nodes: what a presence or tables back end for several nodes
needs of it (:class:`Bus`), and :class:`LoopbackBus`, nodes in one process joined in
memory, for the contract tests of such back ends (issue 33, item 4).

A message is bytes (its producer's JSON): the loopback bus passes exactly what a network
bus would, so a back end that works over it sends nothing that cannot cross one. The
guarantee a back end may count on is the one NATS gives to one connection's messages:
**the messages one node publishes reach each other node in the order published**,
whatever subject or address they went to (``shared/docs/cluster-design.md``). Nothing is
promised between the messages of two different nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import orjson

Handler = Callable[[str, bytes], None]
"""What a node does with a message: called with the sending node's name and the bytes,
on the event loop, never inside the publisher's call."""

Met = Callable[[str], None]
"""What a node does when it first hears of another node (which may have users and tables
already), or hears again of one it had lost: called with that node's name, before any
message from it, and in order with what this node then sends it."""

Lost = Callable[[str], None]
"""What a node does when another node is gone (it stopped, or was not heard from for
:data:`LOST_AFTER` seconds): called with that node's name, after its last message."""

LOST_AFTER = 3.0
"""Seconds without a word from a node after which the others take it as gone (its
users leave their lists: issue 32, "no ghost in who" within 3 s)."""

BUS_VERSION = 1
"""The version of the messages between nodes (the presence's and the tables' JSON),
which a node says when it meets another (D424). Nodes of different versions never meet:
each logs the other's version and ignores it. A change a node of the previous release
reads without error keeps the number: a field added that readers may ignore (extra
fields, toggles and settings of a user's state are skipped), a message kind added that
older nodes may skip (logged once). Anything else (a field renamed, removed or retyped,
a kind whose loss breaks a command, a new call method that callers rely on) raises it
(docs/cluster.md, "Upgrading node by node"). Nodes of the releases before this one said
no version; they spoke version 1."""


def encode(message: dict[str, Any]) -> bytes:
    """A message's bytes: its compact JSON, made by orjson (D430: a tenth of
    :func:`json.dumps`'s time for a match action's messages, docs/performance.md §23).
    What orjson refuses (a string with a lone surrogate, a key that is a ``str``
    subclass) is made by :mod:`json` instead: the same JSON to any reader."""
    try:
        return orjson.dumps(message)
    except TypeError:
        return json.dumps(message, separators=(",", ":")).encode()


def decode(data: bytes) -> dict[str, Any]:
    """A message's JSON read back (:func:`encode`'s, or an earlier release's
    :func:`json.dumps`). What orjson refuses but :mod:`json` reads (an escaped lone
    surrogate, ``NaN``) is read by :mod:`json`."""
    try:
        message = orjson.loads(data)
    except ValueError:
        message = json.loads(data)
    if not isinstance(message, dict):
        raise ValueError(f"a bus message is a JSON object, not {type(message).__name__}")
    return message


class Bus(Protocol):
    """One node's connection to the bus."""

    @property
    def node(self) -> str:
        """This node's name, unique in the world."""
        ...

    @property
    def connected(self) -> bool:
        """Whether the bus carries messages now (a NATS connection may be reconnecting:
        what needs another node's answer is refused at once meanwhile)."""
        ...

    def publish(self, to: str | None, message: bytes) -> None:
        """Send ``message`` to the node ``to``, or to every other node (None). Returns at
        once; delivery is in order per publishing node (see the module)."""
        ...

    def subscribe(self, handler: Handler, met: Met | None = None, lost: Lost | None = None) -> None:
        """Deliver the messages addressed to this node (or to all) to ``handler`` too:
        every handler gets every message, all of them in the order of arrival (a node's
        presence and its tables share one ordered stream); tell ``met`` of each other
        node when this one first hears of it (the nodes already there when this one
        joined included), and ``lost`` of each node gone."""
        ...


class LoopbackBus:
    """Every node of one process: :meth:`connect` gives each its :class:`Bus`.

    Each node has one inbox, emptied in order on the event loop, so the messages of one
    publisher arrive in the order published, as over NATS. A message is handled in an
    empty context: nothing of the publisher's context variables (such as the acting
    user, :data:`server.world.registry.ACTOR`) leaks to another node.
    """

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {}
        self._met: dict[str, list[Met]] = {}
        self._lost: dict[str, list[Lost]] = {}
        self._inboxes: dict[str, deque[tuple[str, bytes | bool]]] = {}
        """Each node's messages to handle, in order; True: the sender joined (met),
        False: the sender is gone (lost)."""
        self._scheduled: set[str] = set()

    def connect(self, node: str) -> LoopbackConnection:
        if node in self._handlers:
            raise ValueError(f"node {node!r} is on the bus already")
        self._handlers[node] = []
        self._met[node] = []
        self._lost[node] = []
        self._inboxes[node] = deque()
        for other in self._inboxes:  # the nodes meet, each before anything of the other
            if other != node:
                self._inboxes[other].append((node, True))
                self._inboxes[node].append((other, True))
                with contextlib.suppress(RuntimeError):  # no event loop yet: at the next
                    self._schedule(other)
        return LoopbackConnection(self, node)

    @property
    def idle(self) -> bool:
        """No message waits to be handled."""
        return not any(self._inboxes.values())

    def _publish(self, sender: str, to: str | None, message: bytes) -> None:
        if sender not in self._inboxes:
            return  # a disconnected node says nothing more
        targets = [n for n in self._inboxes if n != sender] if to is None else [to]
        for node in targets:
            inbox = self._inboxes.get(node)
            if inbox is None:
                continue  # no such node (gone): a network bus drops it too
            inbox.append((sender, bytes(message)))
            self._schedule(node)

    def _schedule(self, node: str) -> None:
        if node in self._scheduled or node not in self._handlers:
            return
        self._scheduled.add(node)
        asyncio.get_running_loop().call_soon(self._drain, node, context=contextvars.Context())

    def _drain(self, node: str) -> None:
        """Handle the node's waiting messages in order."""
        self._scheduled.discard(node)
        if node not in self._inboxes:
            return  # disconnected meanwhile
        handlers = self._handlers[node]
        inbox = self._inboxes[node]
        while inbox:
            sender, message = inbox.popleft()
            if message is True:
                for met in self._met[node]:
                    met(sender)
                continue
            if message is False:
                for lost in self._lost[node]:
                    lost(sender)
                continue
            for handler in handlers:
                handler(sender, message)

    def disconnect(self, node: str) -> None:
        """``node`` is gone, as if its process died: what it sent is still handled, then
        every other node is told (:data:`Lost`); nothing reaches it any more."""
        del self._inboxes[node]
        self._handlers.pop(node, None)
        for other, inbox in self._inboxes.items():
            inbox.append((node, False))
            with contextlib.suppress(RuntimeError):
                self._schedule(other)

    def _subscribe(self, node: str, handler: Handler, met: Met | None, lost: Lost | None) -> None:
        self._handlers[node].append(handler)
        if met is not None:
            self._met[node].append(met)
        if lost is not None:
            self._lost[node].append(lost)
        if self._inboxes[node]:
            self._schedule(node)


class LoopbackConnection:
    """One node's :class:`Bus` on a :class:`LoopbackBus`."""

    def __init__(self, bus: LoopbackBus, node: str) -> None:
        self._bus = bus
        self._node = node

    @property
    def node(self) -> str:
        return self._node

    @property
    def connected(self) -> bool:
        return self._node in self._bus._inboxes

    def publish(self, to: str | None, message: bytes) -> None:
        self._bus._publish(self._node, to, message)

    def subscribe(self, handler: Handler, met: Met | None = None, lost: Lost | None = None) -> None:
        self._bus._subscribe(self._node, handler, met, lost)

    def disconnect(self) -> None:
        """This node is gone (:meth:`LoopbackBus.disconnect`)."""
        self._bus.disconnect(self._node)
