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
from typing import Generic, TypeVar

from protocol import clip, replies
from protocol.replies import Mode
from server.errors import Reply
from server.session import Session
from server.telnet import Payload

K = TypeVar("K", bound=Hashable)

WHO_UPDATE_INTERVAL = 0.25
"""Seconds between two batches of who updates at most (D79): a status change reaches
everyone within a quarter of a second, and a burst of changes costs each CLIP user at most
four writes a second."""

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


class Registry:
    """The logged-in sessions by exact name."""

    HISTORY = 20
    """``last`` shows the 20 latest logins and logouts (§4.14)."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self.history: deque[tuple[float, str]] = deque(maxlen=self.HISTORY)
        """(Unix time, ``<name> logs in.`` / the logout text), oldest first, for ``last``."""
        self.logins = 0
        """Logins since the start (``stat``, ``average``)."""
        self.peak = 0
        """Most users logged in at once since the start (``stat``, ``show max``)."""
        self._changed: dict[str, Session] = {}
        """Users whose who update waits to be sent (:meth:`who_update`)."""
        self._flush: asyncio.Handle | None = None
        """The scheduled :meth:`flush_who_updates`, while one is."""
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

    def remove(self, session: Session) -> None:
        if self._sessions.get(session.name) is session:
            del self._sessions[session.name]

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

        Batched (docs/performance.md §3, D79): the status changes waiting together go out
        as one who list (each changed user's CLIP 5 line with their latest state, then
        one CLIP 6) in one write per recipient, on the next turn of the event loop but
        at most once per :data:`WHO_UPDATE_INTERVAL`. Each change used to cost a write
        to every CLIP user: with hundreds of matches starting and ending, that was most
        of the server's time. A user who logged out meanwhile is left out, so no CLIP 5
        follows their CLIP 8.
        """
        self._changed[session.name] = session
        if self._flush is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (unit tests): send at once
            self.flush_who_updates()
            return
        wait = self._last_flush + WHO_UPDATE_INTERVAL - loop.time()
        if wait > 0:
            self._flush = loop.call_later(wait, self.flush_who_updates)
        else:
            self._flush = loop.call_soon(self.flush_who_updates)

    def flush_who_updates(self) -> None:
        """Send the batched who updates now (see :meth:`who_update`)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        changed = [s for s in self._changed.values() if self._sessions.get(s.name) is s]
        self._changed.clear()
        if not changed:
            return
        now = time.monotonic()
        with contextlib.suppress(RuntimeError):
            self._last_flush = asyncio.get_running_loop().time()
        payload = Payload([*(s.who_line(now) for s in changed), WHO_END])
        for other in self:
            if other.clip and other.logged_in:
                other.send_payload(payload)

    def who_list(self, now: float | None = None) -> list[str]:
        """The CLIP 5 line of every logged-in user (cached lines, :meth:`Session.who_line`)."""
        now = time.monotonic() if now is None else now
        return [s.who_line(now) for s in self._sessions.values() if s.logged_in]

    def announce_login(self, session: Session) -> None:
        """CLIP 7 to users with ``notify`` on and the who update to all others (§1.4);
        ``waitfor`` users hear it too (§4.12).

        A CLIP user gets the notice and the who update in one write.
        """
        self.history.append((time.time(), replies.logs_in(session.name)))
        self.logins += 1
        self.peak = max(self.peak, len(self._sessions))
        name = session.name
        who = (session.who_line(), WHO_END)

        def render(key: tuple[bool, bool]) -> list[str]:
            clip_mode, notify = key
            lines = [replies.login_notice(name, mode_of(clip_mode))] if notify else []
            if clip_mode:
                lines.extend(who)
            return lines

        out: Broadcast[tuple[bool, bool]] = Broadcast(render)
        for other in self:
            if other is session or not other.logged_in:
                continue
            out.send(other, (other.clip, other.toggles["notify"]))
            if name in other.waiting_for:
                other.waiting_for.discard(name)
                other.send(replies.finally_logs_in(name))
                session.send(replies.is_waiting_for_you(other.name))

    def announce_logout(self, session: Session) -> None:
        """CLIP 8 (``logs out.`` / ``drops connection.``...) to users with ``notify`` on."""
        name = session.name
        text = session.logout_text(name)
        self.history.append((time.time(), text))
        out: Broadcast[bool] = Broadcast(
            lambda clip_mode: [replies.logout_notice(name, text, mode_of(clip_mode))]
        )
        for other in self:
            if other is not session and other.logged_in and other.toggles["notify"]:
                out.send(other, other.clip)
