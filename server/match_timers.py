"""The clock of a running match: remind the player who must act, then free the other.

After every action the clock restarts for the player who must act next (D55): after
``match_reminder`` seconds they are reminded that their opponent waits, and after
``match_timeout`` seconds the waiting player is told they may leave (the match stays
saved). The timers only send those notices (through the presence: either player may
be on another node); they never change the match.
"""

from __future__ import annotations

import asyncio

from protocol import replies
from server.app import App
from server.matches import LiveMatch


def watch_the_clock(app: App, live: LiveMatch) -> None:
    """Start the reminder and time-out for whoever must act in ``live`` now (D55).

    Restarted after every action; stopped (:func:`stop_the_clock`) when the match leaves
    the table.
    """
    stop_the_clock(live)
    player = live.match.to_act
    reminder = app.settings.match_reminder
    timeout = app.settings.match_timeout
    if player is None or not (reminder or timeout):
        return
    slow, waiting = live.names[player], live.names[1 - player]
    loop = asyncio.get_running_loop()

    def remind() -> None:
        peer = app.presence.get(slow)
        if peer is not None:
            app.presence.send(peer, replies.turn_reminder(waiting))
        if timeout > reminder:
            live.watchdog = loop.call_later(timeout - reminder, expire)
        else:
            live.watchdog = None

    def expire() -> None:
        live.watchdog = None
        peer = app.presence.get(waiting)
        if peer is not None:
            app.presence.send(peer, replies.opponent_too_slow(slow, int(timeout)))

    if reminder and (not timeout or reminder < timeout):
        live.watchdog = loop.call_later(reminder, remind)
    else:
        live.watchdog = loop.call_later(timeout, expire)


def stop_the_clock(live: LiveMatch) -> None:
    """Cancel ``live``'s pending reminder or time-out, if any."""
    if live.watchdog is not None:
        live.watchdog.cancel()
        live.watchdog = None
