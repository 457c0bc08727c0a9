"""Login over a real socket (§1): banner, prompt, CLIP sequence, telnet login, failures."""

from __future__ import annotations

from protocol import clip, replies
from server.app import App

from .conftest import Connect, clip_login, make_user


async def test_banner_and_login_prompt_bytes(connect: Connect) -> None:
    client = await connect()
    banner_end = await client.line()
    while not banner_end.endswith(replies.BANNER_REQUIRED_LINE):  # MatchDog waits for it
        banner_end = await client.line()
    assert await client.line() == ""
    date = await client.line()
    assert date.endswith(" UTC )")
    await client.prompt("login: ")  # the exact prompt: one space, no CR LF


async def test_clip_login_sequence(connect: Connect, app: App) -> None:
    await make_user(app, "alice")
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("login test_client 1008 alice secret")
    welcome = clip.Welcome.parse(await client.expect_prefix("1 "))
    assert welcome.name == "alice" and welcome.last_login == 0
    own = clip.OwnInfo.parse(await client.line())
    assert own.name == "alice" and own.rating == 1500.0 and own.timezone == "UTC"
    assert await client.line() == "3"
    assert await client.expect("4") == []
    who = clip.WhoInfo.parse(await client.line())
    assert (who.name, who.client, who.opponent) == ("alice", "test_client", None)
    assert await client.line() == "6"
    await client.nothing()


async def test_failed_logins_get_a_new_prompt_then_close(connect: Connect, app: App) -> None:
    await make_user(app, "alice")
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    for _ in range(app.settings.login_attempts - 1):
        await client.send("login test_client 1008 alice wrong")
        await client.prompt(replies.LOGIN_PROMPT)
    await client.send("login test_client 1008 nobody secret")
    assert await client.closed()


async def test_login_is_announced_to_others(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    assert await alice.line() == "7 bob bob logs in."
    assert clip.WhoInfo.parse(await alice.line()).name == "bob"
    assert await alice.line() == "6"
    await bob.send("bye")
    await bob.expect(replies.GOODBYE[-1])  # FCM looks for 11+ spaces and "Goodbye."
    assert replies.GOODBYE[-1].startswith(" " * 11)
    assert await alice.expect_prefix("8 ") == "8 bob bob logs out."


async def test_telnet_login_with_echo_off(connect: Connect, app: App) -> None:
    await make_user(app, "carol", "pass1234")
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("carol")
    raw = await client.reader.read(3)  # IAC WILL ECHO before the password prompt
    assert raw == b"\xff\xfb\x01"
    await client.prompt(replies.PASSWORD_PROMPT)
    await client.send("pass1234")
    assert await client.expect(replies.user_authenticated("carol")) in ([], [""])
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("who")
    assert await client.line() == replies.WHO_HEADER
    row = await client.line()
    assert "carol" in row


async def test_registration_as_guest(connect: Connect, app: App) -> None:
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send("guest")
    await client.expect("ONE USERNAME PER PERSON ONLY!!!")
    await client.expect("")
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("who")  # a guest may look around (D37)
    await client.expect(replies.WHO_HEADER)
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("invite bob 1")
    await client.expect(replies.guest_must_register("invite"))
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("name bad-name")
    assert await client.line() == replies.NAME_INVALID
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("name guest")
    assert await client.line() == replies.name_taken("guest")
    await client.prompt(replies.TELNET_PROMPT)
    await client.send("name newuser")
    assert await client.line() == replies.name_will_be("newuser")
    assert await client.line() == replies.NO_PASSWORD_HINT
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("abc")
    assert await client.line() == ""  # every hidden password gets its line end (D190)
    assert await client.line() == replies.PASSWORD_TOO_SHORT
    await client.prompt(replies.GIVE_PASSWORD_PROMPT)
    await client.send("secret")
    assert await client.line() == ""
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send("other")
    assert await client.line() == ""
    await client.prompt(replies.PASSWORDS_DIFFER_PROMPT)
    await client.send("secret")
    await client.prompt(replies.RETYPE_PASSWORD_PROMPT)
    await client.send("secret")
    assert await client.line() == ""
    assert await client.line() == replies.REGISTERED
    assert await client.line() == replies.REGISTERED_HINT
    await client.expect(replies.user_authenticated("newuser"))
    await client.close()
    again = await clip_login(connect, app, "newuser", "secret", create=False)
    await again.send("rawwho newuser")
    assert clip.WhoInfo.parse(await again.line()).name == "newuser"


async def test_a_computer_client_marks_the_account_as_a_bot(connect: Connect, app: App) -> None:
    """§2.3: a 20-character client field starting with '=' marks a computer player."""
    await make_user(app, "robot")
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    profile = "=XXRandom_bot_______"
    assert len(profile) == clip.PROFILE_LENGTH
    await client.send(f"login {profile} 1008 robot secret")
    await client.expect("6")
    user = await app.db.get_user("robot")
    assert user is not None and user.is_bot
    await client.send("rawwho robot")
    assert clip.WhoInfo.parse(await client.expect_prefix("5 robot")).client == profile


async def test_a_login_typed_with_control_characters_fails(connect: Connect, app: App) -> None:
    """D299: the transport removes control characters from every line (D75), but a
    login line, a telnet name or a password typed with one fails as a wrong password
    does (``ali<NUL>ce`` logged in as ``alice``); the same login typed plainly works."""
    await make_user(app, "alice")
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    for line in (b"login test_client 1008 ali\x00ce secret", b"login c 1008 alice sec\x1bret"):
        await client.send_raw(line + b"\r\n")
        assert await client.prompt(replies.LOGIN_PROMPT) == [], line
    for name, password in ((b"ali\x7fce", b"secret"), (b"alice", b"se\x00cret")):
        await client.send_raw(name + b"\r\n")
        await client.prompt(replies.PASSWORD_PROMPT)
        await client.send_raw(password + b"\r\n")
        assert replies.LOGIN_INCORRECT in await client.prompt(replies.LOGIN_PROMPT)
    assert app.registry.get("alice") is None
    other = await connect()
    await other.prompt(replies.LOGIN_PROMPT)
    await other.send("login test_client 1008 alice secret")
    await other.expect("6")
