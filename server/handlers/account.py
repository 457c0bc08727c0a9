"""Account commands: bye and its synonyms, wave, password, address (§1.8, §4.17), and the
web page's session token (``token!``, D321)."""

from __future__ import annotations

from protocol import replies
from protocol.arguments import parse_address, parse_password_change
from protocol.parser import ParsedCommand
from protocol.replies import Toggle
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.login import new_token, token_digest
from server.world.presence import Audience


def log_out(ctx: Context) -> None:
    """Say goodbye and close; cleanup tells the others ``logs out`` (§1.8)."""
    session = ctx.session
    session.logout_text = replies.logs_out
    opponent = ctx.app.tables.opponent_of(session.name)
    if opponent is not None:
        session.send(replies.game_with_saved(opponent))
    session.send_lines(replies.GOODBYE)
    session.output.close()


async def bye(ctx: Context, cmd: ParsedCommand) -> None:
    log_out(ctx)


async def wave(ctx: Context, cmd: ParsedCommand) -> None:
    """First ``wave`` waves, the second logs out (§1.8)."""
    session = ctx.session
    again = session.waved
    session.waved = True
    text = replies.waves_again(session.name) if again else replies.waves(session.name)
    # The same line in both modes: rendered and encoded once.
    audience = Audience(exclude=frozenset([session.name]), toggle_off=Toggle.SILENT)
    ctx.app.presence.broadcast([text], audience)
    if again:
        session.send(replies.YOU_WAVE_AGAIN)
        log_out(ctx)
    else:
        session.send(replies.YOU_WAVE)


async def password(ctx: Context, cmd: ParsedCommand) -> None:
    """``password old:new:new`` (§4.17)."""
    change = valid(parse_password_change(cmd.text_after(0)))
    user = await ctx.app.db.get_user(ctx.session.name)
    client = ctx.app.password_client(ctx.session.output)
    if user is None or not await ctx.app.passwords.verify(change.old, user.password_hash, client):
        raise Reply(replies.OLD_PASSWORD_WRONG)
    hashed = await ctx.app.passwords.hash(change.new, ctx.app.cost, client)
    await ctx.app.db.set_password_hash(user.name, hashed)
    await ctx.app.db.revoke_web_tokens(user.name)  # every page logs in anew (D323)
    ctx.session.send(replies.PASSWORD_CHANGED)


async def token(ctx: Context, cmd: ParsedCommand) -> None:
    """``token!`` (D321; no FIBS command, only the web page sends it): a new session
    token, to log in again after a dropped connection (``login <client> <clipver> token!
    <token>``, D320). ``token! <old>`` replaces the page's old token (the old one ends),
    ``token! end <token>`` ends one (the page's Log out). A token ends only if it is the
    user's own."""
    name, settings, db = ctx.session.name, ctx.app.settings, ctx.app.db
    args = cmd.args
    if len(args) == 2:
        if args[0] != "end":
            raise Reply(replies.WEB_TOKEN_USAGE)
        await db.revoke_web_token(name, token_digest(args[1]))
        ctx.session.send(replies.WEB_TOKEN_ENDED)
        return
    fresh = new_token()
    await db.issue_web_token(
        name,
        token_digest(fresh),
        lifetime=settings.web_token_lifetime,
        keep=settings.web_tokens_per_user,
        replaces=token_digest(args[0]) if args else None,
    )
    ctx.session.send(replies.web_token(fresh, settings.web_token_lifetime))


async def address(ctx: Context, cmd: ParsedCommand) -> None:
    """``address <email>`` (§4.17): stored, shown in CLIP 5 and whois."""
    if not cmd.args:
        raise Reply(replies.ADDRESS_MISSING)
    text = valid(parse_address(cmd.args[0]))
    await ctx.app.db.set_address(ctx.session.name, text)
    ctx.session.address = text
    ctx.session.send(replies.address_set(text))
    ctx.app.presence.who_update(ctx.session)
