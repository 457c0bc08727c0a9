"""Information commands over real sockets (§4.2, §4.14): who/rawwho filters, whois
(online and offline), where, ratings, time, show, last, motd, help and the rest."""

from __future__ import annotations

import datetime as dt

import pytest

from protocol import clip, commands, replies
from protocol.replies import SavedMark, Toggle
from server.app import App

from .conftest import Connect, clip_login, make_user
from .fibs_parsers import (
    FCM_AVERAGE_HEADER_MEANT,
    GIBBON_NO_SAVED,
    GIBBON_SAVED_HEADER,
    fcm_cookie,
)
from .sessions import command, login_all, online, telnet_login, who_update_seen

pytestmark = pytest.mark.known_lines


def rawwho_names(client_lines: list[str]) -> list[str]:
    return [clip.WhoInfo.parse(line).name for line in client_lines]


async def test_who_and_rawwho_filters(connect: Connect, app: App) -> None:
    alice, bob, carol = await login_all(connect, app, "alice", "bob", "carol")
    await bob.send("toggle ready")
    assert await bob.line() == replies.toggle_message(Toggle.READY, True)
    for client in (alice, bob, carol):
        await who_update_seen(client, "bob")
    await carol.send("away gone")
    assert await carol.line() == replies.YOURE_AWAY  # the reply; the who update follows
    for client in (alice, bob, carol):
        await who_update_seen(client, "carol")
    online(app, "alice").start_playing("dave")

    async def names(line: str) -> list[str]:
        await alice.send(line)
        return rawwho_names(await alice.expect("6"))

    assert await names("rawwho") == ["alice", "bob", "carol"]
    assert await names("rawwho ready") == ["bob"]
    assert await names("rawwho away") == ["carol"]
    assert await names("rawwho playing") == ["alice"]
    assert await names("rawwho carol") == ["carol"]
    assert await names("rawwho nobody") == []
    assert await names("rawwho from 127.0") == ["alice", "bob", "carol"]
    assert await names("rawwho from example.org") == []
    assert await names("who ready") == ["bob"]
    assert await names("w") == ["alice", "bob", "carol"]  # `w` is who (§4.1)
    await alice.send("who count")
    assert await alice.line() == replies.who_count(3)
    await alice.send("who nobody")
    assert await alice.line() == replies.no_one_called_period("nobody")
    await alice.send("set sortwho name")
    assert await alice.line() == replies.set_changed("sortwho", "name")
    assert await names("rawwho") == ["alice", "bob", "carol"]


async def test_who_in_telnet_mode(connect: Connect, app: App) -> None:
    alice = await telnet_login(connect, app, "alice")
    reply = await command(alice, "who")
    assert reply[0] == replies.WHO_HEADER
    assert reply[1].split()[:3] == ["1", "-", "alice"]
    assert await command(alice, "who count") == [replies.who_count(1)]


async def test_whois_online(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await bob.send("address bob@example.org")
    assert await bob.line() == replies.address_set("bob@example.org")
    await who_update_seen(alice, "bob")
    await alice.send("whois bob")
    lines = [await alice.line() for _ in range(6)]
    session = online(app, "bob")
    local = dt.datetime.fromtimestamp(session.login_time, dt.UTC)
    assert lines[0] == "Information about bob:"
    assert lines[1] == f"  Last login:  {replies.whois_date(local)} from 127.0.0.1"
    assert lines[2].startswith("  Still logged in. ") and lines[2].endswith(" seconds idle.")
    assert lines[3] == "  bob is not ready to play, not watching, not playing."
    assert lines[4] == "  Rating: 1500.00 Experience: 0"
    assert lines[5] == "  Email address: bob@example.org"
    await alice.send("whois")
    assert await alice.line() == replies.WHOIS_USAGE
    await alice.send("whois nobody")
    assert await alice.line() == replies.no_information("nobody")
    await alice.send("whois bo")  # exact names only
    assert await alice.line() == replies.no_information("bo")


async def test_whois_offline_in_the_askers_time_zone(connect: Connect, app: App) -> None:
    await make_user(app, "dave", rating=1618.5, experience=77)
    await app.db.update_login("dave", "dave.example.org", at=1_700_000_000)
    await app.db.update_logout("dave", at=1_700_003_600)
    alice = await telnet_login(connect, app, "alice")
    assert await command(alice, "set timezone Europe/Berlin") == [
        replies.set_changed("timezone", "Europe/Berlin")
    ]
    reply = await command(alice, "whois dave")
    assert reply == [
        "Information about dave:",
        "  Last login:  Tuesday, November 14 23:13 CET from dave.example.org",
        "  Last logout: Wednesday, November 15 00:13 CET",
        "  Not logged in right now.",
        "  Rating: 1618.50 Experience: 77",
        "  No email address.",
    ]


async def test_whois_shows_away_and_playing(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    online(app, "bob").start_playing("alice")
    online(app, "bob").away = "brb"
    await alice.send("whois bob")
    lines = await alice.expect("  No email address.")
    assert lines[3:] == [
        "  bob is playing with alice.",
        "  " + replies.is_away("bob", "brb"),
        "  Rating: 1500.00 Experience: 0",
    ]
    del bob


async def test_where(connect: Connect, app: App) -> None:
    alice, _bob = await login_all(connect, app, "alice", "bob")
    await alice.send("where b")
    assert await alice.line() == replies.where("bob", "127.0.0.1")
    await alice.send("where nobody")
    assert await alice.line() == replies.no_one_there("nobody")
    await alice.send("where")
    assert [await alice.line(), await alice.line()] == [
        replies.where("alice", "127.0.0.1"),
        replies.where("bob", "127.0.0.1"),
    ]


async def test_ratings(connect: Connect, app: App) -> None:
    for i, name in enumerate(("ann", "ben", "cat", "dan")):
        await make_user(app, name, rating=1700.0 - 50 * i, experience=100 + i)
    await make_user(app, "newbie")  # experience 0: not on the list
    alice = await clip_login(connect, app, "ben")
    await alice.send("ratings")
    assert await alice.line() == replies.RATINGS_HEADER
    assert [await alice.line() for _ in range(4)] == [
        replies.ratings_line(1, "ann", 1700.0, 100),
        replies.ratings_line(2, "ben", 1650.0, 101, marked=True),
        replies.ratings_line(3, "cat", 1600.0, 102),
        replies.ratings_line(4, "dan", 1550.0, 103),
    ]
    await alice.send("ratings from 2 to 3")
    assert await alice.line() == replies.RATINGS_HEADER
    assert await alice.line() == replies.ratings_line(2, "ben", 1650.0, 101, marked=True)
    assert await alice.line() == replies.ratings_line(3, "cat", 1600.0, 102)
    await alice.send("ratings dan")
    assert await alice.line() == replies.RATINGS_HEADER
    assert await alice.line() == replies.ratings_line(4, "dan", 1550.0, 103, marked=True)
    await alice.send("ratings newbie")
    assert await alice.line() == replies.RATINGS_HEADER
    assert await alice.line() == replies.ratings_line(5, "newbie", 1500.0, 0, marked=True)
    for line, error in [
        ("ratings from 5 to 2", replies.invalid_range(5, 2)),
        ("ratings from 1 to 101", replies.RATINGS_RANGE_LIMIT),
        ("ratings from x", replies.positive_number_after("from")),
        ("ratings to 0", replies.positive_number_after("to")),
        ("ratings ann ben", replies.only_one_name("ann", "ben")),
        ("ratings nobody", replies.dont_know_user("nobody")),
    ]:
        await alice.send(line)
        assert await alice.line() == error, line
    await alice.send("ratings from 90")
    assert await alice.line() == replies.RATINGS_HEADER
    await alice.nothing(0.1)


async def test_time_and_date(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("time")
    line = await alice.line()
    assert line.endswith(" UTC )") and ", " in line
    await alice.send("date Asia/Tokyo")
    assert " JST   ( " in await alice.line()
    await alice.send("time Nowhere/Land")
    assert await alice.line() == replies.bad_timezone("Nowhere/Land")
    first_row = await alice.line()
    assert first_row.startswith("Africa/Abidjan, ")


async def test_show(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await make_user(app, "dave")
    await alice.send("show saved")
    # D163: the header comes first even with nothing saved (Gibbon waits for it).
    assert [await alice.line(), await alice.line()] == [
        "  opponent          matchlength   score (your points first)",
        "no saved games.",
    ]
    await app.db.save_match(
        "t-alice-bob", "alice", "bob", "{}", match_length=3, score_a=1, score_b=2
    )
    await app.db.save_match(
        "t-alice-dave", "dave", "alice", "{}", match_length=None, score_a=0, score_b=4
    )
    await alice.send("show saved")
    assert [await alice.line() for _ in range(3)] == [
        replies.SAVED_HEADER,
        replies.saved_line(SavedMark.ONLINE, "bob", 3, 1, 2),
        replies.saved_line(SavedMark.OFFLINE, "dave", None, 4, 0),
    ]
    for line, answer in [
        ("show savedcount alice", replies.savedcount("alice", 2)),
        ("show savedc dave", replies.savedcount("dave", 1)),
        ("show savedcount nobody", replies.savedcount("nobody", 0)),
        ("show max", replies.max_logins(app.settings.max_logins, 2)),
        ("show", replies.SHOW_WHAT),
        ("show sa", replies.dont_know_show("sa")),
        ("show nonsense", replies.dont_know_show("nonsense")),
        ("show games", replies.GAMES_HEADER),
        ("show watchers", replies.WATCHING_PLAYERS_NONE),
    ]:
        await alice.send(line)
        assert await alice.line() == answer, line
    await alice.nothing(0.1)
    del bob


async def test_last(connect: Connect, app: App) -> None:
    alice, bob = await login_all(connect, app, "alice", "bob")
    await bob.send("bye")
    assert await alice.expect_prefix("8 ") == "8 bob bob logs out."
    await alice.send("last")
    assert await alice.line() == replies.LAST_HEADER
    rows = [await alice.line() for _ in range(3)]
    assert [row.split(": ", 1)[1] for row in rows] == [
        "alice logs in.",
        "bob logs in.",
        "bob logs out.",
    ]
    assert rows[0].split()[2] == "UTC:"
    await alice.send("last bob")
    assert await alice.line() == replies.LAST_USE_WHOIS


async def test_motd_help_and_server_texts(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    await alice.send("motd")
    assert [await alice.line(), await alice.line()] == ["3", "4"]
    await alice.send("help")
    assert await alice.expect(commands.help_lines()[-1]) == commands.help_lines()[:-1]
    await alice.send("help tell")
    assert [await alice.line() for _ in commands.help_lines("tell")] == commands.help_lines("tell")
    await alice.send("help nosuchthing")
    assert await alice.line() == replies.NO_HELP
    await alice.send("version")
    assert (await alice.line()).startswith("** Version fibs-server ")
    await alice.send("port")
    assert await alice.line() == replies.port(app.port)
    await alice.send("about")
    assert (await alice.line()).startswith("This is fibs-server ")
    await alice.expect(replies.about("x", "y")[-1])
    await alice.send("stat")
    assert (await alice.line()).startswith("The server is running since ")
    assert await alice.line() == "1 registered users."
    assert await alice.line() == "Users logged in: 1 (most at once: 1)."
    assert await alice.line() == "Logins since the start: 1."
    await alice.send("average")
    assert await alice.line() == replies.AVERAGE_HEADER
    assert len([await alice.line() for _ in range(12)]) == 12
    await alice.send("cls")
    assert await alice.line() == replies.CLEAR_SCREEN


async def test_refusals_of_section_4_2(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    for line, answer in [
        ("erase bob", replies.PERMISSION_DENIED),
        ("shutdown", replies.PERMISSION_DENIED),
        ("co", replies.PERMISSON_DENIED),
        ("ne", replies.PERMISSON_DENIED),
        ("ye", replies.PERMISSON_DENIED),
        ("name bob", replies.NAME_NOT_CHANGEABLE),
        ("fizzbuzz", replies.unknown_command("fizzbuzz")),
        ("re", replies.unknown_command("re")),  # ambiguous prefix (§4.1)
    ]:
        await alice.send(line)
        assert await alice.line() == answer, line


async def test_show_saved_as_fcm_and_gibbon_read_it(connect: Connect, app: App) -> None:
    """D163: ``show saved`` starts with the header in both cases, and every line is one
    FCM names and Gibbon's word checks recognise (tests/server/fibs_parsers.py)."""
    await make_user(app, "carol")
    alice, _bob = await login_all(connect, app, "alice", "bob")
    await alice.send("show saved")
    none = [await alice.line(), await alice.line()]
    assert [fcm_cookie(line) for line in none] == ["FIBS_SavedMatchesHeader", "FIBS_NoSavedGames"]
    assert [tuple(line.split()) for line in none] == [GIBBON_SAVED_HEADER, GIBBON_NO_SAVED]
    await app.db.save_match(
        "t-alice-bob", "alice", "bob", "{}", match_length=3, score_a=1, score_b=2
    )
    await app.db.save_match(
        "t-alice-carol", "alice", "carol", "{}", match_length=5, score_a=4, score_b=0
    )
    await alice.send("show saved")
    some = [await alice.line() for _ in range(3)]
    assert [fcm_cookie(line) for line in some] == [
        "FIBS_SavedMatchesHeader",
        "FIBS_SavedMatchReady",
        "FIBS_SavedMatch",
    ]
    assert tuple(some[0].split()) == GIBBON_SAVED_HEADER
    await alice.nothing(0.1)


async def test_stat_and_average_as_fcm_reads_them(connect: Connect, app: App) -> None:
    """D160: ``stat`` and ``average`` in SPEC's forms; FCM names the registered-users line
    and every row of the table."""
    await make_user(app, "dave")
    alice, _bob = await login_all(connect, app, "alice", "bob")
    await alice.send("stat")
    stat = [await alice.line() for _ in range(4)]
    started = dt.datetime.fromtimestamp(app.started_at, dt.UTC)
    assert stat[0] == f"The server is running since {started:%a %b %d %H:%M:%S} UTC."
    assert stat[1] == "3 registered users."
    assert fcm_cookie(stat[1]) == "FIBS_Stat"
    assert stat[2:] == ["Users logged in: 2 (most at once: 2).", "Logins since the start: 2."]

    hour = dt.datetime.now(dt.UTC).hour  # before the table, so the table covers it
    await alice.send("average")
    table = [await alice.line() for _ in range(13)]
    assert table[0] == "Time (UTC)  average min max    Time (UTC)  average min max"
    assert FCM_AVERAGE_HEADER_MEANT.match(table[0])
    assert [fcm_cookie(row) for row in table[1:]] == ["FIBS_Average"] * 12
    cells = {row[:11]: row[11:27] for row in table[1:]}
    cells |= {row[31:42]: row[42:] for row in table[1:]}
    assert set(cells) == {f"{h:02d}:00-{h:02d}:59" for h in range(24)}
    mean, least, most = cells[f"{hour:02d}:00-{hour:02d}:59"].split()
    # Two logged in since the server started with nobody (this hour or the last).
    assert most == "2" and least in ("0", "2") and 0.0 <= float(mean) <= 2.0
    await alice.nothing(0.1)
