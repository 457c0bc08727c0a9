"""Add saved_chouettes, saved_chouette_players and chouette_results (issue 31; D362, D363).

Revision ID: 0010
Revises: 0008
Create Date: 2026-11-28

A chouette table is saved after every action (the core's JSON without its events) with
the players still at it, so that a restart or a SIGKILL loses nothing and a returning
player finds their table; every finished game adds one row per player who won or lost
in it. Numbered 0010 as allotted for issue 31's records; it follows 0008 until the
merge re-chains it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the three tables and their indexes."""
    op.create_table(
        "saved_chouettes",
        sa.Column("table_id", sa.String(), nullable=False),
        sa.Column("host", sa.String(), nullable=False),
        sa.Column("snapshot", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name="pk_saved_chouettes"),
    )
    op.create_table(
        "saved_chouette_players",
        sa.Column("table_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "name", name="pk_saved_chouette_players"),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["saved_chouettes.table_id"],
            name="fk_saved_chouette_players_table_id_saved_chouettes",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["name"],
            ["users.name"],
            name="fk_saved_chouette_players_name_users",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_saved_chouette_players_name", "saved_chouette_players", ["name"])
    op.create_table(
        "chouette_results",
        sa.Column("table_id", sa.String(), nullable=False),
        sa.Column("game", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("seat", sa.String(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", "game", "name", name="pk_chouette_results"),
    )
    op.create_index("ix_chouette_results_name", "chouette_results", ["name"])


def downgrade() -> None:
    """Drop them (saved chouette tables and their records are lost)."""
    op.drop_index("ix_chouette_results_name", table_name="chouette_results")
    op.drop_table("chouette_results")
    op.drop_index("ix_saved_chouette_players_name", table_name="saved_chouette_players")
    op.drop_table("saved_chouette_players")
    op.drop_table("saved_chouettes")
