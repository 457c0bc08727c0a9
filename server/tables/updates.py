"""One table action's outcome as data: what the owner emits after the save and every
node renders for its own users (:class:`TableUpdate`, :mod:`server.tables.edge`).

Plain values, so that the same message could cross a bus between nodes: the events of
each batch with the match as that batch left it (:class:`Moment`: the boards to draw,
the phase, the score), the server's notices between them, what the action settled
(:class:`Settlement`), the table's sides and watchers by name, and the match's version
before and after.

The carriers made at every action (:class:`Moment`, :class:`Batch`, :class:`TableUpdate`)
are slotted dataclasses that are not ``frozen``: a frozen one sets each field through
a call of ``object.__setattr__`` instead of a slot store, and three moments and batches
are made per action (made plain, with :class:`~server.tables.matches.MatchSave`: 2.9 %
fewer instructions per action, docs/performance.md §24). Nothing changes one once it is
made; the rarer values stay frozen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from backgammon.board import Player
from backgammon.events import CubeOffered, CubeRedoubled, Event, GameWon
from backgammon.match import Action, Phase
from backgammon.rating import RatingChange
from protocol.game_record import last_game
from server.tables.match_boards import BoardFrame
from server.tables.matches import LiveMatch
from server.tables.sides import Sides
from server.world.presence import Audience


@dataclass(frozen=True, slots=True)
class RatedMatch:
    """A finished match's rating change, with the players as they were rated."""

    change: RatingChange
    winner: str
    loser: str
    winner_was: tuple[float, int]
    """The winner's rating and experience the match was rated from: the stored ones,
    checked in the transaction that stores the new ones (the ``toggle ratings`` report
    shows the experience)."""
    loser_was: tuple[float, int]


@dataclass(frozen=True, slots=True)
class Settlement:
    """What one action settled: the rating of the match it ended, if it ended a rated one."""

    rated: RatedMatch | None = None


UNRATED: Final = Settlement()
"""What nearly every action settles: no rating (one value, not one made per action)."""


@dataclass(slots=True)
class Moment:
    """What announcing reads of the match as one batch of events left it.

    Taken right after the batch, because the server's follow-up steps change the match
    again before anything is announced: each batch's boards and texts show the state
    the batch made.
    """

    frame: BoardFrame
    phase: Phase
    score: tuple[int, int]
    redouble_allowed: bool
    """Whether the player now answering the cube may redouble (the offer's wording, §4.6);
    only read after a double or redouble."""
    finished_game: tuple[Event, ...]
    """The events of the game the batch ended (the ``toggle moves`` record), else empty."""
    rolled_for: bool = False
    """The server rolls for the player on turn right after this batch, without asking
    them (:func:`server.tables.match_flow.follow_up`): after ``can't move`` they get no
    board before their roll's (D277)."""

    def rolled_for_by_server(self, frame: BoardFrame) -> Moment:
        """This moment as the server rolls for the player on turn next (D277), its boards
        ``frame`` (D278); made directly, not by ``dataclasses.replace``: it runs at
        nearly every action."""
        return Moment(
            frame,
            self.phase,
            self.score,
            self.redouble_allowed,
            self.finished_game,
            rolled_for=True,
        )

    @classmethod
    def of(cls, live: LiveMatch, events: Sequence[Event]) -> Moment:
        match = live.match
        kinds = {type(e) for e in events}  # one pass, no call per event: every action
        offered = CubeOffered in kinds or CubeRedoubled in kinds
        responder = match.to_act
        ended = GameWon in kinds
        return cls(
            frame=live.board_frame(),
            phase=match.phase,
            score=(match.score[0], match.score[1]),
            redouble_allowed=(
                offered and responder is not None and match.may(responder, Action.REDOUBLE)
            ),
            finished_game=tuple(last_game(match)) if ended else (),
        )


@dataclass(slots=True)
class Batch:
    """Events that one call of the rules core returned, and the match they left."""

    events: tuple[Event, ...]
    moment: Moment


@dataclass(frozen=True, slots=True)
class Notice:
    """A line the server tells the one who acts for a side between batches (``Please
    roll or double``, ``The only possible move is ...``)."""

    side: Player
    line: str


Told = Batch | Notice
"""One item of an action's announcement, in order."""


@dataclass(slots=True)
class TableUpdate:
    """One action's outcome, emitted once by the table's owner after its save: plain data,
    from which each recipient's lines are rendered where the recipient is
    (:class:`server.tables.edge.TableEdge`), with their own settings.

    ``since`` and ``version`` are the match's :attr:`~backgammon.match.Match.version`
    before and after the action: a consumer that last saw another version than ``since``
    missed an update and asks for the table's current state instead.
    """

    table: str
    """The table's id (:attr:`server.tables.matches.LiveMatch.table_id`)."""
    sides: Sides
    """Who sits at the table, by side."""
    length: int | None
    """The match length; None: unlimited."""
    watchers: frozenset[str]
    """Who watches a player of the table (names; the presence has them as they are now)."""
    since: int
    version: int
    told: tuple[Told, ...]
    settlement: Settlement


@dataclass(frozen=True, slots=True)
class Broadcast:
    """Lines to everyone an audience selects, whichever node they are on."""

    lines: tuple[str, ...]
    audience: Audience
