"""Add table_owners: each match table's node and fencing token (issue 32, item 4).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28

A node that starts or resumes a match takes its table by raising the table's epoch;
every save and the match's end are written only with the epoch still the writer's, so
an old owner that wakes (a paused process, a node cut off from NATS but not from
PostgreSQL) cannot write.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table."""
    op.create_table(
        "table_owners",
        sa.Column("table_id", sa.String(), nullable=False),
        sa.Column("node", sa.String(), nullable=False),
        sa.Column("epoch", sa.Integer(), nullable=False),
        sa.Column("claimed_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_id", name="pk_table_owners"),
    )


def downgrade() -> None:
    """Drop the table."""
    op.drop_table("table_owners")
