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
    text: bool = False
    """The command came as ``text! <command>`` (D376): its reply is written as in telnet
    mode, whatever the session's mode, while everything else it gets stays as it is."""

    @property
    def clip(self) -> bool:
        """Whether this command's reply is in CLIP mode: the session's mode, unless the
        command asked for a telnet-style reply (:attr:`text`)."""
        return self.session.clip and not self.text
