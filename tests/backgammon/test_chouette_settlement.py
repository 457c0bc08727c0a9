"""Worked examples of the chouette's rules, §4, §5 and §7 of
shared/docs/chouette-rules.md: settlement per member, resignations, the rotation (Kit's
rule and the L.A. option) and the box partner.

Players: ``bx`` is the box, ``c`` the captain, ``m1``, ``m2``, ... the rest of the line,
as the first draw seats them (chouette_helpers).
"""

from __future__ import annotations

import pytest

from backgammon.chouette import Chouette
from backgammon.chouette_events import (
    ActingCaptain,
    ChouetteGameFinished,
    CubeSettled,
    PartnerAnswered,
    PartnerOffered,
    PartnerShare,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    SeatsChanged,
    SettleEnd,
    TimedOut,
)
from backgammon.chouette_settings import BoxPartner, ChouetteSettings, Rotation
from backgammon.chouette_state import ChouettePhase, Cube, CubeOwner
from backgammon.errors import ActionError, Refusal
from backgammon.events import WinKind

from .chouette_helpers import box_on_roll, phase, play_first, restored, seated, team_on_roll

FOUR = ("bx", "c", "m1", "m2")
SIX = ("bx", "c", "m1", "m2", "m3", "m4")
NO_JACOBY = ChouetteSettings(jacoby=False)


def resigned(table: Chouette, member: str, kind: WinKind = WinKind.SINGLE) -> list[object]:
    """``member`` resigns to the box, who accepts; the events of the acceptance."""
    table.resign(member, member, kind)
    return list(table.accept_resignation(table.box or ""))


def box_resigned(table: Chouette, member: str, kind: WinKind = WinKind.SINGLE) -> list[object]:
    """The box resigns to ``member``, who accepts; the events of the acceptance."""
    table.resign(table.box or "", member, kind)
    return list(table.accept_resignation(member))


# -- §4 End of game, settlement, resignations -----------------------------------------


def test_each_member_settles_cube_times_one_two_three_and_the_box_minus_the_sum() -> None:
    """§4: each member still in scores ±(cube × 1/2/3), Jacoby applied per member; the
    box scores minus the sum; a rejecting member was settled when rejecting."""
    table = box_on_roll(FOUR, dice=(6, 5), settings=NO_JACOBY)
    table.box_double("bx", ["m2"])
    table.drop("m2")  # settled at once: -1
    table = restored(
        table,
        box={1: 1},
        team={6: 14, 20: 1},  # a checker in the box's home board: a backgammon
        cubes={"c": Cube(2, CubeOwner.MEMBER, True)},
    )
    assert table.dice is not None  # the box rolled 6-5 after the last answer ...
    play_first(table)  # ... and bears off its last checker
    assert table.totals == {"bx": 10, "c": -6, "m1": -3, "m2": -1}
    assert sum(table.totals.values()) == 0
    game = table.history[-1]
    assert CubeSettled("c", -6, WinKind.BACKGAMMON, SettleEnd.BORNE_OFF) in game
    assert ChouetteGameFinished(1, (("c", -6), ("m1", -3), ("m2", -1)), 10, True) in game


def test_a_resignation_is_between_the_box_and_one_member_on_that_cube() -> None:
    """§4: a member offers to resign to the box on their own cube (n/g/b); the board
    waits for the answer; accepted, only that member is settled and play goes on."""
    table = box_on_roll(("bx", "c", "m1"), dice=(4, 2), settings=NO_JACOBY)
    assert table.resign("m1", "m1", WinKind.GAMMON) == [
        ResignOffered("m1", "m1", WinKind.GAMMON, 2)
    ]
    with pytest.raises(ActionError) as error:
        table.roll("bx")
    assert error.value.reason is Refusal.RESIGN_PENDING_THEIRS
    with pytest.raises(ActionError) as error:
        table.resign("c", "m1", WinKind.SINGLE)
    assert error.value.reason is Refusal.RESIGN_PENDING_THEIRS
    assert table.waiting_for() == ("bx",)
    assert table.reject_resignation("bx") == [ResignRejected("m1", "bx")]
    table.resign("m1", "m1", WinKind.BACKGAMMON)
    assert table.accept_resignation("bx") == [
        ResignAccepted("m1", "bx", 3),
        CubeSettled("m1", -3, WinKind.BACKGAMMON, SettleEnd.RESIGNED),
    ]
    assert table.members_in_game() == ("c",) and table.phase is ChouettePhase.TURN


def test_the_box_may_resign_to_one_member() -> None:
    """§4: resignations are offered by either side."""
    table = box_on_roll(FOUR, dice=(4, 2))
    with pytest.raises(ActionError) as error:
        table.resign("c", "m1", WinKind.SINGLE)
    assert error.value.reason is Refusal.NOT_YOUR_CUBE
    table.resign("bx", "m1", WinKind.GAMMON)  # Jacoby: the cube never turned, single
    assert table.accept_resignation("m1")[-1] == CubeSettled(
        "m1", 1, WinKind.SINGLE, SettleEnd.RESIGNED
    )


def test_the_captain_resigning_ends_the_board_only_when_nobody_else_is_in() -> None:
    """§4: the captain's resignation ends the board only when no other member is in."""
    table = team_on_roll(("bx", "c", "m1"))
    events = resigned(table, "c")
    assert events[-1] == ActingCaptain("m1") and table.phase is ChouettePhase.TURN
    events = resigned(table, "m1")
    assert any(isinstance(e, ChouetteGameFinished) for e in events)
    assert phase(table) is ChouettePhase.WAITING


# -- §5 Rotation ----------------------------------------------------------------------


def test_kit_the_box_beat_the_captain_the_captain_goes_to_the_bottom() -> None:
    """§5: the box beat the captain: the box stays, the captain goes to the bottom, the
    next in line is captain."""
    table = box_on_roll(FOUR)
    resigned(table, "c")
    box_resigned(table, "m1")
    events = resigned(table, "m2")
    assert events[-1] == SeatsChanged("bx", None, ("m1", "m2", "c"))


def test_kit_the_captain_beat_the_box_and_becomes_the_box() -> None:
    """§5: the captain beat the box: the captain becomes the box, the box goes to the
    bottom, the next in line is captain (whatever the others' results)."""
    table = box_on_roll(FOUR)
    box_resigned(table, "c")
    resigned(table, "m1", WinKind.GAMMON)
    events = resigned(table, "m2")
    assert events[-1] == SeatsChanged("c", None, ("m1", "m2", "bx"))


def test_la_option_the_box_stays_only_with_a_net_result_of_zero_or_more() -> None:
    """§5, the L.A. option: the box stays only if its net result for the game is >= 0,
    whoever won against the captain."""

    def game(rotation: Rotation, m1_kind: WinKind) -> tuple[int, SeatsChanged]:
        settings = ChouetteSettings(jacoby=False, rotation=rotation)
        table = box_on_roll(FOUR, settings=settings)
        resigned(table, "c")  # the box beat the captain: +1
        box_resigned(table, "m1", m1_kind)
        events = resigned(table, "m2")  # +1
        seats = events[-1]
        assert isinstance(seats, SeatsChanged)
        return table.totals["bx"], seats

    assert game(Rotation.LA, WinKind.GAMMON) == (0, SeatsChanged("bx", None, ("m1", "m2", "c")))
    assert game(Rotation.LA, WinKind.BACKGAMMON) == (
        -1,
        SeatsChanged("c", None, ("m1", "m2", "bx")),
    )
    # Kit's rule looks at the captain only: the box stays.
    assert game(Rotation.KIT, WinKind.BACKGAMMON)[1] == SeatsChanged("bx", None, ("m1", "m2", "c"))


# -- §7 Box partner -------------------------------------------------------------------


def test_box_partner_is_offered_to_the_next_in_line_at_six_players() -> None:
    """§7 (optional at 6 or more, the default): the next in line after the captain is
    offered the seat of the box's partner, and accepts or declines; the game waits."""
    table = seated(SIX)
    events = table.start_game()
    assert events[-2:] == [SeatsChanged("bx", None, SIX[1:]), PartnerOffered("m1")]
    with pytest.raises(ActionError) as error:
        table.start_game()
    assert error.value.reason is Refusal.PARTNER_UNANSWERED
    assert table.waiting_for() == ("m1",)
    events = table.answer_partner("m1", True)
    assert events == [
        PartnerAnswered("m1", True),
        SeatsChanged("bx", "m1", ("c", "m2", "m3", "m4")),
    ]
    assert table.may_talk_to_box("m1") and not table.may_talk_to_box("c")


def test_box_partner_declined_and_too_few_players() -> None:
    """§7: a declined seat stays empty (not offered to them again under this box); with
    five players there is no partner."""
    table = seated(SIX, dice=(3, 1))
    table.start_game()
    assert table.answer_partner("m1", False) == [PartnerAnswered("m1", False)]
    table.start_game()
    assert table.seats is not None and table.seats.partner is None
    later = seated(SIX)
    later.start_game()
    later.set_present("m1", False)  # an absent candidate's timer declines for them
    assert later.time_out() == [TimedOut(("m1",)), PartnerAnswered("m1", False)]
    five = seated(SIX[:5], dice=(3, 1))
    five.start_game()
    assert five.seats is not None and five.seats.partner is None


def test_box_partner_mandatory_at_seven_and_off() -> None:
    """§7: "mandatory at 7 or more" seats the next in line without asking; "off" never
    seats a partner."""
    seven = (*SIX, "m5")
    table = seated(
        seven, dice=(3, 1), settings=ChouetteSettings(box_partner=BoxPartner.MANDATORY_AT_7)
    )
    table.start_game()
    assert table.seats is not None and table.seats.partner == "m1"
    assert table.line == ("c", "m2", "m3", "m4", "m5")
    off = seated(seven, dice=(3, 1), settings=ChouetteSettings(box_partner=BoxPartner.OFF))
    off.start_game()
    assert off.seats is not None and off.seats.partner is None


def partnered(dice: tuple[int, ...] = ()) -> Chouette:
    """Six players with ``m1`` as the box's partner, the team (c, m2, m3, m4) on roll."""
    table = seated(SIX, dice=(3, 1, *dice), settings=NO_JACOBY)
    table.start_game()
    table.answer_partner("m1", True)
    table.start_game()
    play_first(table)
    return table


def test_box_partner_shares_half_the_box_result_the_odd_point_to_the_box() -> None:
    """§7: the box and its partner split the results half and half, the odd point to
    the box; the box alone decides the cubes (the partner has no cube)."""
    table = partnered()
    assert "m1" not in table.cubes and table.allowed("m1") == frozenset()
    resigned(table, "c")
    resigned(table, "m2")
    resigned(table, "m3")
    events = resigned(table, "m4", WinKind.GAMMON)  # the box won 5
    assert PartnerShare("m1", 2) in events
    assert table.totals == {"bx": 3, "c": -1, "m1": 2, "m2": -1, "m3": -1, "m4": -2}


def test_box_partner_shares_a_loss_the_odd_point_to_the_box() -> None:
    """§7: a loss of 3 is 2 for the box and 1 for the partner."""
    table = partnered()
    resigned(table, "c")  # the box beat the captain: it stays with its partner
    box_resigned(table, "m2", WinKind.GAMMON)
    box_resigned(table, "m3")
    events = box_resigned(table, "m4")
    assert PartnerShare("m1", -1) in events
    assert table.totals["bx"] == -2 and table.totals["m1"] == -1
    assert events[-1] == SeatsChanged("bx", "m1", ("m2", "m3", "m4", "c"))


def test_a_partner_who_leaves_mid_game_shares_nothing_of_it() -> None:
    """§7, §8: the partner leaves during the game: the box keeps the game's whole result
    and the seat is offered anew between games."""
    table = partnered()
    table.leave("m1")
    resigned(table, "c")
    resigned(table, "m2")
    resigned(table, "m3")
    events = resigned(table, "m4")
    assert not any(isinstance(e, PartnerShare) for e in events)
    assert table.totals["bx"] == 4
    assert events[-1] == SeatsChanged("bx", None, ("m2", "m3", "m4", "c"))


def test_box_partner_rotation_when_the_box_loses() -> None:
    """§7, Kit's partner rule: the box loses: the partner becomes captain, the winning
    captain the box, and the next in line is offered the partner's seat."""
    table = partnered()
    box_resigned(table, "c")
    resigned(table, "m2")
    resigned(table, "m3")
    events = resigned(table, "m4")
    assert events[-2:] == [
        SeatsChanged("c", None, ("m1", "m2", "m3", "m4", "bx")),
        PartnerOffered("m2"),
    ]


def test_the_partnership_ends_when_the_table_shrinks() -> None:
    """§7: with fewer than six players the partner returns to the line (just after the
    captain, where the seat came from)."""
    table = seated(SIX, dice=(3, 1))
    table.start_game()
    table.answer_partner("m1", True)
    events = table.leave("m4")
    assert events[-1] == SeatsChanged("bx", None, ("c", "m1", "m2", "m3"))
