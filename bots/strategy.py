"""What a bot decides, as a protocol: the one thing a new bot has to write.

:class:`bots.client.FibsClient` does all the talking; it calls a :class:`Strategy` when a
decision is due and turns the answer into a FIBS command. Positions come oriented for the
bot: the bot is player :data:`ME` (0), the opponent :data:`OPPONENT` (1), both in their own
numbering (:mod:`backgammon.board`), whatever colour the bot has on the server.

:class:`BaseStrategy` gives every decision a polite default (accept every invitation,
never double, always take, accept every resignation); a bot subclasses it and writes
:meth:`Strategy.choose_play`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final, Protocol

from backgammon.board import Player, Position
from backgammon.dice import Roll
from backgammon.moves import Play
from protocol.board_view import BoardView

ME: Final[Player] = 0
"""The bot's player index in the positions a strategy gets."""
OPPONENT: Final[Player] = 1
"""The opponent's player index."""


class CubeAnswer(enum.Enum):
    """The answer to a double (§4.6): the FIBS command each one sends."""

    TAKE = "accept"
    DROP = "reject"
    BEAVER = "beaver"
    """An instant redouble; only in unlimited matches that allow redoubles (the client
    sends ``accept`` instead when the board says none are allowed)."""


class Strategy(Protocol):
    """The decisions of a bot. Every method may take its time: the client keeps reading
    the server meanwhile and drops an answer that a newer board has made stale."""

    jacoby: bool
    """The Jacoby rule of the money game the cube decisions are for (gammons count only
    once the cube was turned): off for FIBS's matches, which have none; a chouette bot
    sets it from its table's rules (docs/bots.md, "At a chouette")."""

    async def accept_invitation(self, name: str, length: int | None) -> bool:
        """Join ``name``'s invitation to a ``length``-point match (None: unlimited)?"""
        ...

    async def choose_play(
        self, position: Position, roll: Roll, plays: Sequence[Play], view: BoardView
    ) -> Play:
        """One of ``plays`` (the legal plays of ``roll`` for player :data:`ME`, never
        empty). ``view`` is the whole board (score, cube, colours)."""
        ...

    async def should_double(self, view: BoardView) -> bool:
        """Double now (the bot may double and has not rolled)?"""
        ...

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        """The opponent doubled (``view.was_doubled``): take, drop or beaver."""
        ...

    async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
        """The opponent offers to resign and give ``points``: accept? ``view`` is the last
        board seen, if any."""
        ...


class BaseStrategy:
    """Defaults for every decision except :meth:`choose_play`."""

    jacoby: bool = False

    async def accept_invitation(self, name: str, length: int | None) -> bool:
        return True

    async def choose_play(
        self, position: Position, roll: Roll, plays: Sequence[Play], view: BoardView
    ) -> Play:
        raise NotImplementedError

    async def should_double(self, view: BoardView) -> bool:
        return False

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        return CubeAnswer.TAKE

    async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
        return True
