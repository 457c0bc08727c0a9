"""Commands: one line dispatched (:mod:`server.handlers.dispatch`) to its handler, grouped by
area; :mod:`server.handlers.bindings` binds them to the command table.

A handler is ``async def handler(ctx, cmd) -> None``: it answers its own user through
``ctx.session.send``, reaches every other user (look-ups, lines, broadcasts, their state)
only through ``ctx.app.presence`` (:mod:`server.world.presence`; checked by
``tests/server/test_presence_seam.py``), and stops with :class:`server.errors.Reply` for
a user error. Dispatch runs it after the session-state check of the command table, and
maps every error to a reply in one place (docs/architecture.md, "Where to add").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from protocol.arguments import Invalid
from server.errors import Reply

if TYPE_CHECKING:
    from protocol.parser import ParsedCommand
    from server.handlers.context import Context

Handler = Callable[["Context", "ParsedCommand"], Awaitable[None]]
"""What :mod:`server.handlers.bindings` maps a command's table name to."""
DialogHandler = Callable[["Context", str], Awaitable[None]]
"""What :mod:`server.handlers.bindings` maps a dialog state to: it gets the next line as typed."""

_T = TypeVar("_T")


def valid(parsed: _T | Invalid) -> _T:
    """A parsed argument (:mod:`protocol.arguments`), or stop the command with the reply
    of a refused one."""
    if isinstance(parsed, Invalid):
        raise Reply(*parsed.lines)
    return parsed
