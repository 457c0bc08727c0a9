"""The ``database`` fixture of the db tests (the database targets are in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from db.repository import Database
from tests.conftest import DbTarget, FakeClock


@pytest.fixture
async def database(db_target: DbTarget, clock: FakeClock) -> AsyncIterator[Database]:
    """A migrated, empty :class:`Database`, closed after the test."""
    database = await db_target.open(clock=clock)
    try:
        yield database
    finally:
        await database.close()
