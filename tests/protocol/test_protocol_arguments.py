"""The argument forms of protocol/arguments.py: the words a client types as options."""

from __future__ import annotations

import pytest

from backgammon.events import WinKind
from db.records import SORTWHO_VALUES
from protocol import replies
from protocol.arguments import (
    RESERVED_NAMES,
    ExportForm,
    Invalid,
    LoginKind,
    PasswordChange,
    RatingsQuery,
    RuleChoices,
    SetVariable,
    WhoFilter,
    WhoKind,
    WhoOrder,
    move_text,
    name_form_problem,
    new_password_problem,
    parse_address,
    parse_dice_seed,
    parse_export_form,
    parse_login_line,
    parse_match_length,
    parse_match_rules,
    parse_password_change,
    parse_ratings_query,
    parse_record_id,
    parse_resign_kind,
    parse_set_value,
    parse_set_variable,
    parse_timezone,
    parse_toggle_name,
    parse_who_filter,
    redoubles_shown,
)
from protocol.commands import COMMAND_LIST
from protocol.parser import ScrubbedLine, parse


def test_reserved_and_scrubbed_names() -> None:
    """D265: every command word and the login words are reserved, ``_`` alone is no
    name, and a name typed with a control character is refused whatever is left."""
    for command in COMMAND_LIST:
        for word in command.words:
            assert word in RESERVED_NAMES, word
    for word in ("who", "login", "visitor", "connect", "bye"):
        assert name_form_problem(word.upper()) == replies.name_taken(word.upper())
    assert name_form_problem("__") == replies.NAME_INVALID
    assert name_form_problem("_casey_") is None
    assert name_form_problem("casey", scrubbed=True) == replies.NAME_INVALID
    parsed = parse(ScrubbedLine("name casey"))
    assert parsed is not None and parsed.scrubbed and parsed.args == ("casey",)
    plain = parse("name casey")
    assert plain is not None and not plain.scrubbed


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), WhoFilter(WhoKind.ALL)),
        (("COUNT",), WhoFilter(WhoKind.COUNT)),
        (("ready",), WhoFilter(WhoKind.READY)),
        (("Playing", "x"), WhoFilter(WhoKind.PLAYING)),
        (("away",), WhoFilter(WhoKind.AWAY)),
        (("from", "Example.ORG"), WhoFilter(WhoKind.FROM, "example.org")),
        (("from",), WhoFilter(WhoKind.NAME, "from")),
        (("Bob",), WhoFilter(WhoKind.NAME, "Bob")),
    ],
)
def test_who_filters(args: tuple[str, ...], expected: WhoFilter) -> None:
    assert parse_who_filter(args) == expected


def test_who_orders_are_the_stored_sortwho_values() -> None:
    assert sorted(order.value for order in WhoOrder) == sorted(SORTWHO_VALUES)


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("ready", "ready"),
        ("READ", "ready"),
        ("autoroll", "double"),
        ("al", "allowpip"),
        ("a", None),
        ("nosuch", None),
        ("mo", None),
        ("moves", "moves"),
    ],
)
def test_toggle_names(word: str, expected: str | None) -> None:
    assert parse_toggle_name(word) == expected


def test_set_variables_by_unique_prefix() -> None:
    assert parse_set_variable("BOARD") is SetVariable.BOARDSTYLE
    assert parse_set_variable("t") is SetVariable.TIMEZONE
    assert parse_set_variable("xyz") == Invalid((replies.SET_INVALID,))
    assert parse_set_variable("") == Invalid((replies.SET_INVALID,))  # every one matches
    # Every variable is in ``set``'s list but dice_seed, which FIBS has not (D276).
    listed = [v.value for v in SetVariable if v is not SetVariable.DICE_SEED]
    assert listed == list(replies.SET_VARIABLES)
    assert parse_set_variable("d") is SetVariable.DICE_SEED


def test_dice_seeds() -> None:
    assert parse_dice_seed(["tulip-7!"]) == "tulip-7!"
    assert parse_dice_seed(["~" * 64]) == "~" * 64
    invalid = Invalid((replies.DICE_SEED_INVALID,))
    for words in ([], ["a", "b"], ["x" * 65], ["tülip"], ["tab\there"]):
        assert parse_dice_seed(words) == invalid
    assert parse_set_value(SetVariable.DICE_SEED, "seed", ()) == "seed"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        (SetVariable.BOARDSTYLE, "2", 2),
        (SetVariable.BOARDSTYLE, "4", Invalid((replies.BOARDSTYLE_INVALID,))),
        (SetVariable.LINELENGTH, "80", 80),
        (SetVariable.PAGELENGTH, "abc", 0),
        (SetVariable.PAGELENGTH, "1000", Invalid((replies.LENGTH_INVALID,))),
        (SetVariable.REDOUBLES, "None", 0),
        (SetVariable.REDOUBLES, "UNLIMITED", None),
        (SetVariable.REDOUBLES, "99", 99),
        (SetVariable.REDOUBLES, "0", Invalid((replies.REDOUBLES_INVALID,))),
        (SetVariable.SORTWHO, "RRating", "rrating"),
        (SetVariable.SORTWHO, "age", Invalid((replies.sortwho_invalid("age"),))),
        (SetVariable.TIMEZONE, "UTC", "UTC"),
    ],
)
def test_set_values(variable: SetVariable, value: str, expected: object) -> None:
    assert parse_set_value(variable, value, {"UTC", "Europe/Paris"}) == expected


def test_timezones_and_redoubles_shown() -> None:
    zones = {"UTC", "Europe/Paris"}
    assert parse_timezone("Europe/Paris", zones) == "Europe/Paris"
    refused = parse_timezone("utc", zones)
    assert refused == Invalid((replies.bad_timezone("utc"), *replies.zone_list(sorted(zones))))
    assert [redoubles_shown(n) for n in (None, 0, 3)] == ["unlimited", "none", "3"]


def test_match_lengths() -> None:
    assert parse_match_length("Unlimited") is None
    assert parse_match_length("99") == 99
    for word in ("0", "100", "five", "-1"):
        assert parse_match_length(word) == Invalid((replies.INVITE_BAD_LENGTH,))


def test_match_rules_later_words_win() -> None:
    chosen = parse_match_rules(["Holland", "nojacoby", "deadcube", "cubelimit=4", "nocubelimit"])
    assert chosen == RuleChoices(
        ("holland", "nojacoby", "deadcube", "cubelimit=4", "nocubelimit"),
        holland=True,
        jacoby=False,
        dead_cube=True,
        cube_limit=None,
        cube_limit_named=True,
    )
    chosen = parse_match_rules(["nodeadcube", "autodoubles=2", "cubelimit=8"])
    assert chosen == RuleChoices(
        ("nodeadcube", "autodoubles=2", "cubelimit=8"),
        dead_cube=False,
        auto_doubles=2,
        cube_limit=8,
        cube_limit_named=True,
    )
    assert parse_match_rules([]) == RuleChoices(())


@pytest.mark.parametrize("word", ["crawford", "autodoubles=x", "cubelimit", "no", "nono"])
def test_unknown_match_rules(word: str) -> None:
    assert parse_match_rules(["jacoby", word]) == Invalid((replies.unknown_match_rule(word),))


def test_resign_kinds_and_moves() -> None:
    assert parse_resign_kind(["N"]) is WinKind.SINGLE
    assert parse_resign_kind(["gammon"]) is WinKind.GAMMON
    assert parse_resign_kind(["b", "x"]) is WinKind.BACKGAMMON
    assert parse_resign_kind([]) == Invalid((replies.RESIGN_USAGE,))
    assert parse_resign_kind(["x"]) == Invalid((replies.RESIGN_USAGE,))
    assert move_text(["8-5", "6-5"]) == "8-5 6-5"


def test_ratings_queries() -> None:
    assert parse_ratings_query(()) == RatingsQuery()
    assert parse_ratings_query(("bob", "FROM", "3", "to", "9")) == RatingsQuery("bob", 3, 9)
    assert parse_ratings_query(("bob", "bob")) == RatingsQuery("bob")
    assert parse_ratings_query(("from",)) == Invalid((replies.positive_number_after("from"),))
    assert parse_ratings_query(("to", "0")) == Invalid((replies.positive_number_after("to"),))
    assert parse_ratings_query(("a", "b")) == Invalid((replies.only_one_name("a", "b"),))
    # D341: 'analysis' anywhere asks for the error rates; it is no name
    assert parse_ratings_query(("Analysis",)) == RatingsQuery(rates=True)
    assert parse_ratings_query(("bob", "analysis", "from", "3")) == RatingsQuery(
        "bob", 3, None, True
    )


def test_password_forms() -> None:
    assert parse_password_change("old:newer:newer") == PasswordChange("old", "newer")
    assert parse_password_change("a:b") == Invalid(replies.PASSWORD_USAGE)
    assert parse_password_change("a::") == Invalid(replies.PASSWORD_USAGE)
    assert parse_password_change("a:bcde:bcdf") == Invalid((replies.NEW_PASSWORD_TWICE,))
    assert parse_password_change("a:bcd:bcd") == Invalid((replies.PASSWORD_TOO_SHORT,))
    assert new_password_problem("abcd") is None
    assert new_password_problem("abc") == replies.PASSWORD_TOO_SHORT
    assert new_password_problem("ab:cd") == replies.PASSWORD_HAS_COLON


def test_addresses_names_and_record_ids() -> None:
    assert parse_address("me@example.org") == "me@example.org"
    for text in ("@example.org", "me@example", "me@ex:ample.org"):
        assert parse_address(text) == Invalid((replies.not_an_email(text),))
    assert name_form_problem("Bob_") is None
    assert name_form_problem("bob1") == replies.NAME_INVALID
    assert name_form_problem("b" * 21) == replies.NAME_TOO_LONG
    assert name_form_problem("GUEST") == replies.name_taken("GUEST")
    assert name_form_problem("Guest") == replies.name_taken("Guest")
    assert "guest" in RESERVED_NAMES
    assert parse_record_id("12") == 12
    assert parse_record_id("x") == Invalid((replies.EXPORT_USAGE,))
    assert parse_record_id("x", replies.SHOW_DICE_USAGE) == Invalid((replies.SHOW_DICE_USAGE,))
    assert parse_export_form(()) is ExportForm.MAT
    assert parse_export_form(("JSON",)) is ExportForm.JSON
    assert parse_export_form(("sgf",)) is ExportForm.SGF
    for words in (("mat",), ("json", "json"), ("sgf", "x")):
        assert parse_export_form(words) == Invalid((replies.EXPORT_USAGE,))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("", LoginKind.BLANK),
        ("guest", LoginKind.GUEST),
        ("Guest", LoginKind.NAME),
        ("guest me", LoginKind.UNKNOWN),
        ("login client 1008 bob secret", LoginKind.CLIP),
        ("login client 1008 bob", LoginKind.UNKNOWN),
        ("connect bob secret", LoginKind.CONNECT),
        ("connect bob", LoginKind.UNKNOWN),
        ("bob", LoginKind.NAME),
        ("bye", LoginKind.LEAVE),
        ("Bye", LoginKind.NAME),
        ("login fibsweb 1008 token! abc", LoginKind.TOKEN),
        ("login fibsweb 1008 token! abc more", LoginKind.CLIP),  # fails: no user "token!"
        ("login fibsweb 1008 token!", LoginKind.UNKNOWN),
        ("login fibsweb 1008 Token! abc", LoginKind.CLIP),
    ],
)
def test_login_lines(line: str, kind: LoginKind) -> None:
    parsed = parse_login_line(line)
    assert parsed.kind is kind
    assert parsed.words == tuple(line.split())
