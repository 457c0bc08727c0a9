"""FIBS ratings and experience (shared/docs/fibs-protocol.md §5).

For a match of length N between ratings r1, r2 with experiences e1, e2::

    D       = |r1 - r2|
    P_upset = 1 / (10^(D * sqrt(N) / 2000) + 1)   probability that the underdog wins
    P       = 1 - P_upset if the underdog won, else P_upset
    K(e)    = max(1, 5 - e / 100)                  each player's own, pre-match experience
    winner += 4 * K(e_winner) * sqrt(N) * P
    loser  -= 4 * K(e_loser)  * sqrt(N) * P

Both experiences grow by N. Unlimited matches change nothing (§5.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from backgammon.errors import BackgammonError

INITIAL_RATING = 1500.0
"""Every new account's rating (§5.1)."""


@dataclass(frozen=True)
class RatingChange:
    """Every figure of one rated match, as the ``toggle ratings`` report shows them (§5.3)."""

    length: int
    difference: float
    """D, the absolute rating difference."""
    upset_probability: float
    """Pu, the probability that the underdog wins."""
    probability: float
    """P: 1 - Pu if the underdog won, Pu if the favourite won."""
    winner_k: float
    loser_k: float
    winner_change: float
    loser_change: float
    """Negative (or zero)."""
    winner_rating: float
    loser_rating: float
    """The new ratings."""
    winner_experience: int
    loser_experience: int
    """The new experiences."""


def k_factor(experience: int) -> float:
    """K = max(1, 5 - experience / 100): 5 for a new player, 1 from 400 on."""
    return max(1.0, 5.0 - experience / 100.0)


def rate_match(
    length: int,
    winner_rating: float,
    winner_experience: int,
    loser_rating: float,
    loser_experience: int,
) -> RatingChange:
    """The rating and experience changes of a finished ``length``-point match.

    :raises BackgammonError: for an unlimited (length 0) match, which is never rated.
    """
    if length <= 0:
        raise BackgammonError("unlimited matches are not rated")
    difference = abs(winner_rating - loser_rating)
    root = math.sqrt(length)
    upset = 1.0 / (10.0 ** (difference * root / 2000.0) + 1.0)
    underdog_won = winner_rating < loser_rating
    probability = 1.0 - upset if underdog_won else upset
    winner_k = k_factor(winner_experience)
    loser_k = k_factor(loser_experience)
    gain = 4.0 * winner_k * root * probability
    loss = -4.0 * loser_k * root * probability
    return RatingChange(
        length=length,
        difference=difference,
        upset_probability=upset,
        probability=probability,
        winner_k=winner_k,
        loser_k=loser_k,
        winner_change=gain,
        loser_change=loss,
        winner_rating=winner_rating + gain,
        loser_rating=loser_rating + loss,
        winner_experience=winner_experience + length,
        loser_experience=loser_experience + length,
    )
