"""``ratings [name] [from <n>] [to <m>]``: the rating list (§4.14, §6.12).

Only players with experience above 50 are on the list (the database's rule). Without a
range the top 20 are shown; a range spans at most 100 ranks. The asker's line (or the
named player's) is marked with ``*``; ``ratings <name>`` alone shows that player's line.
With the word ``analysis`` (D341) each line ends with the player's mean error rate over
their last analysed matches, as ``whois`` gives it (D290): opt-in, so the §4.14 lines
that client programs read stay as FIBS sends them.
"""

from __future__ import annotations

from db.records import RatingEntry
from db.repository import RATING_LIST_EXPERIENCE
from protocol import replies
from protocol.arguments import parse_ratings_query
from protocol.parser import ParsedCommand
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.handlers.info import RATE_MATCHES

TOP = 20
"""§4.14: ``ratings`` alone shows the top 20."""
MAX_RANGE = 100
"""§4.14: ``** range currently limited to 100.``"""


async def ratings(ctx: Context, cmd: ParsedCommand) -> None:
    query = valid(parse_ratings_query(cmd.args))
    db = ctx.app.db
    marked = query.name or ctx.session.name
    if query.name is not None and query.start is None and query.end is None:
        entry = await db.rating_entry(query.name)
        if entry is None:
            raise Reply(replies.dont_know_user(query.name))
        entries = [entry]
    else:
        start = query.start or 1
        end = query.end or start + TOP - 1
        if end < start:
            raise Reply(replies.invalid_range(start, end))
        if end - start + 1 > MAX_RANGE:
            raise Reply(replies.RATINGS_RANGE_LIMIT)
        entries = await db.rating_list(start=start, count=end - start + 1)
    if query.rates:
        lines = [await _rate_line(ctx, entry, entry.name == marked) for entry in entries]
    else:
        lines = [_line(entry, entry.name == marked) for entry in entries]
    ctx.session.send(replies.RATINGS_RATES_HEADER if query.rates else replies.RATINGS_HEADER)
    ctx.session.send_lines(lines)
    if not ctx.clip:
        ctx.session.send(replies.ratings_who(RATING_LIST_EXPERIENCE))  # D178


def _line(entry: RatingEntry, marked: bool) -> str:
    return replies.ratings_line(
        entry.rank, entry.name, entry.rating, entry.experience, marked=marked
    )


async def _rate_line(ctx: Context, entry: RatingEntry, marked: bool) -> str:
    """D341: the line with ``entry``'s mean error rate over their last analysed matches,
    as ``whois`` computes it (D290); ``-`` when none is analysed."""
    rates = await ctx.app.db.recent_rates(entry.name, last=RATE_MATCHES)
    return replies.ratings_rate_line(
        entry.rank,
        entry.name,
        entry.rating,
        entry.experience,
        sum(rates) / len(rates) if rates else None,
        marked=marked,
    )
