"""Settling one match action: what its events change besides the match itself.

An action's events (the player's and the server's follow-up steps, :mod:`server.tables.match_flow`)
are settled before the match is saved: the dice rolled are counted for ``dicetest``, a
game's end clears the ``join`` marks of the game before, and a match's end is rated.
The rating is computed here from the players' ratings as the presence has them and stored
with the finished match (:func:`rating_updates`), in a transaction that checks they are
the stored ones; when they are not (a player who left, another node's view), the match
is rated again from the stored ones (:func:`rerated`) and stored with those. The players
take their new ratings (through the presence) only once that save succeeded
(:func:`apply_ratings`), so a failed save changes no one's rating. Announcing
(:mod:`server.tables.announce`) reads the :class:`Settlement` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from backgammon.board import Player
from backgammon.events import DiceRolled, Event, GameWon, MatchWon, OpeningRoll
from backgammon.match import Phase
from backgammon.rating import INITIAL_RATING, rate_match
from db.records import RatingUpdate
from server.tables.host import TableHost
from server.tables.matches import LiveMatch
from server.tables.sides import OPPOSITE
from server.tables.updates import UNRATED, RatedMatch, Settlement
from server.world.presence import Peer, Presence


def settle(app: TableHost, live: LiveMatch, events: Iterable[Event]) -> Settlement:
    """Count the rolls of ``events`` (one action's), clear the ``join`` marks when a game
    ended, and rate the match when it ended (a limited match only)."""
    rated = None
    for event in events:
        if isinstance(event, OpeningRoll):
            app.dice_stats.record(*event.dice)
        elif isinstance(event, DiceRolled):
            app.dice_stats.record(event.roll.d1, event.roll.d2)
        elif isinstance(event, GameWon):
            if live.match.phase is Phase.GAME_OVER:
                live.joined = set()
        elif isinstance(event, MatchWon):
            rated = _rate(app, live, event.winner)
    return UNRATED if rated is None else Settlement(rated)


def _rate(app: TableHost, live: LiveMatch, winner: Player) -> RatedMatch | None:
    """The rating change of the match ``winner`` won, from the players' ratings as the
    presence has them."""
    length = live.match.options.length
    if not length:
        return None
    names = live.names[winner], live.names[OPPOSITE[winner]]
    return _rated(length, *names, {name: _rating_of(app, name) for name in names})


def rerated(rated: RatedMatch, ratings: Mapping[str, tuple[float, int]]) -> RatedMatch:
    """The same match rated again from ``ratings`` (the stored ones)."""
    return _rated(rated.change.length, rated.winner, rated.loser, ratings)


def _rated(
    length: int, winner: str, loser: str, ratings: Mapping[str, tuple[float, int]]
) -> RatedMatch:
    was = ratings[winner], ratings[loser]
    change = rate_match(length, *was[0], *was[1])
    return RatedMatch(change, winner, loser, *was)


def _rating_of(app: TableHost, name: str) -> tuple[float, int]:
    """``name``'s rating and experience as the presence has them (a player who left:
    the initial ones, which the finishing transaction finds stale)."""
    peer = app.presence.get(name)
    if peer is None:
        return (INITIAL_RATING, 0)
    return peer.rating, peer.experience


def rating_updates(settlement: Settlement) -> list[RatingUpdate]:
    """The new ratings to store with the finished match (none for an unrated one)."""
    rated = settlement.rated
    if rated is None:
        return []
    change = rated.change
    return [
        RatingUpdate(
            rated.winner, change.winner_rating, change.winner_experience, rated.winner_was
        ),
        RatingUpdate(rated.loser, change.loser_rating, change.loser_experience, rated.loser_was),
    ]


def apply_ratings(
    presence: Presence, settlement: Settlement, players: Iterable[Peer | None]
) -> None:
    """The ``players`` still at the table take their new ratings (after the save
    succeeded, :meth:`~server.world.presence.Presence.set_rating`); None stands for a player
    who left."""
    rated = settlement.rated
    if rated is None:
        return
    change = rated.change
    new = {
        rated.winner: (change.winner_rating, change.winner_experience),
        rated.loser: (change.loser_rating, change.loser_experience),
    }
    for peer in players:
        if peer is not None and peer.name in new:
            presence.set_rating(peer, *new[peer.name])
