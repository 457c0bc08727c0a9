"""Running matches, invitations, and how a match is stored between sessions.

A :class:`LiveMatch` wraps the rules core's :class:`~backgammon.match.Match` with the
two players' names, the watchers' names and a lock that serialises the players' actions.
It is written to the database after every action, before anything is announced: a crash
never loses a move a client saw. A save stores the state (the core's JSON without the
events, plus the names) and appends the events since the last save as rows
(:meth:`LiveMatch.next_save`), so it costs the same however long the match is;
:meth:`LiveMatch.from_saved` puts the two back together (docs/database.md).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from backgammon.board import Player
from backgammon.dice import DiceRoller
from backgammon.errors import SnapshotError
from backgammon.events import Event, events_json_text
from backgammon.match import Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json_text
from db.records import SavedEvents, SavedMatch
from protocol.replies import Toggle
from server.config import RulesDefaults
from server.tables.match_boards import BoardFrame, MatchBoards
from server.tables.sides import OPPOSITE, Sides
from server.world.presence import Peer, Presence

WHOLE_SNAPSHOT_VERSION = 1
"""The version of the whole match in one text (:meth:`LiveMatch.snapshot`: the names, the
start and the core's snapshot, whose own version is
:data:`backgammon.snapshot.SNAPSHOT_VERSION`): match records, exports, and saved matches
stored before their events became rows."""
SAVED_STATE_VERSION = 2
"""A saved match's state without its events, which are rows (:meth:`LiveMatch.next_save`)."""

_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""The stored snapshot's JSON form (compact), as ``json.dumps(separators=(",", ":"))``."""


@dataclass
class Invitation:
    """``inviter`` invited ``invitee``; ``length`` None is unlimited; ``resume`` a saved match."""

    inviter: str
    invitee: str
    length: int | None
    resume: bool = False
    rules: RulesDefaults | None = None
    """Rules chosen with the invitation (D56); None keeps fibs.conf's."""
    rule_words: tuple[str, ...] = ()
    """The rule words as given, for the ``** Match rules:`` line."""
    replaces_saved: bool = False
    """A new match while the pair had a saved match when invited: joining deletes it."""
    server_seed: bytes | None = field(default=None, repr=False)
    """A new match's dice seed, drawn and committed with the invitation (None: a resume,
    or a test's dice); secret, so out of the ``repr`` (:mod:`server.tables.dice_proof`)."""


_Mark = tuple[list[Event], int, Event | None]
"""A game's event list as saved: the list, how many of its events, the last of them."""


@dataclass(slots=True)
class MatchSave:
    """What one save of a running match writes (:meth:`LiveMatch.next_save`).

    Made at every action, and not changed once made: slotted, not ``frozen``, whose
    fields each cost an ``object.__setattr__`` (:mod:`server.tables.updates`)."""

    state: str
    """The saved state: :data:`SAVED_STATE_VERSION` text, the match without its events."""
    events: tuple[SavedEvents, ...]
    """The events not saved yet, one row per game they belong to."""
    append: bool
    """True: add ``events`` to the stored ones; False: they replace them all."""
    marks: tuple[_Mark, ...]
    """Every game's events as saved once this save is committed."""


class MatchClock(Protocol):
    """A running match's reminder and time-out (D55; :mod:`server.tables.match_timers`)."""

    def restart(self) -> None:
        """Start the time anew for whoever must act now."""
        ...

    def stop(self) -> None:
        """No notice until the next :meth:`restart`."""
        ...


@dataclass(eq=False)
class LiveMatch:
    """A match being played by two logged-in users."""

    names: tuple[str, str]
    match: Match
    started_at: int
    """Unix time the match began (the App's clock), kept across resumes."""
    table_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    """The table's id: what its updates name, the key of its saved match and, at its
    end, in its record; kept across resumes (32 lower-case hexadecimal digits)."""
    watchers: set[str] = field(default_factory=set)
    """The names of the users who watch a player of this match (:func:`watchers_at`).

    Names, not sessions or peers: a name is plain data that stays right when the
    watcher is on another node (a bus back end may give a new :class:`Peer` view at
    each look-up) or a second login replaced their session; the presence turns it into
    the user as they are now. A name whose user no longer watches a player (that user
    logged in again meanwhile) is skipped (:func:`watchers_at`)."""
    joined: set[Player] = field(default_factory=set)
    """Players who typed ``join`` for the next game (§4.8)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    clock: MatchClock | None = field(default=None, repr=False)
    """The reminder and time-out for the player who must act (D55), once started."""
    boards: MatchBoards = field(default_factory=MatchBoards, repr=False)
    """The boards of the match's current state (:meth:`board_frame`)."""
    sides: Sides = field(init=False, repr=False)
    """Who sits at the table by side (:mod:`server.tables.sides`): at a match each player
    alone on theirs, in the rules core's order, as :attr:`names`."""
    record_id: int | None = None
    """The finished match's record, once its last save stored it (``show dice``)."""
    epoch: int | None = None
    """The fencing token this node took the table with (:meth:`db.repository.Database.claim_table`),
    checked by every save and by the end; None before it is taken."""
    _head_text: tuple[tuple[tuple[str, str], int], str] | None = field(default=None, repr=False)
    """The saved state's text between the version and the games, with the names and start
    time it is of."""
    _saved: tuple[_Mark, ...] | None = field(default=None, repr=False)
    """Every game's events as the database has them; None: unknown, the next save
    replaces them all."""

    def player_of(self, name: str) -> Player:
        """The player index of ``name``.

        :raises ValueError: ``name`` does not play in this match.
        """
        if name == self.names[0]:
            return 0
        if name == self.names[1]:
            return 1
        raise ValueError(f"{name!r} does not play in this match")

    def __post_init__(self) -> None:
        self.sides = Sides.of_match(self.names)

    def opponent_of(self, name: str) -> str:
        return self.names[OPPOSITE[self.player_of(name)]]

    @property
    def length(self) -> int | None:
        """The match length for texts: None for unlimited."""
        return self.match.options.length or None

    def board_frame(self) -> BoardFrame:
        """The match's state now with its boards, read once per state of the match."""
        return self.boards.frame(self.match, self.names)

    def snapshot(self) -> str:
        """The whole match: names, start time and the core's snapshot, as compact JSON
        text (version 1). Made once per match, for its record at the end; a running
        match is saved with :meth:`next_save`."""
        return (
            f'{{"version":{WHOLE_SNAPSHOT_VERSION},{self._head()},'
            f'"match":{match_to_json_text(self.match)}}}'
        )

    def next_save(self) -> MatchSave:
        """What the next save writes: the state, and the events the database lacks.

        Events are only ever appended to a game, and a finished game's list is the one
        that was the current game's; so the events to write are those past each game's
        mark. Anything else (a first save, a failed one, a list replaced or shortened)
        makes a save that replaces every event row.
        """
        match = self.match
        games = [*match.history, match.record]
        saved = self._saved
        append = saved is not None and _unchanged(saved, games)
        rows: list[SavedEvents] = []
        for index, game in enumerate(games):
            done = saved[index][1] if append and saved and index < len(saved) else 0
            if len(game) > done:
                rows.append(SavedEvents(index, done, events_json_text(game[done:])))
        count = sum(len(game) for game in games)
        state = (
            f'{{"version":{SAVED_STATE_VERSION},{self._head()},"games":{len(games) - 1},'
            f'"events":{count},"match":{match_to_json_text(match, events=False)}}}'
        )
        marks = tuple((game, len(game), game[-1] if game else None) for game in games)
        return MatchSave(state, tuple(rows), append, marks)

    def saved(self, save: MatchSave) -> None:
        """``save`` is committed: the next one appends to it."""
        self._saved = save.marks

    def save_unknown(self) -> None:
        """A save failed or its outcome is unknown: the next one replaces every event."""
        self._saved = None

    def _head(self) -> str:
        """The saved state's keys between the version and the games, as JSON text."""
        key = (self.names, self.started_at)
        if self._head_text is None or self._head_text[0] != key:
            # Made once per match: only the match part changes from action to action.
            head = {"players": list(self.names), "started_at": self.started_at}
            self._head_text = (key, _COMPACT.encode(head)[1:-1])
        return self._head_text[1]

    @classmethod
    def from_saved(cls, saved: SavedMatch, roller: DiceRoller) -> LiveMatch:
        """Restore a stored match: a saved state with its event rows, or (stored before
        events were rows) a whole snapshot.

        :raises SnapshotError: the stored data is not a match this server can resume.
        """
        data = whole_snapshot(saved)
        try:
            players = data["players"]
            if sorted(players) != sorted((saved.player1, saved.player2)):
                raise SnapshotError("the saved match's players do not match its pair")
            match = match_from_json(data["match"], roller)
            started = int(data["started_at"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SnapshotError(f"not a saved match: {exc}") from exc
        return cls((players[0], players[1]), match, started_at=started, table_id=saved.table_id)


def whole_snapshot(saved: SavedMatch) -> dict[str, Any]:
    """A stored match as the data of :meth:`LiveMatch.snapshot` (version 1), whichever
    form it was stored in: a saved state with its event rows, or a whole snapshot.

    :raises SnapshotError: the stored data is not a saved match of this server.
    """
    try:
        data: dict[str, Any] = json.loads(saved.snapshot)
        version = data.get("version")
        if version == SAVED_STATE_VERSION:
            _put_events(data, saved.events)
        elif version != WHOLE_SNAPSHOT_VERSION:
            raise SnapshotError(f"unknown saved match version {version!r}")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SnapshotError(f"not a saved match: {exc}") from exc
    return data


def _unchanged(saved: tuple[_Mark, ...], games: list[list[Event]]) -> bool:
    """Whether each game saved is still the same list, holding at least the events saved.

    A game saved with no events may be another list now (a game starts with a new one).
    """
    if len(saved) > len(games):
        return False
    for (events, count, last), game in zip(saved, games, strict=False):
        if count and (game is not events or len(game) < count or game[count - 1] is not last):
            return False
    return True


def _put_events(data: dict[str, Any], rows: tuple[SavedEvents, ...]) -> None:
    """Put a saved state's event rows into its match, as its record and history.

    :raises SnapshotError: rows missing, overlapping or out of the match's games.
    """
    finished = data.pop("games")
    if not isinstance(finished, int) or finished < 0:
        raise SnapshotError(f"not a number of games: {finished!r}")
    games: list[list[Any]] = [[] for _ in range(finished + 1)]
    for row in rows:
        if not 0 <= row.game <= finished or row.first_event != len(games[row.game]):
            raise SnapshotError(
                f"the saved match's events do not fit at {row.game}/{row.first_event}"
            )
        games[row.game].extend(json.loads(row.events))
    if sum(len(game) for game in games) != data.pop("events"):
        raise SnapshotError("the saved match's events are incomplete")
    data["version"] = WHOLE_SNAPSHOT_VERSION
    data["match"]["history"] = games[:finished]
    data["match"]["record"] = games[finished]


def watchers_at(
    presence: Presence, players: Collection[str], watchers: Iterable[str]
) -> list[Peer]:
    """The users of ``watchers`` who watch one of ``players`` now, as ``presence`` has
    them (a name whose user watches no player here any more is skipped)."""
    peers = (presence.get(name) or presence.visitor(name) for name in watchers)
    return [p for p in peers if p is not None and p.watching in players]


def match_options(
    length: int | None,
    rules: RulesDefaults,
    first: Peer,
    second: Peer,
    *,
    chosen: bool = False,
) -> MatchOptions:
    """The rules of a new match between ``first`` and ``second``.

    Crawford is used if either player has ``toggle crawford`` on (§6.8); in unlimited
    matches the instant redoubles are the smaller of the players' ``set redoubles``
    (§4.6) and automatic doubles need both players' ``autodouble`` (§4.15) unless the
    rules were ``chosen`` with the invitation (D56). The rest comes from ``rules``.

    :raises MatchOptionsError: rules that do not fit the length.
    """
    unlimited = length is None
    limits = [s.settings.redoubles for s in (first, second)]
    redoubles: int | None = 0
    if unlimited:
        finite = [n for n in limits if n is not None]
        redoubles = min(finite) if finite else None
    both_auto = chosen or (first.toggles[Toggle.AUTODOUBLE] and second.toggles[Toggle.AUTODOUBLE])
    return MatchOptions(
        length=length or 0,
        crawford=first.toggles[Toggle.CRAWFORD] or second.toggles[Toggle.CRAWFORD],
        holland=rules.holland and (chosen or not unlimited),
        jacoby=rules.jacoby and (chosen or unlimited),
        instant_redoubles=redoubles,
        auto_doubles=rules.auto_doubles if (chosen or unlimited) and both_auto else 0,
        cube_limit=rules.cube_limit,
        dead_cube_doubles=rules.dead_cube_doubles,
    )
