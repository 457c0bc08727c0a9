"""What the browser tests share: a server in a thread of its own, on a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .browsers import ServerThread


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path) as running:
        yield running
