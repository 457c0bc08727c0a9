"""Shared helpers for the rules-core tests: building positions by hand."""

from __future__ import annotations

from backgammon.board import BAR, OFF, Position


def side(points: dict[int, int], *, bar: int = 0) -> list[int]:
    """26 counts of one side from ``{own point: checkers}``; the rest are borne off."""
    counts = [0] * 26
    for point, n in points.items():
        counts[point] = n
    counts[BAR] = bar
    counts[OFF] = 15 - sum(counts)
    return counts


def position(
    mine: dict[int, int], theirs: dict[int, int], *, my_bar: int = 0, their_bar: int = 0
) -> Position:
    """Player 0 has ``mine``, player 1 ``theirs``, each in their own numbering."""
    return Position.from_counts(side(mine, bar=my_bar), side(theirs, bar=their_bar))
