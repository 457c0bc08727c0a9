"""The chouette's words and views (docs/chouette.md; D303, D308): the sub-commands of
``chouette``, a table's settings as ``setting=value`` words and back, and the lines of
``show chouette`` for people and for programs.

Reads the rules core's state (:class:`backgammon.chouette_state.ChouetteState`); the
texts themselves are :mod:`protocol.replies`'.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import fields
from typing import Final

from backgammon.chouette_settings import (
    ChouetteSettings,
    ChouetteSettingsError,
    settings_from_json,
    settings_to_json,
)
from backgammon.chouette_state import BOX, ChouetteAction, ChouettePhase, ChouetteState
from protocol import replies
from protocol.arguments import Invalid

CHOUETTE_WORDS: Final = (
    "open",
    "invite",
    "join",
    "start",
    "leave",
    "show",
    "team",
    "delegate",
    "return",
    "record",
)
"""The sub-commands of ``chouette`` (D303); a unique prefix selects one."""
_TRUE: Final = frozenset({"on", "yes", "true", "1"})
_FALSE: Final = frozenset({"off", "no", "false", "0"})


class Where(enum.Enum):
    """Where a player sits, in ``show chouette``'s totals (D308)."""

    BOX = "box"
    PARTNER = "partner"
    LINE = "line"
    WAITING = "waiting"
    GONE = "gone"


def chouette_word(args: Sequence[str]) -> str | Invalid:
    """The sub-command ``args`` begin with (``show`` when none)."""
    word = args[0].lower() if args else "show"
    chosen = [w for w in CHOUETTE_WORDS if w.startswith(word)]
    return chosen[0] if len(chosen) == 1 else Invalid.of(replies.CHOUETTE_USAGE)


def parse_settings(words: Sequence[str]) -> ChouetteSettings | Invalid:
    """``setting=value`` words over the defaults (docs/chouette.md, "Settings"):
    booleans as on/off, enums by value (``cubes=single``, ``rotation=la``), numbers."""
    data = settings_to_json(ChouetteSettings())
    for word in words:
        key, _, value = word.lower().replace("-", "_").partition("=")
        if key not in data or not value:
            return Invalid.of(replies.chouette_bad_setting(word))
        current = data[key]
        if isinstance(current, bool):
            if value not in _TRUE | _FALSE:
                return Invalid.of(replies.chouette_bad_setting(word))
            data[key] = value in _TRUE
        elif isinstance(current, int):
            if not value.isdigit():
                return Invalid.of(replies.chouette_bad_setting(word))
            data[key] = int(value)
        else:
            data[key] = value
    try:
        return settings_from_json(data)
    except ChouetteSettingsError as error:
        for word in words:  # an enum value that is none of the setting's
            key, _, value = word.lower().replace("-", "_").partition("=")
            if f"setting {key} cannot be" in str(error):
                return Invalid.of(replies.chouette_bad_setting(word))
        return Invalid.of(replies.chouette_settings_clash(str(error)))


def settings_words(settings: ChouetteSettings) -> tuple[str, ...]:
    """Every setting as a ``setting=value`` word, in the order of the fields."""
    words = []
    for f in fields(ChouetteSettings):
        value = getattr(settings, f.name)
        if isinstance(value, bool):
            text = "on" if value else "off"
        elif isinstance(value, enum.Enum):
            text = str(value.value)
        else:
            text = str(value)
        words.append(f"{f.name}={text}")
    return tuple(words)


def where(core: ChouetteState, name: str) -> Where:
    """Where ``name`` sits at ``core``'s table."""
    seats = core.seats
    if not core.at_table(name):
        return Where.GONE
    if name in core.waiting or seats is None:
        return Where.WAITING
    if name == seats.box:
        return Where.BOX
    if name == seats.partner:
        return Where.PARTNER
    return Where.LINE


def _concerned(core: ChouetteState, name: str, action: ChouetteAction) -> tuple[str, ...]:
    """The members whose cubes ``action`` by ``name`` would concern (D405)."""
    match action:
        case ChouetteAction.DOUBLE:
            return core.doubles_for(name)
        case ChouetteAction.TAKE | ChouetteAction.DROP | ChouetteAction.BEAVER:
            return core.answers_for(name)
        case ChouetteAction.ANSWER_DOUBLES:
            return tuple(core.team_doubles)
        case ChouetteAction.BOX_DOUBLE:
            return core.box_may_double()
        case ChouetteAction.RACCOON:
            return core.raccoons_possible()
        case _:
            return ()


def decision_lines(core: ChouetteState) -> list[str]:
    """D405: what each player at the table may do now (the core's ``allowed``, with the
    cubes concerned), who is away, and the delegations, for programs (a page's buttons)."""
    lines = []
    for name in core.players:
        allowed = core.allowed(name) if core.at_table(name) else frozenset()
        lines += [
            replies.chouette_may_line(name, action.value, _concerned(core, name, action))
            for action in ChouetteAction
            if action in allowed
        ]
    lines += [replies.chouette_away_line(name) for name in core.players if name in core.absent]
    lines += [replies.chouette_proxy_line(m, p) for m, p in core.proxies.items()]
    return lines


def show_lines(host: str, core: ChouetteState, *, clip: bool) -> list[str]:
    """``show chouette`` (D308): lines for programs in CLIP mode, for people else."""
    seats = core.seats
    box = seats.box if seats else None
    partner = seats.partner if seats else None
    line = seats.line if seats else ()
    waiting = core.phase is ChouettePhase.WAITING
    on_roll = None if waiting else ("box" if core.turn == BOX else "team")
    settled = {m: core.results.get(m) for m in core.cubes}
    if clip:
        lines = [
            replies.chouette_table_line(
                host, core.game, core.phase.value, box or "-", partner or "-", line, on_roll or "-"
            )
        ]
        lines += [
            replies.chouette_cube_line(
                m,
                c.value,
                c.owner.value,
                c.turned,
                "-" if settled[m] is None else f"{settled[m]:+d}",
            )
            for m, c in core.cubes.items()
        ]
        lines += [
            replies.chouette_total_line(n, t, where(core, n).value) for n, t in core.standings()
        ]
        return [*lines, *decision_lines(core), replies.CHOUETTE_END_LINE]
    lines = [replies.chouette_heading(host, core.game)]
    if box is not None:
        lines.append(replies.chouette_show_seats(box, partner, line))
    if core.waiting:
        lines.append(replies.chouette_show_waiting(core.waiting))
    lines.append(replies.chouette_show_phase(core.phase.value, on_roll))
    lines += [
        replies.chouette_show_cube(m, c.value, c.owner.value, c.turned, settled[m])
        for m, c in core.cubes.items()
    ]
    lines += [replies.chouette_show_total(n, t, where(core, n).value) for n, t in core.standings()]
    return lines
