"""Account commands: bye and its synonyms, wave, password, address (§1.8, §4.17)."""

from __future__ import annotations

from protocol import replies
from protocol.parser import ParsedCommand
from server.dispatch import Context
from server.errors import Reply
from server.handlers import handles
from server.output import Payload
from server.passwords import hash_password, verify_password


def log_out(ctx: Context) -> None:
    """Say goodbye and close; cleanup tells the others ``logs out`` (§1.8)."""
    session = ctx.session
    session.logout_text = replies.logs_out
    live = ctx.app.matches.get(session.name)
    if live is not None:
        session.send(replies.game_with_saved(live.opponent_of(session.name)))
    session.send_lines(replies.GOODBYE)
    session.output.close()


@handles("bye")
async def bye(ctx: Context, cmd: ParsedCommand) -> None:
    log_out(ctx)


@handles("wave")
async def wave(ctx: Context, cmd: ParsedCommand) -> None:
    """First ``wave`` waves, the second logs out (§1.8)."""
    session = ctx.session
    again = session.waved
    session.waved = True
    text = replies.waves_again(session.name) if again else replies.waves(session.name)
    payload = Payload([text])  # the same line in both modes: rendered and encoded once
    for other in ctx.app.registry:
        if other is not session and other.logged_in and not other.toggles["silent"]:
            other.send_payload(payload)
    if again:
        session.send(replies.YOU_WAVE_AGAIN)
        log_out(ctx)
    else:
        session.send(replies.YOU_WAVE)


@handles("password")
async def password(ctx: Context, cmd: ParsedCommand) -> None:
    """``password old:new:new`` (§4.17)."""
    parts = cmd.text_after(0).split(":")
    if len(parts) != 3 or not all(parts):
        raise Reply(*replies.PASSWORD_USAGE)
    old, new, again = parts
    if new != again:
        raise Reply(replies.NEW_PASSWORD_TWICE)
    if len(new) < 4:
        raise Reply(replies.PASSWORD_TOO_SHORT)
    user = await ctx.app.db.get_user(ctx.session.name)
    if user is None or not await verify_password(old, user.password_hash):
        raise Reply(replies.OLD_PASSWORD_WRONG)
    await ctx.app.db.set_password_hash(user.name, await hash_password(new, ctx.app.cost))
    ctx.session.send(replies.PASSWORD_CHANGED)


@handles("address")
async def address(ctx: Context, cmd: ParsedCommand) -> None:
    """``address <email>`` (§4.17): stored, shown in CLIP 5 and whois."""
    if not cmd.args:
        raise Reply(replies.ADDRESS_MISSING)
    text = cmd.args[0]
    local, _, domain = text.partition("@")
    if not local or "." not in domain or ":" in text:
        raise Reply(replies.not_an_email(text))
    await ctx.app.db.set_address(ctx.session.name, text)
    ctx.session.address = text
    ctx.session.send(replies.address_set(text))
    ctx.app.registry.who_update(ctx.session)
