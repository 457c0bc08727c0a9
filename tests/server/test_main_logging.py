"""``python -m server`` logs telnetlib3's per-connection lines only at DEBUG, and tunes the
garbage collector once it has started."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest

from server.__main__ import GC_THRESHOLDS, quiet_telnetlib3, tune_gc


@pytest.fixture
def telnetlib3_logger() -> Iterator[logging.Logger]:
    """telnetlib3's logger, its level put back afterwards (it is process-wide)."""
    logger = logging.getLogger("telnetlib3")
    level = logger.level
    yield logger
    logger.setLevel(level)


@pytest.mark.parametrize("level", ["INFO", "WARNING"])
def test_telnetlib3_logs_errors_only(telnetlib3_logger: logging.Logger, level: str) -> None:
    """Not its INFO lines per connection, nor its warnings about what a client sent."""
    telnetlib3_logger.setLevel(logging.NOTSET)
    quiet_telnetlib3(level)
    connection_log = logging.getLogger("telnetlib3.server_base")  # "Connection from ..."
    assert not connection_log.isEnabledFor(logging.INFO)
    assert not logging.getLogger("telnetlib3.stream_writer").isEnabledFor(logging.WARNING)
    assert connection_log.isEnabledFor(logging.ERROR)


def test_debug_keeps_telnetlib3s_lines(telnetlib3_logger: logging.Logger) -> None:
    telnetlib3_logger.setLevel(logging.NOTSET)
    quiet_telnetlib3("DEBUG")
    assert telnetlib3_logger.level == logging.NOTSET


def test_the_collector_is_tuned_after_start_up() -> None:
    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
