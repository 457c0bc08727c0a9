"""Index the stored messages' senders: a sender's messages counted without a scan.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27

A sender may have only so many messages stored for others (D270), counted each time
one is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the index on ``messages.sender``."""
    op.create_index("ix_messages_sender", "messages", ["sender"])


def downgrade() -> None:
    """Drop it."""
    op.drop_index("ix_messages_sender", table_name="messages")
