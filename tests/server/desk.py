"""Commands without sockets: any command line through dispatch against a real App.

A :class:`Desk` logs users in on :class:`~tests.server.sessions.RecordingOutput`s (no
transport, no telnet negotiation, no reads with time-outs) and runs their lines through
:func:`server.handlers.dispatch.dispatch`, the same dispatch, handlers, presence, tables
and database as a connection uses. What a user was sent is read back as lines. For rule
tests of commands, hundreds at a time; the socket tests stay the black-box layer (doors,
login dialog, line order on the wire).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from protocol.replies import Mode, Toggle
from server.app import App
from server.handlers.context import Context
from server.handlers.dispatch import dispatch
from server.login import complete_login
from server.world.session import Session

from .conftest import make_user
from .sessions import RecordingOutput


@dataclass
class Desk:
    """Users of one App, each on a recording output."""

    app: App
    sessions: dict[str, Session] = field(default_factory=dict)

    async def login(self, name: str, *, clip: bool = True, ready: bool = True) -> Session:
        """``name`` logged in (the account made when missing): a CLIP client by
        default, ``ready`` for games; what the login sent is dropped."""
        user = await self.app.db.get_user(name)
        if user is None:
            await make_user(self.app, name)
            user = await self.app.db.get_user(name)
            assert user is not None
        output = RecordingOutput()
        session = Session(output, monotonic=self.app.timer.now)
        session.mode = Mode.CLIP if clip else Mode.TELNET
        await complete_login(self.app, session, user)
        session.end_reply()
        self.sessions[name] = session
        if ready and not session.toggles[Toggle.READY]:
            await self.run(name, "toggle ready")
        await self.settle()
        output.sent.clear()
        return session

    async def run(self, name: str, line: str) -> list[str]:
        """``name`` sends ``line``: the lines sent to ``name`` meanwhile (and before it,
        unread), the telnet prompt included."""
        session = self.sessions[name]
        await dispatch(Context(self.app, session), line)
        return self.heard(name)

    def heard(self, name: str) -> list[str]:
        """The lines ``name`` was sent since the last look, taken."""
        sent = self.sessions[name].output
        assert isinstance(sent, RecordingOutput)
        lines, sent.sent = sent.sent, []
        return lines

    async def settle(self) -> None:
        """Let what was scheduled for the next turns of the loop run, and send the
        status batch now rather than up to ``status_interval`` later (D79): a who update
        held back would otherwise reach a user in the middle of a later command's lines
        whenever the test took longer than that interval."""
        for _ in range(3):
            self.app.registry.flush_status()
            await asyncio.sleep(0)
