"""Starting and stopping the server: listen, serve each connection, end them all.

A :class:`Service` runs one :class:`~server.app.App` over its transports: it listens
(:func:`server.doors.telnet.start_server`; the web door, :func:`server.doors.web.start_server`, with
:meth:`Service.start_web`), runs :func:`server.connection.serve_connection` for
each connection as a task it keeps, and at the end tells everyone, closes every
connection (each saves its state) and stops listening.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import time
from typing import Any

from protocol import replies
from server.app import App
from server.connection import serve_connection
from server.doors import proxy, telnet, web
from server.doors.admission import (
    ACCEPT_ERROR_INTERVAL,
    QuietLog,
    open_file_limit,
    quiet_accept_errors,
)
from server.doors.agent import start_agent
from server.doors.output import LineSource, Output, Shell
from server.memory import SETTLE_LOOKS, Trimmer
from server.world.passwords import shutdown_hashing

log = logging.getLogger(__name__)

DISK_CHECK_INTERVAL = 60.0
"""Seconds between two looks at the free space beside the SQLite file (D302)."""
TRIM_CHECK_INTERVAL = 10.0
"""Seconds between two looks at the number of connections, for the heap's trim (D331)."""
STOP_GRACE = 1.0
"""Seconds :meth:`Service.stop` lets the connections send their last lines before it
aborts them."""
DRAIN_AGENT_WAIT = 10.0
"""Seconds a drained node waits at most for HAProxy's agent check to hear ``drain``
before it warns its users anyway (a proxy that never asks must not keep them)."""
STOP_AFTER_ABORT = 0.4
"""Seconds the stop then waits for the aborted connections' tasks to end (storing the
logouts) before it cancels what is left: the whole stop stays within 2 s (issue 34 item
9)."""


def settle_looks(login_timeout: float) -> int:
    """Looks at the connections, :data:`TRIM_CHECK_INTERVAL` apart, for which they must
    stay low after a fall's trim before the second (D435): the login time-out and one
    look more, by when the flood's connections still at ``login:`` have gone. Without a
    login time-out (0), :data:`server.memory.SETTLE_LOOKS`."""
    if login_timeout <= 0:
        return SETTLE_LOOKS
    return math.ceil(login_timeout / TRIM_CHECK_INTERVAL) + 1


class Service:
    """The listening server of one App, and the tasks of its connections."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._listener: Any = None
        """telnetlib3's server while listening, else None."""
        self._connections: dict[asyncio.Task[None], Output] = {}
        """Every connection's task and its output, logged in or not."""
        self.web: web.WebListener | None = None
        """The web listener (the page and its WebSocket) once :meth:`start_web` ran."""
        self._disk_watch: asyncio.Task[None] | None = None
        self.trimmer = Trimmer(settle_looks=settle_looks(app.settings.login_timeout))
        """The heap trimmed after the connections fall (D331), and again once they have
        stayed low for the login time (D435)."""
        self._trim_watch: asyncio.Task[None] | None = None
        self.agent: asyncio.Server | None = None
        """The listener of HAProxy's agent check (``[server] agent_port``), once started."""
        self.draining = False
        """The node is drained (:meth:`drain`): the agent check says so to HAProxy."""
        self._drain_heard = asyncio.Event()
        """The agent check has answered ``drain`` since the node was drained."""
        self._moving: asyncio.Task[None] | None = None
        """The drained node's users being warned and sent away (:meth:`_move_users`)."""

    @property
    def port(self) -> int:
        """The port listened on (bound by :meth:`start` when the configured one is 0)."""
        return self.app.port

    @property
    def listener(self) -> Any:
        """The transport's listening server (its ``sockets``), None when not listening."""
        return self._listener

    async def start(self) -> None:
        """Listen for connections."""
        app = self.app
        shell: Shell = self._shell  # the transport seam's: telnet runs any such shell
        quiet_accept_errors(asyncio.get_running_loop(), interval=ACCEPT_ERROR_INTERVAL)
        await app.dummy_hash()  # once, before the first login needs it
        await app.analyses.start()  # the requests a previous run left are analysed now
        self._listener = await telnet.start_server(app.settings, shell)
        app.port = telnet.bound_port(self._listener)
        if app.settings.min_free_disk_mb and app.db.free_bytes() is not None:
            self._disk_watch = asyncio.ensure_future(self._watch_disk())
        self._trim_watch = asyncio.ensure_future(self._watch_connections())
        log.info("listening on %s:%d", app.settings.host, app.port)
        log.info(
            "connections not logged in: at most %d in all, %d per address, "
            "%d per address of the trusted networks (%s); "
            "%s s to log in, %s s for a guest to register",
            app.pre_login.total,
            app.pre_login.per_address,
            app.pre_login.per_trusted_address,
            ", ".join(app.settings.trusted_networks) or "none",
            app.settings.login_timeout or "no limit",
            app.settings.guest_timeout or "no limit",
        )
        files = open_file_limit()
        if files is not None and app.settings.max_logins + app.pre_login.total > files:
            log.warning(
                "the open-file limit %d is below max_logins %d plus the %d connections "
                "that may wait to log in: past it, connections are not accepted",
                files,
                app.settings.max_logins,
                app.pre_login.total,
            )

    async def start_web(self, *, sock: socket.socket | None = None) -> None:
        """Listen for HTTP and WebSocket connections on ``[web] host``/``port`` (or on
        ``sock``, already bound); nothing when ``[web] port`` is 0 and no ``sock``.
        WebSocket connections run the same shell as telnet ones (server/doors/web.py)."""
        app = self.app
        settings = app.settings
        if sock is None and not settings.web_port:
            return
        shell: Shell = self._shell
        proxy_log = QuietLog(web.log, proxy.LOG_INTERVAL, app.timer.now)
        guard = web.Guard(app.pre_login, app.refusal_log, app.timer, proxy_log)
        self.web = await web.start_server(settings, shell, guard, sock=sock)

    async def start_agent(self) -> None:
        """Answer HAProxy's agent check on ``[server] agent_port`` (none when it is 0):
        ``up ready``, or ``drain`` while :attr:`draining` (:mod:`server.doors.agent`)."""
        settings = self.app.settings
        if settings.agent_port:
            self.agent = await start_agent(settings.host, settings.agent_port, self._agent_state)

    def _agent_state(self) -> bool:
        """What the agent check answers now: drained (or stopping), or ready."""
        if self.draining:
            self._drain_heard.set()
        return self.draining or self.app.stopping

    def drain(self, draining: bool) -> None:
        """Drain the node (True; SIGUSR1) or make it ready again (False; SIGUSR2).

        Drained, the agent check says ``drain`` (HAProxy sends the node no new
        connection, D369), then the node's users are warned, and after ``[server]
        drain_grace`` seconds their connections are closed, their matches saved: they
        log in again through HAProxy at another node and resume there (D415). Ready
        again before the connections are closed, the users stay."""
        if draining == self.draining:
            return
        self.draining = draining
        log.warning("node %s", "drained: no new connections" if draining else "ready again")
        if draining:
            self._drain_heard.clear()
            self._moving = asyncio.ensure_future(self._move_users())
        elif self._moving is not None:
            self._moving.cancel()
            self._moving = None

    async def _move_users(self) -> None:
        """A drained node's users, once HAProxy knows (its agent check heard ``drain``):
        warned as before a FIBS restart, given ``[server] drain_grace`` seconds, then
        their connections closed as at a stop (each saves its match, D415), then the
        chouettes still running for users of other nodes handed over (D446). The node
        goes on running, with nobody, until it is stopped or made ready again."""
        app = self.app
        if self.agent is not None:
            try:
                await asyncio.wait_for(self._drain_heard.wait(), DRAIN_AGENT_WAIT)
            except TimeoutError:
                log.warning("the agent check was not asked within %.0f s", DRAIN_AGENT_WAIT)
        grace = app.settings.drain_grace
        warning = replies.shutdown_warning(round(grace), restart=True)
        users = list(app.registry)
        for session in users:
            session.send(warning)
        log.warning(
            "drained: %d users warned, their connections close in %.0f s", len(users), grace
        )
        await asyncio.sleep(grace)
        connections = dict(self._connections)
        for output in connections.values():
            output.close()
        await self._wait_for(connections)
        log.warning("drained: %d connections closed", len(connections))
        await app.tables.drained()  # a chouette of users elsewhere moves too (D446)

    async def _wait_for(self, connections: dict[asyncio.Task[None], Output]) -> None:
        """Until the ``connections`` just closed have ended: each has
        :data:`STOP_GRACE` seconds to send its last lines, then is aborted; a task still
        waiting for something (a hash, a save) after that is cancelled."""
        if not connections:
            return
        _, pending = await asyncio.wait(connections, timeout=STOP_GRACE)
        if pending:
            # A client that stopped reading never lets close() finish: drop it.
            for task in pending:
                connections[task].abort()
            _, pending = await asyncio.wait(pending, timeout=STOP_AFTER_ABORT)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=STOP_AFTER_ABORT)

    async def _shell(self, lines: LineSource, output: Output) -> None:
        """One connection, as a task :meth:`stop` can wait for."""
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = output
        self.trimmer.seen(len(self._connections))
        try:
            await serve_connection(self.app, lines, output)
        finally:
            self._connections.pop(task, None)

    async def _watch_connections(self) -> None:
        """Every :data:`TRIM_CHECK_INTERVAL` seconds: the heap trimmed once the
        connections have fallen to half their peak (D331), and again once they have
        stayed low for the login time (D435)."""
        trimmer = self.trimmer
        while True:
            await asyncio.sleep(TRIM_CHECK_INTERVAL)
            peak, settled = trimmer.peak, trimmer.settled_trims
            started = time.perf_counter()
            if trimmer.observe(len(self._connections)):
                took = (time.perf_counter() - started) * 1000
                if trimmer.settled_trims != settled:
                    log.info(
                        "memory: garbage collected and heap trimmed in %.1f ms, "
                        "connections stayed low (%d)",
                        took,
                        len(self._connections),
                    )
                else:
                    log.info(
                        "memory: heap trimmed in %.1f ms, connections fell from %d to %d",
                        took,
                        peak,
                        len(self._connections),
                    )

    async def _watch_disk(self) -> None:
        """Once a minute, from the start: a WARNING while the space left beside the
        SQLite file is below ``[server] min_free_disk_mb`` (D302), before writes start
        to fail (they are refused with a line then, D296)."""
        app = self.app
        wanted = app.settings.min_free_disk_mb * 1024 * 1024
        while True:
            free = app.db.free_bytes()
            if free is not None and free < wanted:
                log.warning(
                    "the database's disk has %.1f MB free, below min_free_disk_mb %d: "
                    "when it is full, what needs a write is refused",
                    free / 1048576,
                    app.settings.min_free_disk_mb,
                )
            await asyncio.sleep(DISK_CHECK_INTERVAL)

    async def stop(self, *, warning: str | None = None) -> None:
        """Tell everyone, close every connection (each saves its state), stop listening,
        stop the password hashing pool.

        While stopping, a closing session tells nobody it left: everyone is leaving, and
        with N users online those notices would be N*N lines (docs/performance.md).
        """
        app = self.app
        app.stopping = True
        app.throttle.close()  # a login waiting its turn ends now, not after its wait
        if self._disk_watch is not None:
            self._disk_watch.cancel()
        if self._trim_watch is not None:
            self._trim_watch.cancel()
        for session in app.registry:
            session.send(warning or replies.shutdown_warning(0, restart=False))
        if self._listener is not None:
            self._listener.close()
        if self.agent is not None:
            self.agent.close()
        if self.web is not None:
            await self.web.stop_listening()
            self.web.drop_requests()  # HTTP requests, slow or not: nobody to tell
        if self._moving is not None:  # a drain's moving of the users: this stop does it
            self._moving.cancel()
        # Every connection, logged in or not (those at login: waited for their time to
        # log in, 60 s), closes once its last lines are out.
        for output in list(self._connections.values()):
            output.close()
        await self._wait_for(dict(self._connections))
        if self._listener is not None:
            await self._listener.wait_closed()
            self._listener = None
        if self.web is not None:
            await self.web.close()
            self.web = None
        # Every match is saved: the analyses still running are redone at the next start.
        await app.analyses.stop()
        # Every connection is gone: hashes still queued are for nobody, and the exit
        # must not wait for them (the interpreter joins the pool's threads).
        app.passwords.close()
        shutdown_hashing()
