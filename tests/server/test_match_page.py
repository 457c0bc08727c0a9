"""The web page's finished matches (issue 28 item 7, D377): ``match! <id>`` and
``profile! <name>`` over real sockets, after a 3-point match played out. Their answers
are JSON, not forms of protocol/replies.py: no known_lines mark (as for the analysis as
JSON, tests/server/test_analysis_command.py)."""

from __future__ import annotations

import json

import pytest

from protocol import replies
from protocol.mat_export import snapshot_to_mat
from server.app import App
from server.config import Settings

from .conftest import Connect, clip_login
from .test_export import _play_three_point_match


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def test_any_user_sees_a_finished_match_and_the_players_profiles(
    connect: Connect, app: App
) -> None:
    await _play_three_point_match(connect, app)
    [record] = await app.db.list_match_records("alice")
    carol = await clip_login(connect, app, "carol")  # played no part in it

    await carol.send(f"match! {record.id}")
    line = await carol.expect_prefix("match! ")
    found = json.loads(line.removeprefix("match! "))
    assert found["match"] == record.id
    assert found["players"] == [record.player1, record.player2]
    assert found["score"] == [record.score1, record.score2]
    assert found["winner"] == record.winner and found["length"] == 3
    assert found["mat"] == snapshot_to_mat(
        record.moves, site=app.settings.server_name, started_at=record.started_at
    )
    games = found["games"]
    assert games and games[-1]["steps"][-1]["kind"] == "win"
    assert games[-1]["steps"][-1]["match"] is True
    plays = [s for g in games for s in g["steps"] if s["kind"] == "move"]
    assert plays and all(len(s["board"]) == 26 and len(s["dice"]) == 2 for s in plays)

    await carol.send("profile! alice")
    line = await carol.expect_prefix("profile! ")
    alice = json.loads(line.removeprefix("profile! "))
    assert alice["name"] == "alice" and alice["online"] is True and alice["playing"] is None
    [played] = alice["matches"]
    mine = record.score1 if record.player1 == "alice" else record.score2
    theirs = record.score2 if record.player1 == "alice" else record.score1
    assert played == {
        "match": record.id,
        "opponent": "bob",
        "length": 3,
        "score": [mine, theirs],
        "won": record.winner == "alice",
        "ended": record.ended_at,
    }
    await carol.send("profile! carol")
    line = await carol.expect_prefix("profile! ")
    assert json.loads(line.removeprefix("profile! "))["matches"] == []

    # Refusals: an unknown match or name, a word that is no id, and no prefix selects them.
    for sent, answer in [
        (f"match! {record.id + 1}", replies.no_finished_match(record.id + 1)),
        ("match! x", replies.MATCH_PAGE_USAGE),
        ("match!", replies.MATCH_PAGE_USAGE),
        ("profile! nobody", replies.no_information("nobody")),
        ("profile!", replies.PROFILE_USAGE),
        ("match", replies.unknown_command("match")),
    ]:
        await carol.send(sent)
        assert await carol.line() == answer
