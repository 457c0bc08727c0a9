"""Users of other server nodes as this node sees them: :class:`PeerState`, what a node
publishes about one of its users, and :class:`RemotePeer`, the read-only
:class:`~server.world.presence.Peer` view of it on every other node.

A state is plain data with a JSON form (:meth:`PeerState.to_json`), so it can cross any
bus. It carries durations, never a clock reading of the node that made it: the idle time
is a number of seconds, which the receiving node counts on from the moment the state
arrived, on its own monotonic timer (issue 33, item 4).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from db.records import UserSettings
from protocol.replies import Mode, Toggle
from server.world.session import Session, who_info

Json = dict[str, Any]
"""A message's JSON form (what :func:`json.dumps` takes)."""


@dataclass(frozen=True, slots=True)
class PeerState:
    """Everything another node may read of a user (the fields of
    :class:`~server.world.presence.Peer`), as of the moment it was published."""

    name: str
    mode: Mode
    is_bot: bool
    logged_in: bool
    visitor: bool
    toggles: Mapping[Toggle, bool]
    gagged: frozenset[str]
    blinded: frozenset[str]
    settings: UserSettings
    dice_seed: str | None
    away: str | None
    opponent: str | None
    watching: str | None
    rating: float
    experience: int
    login_time: int
    idle: float
    """Seconds since the user's last line when the state was made (a duration)."""
    address: str | None
    host: str
    client: str | None

    @classmethod
    def of(cls, session: Session, now: float | None = None) -> PeerState:
        """``session``'s state now (``now``: a reading of its node's monotonic timer)."""
        return cls(
            name=session.name,
            mode=session.mode,
            is_bot=session.is_bot,
            logged_in=session.logged_in,
            visitor=session.visitor,
            toggles=dict(session.toggles),
            gagged=frozenset(session.gagged),
            blinded=frozenset(session.blinded),
            settings=session.settings,
            dice_seed=session.dice_seed,
            away=session.away,
            opponent=session.opponent,
            watching=session.watching,
            rating=session.rating,
            experience=session.experience,
            login_time=session.login_time,
            idle=(session.monotonic() if now is None else now) - session.last_input,
            address=session.address,
            host=session.host,
            client=session.client,
        )

    def to_json(self) -> Json:
        # This runs for every call to another node's table and from_json at its end
        # (docs/performance.md §23): names and enum values come from tables made once
        # (an enum's .value and Toggle(name) each cost a microsecond), and the settings
        # are read field by field (dataclasses.asdict deep-copies).
        data = {name: getattr(self, name) for name in _FIELD_NAMES}
        data["mode"] = self.mode.value
        data["toggles"] = {_TOGGLE_NAMES[t]: v for t, v in self.toggles.items()}
        data["gagged"] = sorted(self.gagged)
        data["blinded"] = sorted(self.blinded)
        settings = self.settings
        data["settings"] = {name: getattr(settings, name) for name in _SETTING_NAMES}
        return data

    @classmethod
    def from_json(cls, data: Json) -> PeerState:
        """The state ``data`` says; what a node of a later release adds (a field, a
        toggle, a setting this node does not know) is skipped, as
        :data:`server.world.bus.BUS_VERSION` promises (D424)."""
        values = {k: v for k, v in data.items() if k in _FIELDS}
        values["mode"] = Mode(data["mode"])
        values["toggles"] = {
            _TOGGLES[t]: bool(v) for t, v in data["toggles"].items() if t in _TOGGLES
        }
        values["gagged"] = frozenset(data["gagged"])
        values["blinded"] = frozenset(data["blinded"])
        settings = data["settings"]
        values["settings"] = _settings(
            tuple((k, settings[k]) for k in _SETTING_NAMES if k in settings)
        )
        return cls(**values)


_FIELD_NAMES = tuple(f.name for f in dataclasses.fields(PeerState))
_FIELDS = frozenset(_FIELD_NAMES)
_SETTING_NAMES = tuple(f.name for f in dataclasses.fields(UserSettings))
_TOGGLES = {t.value: t for t in Toggle}
"""Each toggle by its name (what this release knows)."""
_TOGGLE_NAMES = {t: t.value for t in Toggle}


@functools.lru_cache(maxsize=1024)
def _settings(values: tuple[tuple[str, Any], ...]) -> UserSettings:
    """The (frozen) settings of these values, made and checked once: most users share a
    few (what a node of a later release adds is left out by the caller, D424)."""
    return UserSettings(**dict(values))


class RemotePeer:
    """A user of another node (:class:`~server.world.presence.Peer`), as its node last
    published them. Compared and hashed by identity: one object per login, replaced in
    place by each new state of that login (:meth:`update`)."""

    __slots__ = ("_monotonic", "_received", "_who_parts", "login", "node", "stamp", "state")

    def __init__(
        self,
        state: PeerState,
        node: str,
        login: int,
        stamp: float,
        monotonic: Callable[[], float],
    ) -> None:
        self.node = node
        """The node the user is connected to."""
        self.login = login
        """The number of this login on its node: with the node, it names the login (a
        line that login sent is ordered after its notice, :mod:`server.world.cluster`)."""
        self.stamp = stamp
        """Unix time of the login on its node: who lists put users in this order."""
        self._monotonic = monotonic
        self.state = state
        self._received = monotonic()
        self._who_parts: tuple[str, str] | None = None
        """The CLIP 5 line before and after its idle field (:meth:`who_line`), made
        from ``state``; None until asked for, and again at each new state."""

    def update(self, state: PeerState) -> None:
        """A newer state of the same login arrived."""
        self.state = state
        self._received = self._monotonic()
        self._who_parts = None

    @property
    def name(self) -> str:
        return self.state.name

    @property
    def mode(self) -> Mode:
        return self.state.mode

    @property
    def clip(self) -> bool:
        return self.state.mode is Mode.CLIP

    @property
    def is_bot(self) -> bool:
        return self.state.is_bot

    @property
    def logged_in(self) -> bool:
        return self.state.logged_in

    @property
    def closed(self) -> bool:
        return False

    @property
    def visitor(self) -> bool:
        return self.state.visitor

    @property
    def toggles(self) -> Mapping[Toggle, bool]:
        return self.state.toggles

    @property
    def gagged(self) -> AbstractSet[str]:
        return self.state.gagged

    @property
    def blinded(self) -> AbstractSet[str]:
        return self.state.blinded

    @property
    def settings(self) -> UserSettings:
        return self.state.settings

    @property
    def dice_seed(self) -> str | None:
        return self.state.dice_seed

    @property
    def away(self) -> str | None:
        return self.state.away

    @property
    def opponent(self) -> str | None:
        return self.state.opponent

    @property
    def watching(self) -> str | None:
        return self.state.watching

    @property
    def rating(self) -> float:
        return self.state.rating

    @property
    def experience(self) -> int:
        return self.state.experience

    @property
    def login_time(self) -> int:
        return self.state.login_time

    @property
    def address(self) -> str | None:
        return self.state.address

    @property
    def host(self) -> str:
        return self.state.host

    def idle_seconds(self, now: float | None = None) -> int:
        """The published idle time, counted on from its arrival on this node's timer."""
        now = self._monotonic() if now is None else now
        return max(int(self.state.idle + now - self._received), 0)

    def who_line(self, now: float | None = None) -> str:
        """The CLIP 5 line, from its parts around the idle field made once per state
        (as :meth:`Session.who_line`): every login's who list has a line of every user
        of every node, so a node of many makes this the most of all its lines."""
        parts = self._who_parts
        if parts is None:
            parts = self._who_parts = who_info(self.state, 0).around_idle()
        return f"{parts[0]}{self.idle_seconds(now)}{parts[1]}"
