"""Watching without an account (D256): ``visitor!`` at the login prompt.

A visitor's session goes through the same connection, dispatch and watch code as a
user's. It has an internal name no account can have (``visitor!<16 hex digits>``: ``!`` is in no
name), is in the presence's visitors (status notices and watched lines, no who list,
no count of users), and dispatch reads it as :attr:`SessionState.VISITOR`, so only the
commands that watch and look run; every other one answers one refusal line. Visitors
are capped in all and per address (D257, D268).
"""

from __future__ import annotations

import dataclasses
import secrets

from protocol import replies
from protocol.arguments import VISITOR
from protocol.replies import Mode
from server.app import App
from server.doors.output import Payload
from server.world.presence import WHO_END
from server.world.session import Session

VISITOR_TOKEN_BYTES = 8
"""Random bytes in a visitor's internal name: unique across every node of a world without
asking the others (64 bits: n visitors online at once share a name with a chance of
about n**2 / 2**65)."""


def enter_as_visitor(app: App, session: Session, words: tuple[str, ...]) -> bool:
    """Enter ``session`` as a visitor (``visitor!``: telnet mode; ``login <client>
    <clipver> visitor!``: CLIP mode, the who list at once). False, the connection
    closing, when ``[limits] max_visitors`` are on already (D257), or
    ``max_visitors_per_address`` from its address (D268)."""
    presence = app.presence
    output = session.output
    refusal = None
    if presence.visitor_count() >= app.settings.max_visitors:
        refusal = replies.TOO_MANY_VISITORS
    elif not app.visitor_addresses.take(output.host):
        refusal = replies.TOO_MANY_VISITORS_FROM_ADDRESS
    if refusal is not None:
        output.send([refusal])
        output.close()
        return False
    session.visitor = True
    session.name = f"{VISITOR}{secrets.token_hex(VISITOR_TOKEN_BYTES)}"
    if len(words) == 4:
        session.mode = Mode.CLIP
        session.client = words[1]
        # It cannot ``set``: a client's board comes as a ``board:`` line (D256).
        session.settings = dataclasses.replace(session.settings, boardstyle=3)
    session.login_time = int(app.clock())
    session.enter_lobby()
    presence.add_visitor(session)
    if session.clip:
        session.send_payload(Payload([*presence.who_list(), WHO_END]))
    else:
        session.send_lines(replies.VISITOR_WELCOME)
        session.end_reply()
    return True


def leave_as_visitor(app: App, session: Session) -> None:
    """The visitor's connection ended: it is no longer among the visitors, nor counted
    for its address."""
    app.presence.remove_visitor(session)
    app.visitor_addresses.give_back(session.output.host)
