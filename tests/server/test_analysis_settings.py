"""The ``[analysis]`` settings of fibs.conf (docs/analysis.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.config import ConfigError, load


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("enabled = maybe", "[analysis] enabled must be auto, yes, no, not 'maybe'"),
        ("processes = 0", "[analysis] processes must be 1..64"),
        ("ply = 3", "[analysis] ply must be 0, 1 or 2"),
        ("queue = 0", "[analysis] queue must be 1 or more"),
        ("timeout = 0", "[analysis] timeout must be above 0"),
        ("pause_above = 0", "[analysis] pause_above must be above 0 and at most 1"),
        ("pause_above = 1.5", "[analysis] pause_above must be above 0 and at most 1"),
    ],
)
def test_bad_analysis_settings_stop_the_start(tmp_path: Path, line: str, message: str) -> None:
    conf = tmp_path / "fibs.conf"
    conf.write_text(f"[analysis]\n{line}\n")
    with pytest.raises(ConfigError) as raised:
        load(conf)
    assert str(raised.value) == message


def test_the_analysis_settings_are_read(tmp_path: Path) -> None:
    conf = tmp_path / "fibs.conf"
    conf.write_text(
        "[analysis]\nenabled = no\nprocesses = 3\nply = 2\nqueue = 7\ngnubg = /x\n"
        "pause_above = 0.25\n"
    )
    settings = load(conf)
    assert (settings.analysis, settings.analysis_processes, settings.analysis_ply) == ("no", 3, 2)
    assert (settings.analysis_queue, settings.analysis_gnubg) == (7, "/x")
    assert settings.analysis_pause_above == 0.25
    assert load(None).analysis_pause_above == 0.1  # play first (server/analysis/quiet.py)
    assert load(None).analysis == "auto"  # on by default when gnubg is found
