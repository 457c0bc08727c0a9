"""Legal-play counts and results against the checked-in gnubg data (no gnubg needed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import decode_position_id, encode_position_id

DATA = Path(__file__).parent / "data" / "perft.txt"


def _cases() -> list[tuple[str, str, int, str, str]]:
    cases = []
    for line in DATA.read_text().splitlines():
        if line.startswith("#"):
            continue
        pid, roll, count, digest, category = line.split()
        cases.append((pid, roll, int(count), digest, category))
    return cases


CASES = _cases()


def test_data_covers_every_category() -> None:
    categories = {c[4] for c in CASES}
    assert categories >= {
        "opening",
        "contact",
        "double",
        "bar",
        "closed",
        "prime",
        "bearoff",
        "one_die",
        "partial_double",
        "no_move",
    }
    assert len(CASES) >= 2500


@pytest.mark.parametrize("category", sorted({c[4] for c in CASES}))
def test_results_equal_gnubg(category: str) -> None:
    failures = []
    for pid, roll, count, digest, cat in CASES:
        if cat != category:
            continue
        plays = legal_plays(decode_position_id(pid), 0, Roll.parse(roll))
        ids = sorted(encode_position_id(p.result, 0) for p in plays)
        mine = hashlib.sha256(" ".join(ids).encode()).hexdigest()[:16]
        if len(ids) != count or mine != digest or len(set(ids)) != len(ids):
            failures.append(f"{pid} {roll}: {len(ids)} plays, gnubg {count}")
    assert not failures, failures[:5]


def test_opening_counts() -> None:
    counts = {roll: count for pid, roll, count, _, cat in CASES if cat == "opening"}
    assert len(counts) == 36
    # Each non-double has the same count in either order of the dice.
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            assert counts[f"{d1}{d2}"] == counts[f"{d2}{d1}"]
    assert counts["31"] == 16
