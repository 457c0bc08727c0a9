"""The presence seam: how a session reaches the other sessions.

Everything a command does to or about another user goes through a :class:`Presence`:
who is online (``who``, ``where``, name completion), status notices (CLIP 5/6 who
updates, CLIP 7/8 login and logout notices, D79, D140), the lines one user's action
writes to others (tells, shouts, messages, invitations, watch notices, match lines),
the state of other users that a command changes (a watcher sent back to the lobby, the
players of a match), and a second login replacing the first (§1.4).

Handlers see other users only as :class:`Peer` views and write to them only through a
presence (``tests/server/test_presence_seam.py`` checks it): so a second implementation
can serve users on other server nodes, over a message bus, without touching a handler.
The in-process implementation is :class:`server.world.registry.LocalPresence` (one node, every
user in this process). The caller's own :class:`~server.world.session.Session` stays the
caller's: its own replies are written to it directly.

A back end must keep these guarantees (``tests/server/test_presence_contract.py`` checks
them against every implementation):

* **Order per recipient.** The lines a presence delivers to one recipient arrive in the
  order they were handed to it, whether they come from one call or several, and after
  the lines the same caller wrote to that recipient before (one user's actions are one
  ordered stream to each recipient).
* **A user's login notice first (D140 rule 1).** A user's CLIP 7 reaches a recipient
  before any line that user's actions make the presence deliver to them: a tell, a shout,
  an invitation, a watch notice, a match line. A bus back end must carry a login notice
  ahead of the user's first line on the same ordered channel to each recipient, or hold
  the line until the notice is delivered (:class:`server.world.cluster.ClusterPresence`
  stamps each line with its sender's login and fences it on arrival).
* **Synchronous for the caller.** Every method returns without awaiting anyone's
  socket: a delivery is queued to the recipient's output (in-process: written at once;
  over a bus: published, and written on the recipient's node when it arrives). A slow
  reader never holds up the sender.
* **Batched status notices (D79).** :meth:`Presence.who_update`,
  :meth:`Presence.announce_login` and :meth:`Presence.announce_logout` queue; the
  notices leave in batches, a login or logout within about 50 ms to a second, a who
  update within ``status_interval``; each changed user appears once per batch with
  their latest state, and never after their CLIP 8.
* **Prompt end of a match (D140 rule 2).** :meth:`Presence.flush_soon` brings the given
  users up to date on the next turn of the loop, after the lines the running step still
  writes, and the next batch does not repeat it.
* **Users on another node.** :meth:`Presence.get`, :meth:`Presence.users` and the other
  look-ups answer for every user of the world, wherever they are connected; a
  :class:`Peer` of a remote user is a view of their state as of the latest status
  update its node published (in-process it is the live session). Deliveries and state
  changes addressed to a remote peer run on that peer's node.
* **Shared payloads (docs/performance.md §3).** A broadcast renders its lines once per
  client mode (or once, when they are the same in both) and hands every recipient the
  same encoded bytes: the cost per recipient is one write.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

from db.records import UserSettings
from protocol import clip
from protocol.replies import HourUsers, Mode, Toggle
from server.doors.output import Payload
from server.world.session import Session

WHO_END = clip.WhoInfoEnd().format()
"""CLIP 6, the end of a who list (``who``, ``rawwho``, the login who list) or of one
who update."""

Lines = Sequence[str] | Callable[[Mode], Sequence[str]]
"""What a broadcast says: the same lines to everyone (encoded once), or the lines for
each client mode (rendered once per mode)."""


class Peer(Protocol):
    """What a command may read of another online user (read-only).

    In-process this is the user's :class:`~server.world.session.Session`; over a bus, a view
    of a remote user's state. A peer is also the address of its user for the
    :class:`Presence` methods that write to or change them: pass back only peers the same
    presence returned.
    """

    @property
    def name(self) -> str: ...

    @property
    def mode(self) -> Mode:
        """The client mode lines to this user are rendered in (CLIP or telnet)."""
        ...

    @property
    def clip(self) -> bool: ...

    @property
    def is_bot(self) -> bool:
        """The account is a bot's (its client marked it as a computer, §2.3)."""
        ...

    @property
    def logged_in(self) -> bool: ...

    @property
    def closed(self) -> bool:
        """True once the user's connection ended (the peer is about to go)."""
        ...

    @property
    def toggles(self) -> Mapping[Toggle, bool]: ...

    @property
    def gagged(self) -> AbstractSet[str]:
        """Names this user does not listen to (``gag``, §4.12)."""
        ...

    @property
    def blinded(self) -> AbstractSet[str]:
        """Names this user does not let watch or look at their matches (``blind``)."""
        ...

    @property
    def settings(self) -> UserSettings:
        """The user's ``set`` variables (the board style lines to them are drawn in)."""
        ...

    @property
    def dice_seed(self) -> str | None:
        """The seed this user adds to the dice of their next matches (``set dice_seed``,
        D276); None: the server draws one for them at each match's start."""
        ...

    @property
    def away(self) -> str | None: ...

    @property
    def opponent(self) -> str | None: ...

    @property
    def watching(self) -> str | None: ...

    @property
    def rating(self) -> float: ...

    @property
    def experience(self) -> int: ...

    @property
    def login_time(self) -> int:
        """Unix time of the login."""
        ...

    def idle_seconds(self, now: float | None = None) -> int:
        """Whole seconds since the user sent their last line: a duration, never another
        node's clock reading. ``now``: one reading of this node's monotonic timer for a
        whole list (every line of it read at one instant); a back end with users on
        other nodes counts their idle time on their own node's timer."""
        ...

    @property
    def address(self) -> str | None: ...

    @property
    def host(self) -> str:
        """Where the user connects from."""
        ...

    def who_line(self, now: float | None = None) -> str:
        """The user's CLIP 5 line (§2.3), idle time as of ``now`` (a reading of the
        node's monotonic timer; None: read it now)."""
        ...


class Caller(Peer, Protocol):
    """The user whose command a table runs: their own
    :class:`~server.world.session.Session` on their node, or, on the node that owns
    their table, a view of it (:class:`server.world.remote.RemoteCaller`) whose writes
    and state changes go to their node."""

    @property
    def visitor(self) -> bool:
        """Watching without an account (D256)."""
        ...

    @property
    def replaced(self) -> bool:
        """A second login of the same user took over this session (§1.4)."""
        ...

    @property
    def logout_text(self) -> Callable[[str], str]:
        """How others hear that this session ended (§1.8)."""
        ...

    def send(self, *lines: str) -> None:
        """The caller's own reply lines."""
        ...

    def send_lines(self, lines: Iterable[str]) -> None: ...

    def start_watching(self, name: str) -> None:
        """The caller now watches ``name`` (their who update is the caller's to send)."""
        ...

    def enter_lobby(self) -> None:
        """The caller is back in the lobby."""
        ...


@dataclass(frozen=True, slots=True)
class Audience:
    """Which online users get a broadcast: plain data, so a bus back end can send it
    with the lines and each node picks its own recipients.

    A logged-in user gets it unless one of these leaves them out.
    """

    exclude: frozenset[str] = frozenset()
    """Never these (the sender, a match's players)."""
    toggle_on: Toggle | None = None
    """Only users with this toggle on (``report``)..."""
    also: frozenset[str] = frozenset()
    """...or named here (a match's watchers hear its start whatever their toggle)."""
    toggle_off: Toggle | None = None
    """Not users with this toggle on (``silent`` users hear no shout)."""
    not_gagging: str | None = None
    """Not users who gagged this name (the shouter)."""

    def admits(self, user: Peer) -> bool:
        """Whether ``user`` is in the audience."""
        if not user.logged_in or user.name in self.exclude:
            return False
        toggles = user.toggles
        if self.toggle_off is not None and toggles[self.toggle_off]:
            return False
        if (
            self.toggle_on is not None
            and not toggles[self.toggle_on]
            and user.name not in self.also
        ):
            return False
        return self.not_gagging is None or self.not_gagging not in user.gagged


class Presence(Protocol):
    """Who is online and how a session reaches them (see the module's contract)."""

    # -- who is online -------------------------------------------------------------------

    def count(self) -> int:
        """Users online (``stat``, ``show max``, the login limit)."""
        ...

    def get(self, name: str) -> Peer | None:
        """The online user called exactly ``name``."""
        ...

    def complete(self, prefix: str) -> Peer:
        """The online user ``prefix`` names (§4.1): the exact name, else a unique
        case-sensitive prefix, else a unique case-insensitive one.

        :raises server.errors.Reply: nobody (``** There is no one called x``) or several.
        """
        ...

    def find(self, prefix: str) -> Peer | None:
        """:meth:`complete`, but None when no online name starts with ``prefix`` (any case).

        :raises server.errors.Reply: several users match.
        """
        ...

    def users(self) -> list[Peer]:
        """Every logged-in user, in the order they logged in (``who``, ``away``...)."""
        ...

    def watchers_of(self, names: Collection[str]) -> list[Peer]:
        """The users watching any of ``names`` (a match's players), in login order; then
        the visitors watching them."""
        ...

    def who_list(self, now: float | None = None) -> list[str]:
        """The CLIP 5 line of every logged-in user (the login who list)."""
        ...

    # -- visitors (D256) ---------------------------------------------------------------------
    # A visitor watches without an account. It gets the status notices (CLIP 5/7/8 in its
    # batches) and the lines of a match it watches (:meth:`watchers_of`, :meth:`visitor`),
    # and nothing else: no broadcast, and it is in none of the lookups, lists and counts
    # above (get, complete, find, users, who_list, count, peak, logins, history).

    def visitor_count(self) -> int:
        """Visitors connected to this node (``[limits] max_visitors``)."""
        ...

    def visitor(self, name: str) -> Peer | None:
        """The visitor of this internal name (a watcher of a match, :func:`watchers_at`)."""
        ...

    def add_visitor(self, session: Session) -> None:
        """A visitor entered: it hears the status notices from now on."""
        ...

    def remove_visitor(self, session: Session) -> None:
        """A visitor left."""
        ...

    @property
    def peak(self) -> int:
        """Most users online at once since the start (``stat``, ``show max``)."""
        ...

    @property
    def logins(self) -> int:
        """Logins since the start (``stat``)."""
        ...

    @property
    def history(self) -> Iterable[tuple[float, str]]:
        """The latest logins and logouts, oldest first: (Unix time, text) for ``last``."""
        ...

    def hours(self, now: float) -> list[HourUsers]:
        """Users online by hour of the day, for ``average`` (D160)."""
        ...

    # -- lines to other users ----------------------------------------------------------------

    def send(self, to: Peer, *lines: str) -> None:
        """Deliver ``lines`` to ``to`` (nothing if they left meanwhile)."""
        ...

    def send_lines(self, to: Peer, lines: Iterable[str]) -> None:
        """:meth:`send` for an iterable."""
        ...

    def send_payload(self, to: Peer, payload: Payload) -> None:
        """:meth:`send` for lines rendered and encoded once for several recipients (a
        match step's outbox, docs/performance.md §3)."""
        ...

    def broadcast(self, lines: Lines, audience: Audience) -> None:
        """Deliver ``lines`` to every online user ``audience`` admits (a shout, a wave,
        a match start or end report), each rendered once per mode and shared."""
        ...

    # -- other users' state ------------------------------------------------------------------

    def stop_watching(self, watcher: Peer, *lines: str) -> None:
        """``watcher`` stops watching (back in the lobby), hears ``lines`` and gets a who
        update (``blind``, the watched player leaving)."""
        ...

    def start_playing(self, player: Peer, opponent: str) -> None:
        """``player`` now plays ``opponent`` (stops watching), with a who update."""
        ...

    def enter_lobby(self, player: Peer, *, announce: bool = True) -> None:
        """``player`` is back in the lobby after a match; a who update unless not
        ``announce`` (the server is stopping)."""
        ...

    def set_rating(self, player: Peer, rating: float, experience: int) -> None:
        """``player``'s new rating and experience after a match (shown by their next who
        update)."""
        ...

    # -- status notices (D79, D140) -----------------------------------------------------------

    def who_update(self, user: Peer) -> None:
        """Queue CLIP 5 + 6 about ``user`` to every CLIP user (batched, D79)."""
        ...

    def flush_soon(self, users: Iterable[Peer | None]) -> None:
        """Bring ``users`` up to date with the queued notices on the next turn of the
        loop, after the lines the running step still writes (D140 rule 2)."""
        ...

    # -- this node's sessions ----------------------------------------------------------------

    def add(self, session: Session) -> None:
        """A session of this node logged in: it is online from now on."""
        ...

    def remove(self, session: Session) -> None:
        """A session of this node ended (nothing if another took its name since)."""
        ...

    def replace(self, name: str) -> bool:
        """A second login of ``name`` takes over (§1.4): the online session of that name,
        on whatever node, is marked replaced and its connection closed (its cleanup then
        tells the opponent, and no logout notice goes out). False if nobody is online
        under that name."""
        ...

    def announce_login(self, session: Session, *, again: bool = False) -> None:
        """Queue ``session``'s login notice (CLIP 7, and its CLIP 5 to CLIP users), tell
        the ``waitfor`` users, and from now on put this notice ahead of every line the
        calling task writes to another user (D140 rule 1). ``again``: the user was
        online already and this session replaced theirs; the others never saw them
        leave, so they get only the who update of the new session (D196)."""
        ...

    def announce_logout(self, session: Session) -> None:
        """Queue ``session``'s logout notice (CLIP 8 with its logout text) and record it
        for ``last``."""
        ...
