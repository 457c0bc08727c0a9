"""What the browser tests share: a server in a thread of its own, on a fresh database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .browsers import ServerThread


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests run one after another on one worker when the tests run in
    parallel (``--dist loadgroup``, pyproject.toml): each drives two or three Chromiums,
    which beside each other on two cores wait on one another more than on the page."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.xdist_group("browser"))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    with ServerThread(tmp_path) as running:
        yield running
