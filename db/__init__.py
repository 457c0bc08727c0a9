"""Persistence for the FIBS server: the only package that imports SQLAlchemy.

The server opens a :class:`Database` at start (which migrates the schema) and calls its
async methods; everything it gets back is a plain frozen value from :mod:`db.records`.
See docs/database.md.
"""

from __future__ import annotations

from db.engine import migrate
from db.errors import DatabaseError, MigrationError, UnknownUserError, UserExistsError
from db.records import (
    DEFAULT_RATING,
    MatchRecord,
    RatingEntry,
    RatingUpdate,
    SavedEvents,
    SavedMatch,
    StoredMessage,
    User,
    UserSettings,
)
from db.repository import RATING_LIST_EXPERIENCE, Database

__all__ = [
    "DEFAULT_RATING",
    "RATING_LIST_EXPERIENCE",
    "Database",
    "DatabaseError",
    "MatchRecord",
    "MigrationError",
    "RatingEntry",
    "RatingUpdate",
    "SavedEvents",
    "SavedMatch",
    "StoredMessage",
    "UnknownUserError",
    "User",
    "UserExistsError",
    "UserSettings",
    "migrate",
]
