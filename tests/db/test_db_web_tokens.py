"""The web page's session tokens (revision 0008, D320-D329): stored as digests with an
expiry, replaced, bounded per user, revoked one by one or all at once, refused for no user."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from db.errors import UnknownUserError
from db.repository import Database

if TYPE_CHECKING:
    from tests.conftest import FakeClock

A, B, C = "a" * 64, "b" * 64, "c" * 64


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob"):
        await database.create_user(name, "h")
    return database


async def test_a_token_names_its_user_until_it_expires(users: Database, clock: FakeClock) -> None:
    expires = await users.issue_web_token("alice", A, lifetime=100, keep=5)
    assert expires == int(clock.now) + 100
    assert await users.web_token_user(A) == "alice"
    assert await users.web_token_user(B) is None
    clock.advance(99)
    assert await users.web_token_user(A) == "alice"
    clock.advance(1)
    assert await users.web_token_user(A) is None


async def test_replacing_revoking_and_the_bound(users: Database, clock: FakeClock) -> None:
    await users.issue_web_token("alice", A, lifetime=100, keep=2)
    clock.advance(1)
    await users.issue_web_token("alice", B, lifetime=100, keep=2, replaces=A)
    assert await users.web_token_user(A) is None
    assert await users.web_token_user(B) == "alice"
    # bob cannot revoke or replace alice's token.
    assert not await users.revoke_web_token("bob", B)
    await users.issue_web_token("bob", C, lifetime=100, keep=2, replaces=B)
    assert await users.web_token_user(B) == "alice"
    # keep=2: a third token of alice's pushes out the oldest.
    clock.advance(1)
    await users.issue_web_token("alice", A, lifetime=100, keep=2)
    clock.advance(1)
    await users.issue_web_token("alice", "d" * 64, lifetime=100, keep=2)
    assert await users.web_token_user(B) is None
    assert await users.web_token_user(A) == "alice"
    assert await users.revoke_web_token("alice", A)
    assert await users.web_token_user(A) is None
    assert await users.revoke_web_tokens("alice") == 1
    assert await users.web_token_user(C) == "bob"


async def test_no_token_for_an_unknown_user(users: Database) -> None:
    with pytest.raises(UnknownUserError):
        await users.issue_web_token("nobody", A, lifetime=100, keep=5)
    assert await users.web_token_user(A) is None
