"""Stored messages: kept until the recipient's next login, then delivered exactly once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from db.errors import UnknownUserError
from db.records import StoredMessage
from db.repository import Database

if TYPE_CHECKING:
    from tests.conftest import FakeClock


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob", "carol"):
        await database.create_user(name, "h")
    return database


async def test_messages_are_delivered_once_oldest_first(users: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    first = await users.store_message("bob", "alice", "I'll log in at 10pm.")
    clock.advance(30)
    second = await users.store_message("bob", "carol", "Ünïcode and  two  spaces ")
    assert first == StoredMessage(first.id, "bob", "alice", start, "I'll log in at 10pm.")
    assert await users.count_messages("bob") == 2

    delivered = await users.take_messages("bob")
    assert delivered == [first, second]
    assert delivered[1].sent_at == start + 30
    assert await users.take_messages("bob") == []
    assert await users.count_messages("bob") == 0


async def test_messages_are_per_recipient(users: Database) -> None:
    await users.store_message("bob", "alice", "for bob")
    await users.store_message("carol", "alice", "for carol")
    assert [m.text for m in await users.take_messages("carol")] == ["for carol"]
    assert [m.text for m in await users.take_messages("bob")] == ["for bob"]
    assert await users.take_messages("alice") == []


async def test_explicit_send_time_orders_delivery(users: Database) -> None:
    await users.store_message("bob", "alice", "later", sent_at=200)
    await users.store_message("bob", "alice", "earlier", sent_at=100)
    assert [m.text for m in await users.take_messages("bob")] == ["earlier", "later"]


async def test_the_recipient_must_exist_the_sender_need_not(users: Database) -> None:
    with pytest.raises(UnknownUserError) as caught:
        await users.store_message("nobody", "alice", "hello?")
    assert caught.value.name == "nobody"
    # The sender is just a name; it need not be (or stay) a user.
    await users.store_message("bob", "system", "maintenance at noon")
    assert [m.sender for m in await users.take_messages("bob")] == ["system"]


async def test_concurrent_takers_never_both_get_a_message(users: Database) -> None:
    for index in range(20):
        await users.store_message("bob", "alice", f"message {index}")
    batches = await asyncio.gather(*(users.take_messages("bob") for _ in range(5)))
    texts = [message.text for batch in batches for message in batch]
    assert sorted(texts) == sorted(f"message {index}" for index in range(20))
