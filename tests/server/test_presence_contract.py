"""The contract of :class:`server.world.presence.Presence`, checked against every back end.

Each test runs once per implementation in :data:`WORLDS`: a :class:`World` builds the
back end and logs users in on it (a bus back end spreads them over several nodes, and
its world waits for the bus in :meth:`World.settle`). Lines are compared as each user
receives them, so a back end passes only if it delivers the same lines in the same
order as the in-process one. :attr:`World.presence` is the first node's (where the test
looks from); what a user does runs on their own node (:meth:`World.act`,
:meth:`World.presence_of`).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

import pytest

from protocol import clip, replies
from protocol.replies import Mode, Toggle
from server.doors.output import Payload
from server.errors import Reply
from server.world.bus import Bus, LoopbackBus
from server.world.cluster import ClusterPresence
from server.world.nats_bus import NatsBus
from server.world.presence import WHO_END, Audience, Presence
from server.world.registry import LocalPresence
from server.world.session import Session

from .sessions import RecordingOutput

INTERVAL = 0.02
"""Seconds between two status batches in these tests (``status_interval``)."""


class World(Protocol):
    """A presence back end with users on it (what a new back end provides to run here)."""

    presence: Presence
    """The first node's presence (node 0), where the tests look from."""

    def presence_of(self, name: str) -> Presence:
        """The presence of the node ``name`` is connected to."""
        ...

    def login(
        self, name: str, *, clip_mode: bool = True, node: int = 0, again: bool = False
    ) -> Session:
        """Log ``name`` in (on ``node``, for back ends with several) and announce it;
        the announcement runs in the user's own context (:meth:`act`). ``again``: the
        session replaces the user's session that is online (a second login)."""
        ...

    def visit(self, name: str, *, node: int = 0) -> Session:
        """A visitor (D256) called ``name`` internally enters (on ``node``), in CLIP mode."""
        ...

    def act(self, name: str, action: Callable[[Presence], None]) -> None:
        """Run ``action`` as ``name``'s connection would (their commands' context), with
        the presence of their node."""
        ...

    def heard(self, name: str) -> list[str]:
        """The lines ``name`` received since the last call."""
        ...

    async def settle(self) -> None:
        """Until everything queued has been delivered (status batches included)."""
        ...

    async def close(self) -> None:
        """Leave the bus, if any."""
        ...


class _Users:
    """The users of a test world: their sessions, contexts and what they heard."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._contexts: dict[str, contextvars.Context] = {}
        self._read: dict[str, int] = {}

    def _start(self, name: str, *, clip_mode: bool = True, visitor: bool = False) -> Session:
        mode = Mode.CLIP if clip_mode else Mode.TELNET
        session = Session(RecordingOutput(), name=name, mode=mode, visitor=visitor)
        session.enter_lobby()
        self._sessions[name] = session
        self._read[name] = 0
        self._contexts[name] = contextvars.copy_context()
        return session

    def heard(self, name: str) -> list[str]:
        output = self._sessions[name].output
        assert isinstance(output, RecordingOutput)
        lines = output.sent[self._read[name] :]
        self._read[name] = len(output.sent)
        return lines


class LocalWorld(_Users):
    """:class:`LocalPresence`: one process, every user in it."""

    def __init__(self) -> None:
        super().__init__()
        self.local = LocalPresence(INTERVAL)
        self.presence: Presence = self.local

    def presence_of(self, name: str) -> Presence:
        return self.presence

    def login(
        self, name: str, *, clip_mode: bool = True, node: int = 0, again: bool = False
    ) -> Session:
        session = self._start(name, clip_mode=clip_mode)
        self.presence.add(session)
        self.act(name, lambda p: p.announce_login(session, again=again))
        return session

    def visit(self, name: str, *, node: int = 0) -> Session:
        session = self._start(name, visitor=True)
        self.presence.add_visitor(session)
        return session

    def act(self, name: str, action: Callable[[Presence], None]) -> None:
        self._contexts[name].run(action, self.presence)

    async def close(self) -> None:
        pass

    async def settle(self) -> None:
        self.local.flush_status()
        for _ in range(1000):
            await asyncio.sleep(INTERVAL / 4)
            if not _busy(self.local):
                return
        raise AssertionError("the presence never settled")


class ClusterWorld(_Users):
    """:class:`ClusterPresence`: nodes in this process, each with its own sessions, on
    a bus (:meth:`loopback`, :meth:`nats`); a user logs in on the node the test names."""

    NODES = 2

    def __init__(self, buses: list[Bus], idle: Callable[[], Awaitable[bool]]) -> None:
        super().__init__()
        self.nodes = [ClusterPresence(LocalPresence(INTERVAL), bus) for bus in buses]
        self.presence: Presence = self.nodes[0]
        self._node_of: dict[str, int] = {}
        self._idle = idle
        self._closing: list[Callable[[], Awaitable[None]]] = []

    @classmethod
    async def loopback(cls) -> ClusterWorld:
        """Two nodes joined in memory."""
        bus = LoopbackBus()

        async def idle() -> bool:
            return bus.idle

        return cls([bus.connect(f"node{i}") for i in range(cls.NODES)], idle)

    @classmethod
    async def nats(cls) -> ClusterWorld:
        """Two nodes on the machine's NATS (127.0.0.1:4222), under a prefix of this
        world's own."""
        prefix = f"fibstest{uuid.uuid4().hex}"
        buses = [
            await NatsBus.connect(NATS_URL, f"node{i}", prefix=prefix) for i in range(cls.NODES)
        ]
        for bus in buses:  # each has met the other before the test begins
            for _ in range(200):
                if len(bus.known) == cls.NODES - 1:
                    break
                await asyncio.sleep(0.01)

        async def idle() -> bool:
            for bus in buses:
                await bus.barrier()
            return True

        world = cls(list(buses), idle)
        world._closing = [bus.close for bus in buses]
        return world

    def presence_of(self, name: str) -> Presence:
        return self.nodes[self._node_of[name]]

    def login(
        self, name: str, *, clip_mode: bool = True, node: int = 0, again: bool = False
    ) -> Session:
        session = self._start(name, clip_mode=clip_mode)
        self._node_of[name] = node
        self.nodes[node].add(session)
        self.act(name, lambda p: p.announce_login(session, again=again))
        return session

    def visit(self, name: str, *, node: int = 0) -> Session:
        session = self._start(name, visitor=True)
        self._node_of[name] = node
        self.nodes[node].add_visitor(session)
        return session

    def act(self, name: str, action: Callable[[Presence], None]) -> None:
        self._contexts[name].run(action, self.presence_of(name))

    async def settle(self) -> None:
        for _ in range(1000):
            for node in self.nodes:
                node.local.flush_status()
            await asyncio.sleep(INTERVAL / 4)
            if await self._idle() and not any(_busy(node.local) for node in self.nodes):
                return
        raise AssertionError("the world never settled")

    async def close(self) -> None:
        for close in self._closing:
            await close()


def _busy(local: LocalPresence) -> bool:
    return bool(
        local._delivery or local._flush or local._soon_handle or local._notices or local._changed
    )


async def local_world() -> World:
    return LocalWorld()


NATS_URL = "nats://127.0.0.1:4222"
"""The NATS every machine of this project runs (shared/docs/cluster-design.md)."""

WORLDS: dict[str, Callable[[], Awaitable[World]]] = {
    "local": local_world,
    "two nodes": ClusterWorld.loopback,
    "two nodes on NATS": ClusterWorld.nats,
}
"""Every presence back end, by name: add a bus back end's world here."""


@pytest.fixture(params=sorted(WORLDS))
async def world(request: pytest.FixtureRequest) -> AsyncIterator[World]:
    made = await WORLDS[request.param]()
    yield made
    await made.settle()
    await made.close()


async def quiet(world: World, *names: str) -> None:
    """Deliver what is queued and forget what ``names`` heard so far."""
    await world.settle()
    for name in names:
        world.heard(name)


def who_names(lines: list[str]) -> list[str]:
    return [line.split()[1] for line in lines if line.startswith("5 ")]


# -- who is online ------------------------------------------------------------------------


async def test_lookups_find_online_users_by_name_and_prefix(world: World) -> None:
    for name in ("alice", "alan", "Bob"):
        world.login(name)
    presence = world.presence
    assert presence.count() == 3
    assert [p.name for p in presence.users()] == ["alice", "alan", "Bob"]
    alice = presence.get("alice")
    assert alice is not None and alice.name == "alice" and alice.logged_in
    assert presence.get("ali") is None
    assert presence.complete("ali").name == "alice"
    assert presence.complete("b").name == "Bob"  # case-insensitive when nothing else
    with pytest.raises(Reply) as ambiguous:
        presence.complete("al")
    assert list(ambiguous.value.lines) == replies.ambiguous_name(["alan", "alice"], "al")
    with pytest.raises(Reply) as nobody:
        presence.complete("carol")
    assert list(nobody.value.lines) == [replies.no_one_called("carol")]
    assert presence.find("carol") is None
    found = presence.find("BO")
    assert found is not None and found.name == "Bob"
    with pytest.raises(Reply):
        presence.find("al")


async def test_a_peer_shows_the_user_s_state(world: World) -> None:
    world.login("alice")
    bob = world.login("bob", clip_mode=False, node=1)
    bob.away = "lunch"
    bob.toggles[Toggle.READY] = True
    bob.blinded.add("carol")
    world.presence_of("bob").who_update(bob)
    await world.settle()
    peer = world.presence.get("bob")
    assert peer is not None
    assert (peer.mode, peer.clip, peer.away, peer.toggles[Toggle.READY]) == (
        Mode.TELNET,
        False,
        "lunch",
        True,
    )
    assert peer.host == "example.org"
    assert "carol" in peer.blinded
    assert peer.settings == bob.settings
    assert clip.WhoInfo.parse(peer.who_line()).name == "bob"


async def test_counts_and_history_for_stat_and_last(world: World) -> None:
    world.login("alice")
    bob = world.login("bob")
    presence = world.presence
    assert presence.logins == 2
    assert presence.peak == 2
    assert [text for _, text in presence.history] == [
        replies.logs_in("alice"),
        replies.logs_in("bob"),
    ]
    presence.remove(bob)
    presence.announce_logout(bob)
    assert presence.count() == 1
    assert presence.peak == 2
    assert [text for _, text in presence.history][-1] == replies.drops_connection("bob")
    assert len(presence.hours(time.time())) == 24


async def test_who_list_has_every_user_s_line(world: World) -> None:
    world.login("alice")
    world.login("bob")
    assert who_names(world.presence.who_list()) == ["alice", "bob"]


async def test_who_list_shows_each_user_s_newest_state(world: World) -> None:
    """A who list asked, then a user's state changes: the next list has the new line
    (a node's lines of users elsewhere are made once per state, docs/performance.md)."""
    world.login("alice")
    bob = world.login("bob", node=1)
    await world.settle()
    first = {
        clip.WhoInfo.parse(line).name: clip.WhoInfo.parse(line)
        for line in world.presence.who_list()[:2]
    }
    assert not first["bob"].ready and not first["bob"].away
    bob.away = "lunch"
    bob.toggles[Toggle.READY] = True
    world.presence_of("bob").who_update(bob)
    await world.settle()
    again = [clip.WhoInfo.parse(line) for line in world.presence.who_list()]
    assert [(w.name, w.ready, w.away) for w in again] == [
        ("alice", False, False),
        ("bob", True, True),
    ]


# -- lines to other users -------------------------------------------------------------------


async def test_lines_reach_their_recipient_in_order(world: World) -> None:
    world.login("alice")
    world.login("bob", node=1)
    await quiet(world, "alice", "bob")
    presence = world.presence
    bob = presence.get("bob")
    assert bob is not None
    world.act("alice", lambda p: p.send(bob, "one", "two"))
    world.act("alice", lambda p: p.send_lines(bob, iter(["three"])))
    world.act("alice", lambda p: p.send_payload(bob, Payload(["four", "five"])))
    await world.settle()
    assert world.heard("bob") == ["one", "two", "three", "four", "five"]
    assert world.heard("alice") == []


async def test_a_broadcast_reaches_its_audience_in_each_mode(world: World) -> None:
    world.login("alice")
    world.login("bob", clip_mode=False, node=1)
    carol = world.login("carol")
    dave = world.login("dave", node=1)
    carol.toggles[Toggle.SILENT] = True
    dave.gagged.add("alice")
    world.presence_of("carol").who_update(carol)
    world.presence_of("dave").who_update(dave)
    await quiet(world, "alice", "bob", "carol", "dave")
    audience = Audience(exclude=frozenset(["alice"]), toggle_off=Toggle.SILENT, not_gagging="alice")
    world.act(
        "alice",
        lambda p: p.broadcast(lambda mode: [replies.shouts("alice", "hi", mode)], audience),
    )
    world.act("alice", lambda p: p.broadcast(["same"], Audience()))
    await world.settle()
    assert world.heard("alice") == ["same"]
    assert world.heard("bob") == [replies.shouts("alice", "hi", Mode.TELNET), "same"]
    assert world.heard("carol") == ["same"]
    assert world.heard("dave") == ["same"]


async def test_an_audience_by_toggle_takes_the_named_ones_too(world: World) -> None:
    sessions = [
        world.login(name, node=n % 2) for n, name in enumerate(("alice", "bob", "carol", "dave"))
    ]
    for session in sessions[2:]:
        session.toggles[Toggle.REPORT] = False
        world.presence_of(session.name).who_update(session)
    await quiet(world, "alice", "bob", "carol", "dave")
    audience = Audience(
        exclude=frozenset(["alice"]), toggle_on=Toggle.REPORT, also=frozenset(["dave"])
    )
    world.presence.broadcast(["report"], audience)
    await world.settle()
    assert {n: world.heard(n) for n in ("alice", "bob", "carol", "dave")} == {
        "alice": [],
        "bob": ["report"],
        "carol": [],
        "dave": ["report"],
    }


def test_an_audience_is_plain_data() -> None:
    """A bus back end ships the audience with the lines: it compares and hashes by value."""
    a = Audience(exclude=frozenset(["x"]), toggle_off=Toggle.SILENT)
    assert a == Audience(exclude=frozenset(["x"]), toggle_off=Toggle.SILENT)
    assert hash(a) == hash(Audience(exclude=frozenset(["x"]), toggle_off=Toggle.SILENT))


# -- status notices ---------------------------------------------------------------------------


async def test_a_login_is_announced_to_the_others_only(world: World) -> None:
    world.login("alice")
    world.login("bob", clip_mode=False, node=1)
    await quiet(world, "alice", "bob")
    world.login("carol", node=1)
    await world.settle()
    assert world.heard("alice") == [
        replies.login_notice("carol", Mode.CLIP),
        world.presence.who_list()[-1],
        WHO_END,
    ]
    assert world.heard("bob") == [replies.login_notice("carol", Mode.TELNET)]
    assert world.heard("carol") == []


async def test_a_second_login_is_only_a_who_update_for_the_others(world: World) -> None:
    """D196: the others never saw the user leave, so no new CLIP 7."""
    world.login("alice")
    world.login("bob", clip_mode=False, node=1)
    world.login("carol", node=1)
    await quiet(world, "alice", "bob", "carol")
    assert world.presence.replace("carol")
    carol = world.login("carol", node=0, again=True)
    await world.settle()
    assert world.heard("alice") == [carol.who_line(), WHO_END]
    assert world.heard("bob") == []


async def test_a_login_notice_comes_before_what_the_user_sends(world: World) -> None:
    """D140 rule 1: even before its batch leaves."""
    world.login("alice")
    await quiet(world, "alice")
    world.login("bob", node=1)

    def tell(presence: Presence) -> None:
        alice = presence.get("alice")
        assert alice is not None
        presence.send(alice, "hello from bob")

    world.act("bob", tell)
    await world.settle()
    heard = world.heard("alice")
    assert heard.index(replies.login_notice("bob", Mode.CLIP)) < heard.index("hello from bob")
    assert heard.count(replies.login_notice("bob", Mode.CLIP)) == 1


async def test_who_updates_are_merged_and_go_to_clip_users(world: World) -> None:
    world.login("alice")
    bob = world.login("bob", clip_mode=False, node=1)
    await quiet(world, "alice", "bob")
    peer = world.presence.get("bob")
    assert peer is not None
    for away in ("a", "b", None):
        bob.away = away
        world.presence.who_update(peer)
    await world.settle()
    assert world.heard("alice") == [bob.who_line(), WHO_END]
    assert world.heard("bob") == []


async def test_no_who_update_follows_a_logout(world: World) -> None:
    world.login("alice")
    bob = world.login("bob")
    await quiet(world, "alice", "bob")
    world.presence.who_update(bob)
    world.presence.remove(bob)
    world.presence.announce_logout(bob)
    await world.settle()
    assert world.heard("alice") == [
        replies.logout_notice("bob", replies.drops_connection("bob"), Mode.CLIP)
    ]
    assert world.presence.get("bob") is None


async def test_flush_soon_brings_users_up_to_date_before_the_batch(world: World) -> None:
    world.login("alice")
    bob = world.login("bob")
    carol = world.login("carol")
    await quiet(world, "alice", "bob", "carol")
    bob.away = "gone"
    world.presence.who_update(bob)
    alice = world.presence.get("alice")
    world.presence.flush_soon([alice, None])
    for _ in range(3):
        await asyncio.sleep(0)
    assert world.heard("alice") == [bob.who_line(), WHO_END]
    assert world.heard("carol") == []
    await world.settle()
    assert world.heard("alice") == []  # not again
    assert world.heard("carol") == [bob.who_line(), WHO_END]
    assert carol.logged_in


# -- other users' state -----------------------------------------------------------------------


async def test_a_watcher_sent_back_to_the_lobby_hears_why_and_is_updated(world: World) -> None:
    world.login("alice")
    bob = world.login("bob", node=1)
    bob.start_watching("alice")
    world.presence_of("bob").who_update(bob)
    await quiet(world, "alice", "bob")
    assert [p.name for p in world.presence.watchers_of(["alice", "zed"])] == ["bob"]
    peer = world.presence.get("bob")
    assert peer is not None
    world.act("alice", lambda p: p.stop_watching(peer, "go away"))
    await world.settle()
    assert world.heard("bob")[0] == "go away"
    fresh = world.presence.get("bob")
    assert fresh is not None and fresh.watching is None
    assert world.presence.watchers_of(["alice"]) == []
    assert world.heard("alice") == [fresh.who_line(), WHO_END]


async def test_players_start_and_end_a_match(world: World) -> None:
    world.login("alice")
    world.login("bob", node=1)
    await quiet(world, "alice", "bob")
    presence = world.presence
    for name, opponent in (("alice", "bob"), ("bob", "alice")):
        peer = presence.get(name)
        assert peer is not None
        presence.start_playing(peer, opponent)
    await world.settle()
    assert who_names(world.heard("alice")) == ["alice", "bob"]
    bob = presence.get("bob")
    assert bob is not None and bob.opponent == "alice"
    presence.set_rating(bob, 1612.5, 7)
    presence.enter_lobby(bob)
    alice = presence.get("alice")
    assert alice is not None
    presence.enter_lobby(alice, announce=False)
    await world.settle()
    bob = presence.get("bob")
    assert bob is not None
    assert (bob.opponent, bob.rating, bob.experience) == (None, 1612.5, 7)
    assert who_names(world.heard("alice")) == ["bob"]


async def test_a_second_login_replaces_the_first(world: World) -> None:
    old = world.login("alice", node=1)
    await world.settle()
    assert world.presence.replace("alice")
    await world.settle()
    assert old.replaced
    assert old.output.closing
    assert not world.presence.replace("nobody")


AUDIENCES = [
    Audience(),
    Audience(exclude=frozenset(["u0", "u3"])),
    Audience(toggle_off=Toggle.SILENT),
    Audience(toggle_on=Toggle.REPORT),
    Audience(toggle_on=Toggle.REPORT, also=frozenset(["u1", "u2"])),
    Audience(not_gagging="u0"),
    Audience(frozenset(["u0"]), Toggle.REPORT, frozenset(["u4", "u5"]), Toggle.SILENT, "u0"),
]


def _audience_id(audience: Audience) -> str:
    """A test id that does not depend on the order of a set (the same in every process,
    so that pytest-xdist's workers collect the same tests)."""
    fields = []
    for field in dataclasses.fields(audience):
        name, value = field.name, getattr(audience, field.name)
        if isinstance(value, frozenset):
            value = sorted(value)
        fields.append(f"{name}={value}")
    return ",".join(fields)


@pytest.mark.parametrize("audience", AUDIENCES, ids=_audience_id)
async def test_a_broadcast_reaches_exactly_whom_the_audience_admits(
    world: World, audience: Audience
) -> None:
    """:meth:`Audience.admits` is the definition: every back end's recipients match it."""
    names = [f"u{i}" for i in range(8)]
    for i, name in enumerate(names):
        session = world.login(name, node=i % 2)
        session.toggles[Toggle.SILENT] = i % 2 == 1
        session.toggles[Toggle.REPORT] = i % 3 == 0
        if i % 4 == 2:
            session.gagged.add("u0")
        world.presence_of(name).who_update(session)
    await quiet(world, *names)
    world.act("u0", lambda p: p.broadcast(["news"], audience))
    await world.settle()
    heard = [name for name in names if world.heard(name) == ["news"]]
    assert heard == [p.name for p in world.presence.users() if audience.admits(p)]
    assert heard  # every audience here reaches someone


# -- visitors (D256) ------------------------------------------------------------------------


async def test_a_visitor_hears_the_status_notices_and_is_in_no_list(world: World) -> None:
    world.login("alice")
    visitor = world.visit("visitor!1", node=1)
    await quiet(world, "alice", "visitor!1")
    presence = world.presence
    assert world.presence_of("visitor!1").visitor_count() == 1
    assert presence.count() == 1 and presence.peak == 1 and presence.logins == 1
    assert [p.name for p in presence.users()] == ["alice"]
    assert who_names(presence.who_list()) == ["alice"]
    assert presence.get("visitor!1") is None and presence.find("vis") is None
    found = presence.visitor("visitor!1")
    assert found is not None and found.name == "visitor!1"
    assert not any("visitor" in text for _, text in presence.history)
    world.login("bob")
    await quiet(world, "alice")
    heard = world.heard("visitor!1")
    assert heard[0] == clip.Login("bob", replies.logs_in("bob")).format()
    assert who_names(heard) == ["bob"] and heard[-1] == WHO_END
    # Its own changes reach nobody (no who update), and broadcasts pass it by.
    visitor.start_watching("alice")
    world.presence_of("visitor!1").who_update(visitor)
    presence.broadcast(["a shout"], Audience())
    await world.settle()
    assert world.heard("alice") == ["a shout"]
    assert world.heard("visitor!1") == []
    # A watcher like any other: watchers_of finds it, after the users.
    assert [p.name for p in presence.watchers_of(["alice"])] == ["visitor!1"]
    presence.send(presence.watchers_of(["alice"])[0], "board:...")
    await world.settle()
    assert world.heard("visitor!1") == ["board:..."]
    world.presence_of("visitor!1").remove_visitor(visitor)
    await world.settle()
    assert world.presence_of("visitor!1").visitor_count() == 0
    assert presence.visitor("visitor!1") is None
    assert presence.watchers_of(["alice"]) == []
