"""Key saved matches and their events by a table id; give match records theirs.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27

A table (a running match, later a chouette) is addressed by an id across the server
(docs/architecture.md, the table seam); its saved state and its record are keyed by it,
not by the pair of players. Every saved match stored before this revision is given an id
of its own, its event rows follow it, and the pair stays unique (FIBS keeps one saved
match per pair). Every match record is given an id of its own too (each was its own
table). Nothing stored is lost either way: the downgrade puts the pair back as the key
(the pair is unique, so no two saved matches meet) and drops the records' ids.

Self-contained on purpose, like the earlier revisions: the ids are made here
(``uuid4().hex``, the server's form), the constraint names are spelled out.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SAVED = "saved_matches"
_EVENTS = "saved_match_events"
_RECORDS = "match_records"
_EVENTS_TO_PAIR = "fk_saved_match_events_player1_saved_matches"
_EVENTS_TO_TABLE = "fk_saved_match_events_table_id_saved_matches"
_PAIR_UNIQUE = "uq_saved_matches_player1_player2"
_RECORDS_TABLE_INDEX = "ix_match_records_table_id"


@contextmanager
def _quiet_reflection() -> Iterator[None]:
    """SQLite's batch mode reflects the tables it copies, ``users`` among them for the
    references to it; SQLAlchemy warns that it skips the expression index on the users'
    names (revision 0003), which the copies do not touch."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "Skipped unsupported reflection of expression-based index", sa.exc.SAWarning
        )
        yield


def upgrade() -> None:
    """Give each saved match and each record a table id, then key the saved ones by it.

    The event rows lose their reference to the pair before the saved matches' table is
    changed: on SQLite a change copies the table and drops the old one, which would
    delete the rows that refer to it.
    """
    with _quiet_reflection():
        _upgrade()


def downgrade() -> None:
    """Key the saved matches and their events by the pair again; drop the records' ids."""
    with _quiet_reflection():
        _downgrade()


def _upgrade() -> None:
    bind = op.get_bind()
    with op.batch_alter_table(_SAVED) as batch:
        batch.add_column(sa.Column("table_id", sa.String(), nullable=True))
    saved = sa.table(_SAVED, sa.column("player1"), sa.column("player2"), sa.column("table_id"))
    for player1, player2 in bind.execute(sa.select(saved.c.player1, saved.c.player2)).all():
        bind.execute(
            saved.update()
            .where(saved.c.player1 == player1, saved.c.player2 == player2)
            .values(table_id=uuid.uuid4().hex)
        )

    with op.batch_alter_table(_EVENTS) as batch:
        batch.add_column(sa.Column("table_id", sa.String(), nullable=True))
    events = sa.table(_EVENTS, sa.column("player1"), sa.column("player2"), sa.column("table_id"))
    owner = (
        sa.select(saved.c.table_id)
        .where(saved.c.player1 == events.c.player1, saved.c.player2 == events.c.player2)
        .scalar_subquery()
    )
    bind.execute(events.update().values(table_id=owner))
    with op.batch_alter_table(_EVENTS) as batch:
        batch.drop_constraint(_EVENTS_TO_PAIR, type_="foreignkey")
        batch.drop_constraint("pk_saved_match_events", type_="primary")
        batch.drop_column("player1")
        batch.drop_column("player2")
        batch.alter_column("table_id", existing_type=sa.String(), nullable=False)
        batch.create_primary_key("pk_saved_match_events", ["table_id", "game", "first_event"])

    with op.batch_alter_table(_SAVED) as batch:
        batch.drop_constraint("pk_saved_matches", type_="primary")
        batch.alter_column("table_id", existing_type=sa.String(), nullable=False)
        batch.create_primary_key("pk_saved_matches", ["table_id"])
        batch.create_unique_constraint(_PAIR_UNIQUE, ["player1", "player2"])

    with op.batch_alter_table(_EVENTS) as batch:
        batch.create_foreign_key(
            _EVENTS_TO_TABLE, _SAVED, ["table_id"], ["table_id"], ondelete="CASCADE"
        )

    with op.batch_alter_table(_RECORDS) as batch:
        batch.add_column(sa.Column("table_id", sa.String(), nullable=True))
    records = sa.table(_RECORDS, sa.column("id"), sa.column("table_id"))
    for (record_id,) in bind.execute(sa.select(records.c.id)).all():
        bind.execute(
            records.update().where(records.c.id == record_id).values(table_id=uuid.uuid4().hex)
        )
    with op.batch_alter_table(_RECORDS) as batch:
        batch.alter_column("table_id", existing_type=sa.String(), nullable=False)
    op.create_index(_RECORDS_TABLE_INDEX, _RECORDS, ["table_id"])


def _downgrade() -> None:
    bind = op.get_bind()
    op.drop_index(_RECORDS_TABLE_INDEX, table_name=_RECORDS)
    with op.batch_alter_table(_RECORDS) as batch:
        batch.drop_column("table_id")

    with op.batch_alter_table(_EVENTS) as batch:
        batch.drop_constraint(_EVENTS_TO_TABLE, type_="foreignkey")
        batch.add_column(sa.Column("player1", sa.String(), nullable=True))
        batch.add_column(sa.Column("player2", sa.String(), nullable=True))
    saved = sa.table(_SAVED, sa.column("player1"), sa.column("player2"), sa.column("table_id"))
    events = sa.table(_EVENTS, sa.column("player1"), sa.column("player2"), sa.column("table_id"))
    for column in ("player1", "player2"):
        pair_name = (
            sa.select(saved.c[column])
            .where(saved.c.table_id == events.c.table_id)
            .scalar_subquery()
        )
        bind.execute(events.update().values({column: pair_name}))

    with op.batch_alter_table(_SAVED) as batch:
        batch.drop_constraint(_PAIR_UNIQUE, type_="unique")
        batch.drop_constraint("pk_saved_matches", type_="primary")
        batch.create_primary_key("pk_saved_matches", ["player1", "player2"])
        batch.drop_column("table_id")

    with op.batch_alter_table(_EVENTS) as batch:
        batch.drop_constraint("pk_saved_match_events", type_="primary")
        batch.drop_column("table_id")
        batch.alter_column("player1", existing_type=sa.String(), nullable=False)
        batch.alter_column("player2", existing_type=sa.String(), nullable=False)
        batch.create_primary_key(
            "pk_saved_match_events", ["player1", "player2", "game", "first_event"]
        )
        batch.create_foreign_key(
            _EVENTS_TO_PAIR,
            _SAVED,
            ["player1", "player2"],
            ["player1", "player2"],
            ondelete="CASCADE",
        )
