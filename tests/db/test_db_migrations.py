"""Schema creation and upgrade with the Alembic revisions in db/migrations."""

from __future__ import annotations

import random
import re
import sqlite3
import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text

import db.__main__ as db_cli
from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions
from db.engine import (
    create_engine,
    current_revision,
    head_revision,
    migrate,
    normalize_url,
    run_alembic,
)
from db.errors import MigrationError
from db.models import USERS_NAME_LOWER, Base
from db.repository import Database
from server.tables.matches import LiveMatch
from tests.conftest import only_on
from tests.server.random_match import random_action

if TYPE_CHECKING:
    from tests.conftest import DbTarget

TABLES = {
    "users",
    "gags",
    "blinds",
    "messages",
    "saved_matches",
    "saved_match_events",
    "match_records",
    "match_analyses",
    "web_tokens",
    "saved_chouettes",
    "saved_chouette_players",
    "chouette_results",
    "table_owners",
}


async def test_migrate_from_empty_creates_every_table(db_target: DbTarget) -> None:
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        assert await current_revision(engine) is None
        await migrate(db_target.url, schema=db_target.schema)
        assert await current_revision(engine) == head_revision()
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
        assert names == TABLES | {"alembic_version"}
    finally:
        await engine.dispose()


async def test_migrate_again_is_a_no_op_and_keeps_data(db_target: DbTarget) -> None:
    database = await db_target.open()
    try:
        await database.create_user("alice", "hash")
    finally:
        await database.close()
    await migrate(db_target.url, schema=db_target.schema)
    await migrate(db_target.url, schema=db_target.schema)
    database = await db_target.open()
    try:
        user = await database.get_user("alice")
        assert user is not None and user.password_hash == "hash"
    finally:
        await database.close()


async def test_open_without_migrate_leaves_an_empty_database_alone(db_target: DbTarget) -> None:
    database = await db_target.open(migrate=False)
    await database.close()
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        assert await current_revision(engine) is None
    finally:
        await engine.dispose()


def _schema_differences(connection: Connection) -> list[object]:
    """What autogenerate finds between the models and the database. On SQLite neither
    SQLAlchemy nor Alembic can read an index on an expression (both warn and skip it):
    :func:`test_look_alike_names_are_found_by_their_index` checks that one there."""
    context = MigrationContext.configure(
        connection,
        opts={
            "compare_type": True,
            "include_name": lambda name, kind, _parent: (
                kind != "table" or name != "alembic_version"
            ),
        },
    )
    with warnings.catch_warnings():
        if connection.dialect.name == "sqlite":
            warnings.filterwarnings("ignore", ".*expression-based index")
        return list(compare_metadata(context, Base.metadata))


async def test_migrations_build_exactly_the_models(db_target: DbTarget) -> None:
    """db/models.py and the revisions describe the same schema (autogenerate finds nothing)."""
    await migrate(db_target.url, schema=db_target.schema)
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        async with engine.connect() as connection:
            differences = await connection.run_sync(_schema_differences)
    finally:
        await engine.dispose()
    assert differences == []


async def test_look_alike_names_are_found_by_their_index(db_target: DbTarget) -> None:
    """Revision 0003's index on the names' lower case exists, and on SQLite (statements
    run on the event loop there) the look-alike search uses it instead of a scan."""
    database = await db_target.open()
    await database.close()
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        async with engine.connect() as connection:
            if connection.dialect.name == "sqlite":
                plan = await connection.execute(  # db.statements' names_like, as compiled
                    text(
                        "EXPLAIN QUERY PLAN SELECT users.name FROM users"
                        " WHERE lower(users.name) = lower(:n) ORDER BY users.name"
                    ),
                    {"n": "Casey"},
                )
                assert any(USERS_NAME_LOWER in str(row) for row in plan), "a scan"
            else:
                found = await connection.scalar(
                    text(
                        "SELECT indexdef FROM pg_indexes"
                        " WHERE schemaname = :schema AND indexname = :index"
                    ),
                    {"schema": db_target.schema, "index": USERS_NAME_LOWER},
                )
                assert found is not None and "lower" in found
    finally:
        await engine.dispose()


async def test_sqlite_connections_use_wal_and_foreign_keys(db_target: DbTarget) -> None:
    only_on("sqlite", db_target, "SQLite pragmas")
    engine = create_engine(db_target.url)
    try:
        async with engine.connect() as connection:
            journal = (await connection.execute(text("PRAGMA journal_mode"))).scalar()
            foreign_keys = (await connection.execute(text("PRAGMA foreign_keys"))).scalar()
            busy = (await connection.execute(text("PRAGMA busy_timeout"))).scalar()
    finally:
        await engine.dispose()
    assert (journal, foreign_keys) == ("wal", 1)
    assert busy is not None and busy >= 1000


async def test_postgresql_schema_holds_the_tables(db_target: DbTarget) -> None:
    """The tables (and alembic_version) are in the test's own schema, nowhere else."""
    only_on("postgresql", db_target, "PostgreSQL schemas")
    database = await db_target.open()
    await database.close()
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        async with engine.connect() as connection:
            found = await connection.scalar(
                text("SELECT count(*) FROM information_schema.tables WHERE table_schema = :schema"),
                {"schema": db_target.schema},
            )
    finally:
        await engine.dispose()
    assert found == len(TABLES) + 1


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///fibs.db", "sqlite+aiosqlite:///fibs.db"),
        ("sqlite+aiosqlite:///fibs.db", "sqlite+aiosqlite:///fibs.db"),
        ("postgresql://fibs@db/fibs", "postgresql+asyncpg://fibs@db/fibs"),
        ("postgres://fibs@db/fibs", "postgresql+asyncpg://fibs@db/fibs"),
    ],
)
def test_urls_select_the_async_driver(given: str, expected: str) -> None:
    assert normalize_url(given).render_as_string() == expected


@pytest.mark.parametrize("url", ["mysql://u:secret@h/d", "not a url", "sqlite+pysqlcipher:///x"])
def test_unsupported_urls_are_refused_without_showing_passwords(url: str) -> None:
    with pytest.raises(ValueError, match="database URL") as caught:
        normalize_url(url)
    assert "secret" not in str(caught.value)


def test_a_schema_is_only_for_postgresql() -> None:
    with pytest.raises(ValueError, match="PostgreSQL"):
        create_engine("sqlite+aiosqlite:///x.db", schema="fibs")


async def test_database_open_refuses_a_bad_url() -> None:
    with pytest.raises(ValueError, match="unsupported database URL"):
        await Database.open("oracle://scott:tiger@h/d")


def test_command_line_upgrade_and_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    assert db_cli.main(["current", url]) == 1  # no file: reading creates none
    assert "the file does not exist" in capsys.readouterr().err
    assert not (tmp_path / "cli.db").exists()
    sqlite3.connect(tmp_path / "cli.db").close()  # an empty database
    assert db_cli.main(["current", url]) == 0
    assert capsys.readouterr().out == f"current none, head {head_revision()}\n"
    assert db_cli.main(["upgrade", url]) == 0
    assert db_cli.main(["upgrade", url]) == 0
    assert db_cli.main(["current", url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"current {head_revision()}, head {head_revision()}"


def test_command_line_reports_a_bad_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert db_cli.main(["upgrade", "mysql://root:pw@host/db"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("python -m db: unsupported database URL") and "pw" not in error


async def test_an_unknown_newer_revision_stops_the_start(db_target: DbTarget) -> None:
    await migrate(db_target.url, schema=db_target.schema)
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    finally:
        await engine.dispose()
    with pytest.raises(MigrationError, match="9999"):
        await Database.open(db_target.url, schema=db_target.schema)


async def test_downgrade_to_0001_puts_the_event_rows_back_into_the_text(
    db_target: DbTarget,
) -> None:
    """Revision 0002's downgrade loses no saved match: the rows go back into the text."""
    rng = random.Random(4)
    live = LiveMatch(
        ("bob", "alice"), Match(MatchOptions(length=3), SeededDice(4)), started_at=1_700_000_000
    )
    database = await db_target.open()
    try:
        for name in ("alice", "bob", "carol"):
            await database.create_user(name, "h")
        for _ in range(120):
            random_action(live.match, rng, 0.05, Counter())
            plan = live.next_save()
            await database.save_match(
                live.table_id,
                *live.names,
                plan.state,
                match_length=3,
                score_a=0,
                score_b=0,
                events=plan.events,
                append=plan.append,
            )
            live.saved(plan)
        # A match stored whole (before 0002) stays as it is.
        await database.save_match(
            "t-alice-carol", "carol", "alice", live.snapshot(), match_length=3, score_a=0, score_b=0
        )
    finally:
        await database.close()
    assert live.match.game > 1

    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        await run_alembic(engine, lambda config: command.downgrade(config, "0001"))
        assert await current_revision(engine) == "0001"
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
            result = await connection.execute(text("SELECT snapshot FROM saved_matches"))
            texts = [row[0] for row in result]
    finally:
        await engine.dispose()
    assert "saved_match_events" not in names
    # Both pairs (alice-bob, alice-carol) hold the whole text now.
    assert texts == [live.snapshot()] * 2

    # Upgraded again, the server resumes it from the whole text.
    database = await db_target.open()
    try:
        saved = await database.load_match("alice", "bob")
        assert saved is not None and saved.events == ()
        assert LiveMatch.from_saved(saved, SeededDice(1)).snapshot() == live.snapshot()
    finally:
        await database.close()


async def test_upgrade_to_0005_keys_every_saved_match_and_record_by_a_table_id(
    db_target: DbTarget,
) -> None:
    """A database made by revision 0004's schema (saved matches and their event rows
    keyed by the pair, records without a table): after the upgrade every saved match is
    found by its pair and resumes exactly as it was, its rows under its new table id; a
    match stored whole stays whole; each record has an id of its own and is otherwise
    unchanged; the downgrade gives 0004's rows back."""
    rng = random.Random(5)
    live = LiveMatch(
        ("bob", "alice"), Match(MatchOptions(length=5), SeededDice(5)), started_at=1_700_000_000
    )
    rows: dict[tuple[int, int], str] = {}
    state = ""
    for _ in range(150):
        random_action(live.match, rng, 0.05, Counter())
        plan = live.next_save()
        if not plan.append:
            rows.clear()
        rows.update({(chunk.game, chunk.first_event): chunk.events for chunk in plan.events})
        state = plan.state
        live.saved(plan)
    assert live.match.game > 1 and len(rows) > 50

    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        await run_alembic(engine, lambda config: command.upgrade(config, "0004"))
        database = await db_target.open(migrate=False)
        try:
            for name in ("alice", "bob", "carol"):
                await database.create_user(name, "h")
        finally:
            await database.close()
        saved_row = text(
            "INSERT INTO saved_matches (player1, player2, match_length, score1, score2,"
            " snapshot, updated_at) VALUES (:p1, :p2, 5, :s1, :s2, :snapshot, 7)"
        )
        async with engine.begin() as connection:
            await connection.execute(
                saved_row, {"p1": "alice", "p2": "bob", "s1": 1, "s2": 2, "snapshot": state}
            )
            await connection.execute(
                text(
                    "INSERT INTO saved_match_events (player1, player2, game, first_event,"
                    " events) VALUES ('alice', 'bob', :game, :first, :events)"
                ),
                [{"game": g, "first": f, "events": e} for (g, f), e in sorted(rows.items())],
            )
            whole = live.snapshot().replace('"bob","alice"', '"carol","alice"')
            await connection.execute(
                saved_row, {"p1": "alice", "p2": "carol", "s1": 0, "s2": 3, "snapshot": whole}
            )
            for started in (100, 200):
                await connection.execute(
                    text(
                        "INSERT INTO match_records (player1, player2, match_length, score1,"
                        " score2, winner, started_at, ended_at, rules, moves) VALUES"
                        " ('bob', 'alice', 1, 1, 0, 'bob', :started, 300, '{}', '[]')"
                    ),
                    {"started": started},
                )

        await migrate(db_target.url, schema=db_target.schema)
        assert await current_revision(engine) == head_revision()
        database = await db_target.open()
        try:
            saved = await database.load_match("bob", "alice")
            assert saved is not None and re.fullmatch(r"[0-9a-f]{32}", saved.table_id)
            assert (saved.scores_for("alice"), saved.updated_at) == ((1, 2), 7)
            assert len(saved.events) == len(rows)
            resumed = LiveMatch.from_saved(saved, SeededDice(1))
            assert resumed.table_id == saved.table_id
            assert resumed.snapshot() == live.snapshot()
            kept_whole = await database.load_match("carol", "alice")
            assert kept_whole is not None and kept_whole.events == ()
            assert kept_whole.table_id != saved.table_id
            assert LiveMatch.from_saved(kept_whole, SeededDice(1)).snapshot() == whole
            records = await database.list_match_records("alice")
            assert [(r.started_at, r.player1, r.winner) for r in records] == [
                (200, "bob", "bob"),
                (100, "bob", "bob"),
            ]
            assert len({r.table_id for r in records}) == 2
            # The resumed match goes on under its table id: the next save appends.
            assert await database.delete_match(saved.table_id)
            assert await database.load_match("alice", "bob") is None
        finally:
            await database.close()

        await run_alembic(engine, lambda config: command.downgrade(config, "0004"))
        async with engine.connect() as connection:
            result = await connection.execute(
                text("SELECT player1, player2, score2 FROM saved_matches")
            )
            assert [tuple(row) for row in result] == [("alice", "carol", 3)]
            result = await connection.execute(text("SELECT count(*) FROM match_records"))
            assert result.scalar_one() == 2
    finally:
        await engine.dispose()


async def test_0006_adds_the_analyses_to_a_database_with_records(db_target: DbTarget) -> None:
    """Revision 0006 on a database at 0004 that holds a finished match (0005 gives it its
    table id): the record stays and can be queued for analysis; the downgrade to 0005
    drops only the analyses."""
    engine = create_engine(db_target.url, schema=db_target.schema)
    try:
        await run_alembic(engine, lambda config: command.upgrade(config, "0004"))
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO match_records (player1, player2, match_length, score1, score2,"
                    " winner, started_at, ended_at, rules, moves)"
                    " VALUES ('alice', 'bob', 1, 1, 0, 'alice', 1, 2, '{}', '{}')"
                )
            )
        database = await db_target.open()  # migrates to the head
        try:
            assert await current_revision(engine) == head_revision()
            (record,) = await database.list_match_records("alice")
            await database.queue_analysis(record.id, 0)
            assert [a.match_id for a in await database.queued_analyses()] == [record.id]
        finally:
            await database.close()
        await run_alembic(engine, lambda config: command.downgrade(config, "0005"))
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
            count = await connection.scalar(text("SELECT count(*) FROM match_records"))
    finally:
        await engine.dispose()
    assert "match_analyses" not in names and count == 1
