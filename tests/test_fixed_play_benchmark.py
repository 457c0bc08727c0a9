"""benchmarks/fixed_play.py: the fixed workload's configuration and how its players read
the server's lines (the workload itself runs a server: docs/performance.md §24)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest

from tests.benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parent.parent


fixed = load_script("fixed_play")


def test_the_config_is_the_checkouts_shipped_one_with_the_runs_address(tmp_path: Path) -> None:
    path = fixed.write_config(ROOT, tmp_path, 4510, 4511, ["analysis.enabled=no"])
    config = fixed.read_config(path)
    shipped = fixed.read_config(ROOT / "fibs.conf")
    assert config["server"]["port"] == "4510"
    assert config["web"]["port"] == "4511"
    assert config["analysis"]["enabled"] == "no"
    assert config["limits"]["commands_per_second"] == shipped["limits"]["commands_per_second"]


def test_report_lines_are_told_from_answers() -> None:
    assert fixed.is_report("fa000 and fb000 start a 1 point match.")
    assert fixed.is_report("fa000 wins a 1 point match against fb000  1-0 .")
    assert not fixed.is_report("** You invited fb000 to a 1 point match.")
    assert not fixed.is_report("fa000 wants to play a 1 point match with you.")


def _pair() -> tuple[Any, Any, Any]:
    async def make() -> tuple[Any, Any, Any]:
        reader = asyncio.StreamReader()
        a = fixed.Side("fa000", "fb000", True, reader, None, matches_left=2)
        b = fixed.Side("fb000", "fa000", False, reader, None, matches_left=2)
        return a, b, fixed.Workload([(a, b)], random.Random(1))

    return asyncio.run(make())


def test_an_invitation_is_joined_and_a_finished_match_followed_by_the_next() -> None:
    a, b, workload = _pair()
    workload.on_line(b, "fa000 wants to play a 1 point match with you.")
    assert b.due == "join fa000"
    b.pending = True
    workload.on_line(b, "5 fa000 - - 1 0 1500.00 0 0 0 127.0.0.1 fixedplay -")
    assert b.pending, "a CLIP who line is no answer"
    workload.on_line(a, "You win the 1 point match 1-0 .")
    assert (workload.matches, a.matches_left, a.due) == (1, 1, "invite fb000 1")
    a.due = None
    workload.on_line(a, "fb000 wins the 1 point match 1-0 .")
    assert (workload.matches, a.matches_left, a.due) == (2, 0, None)


def test_an_unexpected_refusal_stops_the_workload() -> None:
    a, _, workload = _pair()
    workload.on_line(a, "** You invited fb000 to a 1 point match.")
    with pytest.raises(fixed.WorkloadError):
        workload.on_line(a, "** There's no saved match with fb000.")
