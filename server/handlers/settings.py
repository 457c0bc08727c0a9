"""``toggle``, ``set`` and ``save`` (§4.15, §4.16): stored at once, restored at login."""

from __future__ import annotations

import dataclasses
import zoneinfo
from functools import cache
from typing import Any

from db.records import SORTWHO_VALUES, UserSettings
from protocol import replies
from protocol.parser import ParsedCommand
from server.context import Context
from server.errors import Reply


async def store(ctx: Context) -> None:
    """Persist the session's toggles and settings."""
    session = ctx.session
    await ctx.app.db.save_settings(session.name, session.toggles, session.settings)


async def toggle(ctx: Context, cmd: ParsedCommand) -> None:
    """``toggle`` lists; ``toggle a b`` flips each and answers one line each."""
    session = ctx.session
    if not cmd.args:
        session.send_lines(replies.toggle_list(session.toggles))
        return
    changed = False
    for arg in cmd.args:
        name = _toggle_name(arg.lower())
        if name is None:
            session.send(replies.dont_know_toggle(arg))
            continue
        session.toggles[name] = not session.toggles[name]
        session.send(replies.toggle_message(name, session.toggles[name]))
        changed = True
        if name == "ready":
            ctx.app.presence.who_update(session)
    if changed:
        await store(ctx)


def _toggle_name(word: str) -> str | None:
    """A toggle's name from its name, a synonym or a unique prefix."""
    word = replies.TOGGLE_SYNONYMS.get(word, word)
    if word in replies.TOGGLES:
        return word
    found = [t for t in replies.TOGGLES if t.startswith(word)]
    return found[0] if len(found) == 1 else None


async def save(ctx: Context, cmd: ParsedCommand) -> None:
    await store(ctx)
    ctx.session.send(replies.SETTINGS_SAVED)


def _shown(settings: UserSettings) -> dict[str, str]:
    redoubles = settings.redoubles
    return {
        "boardstyle": str(settings.boardstyle),
        "linelength": str(settings.linelength),
        "pagelength": str(settings.pagelength),
        "redoubles": "unlimited"
        if redoubles is None
        else "none"
        if redoubles == 0
        else str(redoubles),
        "sortwho": settings.sortwho,
        "timezone": settings.timezone,
    }


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) | {"UTC"}


def timezone_or_reply(text: str) -> str:
    """A known IANA zone name, or raise the §4.14 reply with the list of zones."""
    if text in _zones():
        return text
    raise Reply(replies.bad_timezone(text), *replies.zone_list(sorted(_zones())))


async def set_variable(ctx: Context, cmd: ParsedCommand) -> None:
    """``set``, ``set <var>``, ``set <var> <value>`` (§4.16)."""
    session = ctx.session
    shown = _shown(session.settings)
    if not cmd.args:
        session.send_lines(replies.set_list(shown))
        return
    name = cmd.args[0].lower()
    matches = [v for v in replies.SET_VARIABLES if v.startswith(name)]
    if len(matches) != 1:
        raise Reply(replies.SET_INVALID)
    name = matches[0]
    if len(cmd.args) == 1:
        session.send(replies.set_value(name, shown[name]))
        return
    value = cmd.args[1]
    session.settings = dataclasses.replace(session.settings, **{name: _parse(name, value)})
    await store(ctx)
    session.send(replies.set_changed(name, _shown(session.settings)[name]))
    if name == "redoubles":
        ctx.app.presence.who_update(session)


def _parse(name: str, value: str) -> Any:
    """The stored value of ``set name value``, or raise its §4.16 error."""
    if name == "boardstyle":
        if value not in ("1", "2", "3"):
            raise Reply(replies.BOARDSTYLE_INVALID)
        return int(value)
    if name in ("linelength", "pagelength"):
        if not value.isdigit():
            return 0  # §4.16: a non-number sets 0
        number = int(value)
        if number > 999:
            raise Reply(replies.LENGTH_INVALID)
        return number
    if name == "redoubles":
        lowered = value.lower()
        if lowered == "none":
            return 0
        if lowered == "unlimited":
            return None
        if value.isdigit() and 1 <= int(value) <= 99:
            return int(value)
        raise Reply(replies.REDOUBLES_INVALID)
    if name == "sortwho":
        if value.lower() not in SORTWHO_VALUES:
            raise Reply(replies.sortwho_invalid(value))
        return value.lower()
    return timezone_or_reply(value)
