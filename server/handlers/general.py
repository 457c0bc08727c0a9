"""Server-wide commands: help, motd, version, about, stat, average, port, cls, and the
refusals of the administrators' commands (§4.2, §4.14, §4.17)."""

from __future__ import annotations

import datetime as dt
import platform
from importlib import metadata

from protocol import clip, replies
from protocol.commands import help_lines
from protocol.parser import ParsedCommand
from server.errors import Reply
from server.handlers.context import Context


def package_version() -> str:
    """The installed version of this server (``0`` when run from an uninstalled tree)."""
    try:
        return metadata.version("fibs-server")
    except metadata.PackageNotFoundError:
        return replies.UNKNOWN_VERSION


def release() -> str:
    """``0.1.0 (Python 3.11.9)``: this server's version and the Python it runs on."""
    return replies.version_with_python(package_version(), platform.python_version())


async def help_(ctx: Context, cmd: ParsedCommand) -> None:
    """``help`` lists the commands, ``help <topic>`` explains one (§4.2, D41)."""
    ctx.session.send_lines(help_lines(cmd.args[0] if cmd.args else None))


async def motd(ctx: Context, cmd: ParsedCommand) -> None:
    """The message of the day: ``3``, the text, ``4`` in CLIP mode (§4.14)."""
    lines = ctx.app.motd
    if ctx.clip:
        ctx.session.send_lines(clip.motd(lines))  # 3 and 4 alone when none is set
    else:
        ctx.session.send_lines(lines or [replies.NO_MOTD])  # D178


async def version(ctx: Context, cmd: ParsedCommand) -> None:
    ctx.session.send(replies.version(f"{ctx.app.settings.server_name} {release()}"))


async def about(ctx: Context, cmd: ParsedCommand) -> None:
    ctx.session.send_lines(replies.about(ctx.app.settings.server_name, release()))


async def stat(ctx: Context, cmd: ParsedCommand) -> None:
    """SPEC's ``stat`` lines this server has numbers for, then its own (D160)."""
    presence = ctx.app.presence
    online = presence.count()
    started = dt.datetime.fromtimestamp(ctx.app.started_at, dt.UTC)
    registered = await ctx.app.db.count_users()
    ctx.session.send_lines(
        replies.stat(
            replies.stat_date(started),
            registered,
            online,
            max(presence.peak, online),
            presence.logins,
        )
    )


async def average(ctx: Context, cmd: ParsedCommand) -> None:
    """SPEC's table of users logged in by hour of the day, UTC (D160)."""
    hours = ctx.app.presence.hours(ctx.app.clock())
    rows = [replies.average_row(hour, hours[hour], hours[hour + 12]) for hour in range(12)]
    ctx.session.send_lines([replies.AVERAGE_HEADER, *rows])


async def port(ctx: Context, cmd: ParsedCommand) -> None:
    """Undocumented ``port`` (§4.2)."""
    ctx.session.send(replies.port(ctx.app.port))


async def cls(ctx: Context, cmd: ParsedCommand) -> None:
    """``cls``/``clear``: ``ESC [ ; H ESC [ 2 J`` and CR LF (§4.17)."""
    ctx.session.send(replies.CLEAR_SCREEN)


async def admin_only(ctx: Context, cmd: ParsedCommand) -> None:
    """Administrators' commands: ``** Permission denied`` for everyone here (§4.2)."""
    raise Reply(replies.PERMISSION_DENIED)
