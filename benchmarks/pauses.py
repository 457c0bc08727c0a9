"""What stops the server's event loop, recorded inside the server (``load.py --server-pauses``).

A round trip's tail comes from moments when the event loop answers nobody. This module,
installed in the server process before it starts (by ``load.py``'s experiment wrapper),
records three kinds of such moments, each with its ``time.monotonic()`` (one clock for all
processes on Linux, so ``load.py`` keeps those of its measured window):

* ``gc``: every garbage collection that took over :data:`GC_MS` (generation, ms);
* ``callbacks``: every callback of the loop (a task step, a timer, an I/O handler) that ran
  over :data:`CALLBACK_MS`, with the coroutine chain of a task step: what the loop did
  instead of answering;
* ``commits``: every SQLite batch whose ``COMMIT`` (the ``fsync``, on the runner's thread)
  took over :data:`COMMIT_MS`: the disk's stalls, which every write of the batch, and
  every write queued behind it, waits for.

The records are written as JSON to the given file when the server exits. Timing every
callback costs the loop about a microsecond each: compare figures of runs made with the
same options (docs/performance.md §10).
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import time
from collections.abc import Callable
from typing import Any

import db.runner

GC_MS = 5.0
CALLBACK_MS = 15.0
COMMIT_MS = 20.0


def _chain(handle: asyncio.Handle) -> str:
    """The coroutines a task step was in (outermost first), or the handle itself."""
    task = getattr(getattr(handle, "_callback", None), "__self__", None)
    if not isinstance(task, asyncio.Task):
        return repr(handle)[:120]
    names: list[str] = []
    coroutine: Any = task.get_coro()
    while coroutine is not None and len(names) < 16:
        names.append(getattr(coroutine, "__qualname__", type(coroutine).__name__))
        coroutine = getattr(coroutine, "cr_await", None)
    return " > ".join(names)


def install(path: str) -> None:
    """Record pauses from now on; write them to ``path`` at exit."""
    records: dict[str, list[list[Any]]] = {"gc": [], "callbacks": [], "commits": []}
    clock = time.monotonic
    started = [0.0]

    def collected(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = clock()
            return
        ms = (clock() - started[0]) * 1000
        if ms > GC_MS:
            records["gc"].append([clock(), info["generation"], round(ms, 2)])

    gc.callbacks.append(collected)

    run = asyncio.Handle._run

    def timed_run(handle: asyncio.Handle) -> None:
        begin = clock()
        run(handle)
        ms = (clock() - begin) * 1000
        if ms > CALLBACK_MS:
            records["callbacks"].append([begin, round(ms, 2), _chain(handle)])

    asyncio.Handle._run = timed_run  # type: ignore[method-assign,assignment]

    in_thread = db.runner.SqliteRunner._in_thread

    def timed_in_thread(
        runner: db.runner.SqliteRunner,
        work: Callable[[], object],
        writes: list[Any],
        then: Callable[[list[Any], BaseException | None], None],
    ) -> None:
        def timed_work() -> object:
            begin = clock()
            try:
                return work()
            finally:
                ms = (clock() - begin) * 1000
                if ms > COMMIT_MS:
                    records["commits"].append([begin, round(ms, 2), len(writes)])

        in_thread(runner, timed_work, writes, then)

    db.runner.SqliteRunner._in_thread = timed_in_thread  # type: ignore[method-assign,assignment]

    def write() -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(records, f)

    atexit.register(write)


def summarize(path: str, begin: float, end: float) -> dict[str, Any]:
    """The pauses recorded between ``begin`` and ``end`` (``time.monotonic()``): counts,
    totals, the longest, and a few examples of each kind."""
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    out: dict[str, Any] = {"file": path}
    ms_column = {"gc": 2, "callbacks": 1, "commits": 1}
    for kind, column in ms_column.items():
        inside = [r for r in records[kind] if begin <= r[0] <= end]
        times = [r[column] for r in inside]
        out[kind] = {
            "count": len(inside),
            "total_ms": round(sum(times), 1),
            "max_ms": max(times, default=0.0),
            "longest": [
                [round(r[0] - begin, 2), *r[1:]]
                for r in sorted(inside, key=lambda r: -r[column])[:5]
            ],
        }
    return out
