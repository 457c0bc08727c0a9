"""One task per connection: the login dialog, then read -> dispatch -> drain, then cleanup.

Nothing a client sends can stop the server or reach another session: every error is
contained here and logged, an over-long line is dropped, an idle connection is warned
and then closed, and cleanup runs exactly once however the connection ends.

No command is dropped for coming too fast. Each connection has a command rate
(``[limits] commands_per_second``, bursts of ``command_burst``); beyond it the loop
takes the next line only when a token is due ("fake lag", as IRC servers do): the
commands wait, in order, in the connection's input, and telnetlib3's reader pauses the
socket when too much waits (server/doors/telnet.py). Only a client whose unread input passes
``[limits] max_unread_input`` is disconnected, with a line saying why (D120); an
over-long line among it is dropped first and does not count (D451).
"""

from __future__ import annotations

import asyncio
import logging

from db.errors import DatabaseOutage
from protocol import replies
from server.app import App
from server.clock import Alarm, Timer
from server.doors.output import TOO_LONG, LineSource, Output
from server.handlers.context import Context
from server.handlers.dispatch import dispatch
from server.login import (
    admit_connection,
    confirm_delivered,
    leave_pre_login,
    login_dialog,
    reader_before_login,
)
from server.world.session import Session
from server.world.visitors import leave_as_visitor

log = logging.getLogger(__name__)

DRAIN_TIMEOUT = 30.0
"""How long a connection's own output may take to leave before it is dropped."""


class RateLimit:
    """A token bucket: ``rate`` commands a second, bursts of up to ``burst``.

    It never refuses: :meth:`take` spends a token, and :meth:`delay` says how long to
    wait until the next one is due (on ``timer``).
    """

    def __init__(self, rate: float, burst: int, timer: Timer) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self._timer = timer
        self.stamp = timer.now()

    def _refill(self) -> None:
        now = self._timer.now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def delay(self) -> float:
        """Seconds until a token is due; 0.0 when one is there."""
        self._refill()
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate

    def take(self) -> None:
        """Spend a token (the balance may dip a hair below 0 after an early wake-up)."""
        self._refill()
        self.tokens -= 1.0


async def serve_connection(app: App, lines: LineSource, output: Output) -> None:
    """Serve one client from connect to close."""
    session = Session(output, monotonic=app.timer.now)
    if not admit_connection(app, session):
        return
    try:
        if await login_dialog(app, session, reader_before_login(app, session, lines)):
            await _command_loop(app, session, lines, output)
    except asyncio.CancelledError:
        raise
    except ConnectionError as exc:  # the client went away mid-read or mid-write
        log.debug("connection from %s (%s) lost: %s", output.host, session.name or "-", exc)
    except Exception:
        log.exception("connection from %s (%s) failed", output.host, session.name or "-")
    finally:
        await end_session(app, session)


async def _command_loop(app: App, session: Session, lines: LineSource, output: Output) -> None:
    ctx = Context(app, session)
    timer = app.timer
    limit = RateLimit(app.settings.commands_per_second, app.settings.command_burst, timer)
    max_unread = app.settings.max_unread_input
    idle = IdleWatch(app, session)
    try:
        while not session.closed and not output.closing:
            delay = limit.delay()
            if delay:
                # Fake lag: the next line stays unread until its token is due. Only a timer
                # handle, no task; the input waits in the reader (which pauses the socket).
                await timer.sleep(delay)
                if session.closed or output.closing:
                    return
            unread = lines.unread
            if unread > max_unread:
                # Lines that came while this connection was busy (a slow login's
                # bookkeeping, say): an over-long one is dropped before they count.
                unread = await lines.settle()
            if unread > max_unread:
                log.warning(
                    "disconnecting %s (%s): %d bytes of unread input",
                    output.host,
                    session.name or "-",
                    unread,
                )
                session.send(replies.TOO_MUCH_INPUT)
                await output.drain(DRAIN_TIMEOUT)
                output.close()
                return
            line = await _read_or_time_out(app, session, lines, idle)
            if line is None:
                return
            if session.delivered_messages:  # the client was there to read them (D270)
                await confirm_delivered(app, session)
            session.last_input = timer.now()
            if line == TOO_LONG and not session.logged_in:
                line = ""  # a guest's over-long line reads as a blank one, as ever (§1.7)
            if not line.strip() and not session.in_dialog:
                # A blank line (parse() sees none) costs no token and gets no reply in
                # CLIP mode; in telnet mode the prompt again (and the away reminder).
                if not session.clip:
                    session.end_reply()
                    await output.drain(DRAIN_TIMEOUT)
                continue
            limit.take()
            if line == TOO_LONG:
                session.send(replies.LINE_TOO_LONG)
                session.end_reply()
            else:
                await dispatch(ctx, line)
            await output.drain(DRAIN_TIMEOUT)
    finally:
        idle.stop()


async def _read_or_time_out(
    app: App, session: Session, lines: LineSource, idle: IdleWatch
) -> str | None:
    """The next line; None at EOF or after the idle timeout (warned once before)."""
    queued = lines.queued_line()
    if queued is not None:
        # Already received: no timer, no task; one turn of the event loop, so a burst
        # (or a run of free blank lines) never keeps the others waiting.
        await asyncio.sleep(0)
        return queued
    timeout = app.settings.idle_timeout
    deadline = session.login_deadline  # a guest's time to register (D231)
    if deadline is not None and not session.logged_in:
        left = max(deadline - app.timer.now(), 0.0)
        if not timeout or left <= timeout:
            return await _read_before(app, session, lines, left)
    if not timeout:
        return await lines.readline()
    return await idle.read(lines)


class IdleWatch:
    """The idle warning and time-out of a logged-in connection, on one
    :class:`~server.clock.Alarm` that each line moves later (docs/performance.md §13).

    The time runs from the last line received (:attr:`Session.last_input`), or from the
    first read if that came later (the login took some of it). The alarm only acts while
    the connection waits for a line (:meth:`read`): at ``idle_timeout - idle_warning``
    seconds it warns, once per quiet spell; at ``idle_timeout`` it says
    ``Connection timed out.``, closes the connection and ends the wait (the read returns
    None). While a command runs, a time that has run out waits for the next read.
    """

    def __init__(self, app: App, session: Session) -> None:
        self._app = app
        self._session = session
        self._alarm = Alarm(app.timer, self._ring)
        self._since = 0.0
        self._warned = -1.0
        self._reader: asyncio.Task[object] | None = None
        self._expired = False

    async def read(self, lines: LineSource) -> str | None:
        """The next line; None at EOF or once the connection timed out while waiting."""
        if self._alarm.due is None:  # the first read
            self._since = self._app.timer.now()
            self._schedule()
        task = self._reader = asyncio.current_task()
        try:
            return await lines.readline()
        except asyncio.CancelledError:
            # The time-out's own cancel (and no other, such as the server's stop): an
            # ended read, as asyncio.timeout does it.
            if self._expired and task is not None and task.uncancel() == 0:
                return None
            raise
        finally:
            self._reader = None

    def stop(self) -> None:
        """No more warning or time-out (the connection ends)."""
        self._alarm.close()

    def _quiet_since(self) -> float:
        return max(self._session.last_input, self._since)

    def _times(self) -> tuple[float, float]:
        """``idle_timeout``, and how long before it the warning comes."""
        settings = self._app.settings
        timeout = settings.idle_timeout
        return timeout, min(settings.idle_warning, timeout)

    def _schedule(self) -> None:
        """Set the alarm for the next thing due: the warning, else the time-out."""
        timeout, warning = self._times()
        quiet = self._quiet_since()
        if warning and self._warned != quiet:
            self._alarm.set(quiet + timeout - warning)
        else:
            self._alarm.set(quiet + timeout)

    def _ring(self) -> None:
        timeout, warning = self._times()
        session: Session = self._session  # the connection's own
        now = self._app.timer.now()
        if self._reader is None:  # a command runs: it counts as not idle
            self._since = now
            self._schedule()
            return
        quiet = self._quiet_since()
        if now < quiet + timeout - warning:  # a line came since the alarm was set
            self._schedule()
            return
        if now < quiet + timeout:
            if self._warned != quiet:
                self._warned = quiet
                session.send(replies.idle_warning(int(warning)))
            self._alarm.set(quiet + timeout)
            return
        session.send(replies.CONNECTION_TIMED_OUT)
        session.logout_text = replies.timed_out
        session.output.close()
        self._expired = True
        self._reader.cancel()


async def _read_before(app: App, session: Session, lines: LineSource, timeout: float) -> str | None:
    """The next line if it comes within ``timeout``; else ``Connection timed out.``,
    the connection closed, and None."""
    read = asyncio.ensure_future(lines.readline())
    try:
        if await app.timer.wait(read, timeout):
            return read.result()
        session.send(replies.CONNECTION_TIMED_OUT)
        session.output.close()
        return None
    finally:
        if not read.done():
            read.cancel()


async def end_session(app: App, session: Session) -> None:
    """Cleanup, exactly once: leave the presence, tell the others, store the logout."""
    if session.closed:
        return
    session.closed = True
    leave_pre_login(app, session)
    try:
        if session.visitor:  # D256: no logout to announce or store
            await app.tables.session_ended(session)
            leave_as_visitor(app, session)
        elif session.logged_in:
            await app.tables.session_ended(session)
            app.presence.remove(session)
            if not session.replaced and not app.stopping:
                app.presence.announce_logout(session)
            try:
                await app.db.update_logout(session.name)
            except DatabaseOutage as error:  # the logout time is lost, nothing else (D296)
                app.outage_log.warning("storing a logout", error)
    except Exception:
        log.exception("cleanup of %s failed", session.name)
    finally:
        session.output.close()
