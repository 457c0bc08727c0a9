"""The presence of a world of several server nodes (:class:`ClusterPresence`): each node
keeps its own sessions in a :class:`~server.world.registry.LocalPresence` and learns of
the others' users over a :class:`~server.world.bus.Bus` (issue 33 item 4; the cluster of
issue 32 puts NATS where the tests put :class:`~server.world.bus.LoopbackBus`).

What each node does:

* **Publishes its users' states** (:class:`~server.world.remote.PeerState`) at each
  login, who update, state change and logout; the other nodes keep a
  :class:`~server.world.remote.RemotePeer` per remote user, so look-ups (``who``, name
  completion, audiences) are answered locally.
* **Batches status notices for its own users** (D79): a remote login, logout or who
  update is queued into this node's batches like a local one, so every user of this
  node gets one ordered stream of notices.
* **Routes**: a line to a remote user, a change of a remote user's state (a watcher sent
  back to the lobby, a match started, a rating) and a second login's replacement are
  sent to the user's node, which applies them to the session; a broadcast is rendered
  once per client mode, handed to this node's users and sent to every other node with
  its :class:`~server.world.presence.Audience`, where each node picks its recipients.

**The login notice before the user's lines (D140 rule 1), across nodes**, by a
per-sender sequence: each login has a number on its node (:attr:`RemotePeer.login`), and
every line a node sends for a user's action carries the sender's name, node and login
number. The bus delivers one node's messages in order, so the login's state arrives
before any line of that login; the receiving node then writes the line with the sender's
:class:`RemotePeer` as :data:`~server.world.registry.ACTOR`, and its fence gives the
recipient the pending notices first, as for a local sender.

Messages are JSON objects with a kind ``k`` (:class:`Kind`).
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Callable, Collection, Iterable
from typing import Any, assert_never

from protocol import replies
from protocol.replies import HourUsers, Mode, Toggle
from server.doors.output import Payload
from server.world.bus import Bus, decode, encode
from server.world.presence import Audience, Lines, Peer
from server.world.registry import ACTOR, LocalPresence, complete_among
from server.world.remote import Json, PeerState, RemotePeer
from server.world.session import Session

log = logging.getLogger(__name__)


class Kind(enum.StrEnum):
    """What a message between nodes is (its ``k``)."""

    KNOWN = enum.auto()
    """A user online when the receiver first heard of the sender: no notice."""
    LOGIN = enum.auto()
    """A user logged in (``again``: replacing their session elsewhere, D196)."""
    STATE = enum.auto()
    """A user's new state (``announce``: a who update goes with it)."""
    GONE = enum.auto()
    """A user is no longer online on that node (no notice)."""
    LOGOUT = enum.auto()
    """A user's logout notice."""
    DELIVER = enum.auto()
    """Lines to one user of the receiving node."""
    BROADCAST = enum.auto()
    """Lines to the receiving node's users an audience admits."""
    APPLY = enum.auto()
    """A :class:`Change` of one of the receiving node's users."""
    FLUSH = enum.auto()
    """:meth:`ClusterPresence.flush_soon` for users of the receiving node."""
    REPLACE = enum.auto()
    """A second login elsewhere takes over the receiver's session of a name."""


KINDS = frozenset(Kind)
"""The presence's kinds (a message of another kind is the tables')."""


class Change(enum.StrEnum):
    """A change of a remote user's state, applied by their node (``APPLY``)."""

    STOP_WATCHING = enum.auto()
    START_PLAYING = enum.auto()
    ENTER_LOBBY = enum.auto()
    START_WATCHING = enum.auto()
    SET_RATING = enum.auto()
    WHO_UPDATE = enum.auto()


def audience_to_json(audience: Audience) -> Json:
    return {
        "exclude": sorted(audience.exclude),
        "toggle_on": None if audience.toggle_on is None else audience.toggle_on.value,
        "also": sorted(audience.also),
        "toggle_off": None if audience.toggle_off is None else audience.toggle_off.value,
        "not_gagging": audience.not_gagging,
    }


def audience_from_json(data: Json) -> Audience:
    return Audience(
        exclude=frozenset(data["exclude"]),
        toggle_on=None if data["toggle_on"] is None else Toggle(data["toggle_on"]),
        also=frozenset(data["also"]),
        toggle_off=None if data["toggle_off"] is None else Toggle(data["toggle_off"]),
        not_gagging=data["not_gagging"],
    )


def _lines_of(payload: Payload) -> list[str]:
    """The lines a payload was made of (its text ends each in CR LF)."""
    return payload.text.split("\r\n")[:-1]


class ClusterPresence:
    """:class:`~server.world.presence.Presence` for one node of several (see the
    module)."""

    @classmethod
    def on(cls, bus: Bus) -> Callable[[LocalPresence], ClusterPresence]:
        """What :class:`server.app.App` takes as ``presence``: a node's presence on
        ``bus`` around the node's own sessions."""
        return lambda local: cls(local, bus)

    def __init__(self, local: LocalPresence, bus: Bus) -> None:
        self.local = local
        """This node's sessions and the status batches to them."""
        self.bus = bus
        self.node = bus.node
        self._clock = local.clock
        self._monotonic = local.timer.now
        self._remote: dict[str, RemotePeer] = {}
        """Logged-in users of other nodes, by name."""
        self._remote_visitors: dict[str, RemotePeer] = {}
        """Visitors of other nodes (D256): watchers of matches, in no list."""
        self._left: dict[str, RemotePeer] = {}
        """Users of other nodes gone and not yet announced (``gone`` before ``logout``)."""
        self._logins = 0
        """This node's logins so far: each login's number (:attr:`RemotePeer.login`)."""
        self._login_of: dict[Session, tuple[int, float]] = {}
        """This node's logged-in sessions: their login's number and Unix time."""
        self.before_lost: list[Callable[[str, list[RemotePeer]], None]] = []
        """Told of a node gone and its users, before they leave this node's lists (the
        tables end their matches first)."""
        self.before_gone: list[Callable[[RemotePeer], None]] = []
        """Told of a remote user gone, before they leave this node's lists."""
        self._read_bytes: bytes | None = None
        self._read_message: Json = {}
        """The last message :meth:`read` decoded, and its bytes (kept: identity names
        them)."""
        self.before_superseded: list[Callable[[str], None]] = []
        """Told of a user of this node logged in again at another node while the two
        took each other for gone, before their older login here is closed (D417)."""
        bus.subscribe(self._receive, met=self._met, lost=self._lost)

    # -- who is online -------------------------------------------------------------------

    def count(self) -> int:
        return self.local.count() + len(self._remote)

    def get(self, name: str) -> Peer | None:
        session = self.local.get(name)
        if session is not None and not session.replaced:
            return session
        return self._remote.get(name)

    def _everyone(self, keep: Callable[[Peer], bool] | None = None) -> list[Peer]:
        """Every user online, local or remote (with ``keep``, those it keeps), in the
        order they logged in. ``keep`` is asked first: a few users out of thousands
        (the watchers of a match, at every session's end) are not ordered with all."""
        users: list[tuple[float, str, int, Peer]] = []
        for session, (login, stamp) in self._login_of.items():
            if keep is not None and not keep(session):
                continue
            if self.local.get(session.name) is session and not session.replaced:
                users.append((stamp, self.node, login, session))
        for peer in self._remote.values():
            if keep is None or keep(peer):
                users.append((peer.stamp, peer.node, peer.login, peer))
        users.sort(key=lambda u: u[:3])
        return [u[3] for u in users]

    def complete(self, prefix: str) -> Peer:
        """As :meth:`LocalPresence.complete`, over every node's users."""
        exact = self.get(prefix)
        if exact is not None:
            return exact
        return complete_among(self._everyone(), prefix)

    def find(self, prefix: str) -> Peer | None:
        folded = prefix.lower()
        if not any(p.logged_in and p.name.lower().startswith(folded) for p in self._everyone()):
            return None
        return self.complete(prefix)

    def users(self) -> list[Peer]:
        return [p for p in self._everyone() if p.logged_in]

    def watchers_of(self, names: Collection[str]) -> list[Peer]:
        users = self._everyone(lambda p: p.watching in names and p.logged_in)
        visitors: list[Peer] = [
            v for v in self.local.watchers_of(names) if isinstance(v, Session) and v.visitor
        ]
        visitors += [v for v in self._remote_visitors.values() if v.watching in names]
        return users + visitors

    def who_list(self, now: float | None = None) -> list[str]:
        now = self._monotonic() if now is None else now
        return [p.who_line(now) for p in self.users()]

    # -- visitors ----------------------------------------------------------------------------

    def visitor_count(self) -> int:
        return self.local.visitor_count()

    def visitor(self, name: str) -> Peer | None:
        return self.local.visitor(name) or self._remote_visitors.get(name)

    def add_visitor(self, session: Session) -> None:
        self.local.add_visitor(session)
        self._publish_state(session, announce=False)

    def remove_visitor(self, session: Session) -> None:
        self.local.remove_visitor(session)
        self._publish(None, {"k": Kind.GONE, "name": session.name, "visitor": True, "login": 0})

    @property
    def peak(self) -> int:
        return self.local.peak

    @property
    def logins(self) -> int:
        return self.local.logins

    @property
    def history(self) -> Iterable[tuple[float, str]]:
        return self.local.history

    def hours(self, now: float) -> list[HourUsers]:
        return self.local.hours(now)

    # -- lines to other users ----------------------------------------------------------------

    def send(self, to: Peer, *lines: str) -> None:
        self.send_lines(to, lines)

    def send_lines(self, to: Peer, lines: Iterable[str]) -> None:
        if isinstance(to, RemotePeer):
            self._deliver(to, list(lines))
        else:
            self.local.send_lines(to, lines)

    def send_payload(self, to: Peer, payload: Payload) -> None:
        if isinstance(to, RemotePeer):
            self._deliver(to, _lines_of(payload))
        else:
            self.local.send_payload(to, payload)

    def _deliver(self, to: RemotePeer, lines: list[str]) -> None:
        if lines:
            message = {"k": Kind.DELIVER, "to": to.name, "lines": lines, "from": self._sender()}
            self._publish(to.node, message)

    def broadcast(self, lines: Lines, audience: Audience) -> None:
        if callable(lines):
            rendered: Any = {mode.value: list(lines(mode)) for mode in Mode}
        else:
            rendered = list(lines)
        self.local.broadcast(lines, audience)
        message = {
            "k": Kind.BROADCAST,
            "lines": rendered,
            "audience": audience_to_json(audience),
            "from": self._sender(),
        }
        self._publish(None, message)

    # -- other users' state ------------------------------------------------------------------

    def stop_watching(self, watcher: Peer, *lines: str) -> None:
        if isinstance(watcher, RemotePeer):
            self._expect(watcher, watching=None)
            self._apply(watcher, Change.STOP_WATCHING, lines=list(lines))
            return
        self.local.stop_watching(watcher, *lines)
        self._publish_state(_session(watcher), announce=True)

    def start_playing(self, player: Peer, opponent: str) -> None:
        if isinstance(player, RemotePeer):
            self._expect(player, opponent=opponent, watching=None)
            self._apply(player, Change.START_PLAYING, opponent=opponent)
            return
        self.local.start_playing(player, opponent)
        self._publish_state(_session(player), announce=True)

    def enter_lobby(self, player: Peer, *, announce: bool = True) -> None:
        if isinstance(player, RemotePeer):
            self._expect(player, opponent=None, watching=None)
            self._apply(player, Change.ENTER_LOBBY, announce=announce)
            return
        self.local.enter_lobby(player, announce=announce)
        self._publish_state(_session(player), announce=announce)

    def set_rating(self, player: Peer, rating: float, experience: int) -> None:
        if isinstance(player, RemotePeer):
            self._expect(player, rating=rating, experience=experience)
            self._apply(player, Change.SET_RATING, rating=rating, experience=experience)
            return
        self.local.set_rating(player, rating, experience)
        self._publish_state(_session(player), announce=False)

    def _expect(self, user: RemotePeer, **changes: Any) -> None:
        """A change this node asks of a remote user, in its view of them at once (and in
        the directory's, when ``user`` is a caller's view): this node's own next steps
        see what it did (a match's players are seated before their node answers), and
        the user's node's next state confirms it."""
        user.update(dataclasses.replace(user.state, **changes))
        known = self._remote.get(user.name)
        if known is not None and known is not user and known.login == user.login:
            known.update(dataclasses.replace(known.state, **changes))

    def _apply(self, to: RemotePeer, change: Change, **arguments: Any) -> None:
        message = {"k": Kind.APPLY, "to": to.name, "change": change, "from": self._sender()}
        self._publish(to.node, message | arguments)

    # -- status notices ----------------------------------------------------------------------

    def who_update(self, user: Peer) -> None:
        if isinstance(user, RemotePeer):
            self._apply(user, Change.WHO_UPDATE)
            return
        session = _session(user)
        self.local.who_update(session)
        self._publish_state(session, announce=not session.visitor)

    def flush_soon(self, users: Iterable[Peer | None]) -> None:
        local: list[Peer | None] = []
        remote: dict[str, list[str]] = {}
        for user in users:
            if isinstance(user, RemotePeer):
                remote.setdefault(user.node, []).append(user.name)
            else:
                local.append(user)
        self.local.flush_soon(local)
        for node, names in remote.items():
            self._publish(node, {"k": Kind.FLUSH, "names": names})

    # -- this node's sessions ----------------------------------------------------------------

    def add(self, session: Session) -> None:
        stale = self._remote.pop(session.name, None)
        if stale is not None:  # replaced by this login (the old one's node closes it)
            self.local.remote_gone(stale)
        self.local.add(session)

    def remove(self, session: Session) -> None:
        self.local.remove(session)
        known = self._login_of.pop(session, None)
        if known is not None:
            message = {"k": Kind.GONE, "name": session.name, "login": known[0], "visitor": False}
            self._publish(None, message)

    def replace(self, name: str) -> bool:
        if self.local.replace(name):
            return True
        peer = self._remote.get(name)
        if peer is None:
            return False
        self._publish(peer.node, {"k": Kind.REPLACE, "name": name})
        return True

    def announce_login(self, session: Session, *, again: bool = False) -> None:
        self._logins += 1
        stamp = self._clock()
        self._login_of[session] = (self._logins, stamp)
        self.local.announce_login(session, again=again)
        state = PeerState.of(session).to_json()
        message = {"k": Kind.LOGIN, "state": state, "login": self._logins, "stamp": stamp}
        self._publish(None, message | {"again": again})

    def announce_logout(self, session: Session) -> None:
        self.local.announce_logout(session)
        text = session.logout_text(session.name)
        self._publish(None, {"k": Kind.LOGOUT, "name": session.name, "text": text})

    # -- the bus -------------------------------------------------------------------------------

    def _publish(self, to: str | None, message: Json) -> None:
        self.publish_json(to, message)

    def publish_json(self, to: str | None, message: Json) -> None:
        """Send ``message`` to the node ``to`` (None: every other node); the tables of
        this node send theirs through here too (:func:`~server.world.bus.encode`)."""
        self.bus.publish(to, encode(message))

    def read(self, data: bytes) -> Json:
        """A message this node received, decoded once for the presence and the tables,
        which the bus hands the same bytes one after the other (D430): the second asks
        for the bytes the first decoded and gets its object, which both only read."""
        if data is not self._read_bytes:
            self._read_message = decode(data)
            self._read_bytes = data
        return self._read_message

    def _publish_state(self, session: Session, *, announce: bool, to: str | None = None) -> None:
        """Tell the other nodes (or the node ``to``) ``session``'s state now."""
        known = self._login_of.get(session)
        if known is None and not session.visitor:
            return  # not announced yet: its login message carries its state
        message = {
            "k": Kind.STATE,
            "state": PeerState.of(session).to_json(),
            "login": 0 if known is None else known[0],
            "announce": announce,
        }
        self._publish(to, message)

    def _sender(self) -> list[object] | None:
        """The user whose action this is, as the receiving node names the login
        (name, node, login number); None when no logged-in user of this node acts."""
        actor = ACTOR.get()
        if isinstance(actor, Session):
            known = self._login_of.get(actor)
            if known is not None:
                return [actor.name, self.node, known[0]]
        elif isinstance(actor, RemotePeer):  # a command another node forwarded here
            return [actor.name, actor.node, actor.login]
        return None

    def _receive(self, node: str, data: bytes) -> None:
        """A message from ``node`` (the bus calls this in order per sending node)."""
        try:
            message = self.read(data)
            if message["k"] not in KINDS:
                return  # another part's message (the tables')
            handle = getattr(self, "_on_" + message["k"])
            handle(node, message)
        except Exception:  # a bad message is this message's alone: the node goes on
            log.exception("message from node %s could not be handled", node)

    def _remote_sender(self, message: Json) -> RemotePeer | None:
        """The login that sent ``message``, if this node knows it (see the module)."""
        sender = message.get("from")
        if sender is None:
            return None
        name, node, login = sender
        return self.remote_login(name, node, login)

    def remote_login(self, name: str, node: str, login: int) -> RemotePeer | None:
        """The remote user ``name`` if this node knows them by that login (the actor of
        a command their node forwarded here: :data:`ACTOR` while it runs)."""
        peer = self._remote.get(name)
        if peer is not None and peer.node == node and peer.login == login:
            return peer
        return None

    # -- callers of other nodes (server.tables.cluster) ------------------------------------

    def caller_to_json(self, session: Session) -> Json:
        """What the node owning ``session``'s table needs of them to run their command
        (:class:`RemoteCaller`)."""
        login, stamp = self._login_of.get(session, (0, 0.0))
        state = PeerState.of(session)
        logout = session.logout_text(session.name)
        return _caller(
            state, login, stamp, logout, replaced=session.replaced, closed=session.closed
        )

    def caller_from_json(self, node: str, data: Json) -> RemoteCaller:
        return RemoteCaller(self, node, data)

    def _as_sender(self, message: Json, write: Callable[[], None]) -> None:
        """Run ``write`` as the message's sender (the fence of D140 rule 1)."""
        token = ACTOR.set(self._remote_sender(message))
        try:
            write()
        finally:
            ACTOR.reset(token)

    def _met(self, node: str) -> None:
        """``node`` joined (or this node did): it gets this node's users and visitors."""
        for session, (login, stamp) in self._login_of.items():
            if self.local.get(session.name) is session and session.logged_in:
                state = PeerState.of(session).to_json()
                known = {"k": Kind.KNOWN, "state": state, "login": login, "stamp": stamp}
                self._publish(node, known)
        for visitor in list(self.local):
            if visitor.visitor:
                self._publish_state(visitor, announce=False, to=node)

    def _lost(self, node: str) -> None:
        """``node`` is gone (its process died, or the bus lost it): its users leave as
        if their connections dropped (CLIP 8 ``drops connection``), its visitors go."""
        users = [peer for peer in self._remote.values() if peer.node == node]
        for before in self.before_lost:
            before(node, users)
        for peer in users:
            del self._remote[peer.name]
            self.local.remote_logout(peer, replies.drops_connection(peer.name))
        for name, visitor in list(self._remote_visitors.items()):
            if visitor.node == node:
                del self._remote_visitors[name]

    def caller_of(self, peer: RemotePeer) -> RemoteCaller:
        """A remote user as the caller of their connection's end (their node is gone:
        the tables end what they were at, as for a dropped connection)."""
        logout = replies.drops_connection(peer.name)
        data = _caller(peer.state, peer.login, peer.stamp, logout, replaced=False, closed=True)
        return RemoteCaller(self, peer.node, data)

    def _peer(self, node: str, message: Json) -> RemotePeer:
        state = PeerState.from_json(message["state"])
        return RemotePeer(state, node, message["login"], message["stamp"], self._monotonic)

    def _take_name(self, name: str) -> None:
        """A login elsewhere took ``name``: this node's session of it, if any, was
        replaced (its connection is closing) and leaves the directory now."""
        session = self.local.get(name)
        if session is not None:
            self.local.remove(session)
            self._login_of.pop(session, None)

    def _on_known(self, node: str, message: Json) -> None:
        peer = self._peer(node, message)
        session = self.local.get(peer.name)
        known = None if session is None else self._login_of.get(session)
        if session is not None and known is not None and not session.replaced:
            # Logged in here and there: the nodes took each other for gone (a pause, a
            # partition) and the user logged in again meanwhile. The newer login wins
            # (D417): an older one here is closed as a second login closes the first;
            # a newer one here stays, and the other node closes its own.
            if known[1] >= peer.stamp:
                return
            for superseded in self.before_superseded:
                superseded(peer.name)
            self.local.replace(peer.name)
        self._take_name(peer.name)
        self._remote[peer.name] = peer
        self.local.remote_known(peer)

    def _on_login(self, node: str, message: Json) -> None:
        peer = self._peer(node, message)
        self._take_name(peer.name)
        self._remote[peer.name] = peer
        self._left.pop(peer.name, None)
        waiters = self.local.remote_login(peer, again=message["again"])
        if waiters:
            self._deliver(peer, [replies.is_waiting_for_you(w.name) for w in waiters])

    def _on_state(self, node: str, message: Json) -> None:
        state = PeerState.from_json(message["state"])
        if state.visitor:
            visitor = self._remote_visitors.get(state.name)
            if visitor is None or visitor.node != node:
                self._remote_visitors[state.name] = RemotePeer(state, node, 0, 0.0, self._monotonic)
            else:
                visitor.update(state)
            return
        peer = self._remote.get(state.name)
        if peer is None or peer.node != node or peer.login != message["login"]:
            return  # a login this node no longer knows (replaced meanwhile)
        peer.update(state)
        if message["announce"]:
            self.local.remote_change(peer)

    def _on_gone(self, node: str, message: Json) -> None:
        name = message["name"]
        if message["visitor"]:
            visitor = self._remote_visitors.get(name)
            if visitor is not None and visitor.node == node:
                del self._remote_visitors[name]
            return
        peer = self._remote.get(name)
        if peer is None or peer.node != node or peer.login != message["login"]:
            return
        for before in self.before_gone:
            before(peer)
        del self._remote[name]
        self._left[name] = peer
        self.local.remote_gone(peer)

    def _on_logout(self, node: str, message: Json) -> None:
        name = message["name"]
        peer = self._left.pop(name, None)
        if peer is None:
            peer = self._remote.get(name)
            if peer is None or peer.node != node:
                return
            del self._remote[name]
        self.local.remote_logout(peer, message["text"])

    def _local_session(self, name: str) -> Session | None:
        return self.local.get(name) or self.local.visitor(name)

    def _on_deliver(self, node: str, message: Json) -> None:
        session = self._local_session(message["to"])
        if session is not None:
            lines = message["lines"]
            self._as_sender(message, lambda: session.send_lines(lines))

    def _on_broadcast(self, node: str, message: Json) -> None:
        rendered = message["lines"]
        lines: Lines
        if isinstance(rendered, dict):
            by_mode = {Mode(mode): text for mode, text in rendered.items()}
            lines = by_mode.__getitem__
        else:
            lines = rendered
        audience = audience_from_json(message["audience"])
        self._as_sender(message, lambda: self.local.broadcast(lines, audience))

    def _on_apply(self, node: str, message: Json) -> None:
        session = self._local_session(message["to"])
        if session is None:
            return
        change = Change(message["change"])

        def apply() -> None:
            if change == Change.STOP_WATCHING:
                self.stop_watching(session, *message["lines"])
            elif change == Change.START_PLAYING:
                self.start_playing(session, message["opponent"])
            elif change == Change.ENTER_LOBBY:
                self.enter_lobby(session, announce=message["announce"])
            elif change == Change.START_WATCHING:
                session.start_watching(message["name"])
                self._publish_state(session, announce=False)
            elif change == Change.SET_RATING:
                self.set_rating(session, message["rating"], message["experience"])
            elif change == Change.WHO_UPDATE:
                self.who_update(session)
            else:
                assert_never(change)

        self._as_sender(message, apply)

    def _on_flush(self, node: str, message: Json) -> None:
        self.local.flush_soon([self.local.get(name) for name in message["names"]])

    def _on_replace(self, node: str, message: Json) -> None:
        self.local.replace(message["name"])


class RemoteCaller(RemotePeer):
    """A user of another node whose command this node runs, because it owns their table
    (:class:`~server.world.presence.Caller`): their replies and state changes go to
    their node over the bus, in order, ahead of the command's answer."""

    __slots__ = ("_closed", "_logout", "_presence", "_replaced")

    def __init__(self, presence: ClusterPresence, node: str, data: Json) -> None:
        state = PeerState.from_json(data["state"])
        super().__init__(state, node, data["login"], data["stamp"], presence.local.timer.now)
        self._presence = presence
        self._replaced: bool = data["replaced"]
        self._closed: bool = data["closed"]
        self._logout: str = data["logout"]

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def replaced(self) -> bool:
        return self._replaced

    @property
    def logout_text(self) -> Callable[[str], str]:
        text = self._logout
        return lambda _name: text

    def send(self, *lines: str) -> None:
        self._presence.send_lines(self, lines)

    def send_lines(self, lines: Iterable[str]) -> None:
        self._presence.send_lines(self, lines)

    def start_watching(self, name: str) -> None:
        self._presence._expect(self, watching=name)
        self._presence._apply(self, Change.START_WATCHING, name=name)

    def enter_lobby(self) -> None:
        self._presence._expect(self, watching=None, opponent=None)
        self._presence._apply(self, Change.ENTER_LOBBY, announce=False)


def _caller(
    state: PeerState, login: int, stamp: float, logout: str, *, replaced: bool, closed: bool
) -> Json:
    """A caller as :class:`RemoteCaller` reads them (JSON)."""
    return {
        "state": state.to_json(),
        "login": login,
        "stamp": stamp,
        "replaced": replaced,
        "closed": closed,
        "logout": logout,
    }


def _session(peer: Peer) -> Session:
    """The session a local peer is."""
    assert isinstance(peer, Session), peer
    return peer
