"""Shared helpers for the rules-core tests: building positions by hand, random play."""

from __future__ import annotations

import random

from backgammon.board import BAR, OFF, Position
from backgammon.events import WinKind
from backgammon.match import Action, Match


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


def random_action(match: Match, rng: random.Random) -> bool:
    """One random action of whoever must act (or the next game), any the rules allow now,
    resignations and instant redoubles too; False when the match is over."""
    player = match.to_act
    if player is None:
        if Action.START_GAME not in match.allowed(0):
            return False
        match.start_game()
        return True
    allowed = match.allowed(player)
    if Action.ACCEPT_RESIGNATION in allowed:
        if rng.random() < 0.5:
            match.accept_resignation(player)
        else:
            match.reject_resignation(player)
    elif Action.REDOUBLE in allowed and rng.random() < 0.3:
        match.redouble(player)
    elif Action.TAKE in allowed:
        match.take(player) if rng.random() < 0.7 else match.drop(player)
    elif Action.DOUBLE in allowed and rng.random() < 0.08:
        match.double(player)
    elif Action.ROLL in allowed:
        match.roll(player)
    elif Action.RESIGN in allowed and rng.random() < 0.01:
        match.resign(player, rng.choice(list(WinKind)))
    else:
        match.move(player, rng.choice(match.legal_plays()).moves)
    return True
