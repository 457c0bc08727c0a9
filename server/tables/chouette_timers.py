"""A chouette table's timers (§8, D360): the team's autoroll after the doubling window, and
the cube timer that gives a silent decision the table's default answer.

What is due is read from the core alone (:func:`next_timer`, a rule without a clock);
:class:`ChouetteClock` sets one :class:`~server.clock.Alarm` on the App's timer for it,
anew whenever the table comes to another decision (:func:`stage`), and rings the owner's
callback, which applies :data:`Timed` through the table's commands like any action.

* The team's turn, autoroll on (the default): while a member present could still double,
  the window is ``double_window`` seconds; then, or at once when nobody could double,
  the acting captain's roll goes ahead (which sends the doubles made to the box).
* A cube decision (the box's answer to team doubles, the members' answers to the box's
  double, the raccoon and automatic-double options, the offer of the partner's seat)
  waits ``chouette_answer_time`` seconds (fibs.conf), then :meth:`Chouette.time_out`.
* The box away from the table holds it (D361): no timer runs until the box is back.
* Nothing else has a timer: a move, the box's own roll and a resignation wait.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from backgammon.chouette import Chouette
from backgammon.chouette_state import TEAM, ChouettePhase
from server.clock import Alarm, Timer

_ANSWERS = (
    ChouettePhase.BOX_ANSWER,
    ChouettePhase.TEAM_ANSWER,
    ChouettePhase.RACCOON,
    ChouettePhase.AUTO_DOUBLE,
)


class Timed(enum.Enum):
    """What a chouette's timer does when it runs out."""

    ROLL = enum.auto()
    """The acting captain's roll (the team's autoroll)."""
    TIME_OUT = enum.auto()
    """:meth:`Chouette.time_out`: the default answer of the decision waiting."""


def held(core: Chouette) -> bool:
    """The box is away mid-game: the table waits for it (D361)."""
    box = core.box
    return box is not None and core.phase is not ChouettePhase.WAITING and box in core.absent


def next_timer(core: Chouette, answer_time: float) -> tuple[Timed, float] | None:
    """What is due at ``core`` now and after how many seconds; None: no timer."""
    phase = core.phase
    if phase is ChouettePhase.WAITING:
        if core.partner_offer is not None and answer_time > 0:
            return Timed.TIME_OUT, answer_time
        return None
    if held(core) or core.resignation is not None:
        return None
    if phase is ChouettePhase.TURN and core.turn == TEAM:
        settings = core.settings
        if not settings.team_autoroll or core.acting_captain() is None:
            return None
        could_double = any(core.doubles_for(p) for p in core.players if p not in core.absent)
        return Timed.ROLL, float(settings.double_window) if could_double else 0.0
    if phase in _ANSWERS and answer_time > 0:
        return Timed.TIME_OUT, answer_time
    return None


def stage(core: Chouette) -> tuple[Any, ...]:
    """The decision the table is at: a timer starts anew only when this changes (a
    member's double in the window does not lengthen it)."""
    return (
        core.game,
        core.phase,
        core.turn,
        core.partner_offer,
        core.resignation is not None,
        held(core),
    )


class ChouetteClock:
    """One table's timer: :meth:`update` after every action; ``ring(timed, at)`` when one
    runs out (``at``: the :func:`stage` it was set for, to check it still holds)."""

    def __init__(
        self, timer: Timer, ring: Callable[[Timed, tuple[Any, ...]], None], answer_time: float
    ) -> None:
        self._timer = timer
        self._ring = ring
        self._answer_time = answer_time
        self._alarm = Alarm(timer, self._went_off)
        self._stage: tuple[Any, ...] | None = None
        self._due: Timed | None = None

    def update(self, core: Chouette) -> None:
        """Set the timer for the decision ``core`` is at, unless it runs for it already."""
        now = stage(core)
        if now == self._stage and self._alarm.due is not None:
            return
        self._stage = now
        due = next_timer(core, self._answer_time)
        if due is None:
            self.stop()
            return
        self._due = due[0]
        self._alarm.set(self._timer.now() + due[1])

    def stop(self) -> None:
        """No timer (the table closed, or nothing is due)."""
        self._due = None
        self._alarm.cancel()

    def _went_off(self) -> None:
        timed, at = self._due, self._stage
        self._due = None
        if timed is not None and at is not None:
            self._ring(timed, at)
