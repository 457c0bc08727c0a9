"""The login dialog (§1): CLIP login, telnet login, autologin, entering as a guest.

Until a user is logged in, the connection answers only the ``login: `` prompt; a
failed login gets nothing but a new prompt (§1.5), and the connection closes after
``[limits] login_attempts`` failures or when its ``[limits] login_timeout`` from the
connect has run out (D231). Every password check first waits its turn in the login
throttle (server/doors/throttle.py, D232, D266), a little longer each time for the same
address and, once that address has failed on it, the same name.
``guest`` ends this dialog too: the guest state's commands, ``name`` and its password
prompts among them, run through dispatch (server/handlers/registration.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence

from db.errors import DatabaseError, DatabaseOutage
from db.records import StoredMessage, User
from protocol import clip, replies
from protocol.arguments import LEAVE, TOKEN, LoginKind, parse_login_line
from protocol.commands import SessionState
from protocol.parser import ScrubbedLine, clean
from protocol.replies import Mode
from server.app import App
from server.doors.output import TOO_LONG, LineSource, Payload
from server.errors import Reply
from server.tables.seam import ChouetteReturn
from server.world.presence import WHO_END
from server.world.session import Session
from server.world.visitors import enter_as_visitor

log = logging.getLogger(__name__)

MAX_CLIENT_NAME = 20
"""§1.3: a longer client name makes the CLIP login fail."""

ReadLine = Callable[[], Awaitable[str | None]]


def reader_before_login(app: App, session: Session, lines: LineSource) -> ReadLine:
    """Read a line before login: None at EOF, or (after ``Connection timed out.``) when
    the connection's time to log in (:attr:`Session.login_deadline`) has run out;
    without a login time-out, after the idle timeout (silently)."""

    async def read() -> str | None:
        deadline = session.login_deadline
        timeout = app.settings.idle_timeout or None
        if deadline is not None:
            timeout = max(deadline - app.timer.now(), 0.0)
        try:
            return await app.timer.wait_for(lines.readline(), timeout)
        except TimeoutError:
            if deadline is not None:
                _time_out(session)
            return None

    return read


def _time_out(session: Session) -> None:
    session.output.send([replies.CONNECTION_TIMED_OUT])
    session.output.close()


async def login_dialog(app: App, session: Session, read: ReadLine) -> bool:
    """Run the dialog until a user is logged in or a guest entered (True), or the
    connection gives up (False)."""
    output = session.output
    if app.settings.login_timeout:
        session.login_deadline = app.timer.now() + app.settings.login_timeout
    now = dt.datetime.fromtimestamp(app.clock(), dt.UTC)
    output.send(replies.banner(now.astimezone(), now))
    output.prompt(replies.LOGIN_PROMPT)
    failures = 0
    while failures < app.settings.login_attempts:
        raw = await read()
        if raw is None:
            return False
        line = "" if raw == TOO_LONG else clean(raw)
        try:
            outcome = await _login_line(
                app, session, line, read, scrubbed=isinstance(raw, ScrubbedLine)
            )
        except DatabaseOutage as error:  # the account could not be read (D296)
            app.outage_log.warning(f"login from {output.host}", error)
            output.send([replies.DATABASE_OUTAGE])
            outcome = False
        if outcome is None:
            continue
        if outcome is True or output.closing:
            return outcome is True
        failures += 1
        output.prompt(replies.LOGIN_PROMPT)
    output.close()
    return False


async def _login_line(
    app: App, session: Session, line: str, read: ReadLine, *, scrubbed: bool = False
) -> bool | None:
    """One line at ``login:``: True when a user is logged in or a guest or visitor
    entered, False when it failed (or the connection is ending), None for a blank line
    (the prompt again, not counted).

    ``scrubbed``: the transport removed control characters from the line. A login with
    a name or password then fails, as a wrong password does (D299): ``ali<NUL>ce``
    logged in as ``alice`` before, as the name check of a registration refuses it
    (D265)."""
    output = session.output
    login = parse_login_line(line)
    words = login.words
    if scrubbed and login.kind in (LoginKind.CLIP, LoginKind.CONNECT):
        return False
    if scrubbed and login.kind is LoginKind.NAME:
        await _telnet_login(app, session, words[0], read, refuse=True)
        return False
    match login.kind:
        case LoginKind.BLANK:
            output.prompt(replies.LOGIN_PROMPT)
            return None
        case LoginKind.GUEST:
            enter_as_guest(app, session)
            return True
        case LoginKind.VISITOR:
            if not enter_as_visitor(app, session, words):  # refused and closed
                return False
            leave_pre_login(app, session)  # max_visitors bounds it now (D257)
            return True
        case LoginKind.CLIP:
            return await _clip_login(app, session, words)
        case LoginKind.TOKEN:
            return await _token_login(app, session, words)
        case LoginKind.CONNECT:
            return await _password_login(app, session, words[1], words[2], prompts=False)
        case LoginKind.LEAVE:
            _leave(session)
            return False
        case LoginKind.NAME:
            answer = await _telnet_login(app, session, words[0], read)
            return bool(answer)  # None: bye at the password prompt, closed
        case LoginKind.UNKNOWN:
            return False


async def _authenticate(app: App, session: Session, name: str, password: str) -> User | None:
    """The account if ``password`` is its password, else None.

    The attempt is counted and paced (:mod:`server.doors.throttle`) before anything is
    checked; one that could not be made before the connection's time to log in runs
    out ends the connection (``Connection timed out.``). An unknown name's password is
    checked against a hash of the configured cost, as a real one would be. The check
    waits its turn fairly between client addresses (:mod:`server.world.passwords`,
    D330); a connection that goes away meanwhile ends with
    :class:`~server.world.passwords.ClientGone`, its check never made.
    """
    attempt = app.login_attempt(session.output.host, name)
    if not await app.throttle.admit(attempt, session.login_deadline):
        _time_out(session)
        return None
    user = await app.db.get_user(name)
    stored = user.password_hash if user is not None else await app.dummy_hash()
    ok = await app.passwords.verify(password, stored, app.password_client(session.output))
    if not ok or user is None:
        return None
    app.throttle.succeeded(attempt)
    return user


async def _clip_login(app: App, session: Session, words: tuple[str, ...]) -> bool:
    """``login <client> <clipver> <name> <password>`` (§1.3); any clip version works as 1008."""
    _, client, _version, name, password = words[:5]
    if len(client) > MAX_CLIENT_NAME:
        return False
    user = await _authenticate(app, session, name, password)
    if user is None:
        return False
    session.mode = Mode.CLIP
    session.client = client
    if clip.is_computer_client(client) and not user.is_bot:
        try:  # the account remembers it is a bot (§2.3)
            await app.db.set_bot(user.name, True)
        except DatabaseOutage as error:  # the login goes ahead without it (D296)
            app.outage_log.warning("the bot flag at a login", error)
        user = dataclasses.replace(user, is_bot=True)
    await complete_login(app, session, user)
    return True


TOKEN_BYTES = 32
"""A session token is 32 random bytes (256 bits, :func:`secrets.token_urlsafe`: 43
characters of the URL-safe base64 alphabet), D320."""


def new_token() -> str:
    """A new session token for the web page (D320): unguessable, never stored itself."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_digest(token: str) -> str:
    """What the database keeps of a token: its SHA-256 in hex (D322). A token's 256
    random bits need no salt or slow hash: a copy of the table logs no one in."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


async def _token_login(app: App, session: Session, words: tuple[str, ...]) -> bool:
    """``login <client> <clipver> token! <token>`` (D320): the web page logging in again
    with its session token, in CLIP mode. Counted and paced by the login throttle as a
    password is (the name it is counted under is ``token!``), so tokens cannot be tried
    faster than passwords; an unknown or expired token fails as a wrong password does.
    The token stays valid: the page replaces it at once (``token! <old>``, D321)."""
    _, client, _version, _word, token = words
    if len(client) > MAX_CLIENT_NAME:
        return False
    attempt = app.login_attempt(session.output.host, TOKEN)
    if not await app.throttle.admit(attempt, session.login_deadline):
        _time_out(session)
        return False
    name = await app.db.web_token_user(token_digest(token))
    user = await app.db.get_user(name) if name is not None else None
    if user is None:
        return False
    app.throttle.succeeded(attempt)
    session.mode = Mode.CLIP
    session.client = client
    await complete_login(app, session, user)
    return True


async def _telnet_login(
    app: App, session: Session, name: str, read: ReadLine, *, refuse: bool = False
) -> bool | None:
    """A person types the name, then the password with echo off (§1.6); a wrong one is
    answered ``Login incorrect.`` (D192), and so is any with ``refuse`` (a name typed
    with a control character, D299). None: ``bye`` at the password prompt, the
    connection is closing (D194)."""
    output = session.output
    output.echo_off()
    output.prompt(replies.PASSWORD_PROMPT)
    password = await read()
    output.echo_on()
    output.send([""])
    if password is None or password == TOO_LONG:
        return False
    if clean(password) == LEAVE:
        _leave(session)
        return None
    refuse = refuse or isinstance(password, ScrubbedLine)
    ok = not refuse and await _password_login(app, session, name, clean(password), prompts=True)
    if not ok:
        output.send([replies.LOGIN_INCORRECT])
    return ok


def _leave(session: Session) -> None:
    """``bye`` before logging in: the goodbye text (§1.8), then close."""
    session.output.send(replies.GOODBYE)
    session.output.close()


async def _password_login(
    app: App, session: Session, name: str, password: str, *, prompts: bool
) -> bool:
    user = await _authenticate(app, session, name, password)
    if user is None:
        return False
    session.mode = Mode.TELNET
    session.prompts = prompts
    await complete_login(app, session, user)
    if session.logged_in:  # not when too many are logged in (closed)
        session.end_reply()
    return True


async def complete_login(
    app: App, session: Session, user: User, *, first_lines: Sequence[str] = ()
) -> None:
    """Everything after a good password: the CLIP 1..6 sequence or the telnet greeting.

    The caller ends the reply (the telnet prompt): the login dialog, or dispatch after
    a guest's registration.

    ``first_lines`` (a registration's ``You are registered.``) go out right before the
    login's own lines, once its database work is done: nothing is awaited between them
    and the session's entry among those online. A new bot logs in with CLIP as soon as
    it reads them (D180): its login must find this session online and replace it
    (D196). Sent before that work, they let the CLIP login be checked first; then this
    session entered afterwards in its place, and when the bot closed it, the bot's
    CLIP session was online for nobody.
    """
    presence = app.presence
    output = session.output
    online = presence.get(user.name) is not None
    if not online and presence.count() >= app.settings.max_logins:
        output.send([*first_lines, replies.TOO_MANY_LOGINS])
        output.close()
        return
    leave_pre_login(app, session)
    if online:
        output.send([replies.ALREADY_LOGGED_IN])
        first = presence.get(user.name)
        if first is not None:  # why its connection closes, before it does (D193)
            presence.send(first, replies.logged_in_elsewhere(output.host))
        presence.replace(user.name)
    previous_time = user.last_login_at or 0
    previous_host = user.last_login_host or output.host
    messages: Sequence[StoredMessage] = ()
    try:
        # A login's own bookkeeping: should the database fail for the moment, the login
        # goes ahead without it (D296: a login was closed without a word when its
        # last-login write failed, so nobody could log in until the disk had room).
        # Stored messages not read now come at a later login.
        await app.db.update_login(user.name, output.host)
        messages = await app.db.messages_for(user.name)
    except DatabaseOutage as error:
        app.outage_log.warning("the bookkeeping of a login", error)
    session.load_user(user)
    session.login_time = int(app.clock())
    session.enter_lobby()
    if first_lines:
        session.send_lines(first_lines)
    if session.clip:
        session.send(
            clip.Welcome(user.name, previous_time, previous_host).format(),
            session.own_info().format(),
        )
        session.send_lines(clip.motd(app.motd))
        deliver_stored(session, messages)
    else:
        session.send(replies.user_authenticated(user.name))
        if user.last_login_at is not None:
            when = dt.datetime.fromtimestamp(user.last_login_at, dt.UTC)
            session.send(replies.last_login(replies.telnet_date(when), previous_host))
        session.send_lines(app.motd)
        deliver_stored(session, messages)
    presence.add(session)
    if session.clip:
        # The who list and its CLIP 6 end in one write, from the cached CLIP 5 lines,
        # encoded at once rather than through telnetlib3's write (thousands of lines at
        # every login: docs/performance.md §3).
        session.send_payload(Payload([*presence.who_list(), WHO_END]))
    presence.announce_login(session, again=online)
    await return_to_table(app, session)


async def return_to_table(app: App, session: Session) -> None:
    """A user away from a chouette table is seated at it again as they log in (D410),
    after the login's own lines: the table's news, the board and ``show chouette``.
    Should the database fail for the moment, the login goes ahead (D296): ``chouette
    return`` brings them back later."""
    try:
        await app.tables.chouette(session, ChouetteReturn(at_login=True))
    except Reply as refusal:  # a saved table that cannot be restored, say
        session.send_lines(refusal.lines)
    except DatabaseOutage as error:
        app.outage_log.warning("a chouette table's return at a login", error)


def deliver_stored(session: Session, messages: Sequence[StoredMessage]) -> None:
    """Write the stored ``messages`` to ``session`` (telnet: after ``There are messages
    for you:``). They stay stored until the session's next line confirms that the client
    was there to read them (:func:`confirm_delivered`, D270): a client that drops first
    gets them again at its next login."""
    if not messages:
        return
    if not session.clip:
        session.send(replies.MESSAGES_FOR_YOU)
    session.send_lines(
        replies.message_line(m.sender, m.sent_at, m.text, session.mode) for m in messages
    )
    session.delivered_messages += tuple(m.id for m in messages)


async def confirm_delivered(app: App, session: Session) -> None:
    """The client sent a line after its stored messages were written to it: delete them
    (D270). Should that fail, they stay stored and come again at the next login."""
    ids, session.delivered_messages = session.delivered_messages, ()
    try:
        await app.db.delete_messages(session.name, ids)
    except DatabaseError as exc:
        log.warning("stored messages of %s not deleted (sent again later): %s", session.name, exc)


def admit_connection(app: App, session: Session) -> bool:
    """Count a new connection among those that have not logged in (D230); over a cap,
    send it the line saying which and close it (False)."""
    output = session.output
    refusal = app.pre_login.enter(output.host)
    if refusal is not None:
        app.refusal_log.warning("refused a connection from %s: %s", output.host, refusal)
        output.send([refusal])
        output.close()
        return False
    session.pre_login = True
    return True


def leave_pre_login(app: App, session: Session) -> None:
    """The session no longer counts as a connection that has not logged in (once)."""
    if session.pre_login:
        session.pre_login = False
        session.login_deadline = None
        app.pre_login.leave(session.output.host)


def enter_as_guest(app: App, session: Session) -> None:
    """``guest`` at the login prompt (§1.7): the welcome, then the guest state's prompt.

    The guest has ``[limits] guest_timeout`` seconds from now to register (D231)."""
    guest_time = app.settings.guest_timeout
    session.login_deadline = app.timer.now() + guest_time if guest_time else None
    session.state = SessionState.GUEST
    session.mode = Mode.TELNET
    session.output.send(replies.GUEST_WELCOME)
    session.output.prompt(replies.TELNET_PROMPT)
