"""``dicetest`` (§4.14, issue 5 item 8): the report of every roll since the start.

§4.14 fixes the frame (``*** running dice test:`` ... ``Done.``); SPEC's sample gives the
``*** Rolled N times with 2 dice`` line and the table of ordered pairs; the faces and the
chi-square lines are this server's (D78).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from backgammon.dice import SeededDice
from protocol import replies
from server.app import App
from server.config import Settings
from server.handlers.records import FACE_FREEDOM, PAIR_FREEDOM, chi_square_tail

from .conftest import Connect, ScriptedClient, clip_login
from .fibs_parsers import fcm_cookie
from .match_driver import Player, play_out
from .sessions import ready_pair


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _report(client: ScriptedClient) -> list[str]:
    await client.send("dicetest")
    await client.expect(replies.DICETEST_START)
    lines: list[str] = []
    while (line := await client.line()) != replies.DICETEST_END:
        lines.append(line)
    return lines


def _expected(pairs: Counter[tuple[int, int]]) -> list[str]:
    """The report for these rolls, computed here from the definitions."""
    rolls = sum(pairs.values())
    faces = Counter[int]()
    for (a, b), n in pairs.items():
        faces[a] += n
        faces[b] += n
    face_chi = pair_chi = 0.0
    if rolls:
        face_chi = sum((faces[d] - rolls / 3) ** 2 / (rolls / 3) for d in range(1, 7))
        pair_chi = sum(
            (pairs[(a, b)] - rolls / 36) ** 2 / (rolls / 36)
            for a in range(1, 7)
            for b in range(1, 7)
        )
    return [
        replies.dicetest_rolled(rolls),
        *(replies.dicetest_pairs(a, *(pairs[(a, b)] for b in range(1, 7))) for a in range(1, 7)),
        replies.dicetest_faces(*(faces[d] for d in range(1, 7))),
        replies.dicetest_chi_square("faces", face_chi, 5, chi_square_tail(face_chi, 5)),
        replies.dicetest_chi_square("pairs", pair_chi, 35, chi_square_tail(pair_chi, 35)),
    ]


_OPENING = re.compile(r"You rolled (\d), bob rolled (\d)$")
_MINE = re.compile(r"You roll (\d) and (\d)\.$")
_THEIRS = re.compile(r"bob rolls (\d) and (\d)\.$")


async def test_dicetest_after_a_seeded_match(connect: Connect, app: App) -> None:
    """Every roll alice saw announced in a whole match, and nothing else, is counted."""
    app.dice = lambda: SeededDice(11)
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    await alice.send("invite bob 3")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    [record] = await app.db.list_match_records("alice")
    assert record.player1 == "alice"  # alice is player 0: her die is the pair's first

    seen = Counter[tuple[int, int]]()
    for line in alice.seen:
        for pattern in (_OPENING, _MINE, _THEIRS):
            found = pattern.match(line)
            if found:
                seen[(int(found[1]), int(found[2]))] += 1
    assert sum(seen.values()) > 20

    report = await _report(bob)
    assert report == _expected(seen)
    assert report[0] == f"*** Rolled {sum(seen.values())} times with 2 dice"
    assert f"with {FACE_FREEDOM} degrees of freedom" in report[-2]
    assert f"with {PAIR_FREEDOM} degrees of freedom" in report[-1]


@pytest.mark.known_lines
async def test_dicetest_before_any_roll_and_the_report_form(connect: Connect, app: App) -> None:
    alice = await clip_login(connect, app, "alice")
    assert await _report(alice) == _expected(Counter())
    assert (await _report(alice))[-1].endswith("P = 1.000")
    rolls = [(1, 1), (6, 5), (6, 5), (3, 4), (2, 6), (5, 6)] * 50
    for a, b in rolls:
        app.dice_stats.record(a, b)
    assert await _report(alice) == _expected(Counter(rolls))
    report = await _report(alice)
    assert report[1] == replies.dicetest_pairs(1, 50, 0, 0, 0, 0, 0)
    assert report[1] == "1-1 50      1-2 0       1-3 0       1-4 0       1-5 0       1-6 0"


async def test_dicetest_rows_are_fcms(connect: Connect, app: App) -> None:
    """FCM names each row of the pair table by ``^[1-6]-1 [0-9]`` (D162), whatever the
    counts: a count of one digit as well as one of seven."""
    alice = await clip_login(connect, app, "alice")
    for a in range(1, 7):
        app.dice_stats.record(a, 1)
    for _ in range(3):
        app.dice_stats.record(6, 6)
    report = await _report(alice)
    rows = report[1:7]
    assert [fcm_cookie(row) for row in rows] == ["FIBS_DiceTest"] * 6
    assert rows[5] == "6-1 1       6-2 0       6-3 0       6-4 0       6-5 0       6-6 3"
    assert fcm_cookie(replies.dicetest_pairs(3, 1_234_567, 2, 3, 4, 5, 6)) == "FIBS_DiceTest"
    # SPEC's sample, right-aligned (``1-1  92359``), is what FCM would not name.
    assert fcm_cookie("1-1  92359  1-2  92773") == "FIBS_Unknown"
    assert fcm_cookie(replies.DICETEST_END) == "FIBS_Done"
    assert all(len(row.split()) == 12 for row in rows)


@pytest.mark.parametrize(
    ("value", "freedom", "tail"),
    [
        # Critical values of the chi-square distribution (any statistics table).
        (3.841, 1, 0.05),
        (5.991, 2, 0.05),
        (11.070, 5, 0.05),
        (15.086, 5, 0.01),
        (1.145, 5, 0.95),
        (49.802, 35, 0.05),
        (22.465, 35, 0.95),
        (57.342, 35, 0.01),
    ],
)
def test_chi_square_tail(value: float, freedom: int, tail: float) -> None:
    assert chi_square_tail(value, freedom) == pytest.approx(tail, abs=5e-4)


def test_chi_square_tail_edges() -> None:
    assert chi_square_tail(0.0, 5) == 1.0
    assert chi_square_tail(1e6, 35) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        chi_square_tail(1.0, 0)
