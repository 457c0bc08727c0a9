"""Guest registration (§1.7): ``name <x>``, then the password twice, then logged in.

New accounts are limited per minute, in all and per address (D267): ``name`` is
refused over a limit, and so is the account's creation if others were made meanwhile.

``name`` is an ordinary command of the guest state. A good name moves the session into
the password dialog: :attr:`SessionState.NEW_PASSWORD` and then
:attr:`SessionState.RETYPE_PASSWORD`, whose next line dispatch hands to
:func:`new_password` and :func:`retype_password` as typed (server/handlers/bindings.py). No
password, or a name taken meanwhile, goes back to the guest state.
"""

from __future__ import annotations

from db.errors import UserExistsError
from protocol import replies
from protocol.arguments import LEAVE, name_form_problem, new_password_problem
from protocol.commands import SessionState
from protocol.parser import ParsedCommand
from server.app import App
from server.errors import Reply
from server.handlers.account import log_out
from server.handlers.context import Context
from server.login import complete_login
from server.world.session import (
    DEFAULT_SETTINGS,
    DEFAULT_TOGGLES,
    NewAccount,
    storable_toggles,
)


async def name_problem(app: App, name: str, *, scrubbed: bool = False) -> str | None:
    """Why ``name`` cannot be registered (the reply), or None when it can; ``scrubbed``:
    it was typed with control characters (D265)."""
    problem = name_form_problem(name, scrubbed=scrubbed)
    if problem is None and await app.db.names_like(name):  # taken, also in another case (D269)
        return replies.name_taken(name)
    return problem


async def name(ctx: Context, cmd: ParsedCommand) -> None:
    """``name <x>``: check the name, then ask for its password with echo off."""
    session = ctx.session
    chosen = cmd.args[0]
    problem = ctx.app.registrations.refusal(session.output.host) or await name_problem(
        ctx.app, chosen, scrubbed=cmd.scrubbed
    )
    if problem:
        raise Reply(problem)
    session.new_account = NewAccount(chosen)
    session.state = SessionState.NEW_PASSWORD
    output = session.output
    session.send(replies.name_will_be(chosen), replies.NO_PASSWORD_HINT)
    output.echo_off()
    output.prompt(replies.GIVE_PASSWORD_PROMPT)


async def new_password(ctx: Context, line: str) -> None:
    """The password (first time): none gives up, a bad one is asked again."""
    session = ctx.session
    output = session.output
    password = line.strip()
    if not password:
        output.echo_on()
        session.send("", replies.NO_PASSWORD_GIVEN)  # "": the line end the hidden input lacked
        _back_to_guest(ctx)
        return
    if password == LEAVE:
        leave(ctx)
        return
    session.send("")  # the line end of the hidden input (D190)
    problem = new_password_problem(password)
    if problem is not None:
        session.send(problem)
        output.prompt(replies.GIVE_PASSWORD_PROMPT)
        return
    assert session.new_account is not None
    session.new_account = NewAccount(session.new_account.name, password)
    session.state = SessionState.RETYPE_PASSWORD
    output.prompt(replies.RETYPE_PASSWORD_PROMPT)


async def retype_password(ctx: Context, line: str) -> None:
    """The password again: a mismatch starts over, a match creates the account."""
    session = ctx.session
    output = session.output
    account = session.new_account
    assert account is not None
    if line.strip() == LEAVE:
        leave(ctx)
        return
    if line.strip() != account.password:
        session.state = SessionState.NEW_PASSWORD
        session.send("")  # the line end of the hidden input (D190)
        output.prompt(replies.PASSWORDS_DIFFER_PROMPT)
        return
    output.echo_on()
    session.send("")
    refusal = ctx.app.registrations.refusal(output.host)  # others registered meanwhile
    if refusal is not None:
        _back_to_guest(ctx)
        raise Reply(refusal)
    ctx.app.registrations.count(output.host)
    hashed = await ctx.app.passwords.hash(
        account.password, ctx.app.cost, ctx.app.password_client(output)
    )
    try:
        user = await ctx.app.db.create_user(
            account.name,
            hashed,
            toggles=storable_toggles(DEFAULT_TOGGLES),
            settings=DEFAULT_SETTINGS,
        )
    except UserExistsError:
        _back_to_guest(ctx)
        raise Reply(replies.name_taken(account.name)) from None
    session.new_account = None
    session.prompts = True
    session.state = None
    await complete_login(
        ctx.app, session, user, first_lines=(replies.REGISTERED, replies.REGISTERED_HINT)
    )


def leave(ctx: Context) -> None:
    """``bye`` at a password prompt: echo back on, the line end, and log out (§1.8)."""
    ctx.session.output.echo_on()
    ctx.session.send("")
    _back_to_guest(ctx)
    log_out(ctx)


def _back_to_guest(ctx: Context) -> None:
    ctx.session.new_account = None
    ctx.session.state = SessionState.GUEST
