"""A board shows what has been announced (D197): one asked for while a match action is
being saved comes after that action's lines, never before them.

An action changes the match in memory and sends its lines only once its save succeeded
(``server.tables.match_flow.run``). The save is held open here (the real save runs once the test
lets it go) so that the other player's and a watcher's ``board`` arrive in the middle of
it, as they can whenever the database is slower than the client who asks.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from protocol import replies
from server.app import App
from server.config import Settings

from .conftest import Connect, clip_login
from .sessions import start_match

HELD = 0.5
"""Seconds the save is held: far longer than the server needs to answer a ``board``."""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Who updates at once (no batch interval, D79): the set-up reads them all before the
    save is held, so that nothing else can arrive while it is."""
    return settings.replace(status_interval=0.0)


async def test_a_board_asked_for_during_a_save_follows_the_lines_of_that_action(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = await start_match(connect, app, 3)
    carol = await clip_login(connect, app, "carol")
    await carol.send("set boardstyle 3")
    await carol.send("watch alice")
    await carol.expect(replies.now_watching("alice"))
    # Read what carol's arrival told them: her who update (batched, D79), and bob hears
    # that she watches.
    await carol.expect_prefix("5 carol - alice ")
    await carol.expect("6")
    told, update = False, False
    while not (told and update):
        line = await bob.line()
        told = told or line == "carol starts watching alice."
        if line.startswith("5 carol - alice "):
            await bob.expect("6")
            update = True

    real_save = app.db.save_match
    saving, go_on = asyncio.Event(), asyncio.Event()

    async def held_save(*args: Any, **kwargs: Any) -> Any:
        saving.set()
        await go_on.wait()
        return await real_save(*args, **kwargs)

    monkeypatch.setattr(app.db, "save_match", held_save)
    await alice.send("move 8-5 6-5")
    await asyncio.wait_for(saving.wait(), 5)
    try:
        # alice's move is made in memory; nobody has been told of it yet.
        await bob.send("board")
        await carol.send("board")
        await bob.nothing(HELD)
        await carol.nothing(0.1)
    finally:
        go_on.set()

    moved = replies.moves("alice", ["8-5", "6-5"])
    before = await bob.expect(replies.ROLL_OR_DOUBLE)
    assert before[0] == moved, f"bob's first line after his board request: {before[0]!r}"
    pushed = [line for line in before if line.startswith("board:")]
    asked = await bob.line()
    assert asked.startswith("board:") and [asked] == pushed  # the state just announced

    watched = await carol.line()
    assert watched == moved, f"carol's first line after her board request: {watched!r}"
    pushed_to_carol = await carol.line()
    assert pushed_to_carol.startswith("board:")
    assert await carol.line() == pushed_to_carol
