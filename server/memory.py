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
start; :class:`Trimmer` calls it when the connections have fallen to half their peak,
and once more when they have stayed low for the login time (D435): what the flood's
connections still waiting at ``login:`` held is freed only when they go.
"""

from __future__ import annotations

import ctypes
import gc
import logging
from collections.abc import Callable
from typing import Final

__all__ = [
    "MMAP_THRESHOLD",
    "SETTLE_LOOKS",
    "TRIM_FLOOR",
    "Trimmer",
    "collect_and_trim",
    "fix_mmap_threshold",
    "jemalloc_loaded",
    "trim_heap",
]

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

SETTLE_LOOKS: Final = 7
"""Looks (10 s apart in the service) the connections must stay low after a fall's trim
before the second trim (D435): the login time-out (60 s) and one look more, so that the
flood's connections still at ``login:`` have gone and their memory been freed."""


JEMALLOC_PURGE: Final = b"arena.4096.purge"
"""jemalloc's control that gives back the free pages of every arena at once (4096:
``MALLCTL_ARENAS_ALL``)."""


def jemalloc_loaded() -> bool:
    """Whether jemalloc serves this process's ``malloc`` (its ``mallctl`` is there)."""
    return hasattr(ctypes.CDLL(None), "mallctl")


def trim_heap() -> bool:
    """Give the heap's free pages back to the system: glibc's ``malloc_trim(0)``, and
    where jemalloc serves ``malloc`` (``[server] allocator = jemalloc``, D450) its purge
    of every arena, without waiting for its decay time.

    :returns: whether memory was given back (false where neither is there).
    """
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    mallctl = getattr(libc, "mallctl", None)
    purged = mallctl is not None and mallctl(JEMALLOC_PURGE, None, None, None, 0) == 0
    trim = getattr(libc, "malloc_trim", None)
    return bool(trim is not None and trim(0)) or purged


def collect_and_trim() -> bool:
    """A full collection of the cyclic garbage collector, then :func:`trim_heap` (the
    second trim, D435). The server's full collections are rare by design
    (``GC_THRESHOLDS``, docs/performance.md §8), and what the last of a flood's
    connections left in reference cycles (the ten pre-login flood WebSockets of §16 with
    their queued messages) would otherwise stay until one: with glibc's allocator
    (D434) 7.7 MB that the trim alone did not give back. Once per flood, after the
    connections have stayed low: one pause of a full collection then.

    :returns: whether memory was given back (as :func:`trim_heap`).
    """
    gc.collect()
    return trim_heap()


class Trimmer:
    """Trims the heap once the connections have fallen to half of their peak since the
    last trim (a peak of at least :data:`TRIM_FLOOR`), D331; and once more when they have
    stayed at most that low for ``settle_looks`` looks after it, that time with a full
    collection first (``settled_trim``, D435).

    A flood of connections leaves glibc's heap with free blocks under live ones, which
    only ``malloc_trim`` returns (10 MB after a login flood, 9 MB given back). It walks
    the heap (a few milliseconds), so it runs after a fall, not at every look. The fall
    comes when the flood stops, but some of its connections stay until their login time
    runs out (the web floods' WebSockets still in the login dialog: 60 s), holding what
    they read; what they free then stays in the heap until the next trim, which without
    a second one waits for the next flood (with Python's objects from glibc, D434, 11 MB
    after the web floods of docs/performance.md §16)."""

    def __init__(
        self,
        trim: Callable[[], bool] = trim_heap,
        floor: int = TRIM_FLOOR,
        settle_looks: int = SETTLE_LOOKS,
        settled_trim: Callable[[], bool] = collect_and_trim,
    ) -> None:
        self._trim = trim
        self._settled_trim = settled_trim
        self._floor = floor
        self._settle_looks = max(1, settle_looks)
        self._peak = 0
        self._low = 0
        """After a fall's trim: the connections (half the peak) above which the fall is
        over, and the second trim no longer due."""
        self._settling = 0
        """Looks left before the second trim; 0: none due."""
        self.trims = 0
        """Trims made since the start."""
        self.settled_trims = 0
        """Of :attr:`trims`, those made because the connections stayed low (D435)."""

    @property
    def peak(self) -> int:
        """The most connections open at once since the last trim."""
        return self._peak

    def seen(self, connections: int) -> None:
        """A connection came: ``connections`` are open now (the peak is kept)."""
        if connections > self._peak:
            self._peak = connections

    def observe(self, connections: int) -> bool:
        """Look at the number of connections now; trim after a fall, and again once
        they have stayed low after it (True: trimmed)."""
        self.seen(connections)
        if self._peak >= self._floor and connections <= self._peak // 2:
            self._low = self._peak // 2
            self._peak = connections
            self._settling = self._settle_looks
            return self._trim_now()
        if not self._settling:
            return False
        if self._peak > self._low:  # they came back (between two looks too): not settled
            self._settling = 0
            return False
        self._settling -= 1
        if self._settling:
            return False
        self.settled_trims += 1
        self._peak = connections  # the peak since the last trim
        self.trims += 1
        self._settled_trim()
        return True

    def _trim_now(self) -> bool:
        self.trims += 1
        self._trim()
        return True
