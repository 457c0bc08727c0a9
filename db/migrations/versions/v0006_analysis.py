"""Add match_analyses: GNU Backgammon's analysis of each finished match (issue 29).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27

A row is first the request (``queued``: the analysis workers' queue, kept across a
restart), then its outcome (``done`` with the analysis as JSON text and both players'
rates, or ``failed``). Matches finished before this revision have no row: they are
analysed on demand (``analysis <id>``, docs/analysis.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table of analyses and its index of the queue."""
    op.create_table(
        "match_analyses",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("queued_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("rate1", sa.Float(), nullable=True),
        sa.Column("rate2", sa.Float(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("match_id", name="pk_match_analyses"),
        sa.CheckConstraint("state IN ('queued', 'done', 'failed')", name="ck_match_analyses_state"),
        sa.ForeignKeyConstraint(
            ["match_id"],
            ["match_records.id"],
            name="fk_match_analyses_match_id_match_records",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_match_analyses_state_queued_at", "match_analyses", ["state", "queued_at"])


def downgrade() -> None:
    """Drop the table (the analyses can be made again from the match records)."""
    op.drop_index("ix_match_analyses_state_queued_at", table_name="match_analyses")
    op.drop_table("match_analyses")
