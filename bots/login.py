"""Logging in with CLIP (§1.3-§1.5), registering through ``guest`` (§1.7), the bot marker.

A CLIP login answers the exact prompt ``login: `` with
``login <client> 1008 <name> <password>``; success is CLIP 1 (``1 <name> ...``), failure
is another ``login: `` prompt. A missing account is created through the telnet-mode guest
dialogue: ``guest``, ``> `` prompt, ``name <name>``, the two password prompts,
``You are registered.``; then the bot logs in with CLIP on a second connection, which
replaces the registering one (so nobody sees the new bot drop its connection).

The client name is the bot marker: the JavaFIBS player-profile convention (§2.3) makes a
20-character client field that starts with ``=`` mean "a computer"; ``who`` and CLIP 5
show the field to everybody (see docs/bots.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Final

from bots.connection import Connection
from bots.telnet import Prompt
from protocol import replies
from protocol.clip import (
    CLIP_VERSION,
    OwnInfo,
    Welcome,
    is_computer_client,
    parse_clip,
)
from protocol.errors import ClipParseError

log = logging.getLogger(__name__)

LOGIN_PROMPT: Final = replies.LOGIN_PROMPT
TELNET_PROMPT: Final = replies.TELNET_PROMPT
PASSWORD_PROMPTS: Final = (
    replies.GIVE_PASSWORD_PROMPT,
    replies.RETYPE_PASSWORD_PROMPT,
    replies.PASSWORDS_DIFFER_PROMPT,
)


class LoginError(Exception):
    """Logging in or registering failed.

    :ivar permanent: retrying cannot help (wrong password for an existing account, a name
        the server refuses); a reconnecting client gives up.
    """

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


class LoginRefused(LoginError):
    """The server answered the CLIP login line with another ``login: `` prompt (§1.5)."""


@dataclass(frozen=True, slots=True)
class LoginResult:
    """What the server sent right after a successful CLIP login (§1.4)."""

    welcome: Welcome
    own_info: OwnInfo | None
    """CLIP 2, or None if the server skipped it."""


def bot_client_name(real_name: str = "Python Bot", *, country: str = "NT", tag: str = "P") -> str:
    """A 20-character client field that marks the account as a computer (§2.3).

    Layout of the JavaFIBS player-profile protocol: ``=`` (computer), a two-letter country
    code (``NT``, "neutral zone", when none applies), sixteen characters of name - first and
    last name run together, the first letter of the last name lowered by 30 so it is no
    longer a letter, ``_`` for spaces and padding - and one character naming the client
    (JavaFIBS uses ``!``..``'``; these bots use ``tag``).

    >>> bot_client_name("Random Bot")
    '=NTRandom$ot_______P'

    :raises ValueError: a name that does not fit or uses characters outside A-Z, a-z, ``_``.
    """
    words = real_name.split()
    if not words or not all(w.replace("_", "").isalpha() and w.isascii() for w in words):
        raise ValueError(f"a profile name uses letters and '_' only: {real_name!r}")
    name = words[0]
    if len(words) > 1:
        last = "_".join(words[1:])
        name += chr(ord(last[0]) - 30) + last[1:]
    if len(name) > 16:
        raise ValueError(f"a profile name has at most 16 characters: {real_name!r}")
    if len(country) != 2 or not country.isascii() or not country.isupper():
        raise ValueError(f"the country is a two-letter code: {country!r}")
    if len(tag) != 1 or not 33 <= ord(tag) <= 126:
        raise ValueError(f"the client tag is one printable character: {tag!r}")
    return f"={country}{name:_<16}{tag}"


def is_bot_client(client: str | None) -> bool:
    """True when a CLIP 5 client field marks a computer player (§2.3)."""
    return is_computer_client(client)


async def wait_for_prompt(conn: Connection, prompt: str, *, timeout: float) -> None:
    """Read lines until ``prompt`` appears (no line terminator after it).

    :raises TimeoutError: if it does not appear within ``timeout`` seconds.
    :raises ConnectionError: if the connection closes first.
    """
    while True:
        item = await conn.read((prompt,), timeout=timeout)
        if isinstance(item, Prompt):
            return
        log.debug("%s: before %r: %s", conn.name, prompt, item)


async def clip_login(
    conn: Connection, name: str, password: str, client: str, *, timeout: float = 30.0
) -> LoginResult:
    """Log in with CLIP on a fresh connection (waits for the ``login: `` prompt first).

    :raises LoginRefused: the server asked for the login again (unknown name or wrong
        password, §1.5).
    :raises TimeoutError: a reply did not come within ``timeout`` seconds.
    """
    conn.name = name
    await wait_for_prompt(conn, LOGIN_PROMPT, timeout=timeout)
    await conn.send(f"login {client} {CLIP_VERSION} {name} {password}")
    welcome: Welcome | None = None
    while True:
        item = await conn.read((LOGIN_PROMPT,), timeout=timeout)
        if isinstance(item, Prompt):
            raise LoginRefused(f"the server refused the login of {name!r}")
        try:
            message = parse_clip(item)
        except ClipParseError:
            log.debug("%s: during login: %s", name, item)  # e.g. "** Warning: ..."
            continue
        if welcome is None:
            if isinstance(message, Welcome):
                welcome = message
            continue
        return LoginResult(welcome, message if isinstance(message, OwnInfo) else None)


async def register(conn: Connection, name: str, password: str, *, timeout: float = 30.0) -> None:
    """Create the account through the guest dialogue (§1.7) on a fresh connection.

    The account is then logged in on ``conn``, in telnet mode: the caller logs in with
    CLIP on a new connection, which replaces this one, and closes ``conn`` afterwards.

    :raises LoginError: the name is taken or refused (``permanent``), or the dialogue
        took an unexpected turn.
    """
    conn.name = name
    await wait_for_prompt(conn, LOGIN_PROMPT, timeout=timeout)
    await conn.send("guest")
    await wait_for_prompt(conn, TELNET_PROMPT, timeout=timeout)
    await conn.send(f"name {name}")
    answered = 0
    while True:
        item = await conn.read((*PASSWORD_PROMPTS, TELNET_PROMPT), timeout=timeout)
        if isinstance(item, Prompt):
            if item.text == TELNET_PROMPT:
                raise LoginError(f"registration of {name!r} stopped at the prompt")
            if answered >= 4:
                raise LoginError(f"the server keeps asking for the password of {name!r}")
            answered += 1
            await conn.send(password, secret=True)
            continue
        text = item.strip()
        if text == replies.REGISTERED:
            log.info("%s: registered", name)
            return
        if text == replies.name_taken(name):
            raise LoginError(
                f"{name!r} exists and the password is wrong (registration: name taken)",
                permanent=True,
            )
        if text in (replies.NAME_INVALID, replies.NO_PASSWORD_GIVEN, replies.PASSWORD_TOO_SHORT):
            raise LoginError(f"registration of {name!r} refused: {text}", permanent=True)
        if text.startswith(replies.PASSWORD_HAS_COLON):
            raise LoginError(f"registration of {name!r} refused: {text}", permanent=True)
        log.debug("%s: registration: %s", name, item)
