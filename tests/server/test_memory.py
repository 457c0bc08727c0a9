"""Large freed blocks go back to the system (server/memory.py), checked in a child
process: glibc's allocator state is the process's own."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from server.memory import Trimmer, fix_mmap_threshold, trim_heap

_CHILD = """
import sys
from server.memory import fix_mmap_threshold

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
big = bytes(1 << 20)  # freeing a mapped block of 1 MiB is what makes glibc raise its threshold
del big
before = rss()
blocks, small = [], []
for _ in range(100):
    blocks.append(bytes(256 * 1024))  # a receive buffer's size (asyncio's read size)
    small.append(bytes(600))  # a live block above it, from the same heap
del blocks
print((rss() - before) // 1024)
"""


def _kept_kib(mode: str) -> int:
    """KiB of RSS a child process keeps after freeing 25 MiB of 256 KiB blocks."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_freed_receive_buffers_are_returned_to_the_system() -> None:
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc's mmap threshold: glibc only (this C library is another)")
    # Without the fix glibc keeps much of the 25 MiB freed in its heap (13 MiB with glibc
    # 2.36); with it, they are unmapped.
    assert _kept_kib("sliding") > 8_000
    assert _kept_kib("fixed") < 2_000


def test_the_heap_is_trimmed_once_the_connections_fall_to_half_their_peak() -> None:
    """D331: a peak of at least TRIM_FLOOR connections, then half of it or fewer: one
    trim, and the next trim waits for a new peak and a new fall."""
    trims: list[int] = []

    def trim() -> bool:
        trims.append(1)
        return True

    trimmer = Trimmer(trim, floor=100)
    seen = [trimmer.observe(n) for n in (10, 60, 99, 40)]  # no peak reached the floor
    assert seen == [False] * 4
    seen = [trimmer.observe(n) for n in (150, 200, 120, 101, 100, 99, 98)]
    assert seen == [False, False, False, False, True, False, False]
    assert trimmer.observe(20) is True  # 100 is the peak since: 20 is half of it or fewer
    assert trimmer.observe(5) is False  # the peak since, 20, is below the floor
    assert trimmer.trims == len(trims) == 2
    assert [trimmer.observe(n) for n in (300, 150)] == [False, True]
    trimmer.seen(400)  # a peak between two looks counts too
    assert trimmer.observe(200) is True
    assert trimmer.trims == 4


def test_trim_heap_gives_back_freed_memory_on_glibc() -> None:
    if not fix_mmap_threshold():
        pytest.skip("not glibc")
    assert isinstance(trim_heap(), bool)
