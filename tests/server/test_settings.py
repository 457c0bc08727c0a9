"""Toggles, sets, password and address over real sockets (§4.15-§4.17): exact replies,
stored at once and restored at the next login."""

from __future__ import annotations

import pytest

from protocol import clip, replies
from protocol.replies import Toggle
from server.app import App
from server.world.session import DEFAULT_TOGGLES

from .conftest import Connect, ScriptedClient, clip_login
from .sessions import command, telnet_login, who_update_seen

pytestmark = pytest.mark.known_lines

# double and greedy are reset at every login (HELP save, §4.15); the rest are kept.
KEPT = [t for t in replies.TOGGLES if t not in ("double", "greedy")]


async def relogin(connect: Connect, app: App, client: ScriptedClient, name: str) -> ScriptedClient:
    await client.send("bye")
    await client.expect(replies.GOODBYE[-1])
    assert await client.closed()
    return await clip_login(connect, app, name, create=False)


async def test_every_toggle_survives_a_relogin(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("toggle")
    expected = dict(DEFAULT_TOGGLES)
    assert [await alice.line() for _ in range(18)] == replies.toggle_list(expected)
    await alice.send("toggle " + " ".join(replies.TOGGLES))
    for name in replies.TOGGLES:
        expected[name] = not expected[name]
        assert await alice.line() == replies.toggle_message(name, expected[name])
    # The who update of `ready` comes after the reply (it is batched, D79).
    assert clip.WhoInfo.parse(await who_update_seen(alice, "alice")).ready
    alice = await relogin(connect, app, alice, "alice")
    own = clip.OwnInfo.parse(next(line for line in alice.seen if line.startswith("2 ")))
    assert own.ready and not own.notify and own.bell and own.silent
    expected.update({Toggle.DOUBLE: True, Toggle.GREEDY: False})
    await alice.send("toggle")
    assert [await alice.line() for _ in range(18)] == replies.toggle_list(expected)
    stored = await app.db.get_user("alice")
    assert stored is not None and all(stored.toggles[t] == expected[t] for t in KEPT)


async def test_toggle_synonym_prefix_and_unknown(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("toggle autoroll")  # another name of double (§4.15)
    assert await alice.line() == replies.toggle_message(Toggle.DOUBLE, False)
    await alice.send("to moreb")  # `to` is toggle, a unique prefix of moreboards
    assert await alice.line() == replies.toggle_message(Toggle.MOREBOARDS, False)
    await alice.send("toggle nonsense")
    assert await alice.line() == replies.dont_know_toggle("nonsense")
    await alice.send("save")
    assert await alice.line() == replies.SETTINGS_SAVED


async def test_every_set_survives_a_relogin(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("set")
    assert [await alice.line() for _ in range(7)] == replies.set_list(
        {
            "boardstyle": "2",
            "linelength": "0",
            "pagelength": "0",
            "redoubles": "none",
            "sortwho": "login",
            "timezone": "UTC",
        }
    )
    for line, answer in [
        ("set boardstyle 3", replies.set_changed("boardstyle", "3")),
        ("set linelength 80", replies.set_changed("linelength", "80")),
        ("set pagelength 24", replies.set_changed("pagelength", "24")),
        ("set sortwho rating", replies.set_changed("sortwho", "rating")),
        ("set timezone Europe/Sofia", replies.set_changed("timezone", "Europe/Sofia")),
        ("set redoubles unlimited", "Value of 'redoubles' set to 'unlimited'."),
    ]:
        await alice.send(line)
        assert await alice.line() == answer, line
    assert clip.WhoInfo.parse(await alice.line()).name == "alice"  # redoubles: who update
    assert await alice.line() == "6"
    alice = await relogin(connect, app, alice, "alice")
    own = clip.OwnInfo.parse(next(line for line in alice.seen if line.startswith("2 ")))
    assert own.redoubles is None and own.timezone == "Europe/Sofia"
    await alice.send("set")
    assert [await alice.line() for _ in range(7)] == replies.set_list(
        {
            "boardstyle": "3",
            "linelength": "80",
            "pagelength": "24",
            "redoubles": "unlimited",
            "sortwho": "rating",
            "timezone": "Europe/Sofia",
        }
    )
    await alice.send("set board")  # a unique prefix of boardstyle
    assert await alice.line() == replies.set_value("boardstyle", "3")


async def test_set_errors(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    for line, answer in [
        ("set boardstyle 4", replies.BOARDSTYLE_INVALID),
        ("set linelength 1000", replies.LENGTH_INVALID),
        ("set linelength wide", replies.set_changed("linelength", "0")),  # §4.16: 0
        ("set redoubles 100", replies.REDOUBLES_INVALID),
        ("set sortwho height", replies.sortwho_invalid("height")),
        ("set nonsense 1", replies.SET_INVALID),
        ("set timezone Mars/Olympus", replies.bad_timezone("Mars/Olympus")),
    ]:
        await alice.send(line)
        assert await alice.line() == answer, line
    assert (await alice.line()).startswith("Africa/Abidjan, ")


async def test_toggle_and_set_in_telnet_mode(connect: Connect, app: App) -> None:
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "toggle bell") == [replies.toggle_message(Toggle.BELL, True)]
    assert await command(alice, "set boardstyle 1") == [replies.set_changed("boardstyle", "1")]
    reply = await command(alice, "toggle")
    assert reply[0] == "The current settings are:" and "bell            YES" in reply


async def test_password_change_then_login_with_the_new_one(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    for line, answer in [
        ("password", list(replies.PASSWORD_USAGE)),
        ("password secret:abc", list(replies.PASSWORD_USAGE)),
        ("password secret:newpass:other", [replies.NEW_PASSWORD_TWICE]),
        ("password wrong:newpass:newpass", [replies.OLD_PASSWORD_WRONG]),
        ("password secret:newpass:newpass", [replies.PASSWORD_CHANGED]),
    ]:
        await alice.send(line)
        assert [await alice.line() for _ in answer] == answer, line
    await alice.send("bye")
    assert await alice.closed()
    again = await connect()
    await again.prompt(replies.LOGIN_PROMPT)
    await again.send("login test_client 1008 alice secret")
    await again.prompt(replies.LOGIN_PROMPT)  # the old one fails
    await again.send("login test_client 1008 alice newpass")
    await again.expect("6")


async def test_address(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("address")
    assert await alice.line() == replies.ADDRESS_MISSING
    await alice.send("address not-an-address")
    assert await alice.line() == replies.not_an_email("not-an-address")
    await alice.send("address alice@example.org")
    assert await alice.line() == replies.address_set("alice@example.org")
    assert clip.WhoInfo.parse(await alice.line()).email == "alice@example.org"
    assert await alice.line() == "6"
    alice = await relogin(connect, app, alice, "alice")
    mine = [clip.WhoInfo.parse(line) for line in alice.seen if line.startswith("5 alice ")]
    assert mine[-1].email == "alice@example.org"
