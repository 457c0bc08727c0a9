"""``show <what>`` (§4.14): games, saved, savedcount, watchers, max, and timezones (D177).

Each topic is a small function in :data:`TOPICS`; a unique prefix selects one
(``show sa`` is ambiguous, ``show savedc`` is savedcount). ``show`` alone answers
``** show what?`` (the command table's usage), an unknown topic
``** Don't know how to show <x>``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from protocol import replies
from protocol.parser import ParsedCommand
from protocol.replies import SavedMark
from server.errors import Reply
from server.handlers.context import Context
from server.handlers.match import games_lines, watchers_lines
from server.handlers.settings import zones

Topic = Callable[[Context, tuple[str, ...]], Awaitable[list[str]]]


async def _games(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show games`` (§4.14; the list comes from the match handlers)."""
    return games_lines(ctx)


async def _watchers(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show watchers`` (§4.11)."""
    return watchers_lines(ctx)


async def _saved(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show saved``: the header, then your saved matches, ``**`` when the opponent is
    logged in, `` *`` for the one you are playing now (§4.14, D18), or ``no saved games.``
    after the header when there are none: Gibbon waits for one of the two (D163)."""
    session = ctx.session
    saved = await ctx.app.db.list_saved_matches(session.name)
    if not saved:
        return [replies.SAVED_HEADER, replies.NO_SAVED_GAMES]
    lines = [replies.SAVED_HEADER]
    for match in saved:
        opponent = match.opponent_of(session.name)
        online = ctx.app.presence.get(opponent)
        if session.opponent == opponent:
            mark = SavedMark.PLAYING
        elif online is not None and online.logged_in:
            mark = SavedMark.ONLINE
        else:
            mark = SavedMark.OFFLINE
        mine, theirs = match.scores_for(session.name)
        lines.append(replies.saved_line(mark, opponent, match.match_length, mine, theirs))
    return lines


async def _savedcount(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show savedcount [name]``: how many saved matches name has (§4.14; GIB, GBOT)."""
    name = args[0] if args else ctx.session.name
    return [replies.savedcount(name, await ctx.app.db.count_saved_matches(name))]


async def _max(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show max``: the login limit and the most users seen at once (§4.14, D74)."""
    presence = ctx.app.presence
    return [replies.max_logins(ctx.app.settings.max_logins, max(presence.peak, presence.count()))]


async def _timezones(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show timezones [prefix]``: the zones ``set timezone`` takes, six a line (D177)."""
    prefix = args[0].lower() if args else ""
    found = sorted(z for z in zones() if z.lower().startswith(prefix))
    if not found:
        raise Reply(replies.NO_TIMEZONES)
    return replies.zone_list(found)


TOPICS: dict[str, Topic] = {
    "games": _games,
    "max": _max,
    "saved": _saved,
    "savedcount": _savedcount,
    "timezones": _timezones,
    "watchers": _watchers,
}


def topic(word: str) -> Topic:
    """The topic ``word`` names exactly or as a unique prefix.

    :raises Reply: ``** Don't know how to show <word>``.
    """
    key = word.lower()
    if key in TOPICS:
        return TOPICS[key]
    found = [name for name in TOPICS if name.startswith(key)]
    if len(found) != 1:
        raise Reply(replies.dont_know_show(word))
    return TOPICS[found[0]]


async def show(ctx: Context, cmd: ParsedCommand) -> None:
    ctx.session.send_lines(await topic(cmd.args[0])(ctx, cmd.args[1:]))
