"""Index the users' names in lower case: look-alike names found without a scan.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27

New names are unique without regard to case (D269): registering one looks for the
names that differ only in case, and ``whois`` names them. Not a unique index: names
registered before that differ only in case keep working (nothing is renamed). Names are
ASCII letters and ``_``, so ``lower`` is the same on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the index on ``lower(name)``."""
    op.create_index("ix_users_name_lower", "users", [sa.text("lower(name)")])


def downgrade() -> None:
    """Drop it."""
    op.drop_index("ix_users_name_lower", table_name="users")
