"""One match action end to end, in one direction: act, follow up, settle, save, send.

Every player action goes through :func:`run`. Under the match's lock it

1. **acts**: calls the rules core (which raises, changing nothing, when the action is
   not allowed);
2. **follows up**: takes the steps the server takes by itself (it rolls for a player
   who cannot or does not want to double, plays forced moves and greedy bear-offs when
   asked, §4.5), until a player must decide (:func:`follow_up`);
3. **settles** what the events change besides the match: dice statistics, the rating
   of a finished match (:mod:`server.tables.settle`);
4. **saves** the match, or the finished match with its ratings, and only once that
   succeeded gives the players their new ratings;
5. and then emits the action's :class:`~server.tables.updates.TableUpdate` (the events
   with the match as each batch left it, the notices, the settlement, the version
   before and after), which each node's edge renders for its users with their own
   settings and **sends** through the presence (:mod:`server.tables.edge`): nothing is
   announced that is not durable. A board or pip count asked for meanwhile waits for
   the lock and comes after these lines (:func:`server.tables.match_lifecycle.announced`,
   D197).

Starting, resuming and leaving a match, and what happens after an action (the clock,
the match leaving the table) are :mod:`server.tables.match_lifecycle`'s.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from backgammon.board import Player
from backgammon.events import Event
from backgammon.match import Match, Phase
from backgammon.moves import Play
from backgammon.notation import format_move
from db.errors import DatabaseOutage, StaleRatingError
from protocol import replies
from protocol.replies import Toggle
from server.tables.announce import seated
from server.tables.host import TableHost
from server.tables.matches import LiveMatch
from server.tables.settle import apply_ratings, rating_updates, rerated, settle
from server.tables.updates import Batch, Moment, Notice, Settlement, TableUpdate, Told
from server.world.presence import Peer


@dataclass
class Step:
    """One action as it goes: the batches of events and the notices, in order."""

    app: TableHost
    live: LiveMatch
    told: list[Told] = field(default_factory=list)
    _seats: tuple[Peer | None, Peer | None] | None = None

    def act(self, events: list[Event]) -> None:
        """Keep one call's events with the match as they left it (what is announced)."""
        if events:
            self.told.append(Batch(tuple(events), Moment.of(self.live, events)))

    def rolling_for(self, player: Player) -> None:
        """The server rolls for ``player`` next, without asking: the last batch (which
        left it their turn, no dice) says so, and after ``can't move`` they get no board
        before their roll's (D277). That batch's boards show their may-double flag 0
        rather than FIBS's 1, whether they may not double now (the Crawford game, or one
        point to go, D109; D278) or turned ``double`` off (D346)."""
        last = self.told[-1] if self.told else None
        if not isinstance(last, Batch) or last.moment.phase is not Phase.TURN:
            return
        moment = last.moment.rolled_for_by_server(last.moment.frame.rolled_for(player))
        self.told[-1] = Batch(last.events, moment)

    def notice(self, side: Player, line: str) -> None:
        """A line for the one who acts for ``side`` alone, between the batches."""
        self.told.append(Notice(side, line))

    def events(self) -> Iterator[Event]:
        """Every event of the action, in order."""
        for item in self.told:
            if isinstance(item, Batch):
                yield from item.events

    def seats(self) -> tuple[Peer | None, Peer | None]:
        """Each player while they sit at the table, else None.

        Looked up once per action: from the action to its save nothing awaits, so who
        sits at the table does not change meanwhile (after the save, look again)."""
        if self._seats is None:
            acting = self.live.sides.acting_names
            presence = self.app.presence
            self._seats = (seated(presence, acting[0]), seated(presence, acting[1]))
        return self._seats

    def player(self, index: Player) -> Peer | None:
        """Who acts for side ``index``, while they play (their toggles steer the
        follow-up steps)."""
        return self.seats()[index]


async def run(
    app: TableHost,
    live: LiveMatch,
    action: Callable[[], list[Event]],
    *,
    resumed: bool = False,
    notice: Callable[[], tuple[Player, str]] | None = None,
) -> None:
    """Do ``action`` (a bound core method), follow up, settle, save, then send.

    ``resumed``: the action is the resume of a saved match (see :func:`follow_up`).
    ``notice``: a line for one player before the action's own, sent with them after the
    save (``off``'s ``Bear off:``), made under the lock once the action has run.

    :raises backgammon.errors.BackgammonError: the action is refused; nothing changed
        and nothing was sent.
    """
    step = Step(app, live)
    async with live.lock:
        since = live.match.version
        events = action()
        if notice is not None:
            step.notice(*notice())
        step.act(events)
        follow_up(step, resumed=resumed)
        settlement = settle(app, live, step.events())
        settlement = await _save_until_done(app, live, settlement)
        if settlement.rated is not None:  # who is still at the table after the save
            seats = [seated(app.presence, name) for name in live.names]
            apply_ratings(app.presence, settlement, seats)
        update = TableUpdate(
            live.table_id,
            live.sides,
            live.length,
            frozenset(live.watchers),
            since,
            live.match.version,
            tuple(step.told),
            settlement,
        )
    # No await between the lock's release and the lines: a board asked for during the
    # save, waiting for the lock, follows them (D197).
    app.deliver(update)


# -- follow-up: the steps the server takes by itself ------------------------------------


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
        peer = step.player(player)
        if match.phase is Phase.TURN:
            offered = match.may_double(player) and (resumed or not _needs_one_point(match, player))
            if offered and (peer is None or peer.toggles[Toggle.DOUBLE]):
                step.notice(player, replies.ROLL_OR_DOUBLE)
                return
            step.rolling_for(player)
            step.act(match.roll(player))
            resumed = False
            continue
        if match.phase is Phase.MOVE and peer is not None:
            play = _automatic_play(match, peer)
            if play is None:
                return
            colour = match.colour(player)
            texts = [format_move(m, colour) for m in play.moves]
            if peer.toggles[Toggle.GREEDY] and all(m.dst == 0 for m in play.moves):
                step.notice(player, replies.bearing_off(t.split("-")[0] for t in texts))
            else:
                step.notice(player, replies.only_possible_move(texts))
            step.act(match.move(player, play.moves))
            continue
        return


def _needs_one_point(match: Match, player: Player) -> bool:
    """``player`` needs a single point to win the match (the post-Crawford leader, both
    at double match point): FIBS does not offer them the cube, it rolls for them (D109;
    MatchDog waits for that roll)."""
    length = match.options.length
    return bool(length) and match.score[player] == length - 1


def _automatic_play(match: Match, player: Peer) -> Play | None:
    """The play the server makes for the player: the only one (``automove``) or a
    bear-off with every die (``greedy``), §4.5. The plays are made only for a player
    with one of those toggles on."""
    toggles = player.toggles
    if not (toggles[Toggle.AUTOMOVE] or toggles[Toggle.GREEDY]):
        return None
    plays = match.legal_plays()
    if toggles[Toggle.AUTOMOVE] and len(plays) == 1:
        return plays[0]
    if toggles[Toggle.GREEDY]:
        for play in plays:
            if all(m.dst == 0 for m in play.moves):
                return play
    return None


# -- save ---------------------------------------------------------------------------------

SAVE_RETRY = 1.0
"""Seconds between two tries of a match action's save that the database could not do."""


async def _save_until_done(app: TableHost, live: LiveMatch, settlement: Settlement) -> Settlement:
    """:func:`save` (the settlement as stored), tried again every :data:`SAVE_RETRY`
    seconds while the database fails for the moment (a full disk, PostgreSQL
    restarting), the players told once (D297). The action stays applied and
    unannounced meanwhile, under the match's lock, so nothing is announced that is not
    stored and nothing is lost: its lines go out as soon as a try succeeds (before, the
    action was applied, its lines never sent, and the match sat still until both
    players typed ``board``). When the server stops, or a player has left (whose logout
    waits for this lock), the error goes up: the match resumes from its last save."""
    told = False
    while True:
        try:
            return await save(app, live, settlement)
        except DatabaseOutage as error:
            a, b = live.names
            app.outage_log.warning(f"saving the match of {a} and {b}", error)
            online = (app.presence.get(a), app.presence.get(b))
            players = [p for p in online if p is not None and not p.closed]
            if app.stopping or len(players) < 2:
                raise  # a player left (their logout waits for this lock): give up
            if not told:
                for player in players:
                    app.presence.send(player, replies.MATCH_NOT_SAVED)
                told = True
        await app.timer.sleep(SAVE_RETRY)


RATING_ATTEMPTS = 3
"""How often a match's end is stored with its rating computed anew from the stored
ratings (:class:`db.errors.StaleRatingError`) before the action fails: once is enough
unless the players' ratings keep changing meanwhile."""


async def save(app: TableHost, live: LiveMatch, settlement: Settlement) -> Settlement:
    """Store the match, or at its end the record, the ratings and the saved match's
    removal; the settlement as stored (its rating computed from the stored ratings)."""
    match = live.match
    db = app.db
    if match.phase is not Phase.MATCH_OVER:
        a, b = live.names
        pending = live.next_save()
        try:
            await db.save_match(
                live.table_id,
                a,
                b,
                pending.state,
                match_length=live.length,
                score_a=match.score[0],
                score_b=match.score[1],
                events=pending.events,
                append=pending.append,
                epoch=live.epoch,
            )
        except BaseException:
            # Failed, or cancelled with the write going on (it runs to its commit): the
            # stored events are unknown, so the next save rewrites them all.
            live.save_unknown()
            raise
        live.saved(pending)
        return settlement
    winner = 0 if match.score[0] >= match.options.length else 1
    attempts = 0
    while True:
        try:
            record = await db.record_finished_match(
                table_id=live.table_id,
                player1=live.names[0],
                player2=live.names[1],
                match_length=live.length,
                score1=match.score[0],
                score2=match.score[1],
                winner=live.names[winner],
                started_at=live.started_at,
                rules=json.dumps(dataclasses.asdict(match.options)),
                moves=live.snapshot(),
                rating_updates=rating_updates(settlement),
                delete_saved=True,
                epoch=live.epoch,
            )
        except StaleRatingError as stale:
            attempts += 1
            if settlement.rated is None or attempts == RATING_ATTEMPTS:
                raise
            settlement = Settlement(rerated(settlement.rated, stale.current))
            continue
        live.record_id = record.id
        app.analyses.submit(record.id)  # returns at once: gnubg runs in the background
        return settlement
