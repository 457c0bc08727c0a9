"""Accounts: every stored field round-trips, names are exact, updates touch one user."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

import pytest

from db.errors import UnknownUserError, UserExistsError
from db.records import User, UserSettings
from db.repository import Database
from protocol.replies import Toggle

if TYPE_CHECKING:
    from tests.conftest import FakeClock

TOGGLES = {
    "allowpip": True,
    "autoboard": True,
    "autodouble": False,
    "automove": False,
    "bell": False,
    "crawford": True,
    "double": True,
    "greedy": False,
    "moreboards": True,
    "moves": False,
    "notify": True,
    "ratings": False,
    "ready": False,
    "report": False,
    "silent": False,
    "telnet": True,
    "wrap": False,
}


async def test_new_user_has_the_defaults(database: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    created = await database.create_user("alice", "scrypt$abc")
    assert created == User(
        name="alice",
        password_hash="scrypt$abc",
        created_at=start,
        last_login_at=None,
        last_login_host=None,
        last_logout_at=None,
        rating=1500.0,
        experience=0,
        toggles={},
        settings=UserSettings(),
        address=None,
        gagged=(),
        blinded=(),
        is_bot=False,
    )
    assert await database.get_user("alice") == created


async def test_every_field_round_trips(database: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    settings = UserSettings(
        boardstyle=1,
        linelength=80,
        pagelength=999,
        redoubles=None,
        sortwho="rrating",
        timezone="Australia/Melbourne",
    )
    await database.create_user("bob", "h0", toggles=TOGGLES, is_bot=True, created_at=1000)
    await database.create_user("carol", "h1")
    await database.create_user("dave", "h2")
    clock.advance(60)
    await database.update_login("bob", "192.168.1.30")
    clock.advance(60)
    await database.update_logout("bob")
    await database.update_rating("bob", 1618.0339887498949, 412)
    await database.save_settings("bob", {**TOGGLES, "ready": True, "bell": True}, settings)
    await database.set_password_hash("bob", "scrypt$new")
    await database.set_address("bob", "bob@example.org")
    await database.add_gag("bob", "dave")
    await database.add_gag("bob", "carol")
    await database.add_blind("bob", "carol")

    assert await database.get_user("bob") == User(
        name="bob",
        password_hash="scrypt$new",
        created_at=1000,
        last_login_at=start + 60,
        last_login_host="192.168.1.30",
        last_logout_at=start + 120,
        rating=1618.0339887498949,
        experience=412,
        toggles={**TOGGLES, "ready": True, "bell": True},
        settings=settings,
        address="bob@example.org",
        gagged=("dave", "carol"),
        blinded=("carol",),
        is_bot=True,
    )


async def test_other_users_are_untouched(database: Database) -> None:
    await database.create_user("alice", "a")
    before = await database.get_user("alice")
    await database.create_user("bob", "b")
    await database.update_rating("bob", 1400.5, 7)
    await database.set_address("bob", "x@y.z")
    await database.update_login("bob", "host", at=5)
    assert await database.get_user("alice") == before


async def test_names_are_case_sensitive(database: Database) -> None:
    """Look-alikes registered before D269 (allowed here) stay apart."""
    await database.create_user("alice", "lower")
    await database.create_user("Alice", "upper", allow_look_alikes=True)
    lower, upper = await database.get_user("alice"), await database.get_user("Alice")
    assert lower is not None and lower.password_hash == "lower"
    assert upper is not None and upper.password_hash == "upper"
    assert await database.get_user("ALICE") is None
    assert not await database.user_exists("ALICE")
    assert await database.user_exists("Alice")


async def test_a_name_that_differs_only_in_case_is_taken(database: Database) -> None:
    """D269: a new name is refused when one that differs only in case is registered;
    the look-alikes are found without regard to case, in code-point order."""
    await database.create_user("Casey", "first")
    for look_alike in ("casey", "CASEY", "cAsEy"):
        with pytest.raises(UserExistsError):
            await database.create_user(look_alike, "second")
    assert not await database.user_exists("casey")
    await database.create_user("casey", "old", allow_look_alikes=True)  # as before D269
    assert await database.names_like("CASEY") == ["Casey", "casey"]
    assert await database.names_like("casey") == ["Casey", "casey"]
    assert await database.names_like("Case") == []
    assert await database.names_like("case_y") == []


async def test_look_alikes_registered_at_once_make_one_account(database: Database) -> None:
    """Two look-alike registrations at the same moment: one is made, one refused."""
    results = await asyncio.gather(
        database.create_user("Dana", "a"),
        database.create_user("dana", "b"),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["User", "UserExistsError"]
    assert len(await database.names_like("DANA")) == 1


async def test_a_taken_name_is_refused(database: Database) -> None:
    await database.create_user("alice", "first")
    with pytest.raises(UserExistsError) as caught:
        await database.create_user("alice", "second")
    assert caught.value.name == "alice"
    user = await database.get_user("alice")
    assert user is not None and user.password_hash == "first"


async def test_unknown_users(database: Database) -> None:
    assert await database.get_user("nobody") is None
    assert not await database.user_exists("nobody")
    updates = [
        database.update_login("nobody", "h"),
        database.update_logout("nobody"),
        database.save_settings("nobody", {}, UserSettings()),
        database.set_password_hash("nobody", "h"),
        database.set_address("nobody", None),
        database.set_bot("nobody", True),
        database.update_rating("nobody", 1.0, 1),
    ]
    for update in updates:
        with pytest.raises(UnknownUserError) as caught:
            await update
        assert caught.value.name == "nobody"


async def test_address_can_be_cleared_and_bot_flag_reset(database: Database) -> None:
    await database.create_user("robot", "h", is_bot=True, address="r@b.t")
    await database.set_address("robot", None)
    await database.set_bot("robot", False)
    user = await database.get_user("robot")
    assert user is not None and (user.address, user.is_bot) == (None, False)


async def test_toggles_are_read_only_values(database: Database) -> None:
    toggles = {"ready": True}
    user = await database.create_user("alice", "h", toggles=toggles)
    toggles[Toggle.READY] = False
    assert user.toggles == {"ready": True}
    with pytest.raises(TypeError):
        user.toggles[Toggle.READY] = False  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        user.rating = 2000.0  # type: ignore[misc]


@pytest.mark.parametrize("toggles", [{"ready": 1}, {"ready": "yes"}, {1: True}])
async def test_toggle_values_must_be_bools(
    database: Database, toggles: dict[object, object]
) -> None:
    with pytest.raises(ValueError, match="toggle"):
        await database.create_user("alice", "h", toggles=toggles)  # type: ignore[arg-type]
    assert not await database.user_exists("alice")


@pytest.mark.parametrize(
    "values",
    [
        {"boardstyle": 0},
        {"boardstyle": 4},
        {"linelength": -1},
        {"pagelength": 1000},
        {"redoubles": 100},
        {"redoubles": -1},
        {"sortwho": "age"},
    ],
)
def test_settings_outside_the_ranges_of_set_are_refused(values: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        UserSettings(**values)  # type: ignore[arg-type]


async def test_empty_name_is_refused(database: Database) -> None:
    with pytest.raises(ValueError, match="empty"):
        await database.create_user("", "h")


async def test_gag_and_blind_lists(database: Database) -> None:
    for name in ("alice", "bob", "carol"):
        await database.create_user(name, "h")
    assert await database.add_gag("alice", "carol")
    assert await database.add_gag("alice", "bob")
    assert not await database.add_gag("alice", "bob")
    assert await database.add_blind("alice", "bob")
    assert await database.list_gags("alice") == ("carol", "bob")
    assert await database.list_blinds("alice") == ("bob",)
    assert await database.list_gags("bob") == ()

    assert await database.remove_gag("alice", "carol")
    assert not await database.remove_gag("alice", "carol")
    assert await database.remove_blind("alice", "bob")
    assert not await database.remove_blind("alice", "bob")
    assert await database.list_gags("alice") == ("bob",)
    assert await database.list_blinds("alice") == ()
    assert await database.add_gag("alice", "carol")
    assert await database.list_gags("alice") == ("bob", "carol")


async def test_gag_lists_are_per_kind_and_per_owner(database: Database) -> None:
    for name in ("alice", "bob"):
        await database.create_user(name, "h")
    await database.add_gag("alice", "bob")
    await database.add_blind("bob", "alice")
    alice, bob = await database.get_user("alice"), await database.get_user("bob")
    assert alice is not None and (alice.gagged, alice.blinded) == (("bob",), ())
    assert bob is not None and (bob.gagged, bob.blinded) == ((), ("alice",))


async def test_gagging_an_unknown_user_names_the_unknown_one(database: Database) -> None:
    await database.create_user("alice", "h")
    with pytest.raises(UnknownUserError) as caught:
        await database.add_gag("alice", "nobody")
    assert caught.value.name == "nobody"
    with pytest.raises(UnknownUserError) as caught:
        await database.add_blind("ghost", "alice")
    assert caught.value.name == "ghost"
    assert await database.list_gags("alice") == ()


async def test_negative_experience_is_refused(database: Database) -> None:
    with pytest.raises(ValueError, match="experience"):
        await database.create_user("alice", "h", experience=-1)
    await database.create_user("alice", "h")
    with pytest.raises(ValueError, match="experience"):
        await database.update_rating("alice", 1500.0, -5)
