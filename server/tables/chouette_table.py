"""A running chouette table: :class:`LiveChouette`, its settings words and its views.

The rules are the core's (:class:`backgammon.chouette.Chouette`, docs/chouette.md); this
module holds what the server adds around one table: who opened it and whom they
invited, its :class:`~server.tables.sides.Sides` (the box's side and the
team's, the acting captain acting for it), and the views a viewer gets: the board of
a member from the captain's side whose cube fields are the member's own cube (D311),
and the board states they are drawn from. Plain reads of the core: nothing here changes
a table (:mod:`server.tables.chouette_commands` does).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from backgammon.board import Colour, Position
from backgammon.chouette import Chouette
from backgammon.chouette_state import BOX, TEAM, ChouettePhase, Cube, CubeOwner
from backgammon.fair_dice import FairDice
from protocol.board_view import NO_DICE, BoardState, SideState
from protocol.match_view import board_lines
from server.tables.chouette_timers import ChouetteClock
from server.tables.sides import Side, Sides

_START_BOARD = Position.start().fibs_board(0)
"""The opening table's 26 numbers (between games, as a match shows, D101)."""


# -- the live table -------------------------------------------------------------------------


@dataclass(eq=False)
class LiveChouette:
    """One chouette table of this process: the core and what the server keeps with it."""

    host: str
    """Who opened it: the table's name (``chouette join <host>``, ``show chouette``)."""
    core: Chouette
    invited: set[str] = field(default_factory=set)
    """Invited and not yet joined (D304)."""
    table_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held from an action to its announcement (the save between them is awaited)."""
    clock: ChouetteClock | None = None
    """The table's timers (D360), set by :mod:`server.tables.chouette_commands`."""
    next_seed: bytes | None = field(default=None, repr=False)
    """The server seed of the next game: its commitment is told (D352), the seed is
    secret. None: the table rolls a test's dice, without proofs."""
    dice: FairDice | None = None
    """The dice of the game under way (or of the last draw of the seats), until its seed
    is revealed (D354)."""
    seeded: tuple[str, ...] = ()
    """Whose seeds ``dice`` has, in the HMAC message's order: the players at the table
    when its game started (D353)."""
    epoch: int | None = None
    """The fencing token this node took the table with (D439,
    :meth:`db.repository.Database.claim_table`); None on a server of one process."""

    def present(self) -> tuple[str, ...]:
        """Everyone at the table who has not left it, in the core's order."""
        core = self.core
        return tuple(p for p in core.players if core.at_table(p))

    def sides(self) -> Sides | None:
        """The box's side (with the partner) and the team's, the acting captain acting
        for it; None before the first draw seats anyone."""
        seats = self.core.seats
        if seats is None or not seats.line:
            return None
        box = Side((seats.box, seats.partner) if seats.partner else (seats.box,), seats.box)
        captain = self.core.acting_captain() or seats.line[0]
        return Sides(box, Side(seats.line, captain if captain in seats.line else seats.line[0]))

    def counterpart(self, name: str) -> str:
        """Whom ``name`` plays against, for ``who`` (D312): the box for the team and the
        waiting, the captain for the box and its partner; before the first draw, the
        opener, and for the opener the first who joined (themselves when alone)."""
        core = self.core
        seats = core.seats
        if seats is None:
            if name != self.host:
                return self.host
            others = [p for p in self.present() if p != name]
            return others[0] if others else name
        if name in (seats.box, seats.partner):
            return core.acting_captain() or (seats.line[0] if seats.line else name)
        return seats.box

    # -- views (D308, D311) ---------------------------------------------------------------

    def cube_of_view(self, viewer: str | None) -> str | None:
        """Whose cube a viewer's board shows: a member's own; for the box (its partner,
        their watchers) the first team double it must answer, if any; else the acting
        captain's (the waiting too)."""
        core = self.core
        if viewer is not None and viewer in core.cubes:
            return viewer
        if core.phase is ChouettePhase.BOX_ANSWER and core.team_doubles:
            return core.team_doubles[0]
        captain = core.acting_captain()
        if captain in core.cubes:
            return captain
        return next(iter(core.cubes), None)

    def board_state(self, cube_member: str | None) -> BoardState:
        """The board with ``cube_member``'s cube (the box is O, the team X, D311)."""
        core = self.core
        seats = core.seats
        box = seats.box if seats else self.host
        captain = core.acting_captain() or (seats.line[0] if seats and seats.line else box)
        phase = core.phase
        if phase is ChouettePhase.WAITING:
            return BoardState(
                o=SideState(box, 0, NO_DICE, True),
                x=SideState(captain, 0, NO_DICE, True),
                board=_START_BOARD,
                match_length=None,
            )
        cube = core.cubes.get(cube_member or "", Cube())
        pending: Colour | None = None
        if cube_member is not None:
            if cube_member in core.team_doubles and phase is ChouettePhase.BOX_ANSWER:
                pending = Colour.O
            offer = core.box_offer
            if (
                offer is not None
                and cube_member in offer.members
                and cube_member not in core.answers
            ):
                pending = Colour.X
        o_may = pending is None and cube.owner is not CubeOwner.MEMBER
        x_may = pending is None and cube.owner is not CubeOwner.BOX
        dice = core.dice
        rolled = (dice.d1, dice.d2) if dice is not None and phase is ChouettePhase.MOVE else NO_DICE
        turn_side = core.turn
        if phase is ChouettePhase.TEAM_ANSWER:
            turn_side = TEAM
        elif phase in (ChouettePhase.BOX_ANSWER, ChouettePhase.RACCOON, ChouettePhase.AUTO_DOUBLE):
            turn_side = BOX
        return BoardState(
            o=SideState(box, 0, rolled if core.turn == BOX else NO_DICE, o_may),
            x=SideState(captain, 0, rolled if core.turn == TEAM else NO_DICE, x_may),
            board=core.position.fibs_board(BOX),
            match_length=None,
            turn=Colour.O if turn_side == BOX else Colour.X,
            cube=cube.value,
            doubled=pending,
            can_move=core.moves_required() if phase is ChouettePhase.MOVE else 0,
            redoubles=1 if core.settings.beavers else 0,
        )

    def board_for(self, viewer: str, style: int, *, watching: str | None = None) -> list[str]:
        """``viewer``'s board (D311): the box's side for the box and its partner, the
        team's (the captain's) for the line and the waiting; ``You`` for the one who
        acts for their side; a watcher sees the side and cube of whom they watch."""
        core = self.core
        seats = core.seats
        seen = watching or viewer
        box_side = seats is not None and seen in (seats.box, seats.partner)
        colour = Colour.O if box_side else Colour.X
        acting = (seats.box if box_side else core.acting_captain()) if seats else None
        you = watching is None and viewer == acting
        state = self.board_state(self.cube_of_view(seen))
        return board_lines(state, colour, style, you=you)
