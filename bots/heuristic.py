"""A quick hand-made evaluation: the fallback when a bot's brain cannot answer.

Scores the position after a play from the mover's side: the race (pips), hits (the
opponent's checkers on the bar), the mover's blots and made points, with home-board
points and the bar point worth more. Deterministic and fast; far weaker than gnubg, far
stronger than a random play.
"""

from __future__ import annotations

from collections.abc import Sequence

from backgammon.board import BAR, OFF, Player, Position
from backgammon.moves import Play


def score(position: Position, player: Player) -> float:
    """Higher is better for ``player`` (who just moved)."""
    mine = position.counts(player)
    theirs = position.counts(1 - player)
    value = float(position.pips(1 - player) - position.pips(player))
    value += 4.0 * theirs[BAR] + 2.0 * mine[OFF]
    contact = not position.is_race()
    if contact:
        for point in range(1, 25):
            n = mine[point]
            if n == 1:
                value -= 3.0 if point <= 18 else 1.0
            elif n >= 2:
                value += 2.5 if point <= 7 else 1.0
    return value


def best_play(position: Position, player: Player, plays: Sequence[Play]) -> Play:
    """The play whose result :func:`score` likes best (the first of equals).

    :raises ValueError: if ``plays`` is empty.
    """
    if not plays:
        raise ValueError("no play to choose from")
    return max(plays, key=lambda play: score(play.result, player))
