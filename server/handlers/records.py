"""Match records and dice statistics: ``export`` (an extension, D76-D77), ``analysis``
(an extension, D285-D288) and ``dicetest`` (§4.14, D78).

``export`` lists the caller's finished matches with their record ids; ``export <id>``
sends one of them as the Jellyfish ``.mat`` text of :mod:`protocol.mat_export`, between two
marker lines, and ``export <id> json`` as its JSON record (D275), whose dice
``python -m backgammon.fair_dice verify`` checks. Only the two players of a match may
export it. ``dicetest`` reports every roll the server made since it started
(:class:`server.tables.dice_stats.DiceStats`).
"""

from __future__ import annotations

import datetime as dt
import math

from backgammon.errors import SnapshotError
from db.errors import UnknownMatchError
from protocol import replies
from protocol.analysis import AnalysisError, analysis_from_json
from protocol.analysis_view import analysis_json, analysis_lines, analysis_text
from protocol.arguments import ExportForm, parse_export_form, parse_record_id
from protocol.mat_export import snapshot_to_mat
from protocol.match_replay import compact_json, replay_json
from protocol.parser import ParsedCommand
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context

EXPORT_LIST_LENGTH = 20
"""How many finished matches ``export`` lists (``last`` shows 20 lines too, §4.14)."""
FACE_FREEDOM = 5
"""Degrees of freedom of the faces' chi-square: six faces, one constraint (the total)."""
PAIR_FREEDOM = 35
"""Degrees of freedom of the ordered pairs' chi-square: 36 cells, one constraint."""


async def export(ctx: Context, cmd: ParsedCommand) -> None:
    """``export``: the caller's last finished matches; ``export <id>``: one as ``.mat``."""
    session = ctx.session
    db = ctx.app.db
    if not cmd.args:
        records = await db.list_match_records(session.name, limit=EXPORT_LIST_LENGTH)
        if not records:
            raise Reply(replies.EXPORT_NONE)
        lines = [replies.EXPORT_HEADER]
        for record in records:
            mine, theirs = record.score1, record.score2
            opponent = record.player2
            if record.player2 == session.name:
                mine, theirs, opponent = theirs, mine, record.player1
            ended = dt.datetime.fromtimestamp(record.ended_at, dt.UTC)
            lines.append(
                replies.export_row(record.id, opponent, record.match_length, mine, theirs, ended)
            )
        session.send_lines(lines)
        return
    match_id = valid(parse_record_id(cmd.args[0]))
    form = valid(parse_export_form(cmd.args[1:]))
    found = await db.get_match_record(match_id)
    if found is None or session.name not in (found.player1, found.player2):
        raise Reply(replies.export_not_found(match_id))
    if form is ExportForm.SGF:
        # D291: gnubg's own file, analysed now (on demand: the stored analysis is ours)
        if not ctx.app.analyses.enabled:
            raise Reply(replies.ANALYSIS_OFF)
        try:
            sgf = await ctx.app.analyses.sgf(found)
        except AnalysisError:
            raise Reply(replies.analysis_failed(match_id)) from None
        lines = [
            replies.export_sgf_begin(match_id),
            *sgf.splitlines(),
            replies.export_end(match_id),
        ]
        session.send_lines(lines)
        return
    if form is ExportForm.JSON:
        # The record as stored: one line of JSON, which python -m backgammon.fair_dice
        # verify checks (D275).
        session.send_lines(
            [replies.export_json_begin(match_id), found.moves, replies.export_end(match_id)]
        )
        return
    try:
        text = snapshot_to_mat(
            found.moves, site=ctx.app.settings.server_name, started_at=found.started_at
        )
    except SnapshotError:
        # A record this server cannot read (written by another version): nothing to send.
        raise Reply(replies.export_not_found(match_id)) from None
    lines = [replies.export_begin(match_id), *text.splitlines(), replies.export_end(match_id)]
    session.send_lines(lines)


async def analysis(ctx: Context, cmd: ParsedCommand) -> None:
    """``analysis <id> [json]`` (D285-D288, D326): gnubg's analysis of any finished match,
    as text in telnet mode and as lines for programs in CLIP mode, or with ``json`` as
    one line of JSON in either (the web page's); a match not analysed yet is
    queued (on demand), and the caller is told to ask again."""
    ctx.session.send_lines(await analysis_reply(ctx, cmd.args))


async def analysis_reply(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """The lines ``analysis <args>`` answers, and ``show analysis <args>`` too (D342:
    one answer for both spellings).

    :raises Reply: the usage, no such match, analysis off or failed, or queued (D287).
    """
    if not args:  # 'show analysis' alone; the command itself has min_args
        raise Reply(replies.ANALYSIS_USAGE)
    match_id = valid(parse_record_id(args[0], replies.ANALYSIS_USAGE))
    as_json = args[1:] == ("json",)
    if len(args) > 1 and not as_json:
        raise Reply(replies.ANALYSIS_USAGE)
    db = ctx.app.db
    record = await db.get_match_record(match_id)
    if record is None:
        raise Reply(replies.no_finished_match(match_id))
    stored = await db.get_analysis(match_id)
    if stored is not None and stored.state == "done" and stored.result is not None:
        try:
            found = analysis_from_json(stored.result)
        except SnapshotError:  # stored by another version: as if it had failed
            raise Reply(replies.analysis_failed(match_id)) from None
        names = (record.player1, record.player2)
        layout = analysis_json if as_json else analysis_lines if ctx.clip else analysis_text
        return layout(match_id, names, found)
    analyses = ctx.app.analyses
    if not analyses.enabled:
        raise Reply(replies.ANALYSIS_OFF)
    if stored is not None and stored.state == "failed":
        raise Reply(replies.analysis_failed(match_id))
    if stored is None:
        try:
            await analyses.request(match_id)
        except UnknownMatchError:
            raise Reply(replies.no_finished_match(match_id)) from None
    raise Reply(replies.analysis_queued(match_id, analyses.ahead(match_id)))


async def dicetest(ctx: Context, cmd: ParsedCommand) -> None:
    """§4.14: ``*** running dice test:`` ... ``Done.``: the rolls since the start, the
    count of every ordered pair (SPEC's table), of every face, and the chi-square of
    both against fair dice with P, the chance of a deviation at least that large."""
    stats = ctx.app.dice_stats
    lines = [replies.DICETEST_START, replies.dicetest_rolled(stats.rolls)]
    for first in range(1, 7):
        row = [stats.pairs.get((first, second), 0) for second in range(1, 7)]
        lines.append(replies.dicetest_pairs(first, *row))
    lines.append(replies.dicetest_faces(*stats.faces[1:7]))
    faces = stats.face_chi_square()
    pairs = stats.pair_chi_square()
    lines.append(
        replies.dicetest_faces_chi_square(faces, FACE_FREEDOM, chi_square_tail(faces, FACE_FREEDOM))
    )
    lines.append(
        replies.dicetest_pairs_chi_square(pairs, PAIR_FREEDOM, chi_square_tail(pairs, PAIR_FREEDOM))
    )
    lines.append(replies.DICETEST_END)
    ctx.session.send_lines(lines)


def chi_square_tail(value: float, freedom: int) -> float:
    """P(X >= value) for a chi-square X with ``freedom`` (a whole number >= 1) degrees.

    The closed forms for whole degrees of freedom: for even ``2m``,
    ``exp(-x/2) * sum((x/2)^k / k!, k < m)``; for odd ``2m+1``,
    ``erfc(sqrt(x/2)) + exp(-x/2) * sum(x^(k-1/2) / (1*3*...*(2k-1)), k = 1..m) * sqrt(2/pi)``.
    """
    if freedom < 1:
        raise ValueError(f"degrees of freedom must be 1 or more, not {freedom}")
    if value <= 0:
        return 1.0
    half = value / 2
    if freedom % 2 == 0:
        term = total = 1.0
        for k in range(1, freedom // 2):
            term *= half / k
            total += term
        return min(1.0, math.exp(-half) * total)
    root = math.sqrt(value)
    total = 0.0
    term = root
    for k in range(1, (freedom - 1) // 2 + 1):
        if k > 1:
            term *= value / (2 * k - 1)
        total += term
    tail = math.erfc(math.sqrt(half)) + math.exp(-half) * total * math.sqrt(2 / math.pi)
    return min(1.0, tail)


async def match_page(ctx: Context, cmd: ParsedCommand) -> None:
    """``match! <id>`` (D377; only the web page sends it): any finished match step by
    step, with its ``.mat`` text, as one line of JSON (:mod:`protocol.match_replay`)."""
    match_id = valid(parse_record_id(cmd.args[0], replies.MATCH_PAGE_USAGE))
    found = await ctx.app.db.get_match_record(match_id)
    if found is None:
        raise Reply(replies.no_finished_match(match_id))
    try:
        text = replay_json(
            found.moves,
            match_id=match_id,
            players=(found.player1, found.player2),
            score=(found.score1, found.score2),
            winner=found.winner,
            started_at=found.started_at,
            ended_at=found.ended_at,
            site=ctx.app.settings.server_name,
        )
    except SnapshotError:  # stored by another version: as if there were none
        raise Reply(replies.no_finished_match(match_id)) from None
    ctx.session.send(replies.match_page(text))


async def profile_page(ctx: Context, cmd: ParsedCommand) -> None:
    """``profile! <name>`` (D377; only the web page sends it): a player's rating,
    experience, whether online, and their last finished matches (``export``'s list,
    for anyone), as one line of JSON."""
    name = cmd.args[0]
    db = ctx.app.db
    user = await db.get_user(name)
    if user is None:
        raise Reply(replies.no_information(name))
    online = ctx.app.presence.get(name)
    matches = []
    for record in await db.list_match_records(name, limit=EXPORT_LIST_LENGTH):
        first = record.player1 == name
        scores = [record.score1, record.score2]
        matches.append(
            {
                "match": record.id,
                "opponent": record.player2 if first else record.player1,
                "length": record.match_length,
                "score": scores if first else scores[::-1],
                "won": record.winner == name,
                "ended": record.ended_at,
            }
        )
    found = {
        "name": user.name,
        "rating": round(user.rating, 2),
        "experience": user.experience,
        "bot": user.is_bot,
        "online": online is not None and online.logged_in,
        "playing": online.opponent if online is not None and online.logged_in else None,
        "last_login": user.last_login_at,
        "matches": matches,
    }
    ctx.session.send(replies.profile_page(compact_json(found)))
