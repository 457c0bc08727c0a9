"""Per-connection state: who is logged in, how they talk (CLIP or telnet), their settings.

A :class:`Session` is created for each connection and lives until it closes. Its
state changes only through the named methods (``enter_lobby``, ``start_watching``...),
so it is always clear where a session stands.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from backgammon.rating import INITIAL_RATING
from db.records import User, UserSettings
from protocol import replies
from protocol.clip import OwnInfo, WhoInfo
from protocol.commands import DIALOG, SessionState
from protocol.parser import ParsedCommand
from protocol.replies import Mode, Toggle
from server.doors.output import Output, Payload

log = logging.getLogger(__name__)

# Defaults for new accounts (§4.15 table; the ⚠ ones decided in docs/server-decisions.md).
DEFAULT_TOGGLES: Mapping[Toggle, bool] = {
    Toggle.ALLOWPIP: True,
    Toggle.AUTOBOARD: True,
    Toggle.AUTODOUBLE: False,
    Toggle.AUTOMOVE: False,
    Toggle.BELL: False,
    Toggle.CRAWFORD: True,
    Toggle.DOUBLE: True,
    Toggle.GREEDY: False,
    Toggle.MOREBOARDS: True,
    Toggle.MOVES: False,
    Toggle.NOTIFY: True,
    Toggle.RATINGS: False,
    Toggle.READY: False,
    Toggle.REPORT: True,
    Toggle.SILENT: False,
    Toggle.TELNET: True,
    Toggle.WRAP: False,
}
DEFAULT_SETTINGS = UserSettings(boardstyle=2)
"""New accounts: ASCII boards (style 2) for people; every client sets style 3 itself."""


def stored_toggles(values: Mapping[str, bool]) -> dict[Toggle, bool]:
    """The toggles of a stored account (names as stored: a name no toggle has any more
    is left out)."""
    return {Toggle(name): value for name, value in values.items() if name in _TOGGLE_NAMES}


def storable_toggles(toggles: Mapping[Toggle, bool]) -> dict[str, bool]:
    """Toggles as the database stores them: by name."""
    return {toggle.value: value for toggle, value in toggles.items()}


_TOGGLE_NAMES = frozenset(t.value for t in Toggle)

_LOBBY, _PLAYING, _WATCHING = SessionState.LOBBY, SessionState.PLAYING, SessionState.WATCHING
"""The logged-in states (``protocol.commands.USER``), for :attr:`Session.logged_in`."""


@dataclass(frozen=True, slots=True)
class NewAccount:
    """A guest's registration under way (§1.7): the chosen name, then the first password."""

    name: str
    password: str = ""


@dataclass(eq=False)
class Session:
    """One connection and, after login, its user (compared and hashed by identity)."""

    output: Output
    monotonic: Callable[[], float] = field(default=time.monotonic, repr=False)
    """The App's monotonic clock (``App.timer.now``): what :attr:`last_input` and the
    idle time are read on."""
    name: str = ""
    mode: Mode = Mode.TELNET
    state: SessionState | None = None
    """None until logged in."""
    client: str | None = None
    login_time: int = 0
    last_input: float = field(init=False)
    """When the last command line came (:attr:`monotonic`); the connection at first."""
    rating: float = INITIAL_RATING
    experience: int = 0
    address: str | None = None
    is_bot: bool = False
    toggles: dict[Toggle, bool] = field(default_factory=lambda: dict(DEFAULT_TOGGLES))
    settings: UserSettings = DEFAULT_SETTINGS
    dice_seed: str | None = None
    """``set dice_seed``: added to the dice of this user's next matches (D276); kept until
    logout, never stored."""
    away: str | None = None
    gagged: set[str] = field(default_factory=set)
    blinded: set[str] = field(default_factory=set)
    waiting_for: set[str] = field(default_factory=set)
    opponent: str | None = None
    watching: str | None = None
    last_command: ParsedCommand | None = None
    new_account: NewAccount | None = None
    """While a guest answers the password prompts: what it chose so far."""
    waved: bool = False
    visitor: bool = False
    """Watching without an account (D256): in no who list, only the visitor's commands."""
    prompts: bool = True
    """Telnet mode sends ``> `` after replies; not after a ``connect`` autologin (§1.6)."""
    replaced: bool = False
    """A second login of the same user took over this session (§1.4)."""
    closed: bool = False
    """Set once when the session ends (cleanup runs exactly once)."""
    login_deadline: float | None = None
    """Until a user logs in: when (:attr:`monotonic`) the connection's time to log in,
    or as a guest to register, runs out (D231); None: no limit."""
    pre_login: bool = False
    """Counted among the connections that have not logged in (server/doors/admission.py)."""
    delivered_messages: tuple[int, ...] = ()
    """Stored messages written to this connection and still stored: deleted at its next
    line, which shows the client was there to read them (D270)."""
    logout_text: Callable[[str], str] = replies.drops_connection
    """How others hear that this session ended (§1.8: logs out / drops connection / timed out)."""
    before_write: Callable[[Session], None] | None = field(default=None, repr=False)
    """Called with this session before anything is written to it: the registry's fence,
    which sends it pending status notices first when the line comes from a user whose
    login it has not heard of yet (:meth:`server.world.registry.LocalPresence.fence`, D140)."""
    write_failed: bool = field(default=False, repr=False)
    """A write to this session raised: its connection was aborted (:meth:`send`)."""
    _who_cache: _WhoLineParts | None = field(default=None, init=False, repr=False)
    """The CLIP 5 line around its idle field, for the values in its ``key``
    (:meth:`who_line`)."""

    def __post_init__(self) -> None:
        self.last_input = self.monotonic()

    # -- state -----------------------------------------------------------------------

    @property
    def logged_in(self) -> bool:
        state = self.state  # identity tests: the registry asks this of every session
        return state is _LOBBY or state is _PLAYING or state is _WATCHING

    @property
    def in_dialog(self) -> bool:
        """A prompt waits for the next line as typed (the guest's password, §1.7)."""
        return self.state is not None and self.state in DIALOG

    @property
    def clip(self) -> bool:
        return self.mode is Mode.CLIP

    @property
    def host(self) -> str:
        """Where the connection comes from (:class:`server.world.presence.Peer`)."""
        return self.output.host

    def load_user(self, user: User) -> None:
        """Take the stored account's values (toggles default where not stored)."""
        self.name = user.name
        self.rating = user.rating
        self.experience = user.experience
        self.address = user.address
        self.is_bot = user.is_bot
        self.toggles = {**DEFAULT_TOGGLES, **stored_toggles(user.toggles)}
        # §4.15 (HELP save): double and greedy are reset at every login.
        self.toggles[Toggle.DOUBLE] = True
        self.toggles[Toggle.GREEDY] = False
        self.settings = user.settings
        self.gagged = set(user.gagged)
        self.blinded = set(user.blinded)

    def enter_lobby(self) -> None:
        self.state = SessionState.LOBBY
        self.opponent = None
        self.watching = None

    def start_playing(self, opponent: str) -> None:
        self.state = SessionState.PLAYING
        self.opponent = opponent
        self.watching = None

    def start_watching(self, name: str) -> None:
        self.state = SessionState.WATCHING
        self.watching = name

    # -- output ----------------------------------------------------------------------

    # Every write below is isolated (D210): an error writing to this session closes it
    # alone, logged once, and never reaches the caller, so a loop over sessions (a
    # broadcast, status notices, a match's watchers, the shutdown notice) goes on.

    def send(self, *lines: str) -> None:
        """Write lines now (asynchronous messages from anyone may call this)."""
        self.send_lines(lines)

    def send_lines(self, lines: Iterable[str]) -> None:
        if not self.closed:
            try:
                if self.before_write is not None:
                    self.before_write(self)
                self.output.send(lines)
            except Exception as exc:
                self.writing_failed(exc)

    def send_payload(self, payload: Payload) -> None:
        """Write a broadcast's pre-rendered lines (the same bytes as :meth:`send_lines`)."""
        if not self.closed:
            try:
                if self.before_write is not None:
                    self.before_write(self)
                self.output.send_payload(payload)
            except Exception as exc:
                self.writing_failed(exc)

    def writing_failed(self, exc: Exception) -> None:
        """A write to this session raised ``exc``: close its connection at once; log the
        first failure only (D210)."""
        if not self.write_failed:
            self.write_failed = True
            log.error(
                "writing to %s (%s) failed; connection closed",
                self.output.host,
                self.name or "-",
                exc_info=exc,
            )
        self.output.abort()

    def end_reply(self) -> None:
        """What follows every command's reply: the away reminder, the telnet prompt
        (not while a dialog's own prompt waits for the next line)."""
        if self.away is not None and self.logged_in:
            self.send(replies.YOURE_AWAY)
        if not self.clip and self.prompts and not self.closed and not self.in_dialog:
            self.output.prompt(replies.TELNET_PROMPT)

    # -- CLIP views ------------------------------------------------------------------

    def idle_seconds(self, now: float | None = None) -> int:
        """Whole seconds since the last input (``now``: a reading of :attr:`monotonic`)."""
        idle = int((self.monotonic() if now is None else now) - self.last_input)
        return max(idle, 0)

    def who_info(self, now: float | None = None) -> WhoInfo:
        """This user as a CLIP 5 line (§2.3)."""
        return who_info(self, self.idle_seconds(now))

    def who_line(self, now: float | None = None) -> str:
        """``who_info(now).format()``, from a cache: the CLIP 5 line of who lists and
        who updates (docs/performance.md §3).

        The line is cached as the text before and after its idle field, which changes
        every second and is put in at each call. The cache is kept with the values of
        every other field it shows (:meth:`_who_key`) and rebuilt when any of them
        differs, so every state change invalidates it: the named transitions, ``toggle
        ready``, ``away``/``back``, a new rating or address, and the handlers that set
        these fields directly alike.
        """
        key = self._who_key()
        cache = self._who_cache
        if cache is None or cache.key != key:
            cache = self._who_cache = _WhoLineParts.of(key, self.who_info(self.last_input))
        return f"{cache.head}{self.idle_seconds(now)}{cache.tail}"

    def _who_key(self) -> tuple[object, ...]:
        """Every value :meth:`who_info` shows except the idle time (compared by value;
        the rating's sign too, as 0.0 == -0.0 but they print differently)."""
        return (
            self.name,
            self.opponent,
            self.watching,
            self.toggles[Toggle.READY],
            self.away is not None,
            self.rating,
            math.copysign(1.0, self.rating),
            self.experience,
            self.login_time,
            self.output.host,
            self.client,
            self.address,
        )

    def own_info(self) -> OwnInfo:
        """This user's CLIP 2 line (§2.2)."""
        t = self.toggles
        return OwnInfo(
            name=self.name,
            allowpip=t[Toggle.ALLOWPIP],
            autoboard=t[Toggle.AUTOBOARD],
            autodouble=t[Toggle.AUTODOUBLE],
            automove=t[Toggle.AUTOMOVE],
            away=self.away is not None,
            bell=t[Toggle.BELL],
            crawford=t[Toggle.CRAWFORD],
            double=t[Toggle.DOUBLE],
            experience=self.experience,
            greedy=t[Toggle.GREEDY],
            moreboards=t[Toggle.MOREBOARDS],
            moves=t[Toggle.MOVES],
            notify=t[Toggle.NOTIFY],
            rating=self.rating,
            ratings=t[Toggle.RATINGS],
            ready=t[Toggle.READY],
            redoubles=self.settings.redoubles,
            report=t[Toggle.REPORT],
            silent=t[Toggle.SILENT],
            timezone=self.settings.timezone,
        )


class WhoFields(Protocol):
    """What a CLIP 5 line shows of a user (a :class:`Session`, or the state another node
    published of one, :class:`server.world.remote.PeerState`)."""

    @property
    def name(self) -> str: ...
    @property
    def opponent(self) -> str | None: ...
    @property
    def watching(self) -> str | None: ...
    @property
    def toggles(self) -> Mapping[Toggle, bool]: ...
    @property
    def away(self) -> str | None: ...
    @property
    def rating(self) -> float: ...
    @property
    def experience(self) -> int: ...
    @property
    def login_time(self) -> int: ...
    @property
    def host(self) -> str: ...
    @property
    def client(self) -> str | None: ...
    @property
    def address(self) -> str | None: ...


def who_info(user: WhoFields, idle: int) -> WhoInfo:
    """``user``'s CLIP 5 line (§2.3), ``idle`` seconds idle."""
    return WhoInfo(
        name=user.name,
        opponent=user.opponent,
        watching=user.watching,
        ready=user.toggles[Toggle.READY],
        away=user.away is not None,
        rating=user.rating,
        experience=user.experience,
        idle=idle,
        login=user.login_time,
        hostname=user.host,
        client=user.client,
        email=user.address,
    )


@dataclass(frozen=True, slots=True)
class _WhoLineParts:
    """A CLIP 5 line split around its idle field (the 8th of its 12 fields)."""

    key: tuple[object, ...]
    """The values the line was made from (:meth:`Session._who_key`)."""
    head: str
    """``5 name opponent watching ready away rating experience `` (ends in a space)."""
    tail: str
    """`` login hostname client email`` (starts with a space)."""

    @classmethod
    def of(cls, key: tuple[object, ...], info: WhoInfo) -> _WhoLineParts:
        """The parts of ``info``'s line around its idle field."""
        head, tail = info.around_idle()
        return cls(key, head, tail)
