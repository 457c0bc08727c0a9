"""Large blocks go back to the system when freed: glibc's mmap threshold, fixed.

glibc serves an allocation of 128 KiB or more with ``mmap`` and unmaps it when it is
freed. But the first time it frees such a block it raises that threshold to the block's
size (up to 32 MiB, its *dynamic* threshold), and from then on blocks of that size come
from the heap, whose free space goes back to the system only from its top. The
server's large blocks are input: asyncio receives into 256 KiB buffers, and a client
that sends faster than its budget lets the server parse (docs/performance.md §12) holds
a few of them until they are read. After the ``hostile`` benchmark's attack the heap
kept about 20 MB of such freed blocks for good, stuck under the small objects allocated
meanwhile: RSS stayed 22-27 % above its start. With the threshold set (to glibc's own
default, which setting it freezes) the large blocks stay mapped and are returned when
freed: 6.6 % above the start (2026-11-24, same scenario). The cost is an ``mmap``, an
``mremap`` and an ``munmap`` per read of a socket, about 1-2 µs.

Only on glibc (Linux); elsewhere nothing is changed.

The heap's free space below its top goes back only with ``malloc_trim``: after a login
flood (issue 34 item 12, D331) glibc held 10 MB of freed blocks, RSS 25 % above its
start; :class:`Trimmer` calls it when the connections have fallen to half their peak.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable
from typing import Final

__all__ = ["MMAP_THRESHOLD", "TRIM_FLOOR", "Trimmer", "fix_mmap_threshold", "trim_heap"]

log = logging.getLogger(__name__)

MMAP_THRESHOLD: Final = 128 * 1024
"""Bytes from which glibc maps a block of its own: its default (``M_MMAP_THRESHOLD``)."""

_M_MMAP_THRESHOLD: Final = -3
"""``mallopt``'s parameter number for the threshold (glibc's ``malloc.h``)."""


def fix_mmap_threshold() -> bool:
    """Set glibc's mmap threshold to :data:`MMAP_THRESHOLD`, which stops it sliding up.

    :returns: whether it was set (false where the C library is not glibc).
    """
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the C library's among them
        libc.gnu_get_libc_version.restype = ctypes.c_char_p
        version = libc.gnu_get_libc_version().decode()
        done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):  # not glibc
        log.info("memory: not glibc, the allocator's mmap threshold left as it is")
        return False
    log.info(
        "memory: glibc %s, blocks of %d KiB or more mapped and returned when freed%s",
        version,
        MMAP_THRESHOLD // 1024,
        "" if done else " (mallopt refused)",
    )
    return done


TRIM_FLOOR: Final = 32
"""Connections a peak must reach before a fall from it is worth a ``malloc_trim``."""


def trim_heap() -> bool:
    """Give the heap's free pages back to the system (glibc's ``malloc_trim(0)``).

    :returns: whether memory was given back (false where the C library is not glibc).
    """
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False


class Trimmer:
    """Trims the heap once the connections have fallen to half of their peak since the
    last trim (a peak of at least :data:`TRIM_FLOOR`), D331.

    A flood of connections leaves glibc's heap with free blocks under live ones, which
    only ``malloc_trim`` returns (10 MB after a login flood, 9 MB given back). It walks
    the heap (a few milliseconds), so it runs after a fall, not at every look."""

    def __init__(self, trim: Callable[[], bool] = trim_heap, floor: int = TRIM_FLOOR) -> None:
        self._trim = trim
        self._floor = floor
        self._peak = 0
        self.trims = 0
        """Trims made since the start."""

    @property
    def peak(self) -> int:
        """The most connections open at once since the last trim."""
        return self._peak

    def seen(self, connections: int) -> None:
        """A connection came: ``connections`` are open now (the peak is kept)."""
        if connections > self._peak:
            self._peak = connections

    def observe(self, connections: int) -> bool:
        """Look at the number of connections now; trim after a fall (True: trimmed)."""
        self.seen(connections)
        if self._peak < self._floor or connections > self._peak // 2:
            return False
        self._peak = connections
        self.trims += 1
        self._trim()
        return True
