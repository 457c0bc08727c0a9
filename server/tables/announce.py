"""What the players and watchers are told about one match action, as lines per recipient.

Lines go to the table's sides (:mod:`server.tables.sides`: each member of a side, the
other side by :data:`~server.tables.sides.OPPOSITE`) and to its watchers; at a match
each side is one player.

:func:`announce` renders an action's events (and the server's notices between them) in
the FIBS words of §4, with a board in each receiver's board style where the spec sends
one. It only reads: the match as each batch of events left it (a :class:`Moment`,
taken by :mod:`server.tables.match_flow` right after the batch), the settled rating
(:class:`server.tables.settle.Settlement`) and who is at the table, looked up through the
presence (the players and watchers are :class:`~server.world.presence.Peer` views: they may be
on other nodes); it changes no state and sends nothing. The lines are sent by the flow,
through the presence, once the action is stored.

Every event type is announced in one ``match`` statement (:func:`_announce_event`)
that ends in :func:`typing.assert_never`: a new event type in
:mod:`backgammon.events` fails the type check until it is announced here.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from backgammon.board import Player
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
from backgammon.match import Phase
from backgammon.notation import format_move
from backgammon.rating import RatingChange
from protocol import replies
from protocol.game_record import oldmoves_lines
from protocol.replies import Toggle
from server.tables.matches import watchers_at
from server.tables.sides import OPPOSITE, Sides
from server.tables.updates import Broadcast, Moment, Notice, Settlement, TableUpdate
from server.world.presence import Audience, Peer, Presence


@dataclass
class Outbox:
    """Lines per recipient, in the order they are to be sent: one write each.

    Keyed by name, not by peer: a bus back end may hand out a new view of a user at
    each look-up, and a user's lines must still make one write.
    """

    _to: dict[str, tuple[Peer, list[str]]] = field(default_factory=dict)

    def add(self, peer: Peer | None, *lines: str) -> None:
        if peer is not None and lines:
            entry = self._to.get(peer.name)
            if entry is None:
                self._to[peer.name] = (peer, list(lines))
            else:
                entry[1].extend(lines)

    def extend(self, peer: Peer | None, lines: Iterable[str]) -> None:
        # add()'s body, not a call to it: boards go through here at every action
        if peer is not None:
            entry = self._to.get(peer.name)
            if entry is None:
                self._to[peer.name] = (peer, list(lines))
            else:
                entry[1].extend(lines)

    def take(self) -> list[tuple[Peer, list[str]]]:
        """Each recipient with their lines, in the order they were first added (and the
        outbox empty)."""
        items = list(self._to.values())
        self._to.clear()
        return items


def announce(presence: Presence, update: TableUpdate) -> tuple[Outbox, list[Broadcast]]:
    """The lines each player and watcher gets for one action, in order, and the lines to
    broadcast beyond the table (the match's end ``report``).

    The players get the lines while they sit at the table (:func:`seated`), looked up
    once. Boards show the state after their batch and go where the spec puts them (a
    roller's board before ``Please move``), at most one per recipient and batch.
    """
    outbox = Outbox()
    broadcasts: list[Broadcast] = []
    sides = update.sides
    names = sides.acting_names
    seats = (seated_side(presence, sides, 0), seated_side(presence, sides, 1))
    watchers: list[tuple[Peer, Player]] = []
    if update.watchers:
        for watcher in watchers_at(presence, sides.everyone, update.watchers):
            side = sides.side_of(watcher.watching or "")
            if side is not None:
                watchers.append((watcher, side))
    for item in update.told:
        if isinstance(item, Notice):
            acting = names[item.side]
            outbox.add(next((p for p in seats[item.side] if p.name == acting), None), item.line)
            continue
        table = _Table(update, names, outbox, broadcasts, item.moment, seats, watchers)
        for event in item.events:
            _announce_event(table, event, update.settlement)
    return outbox, broadcasts


def seated(presence: Presence, name: str) -> Peer | None:
    """``name`` while they sit at a table (online, with an opponent: whom a table's
    lines go to); None once they left it."""
    peer = presence.get(name)
    return peer if peer is not None and peer.opponent is not None else None


def seated_side(presence: Presence, sides: Sides, index: Player) -> tuple[Peer, ...]:
    """The members of side ``index`` who sit at the table now."""
    # seated() and Sides.members written out: this runs for both sides of every action
    peers = map(presence.get, (sides.second if index else sides.first).members)
    return tuple([p for p in peers if p is not None and p.opponent is not None])


@dataclass
class _Table:
    """Who is at the table and what one batch's lines go into."""

    update: TableUpdate
    names: tuple[str, str]
    """Who acts for each side."""
    out: Outbox
    broadcasts: list[Broadcast]
    moment: Moment | None
    _seats: tuple[tuple[Peer, ...], tuple[Peer, ...]]
    """Each side's members who sit at the table (looked up once per action)."""
    _watchers: list[tuple[Peer, Player]]
    """Each watcher with the player whose side they see (looked up once per action)."""
    boarded: set[str] = field(default_factory=set)
    """Who got this batch's board (by name)."""

    def side(self, index: Player) -> tuple[Peer, ...]:
        """The members of side ``index`` at the table."""
        return self._seats[index]

    def tell(self, index: Player, *lines: str) -> None:
        """``lines`` to each member of side ``index``."""
        for peer in self._seats[index]:
            self.out.add(peer, *lines)

    def name(self, index: Player) -> str:
        """Who acts for side ``index`` (a match's player)."""
        return self.names[index]

    def watchers(self) -> list[tuple[Peer, Player]]:
        """Each watcher with the player whose side they see."""
        return self._watchers

    def at(self) -> Moment:
        assert self.moment is not None, "events are announced with their moment"
        return self.moment

    def board_to(self, viewer: Peer | None, perspective: Player, *, you: bool) -> None:
        if viewer is not None and viewer.name not in self.boarded:
            self.boarded.add(viewer.name)
            moment = self.moment  # at() written out: a board for each viewer and batch
            assert moment is not None, "events are announced with their moment"
            lines = moment.frame.lines(perspective, viewer.settings.boardstyle, you=you)
            self.out.extend(viewer, lines)

    def board_for_players(self, *sides: Player, toggle: Toggle | None = None) -> None:
        for side in sides:
            for peer in self._seats[side]:
                if toggle is None or peer.toggles[toggle]:
                    self.board_to(peer, side, you=True)

    def board_for_watchers(self) -> None:
        for watcher, perspective in self._watchers:
            self.board_to(watcher, perspective, you=False)

    def to_watchers(self, text_for: Callable[[Player], str]) -> None:
        for watcher, perspective in self._watchers:
            self.out.add(watcher, text_for(perspective))


def _announce_event(t: _Table, event: Event, settlement: Settlement) -> None:
    """Every event type's lines (§4.4-§4.8), for both sides and the watchers."""
    match event:
        case GameStarted():
            for side in (0, 1):
                t.tell(side, replies.starting_new_game(t.name(OPPOSITE[side])))
            t.to_watchers(lambda side: replies.starting_new_game(t.name(OPPOSITE[side])))
        case OpeningRoll():
            _opening_roll(t, event)
        case AutoDoubled():
            for side in (0, 1):
                t.tell(side, replies.cube_now(event.cube))
            t.to_watchers(lambda side: replies.cube_now(event.cube))
        case DiceRolled():
            _dice_rolled(t, event)
        case TurnPassed():
            # "<name> can't move." is a move without checkers (D277, revising D103): the
            # opponent gets its board with autoboard when the server asks them to roll
            # or double next (the BaldLies client acts on boards only), none when the
            # server rolls for them (their roll's board comes at once); the watchers
            # get it as after a move. The one who could not move had theirs (D108).
            t.tell(event.player, replies.YOU_CANT_MOVE)
            text = replies.cant_move(t.name(event.player))
            t.tell(OPPOSITE[event.player], text)
            t.to_watchers(lambda side: text)
            if not t.at().rolled_for:
                t.board_for_players(OPPOSITE[event.player], toggle=Toggle.AUTOBOARD)
            t.board_for_watchers()
        case CheckersMoved():
            colour = t.at().frame.colour(event.player)
            texts = [format_move(m, colour) for m in event.moves]
            line = replies.moves(t.name(event.player), texts)
            t.tell(OPPOSITE[event.player], line)
            t.to_watchers(lambda side: line)
            t.board_for_players(0, 1, toggle=Toggle.AUTOBOARD)
            t.board_for_watchers()
        case CubeOffered():
            more = t.at().redouble_allowed
            doubler, other = event.player, OPPOSITE[event.player]
            t.tell(doubler, replies.you_double(t.name(other), redouble_allowed=more))
            t.tell(other, replies.doubles_offer(t.name(doubler), redouble_allowed=more))
            t.board_for_players(other)
            t.to_watchers(lambda side: replies.doubles(t.name(doubler)))
        case CubeRedoubled():
            more = t.at().redouble_allowed
            who, other = event.player, OPPOSITE[event.player]
            t.tell(who, *replies.you_redouble(event.value, t.name(other), more_allowed=more))
            t.tell(other, replies.redoubles_offer(t.name(who), event.value, more_allowed=more))
            t.board_for_players(other)
            t.to_watchers(lambda side: replies.redoubles(t.name(who)))
        case CubeTaken():
            _cube_taken(t, event)
        case CubeDropped():
            dropper, winner = event.player, OPPOSITE[event.player]
            t.tell(dropper, replies.you_give_up(t.name(winner), event.points))
            t.tell(winner, replies.gives_up_you_win(t.name(dropper), event.points))
            t.to_watchers(
                lambda side: replies.gives_up(t.name(dropper), t.name(winner), event.points)
            )
        case ResignationOffered():
            who, other = event.player, OPPOSITE[event.player]
            t.tell(who, replies.you_want_to_resign(t.name(other), event.points))
            t.tell(other, replies.wants_to_resign(t.name(who), event.points))
            t.to_watchers(
                lambda side: replies.wants_to_resign_watched(
                    t.name(who), t.name(other), event.points
                )
            )
        case ResignationAccepted():
            acceptor, resigner = event.player, OPPOSITE[event.player]
            t.tell(acceptor, replies.you_accept_and_win(event.points))
            line = replies.accepts_and_wins(t.name(acceptor), event.points)
            t.tell(resigner, line)
            t.to_watchers(lambda side: line)
        case ResignationRejected():
            t.tell(event.player, replies.YOU_REJECT)
            line = replies.rejects(t.name(event.player))
            t.tell(OPPOSITE[event.player], line)
            t.to_watchers(lambda side: line)
            # No board (D104): FIBS sends none after a rejected resignation; GammonBot
            # asks for one and MatchDog goes on with the board it has.
        case GameWon():
            _game_won(t, event)
        case MatchWon():
            _match_won(t, event, settlement)
        case _:
            typing.assert_never(event)


def _opening_roll(t: _Table, event: OpeningRoll) -> None:
    for side in (0, 1):
        other = OPPOSITE[side]
        t.tell(side, replies.opening_roll(event.dice[side], t.name(other), event.dice[other]))
        if event.starter == side:
            t.tell(side, replies.YOUR_TURN_TO_MOVE)
        elif event.starter is not None:
            t.tell(side, replies.makes_first_move(t.name(other)))
    t.to_watchers(
        lambda side: replies.opening_roll_watched(
            t.name(side), event.dice[side], t.name(OPPOSITE[side]), event.dice[OPPOSITE[side]]
        )
    )
    if event.starter is not None:
        starter = t.name(event.starter)
        t.to_watchers(lambda p: replies.makes_first_move(starter))
        t.board_for_players(0, 1)
        t.board_for_watchers()


def _dice_rolled(t: _Table, event: DiceRolled) -> None:
    d1, d2 = event.roll
    t.tell(event.player, replies.you_roll(d1, d2))
    if event.moves:
        t.board_for_players(event.player, toggle=Toggle.MOREBOARDS)
        t.tell(event.player, replies.please_move(event.moves))
    else:
        for roller in t.side(event.player):
            if roller.toggles[Toggle.MOREBOARDS]:
                # A roll that cannot be played: the roller's board still shows it, before
                # "You can't move." (D108; MatchDog waits for a board after every roll).
                style = roller.settings.boardstyle
                t.out.extend(roller, t.at().frame.rolled_lines(event.player, event.roll, style))
    other = OPPOSITE[event.player]
    t.tell(other, replies.rolls(t.name(event.player), d1, d2))
    if event.moves:
        t.board_for_players(other, toggle=Toggle.AUTOBOARD)
    t.to_watchers(lambda p: replies.rolls(t.name(event.player), d1, d2))
    if event.moves:
        t.board_for_watchers()


def _cube_taken(t: _Table, event: CubeTaken) -> None:
    taker, doubler = event.player, OPPOSITE[event.player]
    if event.redoubled:
        mine = replies.you_accept_redouble(event.value)
        theirs = replies.accepts_redouble(t.name(taker), event.value)
        watched = replies.accepts_redouble_watched(t.name(taker))
    else:
        mine = replies.you_accept_double(event.value)
        theirs = replies.accepts_double(t.name(taker), event.value)
        watched = replies.accepts_double_watched(t.name(taker))
    t.tell(taker, mine)
    t.tell(doubler, theirs)
    t.to_watchers(lambda side: watched)


def _game_won(t: _Table, event: GameWon) -> None:
    out = t.out
    names = t.names
    moment = t.at()
    winner, loser = event.winner, OPPOSITE[event.winner]
    if event.end is GameEnd.BORNE_OFF:
        t.tell(winner, replies.you_win_game(event.points))
        t.tell(loser, replies.wins_game(t.name(winner), event.points))
        for watcher, _ in t.watchers():
            out.add(watcher, replies.wins_game_watched(t.name(winner), event.points))
    for side in (0, 1):
        for peer in t.side(side):
            if peer.toggles[Toggle.MOVES]:
                record = oldmoves_lines(
                    moment.finished_game, names, t.update.length, moment.frame.o_player
                )
                out.extend(peer, record)
    if moment.phase is Phase.GAME_OVER:
        score = moment.score

        def score_line(side: Player) -> str:
            other = OPPOSITE[side]
            return replies.score_line(
                t.update.length, t.name(side), score[side], t.name(other), score[other]
            )

        for side in (0, 1):
            t.tell(side, score_line(side), replies.JOIN_NEXT_GAME)
        for watcher, side in t.watchers():
            out.add(watcher, score_line(side))


def _match_won(t: _Table, event: MatchWon, settlement: Settlement) -> None:
    """The end of a limited match: the rating report (``toggle ratings``), who won, and the
    report line to everyone with ``toggle report`` (an unlimited match never ends so)."""
    rated = settlement.rated
    if rated is None:
        return
    out = t.out
    winner, loser = event.winner, OPPOSITE[event.winner]
    length = t.update.length
    assert length is not None, "only a limited match is rated"
    a, b = event.score[winner], event.score[loser]
    block = _rating_block(
        rated.change, rated.winner, rated.loser, rated.winner_was[1], rated.loser_was[1]
    )
    for peer in t.side(winner) + t.side(loser):
        if peer.toggles[Toggle.RATINGS]:
            out.extend(peer, block)
    t.tell(winner, replies.you_win_match(length, a, b))
    line = replies.wins_match(t.name(winner), length, a, b)
    t.tell(loser, line)
    for watcher, _ in t.watchers():
        out.add(watcher, line)
    # The report (§4.15 ``toggle report``): one broadcast to every user with the toggle
    # on, sent right after the table's lines (a player's or watcher's comes after theirs).
    report = replies.match_end_report(t.name(winner), t.name(loser), length, a, b)
    t.broadcasts.append(Broadcast((report,), Audience(toggle_on=Toggle.REPORT)))


def _rating_block(
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
