"""Who is online: ``who`` and ``rawwho`` (§4.14)."""

from __future__ import annotations

import time

from protocol import clip, replies
from protocol.parser import ParsedCommand
from server.dispatch import Context
from server.errors import Reply
from server.handlers import handles
from server.session import Session


def select(ctx: Context, args: tuple[str, ...]) -> list[Session] | int:
    """The sessions a ``who``/``rawwho`` filter names, sorted by ``set sortwho``.

    ``who count`` returns the number instead (§4.14).
    """
    sessions = [s for s in ctx.app.registry if s.logged_in]
    if args:
        word = args[0].lower()
        if word == "count":
            return len(sessions)
        if word == "ready":
            sessions = [s for s in sessions if s.toggles["ready"] and s.opponent is None]
        elif word == "playing":
            sessions = [s for s in sessions if s.opponent is not None]
        elif word == "away":
            sessions = [s for s in sessions if s.away is not None]
        elif word == "from" and len(args) > 1:
            sessions = [s for s in sessions if args[1].lower() in s.output.host.lower()]
        else:
            found = ctx.app.registry.get(args[0])
            if found is None:
                raise Reply(replies.no_one_called_period(args[0]))
            sessions = [found]
    order = ctx.session.settings.sortwho
    if order == "name":
        sessions.sort(key=lambda s: s.name.lower())
    elif order == "rating":
        sessions.sort(key=lambda s: -s.rating)
    elif order == "rrating":
        sessions.sort(key=lambda s: s.rating)
    else:
        sessions.sort(key=lambda s: s.login_time)
    return sessions


def _status(session: Session) -> str:
    """§4.14 (HELP who): P playing, W watching, R ready, A away, else -."""
    if session.opponent is not None:
        return "P"
    if session.watching is not None:
        return "W"
    if session.away is not None:
        return "A"
    return "R" if session.toggles["ready"] else "-"


def _minutes(seconds: float) -> str:
    return f"{int(seconds) // 60}"


@handles("who")
async def who(ctx: Context, cmd: ParsedCommand) -> None:
    """CLIP 5 lines and 6 in CLIP mode; the table in telnet mode."""
    session = ctx.session
    found = select(ctx, cmd.args)
    if isinstance(found, int):
        session.send(replies.who_count(found))
        return
    if session.clip:
        session.send_lines(s.who_info().format() for s in found)
        session.send(clip.WhoInfoEnd().format())
        return
    now = time.monotonic()
    wall = time.time()
    session.send(replies.WHO_HEADER)
    session.send_lines(
        replies.who_row(
            number,
            _status(s),
            s.name,
            s.rating,
            s.experience,
            _minutes(wall - s.login_time),
            _minutes(now - s.last_input),
            s.output.host,
        )
        for number, s in enumerate(found, start=1)
    )


@handles("rawwho")
async def rawwho(ctx: Context, cmd: ParsedCommand) -> None:
    """Always CLIP 5 lines ended by 6; nobody found gives just the 6 (§4.14)."""
    try:
        found = select(ctx, cmd.args)
    except Reply:
        found = []
    if isinstance(found, int):
        found = [s for s in ctx.app.registry if s.logged_in]
    ctx.session.send_lines(s.who_info().format() for s in found)
    ctx.session.send(clip.WhoInfoEnd().format())
