"""Nobody is left uninformed (issue 14 item 6; D174-D180): watchers when a match stops,
the mover after a resume, ``motd``, ``ratings``, ``help who``, bots in ``who`` and
``whois``, help without jargon, an unknown time zone, a new bot's first login."""

from __future__ import annotations

import asyncio
import re

import pytest

from bots.client import ClientConfig, FibsClient
from bots.random import RandomStrategy
from protocol import clip, replies
from protocol.commands import COMMANDS, HELP_TOPICS, help_lines
from protocol.replies import Mode
from server.app import App
from server.config import Settings

from .conftest import Connect, ScriptedClient, clip_login, make_user
from .sessions import command, start_match, telnet_login, who_update_seen

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _watchers(connect: Connect, app: App) -> tuple[ScriptedClient, ScriptedClient]:
    """carol watches alice, dave watches bob."""
    carol = await clip_login(connect, app, "carol")
    dave = await clip_login(connect, app, "dave")
    for watcher, player in ((carol, "alice"), (dave, "bob")):
        await watcher.send("set boardstyle 3")
        await watcher.send(f"watch {player}")
        await watcher.expect(replies.now_watching(player))
    return carol, dave


async def test_watchers_of_both_players_hear_that_a_player_left(connect: Connect, app: App) -> None:
    alice, bob = await start_match(connect, app, 3)
    carol, dave = await _watchers(connect, app)
    await alice.send("leave")
    await alice.expect(replies.YOU_TERMINATED)
    await bob.expect(replies.has_left("alice"))
    await carol.expect(replies.has_left("alice"))
    await dave.expect(replies.has_left("alice"))


async def test_the_opponents_watchers_hear_that_a_player_dropped(
    connect: Connect, app: App
) -> None:
    alice, bob = await start_match(connect, app, 3)
    carol, dave = await _watchers(connect, app)
    await alice.close()
    dropped = replies.drops_connection("alice")
    await bob.expect(replies.saved_after(dropped))
    await dave.expect(replies.saved_after(dropped))  # D174: bob's watcher hears it too
    await carol.expect(replies.not_watching_anymore(dropped))  # alice's watcher (§4.11)


async def test_watchers_hear_the_match_end(connect: Connect, app: App) -> None:
    alice, bob = await start_match(connect, app, 3)
    carol, dave = await _watchers(connect, app)
    await alice.send("resign b")
    await bob.expect(replies.wants_to_resign("alice", 3))
    await bob.send("accept")
    line = replies.wins_match("bob", 3, 3, 0)
    await carol.expect(line)
    await dave.expect(line)


async def test_after_a_resume_the_player_with_dice_is_told_to_move(
    connect: Connect, app: App
) -> None:
    alice, bob = await start_match(connect, app, 3)
    await bob.send("leave")
    await bob.expect(replies.YOU_TERMINATED)
    await alice.expect(replies.has_left("bob"))
    await alice.close()
    alice = await telnet_login(connect, app, "alice", create=False)
    await command(alice, "set boardstyle 3")
    await command(alice, "toggle ready")
    await bob.send("invite alice")
    await alice.expect(replies.type_join("bob"))
    await alice.send("join bob")
    await alice.expect(replies.now_playing_resumed("bob"))
    await alice.expect(replies.please_move(2))
    assert await alice.line() == replies.dice_when_saved(3, 1)
    await bob.expect(replies.joined_resumed("alice"))
    synopsis: list[str] = []
    while sum(line.startswith("points for ") for line in synopsis) < 2:
        synopsis.append(await bob.line())
    await bob.send("motd")  # bob (CLIP, not to move) got no move reminder before this
    assert await bob.line() == clip.MotdBegin().format()


async def test_motd_ratings_and_help_in_telnet_mode(
    connect: Connect, app: App, settings: Settings
) -> None:
    app.motd = []
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "motd") == [replies.NO_MOTD]
    assert await command(alice, "ratings") == [replies.RATINGS_HEADER, replies.ratings_who(50)]
    who_help = await command(alice, "help who")
    assert who_help == help_lines("who")
    assert any("P playing, W watching, A away, R ready" in line for line in who_help)
    clip_alice = await clip_login(connect, app, "bob")
    await clip_alice.send("motd")
    assert [await clip_alice.line(), await clip_alice.line()] == clip.motd([])
    await clip_alice.send("ratings")
    assert await clip_alice.line() == replies.RATINGS_HEADER
    await clip_alice.send("motd")  # the ratings reply ended with the header: no extra line
    assert await clip_alice.line() == clip.MotdBegin().format()


JARGON = re.compile(r"CLIP|\bD\d+\b|§")


def test_help_texts_carry_no_internal_jargon() -> None:
    texts = [line for topic in (*COMMANDS, *HELP_TOPICS) for line in help_lines(topic)]
    texts += help_lines(None)
    assert not [line for line in texts if JARGON.search(line)]


async def test_who_and_whois_mark_bots_in_telnet_mode(connect: Connect, app: App) -> None:
    await make_user(app, "robot")
    await app.db.set_bot("robot", True)
    robot = await clip_login(connect, app, "robot", create=False)
    alice = await telnet_login(connect, app, "alice")
    rows = await command(alice, "who")
    assert rows[0] == replies.WHO_HEADER
    marks = {row.split()[2]: row.split()[1] for row in rows[1:]}
    assert marks == {"robot": "-" + replies.BOT_MARK, "alice": "-"}
    whois = await command(alice, "whois robot")
    assert "  robot is a bot: a program that plays, not a person." in whois
    assert not any("is a bot" in line for line in await command(alice, "whois alice"))
    await robot.send("whois robot")  # CLIP mode: FIBS's block, unchanged
    block = [await robot.line() for _ in range(6)]
    assert not any("is a bot" in line for line in block)


async def test_an_unknown_time_zone_gets_one_line_in_telnet_mode(
    connect: Connect, app: App
) -> None:
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "set timezone Mars/Olympus") == [
        replies.unknown_timezone("Mars/Olympus")
    ]
    assert await command(alice, "time Mars/Olympus") == [replies.unknown_timezone("Mars/Olympus")]
    listed = await command(alice, "show timezones Europe/B")
    assert "Europe/Berlin" in ", ".join(listed)
    assert all(z.startswith("Europe/B") for line in listed for z in line.split(", "))
    assert await command(alice, "show timezones Mars") == [replies.NO_TIMEZONES]
    bob = await clip_login(connect, app, "bob")
    await bob.send("set timezone Mars/Olympus")  # CLIP: FIBS's line and the list (D73)
    assert await bob.line() == replies.bad_timezone("Mars/Olympus")
    while "Europe/Berlin" not in (line := await bob.line()):
        assert "," in line, line  # zone list lines until Berlin's


@pytest.mark.parametrize("registration_write_delay", [0.0, 1.0])
async def test_a_new_bots_first_start_shows_no_drop(
    connect: Connect, app: App, monkeypatch: pytest.MonkeyPatch, registration_write_delay: float
) -> None:
    """The bot registers, then logs in with CLIP as soon as it reads ``You are
    registered.`` (D180): the CLIP login replaces the registration's session (D196),
    however long that session's login takes to write. (Before, the CLIP login could be
    checked first; the registration's session then entered in its place, and once the
    bot closed that connection the bot was online for nobody.)"""
    update_login = app.db.update_login
    delayed: set[str] = set()

    async def slow_first_login_write(name: str, host: str) -> None:
        if name == "NewBot" and name not in delayed:  # the registration's login
            delayed.add(name)
            await asyncio.sleep(registration_write_delay)
        await update_login(name, host)

    monkeypatch.setattr(app.db, "update_login", slow_first_login_write)
    alice = await clip_login(connect, app, "alice")  # notify is on for a new account
    bot = FibsClient(
        ClientConfig("127.0.0.1", app.port, "NewBot", "secret", command_interval=0.0),
        RandomStrategy(),
    )
    task = asyncio.create_task(bot.run())
    try:
        await asyncio.wait_for(bot.logged_in.wait(), 10.0)
        await who_update_seen(alice, "NewBot")
        await asyncio.sleep(registration_write_delay)  # every login under way has ended
        await alice.send("rawwho NewBot")  # a reply after every notice the logins caused
        await alice.expect_prefix("5 NewBot ")
        await alice.expect("6")
    finally:
        await bot.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    notices = [line for line in alice.seen if line.startswith(("7 NewBot", "8 NewBot"))]
    assert notices == [replies.login_notice("NewBot", Mode.CLIP)], notices  # one login (D196)
