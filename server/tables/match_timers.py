"""The clock of a running match: remind the player who must act, then free the other.

After every action the clock restarts for the player who must act next (D55): after
``match_reminder`` seconds they are reminded that their opponent waits, and after
``match_timeout`` seconds the waiting player is told they may leave (the match stays
saved). The clock only sends those notices (through the presence: either player may
be on another node); it never changes the match. It runs on the App's timer, on one
:class:`~server.clock.Alarm` per match, so that a restart after each action costs no
timer of the event loop's (docs/performance.md §13).
"""

from __future__ import annotations

from backgammon.board import Player
from protocol import replies
from server.clock import Alarm
from server.tables.host import TableHost
from server.tables.matches import LiveMatch
from server.tables.sides import OPPOSITE


class Clock:
    """One match's reminder and time-out for whoever must act (D55): the
    :class:`server.tables.matches.MatchClock` of a :class:`~server.tables.matches.LiveMatch`."""

    def __init__(self, app: TableHost, live: LiveMatch) -> None:
        self._app = app
        self._live = live
        self._alarm = Alarm(app.timer, self._ring)
        self._player: Player | None = None
        self._started = 0.0
        self._reminder = 0.0
        self._timeout = 0.0
        self._reminded = False

    def restart(self) -> None:
        """Start the time anew for whoever must act now (nobody: the clock stops)."""
        settings = self._app.settings
        reminder, timeout = settings.match_reminder, settings.match_timeout
        player = self._live.match.to_act
        if player is None or not (reminder or timeout):
            self.stop()
            return
        self._player = player
        self._started = self._app.timer.now()
        self._reminder, self._timeout = reminder, timeout
        # No reminder when it would come with or after the time-out.
        self._reminded = not (reminder and (not timeout or reminder < timeout))
        self._alarm.set(self._started + (timeout if self._reminded else reminder))

    def stop(self) -> None:
        """No notice until the next :meth:`restart`."""
        self._player = None
        self._alarm.cancel()

    def _ring(self) -> None:
        player = self._player
        if player is None:
            return
        names = self._live.names
        slow, waiting = names[player], names[OPPOSITE[player]]
        presence = self._app.presence
        if not self._reminded:
            self._reminded = True
            peer = presence.get(slow)
            if peer is not None:
                presence.send(peer, replies.turn_reminder(waiting))
            if self._timeout > self._reminder:
                self._alarm.set(self._started + self._timeout)
            return
        self._player = None
        peer = presence.get(waiting)
        if peer is not None:
            presence.send(peer, replies.opponent_too_slow(slow, int(self._timeout)))


def watch_the_clock(app: TableHost, live: LiveMatch) -> None:
    """Start the reminder and time-out for whoever must act in ``live`` now (D55).

    Restarted after every action; stopped (:func:`stop_the_clock`) when the match leaves
    the table.
    """
    if live.clock is None:
        live.clock = Clock(app, live)
    live.clock.restart()


def stop_the_clock(live: LiveMatch) -> None:
    """Stop ``live``'s pending reminder or time-out, if any."""
    if live.clock is not None:
        live.clock.stop()
