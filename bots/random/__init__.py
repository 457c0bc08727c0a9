"""The random bot: a uniformly random legal play, never doubles, always takes.

A baseline opponent and a load generator. It accepts every invitation and every
resignation. ``python -m bots.random --host H --port P --name N --password W [--seed S]``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import Play
from bots.strategy import BaseStrategy
from protocol.board_view import BoardView


class RandomStrategy(BaseStrategy):
    """Chooses uniformly among the distinct legal plays; ``seed`` makes it reproducible."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    async def choose_play(
        self, position: Position, roll: Roll, plays: Sequence[Play], view: BoardView
    ) -> Play:
        return self.rng.choice(plays)
