"""Command handlers, grouped by area; each registers itself with :func:`handles`.

A handler is ``async def handler(ctx, cmd) -> None``: it answers through
``ctx.session.send`` (and broadcasts through the registry), and stops with
:class:`server.errors.Reply` for a user error. Dispatch runs it after the session-state
check of the command table, and maps every error to a reply in one place.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from protocol.parser import ParsedCommand
    from server.dispatch import Context

Handler = Callable[["Context", "ParsedCommand"], Awaitable[None]]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    """Register the decorated function for the commands ``names`` (table names)."""

    def register(function: Handler) -> Handler:
        for name in names:
            if name in HANDLERS:
                raise ValueError(f"two handlers for {name!r}")
            HANDLERS[name] = function
        return function

    return register
