"""Create every table: users, gags, blinds, messages, saved_matches, match_records.

Revision ID: 0001
Revises:
Create Date: 2025-11-22

Self-contained on purpose (no import of db.models): this file describes the schema as it
was at revision 0001, whatever the models say later.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _user_fk(column: str, table: str) -> sa.ForeignKeyConstraint:
    """``column`` refers to a user by name; the row goes when the user goes."""
    return sa.ForeignKeyConstraint(
        [column], ["users.name"], name=f"fk_{table}_{column}_users", ondelete="CASCADE"
    )


def upgrade() -> None:
    """Create the tables of the first schema."""
    op.create_table(
        "users",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("password_hash", sa.String(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("last_login_at", sa.BigInteger(), nullable=True),
        sa.Column("last_login_host", sa.String(), nullable=True),
        sa.Column("last_logout_at", sa.BigInteger(), nullable=True),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("experience", sa.Integer(), nullable=False),
        sa.Column("toggles", sa.JSON(), nullable=False),
        sa.Column("boardstyle", sa.Integer(), nullable=False),
        sa.Column("linelength", sa.Integer(), nullable=False),
        sa.Column("pagelength", sa.Integer(), nullable=False),
        sa.Column("redoubles", sa.Integer(), nullable=True),
        sa.Column("sortwho", sa.String(), nullable=False),
        sa.Column("timezone", sa.String(), nullable=False),
        sa.Column("address", sa.String(), nullable=True),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_users"),
        sa.CheckConstraint("experience >= 0", name="ck_users_experience"),
        sa.CheckConstraint("boardstyle BETWEEN 1 AND 3", name="ck_users_boardstyle"),
        sa.CheckConstraint("linelength BETWEEN 0 AND 999", name="ck_users_linelength"),
        sa.CheckConstraint("pagelength BETWEEN 0 AND 999", name="ck_users_pagelength"),
        sa.CheckConstraint(
            "redoubles IS NULL OR redoubles BETWEEN 0 AND 99", name="ck_users_redoubles"
        ),
        sa.CheckConstraint(
            "sortwho IN ('login', 'name', 'rating', 'rrating')", name="ck_users_sortwho"
        ),
    )
    for table in ("gags", "blinds"):
        op.create_table(
            table,
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("owner", sa.String(), nullable=False),
            sa.Column("target", sa.String(), nullable=False),
            sa.PrimaryKeyConstraint("id", name=f"pk_{table}"),
            sa.UniqueConstraint("owner", "target", name=f"uq_{table}_owner_target"),
            _user_fk("owner", table),
            _user_fk("target", table),
        )
        op.create_index(f"ix_{table}_target", table, ["target"])
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recipient", sa.String(), nullable=False),
        sa.Column("sender", sa.String(), nullable=False),
        sa.Column("sent_at", sa.BigInteger(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_messages"),
        _user_fk("recipient", "messages"),
    )
    op.create_index("ix_messages_recipient", "messages", ["recipient"])
    op.create_table(
        "saved_matches",
        sa.Column("player1", sa.String(), nullable=False),
        sa.Column("player2", sa.String(), nullable=False),
        sa.Column("match_length", sa.Integer(), nullable=True),
        sa.Column("score1", sa.Integer(), nullable=False),
        sa.Column("score2", sa.Integer(), nullable=False),
        sa.Column("snapshot", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player1", "player2", name="pk_saved_matches"),
        sa.CheckConstraint("player1 <> player2", name="ck_saved_matches_distinct_players"),
        sa.CheckConstraint(
            "match_length IS NULL OR match_length > 0", name="ck_saved_matches_match_length"
        ),
        _user_fk("player1", "saved_matches"),
        _user_fk("player2", "saved_matches"),
    )
    op.create_index("ix_saved_matches_player2", "saved_matches", ["player2"])
    op.create_table(
        "match_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("player1", sa.String(), nullable=False),
        sa.Column("player2", sa.String(), nullable=False),
        sa.Column("match_length", sa.Integer(), nullable=True),
        sa.Column("score1", sa.Integer(), nullable=False),
        sa.Column("score2", sa.Integer(), nullable=False),
        sa.Column("winner", sa.String(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("rules", sa.Text(), nullable=False),
        sa.Column("moves", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_match_records"),
        sa.CheckConstraint(
            "match_length IS NULL OR match_length > 0", name="ck_match_records_match_length"
        ),
    )
    op.create_index("ix_match_records_player1_ended_at", "match_records", ["player1", "ended_at"])
    op.create_index("ix_match_records_player2_ended_at", "match_records", ["player2", "ended_at"])


def downgrade() -> None:
    """Drop every table (all data is lost)."""
    for table in ("match_records", "saved_matches", "messages", "blinds", "gags", "users"):
        op.drop_table(table)
