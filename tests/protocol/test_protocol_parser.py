"""The command table (spec §4.2) and the line parser (§4.1)."""

from __future__ import annotations

import pytest

from protocol import replies
from protocol.commands import (
    ABBREVIATIONS,
    COMMAND_LIST,
    COMMANDS,
    HELP_TOPICS,
    SessionState,
    help_lines,
    resolve,
)
from protocol.errors import AmbiguousCommandError, UnknownCommandError, UsageError
from protocol.parser import (
    ParsedCommand,
    clean,
    error_lines,
    is_repeat,
    parse,
    repeat,
    state_refusal,
)

# §4.2, every command row (help-only topics are listed separately below).
SPEC_COMMANDS = [
    "about",
    "accept",
    "address",
    "alert",
    "average",
    "away",
    "back",
    "beaver",
    "blind",
    "board",
    "bye",
    "cls",
    "dicetest",
    "double",
    "erase",
    "shutdown",
    "gag",
    "help",
    "invite",
    "join",
    "kibitz",
    "last",
    "leave",
    "look",
    "message",
    "motd",
    "move",
    "off",
    "oldboard",
    "oldmoves",
    "otter",
    "panic",
    "password",
    "pip",
    "port",
    "raccoon",
    "ratings",
    "rawwho",
    "redouble",
    "reject",
    "resign",
    "roll",
    "save",
    "say",
    "set",
    "shout",
    "show",
    "stat",
    "tell",
    "tellx",
    "time",
    "toggle",
    "unwatch",
    "version",
    "waitfor",
    "watch",
    "wave",
    "where",
    "whisper",
    "who",
    "whois",
    "name",
    "co",
    "ne",
    "ye",
]
SPEC_ALIASES = {
    "adios": "bye",
    "ciao": "bye",
    "end": "bye",
    "exit": "bye",
    "logout": "bye",
    "quit": "bye",
    "tschoe": "bye",
    "clear": "cls",
    "date": "time",
    "man": "help",
}
SPEC_TOPICS = [
    "autologin",
    "beginner",
    "boardstyle",
    "client",
    "commands",
    "complaints",
    "countries",
    "crawford",
    "formula",
    "hostnames",
    "names",
    "rules",
    "screen",
    "timezones",
    "tinyfugue",
    "rawboard",
    "sortwho",
]


def parsed(line: str) -> ParsedCommand:
    result = parse(line)
    assert result is not None
    return result


EXTENSION_COMMANDS = ["export", "analysis", "chouette", "token!", "match!", "profile!"]
"""Commands this server adds to FIBS's (docs/protocol-decisions.md D76, D285, D303, D321,
D377)."""


def test_every_command_of_the_spec_is_in_the_table() -> None:
    assert set(SPEC_COMMANDS) | set(EXTENSION_COMMANDS) == set(COMMANDS)
    assert len(COMMAND_LIST) == len(COMMANDS)


@pytest.mark.parametrize(("alias", "name"), SPEC_ALIASES.items())
def test_aliases(alias: str, name: str) -> None:
    assert resolve(alias).name == name


def test_help_topics_exist_and_are_no_commands() -> None:
    for topic in SPEC_TOPICS:
        assert topic in HELP_TOPICS
        assert help_lines(topic) == list(HELP_TOPICS[topic])
    with pytest.raises(UnknownCommandError):
        resolve("beginner")


@pytest.mark.parametrize(("word", "name"), ABBREVIATIONS.items())
def test_special_abbreviations(word: str, name: str) -> None:
    # §4.1: b, k, m, r, s, t, w, wh, to win over other commands sharing the prefix.
    assert resolve(word).name == name
    assert parsed(f"{word} x").name == name


@pytest.mark.parametrize("word", ["re", "l", "c", "e", "d", "sh", "o", "ad", "lo", "wa"])
def test_ambiguous_prefixes_are_unknown(word: str) -> None:
    with pytest.raises(AmbiguousCommandError) as info:
        parse(word)
    assert error_lines(info.value) == (f"** Unknown command: '{word}'",)
    assert len(info.value.candidates) > 1


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("res", "resign"),
        ("rej", "reject"),
        ("red", "redouble"),
        ("inv", "invite"),
        ("j", "join"),
        ("le", "leave"),
        ("adi", "bye"),
        ("q", "bye"),
        ("cl", "cls"),
        ("da", "time"),
        ("raw", "rawwho"),
        ("who", "who"),
        ("whois", "whois"),
        ("tell", "tell"),
        ("tellx", "tellx"),
        ("TOGGLE", "toggle"),
        ("Wh", "whisper"),
    ],
)
def test_unique_prefixes_and_exact_names(word: str, name: str) -> None:
    assert resolve(word).name == name


def test_every_full_name_and_every_unique_prefix_resolves() -> None:
    words = {w: c.name for c in COMMAND_LIST for w in c.words}
    for word, name in words.items():
        assert resolve(word).name == name
        for n in range(1, len(word)):
            prefix = word[:n]
            owners = {
                c for w, c in words.items() if w.startswith(prefix) and COMMANDS[c].prefixable
            }
            if prefix in words or prefix in ABBREVIATIONS or len(owners) != 1:
                continue
            (owner,) = owners  # this word's command, or another's (``ma``: ``man``, not ``match!``)
            assert resolve(prefix).name == owner, prefix


def test_unknown_command_quotes_the_word_as_typed() -> None:
    with pytest.raises(UnknownCommandError) as info:
        parse("FizzBuzz now")
    assert error_lines(info.value) == ("** Unknown command: 'FizzBuzz'",)
    assert info.value.word == "FizzBuzz"


def test_exact_only_words() -> None:
    assert resolve("name").name == "name"
    with pytest.raises(UnknownCommandError):
        resolve("nam")
    for word in ("co", "ne", "ye"):
        command = resolve(word)
        assert state_refusal(command, SessionState.LOBBY, word) == ("** Permisson denied",)


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("8-5 6-5", ("8-5", "6-5")),
        ("1 3", ("1", "3")),
        ("bar 22", ("bar", "22")),
        ("bar-22 13-9", ("bar-22", "13-9")),
        ("b-22", ("b-22",)),
        ("Bar - 5", ("Bar", "-", "5")),
        ("off 3", ("off", "3")),
        ("move bar-5 bar 5 bar - 5 bar -5", ("bar-5", "bar", "5", "bar", "-", "5", "bar", "-5")),
        ("m b 22", ("b", "22")),
    ],
)
def test_moves(line: str, args: tuple[str, ...]) -> None:
    result = parsed(line)
    assert result.name == "move"
    assert result.args == args


def test_b_22_is_the_board_command_and_off_alone_is_off() -> None:
    # §4.5: "`b 22` alone is the `board` command; use `m b 22`."
    assert parsed("b 22").name == "board"
    assert parsed("off").name == "off"


def test_blank_lines_and_cleaning() -> None:
    assert parse("") is None
    assert parse("   \t  \r\n") is None
    assert clean("\ttell  bob\tcafé \r\n") == "tell  bob caf?"
    result = parsed("  tell bob  hi   there  ")
    assert result.args == ("bob", "hi", "there")
    assert result.text_after(1) == "hi   there"
    assert result.text_after(3) == ""
    assert result.word == "tell"
    assert parsed("shout  loud").text_after() == "loud"


@pytest.mark.parametrize(
    ("line", "reply"),
    [
        ("invite", (replies.INVITE_WHO,)),
        ("look", (replies.LOOK_AT_WHO,)),
        ("watch", (replies.WATCH_WHO,)),
        ("whois", (replies.WHOIS_USAGE,)),
        ("oldboard", (replies.OLDBOARD_USAGE,)),
        ("oldmoves", (replies.OLDMOVES_USAGE,)),
        ("resign", (replies.RESIGN_USAGE,)),
        ("address", (replies.ADDRESS_MISSING,)),
        ("password", replies.PASSWORD_USAGE),
        ("message bob", (replies.MESSAGE_USAGE,)),
        ("show", (replies.SHOW_WHAT,)),
        ("last bob", (replies.LAST_USE_WHOIS,)),
    ],
)
def test_usage_errors(line: str, reply: tuple[str, ...]) -> None:
    with pytest.raises(UsageError) as info:
        parse(line)
    assert error_lines(info.value) == reply
    assert info.value.name == line.split()[0]


def test_usage_literals() -> None:
    assert replies.INVITE_WHO == "** invite who?"
    assert replies.RESIGN_USAGE == (
        "** Type 'n' (normal), 'g' (gammon) or 'b' (backgammon) after resign."
    )
    assert replies.PASSWORD_USAGE == (
        "** usage: password <old password>:<new password>:<new password>",
        "** NOTE: The character between the passwords is now a colon!",
    )
    assert parsed("message").args == ()


@pytest.mark.parametrize(
    ("line", "state", "reply"),
    [
        ("roll", SessionState.LOBBY, "** You're not playing."),
        ("move 8-5 6-5", SessionState.WATCHING, "** You're not playing."),
        ("8-5 6-5", SessionState.LOBBY, "** You're not playing."),
        ("board", SessionState.LOBBY, "** You're not playing."),
        ("reject", SessionState.LOBBY, "** You're not playing, so you can't give up."),
        ("leave", SessionState.LOBBY, "** Error: No one to leave."),
        ("say hi", SessionState.WATCHING, "** 'say' can't be used outside a game"),
        ("kibitz hi", SessionState.LOBBY, "** You're not watching or playing."),
        ("whisper hi", SessionState.LOBBY, "** You're not watching or playing."),
        ("pip", SessionState.LOBBY, "** You're not playing or watching."),
        ("unwatch", SessionState.PLAYING, "** You're not watching."),
        (
            "watch bob",
            SessionState.PLAYING,
            "** You can't watch another game while you're playing.",
        ),
        ("oldboard bob", SessionState.PLAYING, "** You can't do this while playing."),
        ("invite bob 3", SessionState.PLAYING, "** You are already playing."),
        ("name bob", SessionState.LOBBY, "** You're not supposed to change your name."),
        ("toggle", SessionState.GUEST, replies.guest_must_register("toggle")),
    ],
)
def test_state_refusals(line: str, state: SessionState, reply: str) -> None:
    result = parsed(line)
    assert state_refusal(result.command, state, result.word or result.name) == (reply,)


@pytest.mark.parametrize(
    ("line", "state"),
    [
        ("roll", SessionState.PLAYING),
        ("board", SessionState.WATCHING),
        ("join", SessionState.PLAYING),
        ("who", SessionState.GUEST),
        ("bye", SessionState.GUEST),
        ("name bob", SessionState.GUEST),
        ("toggle ready", SessionState.LOBBY),
    ],
)
def test_state_allows(line: str, state: SessionState) -> None:
    assert state_refusal(parsed(line).command, state, "x") is None


def test_usage_error_defers_to_state() -> None:
    # A usage error names the command, so dispatch can prefer the state refusal.
    with pytest.raises(UsageError) as info:
        parse("resign")
    assert state_refusal(COMMANDS[info.value.name], SessionState.LOBBY, "resign") == (
        "** You're not playing.",
    )


def test_repeat() -> None:
    # §4.1: !! repeats the last command, not shout/tell/say/kibitz/whisper.
    assert is_repeat(" !! ")
    assert not is_repeat("!")
    last = parsed("board")
    assert repeat(last) is last
    assert repeat(None) is None
    for line in ("shout x", "tell bob x", "say x", "kibitz x", "whisper x", "tellx bob x"):
        assert repeat(parsed(line)) is None


def test_help() -> None:
    lines = help_lines()
    assert lines[0] == "Available commands:"
    listed = {word for line in lines[1:] if line.startswith("  ") for word in line.split()}
    assert listed == {c.name for c in COMMAND_LIST if not c.hidden}
    assert help_lines("invite")[0] == "Usage: invite <name> [<n>|unlimited [rule ...]]"
    assert help_lines("inv") == help_lines("invite")
    assert "Also: adios, ciao, end, exit, logout, quit, tschoe" in help_lines("bye")
    assert "Abbreviation: b" in help_lines("board")
    assert help_lines("nosuchthing") == [replies.NO_HELP]
    assert help_lines("co") == [replies.NO_HELP]
