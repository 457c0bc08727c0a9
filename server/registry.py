"""Who is online, name completion, and the broadcasts every status change causes.

Broadcasts write to each recipient's output at once and never await anyone's
socket: a slow reader is cut off by its own write-buffer limit instead.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator

from protocol import clip, replies
from server.errors import Reply
from server.session import Session


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
        """CLIP 5 + 6 about ``session`` to every CLIP user, itself included (§2.3, §6.6)."""
        lines = clip.who_update(session.who_info())
        for other in self:
            if other.clip and other.logged_in:
                other.send_lines(lines)

    def announce_login(self, session: Session) -> None:
        """CLIP 7 to users with ``notify`` on and the who update to all others (§1.4);
        ``waitfor`` users hear it too (§4.12)."""
        self.history.append((time.time(), replies.logs_in(session.name)))
        self.logins += 1
        self.peak = max(self.peak, len(self._sessions))
        lines = clip.who_update(session.who_info())
        for other in self:
            if other is session or not other.logged_in:
                continue
            if other.toggles["notify"]:
                other.send(replies.login_notice(session.name, other.mode))
            if other.clip:
                other.send_lines(lines)
            if session.name in other.waiting_for:
                other.waiting_for.discard(session.name)
                other.send(replies.finally_logs_in(session.name))
                session.send(replies.is_waiting_for_you(other.name))

    def announce_logout(self, session: Session) -> None:
        """CLIP 8 (``logs out.`` / ``drops connection.``...) to users with ``notify`` on."""
        text = session.logout_text(session.name)
        self.history.append((time.time(), text))
        for other in self:
            if other is not session and other.logged_in and other.toggles["notify"]:
                other.send(replies.logout_notice(session.name, text, other.mode))
