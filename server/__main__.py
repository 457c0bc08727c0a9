"""``python -m server`` (console script ``fibs-server``): run the FIBS server.

Reads ``fibs.conf`` from the working directory (or ``--config PATH``); ``--host``,
``--port`` and ``--database URL`` override it. The schema is created or upgraded at
start. SIGINT/SIGTERM tell every user, close every connection (saving what must be
saved) and stop; SIGUSR1 drains the node (HAProxy's agent check, ``[server]
agent_port``, says ``drain``: no new connections; then its users are warned and, after
``[server] drain_grace``, sent away to log in at another node, D415), SIGUSR2 makes it
ready again.
With ``[server] allocator = jemalloc`` (as shipped) or ``malloc`` the process starts
itself again at once (the same process id and command line) with ``PYTHONMALLOC=malloc``
(and jemalloc preloaded), before it opens anything (D434, D450).
A bad configuration stops the start with one line naming the setting.
``python -m server export MATCH_ID`` writes a finished match as a Jellyfish ``.mat``
file instead, ``--json`` as its JSON record (:func:`export_main`).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes.util
import gc
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from socket import gethostname
from typing import Final

from db.engine import display_url, normalize_url
from db.errors import DatabaseError
from db.records import MatchRecord
from db.repository import Database
from protocol import replies
from protocol.mat_export import snapshot_to_mat
from server.app import App
from server.config import ConfigError, Settings, load
from server.doors.admission import raise_open_file_limit
from server.memory import fix_mmap_threshold, jemalloc_loaded
from server.service import Service
from server.tables.cluster import ClusterTables
from server.world.cluster import ClusterPresence
from server.world.nats_bus import NatsBus

log = logging.getLogger("server")


COMMANDS_HELP = """\
commands:
  (none)             run the server with the options above (also: fibs-server)
  export MATCH_ID    write a finished match as a Jellyfish .mat file, or its JSON
                     record with --json ('python -m server export --help')

The database is created or upgraded at start; 'python -m db --help' maintains it."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m server",
        usage="python -m server [--config PATH] [--host H] [--port P] [--web-port P] "
        "[--database URL]\n"
        "       python -m server export MATCH_ID [--json] [--config PATH] [--database URL]"
        " [-o FILE]",
        description="A FIBS-compatible backgammon server (telnet and CLIP).",
        epilog=COMMANDS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", type=Path, help="configuration file (default ./fibs.conf)")
    parser.add_argument("--host", help="address to listen on")
    parser.add_argument("--port", type=int, help="port to listen on (0: any free port)")
    parser.add_argument(
        "--web-port", type=int, help="port of the web page and WebSocket (0: no web listener)"
    )
    parser.add_argument("--database", help="SQLAlchemy URL, e.g. sqlite+aiosqlite:///fibs.db")
    parser.add_argument(
        "--cluster",
        metavar="URL",
        help="run as one node of several: the NATS URL(s), comma-separated ([cluster] nats)",
    )
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING...")
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace) -> Settings:
    path = args.config
    if path is None and Path("fibs.conf").is_file():
        path = Path("fibs.conf")
    return load(
        path,
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
        web_port=getattr(args, "web_port", None),  # the server's options; not export's
        database=args.database,
        cluster=getattr(args, "cluster", None),
    )


class WebListenError(Exception):
    """The web listener or the agent check's could not listen: its address, why, and
    which."""


async def run(settings: Settings) -> None:
    """Serve until SIGINT or SIGTERM."""
    raise_open_file_limit()
    fix_mmap_threshold()
    log_allocator(settings.allocator)
    db = await Database.open(settings.database)
    log.info("database %s (%s)", display_url(settings.database), db.backend)
    bus = await join_cluster(settings) if settings.cluster else None
    if bus is None:
        service = Service(App(settings, db))
    else:
        presence, tables = ClusterPresence.on(bus), ClusterTables.on(bus)
        service = Service(App(settings, db, presence=presence, tables=tables))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    log.info("event loop %s", type(loop).__module__.partition(".")[0])
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    loop.add_signal_handler(signal.SIGUSR1, service.drain, True)
    loop.add_signal_handler(signal.SIGUSR2, service.drain, False)
    try:
        await service.start()
        doors = (
            (service.start_web, f"{settings.web_host}:{settings.web_port}", "web"),
            (service.start_agent, f"{settings.host}:{settings.agent_port}", "agent check"),
        )
        for start, address, door in doors:
            try:
                await start()
            except OSError as exc:
                await service.stop()
                raise WebListenError(address, exc.strerror, door) from exc
        tune_gc()
        print(f"fibs-server listening on {settings.host}:{service.port}", flush=True)
        if service.web is not None:
            print(
                f"fibs-server web page on http://{settings.web_host}:{service.web.port}/",
                flush=True,
            )
        if service.agent is not None:
            print(f"fibs-server agent check on {settings.host}:{settings.agent_port}", flush=True)
        await stop.wait()
        log.info("shutting down")
        stopping = time.monotonic()
        await service.stop(warning=replies.shutdown_warning(0, restart=False))
        log.info("connections closed in %.2f s", time.monotonic() - stopping)
    finally:
        if bus is not None:
            await bus.close()
        await db.close()
    log.info("stopped")


ALLOCATOR_VARIABLE: Final = "PYTHONMALLOC"
"""The variable that chooses Python's allocator, read by the interpreter at its start."""

PRELOAD_VARIABLE: Final = "LD_PRELOAD"
"""The libraries the dynamic linker loads before any other: jemalloc's ``malloc`` then
serves every allocation of the process (D450)."""

JEMALLOC_OPTIONS_VARIABLE: Final = "MALLOC_CONF"
"""jemalloc's options, read when it starts."""

JEMALLOC_OPTIONS: Final = "background_thread:true"
"""jemalloc's options unless the operator set theirs: a thread of its own gives back
freed pages after its decay time (10 s) even while the server allocates nothing, as on
a quiet server after a flood (D450)."""


def jemalloc_library() -> str | None:
    """The name of jemalloc's shared library as the dynamic linker finds it (Debian's
    ``libjemalloc2``: ``libjemalloc.so.2``), or None when it is not installed."""
    return ctypes.util.find_library("jemalloc")


def allocator_in_use(environ: Mapping[str, str] = os.environ) -> str:
    """The allocator this interpreter runs with: ``jemalloc`` when every object comes
    from ``malloc`` and that is jemalloc's, else ``PYTHONMALLOC`` as it started, else
    Python's default, ``pymalloc``."""
    chosen = environ.get(ALLOCATOR_VARIABLE) or "pymalloc"
    return "jemalloc" if chosen == "malloc" and jemalloc_loaded() else chosen


def allocator_environment(
    wanted: str,
    environ: Mapping[str, str] = os.environ,
    jemalloc: Callable[[], str | None] = jemalloc_library,
) -> dict[str, str] | None:
    """The environment to start the interpreter again with for ``wanted`` (one of
    :data:`server.config.ALLOCATORS`), or None when this one will do: it already runs
    with it, the operator set ``PYTHONMALLOC`` (whatever they set is kept, e.g.
    ``pymalloc`` or a debug allocator), or ``jemalloc`` is wanted and not installed
    (Python's pymalloc then, D450). For jemalloc: every object from ``malloc``
    (``PYTHONMALLOC=malloc``), and jemalloc's ``malloc`` first (``LD_PRELOAD``) with
    :data:`JEMALLOC_OPTIONS` unless ``MALLOC_CONF`` is set."""
    if environ.get(ALLOCATOR_VARIABLE) or wanted == "pymalloc":
        return None
    if wanted != "jemalloc":
        return {**environ, ALLOCATOR_VARIABLE: wanted}
    library = jemalloc()
    if library is None:
        return None
    preload = ":".join(filter(None, (library, environ.get(PRELOAD_VARIABLE))))
    return {
        **environ,
        ALLOCATOR_VARIABLE: "malloc",
        PRELOAD_VARIABLE: preload,
        JEMALLOC_OPTIONS_VARIABLE: environ.get(JEMALLOC_OPTIONS_VARIABLE) or JEMALLOC_OPTIONS,
    }


def allocator_variables(wanted: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The variables that start ``python -m server`` with the allocator ``wanted`` at
    once, for a program that starts it under a wrapper (valgrind, the benchmarks), whose
    restart would leave the wrapper behind: none when ``environ`` sets
    ``PYTHONMALLOC``; Python's pymalloc, named, when jemalloc is wanted and missing."""
    if environ.get(ALLOCATOR_VARIABLE):
        return {}
    chosen = allocator_environment(wanted, environ) or {ALLOCATOR_VARIABLE: "pymalloc"}
    names = (ALLOCATOR_VARIABLE, PRELOAD_VARIABLE, JEMALLOC_OPTIONS_VARIABLE)
    return {name: chosen[name] for name in names if name in chosen}


def restart_with_allocator(wanted: str) -> None:
    """Replace this process (same id, command line, descriptors) with the interpreter
    started again with the environment :func:`allocator_environment` gives for
    ``wanted``, if any (D434, D450); else return. Python reads ``PYTHONMALLOC`` only at
    its start, before any object exists, and the dynamic linker ``LD_PRELOAD`` before
    the program, so a running interpreter cannot switch: the server does this before it
    opens anything."""
    environment = allocator_environment(wanted)
    if environment is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, environment)


_ALLOCATOR_NAMES = {
    "jemalloc": "jemalloc (PYTHONMALLOC=malloc, LD_PRELOAD)",
    "malloc": "glibc's malloc (PYTHONMALLOC=malloc)",
    "pymalloc": "Python's pymalloc (PYTHONMALLOC=pymalloc)",
}
"""How the log names the allocator at start."""


def log_allocator(wanted: str) -> None:
    """Name at start where Python's objects come from, and why not from the allocator
    ``wanted`` if they do not (jemalloc not installed, or the operator's
    ``PYTHONMALLOC``)."""
    in_use = allocator_in_use()
    log.info(
        "memory: Python's objects from %s (D434, D450)",
        _ALLOCATOR_NAMES.get(in_use, f"PYTHONMALLOC={in_use}"),
    )
    if wanted == "jemalloc" and in_use != "jemalloc" and not os.environ.get(ALLOCATOR_VARIABLE):
        log.info(
            "memory: [server] allocator = jemalloc, but jemalloc is not installed "
            "(Debian: apt-get install libjemalloc2)"
        )


class ClusterError(Exception):
    """The node could not join its cluster: why."""


async def join_cluster(settings: Settings) -> NatsBus:
    """This node on the cluster's NATS (D340): named ``[cluster] node``, or after its
    machine and process (a restarted node is a new one)."""
    node = settings.cluster_node or re.sub(r"[^A-Za-z0-9_-]", "_", f"{gethostname()}-{os.getpid()}")
    urls = [url.strip() for url in settings.cluster.split(",") if url.strip()]
    try:
        bus = await NatsBus.connect(urls, node, prefix=settings.cluster_prefix)
    except Exception as exc:
        raise ClusterError(f"cannot reach NATS at {settings.cluster}: {exc}") from exc
    log.info("cluster node %s on %s", node, settings.cluster)
    return bus


GC_THRESHOLDS = (20_000, 50, 10)
"""The cyclic garbage collector's generation thresholds (CPython's are 700, 10, 10).

With CPython's, a server with 1,000 players in 500 matches ran a full (generation 2)
collection every ~3 s, each stopping everything for 250-350 ms: objects that live a few
turns of the loop (an action's events, futures, lines) were promoted before they died.
With a larger first generation they die young, and full collections become rare and
short (docs/performance.md §8). Reference counting still frees everything that is not
in a cycle at once; the thresholds only change how often cycles are looked for."""


def event_loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes the event loop ``[server] event_loop`` names: uvloop's (the default: its
    loop and sockets are C, about a tenth of the CPU per match action, docs/performance.md
    §14), or None for the standard library's.

    :raises ConfigError: uvloop is asked for and not installed.
    """
    if name == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        raise ConfigError(
            "[server] event_loop = uvloop needs the uvloop package (pip install uvloop); "
            "event_loop = asyncio runs without it"
        ) from None
    return uvloop.new_event_loop


def tune_gc() -> None:
    """Freeze what start-up made (modules, the app) and set :data:`GC_THRESHOLDS`.

    ``gc.freeze`` moves every object alive now into a permanent generation that
    collections no longer scan: the imported libraries alone are hundreds of thousands
    of objects, scanned by every full collection otherwise.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def quiet_telnetlib3(level: str) -> None:
    """Log telnetlib3 at ERROR and above unless the server logs at DEBUG.

    telnetlib3 logs every connection and disconnection at INFO ("Connection from ...",
    "Connection closed for ..."): two lines per connection, ~1 % of the event loop during
    a burst of logins (docs/performance.md §6). ``--log-level DEBUG`` keeps them, for
    debugging connections. Its modules log under the ``telnetlib3`` logger, so one level
    covers them all. Its warnings are about what one client sent (a negotiation out of
    order, a malformed subnegotiation): a hostile client could fill the log with them
    (D210).
    """
    if level != "DEBUG":
        logging.getLogger("telnetlib3").setLevel(logging.ERROR)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["export"]:
        return export_main(words[1:])
    args = parse_args(words)
    level = args.log_level.upper()
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet_telnetlib3(level)
    try:
        settings = settings_from(args)
    except ConfigError as exc:
        print(f"fibs-server: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        normalize_url(settings.database)
    except ValueError as exc:
        print(f"fibs-server: database error: {exc}", file=sys.stderr)
        return 2
    try:
        loop_factory = event_loop_factory(settings.event_loop)
    except ConfigError as exc:
        print(f"fibs-server: configuration error: {exc}", file=sys.stderr)
        return 2
    if argv is None:  # the command line: Python's allocator as configured (D434)
        restart_with_allocator(settings.allocator)  # returns only if this one will do
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run(settings))
    except DatabaseError as exc:
        print(f"fibs-server: database error: {exc}", file=sys.stderr)
        return 2
    except WebListenError as exc:
        address, why, door = exc.args
        print(f"fibs-server: cannot listen on {address} ({door}): {why}", file=sys.stderr)
        return 2
    except ClusterError as exc:
        print(f"fibs-server: cluster error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"fibs-server: cannot listen on {settings.host}:{settings.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return 2
    return 0


def export_main(argv: Sequence[str]) -> int:
    """``python -m server export MATCH_ID [--json] [--config PATH] [--database URL] [-o
    FILE]``: a finished match (its match record id) as a Jellyfish ``.mat`` file
    (docs/records.md), or with ``--json`` as its JSON record, whose dice
    ``python -m backgammon.fair_dice verify`` checks (docs/dice.md).

    Exit status 0 when written, 1 when there is no such match, 2 on a configuration or
    database error.
    """
    parser = argparse.ArgumentParser(
        prog="python -m server export",
        description="Write a finished match as a Jellyfish .mat file (GNU Backgammon: "
        "'import mat FILE').",
    )
    parser.add_argument("match_id", type=int, help="the match record id ('export' lists them)")
    parser.add_argument("--config", type=Path, help="configuration file (default ./fibs.conf)")
    parser.add_argument("--database", help="SQLAlchemy URL, e.g. sqlite+aiosqlite:///fibs.db")
    parser.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="the JSON record instead (python -m backgammon.fair_dice verify checks its dice)",
    )
    parser.set_defaults(host=None, port=None)
    args = parser.parse_args(argv)
    try:
        settings = settings_from(args)
    except ConfigError as exc:
        print(f"fibs-server: configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        record = asyncio.run(_match_record(settings.database, args.match_id))
        if record is None:
            text = None
        elif args.json:
            text = record.moves + "\n"
        else:
            text = snapshot_to_mat(
                record.moves, site=settings.server_name, started_at=record.started_at
            )
    except Exception as exc:  # any failure to read the database: say so in one line
        print(f"fibs-server: cannot read match {args.match_id}: {exc}", file=sys.stderr)
        return 2
    if text is None:
        print(f"fibs-server: there is no finished match {args.match_id}", file=sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8")
    return 0


async def _match_record(url: str, match_id: int) -> MatchRecord | None:
    """The stored match record ``match_id``; the schema is read, never changed."""
    db = await Database.open(url, migrate=False, existing=True)
    try:
        return await db.get_match_record(match_id)
    finally:
        await db.close()


if __name__ == "__main__":
    sys.exit(main())
