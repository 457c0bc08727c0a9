"""The ``ratings`` list: experience above 50 only, best first, with ranks."""

from __future__ import annotations

import pytest

from db.records import RatingEntry
from db.repository import Database

PLAYERS = [
    # name, rating, experience
    ("NIHILIST", 2295.11, 7274),
    ("newbie", 1900.0, 50),  # not on the list: experience must be above 50
    ("steady", 1650.25, 51),
    ("Zed", 1500.0, 300),
    ("abe", 1500.0, 300),  # same rating and experience as Zed: code point order, Z < a
    ("veteran", 1500.0, 900),  # same rating, more experience: ahead of both
    ("low", 1200.5, 75),
]


@pytest.fixture
async def players(database: Database) -> Database:
    for name, rating, experience in PLAYERS:
        await database.create_user(name, "h", rating=rating, experience=experience)
    return database


async def test_list_order_and_filter(players: Database) -> None:
    assert await players.rating_list() == [
        RatingEntry(1, "NIHILIST", 2295.11, 7274),
        RatingEntry(2, "steady", 1650.25, 51),
        RatingEntry(3, "veteran", 1500.0, 900),
        RatingEntry(4, "Zed", 1500.0, 300),
        RatingEntry(5, "abe", 1500.0, 300),
        RatingEntry(6, "low", 1200.5, 75),
    ]
    assert await players.count_rated_players() == 6


async def test_ranges_keep_their_ranks(players: Database) -> None:
    page = await players.rating_list(start=3, count=2)
    assert [(entry.rank, entry.name) for entry in page] == [(3, "veteran"), (4, "Zed")]
    assert await players.rating_list(start=7, count=20) == []
    assert await players.rating_list(count=0) == []
    with pytest.raises(ValueError):
        await players.rating_list(start=0)


async def test_rating_changes_reorder_the_list(players: Database) -> None:
    await players.update_rating("low", 2300.0, 80)
    await players.update_rating("newbie", 1900.0, 51)
    names = [entry.name for entry in await players.rating_list(count=3)]
    assert names == ["low", "NIHILIST", "newbie"]


async def test_entry_of_one_player(players: Database) -> None:
    assert await players.rating_entry("abe") == RatingEntry(5, "abe", 1500.0, 300)
    assert await players.rating_entry("NIHILIST") == RatingEntry(1, "NIHILIST", 2295.11, 7274)
    # Not on the list: the rank it would have there.
    assert await players.rating_entry("newbie") == RatingEntry(2, "newbie", 1900.0, 50)
    assert await players.rating_entry("nobody") is None


async def test_the_threshold_can_be_changed(players: Database) -> None:
    names = [entry.name for entry in await players.rating_list(experience_above=0)]
    assert names[:3] == ["NIHILIST", "newbie", "steady"]
    assert await players.count_rated_players(experience_above=299) == 4
