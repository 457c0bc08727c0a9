"""The catalogue behind the ``known_lines`` marker (tests/server/known_lines.py) knows the
forms of ``protocol/`` and nothing else, and the check fails a test on an unknown line."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from protocol import clip, commands, replies
from protocol.replies import Mode, SavedMark, Toggle

from .conftest import ScriptedClient, check_known_lines
from .known_lines import catalogue

NOW = dt.datetime(2024, 5, 17, 9, 5, 3, tzinfo=dt.UTC)
KNOWN = [
    replies.LOGIN_PROMPT,
    *replies.banner(NOW.astimezone(ZoneInfo("Europe/Berlin")), NOW),
    *replies.GOODBYE,
    clip.Welcome("alice", 1_700_000_000, "10.0.0.1").format(),
    "5 bob - - 1 0 1418.61 23 1914 1041272421 192.168.40.3 MacFIBS -",
    "12 alice hi there" + replies.BELL,
    replies.says("someone_long_named", "hello: there", Mode.TELNET),
    replies.you_say("bob", "hi", Mode.TELNET),
    replies.finally_logs_in("dave"),
    replies.toggle_message(Toggle.SILENT, True),
    *replies.toggle_list({t: True for t in replies.TOGGLES}),
    replies.set_changed("redoubles", "unlimited"),
    *replies.whois(
        replies.WhoisInfo(
            "bob", replies.whois_date(NOW), "h.example.org", True, 75, away_message="zzz"
        )
    ),
    replies.ratings_line(4431, "someplayer", 1418.61, 23, marked=True),
    replies.ratings_line(7, "a_very_long_username", 2001.5, 1234567),
    replies.saved_line(SavedMark.ONLINE, "bonehead", 3, 1, 2),
    replies.last_line("Wed 11:08", "UTC", replies.drops_connection("someplayer")),
    replies.who_row(12, "P", "someplayer", 1418.61, 23, "1914", "3", "192.168.40.3"),
    *replies.zone_list(["Africa/Abidjan", "Etc/GMT+5", "America/Argentina/Buenos_Aires"]),
    *commands.help_lines(),
    *commands.help_lines("tell"),
    replies.unknown_command("$%^&*"),
    replies.moves("gflohr", ["bar-24", "bar-22"]),
    replies.move_error(replies.MoveErrorReason.BLOCKED, 2, 7),
    replies.score_line(None, "alice", 12, "bob", 3),
    replies.usage("tell <name> <text>"),
    *replies.stat(replies.stat_date(NOW), 12, 3, 5, 123),
    replies.AVERAGE_HEADER,
    replies.average_row(7, replies.HourUsers(63.14, 38, 83), replies.HourUsers(119.8, 100, 140)),
    replies.dicetest_pairs(1, 92359, 7, 123456, 0, 5, 1_000_000),
    "board:You:someplayer:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
    "1:6:2:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:2:0:0:0",
]
UNKNOWN = [
    "Hello world",
    "** Something bogus happened.",
    "** You tell bob hi",  # the colon is missing
    "5 bob - - 1 0 1418.6 23",  # a broken CLIP 5
    "board:You:bob:1:2",
    "You rolled a six",
    "Welcome back!",
    "alice logs in",
    "alice says hi",
    "Traceback (most recent call last):",
]


@pytest.mark.parametrize("line", KNOWN)
def test_the_forms_of_protocol_are_known(line: str) -> None:
    assert catalogue().knows(line), line


@pytest.mark.parametrize("line", UNKNOWN)
def test_other_lines_are_not(line: str) -> None:
    assert not catalogue().knows(line), line


def test_the_check_fails_on_an_unknown_line() -> None:
    client = ScriptedClient(None, None)  # type: ignore[arg-type]  # never reads or writes
    client.seen = [replies.WELCOME_BACK, "Welcome back!"]
    client.buffer = b"Hello world\r\n" + replies.LOGIN_PROMPT.encode()
    with pytest.raises(AssertionError, match="Hello world"):
        check_known_lines([client])
    client.buffer = b""
    with pytest.raises(AssertionError, match="Welcome back!"):
        check_known_lines([client])
