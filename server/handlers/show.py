"""``show <what>`` (§4.14): games, saved, savedcount, watchers, max, timezones (D177),
dice (D274), chouette (D308) and analysis (D342).

Each topic is a small function in :data:`TOPICS`; a unique prefix selects one
(``show sa`` is ambiguous, ``show savedc`` is savedcount). ``show`` alone answers
``** show what?`` (the command table's usage), an unknown topic
``** Don't know how to show <x>``. A visitor (D256) has no ``show analysis``, as it has
no ``analysis``: asking for one may start gnubg.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from backgammon.fair_dice import record_proof
from protocol import replies
from protocol.arguments import parse_record_id
from protocol.parser import ParsedCommand
from protocol.replies import SavedMark
from server.errors import Reply
from server.handlers import valid
from server.handlers.chouette import show_chouette
from server.handlers.context import Context
from server.handlers.match import games_lines, watchers_lines
from server.handlers.records import analysis_reply
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


async def _dice(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show dice <match id>``: a finished match's dice proof (D274): its rule, number of
    rolls, commitment, server seed and players' seeds. Anyone may ask: once a match is
    over its proof is no secret, and anyone can check it (docs/dice.md)."""
    if not args:
        raise Reply(replies.SHOW_DICE_USAGE)
    match_id = valid(parse_record_id(args[0], replies.SHOW_DICE_USAGE))
    record = await ctx.app.db.get_match_record(match_id)
    if record is None:
        raise Reply(replies.no_finished_match(match_id))
    try:
        (first, second), dice = record_proof(json.loads(record.moves))
    except ValueError:  # a record this server cannot read: as one without a proof
        dice = None
    if dice is None:
        raise Reply(replies.dice_not_committed(match_id))
    seeds = dice.seeds
    first_seed, second_seed = seeds.player_seeds
    return replies.show_dice(
        match_id,
        dice.drawn // 2,
        seeds.commitment,
        seeds.server_seed.hex(),
        first,
        first_seed,
        second,
        second_seed,
    )


async def _analysis(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show analysis <match id> [json]``: the ``analysis`` command's answer (D342)."""
    return await analysis_reply(ctx, args)


TOPICS: dict[str, Topic] = {
    "analysis": _analysis,
    "chouette": show_chouette,
    "dice": _dice,
    "games": _games,
    "max": _max,
    "saved": _saved,
    "savedcount": _savedcount,
    "timezones": _timezones,
    "watchers": _watchers,
}


NOT_FOR_VISITORS: frozenset[Topic] = frozenset({_analysis})
"""The topics a visitor (D256) cannot ask for: their commands are not a visitor's."""


def topic(word: str, *, visitor: bool = False) -> Topic:
    """The topic ``word`` names exactly or as a unique prefix (among a visitor's topics
    for a visitor).

    :raises Reply: ``** Don't know how to show <word>``.
    """
    key = word.lower()
    names = [name for name, shown in TOPICS.items() if not (visitor and shown in NOT_FOR_VISITORS)]
    if key in names:
        return TOPICS[key]
    found = [name for name in names if name.startswith(key)]
    if len(found) != 1:
        raise Reply(replies.dont_know_show(word))
    return TOPICS[found[0]]


async def show(ctx: Context, cmd: ParsedCommand) -> None:
    chosen = topic(cmd.args[0], visitor=ctx.session.visitor)
    ctx.session.send_lines(await chosen(ctx, cmd.args[1:]))
