"""Chat over real sockets (§4.12, §4.13, §2.4): every form between two and three clients,
in CLIP and in telnet mode."""

from __future__ import annotations

import pytest

from protocol import clip, replies
from protocol.replies import Mode, Toggle
from server.app import App

from .conftest import Connect, clip_login, make_user
from .fibs_parsers import fcm_cookie
from .sessions import command, login_all, online, telnet_login, who_update_seen

pytestmark = pytest.mark.known_lines

CLIP = Mode.CLIP
TELNET = Mode.TELNET


async def test_tell_with_name_completion_between_three(connect: Connect, app: App) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await alice.send("tell b  hi  there")  # a unique prefix; the text keeps its spacing
    assert await alice.line() == replies.you_say("bob", "hi  there", CLIP)
    assert await bob.line() == replies.says("alice", "hi  there", CLIP)
    await alice.send("t car hello")  # `t` is tell (§4.1)
    assert await alice.line() == replies.you_say("carol", "hello", CLIP)
    assert await carol.line() == replies.says("alice", "hello", CLIP)
    await carol.send("tell alice back")
    assert await alice.line() == "12 carol back"
    assert await carol.line() == "16 alice back"
    await bob.nothing(0.1)


async def test_tell_errors(connect: Connect, app: App) -> None:
    alice, _bob, _bobby = await login_all(connect, app, "alice", "bob", "bobby")
    await alice.send("tell nobody hi")
    assert await alice.line() == replies.no_one_called("nobody")
    await alice.send("tell alice hi me")
    assert await alice.line() == replies.say_to_yourself("hi me")
    await alice.send("tell bob")
    assert await alice.line() == replies.usage("tell <name> <text>")
    await alice.send("tell bo hi")  # bob and bobby
    assert await alice.line() == replies.ambiguous_name(["bob", "bobby"], "bo")[0]
    assert await alice.line() == replies.no_one_called("bo")


async def test_tellx_needs_the_exact_name(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await alice.send("tellx bo hi")
    assert await alice.line() == replies.no_one_called("bo")
    await alice.send("tellx bob hi")
    assert await alice.line() == "16 bob hi"
    assert await bob.line() == "12 alice hi"


async def test_tell_in_telnet_mode(connect: Connect, app: App) -> None:
    bob = await clip_login(connect, app, "bob")
    alice = await telnet_login(connect, app, "alice")
    await who_update_seen(bob, "alice")
    assert await command(alice, "tell bob hi") == [replies.you_say("bob", "hi", TELNET)]
    assert await bob.line() == "12 alice hi"
    await bob.send("tell alice hello")
    assert await bob.line() == "16 alice hello"
    assert await alice.line() == replies.says("bob", "hello", TELNET)
    assert await command(alice, "tell alice me") == [replies.say_to_yourself("me")]


async def test_bell_follows_a_tell(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await bob.send("toggle bell")
    assert await bob.line() == replies.toggle_message(Toggle.BELL, True)
    await alice.send("tell bob ring")
    assert await bob.line() == "12 alice ring" + replies.BELL
    assert await alice.line() == "16 bob ring"


async def test_alert(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await alice.send("alert bob wake up")
    assert await alice.line() == "16 bob wake up"
    assert await bob.line() == replies.alert("alice", "wake up", CLIP)


async def test_say_only_to_the_opponent(connect: Connect, app: App) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await alice.send("say hello")
    assert await alice.line() == replies.SAY_OUTSIDE_GAME
    online(app, "alice").start_playing("bob")
    online(app, "bob").start_playing("alice")
    await alice.send("say good luck")
    assert await alice.line() == replies.you_say("bob", "good luck", CLIP)  # D44
    assert await bob.line() == replies.says("alice", "good luck", CLIP)
    await bob.send("s thanks")  # `s` is say (§4.1)
    assert await alice.line() == "12 bob thanks"
    assert await bob.line() == "16 alice thanks"
    await alice.send("say")
    assert await alice.line() == replies.usage("say <text>")
    await carol.send("say hi")
    assert await carol.line() == replies.SAY_OUTSIDE_GAME


async def test_shout_respects_silent(connect: Connect, app: App) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await carol.send("toggle silent")
    assert await carol.line() == replies.toggle_message(Toggle.SILENT, True)
    await alice.send("shout anybody for a 5 point match?")
    assert await alice.line() == replies.you_shout("anybody for a 5 point match?", CLIP)
    assert await bob.line() == replies.shouts("alice", "anybody for a 5 point match?", CLIP)
    await carol.nothing(0.1)
    await carol.send("shout me too")
    assert await carol.line() == replies.TOGGLE_SILENT_BEFORE_SHOUT
    await alice.nothing(0.1)


async def test_shout_in_telnet_mode(connect: Connect, app: App) -> None:
    bob = await clip_login(connect, app, "bob")
    alice = await telnet_login(connect, app, "alice")
    await who_update_seen(bob, "alice")
    assert await command(alice, "shout hey") == [replies.you_shout("hey", TELNET)]
    assert await bob.line() == "13 alice hey"
    await bob.send("shout ho")
    assert await bob.line() == "17 ho"
    assert await alice.line() == replies.shouts("bob", "ho", TELNET)


async def test_gag(connect: Connect, app: App) -> None:
    await make_user(app, "dave")
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await bob.send("gag")
    assert await bob.line() == replies.gagged_users([])
    await bob.send("gag ali")
    assert await bob.line() == replies.you_gag("alice")
    await alice.send("tell bob hi")
    assert await alice.line() == replies.wont_listen("bob")
    await bob.send("tell alice hi")
    assert await bob.line() == replies.CANT_TALK_WONT_LISTEN
    await alice.send("message bob hi")
    assert await alice.line() == replies.wont_listen("bob")
    await alice.send("shout hello all")
    assert await alice.line() == "17 hello all"
    assert await carol.line() == "13 alice hello all"
    await bob.nothing(0.1)
    await bob.send("gag dave")  # offline, exact name (D74)
    assert await bob.line() == replies.you_gag("dave")
    await bob.send("gag")
    assert await bob.line() == replies.gagged_users(["alice", "dave"])
    await bob.send("gag bob")
    assert await bob.line() == replies.GAG_YOURSELF
    await bob.send("gag nobody")
    assert await bob.line() == replies.no_one_quoted("nobody")
    await bob.send("gag alice")
    assert await bob.line() == replies.you_ungag("alice")
    await alice.send("tell bob hi")
    assert await alice.line() == "16 bob hi"
    assert await bob.line() == "12 alice hi"
    assert (await app.db.get_user("bob")).gagged == ("dave",)  # type: ignore[union-attr]


async def test_blind(connect: Connect, app: App) -> None:
    (bob,) = await login_all(connect, app, "bob")
    await make_user(app, "alice")
    await bob.send("blind")
    assert await bob.line() == replies.blinded_users([])
    await bob.send("blind alice")
    assert await bob.line() == replies.you_blind("alice")
    await bob.send("blind")
    assert await bob.line() == replies.blinded_users(["alice"])
    await bob.send("blind bob")
    assert await bob.line() == replies.BLIND_YOURSELF
    await bob.send("blind nobody")
    assert await bob.line() == replies.no_one_quoted("nobody")
    await bob.send("blind alice")
    assert await bob.line() == replies.you_unblind("alice")
    assert (await app.db.get_user("bob")).blinded == ()  # type: ignore[union-attr]


async def test_away_lists_tells_and_back(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await bob.send("away out for lunch")
    assert await bob.line() == replies.YOURE_AWAY  # the reply; the who update follows
    for client in (alice, bob):
        info = clip.WhoInfo.parse(await who_update_seen(client, "bob"))
        assert info.away
    await alice.send("tell bob hi")
    assert await alice.line() == "16 bob hi"
    assert await alice.line() == replies.is_away("bob", "out for lunch")
    assert await bob.line() == "12 alice hi"
    await alice.send("away")
    assert await alice.line() == replies.AWAY_HEADER
    assert await alice.line() == replies.away_entry("bob", "out for lunch")
    await bob.send("away")
    assert await bob.line() == replies.AWAY_HEADER
    assert await bob.line() == replies.away_entry("You", "out for lunch")
    assert await bob.line() == replies.YOURE_AWAY  # after every reply while away
    await bob.send("back")
    assert await bob.line() == replies.WELCOME_BACK
    for client in (alice, bob):
        assert not clip.WhoInfo.parse(await who_update_seen(client, "bob")).away
    await bob.send("back")
    assert await bob.line() == replies.NOT_AWAY


async def test_away_in_telnet_mode(connect: Connect, app: App) -> None:
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "away gone") == [replies.YOURE_AWAY]
    reply = await command(alice, "time")
    assert len(reply) == 2 and reply[1] == replies.YOURE_AWAY
    assert await command(alice, "back") == [replies.WELCOME_BACK]
    assert await command(alice, "away") == [replies.NONE_AWAY]


async def test_message_to_online_offline_and_unknown(connect: Connect, app: App) -> None:
    await make_user(app, "dave")
    alice, bob = await login_all(connect, app, "alice", "bob")
    await alice.send("message bob see you at 10")
    assert await alice.line() == replies.message_delivered("bob", CLIP)
    got = clip.Message.parse(await bob.line())
    assert (got.sender, got.text) == ("alice", "see you at 10")
    await alice.send("message dave I'll log in at 10pm")
    assert await alice.line() == replies.message_saved("dave", CLIP)
    await alice.send("message nobody hi")
    assert await alice.line() == replies.dont_know_user("nobody")
    await alice.send("message dave")
    assert await alice.line() == replies.MESSAGE_USAGE
    await alice.send("message")
    assert await alice.line() == replies.NO_NEW_MESSAGES
    dave = await connect()
    await dave.prompt(replies.LOGIN_PROMPT)
    await dave.send("login test_client 1008 dave secret")
    stored = clip.Message.parse(await dave.expect_prefix("9 "))
    assert (stored.sender, stored.text) == ("alice", "I'll log in at 10pm")
    await dave.expect("6")
    await dave.send("message")
    assert await dave.line() == replies.NO_NEW_MESSAGES  # delivered once


async def test_messages_in_telnet_mode(connect: Connect, app: App) -> None:
    await make_user(app, "dave")
    await make_user(app, "alice")
    await app.db.store_message("dave", "alice", "first", sent_at=1_700_000_000)
    dave = await telnet_login(connect, app, "dave")
    seen = dave.seen
    at = seen.index(replies.MESSAGES_FOR_YOU)
    assert seen[at + 1] == replies.message_line("alice", 1_700_000_000, "first", TELNET)
    assert await command(dave, "message dave to myself") == [
        replies.message_line("dave", 0, "to myself", TELNET),  # telnet shows no time
        replies.message_delivered("dave", TELNET),
    ]
    assert await command(dave, "message alice later") == [replies.message_saved("alice", TELNET)]
    await app.db.store_message("dave", "alice", "second")
    assert await command(dave, "message") == [
        replies.MESSAGES_FOR_YOU,
        replies.message_line("alice", 1_700_000_000, "second", TELNET),
    ]


async def test_waitfor(connect: Connect, app: App) -> None:
    await make_user(app, "dave")
    alice, _bob = await login_all(connect, app, "alice", "bob")
    await alice.send("waitfor")
    assert await alice.line() == replies.NOT_WAITING
    await alice.send("waitfor dave alice bob nobody")
    assert await alice.line() == replies.will_receive_message("dave")
    assert await alice.line() == replies.WAITFOR_YOURSELF
    assert await alice.line() == replies.already_logged_in("bob")
    assert await alice.line() == replies.no_user_called("nobody")
    await alice.send("waitfor")
    assert await alice.line() == replies.waiting_for(["dave"])[0]
    dave = await connect()
    await dave.prompt(replies.LOGIN_PROMPT)
    await dave.send("login test_client 1008 dave secret")
    await dave.expect("6")
    notice = await dave.line()
    assert notice == "alice is waiting for you to log in."  # no ``** `` (D161)
    assert notice == replies.is_waiting_for_you("alice")
    assert fcm_cookie(notice) == "FIBS_PlayerIsWaitingForYou"
    assert await alice.line() == "7 dave dave logs in."
    await who_update_seen(alice, "dave")
    assert await alice.line() == replies.finally_logs_in("dave")  # ends with three BELs
    await alice.send("waitfor")
    assert await alice.line() == replies.NOT_WAITING


async def test_say_and_alert_in_telnet_mode(connect: Connect, app: App) -> None:
    bob = await clip_login(connect, app, "bob")
    alice = await telnet_login(connect, app, "alice")
    await who_update_seen(bob, "alice")
    online(app, "alice").start_playing("bob")
    online(app, "bob").start_playing("alice")
    assert await command(alice, "say hi") == [replies.you_say("bob", "hi", TELNET)]
    assert await bob.line() == "12 alice hi"
    await bob.send("say yo")
    assert await bob.line() == "16 alice yo"
    assert await alice.line() == replies.says("bob", "yo", TELNET)
    await bob.send("alert alice look")
    assert await bob.line() == "16 alice look"
    assert await alice.line() == replies.alert("bob", "look", TELNET)
    assert await command(alice, "alert bob back") == [replies.you_say("bob", "back", TELNET)]
    assert await bob.line() == "20 alice back"


async def test_tell_completes_a_name_case_insensitively_as_fibs_does(
    connect: Connect, app: App
) -> None:
    """D234: FIBS completes a name case-sensitively first, then case-insensitively (§4.1,
    HELP names), so with only Casey online (and no casey registered, D269)
    ``tell casey`` reaches Casey; once casey (a look-alike from before D269) is online
    too, the exact name wins. ``tellx`` never completes."""
    alice, casey_upper = await login_all(connect, app, "alice", "Casey")
    await alice.send("tell casey hi")
    assert await alice.line() == "16 Casey hi"
    assert await casey_upper.line() == "12 alice hi"
    await alice.send("tellx casey hi")
    assert await alice.line() == replies.no_one_called("casey")
    await make_user(app, "casey", allow_look_alikes=True)
    casey = await clip_login(connect, app, "casey")
    await who_update_seen(alice, "casey")
    await who_update_seen(casey_upper, "casey")
    await alice.send("tell casey hello")
    assert await alice.line() == "16 casey hello"
    assert await casey.line() == "12 alice hello"
    await casey_upper.nothing(0.1)
