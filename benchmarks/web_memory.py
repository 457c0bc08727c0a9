"""What the web floods leave in the server's memory (issue 34 item 9, docs/performance.md §16).

The server (``App`` and ``Service`` with the web door, SQLite in a temporary directory,
the start-up of ``python -m server``: glibc's mmap threshold fixed, the start frozen for
the collector) runs in this process; :mod:`hostile_web`'s attack runs in another for
``--seconds`` (1,000 WebSockets logged in and held, then ``--slow`` slow HTTP clients
and ``--floods`` flooding WebSockets). The server's RSS is printed before, at the end of
the attack, and ``--after`` seconds later; then what is still alive: pymalloc's arenas
and blocks, what only the cyclic collector would free (a collection with
``DEBUG_SAVEALL``: objects left in reference cycles, which the server's rare full
collections leave for long, D422), the RSS after that collection and after a
``malloc_trim``, objects by type that grew, and with ``--trace`` the lines that
allocated what is left (tracemalloc, started before the attack, 25 frames; it slows the
server: for finding, not for figures).

Python's allocator is the one ``python -m server`` starts with (``[server] allocator``,
D434, D450: jemalloc as shipped), or ``--allocator pymalloc|malloc``: the script starts
itself again with ``PYTHONMALLOC`` (and jemalloc's ``LD_PRELOAD``) set, as the server
does; a ``PYTHONMALLOC`` set already wins. ``--later S`` reads RSS once more S seconds after
the attack (after the service's second trim, D435, about 70 s after the fall).

    python benchmarks/web_memory.py [--seconds 8] [--after 12] [--later 90]
        [--allocator jemalloc|pymalloc|malloc] [--trace]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import multiprocessing
import os
import socket
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hostile_web
from aiohttp import web

from db.repository import Database
from server.__main__ import allocator_in_use, restart_with_allocator, tune_gc
from server.app import App
from server.config import ALLOCATORS, Settings
from server.memory import fix_mmap_threshold, trim_heap
from server.service import Service
from server.world.passwords import ScryptCost, hash_password_sync
from server.world.session import DEFAULT_SETTINGS, DEFAULT_TOGGLES, storable_toggles

PASSWORD = "secret"


def rss_mb() -> float:
    """This process's resident set size, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def arenas() -> str:
    """pymalloc's arenas now (``sys._debugmallocstats``' summary lines)."""
    with tempfile.TemporaryFile("w+") as out:  # it writes to the C library's stderr
        saved = os.dup(2)
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    wanted = ("# arenas", "# bytes in allocated blocks", "# bytes in available blocks")
    return "; ".join(
        " ".join(line.split()) for line in text.splitlines() if line.startswith(wanted)
    )


def by_type() -> collections.Counter[str]:
    """Live objects the collector tracks, by type name."""
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


async def main(args: argparse.Namespace) -> None:
    """Start the server, attack it from another process, say what stays."""
    folder = Path(tempfile.mkdtemp(prefix="web-memory-"))
    url = f"sqlite+aiosqlite:///{folder / 'fibs.db'}"
    db = await Database.open(url)
    names = [f"web_{i:04d}" for i in range(args.sockets)]
    cheap = hash_password_sync(PASSWORD, ScryptCost(n=16, r=1, p=1))
    for name in names:
        await db.create_user(
            name, cheap, toggles=storable_toggles(DEFAULT_TOGGLES), settings=DEFAULT_SETTINGS
        )
    settings = Settings(host="127.0.0.1", port=0, database=url, login_delay=0.0)
    service = Service(App(settings, db))
    await service.start()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    await service.start_web(sock=sock)
    port = sock.getsockname()[1]
    fix_mmap_threshold()
    tune_gc()
    await asyncio.sleep(1.0)
    if args.trace:
        tracemalloc.start(25)
        first_snapshot = tracemalloc.take_snapshot()
    before_blocks = sys.getallocatedblocks()
    before_types = by_type()
    before = rss_mb()
    print(f"start: RSS {before:.1f} MB; allocator {allocator_in_use()}; {arenas()}", flush=True)
    spawn = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[hostile_web.WebAttackStats] = spawn.Queue()
    attack = [port, names, PASSWORD, args.slow, args.floods, args.seconds]
    child = spawn.Process(target=hostile_web.attack_process, args=(queue, *attack))
    started = time.monotonic()
    child.start()
    loop = asyncio.get_running_loop()
    stats = await loop.run_in_executor(None, queue.get)
    child.join()
    print(f"attack over after {time.monotonic() - started:.1f} s: {stats}", flush=True)
    print(f"end of attack: RSS {rss_mb():.1f} MB", flush=True)
    await asyncio.sleep(args.after)
    after = rss_mb()
    print(
        f"{args.after:.0f} s after: RSS {after:.1f} MB ({(after / before - 1) * 100:+.1f} %); "
        f"{arenas()}",
        flush=True,
    )
    if args.later > args.after:
        await asyncio.sleep(args.later - args.after)
        later = rss_mb()
        print(
            f"{args.later:.0f} s after: RSS {later:.1f} MB ({(later / before - 1) * 100:+.1f} %);"
            f" heap trims {service.trimmer.trims} ({service.trimmer.settled_trims} once low)",
            flush=True,
        )
    print(f"pymalloc blocks: {before_blocks} at the start, {sys.getallocatedblocks()} now")
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection frees is kept in gc.garbage
    found = gc.collect()
    gc.set_debug(0)
    cycles = collections.Counter(type(o).__name__ for o in gc.garbage)
    gc.garbage.clear()
    gc.collect()
    print(f"left in reference cycles: {found} objects; {cycles.most_common(15)}")
    print(f"after collecting them: RSS {rss_mb():.1f} MB; {arenas()}")
    trim_heap()
    print(f"after malloc_trim: RSS {rss_mb():.1f} MB")
    sockets = [o for o in gc.get_objects() if isinstance(o, web.WebSocketResponse)]
    print(f"WebSocketResponses alive: {len(sockets)}")
    for ws in sockets[:10]:
        reader = ws._reader
        queued = len(reader._buffer) if reader is not None else None
        transport = ws._req.transport if ws._req is not None else None
        print(
            f"   closed={ws.closed} queued={queued} "
            f"transport={'none' if transport is None else transport.is_closing()}"
        )
    places: collections.Counter[str] = collections.Counter()
    for task in asyncio.all_tasks():
        chain: list[str] = []
        coro: Any = task.get_coro()
        while coro is not None and hasattr(coro, "cr_frame") and coro.cr_frame is not None:
            chain.append(f"{coro.cr_code.co_name}:{coro.cr_frame.f_lineno}")
            coro = coro.cr_await
        places[" -> ".join(chain) + f" -> {coro!r:.60}"] += 1
    for place, count in places.most_common(8):
        print(f"   {count} tasks at {place}")
    grown = by_type() - before_types
    print(f"after gc.collect: RSS {rss_mb():.1f} MB; objects grown: {grown.most_common(12)}")
    if args.trace:
        grew = tracemalloc.take_snapshot().compare_to(first_snapshot, "traceback")
        grown_mb = sum(d.size_diff for d in grew) / 1e6
        print(f"traced allocations grown since the start: {grown_mb:.2f} MB")
        for stat in grew[:10]:
            print(f"{stat.size_diff / 1e6:.2f} MB in {stat.count_diff} blocks:")
            for line in stat.traceback.format()[-12:]:
                print("   ", line)
    await service.stop()
    await db.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--after", type=float, default=12.0)
    parser.add_argument("--sockets", type=int, default=1000)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--floods", type=int, default=30)
    parser.add_argument("--later", type=float, default=0.0)
    parser.add_argument("--allocator", choices=ALLOCATORS, default=Settings().allocator)
    parser.add_argument("--trace", action="store_true")
    options = parser.parse_args()
    restart_with_allocator(options.allocator)  # as python -m server starts (D434)
    import uvloop

    uvloop.run(main(options))
