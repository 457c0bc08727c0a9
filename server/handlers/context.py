"""What a handler works with: the server and the session that sent the command.

Its own module so that handlers, dispatch and the login dialog can all name it without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.app import App
from server.world.session import Session


@dataclass
class Context:
    """The server (:class:`~server.app.App`) and the session a command came from."""

    app: App
    session: Session
