"""One task per connection: the login dialog, then read -> dispatch -> drain, then cleanup.

Nothing a client sends can stop the server or reach another session: every error is
contained here and logged, an over-long line is dropped, a flood of commands is
limited per connection, an idle connection is warned and then closed, and cleanup
runs exactly once however the connection ends.
"""

from __future__ import annotations

import asyncio
import logging
import time

from protocol import replies
from server.app import App
from server.dispatch import Context, dispatch
from server.login import login_dialog, reader_with_timeout
from server.match_flow import session_ended
from server.session import Session
from server.telnet import TOO_LONG, LineReader, TelnetOutput

log = logging.getLogger(__name__)

DRAIN_TIMEOUT = 30.0
"""How long a connection's own output may take to leave before it is dropped."""


class RateLimit:
    """A token bucket: ``rate`` commands a second, bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


async def serve_connection(app: App, lines: LineReader, output: TelnetOutput) -> None:
    """Serve one client from connect to close."""
    session = Session(output)
    try:
        if await login_dialog(app, session, reader_with_timeout(app, lines)):
            await _command_loop(app, session, lines, output)
    except asyncio.CancelledError:
        raise
    except ConnectionError as exc:  # the client went away mid-read or mid-write
        log.debug("connection from %s (%s) lost: %s", output.host, session.name or "-", exc)
    except Exception:
        log.exception("connection from %s (%s) failed", output.host, session.name or "-")
    finally:
        await end_session(app, session)


async def _command_loop(
    app: App, session: Session, lines: LineReader, output: TelnetOutput
) -> None:
    ctx = Context(app, session)
    limit = RateLimit(app.settings.commands_per_second, app.settings.command_burst)
    while not session.closed and not output.closing:
        line = await _read_or_time_out(app, session, lines)
        if line is None:
            return
        session.last_input = time.monotonic()
        if line == TOO_LONG:
            session.send(replies.LINE_TOO_LONG)
            session.end_reply()
        elif not limit.allow():
            session.send(replies.SLOW_DOWN)
        else:
            await dispatch(ctx, line)
        await output.drain(DRAIN_TIMEOUT)


async def _read_or_time_out(app: App, session: Session, lines: LineReader) -> str | None:
    """The next line; None at EOF or after the idle timeout (warned once before)."""
    timeout = app.settings.idle_timeout
    if not timeout:
        return await lines.readline()
    warning = min(app.settings.idle_warning, timeout)
    read = asyncio.ensure_future(lines.readline())
    try:
        done, _ = await asyncio.wait({read}, timeout=timeout - warning)
        if not done and warning:
            session.send(replies.idle_warning(int(warning)))
            done, _ = await asyncio.wait({read}, timeout=warning)
        if not done:
            session.send(replies.CONNECTION_TIMED_OUT)
            session.logout_text = replies.timed_out
            session.output.close()
            return None
        return read.result()
    finally:
        if not read.done():
            read.cancel()


async def end_session(app: App, session: Session) -> None:
    """Cleanup, exactly once: leave the registry, tell the others, store the logout."""
    if session.closed:
        return
    session.closed = True
    try:
        if session.logged_in:
            await session_ended(app, session)
            app.registry.remove(session)
            if not session.replaced and not app.stopping:
                app.registry.announce_logout(session)
            await app.db.update_logout(session.name)
    except Exception:
        log.exception("cleanup of %s failed", session.name)
    finally:
        session.output.close()
