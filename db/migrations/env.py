"""Alembic environment, driven from code (:func:`db.engine.run_alembic`); no alembic.ini.

The caller opens a transaction on its own (async) engine and passes the synchronous
connection in ``config.attributes["connection"]``; everything here runs inside that
transaction, so a migration is applied completely or not at all. The ``alembic`` command
line is not supported: use ``python -m db`` (see docs/database.md).
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from db.models import Base

# Any constant works; it only has to be the same in every server process.
_PG_MIGRATION_LOCK = 0x46494253  # "FIBS"


def run_migrations(connection: Connection) -> None:
    """Configure the migration context on ``connection`` and run the pending revisions."""
    is_sqlite = connection.dialect.name == "sqlite"
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite cannot ALTER most things; batch mode copies the table instead.
        render_as_batch=is_sqlite,
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Two servers starting at once: the second waits, then finds nothing to do.
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_MIGRATION_LOCK}
            )
        context.run_migrations()


def main() -> None:
    """Entry point Alembic calls when it loads this file."""
    if context.is_offline_mode():
        raise RuntimeError("offline (--sql) migrations are not supported")
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError(
            "db/migrations is run from code: call db.engine.migrate(url) or use python -m db"
        )
    run_migrations(connection)


main()
