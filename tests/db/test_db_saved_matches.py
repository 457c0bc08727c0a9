"""Saved matches: keyed by their table's id, one per unordered pair of players, found from
either name."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from db.errors import ConstraintViolation, UnknownUserError
from db.records import SavedEvents, SavedMatch
from db.repository import Database
from db.statements import Statements

if TYPE_CHECKING:
    from tests.conftest import FakeClock

AB, AD, AC, BD = "t-alice-bob", "t-alice-dave", "t-alice-carol", "t-bob-dave"
"""Table ids (the server makes UUIDs; the database takes any text)."""

SNAPSHOT = json.dumps(
    {"position": [0, -2, 0, 0, 0, 0, 5], "cube": 2, "owner": "bob", "turn": "alice"},
    indent=1,
)


@pytest.fixture
async def users(database: Database) -> Database:
    for name in ("alice", "bob", "Carol", "dave"):
        await database.create_user(name, "h")
    return database


async def test_either_name_order_finds_the_match(users: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    saved = await users.save_match(
        AB, "bob", "alice", SNAPSHOT, match_length=5, score_a=3, score_b=1
    )
    expected = SavedMatch(AB, "alice", "bob", 5, 1, 3, SNAPSHOT, start)
    assert saved == expected
    assert await users.load_match("alice", "bob") == expected
    assert await users.load_match("bob", "alice") == expected
    assert expected.scores_for("bob") == (3, 1)
    assert expected.scores_for("alice") == (1, 3)
    assert expected.opponent_of("alice") == "bob"
    with pytest.raises(ValueError):
        expected.scores_for("dave")


async def test_saving_again_replaces_the_pairs_match(users: Database, clock: FakeClock) -> None:
    start = int(clock.now)
    await users.save_match(AB, "alice", "bob", "{}", match_length=5, score_a=0, score_b=0)
    clock.advance(90)
    await users.save_match(AB, "bob", "alice", SNAPSHOT, match_length=None, score_a=4, score_b=2)
    assert await users.load_match("alice", "bob") == SavedMatch(
        AB, "alice", "bob", None, 2, 4, SNAPSHOT, start + 90
    )
    assert await users.count_saved_matches("alice") == 1


async def test_snapshot_text_is_stored_verbatim(users: Database) -> None:
    odd = '{ "b": 1,\n  "a": "Grüße \\u00e9 😀", "z": [1.0, 2e3] }  '
    await users.save_match(AB, "alice", "bob", odd, match_length=1, score_a=0, score_b=0)
    loaded = await users.load_match("bob", "alice")
    assert loaded is not None and loaded.snapshot == odd


async def test_list_count_and_delete(users: Database) -> None:
    await users.save_match(AD, "alice", "dave", "{}", match_length=3, score_a=1, score_b=2)
    await users.save_match(AC, "Carol", "alice", "{}", match_length=7, score_a=6, score_b=0)
    await users.save_match(BD, "bob", "dave", "{}", match_length=1, score_a=0, score_b=0)

    listed = await users.list_saved_matches("alice")
    assert [match.opponent_of("alice") for match in listed] == ["Carol", "dave"]
    assert [match.scores_for("alice") for match in listed] == [(0, 6), (1, 2)]
    assert await users.count_saved_matches("alice") == 2
    assert await users.count_saved_matches("dave") == 2
    assert await users.count_saved_matches("nobody") == 0
    assert await users.list_saved_matches("nobody") == []

    assert await users.delete_match(AD)
    assert not await users.delete_match(AD)
    assert await users.load_match("alice", "dave") is None
    assert await users.count_saved_matches("dave") == 1


async def test_pairs_are_exact_names(users: Database) -> None:
    await users.save_match(AC, "alice", "Carol", "{}", match_length=3, score_a=0, score_b=0)
    assert await users.load_match("alice", "carol") is None
    assert await users.load_match("Alice", "Carol") is None


async def test_a_player_cannot_be_paired_with_himself(users: Database) -> None:
    with pytest.raises(ValueError):
        await users.save_match(
            "t-self", "alice", "alice", "{}", match_length=1, score_a=0, score_b=0
        )
    assert await users.load_match("alice", "alice") is None


async def test_saving_with_an_unknown_player_fails(users: Database) -> None:
    with pytest.raises(UnknownUserError) as caught:
        await users.save_match(
            "t-ghost", "alice", "ghost", "{}", match_length=1, score_a=0, score_b=0
        )
    assert caught.value.name == "ghost"
    assert await users.count_saved_matches("alice") == 0


@pytest.mark.parametrize("length", [0, -3])
async def test_match_length_must_be_positive_or_unlimited(users: Database, length: int) -> None:
    with pytest.raises(ValueError, match="match length"):
        await users.save_match(AB, "alice", "bob", "{}", match_length=length, score_a=0, score_b=0)


# -- event rows (a running match appends the events of each action) ------------------------


def chunk(game: int, first: int, *events: str) -> SavedEvents:
    return SavedEvents(game, first, "[" + ",".join(events) + "]")


async def test_event_rows_are_replaced_appended_and_read_in_order(users: Database) -> None:
    first = (chunk(0, 0, '"a"', '"b"'), chunk(1, 0, '"c"'))
    saved = await users.save_match(
        AB, "bob", "alice", "s1", match_length=3, score_a=0, score_b=1, events=first
    )
    assert saved.events == ()  # the row as stored; load_match reads the events
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and loaded.snapshot == "s1" and loaded.events == first

    # Appended rows land in (game, first event) order whatever order they come in.
    later = (chunk(2, 0, '"e"'), chunk(1, 1, '"d"'))
    await users.save_match(
        AB, "alice", "bob", "s2", match_length=3, score_a=1, score_b=0, events=later, append=True
    )
    loaded = await users.load_match("bob", "alice")
    assert loaded is not None and loaded.snapshot == "s2"
    assert loaded.events == (*first, later[1], later[0])

    # A save that does not append replaces every row, even with none.
    await users.save_match(AB, "alice", "bob", "s3", match_length=3, score_a=1, score_b=0)
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and loaded.snapshot == "s3" and loaded.events == ()


async def test_event_rows_go_with_their_saved_match(users: Database) -> None:
    rows = (chunk(0, 0, '{"k":1}'),)
    await users.save_match(
        AB, "alice", "bob", "s", match_length=1, score_a=0, score_b=0, events=rows
    )
    await users.save_match(
        AD, "alice", "dave", "t", match_length=1, score_a=0, score_b=0, events=rows
    )
    listed = await users.list_saved_matches("alice")
    assert [match.events for match in listed] == [(), ()]  # listings leave them out

    assert await users.delete_match(AB)
    await users.save_match(AB, "alice", "bob", "new", match_length=1, score_a=0, score_b=0)
    again = await users.load_match("alice", "bob")
    assert again is not None and again.events == ()

    # A finished match takes its saved match, and the rows, with it.
    await users.record_finished_match(
        table_id=AD,
        player1="alice",
        player2="dave",
        match_length=1,
        score1=1,
        score2=0,
        winner="alice",
        started_at=0,
        rules="{}",
        moves="{}",
    )
    assert await users.load_match("alice", "dave") is None
    await users.save_match(AD, "dave", "alice", "u", match_length=1, score_a=0, score_b=0)
    fresh = await users.load_match("alice", "dave")
    assert fresh is not None and fresh.events == ()


async def test_appending_a_stored_row_fails_and_changes_nothing(users: Database) -> None:
    rows = (chunk(0, 0, '"a"'),)
    await users.save_match(
        AB, "alice", "bob", "s1", match_length=1, score_a=0, score_b=0, events=rows
    )
    with pytest.raises(ConstraintViolation):
        await users.save_match(
            AB, "alice", "bob", "s2", match_length=1, score_a=0, score_b=0, events=rows, append=True
        )
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and loaded.snapshot == "s1" and loaded.events == rows


async def test_event_texts_are_stored_verbatim(users: Database) -> None:
    odd = chunk(0, 0, '{ "b": "Grüße 😀" }', "[1.0,  2e3]")
    await users.save_match(
        AB, "alice", "bob", "s", match_length=1, score_a=0, score_b=0, events=(odd,)
    )
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and loaded.events == (odd,)


async def test_a_replayed_save_has_the_same_effect_whether_it_was_stored_or_not(
    users: Database,
) -> None:
    """PostgreSQL runs a save again in its replay form when the first attempt's outcome
    is unknown (its connection broke): stored or not, the result is the same."""
    if users.backend != "postgresql":
        pytest.skip("PostgreSQL's replay of a save: PostgreSQL only (this is the SQLite run)")
    sql = Statements("postgresql")
    rows = (chunk(0, 0, '"a"'), chunk(0, 1, '"b"'))
    params = {
        "table_id": AB,
        "player1": "alice",
        "player2": "bob",
        "match_length": 3,
        "score1": 0,
        "score2": 1,
        "snapshot": "s1",
        "updated_at": 5,
        "append": True,
        "games": [row.game for row in rows],
        "first_events": [row.first_event for row in rows],
        "events": [row.events for row in rows],
    }
    runner = users._runner
    await runner.write_statement(sql.save_match_replayed, params)  # not stored before
    await runner.write_statement(sql.save_match_replayed, params)  # stored before
    with pytest.raises(ConstraintViolation):  # the plain form refuses a stored row
        await runner.write_statement(sql.save_match_with_events, params)
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and loaded.snapshot == "s1" and loaded.events == rows
    assert loaded.scores_for("bob") == (1, 0)


async def test_a_replayed_end_stores_one_record_whether_it_was_stored_or_not(
    users: Database,
) -> None:
    """The replay form of a match's end (PostgreSQL): the record is inserted once, the
    ratings set, the saved match removed, and the same record's id comes back."""
    if users.backend != "postgresql":
        pytest.skip("PostgreSQL's replay of an end: PostgreSQL only (this is the SQLite run)")
    await users.save_match(AB, "alice", "bob", "s", match_length=1, score_a=0, score_b=0)
    sql = Statements("postgresql")
    params = {
        "table_id": AB,
        "record_player1": "bob",
        "record_player2": "alice",
        "record_length": 1,
        "record_score1": 1,
        "record_score2": 0,
        "winner": "bob",
        "started_at": 100,
        "ended_at": 160,
        "rules": "{}",
        "moves": "[]",
        "rated": ["bob", "alice"],
        "ratings": [1510.5, 1489.5],
        "experiences": [1, 1],
        "ratings_before": [1500.0, 1500.0],  # compared only before the record is there
        "experiences_before": [0, 0],
        "delete_saved": True,
    }
    runner = users._runner
    first = await runner.write_statement(sql.end_match_replayed, params, returns_row=True)
    again = await runner.write_statement(sql.end_match_replayed, params, returns_row=True)
    assert first is not None and first[1] is True and again == first
    records = await users.list_match_records("alice")
    assert [(r.id, r.player1, r.winner, r.ended_at) for r in records] == [
        (first[0], "bob", "bob", 160)
    ]
    bob = await users.get_user("bob")
    assert bob is not None and (bob.rating, bob.experience) == (1510.5, 1)
    assert await users.load_match("alice", "bob") is None


# -- table ids (revision 0005) -------------------------------------------------------------


async def test_a_tables_first_save_replaces_the_pairs_match_of_another_table(
    users: Database,
) -> None:
    """The pair keeps one saved match (§4.9): a new table's first save (it replaces its
    own rows) removes the old table's match and its event rows; the old id is gone."""
    rows = (chunk(0, 0, '"old"'),)
    await users.save_match(
        AB, "alice", "bob", "old", match_length=3, score_a=2, score_b=0, events=rows
    )
    await users.save_match("t-new", "bob", "alice", "new", match_length=5, score_a=0, score_b=0)
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None
    assert (loaded.table_id, loaded.snapshot, loaded.events) == ("t-new", "new", ())
    assert await users.count_saved_matches("alice") == 1
    assert not await users.delete_match(AB)


async def test_appending_to_another_table_of_a_saved_pair_fails_and_changes_nothing(
    users: Database,
) -> None:
    """Only a first save replaces the pair's match: an appending save of a table the
    database does not know, for a pair that has one, is refused as a whole."""
    rows = (chunk(0, 0, '"a"'),)
    await users.save_match(
        AB, "alice", "bob", "s1", match_length=1, score_a=0, score_b=0, events=rows
    )
    with pytest.raises(ConstraintViolation):
        await users.save_match(
            "t-other", "alice", "bob", "s2", match_length=1, score_a=0, score_b=0, append=True
        )
    loaded = await users.load_match("alice", "bob")
    assert loaded is not None and (loaded.table_id, loaded.snapshot, loaded.events) == (
        AB,
        "s1",
        rows,
    )


async def test_a_record_keeps_its_tables_id_and_removes_only_that_tables_match(
    users: Database,
) -> None:
    await users.save_match(AB, "alice", "bob", "s", match_length=1, score_a=0, score_b=0)
    ended = dict(
        player1="bob",
        player2="alice",
        match_length=1,
        score1=1,
        score2=0,
        winner="bob",
        started_at=0,
        rules="{}",
        moves="{}",
    )
    # Another table of the pair ends (it was never saved): the saved match stays.
    other = await users.record_finished_match(table_id="t-other", **ended)  # type: ignore[arg-type]
    assert other.table_id == "t-other"
    assert await users.load_match("alice", "bob") is not None
    record = await users.record_finished_match(table_id=AB, **ended)  # type: ignore[arg-type]
    assert await users.load_match("alice", "bob") is None
    stored = await users.get_match_record(record.id)
    assert stored is not None and stored.table_id == AB and stored == record
