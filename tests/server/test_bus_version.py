"""The version of the messages between nodes (D424, issue 32's upgrades node by node).

Nodes on the machine's real NATS, each test under a prefix of its own: nodes of different
versions never meet and each logs the other once; a hello without a version (a node of
an earlier release) is version 1; a node restarted as another version is taken for gone.
On a two-node world: what a later release may add is read or skipped, never a hang: a
user's state with fields, toggles and settings this node does not know, a message of an
unknown kind (logged once), a call of an unknown method (answered as failed at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import nats
import pytest

from protocol.replies import Mode, Toggle
from server.config import Settings
from server.world.bus import BUS_VERSION
from server.world.nats_bus import NatsBus
from server.world.remote import PeerState

from ..conftest import DbTarget
from .test_two_nodes import NATS_URL, world


class Heard:
    """What one node's subscribers were told: nodes met and lost, messages."""

    def __init__(self, bus: NatsBus) -> None:
        self.met: list[str] = []
        self.lost: list[str] = []
        self.messages: list[tuple[str, bytes]] = []
        bus.subscribe(lambda n, m: self.messages.append((n, m)), self.met.append, self.lost.append)


async def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)
    assert condition(), what


Start = Callable[..., Awaitable[tuple[NatsBus, "Heard"]]]
"""``start(name, version=...)``: a node on NATS and what its subscribers hear."""


@contextlib.asynccontextmanager
async def nodes() -> AsyncIterator[Start]:
    """Yields ``start(name, version=...)``, a node on NATS under this test's prefix,
    closed at the end."""
    prefix = f"fibstest{uuid.uuid4().hex}"
    started: list[NatsBus] = []

    async def start(name: str, version: int = BUS_VERSION) -> tuple[NatsBus, Heard]:
        bus = await NatsBus.connect(NATS_URL, name, prefix=prefix, version=version)
        started.append(bus)
        return bus, Heard(bus)

    try:
        yield start
    finally:
        for bus in started:
            await bus.close()


def refusals(caplog: pytest.LogCaptureFixture, node: str, version: int) -> list[str]:
    said = f"cluster node {node} speaks bus version {version},"
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(said)]


@pytest.mark.logs_errors  # the refusals are ERROR lines: an operator must see them
async def test_nodes_of_different_versions_never_meet(caplog: pytest.LogCaptureFixture) -> None:
    """A node of version 1 and one of version 2 each log the other once, know no other
    node and read nothing of it; a third node of version 1 meets the first only."""
    caplog.set_level(logging.ERROR, "server.world.nats_bus")
    async with nodes() as start:
        one, heard_one = await start("one")
        two, heard_two = await start("two", version=BUS_VERSION + 1)
        await until(lambda: bool(refusals(caplog, "one", BUS_VERSION)), "two logs one")
        await until(lambda: bool(refusals(caplog, "two", BUS_VERSION + 1)), "one logs two")
        two.publish("one", b"from two")
        three, heard_three = await start("three")
        await until(lambda: one.known == {"three"} and three.known == {"one"}, "one meets three")
        three.publish("one", b"from three")
        await until(lambda: ("three", b"from three") in heard_one.messages, "three's message")
        await one.barrier()
        await three.barrier()
        assert heard_one.messages == [("three", b"from three")]
        assert heard_one.met == ["three"] and heard_three.met == ["one"]
        assert two.known == frozenset() and heard_two.met == [] and heard_two.messages == []
        assert len(refusals(caplog, "two", BUS_VERSION + 1)) == 2  # by one and by three
        assert len(refusals(caplog, "one", BUS_VERSION)) == 1  # two logs each node once
        assert len(refusals(caplog, "three", BUS_VERSION)) == 1


async def test_a_hello_without_a_version_is_version_one() -> None:
    """A node of the releases before D424 says no version in its hello: it is met, and
    the answer tells it this node's version."""
    async with nodes() as start:
        one, heard_one = await start("one")
        prefix = one._prefix
        old = await nats.connect(NATS_URL)
        try:
            answers = await old.subscribe(f"{prefix}.node.old.*")
            await old.publish(f"{prefix}.hello.old", b"")
            answer = await answers.next_msg(timeout=5.0)
            assert answer.data == b"M" + str(BUS_VERSION).encode()
            await until(lambda: heard_one.met == ["old"], "the old node met")
        finally:
            await old.close()


@pytest.mark.logs_errors
async def test_a_node_restarted_as_another_version_is_taken_for_gone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A node known to another comes back as a node of another version: the other takes
    it for gone at once (its users leave the lists), and does not meet it again."""
    caplog.set_level(logging.ERROR, "server.world.nats_bus")
    async with nodes() as start:
        one, heard_one = await start("one")
        await start("two")
        await until(lambda: heard_one.met == ["two"], "one meets two")
        await start("two", version=BUS_VERSION + 1)
        await until(lambda: heard_one.lost == ["two"], "the old two is gone")
        assert one.known == frozenset() and heard_one.met == ["two"]
        assert len(refusals(caplog, "two", BUS_VERSION + 1)) == 1


def test_a_state_with_what_a_later_release_adds_is_read() -> None:
    """A user's state with a field, a toggle and a setting this release does not know:
    read, the unknown parts skipped."""
    state = {
        "name": "ann",
        "mode": Mode.CLIP.value,
        "is_bot": False,
        "logged_in": True,
        "visitor": False,
        "toggles": {Toggle.READY.value: True, "hologram": True},
        "gagged": ["bob"],
        "blinded": [],
        "settings": {"boardstyle": 2, "theme": "dark"},
        "dice_seed": None,
        "away": None,
        "opponent": None,
        "watching": None,
        "rating": 1600.5,
        "experience": 12,
        "login_time": 1_800_000_000,
        "idle": 3.0,
        "address": "192.0.2.7",
        "host": "h",
        "client": None,
        "pronouns": "she/her",
    }
    peer = PeerState.from_json(state)
    assert peer.toggles == {Toggle.READY: True}
    assert peer.settings.boardstyle == 2 and peer.gagged == {"bob"}
    assert PeerState.from_json(peer.to_json()) == peer


async def test_a_later_release_s_message_and_call_are_skipped_and_answered(
    settings: Settings, db_target: DbTarget, caplog: pytest.LogCaptureFixture
) -> None:
    """Node 1 sends node 0 a message of a kind node 0 does not know (twice: logged
    once) and a call of a method it does not know, which is answered as failed at once,
    never left waiting; node 0 goes on (a tell crosses afterwards)."""
    caplog.set_level(logging.WARNING, "server.tables.cluster")
    async with world(settings, db_target, 2) as made:
        answers: list[dict[str, object]] = []
        made.buses[1].subscribe(lambda node, data: answers.append(json.loads(data)))
        for _ in range(2):
            made.buses[1].publish("node0", b'{"k":"hologram","x":1}')
        call = {"k": "call", "method": "teleport", "id": 7, "caller": None}
        made.buses[1].publish("node0", json.dumps(call).encode())
        await until(lambda: any(a.get("k") == "answer" for a in answers), "the answer")
        answer = next(a for a in answers if a.get("k") == "answer")
        assert answer["id"] == 7 and answer["refusal"] == [] and answer["value"] is None
        warned = [r.getMessage() for r in caplog.records if "does not know" in r.getMessage()]
        assert warned == [
            "node node1 sent a message kind this node does not know, 'hologram' "
            "(a later release?): skipped",
            "node node1 sent a call method this node does not know, 'teleport' "
            "(a later release?): skipped",
        ]
        ann, bob = await made.clip(0, "ann"), await made.clip(1, "bob")
        await ann.send("tell bob still here")
        await bob.expect("12 ann still here")
