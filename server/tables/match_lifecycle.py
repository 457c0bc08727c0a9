"""A match's life at the table: invited, joined (new or resumed), played, left, finished.

The match commands of :mod:`server.handlers.match` parse their arguments and call these;
each says what it refuses by raising :class:`server.errors.Reply`. Every action on a
running match goes through :func:`play` (:func:`server.tables.match_flow.run`, then the clock
restarts or the finished match leaves the table). Watching a player is here too: a
watcher joins and leaves a table like the players do (§4.11).

The caller's own :class:`~server.world.session.Session` (``session``) hears its replies
directly; every other user (the invitee, the inviter, the opponent, the watchers) is a
:class:`~server.world.presence.Peer` of ``app.presence``, reached and changed only through it
(``tests/server/test_presence_seam.py``), so they may be on another node.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from backgammon.errors import SnapshotError
from backgammon.events import CubeOffered, CubeRedoubled, Event, ResignationOffered
from backgammon.match import Match, MatchOptionsError, Phase
from db.errors import TableFencedError
from db.records import ONE_NODE, SavedMatch
from protocol import replies
from protocol.replies import Toggle
from server.config import RulesDefaults
from server.errors import Reply
from server.tables import dice_proof, match_flow
from server.tables.host import TableHost
from server.tables.match_timers import stop_the_clock, watch_the_clock
from server.tables.matches import Invitation, LiveMatch, match_options, watchers_at
from server.tables.sides import OPPOSITE
from server.world import names
from server.world.presence import Audience, Caller, Peer
from server.world.session import Session

log = logging.getLogger(__name__)


# -- invite (§4.3) ------------------------------------------------------------------------


async def invitable(app: TableHost, session: Session, target: Peer) -> SavedMatch | None:
    """Check that ``session`` may invite ``target`` now; their saved match, if any."""
    if target.name == session.name:
        raise Reply(replies.CANT_INVITE_YOURSELF)
    if session.name in app.matches or session.name in app.chouettes:
        raise Reply(replies.ALREADY_PLAYING)
    if target.name in app.matches or target.name in app.chouettes:
        raise Reply(replies.already_playing_with(target.name))
    if not target.toggles[Toggle.READY]:
        raise _refusing_games(target.name)
    return await app.db.load_match(session.name, target.name)


def _refusing_games(name: str) -> Reply:
    """``** <name> is refusing games.``, and in telnet mode how they become ready (D172)."""
    return Reply(replies.refusing_games(name), telnet=(replies.how_to_get_ready(name),))


def resume_invitation(session: Session, target: Peer, saved: SavedMatch | None) -> Invitation:
    """An invitation to resume the saved match (``invite NAME`` without a length)."""
    if saved is None:
        raise Reply(replies.no_saved_match_give_length(target.name))
    return Invitation(session.name, target.name, saved.match_length, resume=True)


def new_invitation(
    app: TableHost,
    session: Session,
    target: Peer,
    length: int | None,
    rules: RulesDefaults | None,
    words: tuple[str, ...],
    saved: SavedMatch | None,
) -> Invitation:
    """An invitation to a new match of ``length`` (None: unlimited) with the ``rules``
    chosen with it (None: fibs.conf's), refused when they do not fit the length;
    ``saved``: the pair's saved match, which the new match replaces."""
    try:
        match_options(length, rules or app.settings.rules, session, target, chosen=bool(words))
    except MatchOptionsError as exc:
        raise Reply(replies.bad_match_rules(str(exc))) from None
    return Invitation(
        session.name,
        target.name,
        length,
        rules=rules,
        rule_words=words,
        replaces_saved=saved is not None,
        server_seed=dice_proof.invitation_seed(app),
    )


def invite(
    app: TableHost, session: Session, target: Peer, invitation: Invitation, saved: SavedMatch | None
) -> None:
    """Send ``invitation`` (§4.3): it replaces ``session``'s earlier one, and switches
    their ``ready`` flag on."""
    if not session.toggles[Toggle.READY]:
        session.toggles[Toggle.READY] = True
        app.presence.who_update(session)
    app.invitations[session.name] = invitation
    bell = replies.BELL if target.toggles[Toggle.BELL] else ""
    if invitation.resume:
        session.send(replies.you_invited_resume(target.name))
        lines = replies.invitation_resume(session.name)
    else:
        session.send(replies.you_invited(target.name, invitation.length))
        lines = replies.invitation(session.name, invitation.length)
        if invitation.rule_words:
            rules_line = replies.match_rules_line(invitation.rule_words)
            session.send(rules_line)
            lines.insert(1, rules_line)
        if saved is not None:
            lines.append(replies.saved_match_warning(saved.match_length))
    lines[-1] += bell
    app.presence.send_lines(target, lines)
    dice = dice_proof.offered(invitation.server_seed)
    if dice is not None:  # after the invitation's own lines: clients read those as before
        session.send(dice)
        app.presence.send(target, dice)
    if target.away is not None:
        session.send("", replies.is_away(target.name, target.away))


# -- join: a new match, a resumed one, the next game (§4.3, §4.8, §4.9) ---------------------


async def join(app: TableHost, session: Caller, name: str) -> None:
    """``session`` accepts ``name``'s invitation: the match starts or resumes."""
    if session.name in app.matches or session.name in app.chouettes:
        raise Reply(replies.CANT_PLAY_TWO)
    inviter = app.presence.get(name)
    if inviter is None:
        try:
            inviter = await names.complete(app.presence, app.db, name)
        except Reply:
            raise Reply(replies.cant_find_player(name)) from None
    if inviter.name in app.matches:
        raise Reply(replies.join_already_playing(inviter.name))
    invitation = app.invitations.get(inviter.name)
    if invitation is None or invitation.invitee != session.name:
        raise Reply(replies.didnt_invite_you(inviter.name))
    if not inviter.toggles[Toggle.READY]:
        raise _refusing_games(inviter.name)
    del app.invitations[inviter.name]
    if session.watching is not None:
        stop_watching(app, session)
    if invitation.resume:
        await _resume(app, inviter, session)
    else:
        await _start(app, inviter, session, invitation)


async def _start(app: TableHost, inviter: Peer, invitee: Caller, invitation: Invitation) -> None:
    """A new match of ``inviter`` and ``invitee`` (the caller), as ``invitation`` says."""
    length = invitation.length
    if invitation.replaces_saved:
        # A new match replaces the saved one. Without one at the invitation there is
        # nothing to delete, and no write: should one have been saved since (the pair
        # played another match meanwhile), the new match's first save replaces it.
        replaced = await app.db.load_match(inviter.name, invitee.name)
        if replaced is not None:
            dice_proof.reveal_replaced(app, (inviter, invitee), replaced)
            await app.db.delete_match(replaced.table_id)
    rules = invitation.rules or app.settings.rules
    try:
        options = match_options(
            length, rules, inviter, invitee, chosen=invitation.rules is not None
        )
    except MatchOptionsError as exc:
        raise Reply(replies.bad_match_rules(str(exc))) from None
    roller = dice_proof.new_roller(app, invitation.server_seed, (inviter, invitee))
    match = Match(options, roller, o_player=app.coin())
    live = LiveMatch((inviter.name, invitee.name), match, started_at=int(app.clock()))
    live.epoch = await claim(app, live.table_id)
    if not _begin(app, live):
        return
    invitee.send(replies.now_playing(inviter.name, length))
    app.presence.send(inviter, replies.player_joined(invitee.name, length))
    if invitation.rule_words:
        rules_line = replies.match_rules_line(invitation.rule_words)
        app.presence.send(inviter, rules_line)
        invitee.send(rules_line)
    dice_proof.tell_commitment(app, live)
    _report(app, live, replies.match_start_report(inviter.name, invitee.name, length))
    await play(app, live, match.start_game)


async def claim(app: TableHost, table_id: str) -> int | None:
    """This node takes ``table_id`` in the database: the fencing token of its saves and
    its end (docs/cluster.md, "Fencing"). A server that is one process has nobody to
    fence out: None, its saves unchecked, nothing written, as before several nodes."""
    if app.node == ONE_NODE:
        return None
    return await app.db.claim_table(table_id, app.node)


async def _resume(app: TableHost, inviter: Peer, invitee: Caller) -> None:
    """The saved match of ``inviter`` and ``invitee`` (the caller) goes on."""
    saved = await app.db.load_match(inviter.name, invitee.name)
    epoch = None
    if saved is not None:
        # This node takes the table, then reads it again: a save by the node that ran it
        # before is in what is read, or refused from now on (docs/cluster.md, "Fencing").
        epoch = await claim(app, saved.table_id)
        saved = await app.db.load_match(inviter.name, invitee.name)
    try:
        if saved is None:
            raise SnapshotError("the saved match is gone")
        live = LiveMatch.from_saved(saved, dice_proof.resumed_roller(app))
        live.epoch = epoch
    except SnapshotError:
        log.warning("saved match of %s and %s is corrupt", inviter.name, invitee.name)
        app.presence.send(inviter, replies.SAVED_MATCH_CORRUPT)
        invitee.send(replies.SAVED_MATCH_CORRUPT)
        if saved is not None:
            await app.db.delete_match(saved.table_id)
        return
    if not _begin(app, live):
        return
    invitee.send(replies.now_playing_resumed(inviter.name))
    app.presence.send(inviter, replies.joined_resumed(invitee.name))
    dice_proof.tell_commitment(app, live)
    _report(app, live, replies.match_resume_report(inviter.name, invitee.name, live.length))
    match = live.match
    # No board after the synopsis (§4.9, D105): FIBS sends none; GammonBot, MatchDog and
    # the bots library ask for one, and GammonBot acts on each board it gets.
    between_games = match.phase is Phase.GAME_OVER
    app.presence.send_lines(inviter, _synopsis(live, inviter.name))
    if between_games:
        app.presence.send(inviter, replies.JOIN_NEXT_GAME)
    invitee.send_lines(_synopsis(live, invitee.name))
    if between_games:
        invitee.send(replies.JOIN_NEXT_GAME)
    # A double or a resignation still waiting for its answer is offered again (D106).
    mover, position = match.to_act, match.position
    rolled = match.phase is Phase.MOVE and match.dice is not None
    await play(app, live, lambda: pending_offer(match), resumed=True)
    if app.matches.get(inviter.name) is not live:  # taken over meanwhile (D370)
        return
    if rolled and mover is not None and match.to_act == mover and match.position == position:
        _remind_to_move(app, live, mover)


def _remind_to_move(app: TableHost, live: LiveMatch, mover: int) -> None:
    """The player whose dice were out when the match was saved is told to move (D175):
    ``Please move <n> pieces.`` (BaldLies asks for its board on it), and in telnet mode
    which dice they had."""
    peer = app.presence.get(live.names[mover])
    match = live.match
    if peer is None or match.dice is None:
        return
    lines = [replies.please_move(match.moves_required())]
    if not peer.clip:
        lines.append(replies.dice_when_saved(match.dice.d1, match.dice.d2))
    app.presence.send_lines(peer, lines)


def _synopsis(live: LiveMatch, name: str) -> list[str]:
    """The resumed match as player ``name`` hears it: whose turn, the length, the score."""
    match = live.match
    p, other = live.player_of(name), OPPOSITE[live.player_of(name)]
    turn = live.names[match.to_act if match.to_act is not None else match.turn]
    return replies.resume_synopsis(
        turn, live.length, name, match.score[p], live.names[other], match.score[other]
    )


def pending_offer(match: Match) -> list[Event]:
    """The offer that waits for an answer in ``match``, as the event that made it.

    A resumed match announces it again (D106): the player who must answer gets the offer
    line (and, for a double, the board with "was doubled" = 1) as when it was made, so
    a client that reconnected since knows what it is answering. Empty when nothing waits.
    """
    resignation = match.resignation
    if resignation is not None:
        return [ResignationOffered(resignation.player, resignation.kind, resignation.points)]
    offer = match.offer
    if match.phase is Phase.DOUBLED and offer is not None:
        if offer.redoubles:
            return [CubeRedoubled(offer.doubler, offer.value, offer.redoubles)]
        return [CubeOffered(offer.doubler, offer.value)]
    return []


def _begin(app: TableHost, live: LiveMatch) -> bool:
    """Both players are now playing ``live``; watchers of either are attached.

    False (and nothing changed) when a player left or started another match while the
    database was being read: the join then simply does not happen.
    """
    presence = app.presence
    players = [presence.get(name) for name in live.names]
    if any(p is None or p.closed or p.name in app.matches for p in players):
        return False
    for name in live.names:
        app.matches[name] = live
        app.invitations.pop(name, None)
    app.table_opened(live)
    for player in players:
        assert player is not None
        presence.start_playing(player, live.opponent_of(player.name))
    live.watchers = {w.name for w in presence.watchers_of(live.names)}
    return True


def _report(app: TableHost, live: LiveMatch, line: str) -> None:
    """A match start/resume line to users with ``report`` on and the players' watchers
    (the same line in both modes: encoded once, docs/performance.md §3)."""
    audience = Audience(
        exclude=frozenset(live.names), toggle_on=Toggle.REPORT, also=frozenset(live.watchers)
    )
    app.presence.broadcast([line], audience)


async def join_next_game(app: TableHost, session: Caller) -> None:
    """``join`` between games: the second player's join starts the next game (§4.8)."""
    live = app.matches.get(session.name)
    if live is None:
        raise Reply(replies.JOIN_WHO)
    match = live.match
    if match.phase is not Phase.GAME_OVER:
        raise Reply(replies.CANT_PLAY_TWO)
    player = live.player_of(session.name)
    live.joined.add(player)
    if len(live.joined) < 2:
        session.send(replies.wait_for_join(live.names[OPPOSITE[player]]))
        return
    live.joined = set()
    await play(app, live, match.start_game)


# -- playing ----------------------------------------------------------------------------------


async def play(
    app: TableHost,
    live: LiveMatch,
    action: Callable[[], list[Event]],
    *,
    resumed: bool = False,
    notice: Callable[[], tuple[int, str]] | None = None,
) -> None:
    """Run one action (:func:`server.tables.match_flow.run`, ``notice`` with it); then the
    finished match leaves the table, or the clock starts for whoever must act next.

    :raises backgammon.errors.BackgammonError: the action is refused; nothing changed.
    """
    try:
        await match_flow.run(app, live, action, resumed=resumed, notice=notice)
    except TableFencedError:
        taken_over(app, live)
        return
    if live.match.phase is Phase.MATCH_OVER:
        dice_proof.reveal(app, live)
        finish(app, live)
    else:
        watch_the_clock(app, live)


def taken_over(app: TableHost, live: LiveMatch) -> None:
    """Another node took ``live``'s table since this one did (its save was refused: the
    table's epoch in the database is higher, docs/cluster.md "Fencing"): this node was
    cut off or paused meanwhile and its players were taken for gone. The match leaves
    this node without a write (the action just made is lost: it was never stored nor
    announced) and its players here are told (D370); wherever they are logged in now,
    the match goes on from what the database has."""
    log.warning(
        "the match of %s and %s (table %s) is run by another node now: dropped here",
        *live.names,
        live.table_id,
    )
    stop_the_clock(live)
    if any(app.matches.get(name) is live for name in live.names):
        app.table_closed(live.table_id)
    presence = app.presence
    for name in live.names:
        if app.matches.get(name) is live:
            del app.matches[name]
        player = presence.get(name)
        # Only this node's own sessions: a player elsewhere is the new owner's to seat.
        if isinstance(player, Session) and not player.closed:
            presence.enter_lobby(player)
            presence.send(player, replies.MATCH_TAKEN_OVER)


# -- leaving (§4.9) ---------------------------------------------------------------------------


async def leave(app: TableHost, session: Caller) -> None:
    """``leave``: stop the match; it stays saved for a later ``invite`` + ``join``."""
    live = app.matches.get(session.name)
    if live is None:
        raise Reply(replies.NO_ONE_TO_LEAVE)
    opponent = live.opponent_of(session.name)
    await suspend(app, live)
    session.send(replies.YOU_TERMINATED)
    other = app.presence.get(opponent)
    left = replies.has_left(session.name)
    if other is not None:
        app.presence.send(other, left)
    # FIBS tells the watchers nothing; here they hear it too (D174).
    for watcher in watchers_at(app.presence, live.names, live.watchers):
        app.presence.send(watcher, left)


async def suspend(app: TableHost, live: LiveMatch) -> None:
    """Stop a running match without ending it (leave, logout, drop, §4.9).

    Every action was stored when it happened, so the stored match is already the
    current one; this only takes the match off the table and the players back to the
    lobby. The callers tell the players why.
    """
    async with live.lock:
        finish(app, live)


async def session_ended(app: TableHost, session: Caller) -> None:
    """A user left the server: save their match, tell the opponent and watchers (§4.9, §4.11)."""
    app.invitations.pop(session.name, None)
    reason = session.logout_text(session.name)
    presence = app.presence
    live = app.matches.get(session.name)
    if live is not None:
        opponent = presence.get(live.opponent_of(session.name))
        await suspend(app, live)
        if opponent is not None:
            if session.replaced:
                line = replies.closed_old_connection(session.name)
            else:
                line = replies.saved_after(reason)
            presence.send(opponent, line)
            # The opponent's watchers hear what the opponent hears (D174); the
            # leaver's own watchers are told below that they watch no more.
            for watcher in watchers_at(presence, live.names, live.watchers):
                if watcher.watching == opponent.name:
                    presence.send(watcher, line)
    for watcher in presence.watchers_of([session.name]):
        presence.stop_watching(watcher, replies.not_watching_anymore(reason))
    if session.watching is not None and not session.replaced:
        # A replaced session's name stays: the login that replaced it may watch this
        # match already, and a name whose user watches no player here is skipped.
        watched = app.matches.get(session.watching)
        if watched is not None:
            watched.watchers.discard(session.name)


def finish(app: TableHost, live: LiveMatch) -> None:
    """The match leaves the table: both players back in the lobby, everyone updated.

    The players and the watchers get their who updates (and any logout notice queued
    meanwhile) on the next turn of the loop, after the lines that end or stop the match,
    instead of waiting for the next batch (D140); the others with the next batch.
    """
    stop_the_clock(live)
    app.table_closed(live.table_id)
    presence = app.presence
    players = []
    for name in live.names:
        app.matches.pop(name, None)
        player = presence.get(name)
        if player is not None:
            # Everyone is leaving when the server stops: no N*N status lines.
            presence.enter_lobby(player, announce=not app.stopping)
            if not app.stopping:
                players.append(player)
    if players:
        presence.flush_soon([*players, *watchers_at(presence, live.names, live.watchers)])


# -- watching (§4.11) -------------------------------------------------------------------------


def stop_watching(app: TableHost, session: Caller, *, quiet: bool = False) -> None:
    """End ``session``'s watching and tell the watched players (§4.11)."""
    name = session.watching
    if name is None:
        return
    presence = app.presence
    live = app.matches.get(name)
    silent = session.visitor  # the players hear of no visitor (D258)
    watched = None if silent else presence.get(name)
    if watched is not None:
        presence.send(watched, replies.stops_watching_you(session.name))
    if live is not None:
        live.watchers.discard(session.name)
        other = None if silent else presence.get(live.opponent_of(name))
        if other is not None:
            presence.send(other, replies.stops_watching(session.name, name))
    session.enter_lobby()
    if not quiet:
        session.send(replies.you_stop_watching(name))
    presence.who_update(session)


async def watch(app: TableHost, session: Caller, name: str) -> None:
    """``session`` starts watching ``name`` and, when ``name`` plays, their match (§4.11):
    a watcher of someone else stops that first, and a player's ``blind`` keeps them out."""
    if session.name in app.matches or session.name in app.chouettes:
        raise Reply(replies.CANT_WATCH_WHILE_PLAYING)
    presence = app.presence
    target = presence.get(name)
    if target is None:
        try:
            target = await names.complete(app.presence, app.db, name)
        except Reply:
            raise Reply(replies.no_one_there(name)) from None
    if target.name == session.name:
        raise Reply(replies.USE_A_MIRROR)
    live = app.matches.get(target.name)
    players = players_of(app, live) if live is not None else [target]
    if any(session.name in p.blinded for p in players):
        raise Reply(replies.doesnt_want_watch(target.name))
    if session.watching is not None:
        session.send(replies.stop_watching_first(session.watching))
        stop_watching(app, session, quiet=True)
    session.start_watching(target.name)
    session.send(replies.now_watching(target.name))
    silent = session.visitor  # the players hear of no visitor (D258)
    if not silent:
        presence.send(target, replies.is_watching_you(session.name))
    chouette = app.chouettes.get(target.name)
    if chouette is not None:  # the table's lines and boards from now (docs/chouette.md)
        style = session.settings.boardstyle
        session.send_lines(chouette.board_for(session.name, style, watching=target.name))
    elif live is None:
        session.send(replies.nothing_interesting(target.name))
    else:
        live.watchers.add(session.name)
        other = None if silent else presence.get(live.opponent_of(target.name))
        if other is not None:
            presence.send(other, replies.starts_watching(session.name, target.name))
        send_board(session, live, target.name, you=False)
    presence.who_update(session)


def players_of(app: TableHost, live: LiveMatch) -> list[Peer]:
    """``live``'s players who are logged in."""
    return [p for p in (app.presence.get(n) for n in live.names) if p is not None]


async def announced(app: TableHost, name: str) -> LiveMatch | None:
    """``name``'s running match as its players have been told it (None: no match).

    An action changes the match in memory, awaits its save under the match's lock and
    only then sends its lines (:func:`server.tables.match_flow.run`): a board or pip count read
    during that save would show what nobody has been told yet, a roll before its
    ``You roll`` (GammonBot acts on such a board before the lines that lead to it). FIBS
    handles one command at a time and sends an action's lines at once, so a board always
    shows an announced state (D197). This waits for the action under way, then looks
    again (the match may have ended meanwhile); the caller renders before its next
    ``await``, while no action can have begun.
    """
    while (live := app.matches.get(name)) is not None and live.lock.locked():
        async with live.lock:
            pass
    return live


def send_board(session: Caller, live: LiveMatch, name: str, *, you: bool) -> None:
    """``session``'s board of ``live`` now, seen from ``name``'s side; ``you``: the viewer
    is that player (the one renderer: :meth:`server.tables.match_boards.BoardFrame.lines`)."""
    frame = live.board_frame()
    session.send_lines(frame.lines(live.player_of(name), session.settings.boardstyle, you=you))
