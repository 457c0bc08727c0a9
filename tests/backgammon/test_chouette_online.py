"""Worked examples of the chouette's rules, §6 and §8 of shared/docs/chouette-rules.md:
consultation, delegation, absent members, leaving, the captain or the box
disconnecting, the cube timers; and the table as JSON (saved after every action, so that
it resumes where it stood), with its version counter.

Players: ``bx`` is the box, ``c`` the captain, ``m1``, ``m2``, ... the rest of the line,
as the first draw seats them (chouette_helpers).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from backgammon.chouette import Chouette
from backgammon.chouette_events import (
    ActingCaptain,
    CubeSettled,
    DoubleDropped,
    DoublesClosed,
    DoubleTaken,
    PlayerLeft,
    PresenceChanged,
    ProxyChanged,
    ResignWithdrawn,
    SeatsChanged,
    SettleEnd,
    TeamDoubled,
    TimedOut,
    chouette_event_from_json,
    chouette_event_to_json,
)
from backgammon.chouette_settings import (
    ChouetteSettings,
    ChouetteSettingsError,
    Consultation,
    Leaving,
    settings_from_json,
    settings_to_json,
)
from backgammon.chouette_snapshot import chouette_from_json, chouette_to_json
from backgammon.chouette_state import TEAM, ChouettePhase
from backgammon.dice import Roll, ScriptedDice, SeededDice
from backgammon.errors import ActionError, Refusal, SnapshotError
from backgammon.events import DiceRolled, WinKind

from .chouette_helpers import RandomPlayer, box_on_roll, play_first, restored, team_on_roll

FOUR = ("bx", "c", "m1", "m2")


def reason(error: pytest.ExceptionInfo[ActionError]) -> Refusal:
    return error.value.reason


# -- §6 Consultation ------------------------------------------------------------------


def test_consultation_only_once_your_own_cube_is_turned_by_default() -> None:
    """§6: team talk per the setting (default: once your own cube is turned); members
    out of the game, and the box, may not use it."""
    table = box_on_roll(FOUR, dice=(3, 2))
    assert not any(table.may_consult(m) for m in ("bx", "c", "m1", "m2"))
    table.box_double("bx", ["c", "m1"])
    table.take("c")
    table.drop("m1")
    assert [m for m in FOUR if table.may_consult(m)] == ["c"]
    free = box_on_roll(FOUR, settings=ChouetteSettings(consultation=Consultation.FREE))
    assert [m for m in FOUR if free.may_consult(m)] == ["c", "m1", "m2"]
    free.set_present("m2", False)
    assert not free.may_consult("m2")
    none = box_on_roll(FOUR, settings=ChouetteSettings(consultation=Consultation.NONE))
    assert not any(none.may_consult(m) for m in FOUR)


# -- §8 Delegation, absence, leaving, timers ------------------------------------------


def test_a_member_delegates_cube_decisions_to_another_member() -> None:
    """§8: a proxy makes the member's cube decisions (answers and doubles); the member
    still may; the delegation lapses when the proxy leaves the line."""
    table = box_on_roll(FOUR, dice=(5, 3, 4, 1))
    assert table.delegate("m1", "m2") == [ProxyChanged("m1", "m2")]
    with pytest.raises(ActionError) as error:
        table.delegate("m1", "bx")
    assert reason(error) is Refusal.BAD_PROXY
    table.box_double("bx", ["c", "m1"])
    with pytest.raises(ActionError) as error:
        table.take("c", "m1")
    assert reason(error) is Refusal.NOT_YOUR_CUBE
    assert table.answers_for("m2") == ("m1",)
    assert table.take("m2", "m1") == [DoubleTaken("m1", 2, "m2", False)]
    table.take("c")
    play_first(table)  # the box's 5-3
    table.set_present("m1", False)
    assert table.doubles_for("m2") == ("m1", "m2")  # the proxy doubles for the absent
    assert table.leave("m2")[:2] == [PlayerLeft("m2", True), ProxyChanged("m1", None)]


def test_an_absent_member_follows_the_captain_on_a_box_double() -> None:
    """§8: a member who is absent follows the captain's decision on a box double."""
    for answer in ("take", "drop"):
        table = box_on_roll(FOUR, dice=(5, 3))
        table.set_present("m2", False)
        table.box_double("bx")
        assert table.waiting_for() == ("c", "m1", "m2")
        events = getattr(table, answer)("c")
        expected = (
            DoubleTaken("m2", 2, "c", False)
            if answer == "take"
            else DoubleDropped("m2", "c", False)
        )
        assert expected in events
        table.take("m1")
        assert table.phase is ChouettePhase.MOVE  # the box rolled


def test_an_absent_member_takes_when_the_captain_is_not_doubled() -> None:
    """§8: with no captain's decision to follow (the captain was not doubled), an absent
    member takes, at once."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.set_present("m2", False)
    events = table.box_double("bx", ["m1", "m2"])
    assert events[-1] == DoubleTaken("m2", 2, None, False)
    assert table.waiting_for() == ("m1",)


def test_when_the_captain_disconnects_before_answering_the_next_member_is_followed() -> None:
    """§8: absent members follow the captain; a captain who disconnects before answering
    is followed by no one: the next member still in plays, and decides, as acting
    captain (the captain then follows them too)."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.set_present("m2", False)
    table.box_double("bx")
    table.set_present("c", False)
    assert table.waiting_for() == ("c", "m1", "m2")
    events = table.drop("m1")
    assert DoubleDropped("c", "m1", False) in events
    assert DoubleDropped("m2", "m1", False) in events
    assert table.phase is ChouettePhase.WAITING  # every cube dropped


def test_an_absent_member_does_not_double() -> None:
    """§8: an absent member's own doubles simply do not happen."""
    table = team_on_roll(FOUR, dice=(6, 1))
    table.set_present("m1", False)
    with pytest.raises(ActionError) as error:
        table.double("m1")
    assert reason(error) is Refusal.ABSENT
    table.double("c")
    assert table.double("m2")[-1] == DoublesClosed(("c", "m2"))  # m1 cannot double


def test_the_captain_disconnects_and_the_next_member_plays_until_they_return() -> None:
    """§8: the captain disconnects: the next member still in plays as acting captain
    until the captain returns. Acting captaincy changes no rotation (§3)."""
    table = team_on_roll(FOUR, dice=(4, 2, 6, 3))
    assert table.set_present("c", False) == [PresenceChanged("c", False), ActingCaptain("m1")]
    with pytest.raises(ActionError) as error:
        table.roll("c")
    assert reason(error) is Refusal.ABSENT
    assert table.roll("m1") == [DiceRolled(TEAM, Roll(4, 2), 2)]
    play_first(table)
    assert table.set_present("c", True) == [PresenceChanged("c", True), ActingCaptain("c")]


def test_leaving_between_games_is_free_and_a_leaving_box_rotates_as_if_it_lost() -> None:
    """§8: leaving between games is free; when the box leaves, the captain takes the box
    and the next in line is captain."""
    table = box_on_roll(FOUR)
    table.box_double("bx")
    for member in ("c", "m1", "m2"):
        table.drop(member)
    assert table.phase is ChouettePhase.WAITING
    assert table.leave("bx") == [PlayerLeft("bx", False), SeatsChanged("m1", None, ("m2", "c"))]
    assert table.totals["bx"] == 3  # a player who left keeps their total
    assert sum(table.totals.values()) == 0


def test_leaving_mid_game_resigns_the_cube_at_its_value() -> None:
    """§8: leaving mid-game resigns that member's cube at its value (the default)."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx", ["m1"])
    table.take("m1")
    events = table.leave("m1")
    assert events == [PlayerLeft("m1", True), CubeSettled("m1", -2, WinKind.SINGLE, SettleEnd.LEFT)]
    assert not table.at_table("m1") and "m1" in table.line  # seated until the game ends
    assert table.members_in_game() == ("c", "m2")


def test_leaving_mid_game_follows_the_captain_as_a_setting() -> None:
    """§8, "follow the captain until the game ends": the leaver's cube stays in, answers
    box doubles as the captain does, and is settled at the end; then the leaver's seat
    is gone."""
    follow = ChouetteSettings(leaving=Leaving.FOLLOW_CAPTAIN)
    table = box_on_roll(FOUR, dice=(5, 3), settings=follow)
    assert table.leave("m2") == [PlayerLeft("m2", True)]
    assert table.in_game("m2")
    table.box_double("bx")
    events = table.take("c")
    assert DoubleTaken("m2", 2, "c", False) in events
    table.drop("m1")
    play_first(table)
    table.resign("c", "c", WinKind.SINGLE)
    events = table.accept_resignation("bx")
    # c's resignation leaves only the leaver's cube: nobody can play it, so it is resigned.
    assert CubeSettled("m2", -2, WinKind.SINGLE, SettleEnd.LEFT) in events
    assert events[-1] == SeatsChanged("bx", None, ("m1", "c"))


def test_the_box_leaving_mid_game_resigns_every_cube() -> None:
    """§8: the box leaving mid-game resigns every cube still in at its value; the game
    ends and the captain takes the box."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx", ["m1"])
    table.take("m1")
    events = table.leave("bx")
    assert [e.points for e in events if isinstance(e, CubeSettled)] == [1, 2, 1]
    assert events[-1] == SeatsChanged("c", None, ("m1", "m2"))
    assert table.totals["bx"] == -4


def test_an_absent_side_withdraws_a_pending_resignation() -> None:
    """§8: a resignation waits for a player who is there; disconnecting withdraws it."""
    table = box_on_roll(FOUR)
    table.resign("m1", "m1", WinKind.SINGLE)
    assert table.set_present("bx", False) == [
        PresenceChanged("bx", False),
        ResignWithdrawn("m1"),
    ]
    with pytest.raises(ActionError) as error:
        table.roll("bx")
    assert reason(error) is Refusal.ABSENT
    table.set_present("bx", True)
    table.set_present("m1", False)
    with pytest.raises(ActionError) as error:
        table.resign("bx", "m1", WinKind.SINGLE)
    assert reason(error) is Refusal.ABSENT


def test_the_box_timer_answers_accept_by_default_or_reject() -> None:
    """§8: the box's cube-answer timer: the default answer is accept (a setting)."""
    for accepts in (True, False):
        settings = ChouetteSettings(box_timeout_accepts=accepts)
        table = team_on_roll(FOUR, dice=(6, 1), settings=settings)
        table.double("m1")
        table.roll("c")
        events = table.time_out()
        assert events[0] == TimedOut(("bx",))
        answer = DoubleTaken("m1", 2, None, True) if accepts else DoubleDropped("m1", None, True)
        assert events[1] == answer
        assert table.phase is ChouettePhase.MOVE
    with pytest.raises(ActionError) as error:
        table.time_out()
    assert reason(error) is Refusal.NO_DECISION


def test_silent_members_follow_the_captain_when_the_timer_runs_out() -> None:
    """§8: members silent past the cube timer follow the captain's decision; a silent
    captain takes."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx")
    table.drop("c")
    events = table.time_out()
    assert events[:3] == [
        TimedOut(("m1", "m2")),
        DoubleDropped("m1", None, False),
        CubeSettled("m1", -1, WinKind.SINGLE, SettleEnd.DROPPED),
    ]
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx")
    table.drop("m2")
    events = table.time_out()
    assert events[1:3] == [DoubleTaken("c", 2, None, False), DoubleTaken("m1", 2, None, False)]


def test_the_box_disconnects_the_table_is_saved_and_resumes() -> None:
    """§8: the box disconnects: the table (cubes, line, totals, the board) is saved and
    resumes where it stood when the box returns."""
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx", ["m1"])
    table.take("m1")
    table.set_present("bx", False)
    saved = json.dumps(chouette_to_json(table, events=False))
    back = chouette_from_json(json.loads(saved), ScriptedDice((6, 2)))
    assert chouette_to_json(back, events=False) == json.loads(saved)
    assert back.record == [] and back.history == []
    back.set_present("bx", True)
    play_first(back)  # the box's 5-3
    assert back.roll("c") == [DiceRolled(TEAM, Roll(6, 2), 2)]
    assert back.cubes["m1"].value == 2 and back.totals == table.totals


# -- The table as JSON, and its version -------------------------------------------------


def round_trip(table: Chouette, *, events: bool) -> None:
    data = json.loads(json.dumps(chouette_to_json(table, events=events)))
    assert chouette_to_json(chouette_from_json(data, SeededDice(0)), events=events) == data


def test_the_snapshot_round_trips_any_moment_of_random_play() -> None:
    """The table's state through JSON text and back is the same state after every
    action of random play; with its events too at the end."""
    table = Chouette(ChouetteSettings(beavers=True), SeededDice(7))
    for name in ("a", "b", "c", "d", "e", "f", "g"):
        table.join(name)
    player = RandomPlayer(table, random.Random(7))
    while len(table.history) < 3:
        player.step()
        round_trip(table, events=False)
    round_trip(table, events=True)
    for event in table.history[0]:
        assert chouette_event_from_json(chouette_event_to_json(event)) == event


def test_settings_round_trip_and_refuse_what_they_are_not() -> None:
    settings = ChouetteSettings(consultation=Consultation.FREE, double_window=0)
    assert settings_from_json(settings_to_json(settings)) == settings
    data = settings_to_json(settings)
    for wrong in (
        {**data, "double_window": "10"},
        {**data, "cubes": "triple"},
        {**data, "raccoons": True},  # without beavers
        {k: v for k, v in data.items() if k != "jacoby"},
    ):
        with pytest.raises(ChouetteSettingsError):
            settings_from_json(wrong)


def broken(change: dict[str, Any]) -> dict[str, Any]:
    table = box_on_roll(FOUR, dice=(5, 3))
    table.box_double("bx", ["m1"])
    return {**chouette_to_json(table), **change}


@pytest.mark.parametrize(
    "change",
    [
        {"version": 99},
        {"totals": [["bx", 1], ["c", 0], ["m1", 0], ["m2", 0]]},  # not summing to 0
        {
            "cubes": [
                ["c", 3, "centre", False],
                ["m1", 1, "centre", False],
                ["m2", 1, "centre", False],
            ]
        },
        {"box_offer": None},  # the members' answers with no box double
        {"dice": [5, 3]},  # dice out while the members answer
        {"phase": "waiting"},  # cubes between games
        {"seats": {"box": "bx", "partner": None, "line": ["c", "m1", "m2", "bx"]}},
        {"proxies": [["m1", "bx"]]},
        {"turn": True},
    ],
)
def test_the_snapshot_refuses_a_table_the_rules_could_not_reach(change: dict[str, Any]) -> None:
    with pytest.raises(SnapshotError):
        chouette_from_json(broken(change), SeededDice(0))


def test_the_version_counts_the_actions_that_changed_the_table() -> None:
    table = team_on_roll(FOUR, dice=(6, 1))
    version = table.version
    with pytest.raises(ActionError):
        table.roll("m1")  # refused: nothing changes
    assert table.version == version
    assert table.set_present("c", True) == [] and table.version == version  # no change
    assert table.double("m1") == [TeamDoubled("m1", 2, "m1")]
    assert table.version == version + 1
    assert restored(table).version == 0  # not part of the snapshot
