"""Random play through every kind of match action, for the tests of stored matches."""

from __future__ import annotations

import random
from collections import Counter

from backgammon.events import WinKind
from backgammon.match import Action, Match, MatchOptions


def random_action(match: Match, rng: random.Random, cube_rate: float, seen: Counter[str]) -> bool:
    """Make one random allowed action (or start the next game); False when the match is
    over. ``cube_rate`` is how often a cube or resignation action is chosen when a roll
    or a move is also possible: low values give long games, high ones many short ones.
    """
    player = match.to_act
    if player is None:
        if Action.START_GAME not in match.allowed(0):
            return False
        match.start_game()
        seen["start_game"] += 1
        return True
    allowed = sorted(match.allowed(player), key=lambda a: a.value)
    plain: list[Action] = [a for a in allowed if a in (Action.ROLL, Action.MOVE)]
    action = rng.choice(plain) if plain and rng.random() >= cube_rate else rng.choice(allowed)
    seen[action.value] += 1
    if action is Action.MOVE:
        match.move(player, rng.choice(match.legal_plays()).moves)
    elif action is Action.RESIGN:
        match.resign(player, rng.choice(list(WinKind)))
    else:
        getattr(match, action.value)(player)
    return True


OPTIONS = [
    MatchOptions(length=1),
    MatchOptions(length=3),
    MatchOptions(length=5, holland=True),
    MatchOptions(length=7, crawford=False, cube_limit=4),
    MatchOptions(length=0, instant_redoubles=None, auto_doubles=2),
    MatchOptions(length=0, jacoby=True, instant_redoubles=1, cube_limit=16),
]
"""Match kinds the stored-match tests play: match play, Holland, a cube limit, unlimited
matches with automatic doubles, Jacoby and instant redoubles."""
