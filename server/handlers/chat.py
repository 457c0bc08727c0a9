"""Chat (§4.12, §4.13, §2.4): tell, tellx, say, shout, message, alert, away/back,
gag, blind and waitfor.

Who hears what: a user who gagged the sender does not hear them (a tell answers
``** <name> won't listen to you.``), and you cannot talk to someone you gagged; shouts
skip users with ``silent`` on; a BEL follows a tell, say, message or alert for a
recipient with ``bell`` on (§2.4, D74). Every line is rendered in the recipient's mode
(CLIP number or telnet prose). kibitz and whisper belong to the match handlers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence

from db.errors import MessageLimitError, UnknownUserError
from protocol import replies
from protocol.parser import ParsedCommand
from protocol.replies import Mode, Toggle
from server.errors import Reply
from server.handlers.context import Context
from server.login import deliver_stored
from server.world.presence import Audience, Peer
from server.world.session import Session

Render = Callable[[str, str, Mode], str]
"""A recipient's line from (sender, text, recipient's mode): ``replies.says`` etc."""


def ring(recipient: Peer, line: str) -> str:
    """``line`` with a BEL when the recipient has ``toggle bell`` on (§2.4)."""
    return line + replies.BELL if recipient.toggles[Toggle.BELL] else line


def check_gag(sender: Session, recipient: str, recipient_gags: Iterable[str]) -> None:
    """Refuse talk between a user and someone who gagged (or was gagged by) them (§4.12).

    :raises Reply: ``** You can't talk if you won't listen.`` / ``** <name> won't listen to you.``
    """
    if recipient in sender.gagged:
        raise Reply(replies.CANT_TALK_WONT_LISTEN)
    if sender.name in recipient_gags:
        raise Reply(replies.wont_listen(recipient))


def text_or_usage(cmd: ParsedCommand, skip: int) -> str:
    """The chat text after ``skip`` arguments, spacing kept, or the usage reply (D71)."""
    text = cmd.text_after(skip)
    if not text:
        raise Reply(replies.usage(cmd.command.synopsis))
    return text


def talk(ctx: Context, target: Peer, text: str, render: Render = replies.says) -> None:
    """Deliver a tell (or say/alert) to ``target`` and echo it as CLIP 16 (§4.12)."""
    session = ctx.session
    if target.name == session.name:
        session.send(replies.say_to_yourself(text))
        return
    check_gag(session, target.name, target.gagged)
    ctx.app.presence.send(target, ring(target, render(session.name, text, target.mode)))
    session.send(replies.you_say(target.name, text, session.mode))
    if target.away is not None:
        session.send(replies.is_away(target.name, target.away))


# -- tell, tellx, alert, say, shout ---------------------------------------------------------


async def tell(ctx: Context, cmd: ParsedCommand) -> None:
    """``tell <name> <text>``: name completion (§4.1, §4.12)."""
    text = text_or_usage(cmd, 1)
    talk(ctx, await ctx.app.complete(cmd.args[0]), text)


async def tellx(ctx: Context, cmd: ParsedCommand) -> None:
    """``tellx <name> <text>``: the exact name, no completion (§4.2; bots use it)."""
    text = text_or_usage(cmd, 1)
    target = ctx.app.presence.get(cmd.args[0])
    if target is None or not target.logged_in:
        raise Reply(replies.no_one_called(cmd.args[0]))
    talk(ctx, target, text)


async def alert(ctx: Context, cmd: ParsedCommand) -> None:
    """``alert <name> <text>``: a tell shown as CLIP 20 (§2.1 ⚠, optional; BaldLies)."""
    text = text_or_usage(cmd, 1)
    talk(ctx, await ctx.app.complete(cmd.args[0]), text, replies.alert)


async def say(ctx: Context, cmd: ParsedCommand) -> None:
    """``say <text>`` to the opponent: 12 to them, 16 with their name to you (§4.12, D44)."""
    session = ctx.session
    target = ctx.app.presence.get(session.opponent) if session.opponent else None
    if target is None:
        raise Reply(replies.SAY_OUTSIDE_GAME)
    talk(ctx, target, text_or_usage(cmd, 0))


async def shout(ctx: Context, cmd: ParsedCommand) -> None:
    """``shout <text>``: 13 to everyone who hears shouts, 17 to you (§4.12, §6.5)."""
    session = ctx.session
    if session.toggles[Toggle.SILENT]:
        raise Reply(replies.TOGGLE_SILENT_BEFORE_SHOUT)
    text = text_or_usage(cmd, 0)
    name = session.name
    if not ctx.app.shout_pace.allows(name):
        raise Reply(replies.SHOUTING_TOO_MUCH)  # D300
    ctx.app.shout_pace.count(name)
    ctx.app.presence.broadcast(
        lambda mode: [replies.shouts(name, text, mode)],
        Audience(exclude=frozenset([name]), toggle_off=Toggle.SILENT, not_gagging=name),
    )
    session.send(replies.you_shout(text, session.mode))


# -- message ------------------------------------------------------------------------------


async def message(ctx: Context, cmd: ParsedCommand) -> None:
    """``message <name> <text>``: delivered at once (9, and 10 to you) to a logged-in
    user, else stored (11) and delivered at their next login; ``message`` alone delivers
    what is stored for you (§4.12, D74)."""
    session = ctx.session
    app = ctx.app
    if not cmd.args:
        await _read_messages(ctx)
        return
    name = cmd.args[0]
    text = text_or_usage(cmd, 1)
    target = app.presence.get(name)
    if target is not None and target.logged_in:
        check_gag(session, name, target.gagged)
        line = replies.message_line(session.name, _now(ctx), text, target.mode)
        app.presence.send(target, ring(target, line))
        session.send(replies.message_delivered(name, session.mode))
        return
    user = await app.db.get_user(name)
    if user is None:
        raise Reply(replies.dont_know_user(name))
    check_gag(session, name, user.gagged)
    try:
        await app.db.store_message(
            name,
            session.name,
            text,
            sent_at=_now(ctx),
            max_for_recipient=app.settings.max_stored_messages,
            max_from_sender=app.settings.max_stored_messages_per_sender,
        )
    except MessageLimitError as full:  # D270
        raise Reply(
            replies.TOO_MANY_MESSAGES_SENT if full.by_sender else replies.messages_full(name)
        ) from None
    session.send(replies.message_saved(name, session.mode))


async def _read_messages(ctx: Context) -> None:
    """``message`` alone: what is stored for you, confirmed by your next line (D270)."""
    messages = await ctx.app.db.messages_for(ctx.session.name)
    if not messages:
        raise Reply(replies.NO_NEW_MESSAGES)
    deliver_stored(ctx.session, messages)


def _now(ctx: Context) -> int:
    return int(ctx.app.clock())


# -- away and back ------------------------------------------------------------------------


async def away(ctx: Context, cmd: ParsedCommand) -> None:
    """``away <message>`` marks you away; ``away`` lists who is (§4.13).

    The reply to ``away <message>`` is the ``You're away. Please type 'back'`` line that
    follows every reply while away (:meth:`Session.end_reply`).
    """
    session = ctx.session
    text = cmd.text_after(0)
    if text:
        session.away = text
        ctx.app.presence.who_update(session)
        return
    gone = [s for s in ctx.app.presence.users() if s.away is not None]
    if not gone:
        raise Reply(replies.NONE_AWAY)
    session.send(replies.AWAY_HEADER)
    session.send_lines(
        replies.away_entry(replies.CALLER_NAME if s.name == session.name else s.name, s.away or "")
        for s in gone
    )


async def back(ctx: Context, cmd: ParsedCommand) -> None:
    """``back`` clears away (§4.13)."""
    session = ctx.session
    if session.away is None:
        raise Reply(replies.NOT_AWAY)
    session.away = None
    session.send(replies.WELCOME_BACK)
    ctx.app.presence.who_update(session)


# -- gag and blind ------------------------------------------------------------------------


async def _user_name(ctx: Context, prefix: str) -> str:
    """A logged-in user's completed name, else an exact registered name (D74).

    :raises Reply: ``** There is no one called '<name>'``, or an ambiguous prefix.
    """
    online = await ctx.app.find(prefix)
    if online is not None:
        return online.name
    if await ctx.app.db.user_exists(prefix):
        return prefix
    raise Reply(replies.no_one_quoted(prefix))


async def _toggle_listed(
    ctx: Context,
    cmd: ParsedCommand,
    listed: set[str],
    add: Callable[[str, str], Awaitable[bool]],
    remove: Callable[[str, str], Awaitable[bool]],
    texts: tuple[Callable[[Sequence[str]], str], str, Callable[[str], str], Callable[[str], str]],
) -> str | None:
    """``gag``/``blind``: list, or flip one user on the caller's stored list (§4.12).

    ``texts`` are the list line, the reply to naming yourself, and the on/off replies.
    Returns the name that was added, if any.
    """
    show, yourself, on, off = texts
    session = ctx.session
    if not cmd.args:
        session.send(show(sorted(listed)))
        return None
    name = await _user_name(ctx, cmd.args[0])
    if name == session.name:
        raise Reply(yourself)
    if name in listed:
        await remove(session.name, name)
        listed.discard(name)
        session.send(off(name))
        return None
    try:
        await add(session.name, name)
    except UnknownUserError:
        raise Reply(replies.no_one_quoted(name)) from None
    listed.add(name)
    session.send(on(name))
    return name


async def gag(ctx: Context, cmd: ParsedCommand) -> None:
    """``gag`` lists; ``gag <name>`` toggles ignoring name; stored (§4.12)."""
    db = ctx.app.db
    texts = (replies.gagged_users, replies.GAG_YOURSELF, replies.you_gag, replies.you_ungag)
    await _toggle_listed(ctx, cmd, ctx.session.gagged, db.add_gag, db.remove_gag, texts)


async def blind(ctx: Context, cmd: ParsedCommand) -> None:
    """``blind`` lists; ``blind <name>`` toggles banning name from watching you (§4.12);
    a blinded user who is watching you stops at once (§4.11)."""
    db = ctx.app.db
    texts = (replies.blinded_users, replies.BLIND_YOURSELF, replies.you_blind, replies.you_unblind)
    name = await _toggle_listed(ctx, cmd, ctx.session.blinded, db.add_blind, db.remove_blind, texts)
    presence = ctx.app.presence
    watcher = presence.get(name) if name is not None else None
    if watcher is None or watcher.watching is None:
        return
    ctx.app.tables.ban_watcher(ctx.session.name, watcher)


# -- waitfor ------------------------------------------------------------------------------


async def waitfor(ctx: Context, cmd: ParsedCommand) -> None:
    """``waitfor`` lists; ``waitfor <name> ...`` asks to be told when each logs in
    (§4.12; the presence tells the waiter at that login)."""
    session = ctx.session
    if not cmd.args:
        session.send_lines(replies.waiting_for(sorted(session.waiting_for)))
        return
    for name in cmd.args:
        online = ctx.app.presence.get(name)
        if name == session.name:
            session.send(replies.WAITFOR_YOURSELF)
        elif online is not None and online.logged_in:
            session.send(replies.already_logged_in(name))
        elif not await ctx.app.db.user_exists(name):
            session.send(replies.no_user_called(name))
        else:
            session.waiting_for.add(name)
            session.send(replies.will_receive_message(name))
