"""CLIP messages (spec §2): the spec's examples as goldens, round trips, strict parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import clip
from protocol.errors import ClipParseError

# §2.1, the Example column, verbatim (CLIP 20 from GIB's test, §2.1).
TABLE_EXAMPLES = [
    "1 myself 1041253132 192.168.1.308",
    "2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 0 0 0 Australia/Melbourne",
    "3",
    "4",
    "5 someplayer mgnu_advanced - 0 0 1418.61 23 1914 1041272421 192.168.40.3 MacFIBS "
    "someplayer@somewhere.com",
    "6",
    "7 someplayer someplayer logs in.",
    "8 someplayer someplayer drops connection.",
    "9 someplayer 1041253132 I'll log in at 10pm if you want to finish that game.",
    "10 someplayer",
    "11 someplayer",
    "12 someplayer Do you want to play a game?",
    "13 someplayer Anybody for a 5 point match?",
    "14 someplayer I think he is using loaded dice  :-)",
    "15 someplayer G'Day and good luck from Hobart, Australia.",
    "16 someplayer What's this \"G'Day\" stuff you hick?  :-)",
    "17 Watch out for someplayer.  He's a Tasmanian.",
    "18 Hello and hope you enjoy watching this game.",
    "19 Are you sure those dice aren't loaded?",
    "20 gflohr Mad world!",
    "20 gflohr    Mad world!",
]


@pytest.mark.parametrize("line", TABLE_EXAMPLES)
def test_table_examples_round_trip(line: str) -> None:
    message = clip.parse_clip(line)
    assert message.format() == line
    assert message.code == int(line.split(" ")[0])


def test_every_code_has_a_class() -> None:
    assert sorted(int(c) for c in clip.Code) == list(range(1, 21))
    codes = {clip.parse_clip(line).code for line in TABLE_EXAMPLES}
    assert codes == set(clip.Code)


def test_login_sequence_of_section_1_4() -> None:
    motd_lines = [
        "+--------------------------------------------------------------------+",
        "| ...                                                                |",
        "+--------------------------------------------------------------------+",
    ]
    lines = [
        clip.Welcome("myself", 1041253132, "192.168.1.308").format(),
        clip.OwnInfo(
            "myself",
            allowpip=True,
            autoboard=True,
            autodouble=False,
            automove=False,
            away=False,
            bell=False,
            crawford=True,
            double=True,
            experience=2396,
            greedy=False,
            moreboards=True,
            moves=False,
            notify=True,
            rating=3457.85,
            ratings=False,
            ready=False,
            redoubles=0,
            report=False,
            silent=False,
            timezone="Australia/Melbourne",
        ).format(),
        *clip.motd(motd_lines),
        clip.Message(
            "someplayer", 1041253132, "I'll log in at 10pm if you want to finish that game."
        ).format(),
        clip.WhoInfo(
            "mgnu_advanced", "someplayer", None, True, False, 1912.15, 827, 8, 1040515752,
            "192.168.143.5", "3DFiBs", None,
        ).format(),
        clip.WhoInfo(
            "someplayer", "mgnu_advanced", None, False, False, 1418.61, 23, 1914, 1041272421,
            "192.168.40.3", "MacFIBS", "someplayer@somewhere.com",
        ).format(),
        clip.WhoInfo(
            "myself", None, None, False, False, 3457.85, 2396, 12, 1041253132,
            "192.168.1.308", "MyClient_v0.1", None,
        ).format(),
        clip.WhoInfoEnd().format(),
    ]  # fmt: skip
    assert "\n".join(lines) == SECTION_1_4.strip("\n")


SECTION_1_4 = """
1 myself 1041253132 192.168.1.308
2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 0 0 0 Australia/Melbourne
3
+--------------------------------------------------------------------+
| ...                                                                |
+--------------------------------------------------------------------+
4
9 someplayer 1041253132 I'll log in at 10pm if you want to finish that game.
5 mgnu_advanced someplayer - 1 0 1912.15 827 8 1040515752 192.168.143.5 3DFiBs -
5 someplayer mgnu_advanced - 0 0 1418.61 23 1914 1041272421 192.168.40.3 MacFIBS someplayer@somewhere.com
5 myself - - 0 0 3457.85 2396 12 1041253132 192.168.1.308 MyClient_v0.1 -
6
"""  # noqa: E501


def test_own_info_of_a_new_user_and_unlimited_redoubles() -> None:
    # §2.2: the backgammony example, and the word "unlimited" for redoubles.
    line = "2 jonathanballs 1 1 0 0 0 0 1 1 0 0 1 0 1 1500.00 0 0 0 1 0 UTC"
    info = clip.OwnInfo.parse(line)
    assert info.rating == 1500.0
    assert info.format() == line
    assert len(line.split(" ")) == 22
    unlimited = line.replace(" 1500.00 0 0 0 ", " 1500.00 0 0 unlimited ")
    assert clip.OwnInfo.parse(unlimited).redoubles is None
    assert clip.parse_clip(unlimited).format() == unlimited


def test_who_info_lines_of_the_transcript() -> None:
    # §4.18.
    alice = clip.WhoInfo(
        "alice", "bob", None, True, False, 1500.0, 0, 3, 1700000000, "host1", "Client1", None
    )
    bob = clip.WhoInfo(
        "bob", "alice", None, True, False, 1500.0, 0, 1, 1700000100, "host2", "Client2", None
    )
    assert alice.format() == "5 alice bob - 1 0 1500.00 0 3 1700000000 host1 Client1 -"
    assert bob.format() == "5 bob alice - 1 0 1500.00 0 1 1700000100 host2 Client2 -"
    assert len(alice.format().split(" ")) == 13
    after = clip.WhoInfo(
        "alice", None, None, True, False, 1517.32, 3, 0, 1700000000, "host1", "Client1", None
    )
    assert after.format().startswith("5 alice - - 1 0 1517.32 3 ")


def test_who_update_is_followed_by_6() -> None:
    info = clip.WhoInfo("a", None, None, True, False, 1500.0, 0, 0, 0, "h", None, None)
    assert clip.who_update(info) == ["5 a - - 1 0 1500.00 0 0 0 h - -", "6"]


def test_rating_has_two_decimals() -> None:
    assert clip.format_rating(1500) == "1500.00"
    assert clip.format_rating(1517.3205) == "1517.32"
    assert clip.format_rating(1482.675) in ("1482.67", "1482.68")


@pytest.mark.parametrize(
    "line",
    [
        "",
        "0 x",
        "21 x y",
        "x 1",
        "1 myself 1041253132",
        "1 myself 104125313x host",
        "1 myself 01 host",
        "3 ",
        "6 x",
        "2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.8 0 0 0 0 0 UTC",  # one decimal
        "2 myself 1 1 0 0 0 0 1 2 2396 0 1 0 1 3457.85 0 0 0 0 0 UTC",  # flag 2
        "2 myself 1 1 0 0 0 0 1 1 2396 0 1 0 1 3457.85 0 0 none 0 0 UTC",
        "5 a - - 1 0 1500.00 0 3 1700000000 host1 Client1",  # 11 fields
        "5 a - - 1 0 1500.00 0 3 1700000000 host1 Client1 -  ",
        "10 a b",
        "12 someplayer",
        "9 someplayer x hello",
        "17",
    ],
)
def test_malformed_lines_are_refused(line: str) -> None:
    with pytest.raises(ClipParseError):
        clip.parse_clip(line)
    assert not clip.is_clip_line(line)


def test_values_that_cannot_be_formatted_are_refused() -> None:
    with pytest.raises(ValueError):
        clip.Welcome("two words", 0, "host")
    with pytest.raises(ValueError):
        clip.Says("bob", "line\r\nbreak")
    with pytest.raises(ValueError):
        clip.WhoInfo("a", "", None, True, False, 1500.0, 0, 0, 0, "h", None, None)


def test_a_trailing_crlf_is_tolerated() -> None:
    assert clip.parse_clip("6\r\n") == clip.WhoInfoEnd()


# -- round trips ----------------------------------------------------------------------------

tokens = st.from_regex(r"[!-~]{1,20}", fullmatch=True)
names = st.from_regex(r"[A-Za-z_]{1,15}", fullmatch=True)
optional = st.one_of(st.none(), tokens.filter(lambda t: t != "-"))
texts = st.from_regex(r"[ -~]{0,60}", fullmatch=True)
ratings = st.integers(0, 400000).map(lambda n: n / 100)
counts = st.integers(0, 2**31)

messages = st.one_of(
    st.builds(clip.Welcome, names, counts, tokens),
    st.builds(
        clip.OwnInfo,
        names, *[st.booleans()] * 8, counts, *[st.booleans()] * 4, ratings,
        st.booleans(), st.booleans(), st.one_of(st.none(), st.integers(0, 99)),
        st.booleans(), st.booleans(), tokens,
    ),
    st.just(clip.MotdBegin()),
    st.just(clip.MotdEnd()),
    st.builds(
        clip.WhoInfo, names, optional, optional, st.booleans(), st.booleans(), ratings,
        counts, counts, counts, tokens, optional, optional,
    ),
    st.just(clip.WhoInfoEnd()),
    st.builds(clip.Message, names, counts, texts),
    *[st.builds(cls, names) for cls in (clip.MessageDelivered, clip.MessageSaved)],
    *[
        st.builds(cls, names, texts)
        for cls in (
            clip.Login, clip.Logout, clip.Says, clip.Shouts, clip.Whispers, clip.Kibitzes,
            clip.YouSay, clip.Alert,
        )
    ],
    *[st.builds(cls, texts) for cls in (clip.YouShout, clip.YouWhisper, clip.YouKibitz)],
)  # fmt: skip


@given(messages)
def test_parse_inverts_format(message: clip.ClipMessage) -> None:
    line = message.format()
    assert clip.parse_clip(line) == message
    assert clip.parse_clip(line).format() == line
    assert type(message).parse(line) == message


def test_who_info_around_its_idle_field() -> None:
    info = clip.WhoInfo(
        "someplayer", "mgnu_advanced", None, False, False, 1418.61, 23, 1914, 1041272421,
        "192.168.40.3", "MacFIBS", "someplayer@somewhere.com",
    )  # fmt: skip
    head, tail = info.around_idle()
    assert head == "5 someplayer mgnu_advanced - 0 0 1418.61 23 "
    assert tail == " 1041272421 192.168.40.3 MacFIBS someplayer@somewhere.com"
    assert f"{head}1914{tail}" == info.format()
