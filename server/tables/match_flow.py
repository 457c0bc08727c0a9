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
from protocol import replies
from protocol.replies import Toggle
from server.tables.announce import seated
from server.tables.host import TableHost
from server.tables.matches import LiveMatch
from server.tables.settle import apply_ratings, rating_updates, settle
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

    def rolling_for(self, player: Player, *, barred: bool) -> None:
        """The server rolls for ``player`` next, without asking: the last batch (which
        left it their turn, no dice) says so, and after ``can't move`` they get no board
        before their roll's (D277). ``barred``: they may not double now (the Crawford
        game, or one point to go, D109), and that batch's boards show their may-double
        flag 0 rather than FIBS's 1 (D278)."""
        last = self.told[-1] if self.told else None
        if not isinstance(last, Batch) or last.moment.phase is not Phase.TURN:
            return
        moment = last.moment
        frame = moment.frame.rolled_for(player) if barred else moment.frame
        moment = dataclasses.replace(moment, frame=frame, rolled_for=True)
        self.told[-1] = Batch(last.events, moment)

    def notice(self, player: Player, line: str) -> None:
        """A line for ``player`` alone, between the batches."""
        self.told.append(Notice(player, line))

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
            names = self.live.names
            presence = self.app.presence
            self._seats = (seated(presence, names, 0), seated(presence, names, 1))
        return self._seats

    def player(self, index: Player) -> Peer | None:
        """Player ``index`` while they play (their toggles steer the follow-up steps)."""
        return self.seats()[index]


async def run(
    app: TableHost,
    live: LiveMatch,
    action: Callable[[], list[Event]],
    *,
    resumed: bool = False,
    notice: tuple[Player, str] | None = None,
) -> None:
    """Do ``action`` (a bound core method), follow up, settle, save, then send.

    ``resumed``: the action is the resume of a saved match (see :func:`follow_up`).
    ``notice``: a line for one player before the action's own, sent with them after the
    save (``off``'s ``Bear off:``).

    :raises backgammon.errors.BackgammonError: the action is refused; nothing changed
        and nothing was sent.
    """
    step = Step(app, live)
    async with live.lock:
        since = live.match.version
        events = action()
        if notice is not None:
            step.notice(*notice)
        step.act(events)
        follow_up(step, resumed=resumed)
        settlement = settle(app, live, step.events())
        await save(app, live, settlement)
        names = live.names
        if settlement.rated is not None:  # who is still at the table after the save
            seats = [seated(app.presence, names, 0), seated(app.presence, names, 1)]
            apply_ratings(app.presence, settlement, seats)
        update = TableUpdate(
            live.table_id,
            names,
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
            step.rolling_for(player, barred=not offered)
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


async def save(app: TableHost, live: LiveMatch, settlement: Settlement) -> None:
    """Store the match, or at its end the record, the ratings and the saved match's removal."""
    match = live.match
    db = app.db
    if match.phase is not Phase.MATCH_OVER:
        a, b = live.names
        pending = live.next_save()
        try:
            await db.save_match(
                a,
                b,
                pending.state,
                match_length=live.length,
                score_a=match.score[0],
                score_b=match.score[1],
                events=pending.events,
                append=pending.append,
            )
        except BaseException:
            # Failed, or cancelled with the write going on (it runs to its commit): the
            # stored events are unknown, so the next save rewrites them all.
            live.save_unknown()
            raise
        live.saved(pending)
        return
    winner = 0 if match.score[0] >= match.options.length else 1
    record = await db.record_finished_match(
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
    )
    live.record_id = record.id
