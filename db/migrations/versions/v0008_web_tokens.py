"""Add web_tokens: the web page's session tokens (issue 28; D320-D329, docs/web.md).

Revision ID: 0008
Revises: 0006
Create Date: 2026-11-27

A page whose WebSocket dropped logs in again with a token the server gave it, not with
a stored password. Only the token's SHA-256 is kept, with its user and its expiry; the
table starts empty (a page logged in before this revision asks for a token at its next
login). Numbered 0008 as allotted for issue 28 (0007 went to other work); it follows
0006 until a 0007 lands, then its ``down_revision`` becomes "0007".
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table of tokens and its index of users."""
    op.create_table(
        "web_tokens",
        sa.Column("digest", sa.String(), nullable=False),
        sa.Column("user_name", sa.String(), nullable=False),
        sa.Column("issued_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_web_tokens"),
        sa.ForeignKeyConstraint(
            ["user_name"],
            ["users.name"],
            name="fk_web_tokens_user_name_users",
            ondelete="CASCADE",
        ),
    )
    op.create_index("ix_web_tokens_user_name", "web_tokens", ["user_name"])


def downgrade() -> None:
    """Drop the table (pages then log in with their password again)."""
    op.drop_index("ix_web_tokens_user_name", table_name="web_tokens")
    op.drop_table("web_tokens")
