"""``toggle``, ``set`` and ``save`` (§4.15, §4.16): stored at once, restored at login."""

from __future__ import annotations

import dataclasses
import zoneinfo
from functools import cache
from typing import Any

from db.records import UserSettings
from protocol import replies
from protocol.arguments import (
    SetVariable,
    parse_dice_seed,
    parse_set_value,
    parse_set_variable,
    parse_timezone,
    parse_toggle_name,
    redoubles_shown,
)
from protocol.parser import ParsedCommand
from protocol.replies import Toggle
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.world.session import Session, storable_toggles


async def store(ctx: Context) -> None:
    """Persist the session's toggles and settings."""
    session = ctx.session
    await ctx.app.db.save_settings(
        session.name, storable_toggles(session.toggles), session.settings
    )


async def toggle(ctx: Context, cmd: ParsedCommand) -> None:
    """``toggle`` lists; ``toggle a b`` flips each and answers one line each."""
    session = ctx.session
    if not cmd.args:
        session.send_lines(replies.toggle_list(session.toggles))
        return
    changed = False
    for arg in cmd.args:
        name = parse_toggle_name(arg)
        if name is None:
            session.send(replies.dont_know_toggle(arg))
            continue
        session.toggles[name] = not session.toggles[name]
        session.send(replies.toggle_message(name, session.toggles[name]))
        changed = True
        if name is Toggle.READY:
            ctx.app.presence.who_update(session)
    if changed:
        await store(ctx)


async def save(ctx: Context, cmd: ParsedCommand) -> None:
    await store(ctx)
    ctx.session.send(replies.SETTINGS_SAVED)


def _shown(settings: UserSettings) -> dict[SetVariable, str]:
    """Every variable's value as ``set`` shows it."""
    return {
        SetVariable.BOARDSTYLE: str(settings.boardstyle),
        SetVariable.LINELENGTH: str(settings.linelength),
        SetVariable.PAGELENGTH: str(settings.pagelength),
        SetVariable.REDOUBLES: redoubles_shown(settings.redoubles),
        SetVariable.SORTWHO: settings.sortwho,
        SetVariable.TIMEZONE: settings.timezone,
    }


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) | {replies.UTC_ZONE}


def zones() -> frozenset[str]:
    """Every zone name ``set timezone`` and ``time`` accept."""
    return _zones()


def timezone_or_reply(text: str, clip: bool) -> str:
    """A known IANA zone name, or raise the reply: in CLIP mode FIBS's, with the list
    of zones (§4.14, D73); in telnet mode one line saying how to list them (D177)."""
    if not clip and text not in _zones():
        raise Reply(replies.unknown_timezone(text))
    return valid(parse_timezone(text, _zones()))


async def set_variable(ctx: Context, cmd: ParsedCommand) -> None:
    """``set``, ``set <var>``, ``set <var> <value>`` (§4.16)."""
    session = ctx.session
    shown = _shown(session.settings)
    if not cmd.args:
        session.send_lines(replies.set_list({v.value: text for v, text in shown.items()}))
        return
    variable = valid(parse_set_variable(cmd.args[0]))
    name = variable.value
    if variable is SetVariable.DICE_SEED:
        _dice_seed(session, cmd.args[1:])
        return
    if len(cmd.args) == 1:
        session.send(replies.set_value(name, shown[variable]))
        return
    if variable is SetVariable.TIMEZONE:
        timezone_or_reply(cmd.args[1], ctx.clip)
    value = valid(parse_set_value(variable, cmd.args[1], _zones()))
    changes: dict[str, Any] = {name: value}  # the variable's name is its field's
    session.settings = dataclasses.replace(session.settings, **changes)
    await store(ctx)
    session.send(replies.set_changed(name, _shown(session.settings)[variable]))
    if variable is SetVariable.REDOUBLES:
        ctx.app.presence.who_update(session)


def _dice_seed(session: Session, words: tuple[str, ...]) -> None:
    """``set dice_seed [<text>]`` (D276): show or set the seed the caller adds to the dice
    of their next matches. It lasts the session and is not stored: a seed is chosen for
    the matches ahead, best after their invitation's commitment (docs/dice.md)."""
    name = SetVariable.DICE_SEED.value
    if not words:
        session.send(replies.set_value(name, session.dice_seed or replies.DICE_SEED_UNSET))
        return
    session.dice_seed = valid(parse_dice_seed(words))
    session.send(replies.set_changed(name, session.dice_seed))
