"""A person's first steps in a telnet program, byte for byte from a raw socket: the
guest's registration, a wrong password, ``bye`` at every prompt, a second login.

A telnet program does not echo what is typed after ``IAC WILL ECHO``, the Enter key
included, so the server ends every hidden line itself (D190). A wrong password in telnet
mode is answered ``Login incorrect.`` (D192); CLIP logins keep FIBS's bare prompt (§1.5).
"""

from __future__ import annotations

import asyncio

import pytest

from protocol import replies
from protocol.commands import help_lines
from server.app import App

from .conftest import TIMEOUT, Connect, ScriptedClient, clip_login, make_user

pytestmark = pytest.mark.known_lines  # every line received is one protocol/ makes

WILL_ECHO = b"\xff\xfb\x01"
WONT_ECHO = b"\xff\xfc\x01"


def crlf(*lines: str) -> bytes:
    return b"".join(line.encode() + b"\r\n" for line in lines)


async def until(client: ScriptedClient, ending: bytes) -> bytes:
    """Every byte up to and including the first ``ending`` (a prompt)."""
    while ending not in client.buffer:
        chunk = await asyncio.wait_for(client.reader.read(65536), TIMEOUT)
        assert chunk, f"closed; got {client.buffer!r}"
        client.buffer += chunk
    got, client.buffer = client.buffer.split(ending, 1)
    return got + ending


async def at_login(connect: Connect) -> ScriptedClient:
    client = await connect()
    await until(client, replies.LOGIN_PROMPT.encode())
    return client


async def test_registration_transcript(connect: Connect, app: App) -> None:
    client = await at_login(connect)
    await client.send("guest")
    welcome = await until(client, b"> ")
    assert welcome == crlf(*replies.GUEST_WELCOME) + b"> "
    assert b"only letters (A-Z, a-z) and the underscore _" in welcome  # the real rule
    await client.send("roll")  # a real command: register first, not "Unknown command"
    assert await until(client, b"> ") == crlf(replies.guest_must_register("roll")) + b"> "
    await client.send("help name")
    assert await until(client, b"> ") == crlf(*help_lines("name")) + b"> "
    assert help_lines("name")[0] == "Usage: name <username>"
    await client.send("name new_user")
    assert await until(client, b"password: ") == (
        crlf(replies.name_will_be("new_user"), replies.NO_PASSWORD_HINT)
        + WILL_ECHO
        + b"Please give your password: "
    )
    await client.send("secret")  # hidden: the server ends the line
    assert await until(client, b"password: ") == b"\r\nPlease retype your password: "
    await client.send("secret")
    assert await until(client, b"> ") == (
        WONT_ECHO
        + crlf(
            "",
            "You are registered.",
            "Type 'help beginner' to get started.",
            "** User new_user authenticated.",
        )
        + b"> "
    )
    assert await app.db.user_exists("new_user")


async def test_wrong_password_transcript(connect: Connect, app: App) -> None:
    await make_user(app, "carol", "pass1234")
    client = await at_login(connect)
    await client.send("carol")
    assert await until(client, b"password: ") == WILL_ECHO + b"password: "
    await client.send("wrong1")
    assert await until(client, b"login: ") == WONT_ECHO + b"\r\nLogin incorrect.\r\nlogin: "
    await client.send("nobody")  # an unknown name reads the same
    await until(client, b"password: ")
    await client.send("wrong1")
    assert (await until(client, b"login: ")).endswith(b"\r\nLogin incorrect.\r\nlogin: ")


async def test_a_failed_clip_login_keeps_the_bare_prompt(connect: Connect, app: App) -> None:
    await make_user(app, "carol", "pass1234")
    client = await at_login(connect)
    await client.send("login test_client 1008 carol wrong1")
    assert await until(client, b"login: ") == b"login: "  # §1.5: GIB waits for exactly this


async def test_bye_at_the_login_prompt(connect: Connect) -> None:
    client = await at_login(connect)
    await client.send("bye")
    await client.expect(replies.GOODBYE[-1])
    assert await client.closed()


async def test_bye_at_the_password_prompt(connect: Connect, app: App) -> None:
    await make_user(app, "carol", "pass1234")
    client = await at_login(connect)
    await client.send("carol")
    await until(client, b"password: ")
    await client.send("bye")
    await client.expect(replies.GOODBYE[-1])
    assert await client.closed()


async def test_bye_at_both_registration_prompts(connect: Connect, app: App) -> None:
    for passwords in ([], ["secret"]):
        client = await at_login(connect)
        await client.send("guest")
        await until(client, b"> ")
        await client.send("name new_user")
        await until(client, b"password: ")
        for password in passwords:
            await client.send(password)
            await until(client, b"password: ")
        await client.send("bye")
        assert (await until(client, b"\r\n")) == WONT_ECHO + b"\r\n"
        await client.expect(replies.GOODBYE[-1])
        assert await client.closed()
    assert not await app.db.user_exists("new_user")


async def test_no_one_may_register_as_bye(connect: Connect) -> None:
    client = await at_login(connect)
    await client.send("guest")
    await until(client, b"> ")
    await client.send("name Bye")
    assert await until(client, b"> ") == crlf(replies.name_taken("Bye")) + b"> "


async def test_a_second_login_tells_the_first_why_it_closes(connect: Connect, app: App) -> None:
    await make_user(app, "carol", "pass1234")
    first = await at_login(connect)
    await first.send("carol")
    await until(first, b"password: ")
    await first.send("pass1234")
    await until(first, b"> ")
    second = await clip_login(connect, app, "carol", "pass1234", create=False)
    line = await first.expect_prefix("** You logged in again from ")
    assert line == replies.logged_in_elsewhere("127.0.0.1")
    assert await first.closed()
    await second.send("whois carol")
    await second.expect_prefix("Information about carol")
