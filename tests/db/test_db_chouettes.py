"""Chouette tables and their records (revision 0010, D362, D363): a table saved with the
players at it and found by any of them, replaced at each save, deleted when nobody is
left; each finished game's results stored with the save that finished it, and summed
into the standings per table and per player."""

from __future__ import annotations

import pytest

from db.errors import ConstraintViolation, UnknownUserError
from db.records import ChouetteRecord, ChouetteStanding, SavedChouette
from db.repository import Database


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("ann", "bob", "cat"):
        await database.create_user(name, "h")
    return database


async def test_a_saved_table_is_found_by_its_players_until_deleted(users: Database) -> None:
    await users.save_chouette("t1", "ann", ("ann", "bob", "cat"), '{"a": 1}')
    assert await users.load_chouette_of("bob") == SavedChouette("t1", "ann", '{"a": 1}')
    await users.save_chouette("t1", "ann", ("ann", "cat"), '{"a": 2}')  # bob left
    assert await users.load_chouette_of("bob") is None
    assert await users.load_chouette_of("cat") == SavedChouette("t1", "ann", '{"a": 2}')
    await users.save_chouette("t1", "ann", (), '{"a": 3}')  # the last left: deleted
    assert await users.load_chouette_of("cat") is None


async def test_a_table_of_someone_unknown_is_refused(users: Database) -> None:
    with pytest.raises(UnknownUserError, match="zed"):
        await users.save_chouette("t1", "ann", ("ann", "zed"), "{}")
    assert await users.load_chouette_of("ann") is None


async def test_standings_per_table_and_per_player(users: Database) -> None:
    one = ("ann", "bob")
    await users.save_chouette("t1", "ann", one, "{}", finished=(1, [("ann", "box", -2)]))
    await users.save_chouette("t1", "ann", one, "{}", finished=(2, [("ann", "line", 3)]))
    await users.save_chouette("t2", "cat", ("cat",), "{}", finished=(1, [("ann", "box", 4)]))
    await users.save_chouette("t1", "ann", one, "{}", finished=(3, [("bob", "box", -1)]))
    with pytest.raises(ConstraintViolation):  # stored already: the save is not made
        await users.save_chouette("t1", "ann", ("ann",), "{}", finished=(2, [("ann", "x", 3)]))
    assert await users.load_chouette_of("bob") == SavedChouette("t1", "ann", "{}")
    assert await users.chouette_standings("t1") == [
        ChouetteStanding("ann", 2, 1),
        ChouetteStanding("bob", 1, -1),
    ]
    assert await users.chouette_record("ann") == ChouetteRecord("ann", 2, 3, 5)
    assert await users.chouette_record("dan") == ChouetteRecord("dan", 0, 0, 0)
