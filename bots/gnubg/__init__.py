"""The gnubg bot: GNU Backgammon decides every move and cube action.

:class:`GnubgStrategy` asks a :class:`~bots.gnubg.engine.GnubgEngine` (a separate gnubg
process in its ``external`` socket mode) through the request lines of
:mod:`bots.gnubg.translate`, turns the answers into plays and cube decisions, and falls back
to :func:`bots.heuristic.best_play` (moves) or a safe default (cube) whenever gnubg does not
answer or answers something that is not legal.
``python -m bots.gnubg --host H --port P --name N --password W [--plies 0|1|2]``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import Play
from bots.gnubg.engine import GnubgEngine, GnubgError
from bots.gnubg.translate import (
    GnubgAnswerError,
    move_request,
    play_from_answer,
    resign_request,
    take_request,
)
from bots.heuristic import best_play
from bots.strategy import ME, BaseStrategy, CubeAnswer
from protocol.board_view import BoardView

__all__ = ["GnubgEngine", "GnubgError", "GnubgStrategy"]

log = logging.getLogger(__name__)

_CUBE_ANSWERS = {"take": CubeAnswer.TAKE, "drop": CubeAnswer.DROP, "beaver": CubeAnswer.BEAVER}


class GnubgStrategy(BaseStrategy):
    """Decisions by gnubg. Accepts every invitation (:class:`BaseStrategy`). Every request
    says the money game's Jacoby rule as :attr:`jacoby` is (off unless a chouette table's
    rules turn it on)."""

    def __init__(self, engine: GnubgEngine) -> None:
        self.engine = engine
        self.fallbacks = 0
        """Decisions gnubg could not make (for logs and tests)."""

    async def choose_play(
        self, position: Position, roll: Roll, plays: Sequence[Play], view: BoardView
    ) -> Play:
        try:
            request = move_request(view, self.engine.conventions, jacoby=self.jacoby)
            answer = await self.engine.ask(request)
            return play_from_answer(answer, position, roll, plays)
        except (GnubgError, GnubgAnswerError) as exc:
            self.fallbacks += 1
            log.warning("gnubg gave no usable move (%s); using the heuristic", exc)
            return best_play(position, ME, plays)

    async def should_double(self, view: BoardView) -> bool:
        request = move_request(view, self.engine.conventions, jacoby=self.jacoby)
        answer = await self._ask(request, "roll")
        return answer == "double"

    async def answer_double(self, view: BoardView) -> CubeAnswer:
        request = take_request(view, self.engine.conventions, jacoby=self.jacoby)
        answer = await self._ask(request, "take")
        return _CUBE_ANSWERS.get(answer, CubeAnswer.TAKE)

    async def answer_resignation(self, view: BoardView | None, points: int) -> bool:
        if view is None:
            return True
        request = resign_request(view, points, self.engine.conventions, jacoby=self.jacoby)
        answer = await self._ask(request, "accept")
        return answer != "reject"

    async def _ask(self, line: str, default: str) -> str:
        try:
            return await self.engine.ask(line)
        except GnubgError as exc:
            self.fallbacks += 1
            log.warning("gnubg did not answer (%s); %s", exc, default)
            return default
