"""Guest registration (§1.7) byte for byte: the guest state's commands and the password
prompts, which take the next line as typed (server/handlers/registration.py)."""

from __future__ import annotations

from protocol import replies
from server.app import App
from server.config import Settings
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, connect_from, running
from .fake_clock import FakeTimer

IAC_WILL_ECHO = b"\xff\xfb\x01"
IAC_WONT_ECHO = b"\xff\xfc\x01"


def crlf(*lines: str) -> bytes:
    return b"".join(line.encode() + b"\r\n" for line in lines)


async def raw(client: ScriptedClient, wanted: bytes) -> None:
    """The next bytes are exactly ``wanted`` (telnet commands included)."""
    assert not client.buffer
    assert await client.reader.readexactly(len(wanted)) == wanted


async def as_guest(connect: Connect) -> ScriptedClient:
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("guest")
    await client.expect(replies.GUEST_WELCOME[-1])
    await client.prompt(replies.TELNET_PROMPT)
    return client


async def test_password_prompts_bytes(connect: Connect, app: App) -> None:
    client = await as_guest(connect)
    await client.send("name newuser")
    await raw(
        client,
        crlf(replies.name_will_be("newuser"), replies.NO_PASSWORD_HINT)
        + IAC_WILL_ECHO
        + replies.GIVE_PASSWORD_PROMPT.encode(),
    )
    # Every hidden password gets the line end its (unechoed) Enter did not show (D190).
    await client.send("who")  # no command at the password prompt: a (too short) password
    await raw(client, crlf("", replies.PASSWORD_TOO_SHORT) + replies.GIVE_PASSWORD_PROMPT.encode())
    await client.send("sec:ret")
    await raw(client, crlf("", replies.PASSWORD_HAS_COLON) + replies.GIVE_PASSWORD_PROMPT.encode())
    await client.send("")  # no password: back to the guest prompt
    await raw(client, IAC_WONT_ECHO + crlf("", replies.NO_PASSWORD_GIVEN) + b"> ")
    await client.send("name newuser")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("secret")
    await raw(client, crlf("") + replies.RETYPE_PASSWORD_PROMPT.encode())
    await client.send("")
    await raw(client, crlf("") + replies.PASSWORDS_DIFFER_PROMPT.encode())
    await client.send("secret")
    await raw(client, crlf("") + replies.RETYPE_PASSWORD_PROMPT.encode())
    await client.send(" secret ")
    await raw(client, IAC_WONT_ECHO + crlf("", replies.REGISTERED, replies.REGISTERED_HINT))
    await client.expect(replies.user_authenticated("newuser"))
    await client.prompt(replies.TELNET_PROMPT)
    await client.nothing(0.2)  # one prompt, not two
    assert await app.db.user_exists("newuser")


async def test_over_long_lines_read_as_blank_ones(connect: Connect, app: App) -> None:
    client = await as_guest(connect)
    too_long = b"y" * (app.settings.max_line_length + 10) + b"\r\n"
    await client.send_raw(too_long)
    await raw(client, b"> ")
    await client.send("name newuser")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send_raw(too_long)
    await raw(client, IAC_WONT_ECHO + crlf("", replies.NO_PASSWORD_GIVEN) + b"> ")


async def test_repeat_after_name_repeats_the_guests_command(connect: Connect) -> None:
    client = await as_guest(connect)
    await client.send("!!")
    assert await client.line() == replies.unknown_command("!!")
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("version")
    version = await client.prompt(replies.TELNET_PROMPT)
    await client.send("name bad-name")
    assert await client.line() == replies.NAME_INVALID
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("!!")  # name is no command !! remembers
    assert await client.prompt(replies.TELNET_PROMPT) == version


async def test_a_guest_says_bye(connect: Connect) -> None:
    client = await as_guest(connect)
    await client.send("Quit")
    for line in replies.GOODBYE:
        assert await client.line() == line
    assert await client.closed()


async def test_name_with_two_words_is_unknown(connect: Connect) -> None:
    client = await as_guest(connect)
    await client.send("name new user")
    assert await client.line() == replies.unknown_command("name")
    await client.prompt(replies.TELNET_PROMPT)


async def test_passwords_a_login_line_cannot_carry_are_refused(connect: Connect, app: App) -> None:
    """D233: a space breaks the CLIP login line; a tab and anything outside ASCII never
    match at login (read as a space and as ``?``, §1.1). Each is refused with the
    reason and the password asked again; a good one then registers."""
    client = await as_guest(connect)
    await client.send("name carol")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    for password in ("two words", "tab\there", "café1234"):
        await client.send(password)
        assert await client.line() == "", password  # the line end after it (D190)
        assert await client.line() == replies.PASSWORD_NOT_TYPABLE, password
        await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("s3cret!")
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send("s3cret!")
    await client.expect(replies.user_authenticated("carol"))
    await client.close()
    again = await connect()
    await again.prompt(replies.LOGIN_PROMPT)
    await again.send("login test_client 1008 carol s3cret!")
    await again.expect("6")


async def test_a_name_typed_with_control_characters_is_refused(connect: Connect, app: App) -> None:
    """Issue 34 item 12, D265: the telnet door removes control characters from every line
    (D75), but a name typed with one (NUL, ESC, DEL) is refused, not registered as the
    letters left; the same name typed plainly then registers."""
    client = await as_guest(connect)
    for typed in (b"ca\x00sey", b"ca\x1bsey", b"case\x7fy", b"\x07casey"):
        await client.send_raw(b"name " + typed + b"\r\n")
        assert await client.prompt(replies.TELNET_PROMPT) == [replies.NAME_INVALID], typed
    assert not await app.db.user_exists("casey")
    await client.send("name casey")
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)


async def test_reserved_words_are_no_names(connect: Connect, app: App) -> None:
    """Issue 34 item 12, D265: the login words, every command's name and alias (any case)
    and a name of underscores alone are refused as new names."""
    client = await as_guest(connect)
    for word in ("who", "login", "guest", "visitor", "connect", "Tell", "ADIOS", "shout"):
        await client.send(f"name {word}")
        assert await client.prompt(replies.TELNET_PROMPT) == [replies.name_taken(word)], word
    for word in ("_", "___"):
        await client.send(f"name {word}")
        assert await client.prompt(replies.TELNET_PROMPT) == [replies.NAME_INVALID], word
    await client.send("name who_else")  # a command's name inside a name is fine
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)


async def _guest_from(app: App, source: str, opened: list[ScriptedClient]) -> ScriptedClient:
    """A guest at the ``> `` prompt, connected from the loopback address ``source``."""
    client = await connect_from(app, source)
    opened.append(client)
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("guest")
    await client.prompt(replies.TELNET_PROMPT)
    return client


async def _typed_passwords(client: ScriptedClient, name: str) -> None:
    """``name`` accepted: type its password twice (what comes then is the test's)."""
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("secret")
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send("secret")


async def _registers(app: App, source: str, name: str, opened: list[ScriptedClient]) -> None:
    client = await _guest_from(app, source, opened)
    await client.send(f"name {name}")
    await _typed_passwords(client, name)
    await client.expect(replies.user_authenticated(name))


async def test_registrations_are_limited_per_address_and_in_all(
    settings: Settings, db_target: DbTarget
) -> None:
    """Issue 34 item 3, D267: two accounts a minute from one address, three in all (here;
    no trusted network). Over a limit ``name`` gets the line saying which and the guest
    stays a guest; a guest whose ``name`` was allowed but whose account would pass the
    limit is refused when it would be made; a minute later it works again."""
    timer = FakeTimer()
    limited = settings.replace(
        registrations_per_address=2, registrations_per_minute=3, trusted_networks=()
    )
    async with running(limited, db_target, timer=timer) as app:
        opened: list[ScriptedClient] = []
        try:
            late = await _guest_from(app, "127.0.0.9", opened)
            await late.send("name late")  # allowed now; its passwords come later
            await late.prompt(replies.GIVE_PASSWORD_PROMPT)
            await _registers(app, "127.0.0.2", "ann", opened)
            await _registers(app, "127.0.0.2", "bea", opened)
            third = await _guest_from(app, "127.0.0.2", opened)
            await third.send("name cat")
            assert await third.prompt(replies.TELNET_PROMPT) == [
                replies.TOO_MANY_REGISTRATIONS_FROM_ADDRESS
            ]
            await _registers(app, "127.0.0.3", "dee", opened)
            other = await _guest_from(app, "127.0.0.4", opened)
            await other.send("name eve")
            assert await other.prompt(replies.TELNET_PROMPT) == [replies.TOO_MANY_REGISTRATIONS]
            await late.send("secret")
            await late.prompt(replies.RETYPE_PASSWORD_PROMPT)
            await late.send("secret")
            assert replies.TOO_MANY_REGISTRATIONS in await late.prompt(replies.TELNET_PROMPT)
            assert not await app.db.user_exists("late")
            timer.advance(60.0)
            await third.send("name cat")
            await _typed_passwords(third, "cat")
            await third.expect(replies.user_authenticated("cat"))
        finally:
            for client in opened:
                await client.close()
