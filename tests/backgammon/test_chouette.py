"""Worked examples of the chouette's rules, §1-§3 of shared/docs/chouette-rules.md: the
table, line, box and captain; the cubes (multiple and single, the box's constraints,
beavers, raccoons, the lone taker, automatic doubles, Jacoby); the acting captain.

Each test names the section it checks. Players: ``bx`` is the box, ``c`` the captain,
``m1``, ``m2``, ... the rest of the line, as the first draw seats them (chouette_helpers).
"""

from __future__ import annotations

import pytest

from backgammon.chouette import Chouette
from backgammon.chouette_events import (
    ActingCaptain,
    AutoDoubleDeclined,
    BoxDoubled,
    ChouetteGameFinished,
    ChouetteGameStarted,
    CubeSettled,
    DoubleBeavered,
    DoubleDropped,
    DoubleRaccooned,
    DoublesClosed,
    DoubleTaken,
    OrderRolled,
    PlayerJoined,
    SeatsChanged,
    SettleEnd,
    TeamDoubled,
)
from backgammon.chouette_settings import (
    AutoDoubles,
    ChouetteSettings,
    ChouetteSettingsError,
    CubeMode,
    InitialDoubles,
    LoneTaker,
)
from backgammon.chouette_state import BOX, TEAM, ChouettePhase, Cube, CubeOwner
from backgammon.dice import Roll, ScriptedDice
from backgammon.errors import ActionError, IllegalMoveError, Refusal
from backgammon.events import AutoDoubled, DiceRolled, OpeningRoll, WinKind
from backgammon.moves import Move

from .chouette_helpers import box_on_roll, phase, play_first, restored, started, team_on_roll

FOUR = ("bx", "c", "m1", "m2")
SINGLE = ChouetteSettings(cubes=CubeMode.SINGLE)


class _refused:
    """``with _refused(reason):`` the block raises :class:`ActionError` for ``reason``."""

    def __init__(self, reason: Refusal) -> None:
        self.reason = reason

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, error: object, trace: object) -> bool:
        assert isinstance(error, ActionError), f"expected a refusal {self.reason}"
        assert error.reason is self.reason, error.reason
        return True


# -- §1 Table, line, box, captain -----------------------------------------------------


def test_first_draw_highest_is_box_next_captain_ties_roll_again_among_the_tied() -> None:
    """§1: every player rolls; the highest is the box, the next the captain, the rest the
    line in order; ties are rolled again among the tied only."""
    table = Chouette(ChouetteSettings(), ScriptedDice((3, 6, 3, 1, 2, 5, 4, 2)))
    for name in ("ann", "bob", "cid", "dan"):
        table.join(name)
    events = table.start_game()
    assert events[:2] == [
        OrderRolled(("ann", "bob", "cid", "dan"), (3, 6, 3, 1)),
        OrderRolled(("ann", "cid"), (2, 5)),  # only the tied roll again
    ]
    assert events[2] == SeatsChanged("bob", None, ("cid", "ann", "dan"))
    assert table.box == "bob" and table.acting_captain() == "cid"
    assert events[3] == ChouetteGameStarted(1, "bob", None, ("cid", "ann", "dan"))
    assert events[4] == OpeningRoll((4, 2), BOX)


def test_a_table_holds_two_to_ten_players() -> None:
    """§1: 2 to 10 players; one alone cannot start."""
    table = Chouette(ChouetteSettings(), ScriptedDice(()))
    table.join("p0")
    with _refused(Refusal.NOT_ENOUGH_PLAYERS):
        table.start_game()
    for i in range(1, 10):
        table.join(f"p{i}")
    with _refused(Refusal.TABLE_FULL):
        table.join("p10")
    with _refused(Refusal.ALREADY_SEATED):
        table.join("p3")


def test_a_newcomer_joins_between_games_at_the_bottom_of_the_line() -> None:
    """§1: between games a newcomer sits at the bottom of the line at once; during a game
    they wait, and sit at the bottom when it ends (after the rotation)."""
    table = box_on_roll(("bx", "c", "m1"))
    assert table.join("new") == [PlayerJoined("new", False)]
    assert table.waiting == ["new"] and "new" not in table.cubes
    table.box_double("bx")
    table.drop("c")
    events = table.drop("m1")  # every cube settled: the box beat the captain and stays
    assert events[-1] == SeatsChanged("bx", None, ("m1", "c", "new"))
    assert table.join("late") == [
        PlayerJoined("late", True),
        SeatsChanged("bx", None, ("m1", "c", "new", "late")),
    ]


def test_the_captain_rolls_and_plays_for_the_team() -> None:
    """§1: the captain rolls and plays the checkers for the team."""
    table = team_on_roll(FOUR, dice=(5, 2))
    with _refused(Refusal.NOT_CAPTAIN):
        table.roll("m1")
    with _refused(Refusal.NOT_YOUR_TURN):
        table.roll("bx")
    assert table.roll("c") == [DiceRolled(TEAM, Roll(5, 2), 2)]
    with _refused(Refusal.NOT_CAPTAIN):
        table.move("m2", table.legal_plays()[0].moves)
    with pytest.raises(IllegalMoveError):
        table.move("c", [Move(24, 18)])  # a 6 with 5-2: refused, nothing changes
    assert table.phase is ChouettePhase.MOVE
    play_first(table)
    assert table.turn == BOX


def test_two_players_play_a_money_game() -> None:
    """§1: a table of two is an unlimited money game: box against captain, one cube."""
    table = team_on_roll(("bx", "c"), dice=(6, 4))
    events = table.double("c")  # nobody else can double: the box answers at once
    assert events == [TeamDoubled("c", 2, "c"), DoublesClosed(("c",))]
    events = table.answer_doubles("bx", ["c"])
    assert events == [DoubleTaken("c", 2, "bx", True), DiceRolled(TEAM, Roll(6, 4), 2)]
    assert table.cubes["c"] == Cube(2, CubeOwner.BOX, True)


# -- §2 Multiple cubes ----------------------------------------------------------------


def test_members_double_their_own_cubes_and_the_box_answers_all_at_once() -> None:
    """§2: before the captain rolls, members double on their own cubes; the captain's
    roll closes the window; the box accepts or rejects each, all at once; a rejected
    member scores the cube's value at once and is out of the game."""
    table = team_on_roll(FOUR, dice=(6, 5))
    assert table.double("m2") == [TeamDoubled("m2", 2, "m2")]
    assert table.double("m1") == [TeamDoubled("m1", 2, "m1")]
    with _refused(Refusal.ALREADY_DOUBLED):
        table.double("m1")
    with _refused(Refusal.NOT_YOUR_CUBE):
        table.double("c", "m1")
    assert table.roll("c") == [DoublesClosed(("m1", "m2"))]  # in line order
    assert table.waiting_for() == ("bx",)
    with _refused(Refusal.NOTHING_OFFERED):
        table.answer_doubles("bx", ["c"])
    events = table.answer_doubles("bx", ["m1"])
    assert events == [
        DoubleTaken("m1", 2, "bx", True),
        DoubleDropped("m2", "bx", True),
        CubeSettled("m2", 1, WinKind.SINGLE, SettleEnd.DROPPED),
        DiceRolled(TEAM, Roll(6, 5), 2),
    ]
    assert table.cubes["m1"] == Cube(2, CubeOwner.BOX, True)
    assert table.members_in_game() == ("c", "m1")
    assert table.totals == {"bx": -1, "c": 0, "m1": 0, "m2": 1}


def test_a_member_doubles_only_a_centred_cube_or_their_own() -> None:
    """§2: a member may double when their cube is centred or owned by them."""
    table = team_on_roll(FOUR)
    table = restored(
        table,
        cubes={"m1": Cube(2, CubeOwner.BOX, True), "m2": Cube(2, CubeOwner.MEMBER, True)},
    )
    with _refused(Refusal.NOT_OWNER):
        table.double("m1")
    assert table.doubles_for("m2") == ("m2",)
    assert table.double("m2") == [TeamDoubled("m2", 4, "m2")]
    assert table.box_may_double() == ("c", "m1")  # nor may the box turn a member's cube


def test_initial_doubles_from_everyone_the_box_accepts_half_or_rejects_all() -> None:
    """§2 (ESK): facing initial doubles from every member at once, the box must accept
    at least half or reject all. The window closes by itself once nobody else could
    double."""
    table = team_on_roll(("bx", "c", "m1", "m2", "m3"), dice=(4, 1))
    for member in ("c", "m1", "m2"):
        table.double(member)
    assert table.phase is ChouettePhase.TURN  # m3 could still double
    assert table.double("m3")[-1] == DoublesClosed(("c", "m1", "m2", "m3"))
    with _refused(Refusal.BOX_MUST_ACCEPT_HALF):
        table.answer_doubles("bx", ["m1"])
    events = table.answer_doubles("bx", ["c", "m3"])  # two of four: half
    assert [e.member for e in events if isinstance(e, DoubleTaken)] == ["c", "m3"]
    assert table.members_in_game() == ("c", "m3")


def test_initial_doubles_the_box_may_reject_all() -> None:
    """§2 (ESK): rejecting every initial double is allowed; the game then ends."""
    table = team_on_roll(("bx", "c", "m1", "m2"))
    for member in ("c", "m1", "m2"):
        table.double(member)
    events = table.answer_doubles("bx", [])
    assert events[-2] == ChouetteGameFinished(1, (("c", 1), ("m1", 1), ("m2", 1)), -3, False)
    assert table.totals == {"bx": -3, "c": 1, "m1": 1, "m2": 1}


def test_initial_doubles_at_a_three_player_table_both_or_neither() -> None:
    """§2 (ESK): at a 3-player table the box accepts both initial doubles or neither."""
    table = team_on_roll(("bx", "c", "m1"), dice=(2, 1))
    table.double("c")
    table.double("m1")
    with _refused(Refusal.BOX_MUST_ACCEPT_HALF):
        table.answer_doubles("bx", ["c"])
    table.answer_doubles("bx", ["c", "m1"])
    assert table.cubes["m1"].value == 2


def test_initial_doubles_rule_none_lets_the_box_split() -> None:
    """§2: with the option "none" the box answers each initial double freely."""
    free = ChouetteSettings(initial_doubles=InitialDoubles.FREE)
    table = team_on_roll(("bx", "c", "m1"), dice=(2, 1), settings=free)
    table.double("c")
    table.double("m1")
    table.answer_doubles("bx", ["c"])
    assert table.results == {"m1": 1}


def test_the_constraint_is_for_initial_doubles_from_every_member_only() -> None:
    """§2: doubles from some members, or on cubes already turned, are answered freely."""
    table = team_on_roll(("bx", "c", "m1", "m2"), dice=(2, 1))
    table.double("m1")
    table.double("m2")
    table.roll("c")
    table.answer_doubles("bx", ["m1"])  # c did not double: no constraint
    assert table.results == {"m2": 1}


def test_the_box_doubles_any_subset_and_rolls_after_the_last_answer() -> None:
    """§2: before rolling, the box may double any subset of the cubes it may turn; each
    doubled member answers for themselves; then the box rolls."""
    table = box_on_roll(FOUR, dice=(5, 5))
    assert table.box_double("bx", ["m1", "c"]) == [BoxDoubled("c", 2), BoxDoubled("m1", 2)]
    assert table.waiting_for() == ("c", "m1")
    with _refused(Refusal.NOT_YOUR_CUBE):
        table.take("c", "m1")
    with _refused(Refusal.NOTHING_OFFERED):
        table.take("m2")  # not doubled
    with _refused(Refusal.MUST_ANSWER_DOUBLE):
        table.double("m2")
    assert table.take("m1") == [DoubleTaken("m1", 2, "m1", False)]
    events = table.take("c")
    assert events == [DoubleTaken("c", 2, "c", False), DiceRolled(BOX, Roll(5, 5), 4)]
    assert table.cubes == {
        "c": Cube(2, CubeOwner.MEMBER, True),
        "m1": Cube(2, CubeOwner.MEMBER, True),
        "m2": Cube(),
    }


def test_la_option_with_the_cubes_level_a_box_double_includes_the_captain() -> None:
    """§2, the L.A. option: with all cubes at one level, a box double must include the
    captain; with the cubes at different levels it need not."""
    la = ChouetteSettings(box_double_takes_captain=True)
    table = box_on_roll(FOUR, settings=la)
    with _refused(Refusal.BOX_DOUBLE_NEEDS_CAPTAIN):
        table.box_double("bx", ["m1"])
    assert ChouetteSettings().box_double_takes_captain is False  # off by default
    uneven = restored(table, cubes={"m2": Cube(2, CubeOwner.BOX, True)})
    assert uneven.box_double("bx", ["m1"]) == [BoxDoubled("m1", 2)]


def test_beavers_are_off_by_default_and_a_setting() -> None:
    """§2: a doubled member may beaver when beavers are on: the cube goes to twice the
    offer and stays with the member."""
    table = box_on_roll(FOUR, dice=(3, 2))
    table.box_double("bx", ["m1"])
    with _refused(Refusal.BEAVERS_OFF):
        table.beaver("m1")
    beavers = ChouetteSettings(beavers=True)
    table = box_on_roll(FOUR, dice=(3, 2), settings=beavers)
    table.box_double("bx", ["m1"])
    events = table.beaver("m1")
    assert events[0] == DoubleBeavered("m1", 4, "m1", False)
    assert table.cubes["m1"] == Cube(4, CubeOwner.MEMBER, True)
    assert table.phase is ChouettePhase.MOVE  # no raccoons: the box rolled


def test_raccoons_only_with_beavers() -> None:
    """§2: with raccoons on, the box may redouble a beaver at once and own the cube."""
    with pytest.raises(ChouetteSettingsError):
        ChouetteSettings(raccoons=True)
    table = box_on_roll(FOUR, dice=(3, 2), settings=ChouetteSettings(beavers=True, raccoons=True))
    table.box_double("bx", ["m1", "m2"])
    table.beaver("m1")
    table.beaver("m2")
    assert table.phase is ChouettePhase.RACCOON and table.raccoons_possible() == ("m1", "m2")
    events = table.raccoon("bx", ["m2"])
    assert events == [DoubleRaccooned("m2", 8), DiceRolled(BOX, Roll(3, 2), 2)]
    assert table.cubes["m1"] == Cube(4, CubeOwner.MEMBER, True)
    assert table.cubes["m2"] == Cube(8, CubeOwner.BOX, True)


def test_lone_taker_must_beaver_as_a_setting() -> None:
    """§2: the box doubled every member and exactly one took: with the mandatory beaver
    the lone taker's take is a beaver; by default nothing happens."""
    forced = ChouetteSettings(lone_taker=LoneTaker.MANDATORY_BEAVER)
    table = box_on_roll(FOUR, dice=(3, 2), settings=forced)
    table.box_double("bx")
    table.drop("c")
    table.take("m2")
    events = table.drop("m1")
    assert DoubleBeavered("m2", 4, None, True) in events
    assert table.cubes["m2"] == Cube(4, CubeOwner.MEMBER, True)
    table = box_on_roll(FOUR, dice=(3, 2))
    table.box_double("bx")
    table.drop("c")
    table.take("m2")
    table.drop("m1")
    assert table.cubes["m2"] == Cube(2, CubeOwner.MEMBER, True)


def test_lone_taker_rule_needs_every_member_doubled() -> None:
    """§2: a box double to some members only is no "all doubled"."""
    forced = ChouetteSettings(lone_taker=LoneTaker.MANDATORY_BEAVER)
    table = box_on_roll(FOUR, dice=(3, 2), settings=forced)
    table.box_double("bx", ["c", "m1"])
    table.drop("c")
    table.take("m1")
    assert table.cubes["m1"] == Cube(2, CubeOwner.MEMBER, True)


# -- §2 Single cube -------------------------------------------------------------------


def test_single_cube_the_captain_doubles_and_the_box_answers_for_the_whole_team() -> None:
    """§2, single cube: the captain alone decides the team's doubles; the box answers for
    the whole team; rejecting loses every member's cube to them."""
    table = team_on_roll(("bx", "c", "m1"), settings=SINGLE)
    with _refused(Refusal.NOT_CAPTAIN):
        table.double("m1")
    events = table.double("c")
    assert events == [
        TeamDoubled("c", 2, "c"),
        TeamDoubled("m1", 2, "c"),
        DoublesClosed(("c", "m1")),
    ]
    with _refused(Refusal.SINGLE_CUBE):
        table.answer_doubles("bx", ["c"])
    events = table.answer_doubles("bx", [])
    assert table.totals == {"bx": -2, "c": 1, "m1": 1}
    # The box lost to the captain: the captain takes the box (§5).
    assert events[-1] == SeatsChanged("c", None, ("m1", "bx"))


def test_single_cube_box_doubles_the_team_each_member_answers() -> None:
    """§2, single cube: the box doubles the whole team; each member accepts or rejects
    independently (a rejecting member scores the old value and is out)."""
    table = box_on_roll(FOUR, dice=(4, 2, 6, 6), settings=SINGLE)
    with _refused(Refusal.SINGLE_CUBE):
        table.box_double("bx", ["c"])
    assert table.box_double("bx") == [BoxDoubled(m, 2) for m in ("c", "m1", "m2")]
    table.take("c")
    table.drop("m1")
    with _refused(Refusal.BEAVERS_OFF):
        table.beaver("m2")
    table.take("m2")
    assert table.results == {"m1": -1}
    play_first(table)  # the box's 4-2
    # The team owns the cube now: the captain redoubles for those still in.
    assert table.double("c") == [
        TeamDoubled("c", 4, "c"),
        TeamDoubled("m2", 4, "c"),
        DoublesClosed(("c", "m2")),
    ]


def test_single_cube_refuses_the_multiple_cube_options() -> None:
    """§2: beavers, the L.A. rule and the lone taker's beaver are multiple-cube options."""
    with pytest.raises(ChouetteSettingsError):
        ChouetteSettings(cubes=CubeMode.SINGLE, beavers=True)
    with pytest.raises(ChouetteSettingsError):
        ChouetteSettings(cubes=CubeMode.SINGLE, lone_taker=LoneTaker.MANDATORY_BEAVER)


# -- §2 Automatic doubles and Jacoby --------------------------------------------------


def test_automatic_doubles_are_off_by_default() -> None:
    """§2: by default an opening tie just rolls again."""
    table = started(FOUR, (2, 2, 3, 1))
    assert {c.value for c in table.cubes.values()} == {1}


def test_automatic_double_at_most_one_raises_every_cube() -> None:
    """§2: "at most one": the first opening tie doubles every cube, later ties do not;
    an automatic double does not turn a cube (Jacoby still applies)."""
    table = started(
        FOUR, (2, 2, 4, 4, 3, 1), ChouetteSettings(auto_doubles=AutoDoubles.AT_MOST_ONE)
    )
    events = table.record
    assert events.count(AutoDoubled(2)) == 1
    assert set(table.cubes.values()) == {Cube(2, CubeOwner.CENTRE, False)}


def test_automatic_double_at_the_box_option() -> None:
    """§2: "box's option": at the first tie the box chooses whether every cube doubles."""
    option = ChouetteSettings(auto_doubles=AutoDoubles.BOX_OPTION)
    table = started(FOUR, (2, 2, 4, 4, 3, 1), option)
    assert table.phase is ChouettePhase.AUTO_DOUBLE and table.waiting_for() == ("bx",)
    with _refused(Refusal.NOT_BOX):
        table.auto_double("c", True)
    events = table.auto_double("bx", True)
    assert events[:2] == [AutoDoubled(2), OpeningRoll((4, 4), None)]
    assert phase(table) is ChouettePhase.MOVE and table.cubes["m1"].value == 2
    table = started(FOUR, (2, 2, 3, 1), option)
    assert table.auto_double("bx", False)[0] == AutoDoubleDeclined("bx")
    assert table.cubes["m1"].value == 1


def test_jacoby_per_member_gammons_count_once_that_cube_was_turned() -> None:
    """§2, Jacoby (on by default): a gammon counts for a member only if that member's
    cube was turned; the others score it single."""
    table = team_on_roll(("bx", "c", "m1"))
    table = restored(
        table,
        box={6: 15},  # nothing borne off, nothing in the team's home: a gammon
        team={1: 1},
        cubes={"c": Cube(2, CubeOwner.BOX, True)},
        dice=(2, 1),
    )
    table.roll("c")
    events = table.move("c", table.legal_plays()[0].moves)
    assert CubeSettled("c", 4, WinKind.GAMMON, SettleEnd.BORNE_OFF) in events
    assert CubeSettled("m1", 1, WinKind.SINGLE, SettleEnd.BORNE_OFF) in events
    assert table.totals == {"bx": -5, "c": 4, "m1": 1}


def test_without_jacoby_every_member_scores_the_gammon() -> None:
    """§2: Jacoby off: the gammon counts for every member."""
    table = team_on_roll(("bx", "c", "m1"), settings=ChouetteSettings(jacoby=False))
    table = restored(table, box={6: 15}, team={1: 1}, dice=(2, 1))
    table.roll("c")
    play_first(table)
    assert table.totals == {"bx": -4, "c": 2, "m1": 2}


# -- §3 Who plays when the captain is out ---------------------------------------------


def test_the_captain_drops_a_box_double_and_the_next_member_plays() -> None:
    """§3: the captain rejects a box double: the highest-ranked member still in plays
    the team's checkers for the rest of the game; the rotation still follows the
    captain's result (the box beat the captain, so it stays)."""
    table = box_on_roll(FOUR, dice=(4, 3, 5, 1))
    table.box_double("bx")
    assert table.drop("c") == [
        DoubleDropped("c", "c", False),
        CubeSettled("c", -1, WinKind.SINGLE, SettleEnd.DROPPED),
        ActingCaptain("m1"),
    ]
    table.take("m1")
    assert table.take("m2")[-1] == DiceRolled(BOX, Roll(4, 3), 2)
    play_first(table)
    with _refused(Refusal.NOT_CAPTAIN):
        table.roll("c")  # out of the game
    table.roll("m1")
    play_first(table)
    table.resign("m1", "m1", WinKind.SINGLE)
    table.accept_resignation("bx")
    table.resign("m2", "m2", WinKind.SINGLE)
    events = table.accept_resignation("bx")
    assert events[-1] == SeatsChanged("bx", None, ("m1", "m2", "c"))


def test_the_box_rejects_the_captain_double_and_has_lost_to_the_captain() -> None:
    """§3: the box rejecting the captain's double has lost to the captain; play goes on
    with the next member still in as acting captain; at the end the captain takes the
    box (§5)."""
    table = team_on_roll(("bx", "c", "m1"), dice=(6, 2))
    table.double("c")
    table.roll("c")
    events = table.answer_doubles("bx", [])
    assert events == [
        DoubleDropped("c", "bx", True),
        CubeSettled("c", 1, WinKind.SINGLE, SettleEnd.DROPPED),
        ActingCaptain("m1"),
        DiceRolled(TEAM, Roll(6, 2), 2),
    ]
    assert table.mover() == "m1"
    play_first(table)
    table.resign("m1", "m1", WinKind.SINGLE)
    events = table.accept_resignation("bx")
    assert ChouetteGameFinished(1, (("c", 1), ("m1", -1)), 0, False) in events
    assert events[-1] == SeatsChanged("c", None, ("m1", "bx"))
