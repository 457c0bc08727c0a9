"""Stored messages are never lost (issue 34 item 11, D270): a message stays stored until
the recipient's connection sends a line after it was written there, and stored messages
are bounded per recipient and per sender. Through real sockets."""

from __future__ import annotations

import asyncio

import pytest

from protocol import clip, replies
from protocol.replies import Mode
from server.app import App
from server.config import Settings

from .conftest import Connect, ScriptedClient, make_user
from .sessions import login_all

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(max_stored_messages=3, max_stored_messages_per_sender=4)


async def _logs_in_and_reads_messages(connect: Connect, count: int) -> ScriptedClient:
    """bob's CLIP login, read up to its ``count`` stored messages (CLIP 9)."""
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("login test_client 1008 bob secret")
    for _ in range(count):
        await client.expect_prefix("9 ")
    return client


async def _gone(app: App, name: str) -> None:
    """Until ``name``'s session has ended on the server (its cleanup done)."""
    for _ in range(250):
        if app.presence.get(name) is None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{name} is still logged in")


async def test_a_message_is_deleted_only_after_the_recipient_answers(
    connect: Connect, app: App
) -> None:
    """bob's three messages are written to a login that then resets the connection, and
    to one that closes without a word: both times they stay stored and come again. A
    login that sends a line after them confirms them: then they are gone."""
    await make_user(app, "bob")
    for text in ("one", "two", "three"):
        await app.db.store_message("bob", "alice", text)
    reset = await _logs_in_and_reads_messages(connect, 3)
    reset.writer.transport.abort()  # a reset right after the login's lines
    await _gone(app, "bob")
    assert await app.db.count_messages("bob") == 3
    quiet = await _logs_in_and_reads_messages(connect, 3)
    await quiet.close()
    await _gone(app, "bob")
    assert await app.db.count_messages("bob") == 3
    answering = await _logs_in_and_reads_messages(connect, 3)
    await answering.expect("6")
    await answering.send("message")  # any line: the messages were read; none are left
    await answering.expect(replies.NO_NEW_MESSAGES)  # (after the earlier sessions' 8s)
    assert await app.db.count_messages("bob") == 0


async def test_stored_messages_are_bounded(connect: Connect, app: App) -> None:
    """Three messages may wait for one user and four from one sender (here); over a
    bound the sender is told and nothing is stored."""
    for name in ("dave", "erin", "fay"):
        await make_user(app, name)
    (alice,) = await login_all(connect, app, "alice")
    for text in ("a", "b", "c"):
        await alice.send(f"message dave {text}")
        assert await alice.line() == replies.message_saved("dave", Mode.CLIP)
    await alice.send("message dave d")
    assert await alice.line() == replies.messages_full("dave")
    await alice.send("message erin e")
    assert await alice.line() == replies.message_saved("erin", Mode.CLIP)
    await alice.send("message fay f")
    assert await alice.line() == replies.TOO_MANY_MESSAGES_SENT
    assert await app.db.count_messages("dave") == 3
    assert await app.db.count_messages("fay") == 0
    dave = await connect()
    await dave.prompt(replies.LOGIN_PROMPT)
    await dave.send("login test_client 1008 dave secret")
    texts = [clip.Message.parse(await dave.expect_prefix("9 ")).text for _ in range(3)]
    assert texts == ["a", "b", "c"]
    await dave.expect("6")
    await dave.send("who dave")  # confirms: alice may store messages again
    await dave.expect("6")
    await alice.send("message fay f")
    await alice.expect(replies.message_saved("fay", Mode.CLIP))  # after dave's login notice
