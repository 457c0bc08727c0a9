"""``SystemDice``: OS random bytes read in blocks, one byte a die, exactly uniform.

The byte source is injected, so the mapping from bytes to faces is checked exactly:
each face comes from 42 of the 252 accepted byte values, and the 4 others are skipped.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from backgammon.dice import BlockEntropy, SystemDice


class Source:
    """Gives the bytes of ``data`` in order, in pieces of at most ``n``; records calls."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0
        self.calls: list[int] = []

    def __call__(self, n: int) -> bytes:
        self.calls.append(n)
        piece = self.data[self.at : self.at + n]
        self.at += len(piece)
        return piece


def dice_of(data: bytes, block: int = 1024) -> list[int]:
    """Every die ``data`` makes, until the source runs dry."""
    roller = SystemDice(Source(data), block=block)
    out: list[int] = []
    with pytest.raises(ValueError, match="too few bytes"):
        while True:
            out.append(roller.die())
    return out


def test_every_byte_value_once_gives_each_face_42_times() -> None:
    """All 256 byte values: the four at 252 and above are skipped, the rest split evenly."""
    dice = dice_of(bytes(range(256)))
    assert len(dice) == 252
    assert Counter(dice) == {face: 42 for face in range(1, 7)}


@pytest.mark.parametrize("block", [1, 5, 252, 1024])
def test_each_byte_maps_to_its_face_whatever_the_block(block: int) -> None:
    data = bytes(range(256)) * 3
    expected = [b % 6 + 1 for b in data if b < 252]
    assert dice_of(data, block) == expected


def test_every_pair_of_bytes_gives_every_roll_equally() -> None:
    """The 252 x 252 accepted byte pairs: each of the 36 ordered rolls 1,764 times."""
    data = bytes(itertools.chain.from_iterable(itertools.product(range(252), repeat=2)))
    dice = dice_of(data, 4096)
    rolls = Counter(zip(dice[::2], dice[1::2], strict=True))
    assert len(rolls) == 36 and set(rolls.values()) == {42 * 42}


def test_rejected_bytes_are_skipped_across_blocks() -> None:
    source = Source(bytes([255, 254, 253, 252, 252, 0, 251, 252, 11]))
    roller = SystemDice(source, block=2)
    assert [roller.die(), roller.die(), roller.die()] == [1, 6, 6]
    assert source.calls == [2, 2, 2, 2, 2]


def test_bytes_are_read_a_block_at_a_time() -> None:
    source = Source(bytes(range(200)) * 10)
    roller = SystemDice(source, block=100)
    for _ in range(250):
        roller.die()
    assert source.calls == [100, 100, 100]


def test_a_block_must_hold_a_byte() -> None:
    with pytest.raises(ValueError):
        SystemDice(block=0)


def test_the_os_dice_stay_in_range_and_look_fair() -> None:
    """Real OS bytes: never outside 1..6, every face, and Pearson's chi-square far from
    the 5-degree tail (40 has a chance of about 1e-7 with fair dice)."""
    roller = SystemDice()
    counts = Counter(roller.die() for _ in range(60_000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    chi_square = sum((n - 10_000) ** 2 / 10_000 for n in counts.values())
    assert chi_square < 40


# -- BlockEntropy: the seeds' and the coin's bytes, read in blocks -------------------------


def test_block_entropy_hands_out_the_sources_bytes_in_order_each_once() -> None:
    data = bytes(range(256)) * 4
    source = Source(data)
    entropy = BlockEntropy(source, block=100)
    pieces = [entropy(n) for n in (32, 8, 8, 1, 60, 150, 1)]
    assert b"".join(pieces) == data[: sum(map(len, pieces))]
    assert [len(p) for p in pieces] == [32, 8, 8, 1, 60, 150, 1]
    # a block read whenever what is left falls short of a request
    assert source.calls == [100, 100, 100]


def test_block_entropy_refuses_a_source_that_runs_dry() -> None:
    entropy = BlockEntropy(Source(bytes(40)), block=16)
    assert entropy(32) == bytes(32)
    with pytest.raises(ValueError, match="too few bytes"):
        entropy(16)
    with pytest.raises(ValueError):
        BlockEntropy(block=0)
