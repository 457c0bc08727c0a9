"""Running a match action end to end: act, follow up, persist, then announce.

Every player command goes through :func:`run`. Under the match's lock it

1. calls the rules core (which raises, changing nothing, when the action is not
   allowed),
2. renders what each player and watcher is told about the resulting events (in CLIP
   or telnet words, with a board in their board style where the spec sends one),
3. takes the automatic steps that follow (the server rolls for a player who cannot
   or does not want to double, plays forced moves and greedy bear-offs when asked,
   §4.5) the same way,
4. stores the match (or the finished match with its ratings) in the database, and
5. only then sends the rendered lines: nothing is announced that is not durable.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from backgammon.board import Colour, Player
from backgammon.dice import Roll
from backgammon.events import (
    AutoDoubled,
    CheckersMoved,
    CubeDropped,
    CubeOffered,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    Event,
    GameEnd,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    ResignationAccepted,
    ResignationOffered,
    ResignationRejected,
    TurnPassed,
)
from backgammon.match import Action, Match, Phase
from backgammon.moves import Play
from backgammon.notation import format_move
from backgammon.rating import INITIAL_RATING, RatingChange, rate_match
from db.records import RatingUpdate
from protocol import replies
from protocol.board_view import BoardState
from protocol.match_view import board_lines, board_state, perspective_of, rolled_state
from server.app import App
from server.matches import LiveMatch
from server.output import Payload
from server.session import Session

log = logging.getLogger(__name__)


@dataclass
class Outbox:
    """Lines per recipient, sent together once the match is stored."""

    lines: dict[Session, list[str]] = field(default_factory=dict)

    def add(self, session: Session | None, *lines: str) -> None:
        if session is not None and lines:
            self.lines.setdefault(session, []).extend(lines)

    def extend(self, session: Session | None, lines: Iterable[str]) -> None:
        self.add(session, *lines)

    def flush(self) -> None:
        """One write per recipient. Recipients with exactly the same lines (everyone with
        ``toggle report`` who gets only a match's end report) share one rendered
        :class:`Payload`, encoded once (docs/performance.md §3)."""
        shared: dict[tuple[str, ...], Payload] = {}
        for session, lines in self.lines.items():
            key = tuple(lines)
            payload = shared.get(key)
            if payload is None:
                payload = shared[key] = Payload(key)
            session.send_payload(payload)
        self.lines.clear()


@dataclass
class Step:
    """One action's rendering context: the match, its players' sessions, the outbox."""

    app: App
    live: LiveMatch
    outbox: Outbox
    rating: RatingChange | None = None
    _version: tuple[int, int, int] | None = field(default=None, repr=False)
    _state: BoardState | None = field(default=None, repr=False)
    _boards: dict[tuple[Colour, int, bool], list[str]] = field(default_factory=dict, repr=False)

    def player(self, index: Player) -> Session | None:
        session = self.app.registry.get(self.live.names[index])
        return session if session is not None and session.opponent is not None else None

    def name(self, index: Player) -> str:
        return self.live.names[index]

    def watchers(self) -> list[tuple[Session, Player]]:
        """Each watcher with the player whose side they see."""
        out = []
        for watcher in self.live.watchers:
            if watcher.watching in self.live.names:
                out.append((watcher, self.live.player_of(watcher.watching)))
        return out

    def board(self, session: Session | None, perspective: Player, *, you: bool) -> None:
        """``session``'s board of the match as it is now.

        The match state is read once per state, and each distinct board (side, style,
        "You" or a name) rendered once: an action shows the same board to both players
        and every watcher (docs/performance.md "one render per viewer kind").
        """
        if session is None:
            return
        state = self._current_state()
        key = (perspective_of(self.live.match, perspective), session.settings.boardstyle, you)
        lines = self._boards.get(key)
        if lines is None:
            lines = self._boards[key] = board_lines(state, key[0], key[1], you=you)
        self.outbox.extend(session, lines)

    def rolled_board(self, session: Session, roller: Player, roll: Roll) -> None:
        """``session``'s board of the moment ``roller`` rolled ``roll`` that cannot be
        played (:func:`protocol.match_view.rolled_state`; not cached: it is one board)."""
        colour = perspective_of(self.live.match, roller)
        state = rolled_state(self._current_state(), colour, (roll.d1, roll.d2))
        self.outbox.extend(session, board_lines(state, colour, session.settings.boardstyle))

    def _current_state(self) -> BoardState:
        """The match's state now, read once per state (its boards cached with it)."""
        match = self.live.match
        # Every change of the match records an event, so the record's identity and
        # length and the number of finished games tell one state from the next.
        version = (id(match.record), len(match.record), len(match.history))
        if version != self._version or self._state is None:
            self._version = version
            self._state = board_state(match, self.live.names)
            self._boards.clear()
        return self._state


async def run(
    app: App, live: LiveMatch, action: Callable[[], list[Event]], *, resumed: bool = False
) -> None:
    """Do ``action`` (a bound core method), follow up, store, then announce.

    ``resumed``: the action is the resume of a saved match (see :func:`follow_up`).

    :raises backgammon.errors.BackgammonError: the action is refused; nothing changed
        and nothing was sent.
    """
    step = Step(app, live, Outbox())
    async with live.lock:
        announce(step, action())
        follow_up(step, resumed=resumed)
        await persist(step)
    step.outbox.flush()
    if live.match.phase is Phase.MATCH_OVER:
        finish(app, live)
    else:
        watch_the_clock(app, live)


def watch_the_clock(app: App, live: LiveMatch) -> None:
    """Remind the player who must act, then tell the waiting one they may leave (D55).

    Restarted after every action; cancelled when the match stops.
    """
    if live.watchdog is not None:
        live.watchdog.cancel()
        live.watchdog = None
    player = live.match.to_act
    reminder = app.settings.match_reminder
    timeout = app.settings.match_timeout
    if player is None or not (reminder or timeout):
        return
    slow, waiting = live.names[player], live.names[1 - player]
    loop = asyncio.get_running_loop()

    def remind() -> None:
        session = app.registry.get(slow)
        if session is not None:
            session.send(replies.turn_reminder(waiting))
        if timeout > reminder:
            live.watchdog = loop.call_later(timeout - reminder, expire)
        else:
            live.watchdog = None

    def expire() -> None:
        live.watchdog = None
        session = app.registry.get(waiting)
        if session is not None:
            session.send(replies.opponent_too_slow(slow, int(timeout)))

    if reminder and (not timeout or reminder < timeout):
        live.watchdog = loop.call_later(reminder, remind)
    else:
        live.watchdog = loop.call_later(timeout, expire)


# -- automatic steps ---------------------------------------------------------------------


def follow_up(step: Step, *, resumed: bool = False) -> None:
    """Take every step the server takes by itself, until a player must decide.

    Right after a resume (``resumed``) a player who needs one point is asked to roll or
    double rather than rolled for (D109): FIBS does not roll by itself on a resume
    (GammonBot: "FIBS has a bug where autoroll does not happen on resuming a match"), and
    the bots read their turn from the board they ask for after the synopsis.
    """
    match = step.live.match
    for _ in range(64):  # bounded: each turn needs a decision after a few steps
        player = match.to_act
        if player is None or match.resignation is not None:
            return
        session = step.player(player)
        if match.phase is Phase.TURN:
            if (
                match.may_double(player)
                and (resumed or not _needs_one_point(match, player))
                and (session is None or session.toggles["double"])
            ):
                step.outbox.add(session, replies.ROLL_OR_DOUBLE)
                return
            announce(step, match.roll(player))
            resumed = False
            continue
        if match.phase is Phase.MOVE and session is not None:
            play = _automatic_play(match, session)
            if play is None:
                return
            colour = match.colour(player)
            texts = [format_move(m, colour) for m in play.moves]
            if session.toggles["greedy"] and all(m.dst == 0 for m in play.moves):
                step.outbox.add(session, replies.bearing_off(t.split("-")[0] for t in texts))
            else:
                step.outbox.add(session, replies.only_possible_move(texts))
            announce(step, match.move(player, play.moves))
            continue
        return


def _needs_one_point(match: Match, player: Player) -> bool:
    """``player`` needs a single point to win the match (the post-Crawford leader, both
    at double match point): FIBS does not offer them the cube, it rolls for them (D109;
    MatchDog waits for that roll)."""
    length = match.options.length
    return bool(length) and match.score[player] == length - 1


def _automatic_play(match: Match, session: Session) -> Play | None:
    """The play the server makes for the player: the only one (``automove``) or a
    bear-off with every die (``greedy``), §4.5. The plays are made only for a player
    with one of those toggles on."""
    toggles = session.toggles
    if not (toggles["automove"] or toggles["greedy"]):
        return None
    plays = match.legal_plays()
    if toggles["automove"] and len(plays) == 1:
        return plays[0]
    if toggles["greedy"]:
        for play in plays:
            if all(m.dst == 0 for m in play.moves):
                return play
    return None


# -- persistence ---------------------------------------------------------------------------


async def persist(step: Step) -> None:
    """Store the match, or at its end the record, the ratings and the saved match's removal."""
    live = step.live
    match = live.match
    db = step.app.db
    if match.phase is not Phase.MATCH_OVER:
        a, b = live.names
        save = live.next_save()
        try:
            await db.save_match(
                a,
                b,
                save.state,
                match_length=live.length,
                score_a=match.score[0],
                score_b=match.score[1],
                events=save.events,
                append=save.append,
            )
        except BaseException:
            # Failed, or cancelled with the write going on (it runs to its commit): the
            # stored events are unknown, so the next save rewrites them all.
            live.save_unknown()
            raise
        live.saved(save)
        return
    winner = 0 if match.score[0] >= match.options.length else 1
    updates = []
    rating = step.rating
    if rating is not None:
        updates = [
            RatingUpdate(live.names[winner], rating.winner_rating, rating.winner_experience),
            RatingUpdate(live.names[1 - winner], rating.loser_rating, rating.loser_experience),
        ]
    await db.record_finished_match(
        player1=live.names[0],
        player2=live.names[1],
        match_length=live.length,
        score1=match.score[0],
        score2=match.score[1],
        winner=live.names[winner],
        started_at=live.started_at,
        rules=json.dumps(dataclasses.asdict(match.options)),
        moves=live.snapshot(),
        rating_updates=updates,
        delete_saved=True,
    )


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
    if live.watchdog is not None:
        live.watchdog.cancel()
        live.watchdog = None
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


# -- announcements ---------------------------------------------------------------------------


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


def announce(step: Step, events: list[Event]) -> None:
    """Render ``events`` (one action's) for both players and the watchers.

    Boards show the state after the action and go where the spec puts them (a roller's
    board before ``Please move``), at most one per recipient and action.
    """
    boarded: set[Session] = set()
    for event in events:
        _render(step, event, boarded)


def _render(step: Step, event: Event, boarded: set[Session]) -> None:
    out = step.outbox
    live = step.live
    match = live.match

    def board_to(session: Session | None, perspective: Player, *, you: bool) -> None:
        if session is not None and session not in boarded:
            boarded.add(session)
            step.board(session, perspective, you=you)

    def board_for_players(*players: Player, toggle: str | None = None) -> None:
        for p in players:
            session = step.player(p)
            if session is not None and (toggle is None or session.toggles[toggle]):
                board_to(session, p, you=True)

    def board_for_watchers() -> None:
        for watcher, perspective in step.watchers():
            board_to(watcher, perspective, you=False)

    def to_watchers(text_for: Callable[[Player], str]) -> None:
        for watcher, perspective in step.watchers():
            out.add(watcher, text_for(perspective))

    if isinstance(event, GameStarted):
        for p in (0, 1):
            out.add(step.player(p), replies.starting_new_game(step.name(1 - p)))
        to_watchers(lambda p: replies.starting_new_game(step.name(1 - p)))
    elif isinstance(event, OpeningRoll):
        step.app.dice_stats.record(*event.dice)
        for p in (0, 1):
            session = step.player(p)
            out.add(
                session, replies.opening_roll(event.dice[p], step.name(1 - p), event.dice[1 - p])
            )
            if event.starter == p:
                out.add(session, replies.YOUR_TURN_TO_MOVE)
            elif event.starter is not None:
                out.add(session, replies.makes_first_move(step.name(1 - p)))
        to_watchers(
            lambda p: replies.opening_roll_watched(
                step.name(p), event.dice[p], step.name(1 - p), event.dice[1 - p]
            )
        )
        if event.starter is not None:
            starter = step.name(event.starter)
            to_watchers(lambda p: replies.makes_first_move(starter))
            board_for_players(0, 1)
            board_for_watchers()
    elif isinstance(event, AutoDoubled):
        for p in (0, 1):
            out.add(step.player(p), replies.cube_now(event.cube))
        to_watchers(lambda p: replies.cube_now(event.cube))
    elif isinstance(event, DiceRolled):
        d1, d2 = event.roll
        step.app.dice_stats.record(d1, d2)
        roller = step.player(event.player)
        out.add(roller, replies.you_roll(d1, d2))
        if event.moves:
            board_for_players(event.player, toggle="moreboards")
            out.add(roller, replies.please_move(event.moves))
        elif roller is not None and roller.toggles["moreboards"]:
            # A roll that cannot be played: the roller's board still shows it, before
            # "You can't move." (D108; MatchDog waits for a board after every roll).
            step.rolled_board(roller, event.player, event.roll)
        other = 1 - event.player
        out.add(step.player(other), replies.rolls(step.name(event.player), d1, d2))
        if event.moves:
            board_for_players(other, toggle="autoboard")
        to_watchers(lambda p: replies.rolls(step.name(event.player), d1, d2))
        if event.moves:
            board_for_watchers()
    elif isinstance(event, TurnPassed):
        # No board after "can't move" (§4.5, D103): FIBS sends none; GammonBot and MatchDog
        # ask for one, and a second, unasked board makes GammonBot act twice.
        out.add(step.player(event.player), replies.YOU_CANT_MOVE)
        text = replies.cant_move(step.name(event.player))
        out.add(step.player(1 - event.player), text)
        to_watchers(lambda p: text)
    elif isinstance(event, CheckersMoved):
        colour = match.colour(event.player)
        texts = [format_move(m, colour) for m in event.moves]
        line = replies.moves(step.name(event.player), texts)
        out.add(step.player(1 - event.player), line)
        to_watchers(lambda p: line)
        board_for_players(0, 1, toggle="autoboard")
        board_for_watchers()
    elif isinstance(event, CubeOffered):
        more = _redouble_allowed(step)
        doubler, other = event.player, 1 - event.player
        out.add(step.player(doubler), replies.you_double(step.name(other), redouble_allowed=more))
        out.add(
            step.player(other), replies.doubles_offer(step.name(doubler), redouble_allowed=more)
        )
        board_for_players(other)
        to_watchers(lambda p: replies.doubles(step.name(doubler)))
    elif isinstance(event, CubeRedoubled):
        more = _redouble_allowed(step)
        who, other = event.player, 1 - event.player
        out.extend(
            step.player(who), replies.you_redouble(event.value, step.name(other), more_allowed=more)
        )
        out.add(
            step.player(other),
            replies.redoubles_offer(step.name(who), event.value, more_allowed=more),
        )
        board_for_players(other)
        to_watchers(lambda p: replies.redoubles(step.name(who)))
    elif isinstance(event, CubeTaken):
        taker, doubler = event.player, 1 - event.player
        if event.redoubled:
            mine = replies.you_accept_redouble(event.value)
            theirs = replies.accepts_redouble(step.name(taker), event.value)
            watched = replies.accepts_redouble_watched(step.name(taker))
        else:
            mine = replies.you_accept_double(event.value)
            theirs = replies.accepts_double(step.name(taker), event.value)
            watched = replies.accepts_double_watched(step.name(taker))
        out.add(step.player(taker), mine)
        out.add(step.player(doubler), theirs)
        to_watchers(lambda p: watched)
    elif isinstance(event, CubeDropped):
        dropper, winner = event.player, 1 - event.player
        out.add(step.player(dropper), replies.you_give_up(step.name(winner), event.points))
        out.add(step.player(winner), replies.gives_up_you_win(step.name(dropper), event.points))
        to_watchers(lambda p: replies.gives_up(step.name(dropper), step.name(winner), event.points))
    elif isinstance(event, ResignationOffered):
        who, other = event.player, 1 - event.player
        out.add(step.player(who), replies.you_want_to_resign(step.name(other), event.points))
        out.add(step.player(other), replies.wants_to_resign(step.name(who), event.points))
        to_watchers(
            lambda p: replies.wants_to_resign_watched(
                step.name(who), step.name(other), event.points
            )
        )
    elif isinstance(event, ResignationAccepted):
        acceptor, resigner = event.player, 1 - event.player
        out.add(step.player(acceptor), replies.you_accept_and_win(event.points))
        line = replies.accepts_and_wins(step.name(acceptor), event.points)
        out.add(step.player(resigner), line)
        to_watchers(lambda p: line)
    elif isinstance(event, ResignationRejected):
        out.add(step.player(event.player), replies.YOU_REJECT)
        line = replies.rejects(step.name(event.player))
        out.add(step.player(1 - event.player), line)
        to_watchers(lambda p: line)
        # No board (D104): FIBS sends none after a rejected resignation; GammonBot asks
        # for one and MatchDog goes on with the board it has.
    elif isinstance(event, GameWon):
        _render_game_won(step, event)
    elif isinstance(event, MatchWon):
        _render_match_won(step, event)


def _redouble_allowed(step: Step) -> bool:
    """Whether the player now answering the cube may redouble (the wording, §4.6)."""
    match = step.live.match
    responder = match.to_act
    return responder is not None and match.may(responder, Action.REDOUBLE)


def _render_game_won(step: Step, event: GameWon) -> None:
    out = step.outbox
    live = step.live
    winner, loser = event.winner, 1 - event.winner
    if event.end is GameEnd.BORNE_OFF:
        out.add(step.player(winner), replies.you_win_game(event.points))
        out.add(step.player(loser), replies.wins_game(step.name(winner), event.points))
        for watcher, _ in step.watchers():
            out.add(watcher, replies.wins_game_watched(step.name(winner), event.points))
    for p in (0, 1):
        session = step.player(p)
        if session is not None and session.toggles["moves"]:
            out.extend(session, game_record_lines(live, -1))
    if live.match.phase is Phase.GAME_OVER:
        live.joined = set()
        score = live.match.score
        for p in (0, 1):
            out.add(
                step.player(p),
                replies.score_line(
                    live.length, step.name(p), score[p], step.name(1 - p), score[1 - p]
                ),
                replies.JOIN_NEXT_GAME,
            )
        for watcher, p in step.watchers():
            out.add(
                watcher,
                replies.score_line(
                    live.length, step.name(p), score[p], step.name(1 - p), score[1 - p]
                ),
            )


def _render_match_won(step: Step, event: MatchWon) -> None:
    out = step.outbox
    live = step.live
    winner, loser = event.winner, 1 - event.winner
    length = live.match.options.length
    a, b = event.score[winner], event.score[loser]
    winner_session = step.player(winner)
    loser_session = step.player(loser)
    if length:
        w_rating, w_exp = _rating_of(step, winner)
        l_rating, l_exp = _rating_of(step, loser)
        step.rating = rate_match(length, w_rating, w_exp, l_rating, l_exp)
        block = rating_block(step.rating, step.name(winner), step.name(loser), w_exp, l_exp)
        for session in (winner_session, loser_session):
            if session is not None and session.toggles["ratings"]:
                out.extend(session, block)
        for session, p in ((winner_session, winner), (loser_session, loser)):
            if session is not None:
                won = p == winner
                session.rating = step.rating.winner_rating if won else step.rating.loser_rating
                session.experience = (
                    step.rating.winner_experience if won else step.rating.loser_experience
                )
        out.add(winner_session, replies.you_win_match(length, a, b))
        line = replies.wins_match(step.name(winner), length, a, b)
        out.add(loser_session, line)
        for watcher, _ in step.watchers():
            out.add(watcher, line)
        report = replies.match_end_report(step.name(winner), step.name(loser), length, a, b)
        for session in step.app.registry:
            if session.logged_in and session.toggles["report"]:
                out.add(session, report)


def _rating_of(step: Step, player: Player) -> tuple[float, int]:
    session = step.app.registry.get(step.name(player))
    if session is None:
        return (INITIAL_RATING, 0)
    return session.rating, session.experience


def rating_block(
    change: RatingChange, winner: str, loser: str, winner_exp: int, loser_exp: int
) -> list[str]:
    """The §5.3 ``toggle ratings`` report for a finished match."""
    return replies.rating_calculation(
        change.difference,
        change.length,
        change.upset_probability,
        change.probability,
        replies.RatingCalculationPlayer(winner, winner_exp, change.winner_k, change.winner_change),
        replies.RatingCalculationPlayer(loser, loser_exp, change.loser_k, change.loser_change),
    )


# -- the move record ---------------------------------------------------------------------------


def game_record_lines(live: LiveMatch, game: int) -> list[str]:
    """A game's record in the ``oldmoves`` form of §4.10 (``game`` -1: the last finished)."""
    match = live.match
    games = match.history + ([match.record] if match.record else [])
    if not games:
        return []
    events = games[game]
    started = next((e for e in events if isinstance(e, GameStarted)), None)
    o_player = started.o_player if started is not None else match.o_player
    letters = {o_player: "O", 1 - o_player: "X"}
    colours = {o_player: Colour.O, 1 - o_player: Colour.X}
    score = started.score if started is not None else (0, 0)
    lines = replies.oldmoves_header(
        score[1 - o_player],
        score[o_player],
        live.length,
        live.names[1 - o_player],
        live.names[o_player],
    )
    pending: tuple[int, int, int] | None = None
    for event in events:
        if isinstance(event, OpeningRoll) and event.starter is not None:
            s = event.starter
            pending = (s, event.dice[s], event.dice[1 - s])
        elif isinstance(event, DiceRolled):
            pending = (event.player, event.roll.d1, event.roll.d2)
            if event.moves == 0:
                lines.append(
                    replies.oldmoves_roll(letters[event.player], event.roll.d1, event.roll.d2, [])
                )
                pending = None
        elif isinstance(event, CheckersMoved) and pending is not None:
            who, d1, d2 = pending
            texts = [format_move(m, colours[who]) for m in event.moves]
            lines.append(replies.oldmoves_roll(letters[who], d1, d2, texts))
            pending = None
        elif isinstance(event, CubeOffered | CubeRedoubled):
            lines.append(replies.oldmoves_action(letters[event.player], "doubles"))
        elif isinstance(event, CubeTaken):
            lines.append(replies.oldmoves_action(letters[event.player], "accepts"))
        elif isinstance(event, CubeDropped):
            lines.append(replies.oldmoves_action(letters[event.player], "rejects"))
        elif isinstance(event, GameWon):
            lines.append(replies.oldmoves_action(letters[event.winner], "wins"))
    return lines
