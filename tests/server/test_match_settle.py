"""Settling and announcing a match action (issue 15 item 1): announcing covers every event
type, and the players' in-memory ratings change only once the finished match is stored."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from backgammon.events import Event
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.config import Settings
from server.tables import announce

from .conftest import Connect, ScriptedClient, clip_login


def _announced_types() -> tuple[set[str], bool]:
    """The event classes ``_announce_event``'s ``match`` has a case for, and whether its
    last case is ``case _: typing.assert_never(event)``."""
    tree = ast.parse(Path(announce.__file__).read_text())
    function = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name == "_announce_event"
    )
    statement = next(node for node in ast.walk(function) if isinstance(node, ast.Match))
    names = set()
    for case in statement.cases:
        if isinstance(case.pattern, ast.MatchClass) and isinstance(case.pattern.cls, ast.Name):
            names.add(case.pattern.cls.id)
    last = statement.cases[-1]
    call = last.body[0] if last.body else None
    guarded = (
        isinstance(last.pattern, ast.MatchAs)
        and last.pattern.pattern is None
        and isinstance(call, ast.Expr)
        and isinstance(call.value, ast.Call)
        and ast.unparse(call.value.func) == "typing.assert_never"
    )
    return names, guarded


def test_every_event_type_is_announced_in_one_match_ending_in_assert_never() -> None:
    names, guarded = _announced_types()
    assert names == {cls.__name__ for cls in typing.get_args(Event)}
    assert guarded, "the match must end in `case _: typing.assert_never(event)`"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _resigned_match(connect: Connect, app: App) -> tuple[ScriptedClient, ScriptedClient]:
    """A 1-point match of alice and bob that alice has offered to resign."""
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 1")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await alice.expect(replies.player_joined("bob", 1))
    await alice.send("resign n")
    await bob.expect_prefix("alice wants to resign.")
    return alice, bob


@pytest.mark.logs_errors  # the failed save is logged as the command's failure
async def test_ratings_change_only_after_the_finished_match_is_stored(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bob = await _resigned_match(connect, app)
    sessions = [app.registry.get(name) for name in ("alice", "bob")]
    before = [(s.rating, s.experience) for s in sessions if s is not None]

    async def failing(**_: object) -> None:
        raise OSError("the database is gone")

    monkeypatch.setattr(app.db, "record_finished_match", failing)
    await bob.send("accept")
    await bob.expect(replies.INTERNAL_ERROR)
    assert [(s.rating, s.experience) for s in sessions if s is not None] == before


async def test_a_stored_match_end_rates_the_players(connect: Connect, app: App) -> None:
    _, bob = await _resigned_match(connect, app)
    winner = app.registry.get("bob")
    assert winner is not None
    before = (winner.rating, winner.experience)
    await bob.send("accept")
    await bob.expect_prefix("You win the 1 point match")
    assert winner.rating > before[0] and winner.experience == before[1] + 1
