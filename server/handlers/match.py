"""Match commands (§4.3-§4.11): invite, join, play, the cube, resign, leave, watch.

The handlers parse their arguments and leave the rest to :mod:`server.tables.match_lifecycle`
(invite, join, leave, watch) and, for a game action, to the rules core through
:func:`server.tables.match_lifecycle.play`; the core's refusals are mapped to FIBS's replies
here. Boards come from the one renderer (:func:`server.tables.match_lifecycle.send_board`).
Other users are :class:`~server.world.presence.Peer` views of ``ctx.app.presence``, written to
only through it (kibitz, whisper).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from backgammon.board import BAR, Colour, to_absolute
from backgammon.errors import (
    ActionError,
    IllegalMoveError,
    MoveSyntaxError,
    Refusal,
    SnapshotError,
)
from backgammon.events import Event
from backgammon.match import Action, Match, Phase
from backgammon.notation import format_move, parse_moves
from db.records import SavedMatch
from protocol import replies
from protocol.arguments import (
    Invalid,
    move_text,
    parse_match_length,
    parse_match_rules,
    parse_resign_kind,
)
from protocol.game_record import last_game, oldmoves_lines
from protocol.parser import ParsedCommand
from protocol.replies import GameCommand, MoveErrorReason
from server.config import RulesDefaults
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.tables import match_lifecycle
from server.tables.match_lifecycle import announced, players_of, send_board
from server.tables.matches import LiveMatch, watchers_at
from server.world.presence import Peer
from server.world.session import Session

log = logging.getLogger(__name__)

RATED_EXPERIENCE = 50
"""§6.9: matches over 9 points need the inviter on the rating list (experience > 50)."""
LONGEST_UNRATED = 9
"""§6.9: the longest match anyone may be invited to."""


def live_match(ctx: Context) -> LiveMatch:
    """The caller's running match, or ``** You're not playing.``."""
    live = ctx.app.matches.get(ctx.session.name)
    if live is None:
        raise Reply(replies.NOT_PLAYING)
    return live


# -- invite and join (§4.3) ---------------------------------------------------------------


async def invite(ctx: Context, cmd: ParsedCommand) -> None:
    session = ctx.session
    app = ctx.app
    if not cmd.args:
        raise Reply(replies.INVITE_WHO)
    target = await app.complete(cmd.args[0])
    saved = await match_lifecycle.invitable(app, session, target)
    if len(cmd.args) == 1:
        invitation = match_lifecycle.resume_invitation(session, target, saved)
    else:
        length = _length(cmd.args[1], session)
        rules, words = _chosen_rules(app.settings.rules, cmd.args[2:], length)
        invitation = match_lifecycle.new_invitation(
            app, session, target, length, rules, words, saved
        )
    match_lifecycle.invite(app, session, target, invitation, saved)


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


def _length(word: str, session: Session) -> int | None:
    """The match length argument of ``invite``: a number 1..99 or ``unlimited``."""
    length = parse_match_length(word)
    if isinstance(length, Invalid):
        raise Reply(*length.lines, *_telnet(session, replies.INVITE_LENGTH_RANGE))
    if length is not None and length > LONGEST_UNRATED and session.experience <= RATED_EXPERIENCE:
        explained = replies.experience_needed(LONGEST_UNRATED, RATED_EXPERIENCE, session.experience)
        raise Reply(replies.NOT_EXPERIENCED, *_telnet(session, explained))
    return length


def _telnet(session: Session, *lines: str) -> tuple[str, ...]:
    """``lines`` for a telnet-mode session, nothing for a CLIP client (D170-D173)."""
    return () if session.clip else lines


async def join(ctx: Context, cmd: ParsedCommand) -> None:
    """``join NAME`` accepts an invitation; a bare ``join`` starts the next game (§4.8),
    or, outside a match, accepts the one invitation waiting (D173)."""
    session = ctx.session
    app = ctx.app
    if cmd.args:
        await match_lifecycle.join(app, session, cmd.args[0])
        return
    if session.name in app.matches:
        await match_lifecycle.join_next_game(app, session)
        return
    inviters = sorted(n for n, i in app.invitations.items() if i.invitee == session.name)
    if len(inviters) == 1:
        await match_lifecycle.join(app, session, inviters[0])
        return
    explained = replies.invited_by(inviters) if inviters else replies.NOBODY_INVITED_YOU
    raise Reply(replies.JOIN_WHO, *_telnet(session, explained))


# -- playing (§4.4-§4.7) --------------------------------------------------------------------


async def _act(
    ctx: Context,
    command: str,
    action: Callable[[Match, int], list[Event]],
    typed: str | None = None,
) -> None:
    """Run a game action for the caller, mapping the core's refusals to FIBS replies.

    ``typed``: the moves as typed, for the explanation telnet mode adds to a refused
    move (D171).
    """
    live = live_match(ctx)
    player = live.player_of(ctx.session.name)
    try:
        await match_lifecycle.play(ctx.app, live, lambda: action(live.match, player))
    except ActionError as error:
        raise Reply(_refusal(command, error.reason, live, player)) from None
    except IllegalMoveError as error:
        help_ = _move_help(ctx, live, player, error, typed)
        raise Reply(_move_error(error, live, player), *help_) from None
    except MoveSyntaxError as error:
        help_ = _move_help(ctx, live, player, error, typed)
        if error.incomplete:
            required = live.match.moves_required()
            raise Reply(
                replies.move_error(MoveErrorReason.TOO_FEW, count=required), *help_
            ) from None
        raise Reply(replies.move_error(MoveErrorReason.BAD_WORD, error.index), *help_) from None


def _move_help(
    ctx: Context,
    live: LiveMatch,
    player: int,
    error: IllegalMoveError | MoveSyntaxError,
    typed: str | None,
) -> list[str]:
    """Telnet mode: the typed move that failed and why, and which way the player moves
    (D171); CLIP clients get FIBS's line alone."""
    if ctx.session.clip or typed is None:
        return []
    match = live.match
    colour = match.colour(player)
    d1, d2 = match.dice if match.dice is not None else (0, 0)
    if isinstance(error, MoveSyntaxError):
        if error.incomplete:
            first = replies.move_incomplete(error.word)
        elif "/" in error.word:
            first = replies.move_slash(error.word)
        else:
            first = replies.move_problem(MoveErrorReason.BAD_WORD, error.word, "", d1, d2)
    else:
        moves = parse_moves(typed, colour)
        reason = MoveErrorReason(error.reason.value)
        if reason in (MoveErrorReason.TOO_FEW, MoveErrorReason.TOO_MANY):
            first = replies.move_count_problem(len(moves), error.count, d1, d2)
        else:
            what = format_move(moves[error.index], colour) if error.index < len(moves) else typed
            first = replies.move_problem(reason, what, _named_point(error, colour), d1, d2)
    direction = replies.move_direction(
        colour.name, to_absolute(24, colour), to_absolute(1, colour), to_absolute(6, colour)
    )
    return [first, direction]


def _named_point(error: IllegalMoveError, colour: Colour) -> int | str:
    """The point a move error names, in the mover's absolute FIBS numbers (distances stay)."""
    if error.point is None:
        return ""
    if error.reason.value == MoveErrorReason.WRONG_DISTANCE.value:
        return error.point
    if error.point == BAR:
        return replies.BAR_POINT
    if 1 <= error.point <= 24:
        return to_absolute(error.point, colour)
    return error.point


def _refusal(command: str, reason: Refusal, live: LiveMatch, player: int) -> str:
    """The FIBS reply for a refused action (§4.5-§4.7; docs/protocol-decisions.md)."""
    opponent_moving = live.match.phase is Phase.MOVE
    text = replies.refusal(command, reason, live.names[1 - player], opponent_moving=opponent_moving)
    if text is None:
        log.warning("no FIBS reply for %s refusal %r", command, reason.value)
        return replies.NOT_YOUR_TURN
    return text


def _move_error(error: IllegalMoveError, live: LiveMatch, player: int) -> str:
    """§4.5's texts; points in the mover's absolute FIBS numbers (distances stay)."""
    reason = MoveErrorReason(error.reason.value)
    point = _named_point(error, live.match.colour(player))
    return replies.move_error(reason, error.index, None if point == "" else point, error.count)


async def roll(ctx: Context, cmd: ParsedCommand) -> None:
    await _act(ctx, GameCommand.ROLL, lambda m, p: m.roll(p))


async def double(ctx: Context, cmd: ParsedCommand) -> None:
    await _act(ctx, GameCommand.DOUBLE, lambda m, p: m.double(p))


async def move(ctx: Context, cmd: ParsedCommand) -> None:
    live = live_match(ctx)
    colour = live.match.colour(live.player_of(ctx.session.name))
    text = move_text(cmd.args)
    await _act(ctx, GameCommand.MOVE, lambda m, p: m.move(p, parse_moves(text, colour)), text)


async def off(ctx: Context, cmd: ParsedCommand) -> None:
    """Bear off with every die, when that is a legal play (§4.5)."""
    live = live_match(ctx)
    player = live.player_of(ctx.session.name)
    match = live.match
    if match.to_act != player or match.phase is not Phase.MOVE:
        raise Reply(replies.NOT_YOUR_TURN)
    play = next((p for p in match.legal_plays() if all(m.dst == 0 for m in p.moves)), None)
    if play is None or len(play.moves) < len(match.dice.dice if match.dice else ()):
        raise Reply(replies.CANT_BEAR_OFF_WITH_EVERY_NUMBER)
    colour = match.colour(player)
    ctx.session.send(replies.bear_off(format_move(m, colour).split("-")[0] for m in play.moves))
    await _act(ctx, GameCommand.MOVE, lambda m, p: m.move(p, play.moves))


async def accept(ctx: Context, cmd: ParsedCommand) -> None:
    """Take a double or accept a resignation, whichever waits for the caller."""
    live = live_match(ctx)
    if live.match.resignation is not None:
        await _act(ctx, GameCommand.ACCEPT, lambda m, p: m.accept_resignation(p))
    else:
        await _act(ctx, GameCommand.ACCEPT, lambda m, p: m.take(p))


async def reject(ctx: Context, cmd: ParsedCommand) -> None:
    live = live_match(ctx)
    if live.match.resignation is not None:
        await _act(ctx, GameCommand.REJECT, lambda m, p: m.reject_resignation(p))
    else:
        await _act(ctx, GameCommand.REJECT, lambda m, p: m.drop(p))


async def redouble(ctx: Context, cmd: ParsedCommand) -> None:
    """An instant redouble; ``beaver``/``raccoon``/``otter`` name the 1st/2nd/3rd (§4.6)."""
    live = live_match(ctx)
    offer = live.match.offer
    allowed = live.match.may(live.player_of(ctx.session.name), Action.REDOUBLE)
    if cmd.name in replies.REDOUBLE_NAMES and offer is not None and allowed:
        wanted = replies.REDOUBLE_NAMES.index(cmd.name)
        if offer.redoubles != wanted:
            expected = replies.redouble_name(offer.redoubles)
            raise Reply(replies.wrong_redouble_name(cmd.name, expected))
    await _act(ctx, GameCommand.REDOUBLE, lambda m, p: m.redouble(p))


async def resign(ctx: Context, cmd: ParsedCommand) -> None:
    live_match(ctx)
    kind = valid(parse_resign_kind(cmd.args))
    await _act(ctx, GameCommand.RESIGN, lambda m, p: m.resign(p, kind))


async def panic(ctx: Context, cmd: ParsedCommand) -> None:
    """§4.9: the match is stored after every action already, so it is saved right now."""
    live_match(ctx)
    ctx.session.send(replies.PANIC_SAVED)


async def leave(ctx: Context, cmd: ParsedCommand) -> None:
    """Stop the match; it stays saved for a later ``invite`` + ``join`` (§4.9)."""
    await match_lifecycle.leave(ctx.app, ctx.session)


# -- boards and looking (§4.10) ----------------------------------------------------------------


async def board(ctx: Context, cmd: ParsedCommand) -> None:
    """The caller's board, or that of the player they watch, as announced (D197)."""
    session = ctx.session
    live = await announced(ctx.app, session.name)
    if live is not None:
        send_board(session, live, session.name, you=True)
        return
    if session.watching is not None:
        watched = await announced(ctx.app, session.watching)
        if watched is None:
            raise Reply(replies.not_playing_name(session.watching))
        send_board(session, watched, session.watching, you=False)
        return
    raise Reply(replies.NOT_PLAYING)


async def pip(ctx: Context, cmd: ParsedCommand) -> None:
    session = ctx.session
    live = await announced(ctx.app, session.name)
    if live is not None:
        opponent = live.opponent_of(session.name)
        other = ctx.app.presence.get(opponent)
        if not session.toggles["allowpip"]:
            raise Reply(replies.TOGGLE_ALLOWPIP_FIRST)
        if other is not None and not other.toggles["allowpip"]:
            raise Reply(replies.doesnt_allow_pip(opponent))
        p = live.player_of(session.name)
        position = live.match.position
        mine, theirs = position.pips(p), position.pips(1 - p)
        session.send(replies.pipcounts(replies.CALLER_NAME, mine, opponent, theirs))
        return
    watched = await announced(ctx.app, session.watching or "")
    if watched is None:
        raise Reply(replies.NOT_PLAYING_OR_WATCHING)
    position = watched.match.position
    a, b = watched.names
    session.send(replies.pipcounts(a, position.pips(0), b, position.pips(1)))


async def look(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.LOOK_AT_WHO)
    target = await ctx.app.complete(cmd.args[0])
    if target.name == ctx.session.name:
        raise Reply(replies.YOU_LOOK_GREAT)
    live = await announced(ctx.app, target.name)
    if live is None:
        raise Reply(replies.not_playing_name(target.name))
    if any(ctx.session.name in s.blinded for s in players_of(ctx.app, live)):
        raise Reply(replies.doesnt_want_look(target.name))
    send_board(ctx.session, live, target.name, you=False)


async def oldboard(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.OLDBOARD_USAGE)
    if ctx.session.name in ctx.app.matches:
        raise Reply(replies.CANT_WHILE_PLAYING)
    saved = await ctx.app.db.load_match(ctx.session.name, cmd.args[0])
    if saved is None:
        raise Reply(replies.no_saved_match_called(cmd.args[0]))
    live = _restored(ctx, saved)
    send_board(ctx.session, live, ctx.session.name, you=True)


async def oldmoves(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.OLDMOVES_USAGE)
    saved = await ctx.app.db.load_match(ctx.session.name, cmd.args[0])
    if saved is None:
        raise Reply(replies.no_saved_game_with(cmd.args[0]))
    live = _restored(ctx, saved)
    match = live.match
    events = last_game(match)
    ctx.session.send_lines(oldmoves_lines(events, live.names, live.length, match.o_player))


def _restored(ctx: Context, saved: SavedMatch) -> LiveMatch:
    try:
        return LiveMatch.from_saved(saved, ctx.app.dice())
    except SnapshotError:
        raise Reply(replies.SAVED_MATCH_CORRUPT) from None


# -- watching and table talk (§4.11, §4.12) ----------------------------------------------------


async def watch(ctx: Context, cmd: ParsedCommand) -> None:
    if not cmd.args:
        raise Reply(replies.WATCH_WHO)
    await match_lifecycle.watch(ctx.app, ctx.session, cmd.args[0])


async def unwatch(ctx: Context, cmd: ParsedCommand) -> None:
    if ctx.session.watching is None:
        raise Reply(replies.NOT_WATCHING)
    match_lifecycle.stop_watching(ctx.app, ctx.session)


def _table(ctx: Context) -> LiveMatch:
    """The match the caller plays in or watches (kibitz and whisper)."""
    session = ctx.session
    live = ctx.app.matches.get(session.name) or ctx.app.matches.get(session.watching or "")
    if live is None:
        raise Reply(replies.NOT_WATCHING_OR_PLAYING)
    return live


def _listening(ctx: Context, recipients: list[Peer]) -> list[Peer]:
    me = ctx.session.name
    return [p for p in recipients if p.name != me and me not in p.gagged]


async def kibitz(ctx: Context, cmd: ParsedCommand) -> None:
    """To the players and every watcher of the game (§4.12, §6.5)."""
    live = _table(ctx)
    text = cmd.text_after(0)
    presence = ctx.app.presence
    hearers = _listening(ctx, [*players_of(ctx.app, live), *watchers_at(presence, live)])
    for p in hearers:
        presence.send(p, replies.kibitzes(ctx.session.name, text, p.mode))
    ctx.session.send(replies.you_kibitz(text, ctx.session.mode), replies.heard_you(len(hearers)))


async def whisper(ctx: Context, cmd: ParsedCommand) -> None:
    """To the watchers only (§4.12, §6.5)."""
    live = _table(ctx)
    text = cmd.text_after(0)
    presence = ctx.app.presence
    hearers = _listening(ctx, watchers_at(presence, live))
    for p in hearers:
        presence.send(p, replies.whispers(ctx.session.name, text, p.mode))
    ctx.session.send(replies.you_whisper(text, ctx.session.mode), replies.heard_you(len(hearers)))


# -- lists (for ``show``) -------------------------------------------------------------------------


def games_lines(ctx: Context) -> list[str]:
    """``show games`` (§4.14)."""
    seen: set[int] = set()
    lines = [replies.GAMES_HEADER]
    for live in ctx.app.matches.values():
        if id(live) in seen:
            continue
        seen.add(id(live))
        a, b = live.names
        lines.append(replies.game_line(a, b, live.length, *live.match.score))
    return lines


def watchers_lines(ctx: Context) -> list[str]:
    """``show watchers`` (§4.11)."""
    watching = [p for p in ctx.app.presence.users() if p.watching is not None]
    if not watching:
        return [replies.WATCHING_PLAYERS_NONE]
    return [replies.WATCHING_PLAYERS] + [
        replies.is_watching(p.name, p.watching or "") for p in watching
    ]
