"""Who is online, name completion, and the broadcasts every status change causes.

Broadcasts write to each recipient's output at once and never await anyone's
socket: a slow reader is cut off by its own write-buffer limit instead.

A broadcast renders each distinct set of lines once (per client mode and whatever
else they depend on) and encodes it once (:class:`Broadcast`, :class:`server.telnet.Payload`);
each recipient then gets one write of the same bytes it would have got line by line
(docs/performance.md §3).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from protocol import clip, replies
from protocol.replies import Mode
from server.errors import Reply
from server.session import Session
from server.telnet import Payload
from server.user_stats import UsersByHour

K = TypeVar("K", bound=Hashable)

DEFAULT_STATUS_INTERVAL = 1.0
"""Seconds between two batches of status notices (logins, logouts, who updates) at most,
fibs.conf ``[limits] status_interval`` (D79): a change reaches everyone within about a
second, and a burst of changes costs each user one write a second. Each batch is a write
to every user (about 20 µs each here), so at 5,000 users a shorter interval costs a large
share of the event loop under a steady stream of logins or match starts
(docs/performance.md §3)."""

BROADCAST_CHUNK = 256
"""Recipients written per turn of the event loop when a batch goes to everyone (about
5 ms of writes): a batch to thousands of users never holds up anyone's command."""

WHO_END = clip.WhoInfoEnd().format()
"""CLIP 6, the end of a who list or of one who update."""


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

    session: Session
    name: str
    login: bool
    text: str = ""
    """The logout's words (``logs out.``, ``drops connection.``...)."""
    waiters: tuple[Session, ...] = ()
    """Who typed ``waitfor`` this user: they hear ``** FINALLY!!!`` after the notice."""


class Registry:
    """The logged-in sessions by exact name."""

    HISTORY = 20
    """``last`` shows the 20 latest logins and logouts (§4.14)."""

    def __init__(self, status_interval: float = DEFAULT_STATUS_INTERVAL) -> None:
        self.status_interval = status_interval
        """Seconds between two batches of status notices at most (:meth:`_queue_status`)."""
        self._sessions: dict[str, Session] = {}
        self.history: deque[tuple[float, str]] = deque(maxlen=self.HISTORY)
        """(Unix time, ``<name> logs in.`` / the logout text), oldest first, for ``last``."""
        self.logins = 0
        """Logins since the start (``stat``, ``average``)."""
        self.peak = 0
        """Most users logged in at once since the start (``stat``, ``show max``)."""
        self.users_by_hour = UsersByHour(time.time())
        """Users logged in by hour of the day, for ``average`` (D160)."""
        self._changed: dict[str, Session] = {}
        """Users whose who update waits to be sent (:meth:`who_update`)."""
        self._notices: list[_Notice] = []
        """Logins and logouts waiting to be announced, in order."""
        self._delivering = False
        """A batch is still being written, chunk by chunk (:meth:`_deliver`)."""
        self._flush: asyncio.Handle | None = None
        """The scheduled :meth:`flush_status`, while one is."""
        self._last_flush = float("-inf")
        """Loop time of the last batch sent."""

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def get(self, name: str) -> Session | None:
        return self._sessions.get(name)

    def add(self, session: Session) -> None:
        self._sessions[session.name] = session
        self.users_by_hour.observe(time.time(), len(self._sessions))

    def remove(self, session: Session) -> None:
        if self._sessions.get(session.name) is session:
            del self._sessions[session.name]
            self.users_by_hour.observe(time.time(), len(self._sessions))

    def complete(self, prefix: str) -> Session:
        """The online user that ``prefix`` names (§4.1 name completion).

        An exact name wins; then a unique case-sensitive prefix, then a unique
        case-insensitive one.

        :raises Reply: nobody (``** There is no one called x``) or several candidates.
        """
        exact = self._sessions.get(prefix)
        if exact is not None:
            return exact
        for fold in (False, True):
            key = prefix.lower() if fold else prefix
            found = [
                s
                for name, s in self._sessions.items()
                if (name.lower() if fold else name).startswith(key)
            ]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                raise Reply(*replies.ambiguous_name(sorted(s.name for s in found), prefix))
        raise Reply(replies.no_one_called(prefix))

    # -- broadcasts --------------------------------------------------------------------

    def who_update(self, session: Session) -> None:
        """CLIP 5 + 6 about ``session`` to every CLIP user, itself included (§2.3, §6.6).

        Batched with the other status notices (:meth:`_queue_status`, D79): each user
        changed since the last batch appears once, with their latest state, in one who
        list at the end of the batch. A user who logged out meanwhile is left out, so
        no CLIP 5 follows their CLIP 8.
        """
        self._changed[session.name] = session
        self._queue_status()

    def flush_status(self) -> None:
        """Send the batched status notices now (see :meth:`_queue_status`)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._delivering:
            return  # the batch being delivered schedules the next one when it is done
        notices, self._notices = self._notices, []
        logged_in = {
            n.session for n in notices if n.login and self._sessions.get(n.name) is n.session
        }
        changed = [s for s in self._changed.values() if self._sessions.get(s.name) is s]
        self._changed.clear()
        explicit = set(changed)
        for session in logged_in:
            if session not in explicit:
                changed.append(session)
        if not notices and not changed:
            return
        now = time.monotonic()
        who = [(s, s.who_line(now)) for s in changed]

        def render(key: tuple[bool, bool, Session | None]) -> list[str]:
            clip_mode, notify, own = key
            mode = mode_of(clip_mode)
            lines = []
            if notify:
                for n in notices:
                    if n.session is own:
                        continue  # nobody hears of their own login (§1.4)
                    if n.login:
                        lines.append(replies.login_notice(n.name, mode))
                    else:
                        lines.append(replies.logout_notice(n.name, n.text, mode))
            # A new user's who list at login already showed them (unless they changed
            # since): their own line is not sent to them again.
            who_lines = [line for s, line in who if s is not own or s in explicit]
            if clip_mode and who_lines:
                lines.extend(who_lines)
                lines.append(WHO_END)
            return lines

        finally_for: dict[Session, list[str]] = {}
        for n in notices:
            for waiter in n.waiters:
                finally_for.setdefault(waiter, []).append(replies.finally_logs_in(n.name))
        out: Broadcast[tuple[bool, bool, Session | None]] = Broadcast(render)
        recipients = [
            (s, (s.clip, s.toggles["notify"], s if s in logged_in else None))
            for s in self._sessions.values()
            if s.logged_in
        ]
        with contextlib.suppress(RuntimeError):
            self._last_flush = asyncio.get_running_loop().time()
        self._deliver(out, recipients, finally_for, 0)

    def _deliver(
        self,
        out: Broadcast[tuple[bool, bool, Session | None]],
        recipients: list[tuple[Session, tuple[bool, bool, Session | None]]],
        finally_for: dict[Session, list[str]],
        start: int,
    ) -> None:
        """Write a batch to ``BROADCAST_CHUNK`` recipients, then yield to the loop.

        A batch to 5,000 users takes tens of milliseconds of writes; in chunks, nobody's
        command waits for all of it (the issue's "does not stall anyone").
        """
        end = start + BROADCAST_CHUNK
        for session, key in recipients[start:end]:
            out.send(session, key)
            if session in finally_for:  # waitfor (§4.12), after the login notice
                session.send(*finally_for[session])
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): all at once
            loop = None
        if end < len(recipients):
            if loop is None:
                self._deliver(out, recipients, finally_for, end)
            else:
                self._delivering = True
                loop.call_soon(self._deliver, out, recipients, finally_for, end)
            return
        self._delivering = False
        if self._notices or self._changed:
            self._queue_status()

    def _queue_status(self) -> None:
        """Schedule the next batch of status notices (logins, logouts, who updates).

        A batch leaves on the next turn of the event loop, but at most once per
        :attr:`status_interval`, and only after the previous one has reached
        everyone: every user gets the notices in order, and each batch costs one write
        per user however many changes it holds (docs/performance.md §3, D79). A status
        change used to cost a write to every user: with hundreds of matches starting and
        ending, or a burst of logins, that was most of the server's time.
        """
        if self._flush is not None or self._delivering:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): send at once
            self.flush_status()
            return
        wait = self._last_flush + self.status_interval - loop.time()
        if wait > 0:
            self._flush = loop.call_later(wait, self.flush_status)
        else:
            self._flush = loop.call_soon(self.flush_status)

    def who_list(self, now: float | None = None) -> list[str]:
        """The CLIP 5 line of every logged-in user (cached lines, :meth:`Session.who_line`)."""
        now = time.monotonic() if now is None else now
        return [s.who_line(now) for s in self._sessions.values() if s.logged_in]

    def announce_login(self, session: Session) -> None:
        """CLIP 7 to users with ``notify`` on and the new user's CLIP 5/6 to every CLIP
        user (§1.4), in the next batch of status notices (D79); ``waitfor`` users hear it
        at once (§4.12)."""
        name = session.name
        self.history.append((time.time(), replies.logs_in(name)))
        self.logins += 1
        self.peak = max(self.peak, len(self._sessions))
        waiters = []
        for other in self._sessions.values():
            if name in other.waiting_for and other is not session and other.logged_in:
                other.waiting_for.discard(name)
                waiters.append(other)
                session.send(replies.is_waiting_for_you(other.name))
        self._notices.append(_Notice(session, name, login=True, waiters=tuple(waiters)))
        self._queue_status()

    def announce_logout(self, session: Session) -> None:
        """CLIP 8 (``logs out.`` / ``drops connection.``...) to users with ``notify`` on,
        in the next batch of status notices (D79)."""
        name = session.name
        text = session.logout_text(name)
        self.history.append((time.time(), text))
        self._notices.append(_Notice(session, name, login=False, text=text))
        self._queue_status()
