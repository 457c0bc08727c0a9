"""One command line in, its reply out: parse, check the session state, run the handler.

In a dialog state (a password prompt of the guest's registration) the line is no
command: it goes as typed to the handler bound to that state.

Errors become replies here and nowhere else: the protocol's command errors, the
server's :class:`~server.errors.Reply`, the database failing for the moment (logged
once a minute without a traceback, D296), and (logged with its traceback) anything
unexpected, which answers an internal-error line while the session goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from db.errors import DatabaseOutage
from protocol import replies
from protocol.commands import COMMANDS, SessionState
from protocol.errors import CommandError, UsageError
from protocol.parser import (
    REPEAT,
    error_lines,
    explanation,
    is_repeat,
    parse,
    repeat,
    state_refusal,
    text_request,
)
from server.errors import Reply
from server.handlers.bindings import BINDINGS, DIALOGS
from server.handlers.context import Context
from server.world.passwords import ClientGone

log = logging.getLogger(__name__)


async def dispatch(ctx: Context, line: str) -> None:
    """Run one line the user sent and finish the reply (away line, telnet prompt).

    ``text! <command>`` runs the command with its reply as in telnet mode (D376): in
    CLIP mode between ``text! begin`` and ``text! end``, so that the web page's command
    box shows what a telnet user reads while the page's own commands stay CLIP."""
    session = ctx.session
    dialog = DIALOGS.get(session.state) if session.state is not None else None
    typed = text_request(line) if dialog is None else None
    marked = typed is not None and session.clip
    if typed is not None:
        ctx = dataclasses.replace(ctx, text=True)
        line = typed
    if marked:
        session.send(replies.TEXT_BEGIN)
    try:
        if dialog is not None:
            await dialog(ctx, line)
        else:
            await _run(ctx, line)
    except CommandError as error:
        session.send_lines(error_lines(error))
        if not ctx.clip:  # CLIP clients get FIBS's line alone (D170)
            session.send_lines(explanation(error))
    except Reply as error:
        session.send_lines(error.lines)
        if not ctx.clip:
            session.send_lines(error.telnet)
    except asyncio.CancelledError:
        raise
    except DatabaseOutage as error:  # no fault of the command: no traceback (D296)
        shown = "***" if dialog is not None else _mask(line)
        ctx.app.outage_log.warning(f"command {shown!r} of {session.name or '-'}", error)
        session.send(replies.DATABASE_OUTAGE)
    except ClientGone:  # the client went away while its password waited (D330)
        log.debug("%s went away while a password waited", session.name or "-")
    except Exception:
        shown = "***" if dialog is not None else _mask(line)  # a dialog's line is a password
        log.exception("command %r of %s failed", shown, session.name or "-")
        session.send(replies.INTERNAL_ERROR)
    finally:
        session.end_reply()
        if marked:
            session.send(replies.TEXT_END)


async def _run(ctx: Context, line: str) -> None:
    session = ctx.session
    assert session.state is not None
    state = SessionState.VISITOR if session.visitor else session.state  # D256
    if is_repeat(line):
        cmd = repeat(session.last_command)
        if cmd is None:
            raise Reply(replies.unknown_command(REPEAT))
    else:
        try:
            cmd = parse(line)
        except UsageError as error:
            refusal = state_refusal(COMMANDS[error.name], state, line.split()[0])
            raise Reply(*(refusal or error_lines(error))) from None
    if cmd is None:
        return
    refusal = state_refusal(cmd.command, state, cmd.word or cmd.name)
    if refusal is not None:
        raise Reply(*refusal)
    if cmd.command.remembered:
        session.last_command = cmd
    await BINDINGS[cmd.name](ctx, cmd)


def _mask(line: str) -> str:
    """The line for a log, with passwords hidden (``password a:b:c``, ``login c v n pw``,
    ``token! <token>``)."""
    words = line.split()
    if words and words[0].lower() in ("password", "login", "connect", "token!"):
        return words[0] + " ***"
    return line
