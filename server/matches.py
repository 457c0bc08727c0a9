"""Running matches, invitations, and how a match is stored between sessions.

A :class:`LiveMatch` wraps the rules core's :class:`~backgammon.match.Match` with the
two players' names, the watchers and a lock that serialises the players' actions.
Its snapshot (the core's JSON plus the names) is written to the database after every
action, before anything is announced: a crash never loses a move a client saw.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from backgammon.board import Player
from backgammon.dice import DiceRoller
from backgammon.errors import SnapshotError
from backgammon.match import Match, MatchOptions
from db.records import SavedMatch
from server.config import RulesDefaults
from server.session import Session

SNAPSHOT_VERSION = 1

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


@dataclass(eq=False)
class LiveMatch:
    """A match being played by two logged-in users."""

    names: tuple[str, str]
    match: Match
    started_at: int = field(default_factory=lambda: int(time.time()))
    watchers: set[Session] = field(default_factory=set)
    joined: set[Player] = field(default_factory=set)
    """Players who typed ``join`` for the next game (§4.8)."""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    watchdog: asyncio.TimerHandle | None = None
    """The pending reminder or timeout notice for the player who must act (D55)."""
    _head_text: tuple[tuple[tuple[str, str], int], str] | None = field(default=None, repr=False)
    """The stored form's text before the match, with the names and start time it is of."""

    def player_of(self, name: str) -> Player:
        """The player index of ``name``.

        :raises ValueError: ``name`` does not play in this match.
        """
        if name == self.names[0]:
            return 0
        if name == self.names[1]:
            return 1
        raise ValueError(f"{name!r} does not play in this match")

    def opponent_of(self, name: str) -> str:
        return self.names[1 - self.player_of(name)]

    @property
    def length(self) -> int | None:
        """The match length for texts: None for unlimited."""
        return self.match.options.length or None

    def snapshot(self) -> str:
        """The stored form: names, start time and the core's snapshot, as JSON text.

        The text is exactly ``json.dumps({"version": ..., "players": ..., "started_at":
        ..., "match": self.match.to_json()}, separators=(",", ":"))``, but the match part
        comes from :meth:`Match.to_json_text`, which keeps the text of every event
        already serialized: this runs after every action, and re-serializing the whole
        match each time cost O(moves²) per game (docs/performance.md §2).
        """
        key = (self.names, self.started_at)
        if self._head_text is None or self._head_text[0] != key:
            # Made once per match: only the match part changes from action to action.
            self._head_text = (key, _COMPACT.encode(self._head())[:-1])
        # The head without its closing brace; the match is the last key, as it always was.
        return f'{self._head_text[1]},"match":{self.match.to_json_text()}}}'

    def full_snapshot(self) -> str:
        """:meth:`snapshot` serialized whole, without any cached text: the reference the
        incremental form must equal (its tests, benchmarks/snapshot.py)."""
        return _COMPACT.encode({**self._head(), "match": self.match.to_json()})

    def _head(self) -> dict[str, Any]:
        """The stored form's keys before the match, in their order."""
        return {
            "version": SNAPSHOT_VERSION,
            "players": list(self.names),
            "started_at": self.started_at,
        }

    @classmethod
    def from_saved(cls, saved: SavedMatch, roller: DiceRoller) -> LiveMatch:
        """Restore a stored match.

        :raises SnapshotError: the stored text is not a match this server can resume.
        """
        try:
            data: dict[str, Any] = json.loads(saved.snapshot)
            if data.get("version") != SNAPSHOT_VERSION:
                raise SnapshotError(f"unknown saved match version {data.get('version')!r}")
            players = data["players"]
            if sorted(players) != sorted((saved.player1, saved.player2)):
                raise SnapshotError("the saved match's players do not match its pair")
            match = Match.from_json(data["match"], roller)
            started = int(data["started_at"])
        except (ValueError, KeyError, TypeError) as exc:
            raise SnapshotError(f"not a saved match: {exc}") from exc
        return cls((players[0], players[1]), match, started_at=started)


def match_options(
    length: int | None,
    rules: RulesDefaults,
    first: Session,
    second: Session,
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
    both_auto = chosen or (first.toggles["autodouble"] and second.toggles["autodouble"])
    return MatchOptions(
        length=length or 0,
        crawford=first.toggles["crawford"] or second.toggles["crawford"],
        holland=rules.holland and (chosen or not unlimited),
        jacoby=rules.jacoby and (chosen or unlimited),
        instant_redoubles=redoubles,
        auto_doubles=rules.auto_doubles if (chosen or unlimited) and both_auto else 0,
        cube_limit=rules.cube_limit,
        dead_cube_doubles=rules.dead_cube_doubles,
    )
