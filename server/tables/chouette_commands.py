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

Every action is saved before it is announced (D362; the core's JSON without its events,
with the players at the table), and each finished game's results are stored with that
save (D363). A player whose connection ends stays at the table, away (D361): their cube
follows the captain, the next member plays for an absent captain, an absent box holds
the table; ``chouette return`` brings them back, restoring the table from the database
when it is not running (nobody at it was present, or the server restarted). The saved
state keeps the game's dice (its seeds and the dice drawn) and the next game's seed, so a
restored table rolls the dice it would have rolled and its game still verifies; a
returning player is told the game's dice and the next game's commitment. The timers
of :mod:`server.tables.chouette_timers` act through :func:`run` like a player (D360).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, assert_never

from backgammon.board import Colour
from backgammon.chouette import Chouette
from backgammon.chouette_events import ChouetteEvent, ChouetteGameFinished, PartnerShare
from backgammon.chouette_seats import Seats
from backgammon.chouette_settings import ChouetteSettings
from backgammon.chouette_snapshot import chouette_from_json, chouette_to_json
from backgammon.chouette_state import BOX, ChouetteAction, ChouettePhase
from backgammon.errors import ActionError, IllegalMoveError, MoveSyntaxError, SnapshotError
from backgammon.moves import Move
from backgammon.notation import parse_moves
from db.errors import DatabaseOutage, TableFencedError
from protocol import replies
from protocol.chouette_view import Where, settings_words, show_lines
from protocol.replies import GameCommand, MoveErrorReason, Toggle
from server.errors import Reply
from server.tables import dice_proof
from server.tables.chouette_announce import Movers, Told, announce
from server.tables.chouette_table import LiveChouette
from server.tables.chouette_timers import ChouetteClock, Timed, stage
from server.tables.host import TableHost
from server.tables.match_commands import command_name, named_point
from server.tables.match_lifecycle import claim
from server.tables.seam import (
    Accept,
    BearOff,
    ChouetteCommand,
    ChouetteDelegate,
    ChouetteInvite,
    ChouetteJoin,
    ChouetteLeave,
    ChouetteOpen,
    ChouetteRecord,
    ChouetteReturn,
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
from server.world.session import Session

log = logging.getLogger(__name__)

Action = Callable[[Chouette], Sequence[Told]]
Results = tuple[int, list[tuple[str, str, int]]]
"""A finished game: its number, what each player won in it and where they sat (D363)."""

_TIMED: set[asyncio.Task[None]] = set()
"""The timers' actions under way (kept from the garbage collector)."""


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
            await open_table(host, session, settings)
        case ChouetteInvite(name):
            invite(host, session, name)
        case ChouetteJoin(name):
            await join(host, session, name)
        case ChouetteStart():
            table = table_of(host, session.name)
            start = lambda c: dice_proof.start_chouette_game(host, table, c.start_game)  # noqa: E731
            await run(host, table, start, None)
        case ChouetteLeave():
            await leave(host, session.name)
        case ChouetteShow(name, clip):
            table = table_of(host, session.name if name is None else name)
            session.send_lines(show_lines(table.host, table.core, clip=clip))
        case ChouetteDelegate(proxy):
            me = session.name
            await run(host, table_of(host, me), lambda c: c.delegate(me, proxy), None)
        case ChouetteReturn(at_login):
            await come_back(host, session, at_login=at_login)
        case ChouetteRecord(name):
            await record(host, session, name)
        case TeamTalk(text):
            team_talk(host, session, text)
        case _:
            assert_never(command)


# -- the table ----------------------------------------------------------------------------


async def _free(host: TableHost, name: str) -> None:
    """``name`` neither plays a match nor sits at a chouette, running or saved (D361)."""
    if name in host.matches:
        raise Reply(replies.ALREADY_PLAYING)
    if name in host.chouettes:
        raise Reply(replies.ALREADY_AT_CHOUETTE)
    if await host.db.load_chouette_of(name) is not None:
        raise Reply(replies.CHOUETTE_SAVED_TABLE)


async def open_table(host: TableHost, session: Caller, settings: ChouetteSettings) -> None:
    """``chouette open``: a new table with the settings, the opener at it (D303)."""
    await _free(host, session.name)
    table = LiveChouette(session.name, Chouette(settings, dice_proof.resumed_roller(host)))
    table.next_seed = dice_proof.invitation_seed(host)
    table.core.join(session.name)
    table.epoch = await claim(host, table.table_id)  # this node runs it (D439)
    host.chouettes[session.name] = table
    async with table.lock:
        if not await _save(host, table, None):
            return
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


async def join(host: TableHost, session: Caller, name: str) -> None:
    """``chouette join``: accept the invitation to the table ``name`` sits at (D304)."""
    me = session.name
    await _free(host, me)
    table = host.chouettes.get(name)
    if table is None or me not in table.invited:
        raise Reply(replies.no_chouette_invitation(name))

    def sit_down(core: Chouette) -> list[ChouetteEvent]:
        events = core.join(me)
        table.invited.discard(me)
        host.chouettes[me] = table
        return events

    await run(host, table, sit_down, None, then=lambda: _tell_next(session, table))


def _tell_next(session: Caller, table: LiveChouette) -> None:
    """The commitment to the next game's dice, to a player who opens, joins or returns
    (D352)."""
    line = dice_proof.chouette_next(table)
    if line is not None:
        session.send(line)


async def leave(host: TableHost, name: str) -> None:
    """``name`` leaves their table (§8): mid-game their cube is resigned or follows the
    captain as the table's setting says; the others play on. A saved table is restored
    to be left (D361); the last to leave deletes it and is told the seed of the game
    it leaves, which cannot go on (D354)."""
    table = host.chouettes.get(name) or await _restored(host, name)
    async with table.lock:
        seats = table.core.seats
        before = _movers(table)
        events = _core(table, lambda c: c.leave(name), None)
        del host.chouettes[name]
        peer = host.presence.get(name)
        if peer is not None:
            host.presence.enter_lobby(peer)
            host.presence.send(peer, replies.chouette_leaves(name))
        if table.present():
            events = _with_next_game(host, table, events)
        if not await _save(host, table, _results(events, seats)):
            return
        if not table.present():
            table.invited.clear()
            _close(table)
            host.chouettes_changed()
            if peer is not None and table.dice is not None:  # the last to leave: over (D354)
                host.presence.send(peer, dice_proof.chouette_reveal(table))
            return
        _announce(host, table, events, before)
    _unload_if_nobody_is_present(host, table)


async def away(host: TableHost, name: str) -> None:
    """``name``'s session ended (D361): before the first game that is a leave; after it
    they stay at the table, away, and a table where nobody is left present leaves this
    process (it stays saved, for ``chouette return``)."""
    table = host.chouettes.get(name)
    if table is None:
        return
    if table.core.seats is None:
        await leave(host, name)
        return
    await run(host, table, lambda c: c.set_present(name, False), None)
    _unload_if_nobody_is_present(host, table)


def _unload_if_nobody_is_present(host: TableHost, table: LiveChouette) -> None:
    """A table whose players are all away leaves this process (it stays saved)."""
    core = table.core
    if all(p in core.absent for p in table.present()):
        for player in table.present():
            if host.chouettes.get(player) is table:
                del host.chouettes[player]
        _close(table)
        host.chouettes_changed()


async def come_back(host: TableHost, session: Caller, *, at_login: bool = False) -> None:
    """``chouette return`` (D361), and the same at a login (D410): the caller is back at
    their table, restored from the database when it is not running, and is shown it.

    At a login nothing is said when the user sits at no table (or the database cannot say
    now), and a login that replaced a session still at the table (its seat kept, D361) is
    seated in its place and shown the table without a word to the others."""
    me = session.name
    table = host.chouettes.get(me)
    if table is None:
        if at_login and (me in host.matches or await host.db.load_chouette_of(me) is None):
            return  # a match's player (a replaced session's) or nobody at a table
        if me in host.matches:
            raise Reply(replies.ALREADY_PLAYING)
        table = await _restored(host, me)
    if me not in table.core.absent:
        if not at_login:
            raise Reply(replies.CHOUETTE_NOT_AWAY)
        async with table.lock:
            _seat_states(host, table)
            session.send_lines(table.board_for(me, session.settings.boardstyle))
            _tell_returner(session, table)
        return
    tell = lambda: _tell_returner(session, table)  # noqa: E731
    await run(host, table, lambda c: c.set_present(me, True), None, then=tell)


def _tell_returner(session: Caller, table: LiveChouette) -> None:
    """What a returning player is told after the board (D353, D410): the game under way's
    dice, the next game's commitment, the table's rules and its ``show chouette``."""
    line = dice_proof.chouette_game_dice(table)
    if line is not None:
        session.send(line)
    _tell_next(session, table)
    session.send(replies.chouette_rules(settings_words(table.core.settings)))
    session.send_lines(show_lines(table.host, table.core, clip=session.clip))


async def _restored(host: TableHost, name: str) -> LiveChouette:
    """``name``'s saved table, running again with everyone at it away (D361) and its
    dice as they were saved; the players not at another table of this process are
    seated at it."""
    saved = await host.db.load_chouette_of(name)
    if saved is None:
        raise Reply(replies.NOT_AT_CHOUETTE)
    table = _running(host, saved.table_id)
    if table is not None:
        return table
    # This node takes the table, then reads it again: a save by the node that ran it
    # before is in what is read, or refused from now on (D439, as for a match).
    epoch = await claim(host, saved.table_id)
    saved = await host.db.load_chouette_of(name)
    if saved is None:
        raise Reply(replies.NOT_AT_CHOUETTE)
    table = _running(host, saved.table_id)
    if table is not None:  # restored meanwhile by another command here: its claim, or ours
        if epoch is not None and (table.epoch is None or table.epoch < epoch):
            table.epoch = epoch
        return table
    data = json.loads(saved.snapshot)
    roller = dice_proof.resumed_roller(host)
    try:
        core = chouette_from_json(data, roller)
        data["absent"] = [p for p in core.players if core.at_table(p)]
        core = chouette_from_json(data, roller)
        table = LiveChouette(saved.host, core, table_id=saved.table_id, epoch=epoch)
        dice_proof.chouette_restore(host, table, data)
    except SnapshotError as error:
        log.warning("saved chouette %s not restored: %s", saved.table_id, error)
        raise Reply(replies.SAVED_MATCH_CORRUPT) from None
    for player in table.present():
        if player not in host.chouettes and player not in host.matches:
            host.chouettes[player] = table
    return table


def _running(host: TableHost, table_id: str) -> LiveChouette | None:
    """The table ``table_id`` if it runs in this process."""
    running = {id(t): t for t in host.chouettes.values()}.values()
    return next((t for t in running if t.table_id == table_id), None)


async def record(host: TableHost, session: Caller, name: str | None) -> None:
    """``chouette record [NAME]`` (D363): the caller's table's standings over its
    finished games, or ``NAME``'s chouette games over every table."""
    if name is not None:
        mine = await host.db.chouette_record(name)
        session.send(replies.chouette_player_record(name, mine.tables, mine.games, mine.points))
        return
    table = table_of(host, session.name)
    standings = await host.db.chouette_standings(table.table_id)
    session.send(
        replies.chouette_record_heading(table.host),
        *(replies.chouette_record_line(s.name, s.games, s.points) for s in standings),
    )


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
    host.chouettes_changed()  # before the lines: another node routes its members here (D438)


# -- the game -----------------------------------------------------------------------------


async def act(host: TableHost, session: Caller, command: TableCommand) -> None:
    """A game action at the caller's chouette (D306)."""
    table = table_of(host, session.name)
    core = table.core
    me = session.name
    action = _action(core, me, command)
    try:
        await run(host, table, action, command_name(command))
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


async def run(
    host: TableHost,
    table: LiveChouette,
    action: Action,
    named: GameCommand | None,
    *,
    at: tuple[Any, ...] | None = None,
    then: Callable[[], None] | None = None,
) -> None:
    """Apply ``action`` to the table's core, save it and announce it, the next game
    included when it ended one; a refusal answers its text (D309). ``at``: a timer's
    :func:`stage`; nothing happens when the table is no longer there. ``then``: what
    the caller is told after the announcement, still under the table's lock."""
    async with table.lock:
        if at is not None and stage(table.core) != at:
            return
        seats = table.core.seats
        before = _movers(table)
        events = _core(table, action, named)
        if not events:  # nothing changed (a delegation as it was)
            return
        events = _with_next_game(host, table, events)
        if not await _save(host, table, _results(events, seats)):
            return
        _announce(host, table, events, before)
        if then is not None:
            then()


async def _save(host: TableHost, table: LiveChouette, results: Results | None) -> bool:
    """Store the table as it is now (deleted when nobody is at it), with the results
    of the game it finished (D362, D363). Should the database fail for the moment, play
    goes on (logged, D296): the next save catches up. False: another node took the
    table since this one did (D439), which no longer runs it (:func:`taken_over`)."""
    core = table.core
    players = table.present()
    snapshot = json.dumps(chouette_to_json(core, events=False) | dice_proof.chouette_saved(table))
    try:
        await host.db.save_chouette(
            table.table_id, table.host, players, snapshot, finished=results, epoch=table.epoch
        )
    except DatabaseOutage as error:
        host.outage_log.warning("saving a chouette table", error)
    except TableFencedError:
        taken_over(host, table)
        return False
    return True


def taken_over(host: TableHost, table: LiveChouette) -> None:
    """Another node took ``table`` since this one did (D439): this node was cut off or
    paused meanwhile and its players were taken for gone. The table leaves this node
    without a write (the action just made is lost: never stored nor announced), and its
    players logged in here are told; wherever they log in now, they are back at the
    table as the database has it (D410)."""
    log.warning("the chouette %s is run by another node now: dropped here", table.table_id)
    _close(table)
    presence = host.presence
    for player in table.core.players:
        if host.chouettes.get(player) is not table:
            continue
        del host.chouettes[player]
        peer = presence.get(player)
        # Only this node's own sessions: a player elsewhere is the new owner's to seat.
        if isinstance(peer, Session) and not peer.closed:
            presence.enter_lobby(peer)
            presence.send(peer, replies.CHOUETTE_TAKEN_OVER)
    host.chouettes_changed()


async def hand_over(host: TableHost) -> None:
    """A drained node's users are gone (D446): each chouette still running here (its
    players present are all at other nodes) is saved once more (every action was saved,
    D362; this catches up a save an outage refused) and leaves this node, as a lost
    node's tables do (D440): the players elsewhere are told by their nodes, and
    ``chouette return`` restores the table at theirs, which takes it (D439)."""
    running = {id(t): t for t in host.chouettes.values()}.values()
    for table in list(running):
        async with table.lock:
            if not await _save(host, table, None):
                continue  # another node runs it already: dropped (taken_over)
            log.info("the chouette %s leaves this drained node", table.table_id)
            _close(table)
            for player in table.core.players:
                if host.chouettes.get(player) is table:
                    del host.chouettes[player]
            host.chouettes_changed()


def _results(events: Sequence[Told], seats: Seats | None) -> Results | None:
    """Each player's result in the game ``events`` finished, if any (D363): the
    members' settlements, the box's net after its partner's share, the partner's share."""
    finished = next((e for e in events if isinstance(e, ChouetteGameFinished)), None)
    if finished is None or seats is None:
        return None
    share = sum(e.points for e in events if isinstance(e, PartnerShare))
    results = [(seats.box, Where.BOX.value, finished.box_net - share)]
    if seats.partner is not None:
        results.append((seats.partner, Where.PARTNER.value, share))
    results += [(member, Where.LINE.value, points) for member, points in finished.results]
    return finished.game, results


def _clock(host: TableHost, table: LiveChouette) -> ChouetteClock:
    """The table's timers (D360), made at its first announcement."""
    if table.clock is None:

        def ring(timed: Timed, at: tuple[Any, ...]) -> None:
            task = asyncio.get_running_loop().create_task(_timed(host, table, timed, at))
            _TIMED.add(task)
            task.add_done_callback(_TIMED.discard)

        table.clock = ChouetteClock(host.timer, ring, host.settings.chouette_answer_time)
    return table.clock


def _close(table: LiveChouette) -> None:
    """The table leaves this process: no timer runs for it."""
    if table.clock is not None:
        table.clock.stop()


async def _timed(host: TableHost, table: LiveChouette, timed: Timed, at: tuple[Any, ...]) -> None:
    """A timer ran out (D360): the team's autoroll, or the default answer."""
    action: Action
    if timed is Timed.ROLL:
        action = lambda c: c.roll(c.acting_captain() or "")  # noqa: E731
    else:
        action = lambda c: c.time_out()  # noqa: E731
    try:
        await run(host, table, action, None, at=at)
    except Reply:
        pass  # the decision was taken meanwhile
    except Exception:
        log.exception("a chouette timer of %s failed", table.host)


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
    _clock(host, table).update(table.core)


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
