"""Alembic environment and revisions of the server's schema (run by :func:`db.engine.migrate`)."""
