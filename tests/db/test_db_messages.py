"""Stored messages: kept until the recipient's delivery is confirmed, then deleted once;
bounded per recipient and per sender (D270)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from db.errors import MessageLimitError, UnknownUserError
from db.records import StoredMessage
from db.repository import Database

if TYPE_CHECKING:
    from tests.conftest import FakeClock


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob", "carol"):
        await database.create_user(name, "h")
    return database


async def test_messages_stay_until_deleted_oldest_first(users: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    first = await users.store_message("bob", "alice", "I'll log in at 10pm.")
    clock.advance(30)
    second = await users.store_message("bob", "carol", "Ünïcode and  two  spaces ")
    assert first == StoredMessage(first.id, "bob", "alice", start, "I'll log in at 10pm.")
    assert await users.count_messages("bob") == 2

    assert await users.messages_for("bob") == [first, second]
    assert await users.messages_for("bob") == [first, second]  # reading deletes nothing
    assert await users.delete_messages("bob", [first.id, second.id]) == 2
    assert await users.messages_for("bob") == []
    assert await users.count_messages("bob") == 0
    assert await users.delete_messages("bob", [first.id]) == 0


async def test_messages_are_per_recipient(users: Database) -> None:
    for_bob = await users.store_message("bob", "alice", "for bob")
    await users.store_message("carol", "alice", "for carol")
    assert [m.text for m in await users.messages_for("carol")] == ["for carol"]
    assert await users.delete_messages("carol", [for_bob.id]) == 0  # not carol's
    assert [m.text for m in await users.messages_for("bob")] == ["for bob"]
    assert await users.messages_for("alice") == []


async def test_explicit_send_time_orders_delivery(users: Database) -> None:
    await users.store_message("bob", "alice", "later", sent_at=200)
    await users.store_message("bob", "alice", "earlier", sent_at=100)
    assert [m.text for m in await users.messages_for("bob")] == ["earlier", "later"]


async def test_the_recipient_must_exist_the_sender_need_not(users: Database) -> None:
    with pytest.raises(UnknownUserError) as caught:
        await users.store_message("nobody", "alice", "hello?")
    assert caught.value.name == "nobody"
    # The sender is just a name; it need not be (or stay) a user.
    await users.store_message("bob", "system", "maintenance at noon")
    assert [m.sender for m in await users.messages_for("bob")] == ["system"]


async def test_concurrent_deleters_delete_each_message_once(users: Database) -> None:
    stored = [await users.store_message("bob", "alice", f"message {i}") for i in range(20)]
    ids = [message.id for message in stored]
    counts = await asyncio.gather(*(users.delete_messages("bob", ids) for _ in range(5)))
    assert sum(counts) == 20
    assert await users.messages_for("bob") == []


async def test_messages_are_bounded_per_recipient_and_per_sender(users: Database) -> None:
    """D270: at the recipient's bound or the sender's, nothing more is stored; deleting
    makes room again."""
    bounds = {"max_for_recipient": 2, "max_from_sender": 3}
    kept = [await users.store_message("bob", "alice", str(i), **bounds) for i in range(2)]
    with pytest.raises(MessageLimitError) as full:
        await users.store_message("bob", "carol", "one more", **bounds)
    assert not full.value.by_sender
    await users.store_message("carol", "alice", "third", **bounds)
    with pytest.raises(MessageLimitError) as sender:
        await users.store_message("alice", "alice", "fourth", **bounds)
    assert sender.value.by_sender
    assert await users.count_messages("bob") == 2
    await users.delete_messages("bob", [kept[0].id])
    await users.store_message("bob", "carol", "now there is room", **bounds)
