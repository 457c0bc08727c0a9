"""A match's life at the table: invited, joined (new or resumed), played, left, finished.

The match commands of :mod:`server.handlers.match` parse their arguments and call these;
each says what it refuses by raising :class:`server.errors.Reply`. Every action on a
running match goes through :func:`play` (:func:`server.match_flow.run`, then the clock
restarts or the finished match leaves the table). Watching a player is here too: a
watcher joins and leaves a table like the players do (§4.11).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from backgammon.errors import SnapshotError
from backgammon.events import CubeOffered, CubeRedoubled, Event, ResignationOffered
from backgammon.match import Match, MatchOptionsError, Phase
from db.records import SavedMatch
from protocol import replies
from server import match_flow
from server.app import App
from server.config import RulesDefaults
from server.errors import Reply
from server.match_timers import stop_the_clock, watch_the_clock
from server.matches import Invitation, LiveMatch, match_options
from server.output import Payload
from server.session import Session

log = logging.getLogger(__name__)


# -- invite (§4.3) ------------------------------------------------------------------------


async def invitable(app: App, session: Session, target: Session) -> SavedMatch | None:
    """Check that ``session`` may invite ``target`` now; their saved match, if any."""
    if target is session:
        raise Reply(replies.CANT_INVITE_YOURSELF)
    if session.name in app.matches:
        raise Reply(replies.ALREADY_PLAYING)
    if target.name in app.matches:
        raise Reply(replies.already_playing_with(target.name))
    if not target.toggles["ready"]:
        raise Reply(replies.refusing_games(target.name))
    return await app.db.load_match(session.name, target.name)


def resume_invitation(session: Session, target: Session, saved: SavedMatch | None) -> Invitation:
    """An invitation to resume the saved match (``invite NAME`` without a length)."""
    if saved is None:
        raise Reply(replies.no_saved_match_give_length(target.name))
    return Invitation(session.name, target.name, saved.match_length, resume=True)


def new_invitation(
    app: App,
    session: Session,
    target: Session,
    length: int | None,
    rules: RulesDefaults | None,
    words: tuple[str, ...],
) -> Invitation:
    """An invitation to a new match of ``length`` (None: unlimited) with the ``rules``
    chosen with it (None: fibs.conf's), refused when they do not fit the length."""
    try:
        match_options(length, rules or app.settings.rules, session, target, chosen=bool(words))
    except MatchOptionsError as exc:
        raise Reply(replies.bad_match_rules(str(exc))) from None
    return Invitation(session.name, target.name, length, rules=rules, rule_words=words)


def invite(
    app: App, session: Session, target: Session, invitation: Invitation, saved: SavedMatch | None
) -> None:
    """Send ``invitation`` (§4.3): it replaces ``session``'s earlier one, and switches
    their ``ready`` flag on."""
    if not session.toggles["ready"]:
        session.toggles["ready"] = True
        app.registry.who_update(session)
    app.invitations[session.name] = invitation
    bell = replies.BELL if target.toggles["bell"] else ""
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
    target.send_lines(lines)
    if target.away is not None:
        session.send("", replies.is_away(target.name, target.away))


# -- join: a new match, a resumed one, the next game (§4.3, §4.8, §4.9) ---------------------


async def join(app: App, session: Session, name: str) -> None:
    """``session`` accepts ``name``'s invitation: the match starts or resumes."""
    if session.name in app.matches:
        raise Reply(replies.CANT_PLAY_TWO)
    inviter = app.registry.get(name)
    if inviter is None:
        try:
            inviter = app.registry.complete(name)
        except Reply:
            raise Reply(replies.cant_find_player(name)) from None
    if inviter.name in app.matches:
        raise Reply(replies.join_already_playing(inviter.name))
    invitation = app.invitations.get(inviter.name)
    if invitation is None or invitation.invitee != session.name:
        raise Reply(replies.didnt_invite_you(inviter.name))
    if not inviter.toggles["ready"]:
        raise Reply(replies.refusing_games(inviter.name))
    del app.invitations[inviter.name]
    if session.watching is not None:
        stop_watching(app, session)
    if invitation.resume:
        await _resume(app, inviter, session)
    else:
        await _start(app, inviter, session, invitation)


async def _start(app: App, inviter: Session, invitee: Session, invitation: Invitation) -> None:
    length = invitation.length
    await app.db.delete_match(inviter.name, invitee.name)  # a new match replaces a saved one
    rules = invitation.rules or app.settings.rules
    try:
        options = match_options(
            length, rules, inviter, invitee, chosen=invitation.rules is not None
        )
    except MatchOptionsError as exc:
        raise Reply(replies.bad_match_rules(str(exc))) from None
    match = Match(options, app.dice(), o_player=app.coin())
    live = LiveMatch((inviter.name, invitee.name), match, started_at=int(app.clock()))
    if not _begin(app, live):
        return
    invitee.send(replies.now_playing(inviter.name, length))
    inviter.send(replies.player_joined(invitee.name, length))
    if invitation.rule_words:
        for s in (inviter, invitee):
            s.send(replies.match_rules_line(invitation.rule_words))
    _report(app, live, replies.match_start_report(inviter.name, invitee.name, length))
    await play(app, live, match.start_game)


async def _resume(app: App, inviter: Session, invitee: Session) -> None:
    saved = await app.db.load_match(inviter.name, invitee.name)
    try:
        if saved is None:
            raise SnapshotError("the saved match is gone")
        live = LiveMatch.from_saved(saved, app.dice())
    except SnapshotError:
        log.warning("saved match of %s and %s is corrupt", inviter.name, invitee.name)
        for s in (inviter, invitee):
            s.send(replies.SAVED_MATCH_CORRUPT)
        await app.db.delete_match(inviter.name, invitee.name)
        return
    if not _begin(app, live):
        return
    invitee.send(replies.now_playing_resumed(inviter.name))
    inviter.send(replies.joined_resumed(invitee.name))
    _report(app, live, replies.match_resume_report(inviter.name, invitee.name, live.length))
    match = live.match
    for session in (inviter, invitee):
        p = live.player_of(session.name)
        turn = live.names[match.to_act if match.to_act is not None else match.turn]
        session.send_lines(
            replies.resume_synopsis(
                turn,
                live.length,
                session.name,
                match.score[p],
                live.names[1 - p],
                match.score[1 - p],
            )
        )
        # No board after the synopsis (§4.9, D105): FIBS sends none; GammonBot, MatchDog
        # and the bots library ask for one, and GammonBot acts on each board it gets.
        if match.phase is Phase.GAME_OVER:
            session.send(replies.JOIN_NEXT_GAME)
    # A double or a resignation still waiting for its answer is offered again (D106).
    await play(app, live, lambda: pending_offer(match), resumed=True)


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


def _begin(app: App, live: LiveMatch) -> bool:
    """Both players are now playing ``live``; watchers of either are attached.

    False (and nothing changed) when a player left or started another match while the
    database was being read: the join then simply does not happen.
    """
    sessions = [app.registry.get(name) for name in live.names]
    if any(s is None or s.closed or s.name in app.matches for s in sessions):
        return False
    for name in live.names:
        app.matches[name] = live
        app.invitations.pop(name, None)
    for session in sessions:
        assert session is not None
        session.start_playing(live.opponent_of(session.name))
        app.registry.who_update(session)
    live.watchers = {s for s in app.registry if s.watching in live.names}
    return True


def _report(app: App, live: LiveMatch, line: str) -> None:
    """A match start/resume line to users with ``report`` on and the players' watchers
    (the same line in both modes: encoded once, docs/performance.md §3)."""
    payload = Payload([line])
    for session in app.registry:
        if (
            session.logged_in
            and session.name not in live.names
            and (session.toggles["report"] or session in live.watchers)
        ):
            session.send_payload(payload)


async def join_next_game(app: App, session: Session) -> None:
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
        session.send(replies.wait_for_join(live.names[1 - player]))
        return
    live.joined = set()
    await play(app, live, match.start_game)


# -- playing ----------------------------------------------------------------------------------


async def play(
    app: App, live: LiveMatch, action: Callable[[], list[Event]], *, resumed: bool = False
) -> None:
    """Run one action (:func:`server.match_flow.run`); then the finished match leaves the
    table, or the clock starts for whoever must act next.

    :raises backgammon.errors.BackgammonError: the action is refused; nothing changed.
    """
    await match_flow.run(app, live, action, resumed=resumed)
    if live.match.phase is Phase.MATCH_OVER:
        finish(app, live)
    else:
        watch_the_clock(app, live)


# -- leaving (§4.9) ---------------------------------------------------------------------------


async def leave(app: App, session: Session) -> None:
    """``leave``: stop the match; it stays saved for a later ``invite`` + ``join``."""
    live = app.matches.get(session.name)
    if live is None:
        raise Reply(replies.NO_ONE_TO_LEAVE)
    opponent = live.opponent_of(session.name)
    await suspend(app, live)
    session.send(replies.YOU_TERMINATED)
    other = app.registry.get(opponent)
    if other is not None:
        other.send(replies.has_left(session.name))


async def suspend(app: App, live: LiveMatch) -> None:
    """Stop a running match without ending it (leave, logout, drop, §4.9).

    Every action was stored when it happened, so the stored match is already the
    current one; this only takes the match off the table and the players back to the
    lobby. The callers tell the players why.
    """
    async with live.lock:
        finish(app, live)


async def session_ended(app: App, session: Session) -> None:
    """A user left the server: save their match, tell the opponent and watchers (§4.9, §4.11)."""
    app.invitations.pop(session.name, None)
    reason = session.logout_text(session.name)
    live = app.matches.get(session.name)
    if live is not None:
        opponent = app.registry.get(live.opponent_of(session.name))
        await suspend(app, live)
        if opponent is not None:
            if session.replaced:
                opponent.send(replies.closed_old_connection(session.name))
            else:
                opponent.send(replies.saved_after(reason))
    for watcher in app.registry:
        if watcher.watching == session.name:
            watcher.enter_lobby()
            watcher.send(replies.not_watching_anymore(reason))
            app.registry.who_update(watcher)
    if session.watching is not None:
        watched = app.matches.get(session.watching)
        if watched is not None:
            watched.watchers.discard(session)


def finish(app: App, live: LiveMatch) -> None:
    """The match leaves the table: both players back in the lobby, everyone updated.

    The players and the watchers get their who updates (and any logout notice queued
    meanwhile) on the next turn of the loop, after the lines that end or stop the match,
    instead of waiting for the next batch (D140); the others with the next batch.
    """
    stop_the_clock(live)
    players = []
    for name in live.names:
        app.matches.pop(name, None)
        session = app.registry.get(name)
        if session is not None:
            session.enter_lobby()
            if not app.stopping:  # everyone is leaving: no N*N status lines
                app.registry.who_update(session)
                players.append(session)
    if players:
        app.registry.flush_soon([*players, *live.watchers])


# -- watching (§4.11) -------------------------------------------------------------------------


def stop_watching(app: App, session: Session, *, quiet: bool = False) -> None:
    """End ``session``'s watching and tell the watched players (§4.11)."""
    name = session.watching
    if name is None:
        return
    live = app.matches.get(name)
    watched = app.registry.get(name)
    if watched is not None:
        watched.send(replies.stops_watching_you(session.name))
    if live is not None:
        live.watchers.discard(session)
        other = app.registry.get(live.opponent_of(name))
        if other is not None:
            other.send(replies.stops_watching(session.name, name))
    session.enter_lobby()
    if not quiet:
        session.send(replies.you_stop_watching(name))
    app.registry.who_update(session)


def watch(app: App, session: Session, name: str) -> None:
    """``session`` starts watching ``name`` and, when ``name`` plays, their match (§4.11):
    a watcher of someone else stops that first, and a player's ``blind`` keeps them out."""
    if session.name in app.matches:
        raise Reply(replies.CANT_WATCH_WHILE_PLAYING)
    target = app.registry.get(name)
    if target is None:
        try:
            target = app.registry.complete(name)
        except Reply:
            raise Reply(replies.no_one_there(name)) from None
    if target is session:
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
    target.send(replies.is_watching_you(session.name))
    if live is None:
        session.send(replies.nothing_interesting(target.name))
    else:
        live.watchers.add(session)
        other = app.registry.get(live.opponent_of(target.name))
        if other is not None:
            other.send(replies.starts_watching(session.name, target.name))
        send_board(session, live, target.name, you=False)
    app.registry.who_update(session)


def players_of(app: App, live: LiveMatch) -> list[Session]:
    """The sessions of ``live``'s players who are logged in."""
    return [s for s in (app.registry.get(n) for n in live.names) if s is not None]


def send_board(session: Session, live: LiveMatch, name: str, *, you: bool) -> None:
    """``session``'s board of ``live`` now, seen from ``name``'s side; ``you``: the viewer
    is that player (the one renderer: :meth:`server.match_boards.BoardFrame.lines`)."""
    frame = live.board_frame()
    session.send_lines(frame.lines(live.player_of(name), session.settings.boardstyle, you=you))
