"""The chouette tables' commands, from the command as data to the core and back.

The owner's side of :meth:`server.tables.seam.Tables.chouette` (open, invite, join,
start, leave, show, team talk) and of :meth:`~server.tables.seam.Tables.act` for a
player at a chouette (roll, move, double, accept, reject, beaver, resign): the caller's
table is looked up in :attr:`server.tables.host.TableHost.chouettes`, the command
becomes the core's action (:class:`backgammon.chouette.Chouette`), the core's
refusals become :func:`protocol.replies.chouette_refusal`'s texts (D309), and what
happened is announced (:mod:`server.tables.chouette_announce`). A finished game is
followed by the next one at once while two players sit at the table (D305). Every game's
dice are committed before it and revealed after it (D352-D354,
:mod:`server.tables.dice_proof`).

The tables are not saved yet (issue 31 item 5): a table lives while someone sits at it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import assert_never

from backgammon.board import Colour
from backgammon.chouette import Chouette
from backgammon.chouette_events import ChouetteEvent, ChouetteGameFinished
from backgammon.chouette_settings import ChouetteSettings
from backgammon.chouette_state import BOX, ChouetteAction, ChouettePhase
from backgammon.errors import ActionError, IllegalMoveError, MoveSyntaxError
from backgammon.moves import Move
from backgammon.notation import parse_moves
from protocol import replies
from protocol.chouette_view import settings_words, show_lines
from protocol.replies import GameCommand, MoveErrorReason, Toggle
from server.errors import Reply
from server.tables import dice_proof
from server.tables.chouette_announce import Movers, Told, announce
from server.tables.chouette_table import LiveChouette
from server.tables.host import TableHost
from server.tables.match_commands import command_name, named_point
from server.tables.seam import (
    Accept,
    BearOff,
    ChouetteCommand,
    ChouetteDelegate,
    ChouetteInvite,
    ChouetteJoin,
    ChouetteLeave,
    ChouetteOpen,
    ChouetteShow,
    ChouetteStart,
    Double,
    Moves,
    Redouble,
    Reject,
    Resign,
    Roll,
    TableCommand,
    TeamTalk,
)
from server.world.presence import Caller

Action = Callable[[Chouette], Sequence[Told]]


def table_of(host: TableHost, name: str) -> LiveChouette:
    """The chouette ``name`` sits at, or ``** You are not at a chouette table.``."""
    table = host.chouettes.get(name)
    if table is None:
        raise Reply(replies.NOT_AT_CHOUETTE)
    return table


async def command(host: TableHost, session: Caller, command: ChouetteCommand) -> None:
    """Run one of the chouette's own commands for ``session``."""
    match command:
        case ChouetteOpen(settings):
            open_table(host, session, settings)
        case ChouetteInvite(name):
            invite(host, session, name)
        case ChouetteJoin(name):
            join(host, session, name)
        case ChouetteStart():
            table = table_of(host, session.name)
            run(host, table, lambda c: dice_proof.start_chouette_game(host, table, c.start_game))
        case ChouetteLeave():
            leave(host, session.name)
        case ChouetteShow(name):
            table = table_of(host, session.name if name is None else name)
            session.send_lines(show_lines(table.host, table.core, clip=session.clip))
        case ChouetteDelegate(proxy):
            me = session.name
            run(host, table_of(host, me), lambda c: c.delegate(me, proxy), None)
        case TeamTalk(text):
            team_talk(host, session, text)
        case _:
            assert_never(command)


# -- the table ----------------------------------------------------------------------------


def _free(host: TableHost, name: str) -> None:
    """``name`` neither plays a match nor sits at a chouette."""
    if name in host.matches:
        raise Reply(replies.ALREADY_PLAYING)
    if name in host.chouettes:
        raise Reply(replies.ALREADY_AT_CHOUETTE)


def open_table(host: TableHost, session: Caller, settings: ChouetteSettings) -> None:
    """``chouette open``: a new table with the settings, the opener at it (D303)."""
    _free(host, session.name)
    table = LiveChouette(session.name, Chouette(settings, dice_proof.resumed_roller(host)))
    table.next_seed = dice_proof.invitation_seed(host)
    table.core.join(session.name)
    host.chouettes[session.name] = table
    session.send(replies.CHOUETTE_OPENED, replies.chouette_rules(settings_words(settings)))
    _tell_next(session, table)
    _seat_states(host, table)


def invite(host: TableHost, session: Caller, name: str) -> None:
    """``chouette invite``: ``name`` may join the caller's table (D304)."""
    table = table_of(host, session.name)
    presence = host.presence
    target = presence.get(name)
    if target is None:
        raise Reply(replies.no_one_there(name))
    if name == session.name or name in table.present():
        raise Reply(replies.ALREADY_AT_CHOUETTE)
    if name in host.matches or name in host.chouettes:
        raise Reply(replies.already_playing_with(name))
    if not target.toggles[Toggle.READY]:
        raise Reply(replies.refusing_games(name))
    table.invited.add(name)
    words = settings_words(table.core.settings)
    presence.send(
        target,
        replies.chouette_invites_you(session.name),
        replies.chouette_rules(words),
        replies.chouette_join_hint(session.name),
    )
    session.send(replies.you_invite_to_chouette(name))


def join(host: TableHost, session: Caller, name: str) -> None:
    """``chouette join``: accept the invitation to the table ``name`` sits at (D304)."""
    _free(host, session.name)
    table = host.chouettes.get(name)
    if table is None or session.name not in table.invited:
        raise Reply(replies.no_chouette_invitation(name))
    me = session.name
    before = _movers(table)
    events = _core(table, lambda c: c.join(me), None)
    table.invited.discard(me)
    host.chouettes[me] = table
    _announce(host, table, events, before)
    _tell_next(session, table)


def _tell_next(session: Caller, table: LiveChouette) -> None:
    """The commitment to the next game's dice, to a player who opens or joins (D352)."""
    line = dice_proof.chouette_next(table)
    if line is not None:
        session.send(line)


def leave(host: TableHost, name: str) -> None:
    """``name`` leaves their table (§8): mid-game their cube is resigned or follows the
    captain as the table's setting says; the others play on. Also when their session
    ends (the table is not saved yet)."""
    table = table_of(host, name)
    before = _movers(table)
    events = _core(table, lambda c: c.leave(name), None)
    del host.chouettes[name]
    peer = host.presence.get(name)
    if peer is not None:
        host.presence.enter_lobby(peer)
        host.presence.send(peer, replies.chouette_leaves(name))
    if not table.present():
        table.invited.clear()
        if peer is not None and table.dice is not None:  # the last to leave: it is over
            host.presence.send(peer, dice_proof.chouette_reveal(table))
        return
    _announce(host, table, _with_next_game(host, table, events), before)


def team_talk(host: TableHost, session: Caller, text: str) -> None:
    """Team talk (D310): to the other members in the game, never to the box; refused to
    the box and as the consultation setting says (§6)."""
    table = table_of(host, session.name)
    core = table.core
    seats = core.seats
    if seats is not None and session.name in (seats.box, seats.partner):
        raise Reply(replies.CHOUETTE_TEAM_TALK_BOX)
    if not core.may_consult(session.name):
        raise Reply(replies.CHOUETTE_TEAM_TALK_REFUSED)
    presence = host.presence
    for member in core.members_in_game():
        peer = presence.get(member)
        if member != session.name and peer is not None and session.name not in peer.gagged:
            presence.send(peer, replies.team_talks(session.name, text))
    session.send(replies.you_team_talk(text))


def _seat_states(host: TableHost, table: LiveChouette) -> None:
    """Everyone at the table plays against their counterpart for ``who`` (D312)."""
    presence = host.presence
    for name in table.present():
        peer = presence.get(name)
        if peer is not None and peer.opponent != table.counterpart(name):
            presence.start_playing(peer, table.counterpart(name))


# -- the game -----------------------------------------------------------------------------


def act(host: TableHost, session: Caller, command: TableCommand) -> None:
    """A game action at the caller's chouette (D306)."""
    table = table_of(host, session.name)
    core = table.core
    me = session.name
    action = _action(core, me, command)
    try:
        run(host, table, action, command_name(command))
    except IllegalMoveError as error:
        reason = MoveErrorReason(error.reason.value)
        colour = Colour.O if core.turn == BOX else Colour.X
        point = named_point(error, colour)
        raise Reply(
            replies.move_error(reason, error.index, None if point == "" else point, error.count)
        ) from None
    except MoveSyntaxError as error:
        if error.incomplete:
            count = core.moves_required()
            raise Reply(replies.move_error(MoveErrorReason.TOO_FEW, count=count)) from None
        raise Reply(replies.move_error(MoveErrorReason.BAD_WORD, error.index)) from None


def run(
    host: TableHost, table: LiveChouette, action: Action, named: GameCommand | None = None
) -> None:
    """Apply ``action`` to the table's core and announce it, the next game included
    when it ended one; a refusal answers its text (D309)."""
    before = _movers(table)
    events = _core(table, action, named)
    if not events:  # nothing changed (a delegation as it was)
        return
    _announce(host, table, _with_next_game(host, table, events), before)


def _core(table: LiveChouette, action: Action, named: GameCommand | None) -> Sequence[Told]:
    try:
        return action(table.core)
    except ActionError as error:
        raise Reply(replies.chouette_refusal(named, error.reason)) from None


def _with_next_game(host: TableHost, table: LiveChouette, events: Sequence[Told]) -> list[Told]:
    """``events``, the reveal of a game's dice after its end (D354) and the next game,
    at once after one ended while it may start (D305)."""
    core = table.core
    told = dice_proof.chouette_revealed(table, events)
    ended = any(isinstance(e, ChouetteGameFinished) for e in events)
    if ended and ChouetteAction.START_GAME in core.allowed(core.players[0]):
        told += dice_proof.start_chouette_game(host, table, core.start_game)
    return told


def _movers(table: LiveChouette) -> Movers:
    """Who plays for each side now (the box, the acting captain)."""
    return table.core.box, table.core.acting_captain()


def _announce(host: TableHost, table: LiveChouette, events: Sequence[Told], before: Movers) -> None:
    _seat_states(host, table)
    announce(host.presence, table, events, before)


def _action(core: Chouette, me: str, command: TableCommand) -> Action:
    """The core's action for ``command`` by ``me`` (D306)."""
    box = core.box == me
    match command:
        case Roll():
            return lambda c: c.roll(me)
        case Double(members):
            if box:
                return lambda c: c.box_double(me, members or None)
            if not members:
                return lambda c: c.double(me)
            return _each(members, lambda c, m: c.double(me, m), lambda c: c.doubles_for(me))
        case Moves(text):
            return lambda c: c.move(me, parse_moves(text, Colour.O if c.turn == BOX else Colour.X))
        case BearOff():
            return lambda c: c.move(me, _bear_off(c, me))
        case Accept(members):
            return _answer(core, me, members, accept=True)
        case Reject(members):
            return _answer(core, me, members, accept=False)
        case Redouble(name):  # the box's raccoon, a member's beaver (§2); no other
            if box and name == replies.REDOUBLE_NAMES[1]:
                return lambda c: c.raccoon(me, c.raccoons_possible())
            if not box and name == replies.REDOUBLE_NAMES[0]:
                return lambda c: c.beaver(me)
            raise Reply(replies.NOT_ALLOWED_TO_REDOUBLE)
        case Resign(kind):
            if box:
                return lambda c: c.resign(me, c.acting_captain() or "", kind)
            return lambda c: c.resign(me, me, kind)
        case _:
            assert_never(command)


def _answer(core: Chouette, me: str, members: tuple[str, ...], *, accept: bool) -> Action:
    """``accept``/``reject`` at a chouette: a resignation, the partner's seat, the box's
    choice of an automatic double on an opening tie, the box's answer to the team's
    doubles (all, or the named accepted/rejected), a member's
    answer to the box's double (their own cubes, or the named)."""
    if core.resignation is not None and (ChouetteAction.ACCEPT_RESIGNATION in core.allowed(me)):
        return (
            (lambda c: c.accept_resignation(me)) if accept else (lambda c: c.reject_resignation(me))
        )
    if core.phase is ChouettePhase.WAITING and core.partner_offer == me:
        return lambda c: c.answer_partner(me, accept)
    if core.phase is ChouettePhase.AUTO_DOUBLE:
        return lambda c: c.auto_double(me, accept)
    if core.box == me and core.phase is ChouettePhase.BOX_ANSWER:
        doubled = tuple(core.team_doubles)
        named = members or doubled
        chosen = [m for m in doubled if (m in named) == accept]
        return lambda c: c.answer_doubles(me, chosen)
    answerable = core.answers_for(me)
    if not answerable:
        return lambda c: c.take(me) if accept else c.drop(me)
    chosen_members = members or answerable
    if accept:
        return _each(chosen_members, lambda c, m: c.take(me, m), lambda c: c.answers_for(me))
    return _each(chosen_members, lambda c, m: c.drop(me, m), lambda c: c.answers_for(me))


def _each(
    members: tuple[str, ...],
    one: Callable[[Chouette, str], list[ChouetteEvent]],
    allowed: Callable[[Chouette], tuple[str, ...]],
) -> Action:
    """One action per member, in order, all or none: a member not ``allowed`` first
    gets the core's refusal, before anything changed."""

    def run_all(core: Chouette) -> list[ChouetteEvent]:
        refused = [m for m in members if m not in allowed(core)]
        if refused:
            return one(core, refused[0])
        events: list[ChouetteEvent] = []
        for member in members:
            events += one(core, member)
        return events

    return run_all


def _bear_off(core: Chouette, me: str) -> tuple[Move, ...]:
    """``off``: the play that bears every die off, when that is a legal play (§4.5)."""
    if core.mover() != me or core.phase is not ChouettePhase.MOVE:
        raise Reply(replies.NOT_YOUR_TURN)
    play = next((p for p in core.legal_plays() if all(m.dst == 0 for m in p.moves)), None)
    dice = core.dice
    if play is None or dice is None or len(play.moves) < len(dice.dice):
        raise Reply(replies.CANT_BEAR_OFF_WITH_EVERY_NUMBER)
    return play.moves
