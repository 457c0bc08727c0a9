"""Who is online and when: ``who``, ``rawwho``, ``whois``, ``where``, ``time``, ``last``
(§4.14)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from protocol import replies
from protocol.arguments import WhoKind, WhoOrder, parse_who_filter
from protocol.parser import ParsedCommand
from protocol.replies import Toggle
from server.errors import Reply
from server.handlers.context import Context
from server.handlers.settings import timezone_or_reply
from server.world.presence import WHO_END, Peer

RATE_MATCHES = 20
"""``whois`` shows the mean error rate of so many of the user's last analysed matches."""


def select(ctx: Context, args: tuple[str, ...]) -> list[Peer] | int:
    """The sessions a ``who``/``rawwho`` filter names, sorted by ``set sortwho``.

    ``who count`` returns the number instead (§4.14).
    """
    sessions = ctx.app.presence.users()
    wanted = parse_who_filter(args)
    match wanted.kind:
        case WhoKind.ALL:
            pass
        case WhoKind.COUNT:
            return len(sessions)
        case WhoKind.READY:
            sessions = [s for s in sessions if s.toggles[Toggle.READY] and s.opponent is None]
        case WhoKind.PLAYING:
            sessions = [s for s in sessions if s.opponent is not None]
        case WhoKind.AWAY:
            sessions = [s for s in sessions if s.away is not None]
        case WhoKind.FROM:
            sessions = [s for s in sessions if wanted.text in s.host.lower()]
        case WhoKind.NAME:
            found = ctx.app.presence.get(wanted.text)
            if found is None:
                raise Reply(replies.no_one_called_period(wanted.text))
            sessions = [found]
    match WhoOrder(ctx.session.settings.sortwho):
        case WhoOrder.NAME:
            sessions.sort(key=lambda s: s.name.lower())
        case WhoOrder.RATING:
            sessions.sort(key=lambda s: -s.rating)
        case WhoOrder.RRATING:
            sessions.sort(key=lambda s: s.rating)
        case WhoOrder.LOGIN:
            sessions.sort(key=lambda s: s.login_time)
    return sessions


def _status(session: Peer) -> str:
    """§4.14 (HELP who): P playing, W watching, R ready, A away, else -."""
    return replies.who_status(
        playing=session.opponent is not None,
        watching=session.watching is not None,
        away=session.away is not None,
        ready=session.toggles[Toggle.READY],
    )


def _minutes(seconds: float) -> str:
    return f"{int(seconds) // 60}"


async def who(ctx: Context, cmd: ParsedCommand) -> None:
    """CLIP 5 lines and 6 in CLIP mode; the table in telnet mode."""
    session = ctx.session
    found = select(ctx, cmd.args)
    if isinstance(found, int):
        session.send(replies.who_count(found))
        return
    now = ctx.app.timer.now()
    if ctx.clip:
        session.send_lines([*(s.who_line(now) for s in found), WHO_END])
        return
    wall = ctx.app.clock()
    session.send(replies.WHO_HEADER)
    session.send_lines(
        replies.who_row(
            number,
            _status(s),
            s.name,
            s.rating,
            s.experience,
            _minutes(wall - s.login_time),
            _minutes(s.idle_seconds(now)),
            s.host,
            bot=s.is_bot,
        )
        for number, s in enumerate(found, start=1)
    )


async def rawwho(ctx: Context, cmd: ParsedCommand) -> None:
    """Always CLIP 5 lines ended by 6; nobody found gives just the 6 (§4.14)."""
    try:
        found = select(ctx, cmd.args)
    except Reply:
        found = []
    if isinstance(found, int):
        found = ctx.app.presence.users()
    now = ctx.app.timer.now()
    ctx.session.send_lines([*(s.who_line(now) for s in found), WHO_END])


# -- whois, where ------------------------------------------------------------------------


def local_time(ctx: Context, when: float) -> dt.datetime:
    """``when`` (Unix seconds) in the asker's time zone (``set timezone``)."""
    return dt.datetime.fromtimestamp(when, ZoneInfo(ctx.session.settings.timezone))


async def whois(ctx: Context, cmd: ParsedCommand) -> None:
    """``whois <name>``: the §4.14 block for an online or offline user, exact name; the
    users whose names differ only in case at the end (D269)."""
    name = cmd.args[0]
    user = await ctx.app.db.get_user(name)
    if user is None:
        raise Reply(replies.no_information(name))
    look_alikes = tuple(n for n in await ctx.app.db.names_like(name) if n != name)
    # D290: the mean error rate of the last analysed matches, for people (telnet mode)
    rates = [] if ctx.clip else await ctx.app.db.recent_rates(name, last=RATE_MATCHES)
    online = ctx.app.presence.get(name)
    if online is not None and online.logged_in:
        info = replies.WhoisInfo(
            name=name,
            last_login=replies.whois_date(local_time(ctx, online.login_time)),
            host=online.host,
            online=True,
            idle_seconds=online.idle_seconds(),
            ready=online.toggles[Toggle.READY],
            watching=online.watching,
            playing=online.opponent,
            away_message=online.away,
            rating=online.rating,
            experience=online.experience,
            email=online.address,
            bot=user.is_bot and not ctx.clip,
            look_alikes=look_alikes,
        )
    else:
        login = user.last_login_at if user.last_login_at is not None else user.created_at
        logout = user.last_logout_at if user.last_logout_at is not None else login
        info = replies.WhoisInfo(
            name=name,
            last_login=replies.whois_date(local_time(ctx, login)),
            host=user.last_login_host or replies.UNKNOWN_HOST,
            online=False,
            last_logout=replies.whois_date(local_time(ctx, logout)),
            rating=user.rating,
            experience=user.experience,
            email=user.address,
            bot=user.is_bot and not ctx.clip,
            look_alikes=look_alikes,
        )
    lines = replies.whois(info)
    if rates:
        lines.append(replies.whois_error_rate(sum(rates) / len(rates), len(rates)))
    ctx.session.send_lines(lines)


async def where(ctx: Context, cmd: ParsedCommand) -> None:
    """``where <name>``: where a logged-in user comes from; alone, everyone (§4.14, D74)."""
    if not cmd.args:
        found = ctx.app.presence.users()
    else:
        target = await ctx.app.find(cmd.args[0])
        if target is None:
            raise Reply(replies.no_one_there(cmd.args[0]))
        found = [target]
    ctx.session.send_lines(replies.where(s.name, s.host) for s in found)


# -- time, last ----------------------------------------------------------------------------


async def time_(ctx: Context, cmd: ParsedCommand) -> None:
    """``time [zone]`` / ``date``: now in your (or the given) zone and in UTC (§4.14)."""
    session = ctx.session
    zone = timezone_or_reply(cmd.args[0], ctx.clip) if cmd.args else session.settings.timezone
    now = dt.datetime.fromtimestamp(ctx.app.clock(), dt.UTC)
    ctx.session.send(replies.date_line(now.astimezone(ZoneInfo(zone)), now))


async def last(ctx: Context, cmd: ParsedCommand) -> None:
    """``last``: the 20 latest logins and logouts, oldest first (§4.14, D74)."""
    lines = [replies.LAST_HEADER]
    for when, text in ctx.app.presence.history:
        local = local_time(ctx, when)
        zone = local.tzname() or replies.UTC_ZONE
        lines.append(replies.last_line(f"{local:%a %H:%M}", zone, text))
    ctx.session.send_lines(lines)
