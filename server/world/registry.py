"""The in-process presence (:class:`LocalPresence`): who is online in this server
process, name completion, delivery to other sessions, and the broadcasts every status
change causes. It implements :class:`server.world.presence.Presence` for a server that is one
node; its contract is there.

Broadcasts write to each recipient's output at once and never await anyone's
socket: a slow reader is cut off by its own write-buffer limit instead.

A broadcast renders each distinct set of lines once (per client mode and whatever
else they depend on) and encodes it once (:class:`Broadcast`, :class:`server.doors.output.Payload`);
each recipient then gets one write of the same bytes it would have got line by line
(docs/performance.md §3).

Status notices (logins, logouts, who updates) go out in batches, one write per user
however many changes a batch holds (D79). Three rules keep the batches from reordering
anything (D140):

* a user's login notice reaches every other user before any line that user's actions
  write to them: :meth:`LocalPresence.fence`, called by :meth:`Session.send` and its kin for
  every write, brings the recipient up to date first while that login is still being
  announced (:data:`ACTOR` says whose action is running);
* the players and watchers of a match that ends or stops get their part at once, after
  the lines that end it (:meth:`LocalPresence.flush_soon`), and the later batch does not
  repeat it (:meth:`LocalPresence.flush_for`);
* a batch holding a login or logout leaves within :meth:`LocalPresence.notice_gap` (50 ms on
  a small server, up to ``status_interval`` at 5,000 users); one holding only who
  updates within ``status_interval``, so each user's changes in that time still make
  one CLIP 5 line.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Generic, TypeVar

from protocol import replies
from protocol.replies import HourUsers, Mode, Toggle
from server.clock import LoopTimer, Timer
from server.doors.output import Payload
from server.errors import Reply
from server.world.presence import WHO_END, Audience, Lines, Peer
from server.world.remote import RemotePeer
from server.world.session import Session
from server.world.user_stats import UsersByHour

K = TypeVar("K", bound=Hashable)

DEFAULT_STATUS_INTERVAL = 1.0
"""Seconds between two batches of who updates at most, fibs.conf ``[limits]
status_interval`` (D79): a change reaches everyone within about a second, and a burst of
changes costs each user one write a second (logins and logouts come sooner,
:data:`NOTICE_GAP_PER_USER`). Each batch is a write to every user (about 20 µs each
here), so at 5,000 users a shorter interval costs a large share of the event loop under
a steady stream of logins or match starts (docs/performance.md §3)."""

NOTICE_GAP_PER_USER = 0.0002
"""Seconds between two batches per user online when a login or logout waits (D140): a
batch costs about 20 µs of writes per user, so status batches take at most about a tenth
of the event loop (1 s at 5,000 users, as :data:`DEFAULT_STATUS_INTERVAL`; 0.1 s at 500)."""

NOTICE_GAP_MIN = 0.05
"""Seconds between two batches at least when a login or logout waits: a burst of logins
on a small server still comes in a few batches."""

BROADCAST_CHUNK = 256
"""Recipients written per turn of the event loop when a batch goes to everyone (about
5 ms of writes): a batch to thousands of users never holds up anyone's command."""

User = Session | RemotePeer
"""A user the status notices speak of: one of this node's sessions, or a user of another
node (:mod:`server.world.cluster`)."""

ACTOR: ContextVar[User | None] = ContextVar("actor", default=None)
"""The user whose action the running code performs. Set in the connection's task when its
user logs in (:meth:`LocalPresence.announce_login`): every command of that user, and the
cleanup when they leave, run there, as do the tasks and timers they start. Lines written
to another session from there pass :meth:`LocalPresence.fence` (D140). A node handling a
message another node's user sent sets it to that :class:`RemotePeer` meanwhile."""


def mode_of(clip_mode: bool) -> Mode:
    """The :class:`Mode` a session's ``clip`` flag stands for (keys of broadcasts are
    plain booleans: an enum member's hash is a Python-level call per recipient)."""
    return Mode.CLIP if clip_mode else Mode.TELNET


class Broadcast(Generic[K]):
    """One message to many sessions: the lines for each distinct key (a client mode, a
    toggle...) are rendered on first use and shared as one :class:`Payload` by every
    recipient with that key, so each recipient costs one transport write."""

    def __init__(self, render: Callable[[K], Iterable[str]]) -> None:
        self._render = render
        self._payloads: dict[K, Payload] = {}

    def payload(self, key: K) -> Payload:
        """The rendered lines for ``key`` (rendered once)."""
        payload = self._payloads.get(key)
        if payload is None:
            payload = self._payloads[key] = Payload(self._render(key))
        return payload

    def send(self, session: Session, key: K) -> None:
        """Write the lines for ``key`` to ``session`` (nothing if they are none)."""
        session.send_payload(self.payload(key))


@dataclass(frozen=True, eq=False)
class _Notice:
    """A login or logout waiting for the next batch of status notices."""

    seq: int
    """Its place among the queued changes (:attr:`LocalPresence._seq`)."""
    session: User
    name: str
    login: bool
    text: str = ""
    """The logout's words (``logs out.``, ``drops connection.``...)."""
    waiters: tuple[Session, ...] = ()
    """Who typed ``waitfor`` this user: they hear ``** FINALLY!!!`` after the notice."""


_Key = tuple[bool, bool, int]
"""What a recipient's part of a batch depends on: CLIP mode, ``notify``, and the number
of the change up to which it has the batch's changes already: got ahead
(:meth:`LocalPresence.flush_for`), or, for a user whose login the batch announces, up to
that login, their own login notice and who line included (:meth:`_Batch.key`)."""


def _render_batch(notices: list[_Notice], who: list[tuple[str, int]], key: _Key) -> list[str]:
    """A recipient's part of a :class:`_Batch` of ``notices`` and ``who`` lines."""
    clip_mode, notify, since = key
    mode = mode_of(clip_mode)
    lines = []
    if notify:
        for n in notices:
            if n.seq <= since:
                continue  # got ahead, or not after their own login (§1.4)
            if n.login:
                lines.append(replies.login_notice(n.name, mode))
            else:
                lines.append(replies.logout_notice(n.name, n.text, mode))
    if clip_mode:
        who_lines = [line for line, seq in who if seq > since]
        if who_lines:
            lines.extend(who_lines)
            lines.append(WHO_END)
    return lines


class _Batch:
    """Queued status changes, rendered once per kind of recipient (:class:`Broadcast`):
    the logins and logouts in the order they happened (to users with ``notify`` on), then,
    to CLIP users, one who list: the CLIP 5 line of every user who logged in or changed
    (their state when the batch was made, once each), then one ``6``."""

    def __init__(
        self,
        notices: list[_Notice],
        who: list[tuple[str, int]],
        finally_for: dict[Session, list[tuple[int, str]]],
    ) -> None:
        """``who``: the CLIP 5 line of each user who logged in or changed, with the
        number of their latest change (their login or later)."""
        self.notices = notices
        self.logged_in: dict[User, int] = {n.session: n.seq for n in notices if n.login}
        """Users whose login the batch announces, with its number."""
        self.finally_for = finally_for
        """``waitfor`` users: the ``** FINALLY!!!`` lines they get after the batch, each
        with the number of its login."""
        # The renderer holds the lists, not the batch: a method of the batch would make
        # a cycle (batch, broadcast, method), and with it every session the batch names
        # would wait for a full collection to be freed after its logout (D422).
        self.out: Broadcast[_Key] = Broadcast(partial(_render_batch, notices, who))

    def key(self, session: Session, since: int) -> _Key:
        """``session``'s part: what it has not got yet. A user whose login the batch
        announces gets nothing from before it: their who list at login showed the world
        as it was then, and a logout before it (their own earlier session's, say) is
        news of a time they were not there."""
        since = max(since, self.logged_in.get(session, 0))
        return (session.clip, session.toggles[Toggle.NOTIFY], since)

    def write(self, session: Session, key: _Key) -> None:
        """``session``'s part, straight to its output: the presence's own writes do not
        pass :meth:`LocalPresence.fence` (they are what the fence waits for)."""
        if session.closed:
            return
        try:
            session.output.send_payload(self.out.payload(key))
            extra = self.finally_for.get(session)
            if extra:  # waitfor (§4.12), after the login notice
                lines = [line for seq, line in extra if seq > key[2]]
                if lines:
                    session.output.send(lines)
        except Exception as exc:  # this session's alone: the batch goes on (D210)
            session.writing_failed(exc)


@dataclass(eq=False)
class _Delivery:
    """A batch being written, :data:`BROADCAST_CHUNK` recipients per turn of the loop."""

    batch: _Batch
    recipients: list[tuple[Session, _Key]]
    position: int = 0
    """Recipients before this index have their part."""
    early: set[Session] = field(default_factory=set)
    """Recipients after it that got their part ahead of their chunk (:meth:`write_early`)."""
    _index: dict[Session, int] | None = None

    def write_early(self, session: Session) -> None:
        """Give ``session`` its part now, unless it has it or is not a recipient."""
        if self._index is None:  # built only when needed: most batches never are
            self._index = {s: i for i, (s, _) in enumerate(self.recipients)}
        i = self._index.get(session)
        if i is None or i < self.position or session in self.early:
            return
        self.early.add(session)
        self.batch.write(session, self.recipients[i][1])


P = TypeVar("P", bound=Peer)


def complete_among(users: Sequence[P], prefix: str) -> P:
    """The one of ``users`` that ``prefix`` names when none is called exactly that
    (§4.1): a unique case-sensitive prefix, else a unique case-insensitive one.

    :raises Reply: nobody (``** There is no one called x``) or several candidates.
    """
    for fold in (False, True):
        key = prefix.lower() if fold else prefix
        found = [u for u in users if (u.name.lower() if fold else u.name).startswith(key)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise Reply(*replies.ambiguous_name(sorted(u.name for u in found), prefix))
    raise Reply(replies.no_one_called(prefix))


class LocalPresence:
    """The logged-in sessions of this process by exact name: the presence of a server
    that is a single node (:class:`server.world.presence.Presence`).

    A peer (:class:`server.world.presence.Peer`) is the user's own :class:`Session`; the
    methods that take one write to it or change it directly.
    """

    HISTORY = 20
    """``last`` shows the 20 latest logins and logouts (§4.14)."""

    def __init__(
        self,
        status_interval: float = DEFAULT_STATUS_INTERVAL,
        clock: Callable[[], float] = time.time,
        timer: Timer | None = None,
    ) -> None:
        self.status_interval = status_interval
        """Seconds between two batches of status notices at most (:meth:`_queue_status`)."""
        self._clock = clock
        """Unix time for ``last`` and ``average`` (the App's clock)."""
        self._timer: Timer = timer or LoopTimer()
        """Monotonic time, what the idle field of the CLIP 5 lines is measured on (the
        App's timer, as each session's :attr:`Session.monotonic`)."""
        self._sessions: dict[str, Session] = {}
        self._remote: dict[str, RemotePeer] = {}
        """Users of other nodes (:mod:`server.world.cluster`): only the status notices
        about them go through here, in the same batches as this node's own."""
        self._visitors: dict[str, Session] = {}
        """Visitors by internal name (D256): status notices and watched lines only."""
        self.history: deque[tuple[float, str]] = deque(maxlen=self.HISTORY)
        """(Unix time, ``<name> logs in.`` / the logout text), oldest first, for ``last``."""
        self.logins = 0
        """Logins since the start (``stat``, ``average``)."""
        self.peak = 0
        """Most users logged in at once since the start (``stat``, ``show max``)."""
        self.users_by_hour = UsersByHour(self._clock())
        """Users logged in by hour of the day, for ``average`` (D160)."""
        self._seq = 0
        """Numbers every queued change (login, logout, who update) in order."""
        self._base = 0
        """Changes up to this number are in a batch already (written or being written)."""
        self._changed: dict[str, tuple[User, int]] = {}
        """Users whose who update waits to be sent (:meth:`who_update`), with the number
        of their latest change."""
        self._notices: list[_Notice] = []
        """Logins and logouts waiting to be announced, in order."""
        self._served: dict[Session, int] = {}
        """Users who got the queued changes ahead of the batch (:meth:`flush_for`): up to
        which number."""
        self._pending: _Batch | None = None
        """The queued changes rendered for :meth:`flush_for` (until the next change)."""
        self._unheard: dict[User, int] = {}
        """Users whose login notice has not reached everyone yet, with its number
        (:meth:`fence`)."""
        self._delivery: _Delivery | None = None
        """The batch being written, chunk by chunk (:meth:`_deliver`)."""
        self._flush: asyncio.TimerHandle | None = None
        """The scheduled :meth:`flush_status`, while one is."""
        self._flush_at = 0.0
        """Its loop time."""
        self._last_flush = float("-inf")
        """Loop time of the last batch sent."""
        self._soon: set[Session] = set()
        """Users :meth:`flush_soon` brings up to date on the next turn of the loop."""
        self._soon_handle: asyncio.Handle | None = None

    @property
    def clock(self) -> Callable[[], float]:
        """Unix time (the App's clock): when users log in, for ``last``."""
        return self._clock

    @property
    def timer(self) -> Timer:
        """This node's monotonic timer, which idle times are measured on."""
        return self._timer

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        """This process's sessions (the server's start and stop), its visitors last."""
        return iter([*self._sessions.values(), *self._visitors.values()])

    # -- who is online ---------------------------------------------------------------------

    def count(self) -> int:
        return len(self._sessions)

    def get(self, name: str) -> Session | None:
        return self._sessions.get(name)

    def complete(self, prefix: str) -> Session:
        """The online user that ``prefix`` names (§4.1 name completion).

        An exact name wins; then a unique case-sensitive prefix, then a unique
        case-insensitive one.

        :raises Reply: nobody (``** There is no one called x``) or several candidates.
        """
        exact = self._sessions.get(prefix)
        if exact is not None:
            return exact
        return complete_among(list(self._sessions.values()), prefix)

    def find(self, prefix: str) -> Session | None:
        folded = prefix.lower()
        if not any(
            s.logged_in and s.name.lower().startswith(folded) for s in self._sessions.values()
        ):
            return None
        return self.complete(prefix)

    def users(self) -> list[Peer]:
        return [s for s in self._sessions.values() if s.logged_in]

    def watchers_of(self, names: Collection[str]) -> list[Peer]:
        users: list[Peer] = [s for s in self._sessions.values() if s.watching in names]
        return users + [v for v in self._visitors.values() if v.watching in names]

    # -- visitors (D256) ---------------------------------------------------------------------

    def visitor_count(self) -> int:
        return len(self._visitors)

    def visitor(self, name: str) -> Session | None:
        return self._visitors.get(name)

    def add_visitor(self, session: Session) -> None:
        self._visitors[session.name] = session
        session.before_write = self.fence

    def remove_visitor(self, session: Session) -> None:
        if self._visitors.get(session.name) is session:
            del self._visitors[session.name]

    def hours(self, now: float) -> list[HourUsers]:
        return self.users_by_hour.hours(now)

    # -- lines to other users ----------------------------------------------------------------

    @staticmethod
    def _session(peer: Peer) -> Session:
        """The session a peer of this presence is (its peers are the sessions)."""
        assert isinstance(peer, Session), peer
        return peer

    def send(self, to: Peer, *lines: str) -> None:
        self._session(to).send(*lines)

    def send_lines(self, to: Peer, lines: Iterable[str]) -> None:
        self._session(to).send_lines(lines)

    def send_payload(self, to: Peer, payload: Payload) -> None:
        self._session(to).send_payload(payload)

    def broadcast(self, lines: Lines, audience: Audience) -> None:
        """Each recipient gets one shared :class:`Payload`: one for everyone when
        ``lines`` are the same in both modes, else one per mode (:class:`Broadcast`).

        :meth:`Audience.admits` is inlined: a broadcast may go to thousands of users
        (docs/performance.md §3)."""
        exclude, also = audience.exclude, audience.also
        toggle_on, toggle_off = audience.toggle_on, audience.toggle_off
        gagging = audience.not_gagging
        render = lines if callable(lines) else None
        shared = None if callable(lines) else Payload(lines)
        out: Broadcast[bool] = Broadcast(
            lambda clip_mode: render(mode_of(clip_mode)) if render is not None else ()
        )
        for s in list(self._sessions.values()):
            if (
                s.logged_in
                and s.name not in exclude
                and (toggle_off is None or not s.toggles[toggle_off])
                and (toggle_on is None or s.toggles[toggle_on] or s.name in also)
                and (gagging is None or gagging not in s.gagged)
            ):
                try:
                    s.send_payload(shared if shared is not None else out.payload(s.clip))
                except Exception as exc:  # its rendering: this recipient's alone (D210)
                    s.writing_failed(exc)

    # -- other users' state ------------------------------------------------------------------

    def stop_watching(self, watcher: Peer, *lines: str) -> None:
        session = self._session(watcher)
        session.enter_lobby()
        session.send(*lines)
        self.who_update(session)

    def start_playing(self, player: Peer, opponent: str) -> None:
        session = self._session(player)
        session.start_playing(opponent)
        self.who_update(session)

    def enter_lobby(self, player: Peer, *, announce: bool = True) -> None:
        session = self._session(player)
        session.enter_lobby()
        if announce:
            self.who_update(session)

    def set_rating(self, player: Peer, rating: float, experience: int) -> None:
        session = self._session(player)
        session.rating = rating
        session.experience = experience

    # -- this process's sessions ---------------------------------------------------------------

    def add(self, session: Session) -> None:
        self._sessions[session.name] = session
        self._observe()
        session.before_write = self.fence

    def remove(self, session: Session) -> None:
        if self._sessions.get(session.name) is session:
            del self._sessions[session.name]
            self._observe()

    def _observe(self) -> None:
        """Count the users online now, for ``average`` (every node's)."""
        self.users_by_hour.observe(self._clock(), len(self._sessions) + len(self._remote))

    def _current(self, name: str) -> User | None:
        """The user online under ``name``, on this node or another."""
        session = self._sessions.get(name)
        return self._remote.get(name) if session is None else session

    # -- users of other nodes (server.world.cluster) ---------------------------------------

    def remote_login(self, peer: RemotePeer, *, again: bool = False) -> list[Session]:
        """``peer`` logged in on another node: this node's users hear of it in the next
        batch, like a login here (:meth:`announce_login`), and every line that login
        sends is fenced behind it here (:data:`ACTOR`, :meth:`fence`). Returns this
        node's ``waitfor`` users of that name: they will hear ``** FINALLY``, and
        ``peer`` must be told that they wait."""
        name = peer.name
        self._remote[name] = peer
        self._observe()
        self.history.append((self._clock(), replies.logs_in(name)))
        self.logins += 1
        if again:  # D196, as in announce_login
            self.remote_change(peer)
            return []
        self.peak = max(self.peak, len(self._sessions) + len(self._remote))
        waiters = self._waiters_for(peer)
        self._unheard[peer] = self._notice(peer, True, waiters=tuple(waiters))
        self._queue_status()
        return waiters

    def remote_known(self, peer: RemotePeer) -> None:
        """``peer`` was online before this node heard of their node (this node joined
        the world, or met their node again after taking it for gone): no notice, but a
        who update, so that CLIP clients list them, again if they heard them drop when
        their node was lost (D425)."""
        self._remote[peer.name] = peer
        self._observe()
        self.remote_change(peer)

    def remote_change(self, peer: RemotePeer) -> None:
        """A who update about ``peer`` (their node published a new state)."""
        if self._remote.get(peer.name) is not peer:
            return
        self._seq += 1
        self._changed[peer.name] = (peer, self._seq)
        self._pending = None
        self._queue_status()

    def remote_gone(self, peer: RemotePeer) -> None:
        """``peer`` is no longer online (their logout notice, if any, comes by
        :meth:`remote_logout`)."""
        if self._remote.get(peer.name) is peer:
            del self._remote[peer.name]
            self._observe()

    def remote_logout(self, peer: RemotePeer, text: str) -> None:
        """``peer`` logged out on their node: the logout notice, as
        :meth:`announce_logout`."""
        self.remote_gone(peer)
        self.history.append((self._clock(), text))
        self._notice(peer, False, text=text)
        self._queue_status()

    def replace(self, name: str) -> bool:
        old = self._sessions.get(name)
        if old is None:
            return False
        old.replaced = True
        old.output.close()
        return True

    # -- status notices (D79, D140) ----------------------------------------------------------

    def who_update(self, user: Peer) -> None:
        """CLIP 5 + 6 about ``user`` to every CLIP user, itself included (§2.3, §6.6).

        Batched with the other status notices (:meth:`_queue_status`, D79): each user
        changed since the last batch appears once, with their latest state, in one who
        list at the end of the batch. A user who logged out meanwhile is left out, so
        no CLIP 5 follows their CLIP 8.
        """
        session = self._session(user)
        if session.visitor:  # in no who list (D256)
            return
        self._seq += 1
        self._changed[session.name] = (session, self._seq)
        self._pending = None
        self._queue_status()

    def announce_login(self, session: Session, *, again: bool = False) -> None:
        """CLIP 7 to users with ``notify`` on and the new user's CLIP 5/6 to every CLIP
        user (§1.4), in the next batch of status notices (D79); ``waitfor`` users hear it
        right after (§4.12).

        From here on the calling task (the connection's) acts for ``session``
        (:data:`ACTOR`): until the batch with this login has reached everyone, any line
        it writes to another user is preceded by that user's pending notices
        (:meth:`fence`, D140)."""
        name = session.name
        self.history.append((self._clock(), replies.logs_in(name)))
        self.logins += 1
        if again:  # a second login replaced the first: no 8 was sent, so no 7 (D196)
            self.who_update(session)
            return
        self.peak = max(self.peak, len(self._sessions) + len(self._remote))
        waiters = self._waiters_for(session)
        for other in waiters:
            session.send(replies.is_waiting_for_you(other.name))
        self._unheard[session] = self._notice(session, True, waiters=tuple(waiters))
        ACTOR.set(session)
        self._queue_status()

    def announce_logout(self, session: Session) -> None:
        """CLIP 8 (``logs out.`` / ``drops connection.``...) to users with ``notify`` on,
        in the next batch of status notices, which leaves within :meth:`notice_gap`
        (D79, D140)."""
        name = session.name
        text = session.logout_text(name)
        self.history.append((self._clock(), text))
        self._notice(session, False, text=text)
        self._queue_status()

    def _waiters_for(self, user: User) -> list[Session]:
        """This node's users who typed ``waitfor`` ``user``'s name (§4.12), no longer
        waiting: they hear ``** FINALLY`` after the login notice."""
        name = user.name
        waiters = [
            other
            for other in self._sessions.values()
            if name in other.waiting_for and other is not user and other.logged_in
        ]
        for other in waiters:
            other.waiting_for.discard(name)
        return waiters

    def _notice(
        self, user: User, login: bool, *, text: str = "", waiters: tuple[Session, ...] = ()
    ) -> int:
        """Queue ``user``'s login or logout notice for the next batch; its number."""
        self._seq += 1
        self._notices.append(_Notice(self._seq, user, user.name, login, text, waiters))
        self._pending = None
        return self._seq

    def notice_gap(self) -> float:
        """Seconds from one batch to the next when a login or logout waits (D140):
        :data:`NOTICE_GAP_PER_USER` per user online, at least :data:`NOTICE_GAP_MIN`, at
        most :attr:`status_interval`."""
        per_users = len(self._sessions) * NOTICE_GAP_PER_USER
        return min(self.status_interval, max(NOTICE_GAP_MIN, per_users))

    def _queue_status(self) -> None:
        """Schedule the next batch of status notices (logins, logouts, who updates).

        A batch leaves :meth:`notice_gap` after the previous one when it holds a login
        or logout, else :attr:`status_interval` after it (on the next turn of the loop
        if that time has passed), and only after the previous one has reached everyone:
        every user gets the notices in order, and each batch costs one write per user
        however many changes it holds (docs/performance.md §3, D79, D140). A status
        change used to cost a write to every user: with hundreds of matches starting
        and ending, or a burst of logins, that was most of the server's time.
        """
        if self._delivery is not None:
            return  # the batch being written queues the next one when it is done
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): send at once
            self.flush_status()
            return
        gap = self.notice_gap() if self._notices else self.status_interval
        at = max(self._last_flush + gap, loop.time())
        if self._flush is not None:
            if self._flush_at <= at:
                return
            self._flush.cancel()  # a login or logout came: the batch leaves sooner
        self._flush_at = at
        self._flush = loop.call_at(at, self.flush_status)

    def _snapshot(self) -> _Batch:
        """The queued changes as one batch (the who lines rendered now)."""
        logins = {
            n.session: n.seq
            for n in self._notices
            if n.login and self._current(n.name) is n.session
        }
        now = self._timer.now()
        who = []
        for session, seq in self._changed.values():
            if self._current(session.name) is session:
                seq = max(seq, logins.pop(session, 0))
                who.append((session.who_line(now), seq))
        for session, seq in logins.items():
            who.append((session.who_line(now), seq))
        finally_for: dict[Session, list[tuple[int, str]]] = {}
        for n in self._notices:
            for waiter in n.waiters:
                finally_for.setdefault(waiter, []).append((n.seq, replies.finally_logs_in(n.name)))
        return _Batch(list(self._notices), who, finally_for)

    def flush_status(self) -> None:
        """Send the batched status notices now (see :meth:`_queue_status`)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._delivery is not None:
            return  # the batch being written queues the next one when it is done
        if not self._notices and not self._changed:
            return
        batch = self._snapshot()
        base = self._base
        served = self._served
        recipients = [
            (s, batch.key(s, served.get(s, base)))
            for s in (*self._sessions.values(), *self._visitors.values())
            if s.logged_in
        ]
        self._notices = []
        self._changed.clear()
        self._served = {}
        self._base = self._seq
        self._pending = None
        with contextlib.suppress(RuntimeError):
            self._last_flush = asyncio.get_running_loop().time()
        self._delivery = _Delivery(batch, recipients)
        self._deliver()

    def _deliver(self) -> None:
        """Write the batch to the next ``BROADCAST_CHUNK`` recipients, then yield to the
        loop.

        A batch to 5,000 users takes tens of milliseconds of writes; in chunks, nobody's
        command waits for all of it (the issue's "does not stall anyone").
        """
        delivery = self._delivery
        assert delivery is not None
        while True:
            start = delivery.position
            end = start + BROADCAST_CHUNK
            delivery.position = end  # a write below may reach flush_for: these are done
            for session, key in delivery.recipients[start:end]:
                if session not in delivery.early:
                    delivery.batch.write(session, key)
            if end >= len(delivery.recipients):
                break
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (unit tests): all at once
                continue
            loop.call_soon(self._deliver)
            return
        self._delivery = None
        for n in delivery.batch.notices:
            if n.login and self._unheard.get(n.session) == n.seq:
                del self._unheard[n.session]  # everyone has heard of this login now
        if self._notices or self._changed:
            self._queue_status()

    def flush_for(self, *sessions: Session) -> None:
        """Bring ``sessions`` up to date now: the rest of the batch being written, then
        every queued change, each session getting exactly what the next batch would
        have given it (D140).

        The next batch then gives them only what changed after this: nothing arrives
        twice and nothing out of order, and nobody else's batch moves. Costs one or two
        writes per session.
        """
        for session in sessions:
            self._catch_up(session, queued=True)

    def _catch_up(self, session: Session, *, queued: bool) -> None:
        """:meth:`flush_for` one session; the queued changes only with ``queued``."""
        if session.closed or not session.logged_in:
            return
        if self._delivery is not None:
            self._delivery.write_early(session)
        since = self._served.get(session, self._base)
        if not queued or since >= self._seq:
            return
        if self._pending is None:
            self._pending = self._snapshot()
        pending = self._pending
        pending.write(session, pending.key(session, since))
        self._served[session] = self._seq

    def flush_soon(self, users: Iterable[Peer | None]) -> None:
        """:meth:`flush_for` ``sessions`` on the next turn of the loop: after the lines the
        running step still writes (the end of a match, ``has left``, a logout), so the
        who lines and the logout notice they get follow the lines they describe (D140)."""
        self._soon.update(self._session(s) for s in users if s is not None)
        if self._soon_handle is not None or not self._soon:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): at once
            self._flush_soon()
            return
        self._soon_handle = loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._soon_handle = None
        sessions, self._soon = self._soon, set()
        self.flush_for(*sessions)

    def fence(self, recipient: Session) -> None:
        """Called before any line is written to ``recipient`` (:attr:`Session.before_write`):
        when the line comes from the action of a user whose login notice ``recipient``
        may not have yet (:data:`ACTOR`), ``recipient`` gets its part of the batches
        first (:meth:`flush_for`). So a user's CLIP 7 reaches everyone before a tell, a
        shout, a kibitz, an invitation, a watch notice or any other line that user
        causes (D140), whatever handler writes it.

        Nothing to do (two look-ups) unless a login is still being announced.
        """
        if not self._unheard:
            return
        actor = ACTOR.get()
        if actor is None or actor is recipient:
            return
        seq = self._unheard.get(actor)
        if seq is None:
            return
        if seq <= self._base:  # the login is in the batch being written
            self._catch_up(recipient, queued=False)
        elif self._served.get(recipient, self._base) < seq:
            self._catch_up(recipient, queued=True)

    def who_list(self, now: float | None = None) -> list[str]:
        """The CLIP 5 line of every logged-in user (cached lines, :meth:`Session.who_line`)."""
        now = self._timer.now() if now is None else now
        return [s.who_line(now) for s in self._sessions.values() if s.logged_in]
