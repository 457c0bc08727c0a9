"""Match commands (§4.3-§4.11): invite, join, play, the cube, resign, leave, watch.

The handlers parse their arguments and send the rest through the table seam
(``ctx.app.tables``, :mod:`server.tables.seam`): a game action as a command of plain data
(:data:`server.tables.seam.TableCommand`), which the owner of the caller's table applies
and answers (its refusals as FIBS's replies). No handler holds a running match
(``tests/server/test_table_seam.py``). Other users are
:class:`~server.world.presence.Peer` views of ``ctx.app.presence``, written to only
through it (kibitz, whisper).
"""

from __future__ import annotations

import dataclasses

from protocol import replies
from protocol.arguments import (
    Invalid,
    move_text,
    parse_match_length,
    parse_match_rules,
    parse_resign_kind,
)
from protocol.parser import ParsedCommand
from server.config import RulesDefaults
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.tables.seam import (
    Accept,
    BearOff,
    Double,
    MatchRequest,
    Moves,
    Redouble,
    Reject,
    Resign,
    Roll,
    TableCommand,
)
from server.world.session import Session

RATED_EXPERIENCE = 50
"""§6.9: matches over 9 points need the inviter on the rating list (experience > 50)."""
LONGEST_UNRATED = 9
"""§6.9: the longest match anyone may be invited to."""


# -- invite and join (§4.3) ---------------------------------------------------------------


async def invite(ctx: Context, cmd: ParsedCommand) -> None:
    session = ctx.session
    app = ctx.app
    if not cmd.args:
        raise Reply(replies.INVITE_WHO)
    target = await app.complete(cmd.args[0])
    if session.name in target.gagged:  # a gag stops invitations too (D301)
        raise Reply(replies.wont_listen(target.name))
    saved = await app.tables.invitable(session, target)
    request = None
    if len(cmd.args) > 1:
        length = _length(cmd.args[1], session, ctx.clip)
        rules, words = _chosen_rules(app.settings.rules, cmd.args[2:], length)
        request = MatchRequest(length, rules, words)
    pair = (session.name, target.name)
    if not app.invitation_pace.allows(pair):
        raise Reply(replies.invited_too_often(target.name))  # D301
    app.tables.invite(session, target, saved, request)
    app.invitation_pace.count(pair)


def _chosen_rules(
    defaults: RulesDefaults, words: tuple[str, ...], length: int | None
) -> tuple[RulesDefaults | None, tuple[str, ...]]:
    """The rules given after the length of ``invite`` (D56), or None for none.

    Rules not named keep fibs.conf's values where they apply to this kind of match.
    """
    if not words:
        return None, ()
    unlimited = length is None
    rules = dataclasses.replace(
        defaults,
        holland=defaults.holland and not unlimited,
        jacoby=defaults.jacoby and unlimited,
        auto_doubles=defaults.auto_doubles if unlimited else 0,
    )
    chosen = valid(parse_match_rules(words))
    if chosen.holland is not None:
        rules = dataclasses.replace(rules, holland=chosen.holland)
    if chosen.jacoby is not None:
        rules = dataclasses.replace(rules, jacoby=chosen.jacoby)
    if chosen.dead_cube is not None:
        rules = dataclasses.replace(rules, dead_cube_doubles=chosen.dead_cube)
    if chosen.auto_doubles is not None:
        rules = dataclasses.replace(rules, auto_doubles=chosen.auto_doubles)
    if chosen.cube_limit_named:
        rules = dataclasses.replace(rules, cube_limit=chosen.cube_limit)
    return rules, chosen.words


def _length(word: str, session: Session, clip: bool) -> int | None:
    """The match length argument of ``invite``: a number 1..99 or ``unlimited``."""
    length = parse_match_length(word)
    if isinstance(length, Invalid):
        raise Reply(*length.lines, *_telnet(clip, replies.INVITE_LENGTH_RANGE))
    if length is not None and length > LONGEST_UNRATED and session.experience <= RATED_EXPERIENCE:
        explained = replies.experience_needed(LONGEST_UNRATED, RATED_EXPERIENCE, session.experience)
        raise Reply(replies.NOT_EXPERIENCED, *_telnet(clip, explained))
    return length


def _telnet(clip: bool, *lines: str) -> tuple[str, ...]:
    """``lines`` for a telnet-mode reply, nothing for a CLIP client (D170-D173, D376)."""
    return () if clip else lines


def _accepted(ctx: Context) -> None:
    """An invitation was accepted: its inviter's invitations to this user are no longer
    counted against them (D301; pairs playing match after match invite each other
    again and again)."""
    session = ctx.session
    if session.opponent is not None:
        ctx.app.invitation_pace.forget((session.opponent, session.name))


async def join(ctx: Context, cmd: ParsedCommand) -> None:
    """``join NAME`` accepts an invitation; a bare ``join`` starts the next game (§4.8),
    or, outside a match, accepts the one invitation waiting (D173)."""
    session = ctx.session
    tables = ctx.app.tables
    if cmd.args:
        await tables.join(session, cmd.args[0])
        _accepted(ctx)
        return
    if tables.playing(session.name):
        await tables.join_next_game(session)
        return
    inviters = tables.inviters_of(session.name)
    if len(inviters) == 1:
        await tables.join(session, inviters[0])
        _accepted(ctx)
        return
    explained = replies.invited_by(inviters) if inviters else replies.NOBODY_INVITED_YOU
    raise Reply(replies.JOIN_WHO, *_telnet(ctx.clip, explained))


# -- playing (§4.4-§4.7) --------------------------------------------------------------------


async def _act(ctx: Context, command: TableCommand) -> None:
    """Send ``command`` to the caller's table (:meth:`server.tables.seam.Tables.act`)."""
    await ctx.app.tables.act(ctx.session, command)


def _playing(ctx: Context) -> None:
    """Stop with ``** You're not playing.`` unless the caller plays a match."""
    if not ctx.app.tables.playing(ctx.session.name):
        raise Reply(replies.NOT_PLAYING)


async def roll(ctx: Context, cmd: ParsedCommand) -> None:
    await _act(ctx, Roll())


async def double(ctx: Context, cmd: ParsedCommand) -> None:
    """At a chouette the names that follow say whose cubes (D306); a match ignores them."""
    await _act(ctx, Double(await _names(ctx, cmd)))


async def move(ctx: Context, cmd: ParsedCommand) -> None:
    await _act(ctx, Moves(move_text(cmd.args)))


async def off(ctx: Context, cmd: ParsedCommand) -> None:
    """Bear off with every die, when that is a legal play (§4.5)."""
    await _act(ctx, BearOff())


async def accept(ctx: Context, cmd: ParsedCommand) -> None:
    """Take a double or accept a resignation, whichever waits for the caller."""
    await _act(ctx, Accept(await _names(ctx, cmd)))


async def reject(ctx: Context, cmd: ParsedCommand) -> None:
    await _act(ctx, Reject(await _names(ctx, cmd)))


async def _names(ctx: Context, cmd: ParsedCommand) -> tuple[str, ...]:
    """The players named after ``double``/``accept``/``reject`` at a chouette (D306),
    each completed as ``tell`` does; nothing at a match (FIBS ignores the words)."""
    if not cmd.args or not ctx.app.tables.playing(ctx.session.name):
        return ()
    if ctx.app.tables.opponent_of(ctx.session.name) is not None:
        return ()  # a match
    return tuple([(await ctx.app.complete(word)).name for word in cmd.args])


async def redouble(ctx: Context, cmd: ParsedCommand) -> None:
    """An instant redouble; ``beaver``/``raccoon``/``otter`` name the 1st/2nd/3rd (§4.6)."""
    await _act(ctx, Redouble(cmd.name))


async def resign(ctx: Context, cmd: ParsedCommand) -> None:
    _playing(ctx)
    await _act(ctx, Resign(valid(parse_resign_kind(cmd.args))))


async def panic(ctx: Context, cmd: ParsedCommand) -> None:
    """§4.9: the match is stored after every action already, so it is saved right now."""
    _playing(ctx)
    ctx.session.send(replies.PANIC_SAVED)


async def leave(ctx: Context, cmd: ParsedCommand) -> None:
    """Stop the match; it stays saved for a later ``invite`` + ``join`` (§4.9)."""
    await ctx.app.tables.leave(ctx.session)


# -- boards and looking (§4.10) ----------------------------------------------------------------


async def board(ctx: Context, cmd: ParsedCommand) -> None:
    """The caller's board, or that of the player they watch, as announced (D197)."""
    await ctx.app.tables.show_board(ctx.session)


async def pip(ctx: Context, cmd: ParsedCommand) -> None:
    await ctx.app.tables.show_pips(ctx.session)


async def look(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.LOOK_AT_WHO)
    target = await ctx.app.complete(cmd.args[0])
    if target.name == ctx.session.name:
        raise Reply(replies.YOU_LOOK_GREAT)
    await ctx.app.tables.look(ctx.session, target)


async def oldboard(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.OLDBOARD_USAGE)
    await ctx.app.tables.saved_board(ctx.session, cmd.args[0])


async def oldmoves(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.OLDMOVES_USAGE)
    await ctx.app.tables.saved_moves(ctx.session, cmd.args[0])


# -- watching and table talk (§4.11, §4.12) ----------------------------------------------------


async def watch(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.WATCH_WHO)
    await ctx.app.tables.watch(ctx.session, cmd.args[0])


async def unwatch(ctx: Context, cmd: ParsedCommand) -> None:
    if ctx.session.watching is None:
        raise Reply(replies.NOT_WATCHING)
    ctx.app.tables.stop_watching(ctx.session)


async def kibitz(ctx: Context, cmd: ParsedCommand) -> None:
    """To the players and every watcher of the game (§4.12, §6.5)."""
    hearers = await ctx.app.tables.hearers(ctx.session, watchers_only=False)
    text = cmd.text_after(0)
    presence = ctx.app.presence
    for p in hearers:
        presence.send(p, replies.kibitzes(ctx.session.name, text, p.mode))
    ctx.session.send(replies.you_kibitz(text, ctx.session.mode), replies.heard_you(len(hearers)))


async def whisper(ctx: Context, cmd: ParsedCommand) -> None:
    """To the watchers only (§4.12, §6.5)."""
    hearers = await ctx.app.tables.hearers(ctx.session, watchers_only=True)
    text = cmd.text_after(0)
    presence = ctx.app.presence
    for p in hearers:
        presence.send(p, replies.whispers(ctx.session.name, text, p.mode))
    ctx.session.send(replies.you_whisper(text, ctx.session.mode), replies.heard_you(len(hearers)))


# -- lists (for ``show``) -------------------------------------------------------------------------


def games_lines(ctx: Context) -> list[str]:
    """``show games`` (§4.14): the matches, then the chouettes (D364)."""
    lines = [replies.GAMES_HEADER]
    for game in ctx.app.tables.games():
        lines.append(replies.game_line(*game.names, game.length, *game.score))
    for table in ctx.app.tables.chouette_games():  # D364
        lines.append(
            replies.chouette_game_line(table.box, table.captain, table.players, table.game)
        )
    return lines


def watchers_lines(ctx: Context) -> list[str]:
    """``show watchers`` (§4.11)."""
    watching = [p for p in ctx.app.presence.users() if p.watching is not None]
    if not watching:
        return [replies.WATCHING_PLAYERS_NONE]
    return [replies.WATCHING_PLAYERS] + [
        replies.is_watching(p.name, p.watching or "") for p in watching
    ]
