"""The bots library at a chouette without sockets (docs/bots.md "At a chouette"): every
chouette line the server sends parses back to what it says (the texts of
:mod:`protocol.replies` and the ``show chouette`` lines of :mod:`protocol.chouette_view`),
and :func:`bots.chouette.chouette_due` reads from a board what the box, the captain, a
member and the box's partner must do (the boards drawn as the server draws them, D311).
The bots playing at a real table: tests/server/test_chouette_bots.py."""

from __future__ import annotations

from backgammon.board import Colour, Position
from backgammon.chouette import Chouette
from backgammon.chouette_settings import ChouetteSettings
from backgammon.dice import SeededDice
from backgammon.events import WinKind
from bots.chouette import chouette_due
from bots.chouette_events import (
    ActingCaptain,
    AutoDoubleOption,
    BoxAnswers,
    BoxDoubles,
    BoxDoublesYou,
    ChouetteBack,
    ChouetteCube,
    ChouetteEnd,
    ChouetteGameOver,
    ChouetteGameStarts,
    ChouetteInvited,
    ChouetteJoined,
    ChouetteJoinHint,
    ChouetteLeft,
    ChouetteResignOffered,
    ChouetteRules,
    ChouetteSeats,
    ChouetteTable,
    ChouetteTotal,
    CubeAnswered,
    PartnerOffered,
    TeamDoubles,
    parse_chouette,
)
from bots.decide import Due
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import NO_DICE, BoardState, BoardView, SideState
from protocol.chouette_view import settings_words, show_lines
from protocol.match_view import board_lines


def test_every_chouette_line_parses_to_what_it_says() -> None:
    rules = parse_chouette(replies.chouette_rules(settings_words(ChouetteSettings())))
    assert isinstance(rules, ChouetteRules)
    assert rules.settings["cubes"] == "multiple" and rules.on("team_autoroll", False)
    cases = {
        replies.chouette_invites_you("ann"): ChouetteInvited("ann"),
        replies.chouette_join_hint("ann"): ChouetteJoinHint("ann"),
        replies.chouette_joins("bob"): ChouetteJoined("bob"),
        replies.chouette_leaves("bob"): ChouetteLeft("bob"),
        replies.chouette_presence("bob", True): ChouetteBack("bob"),
        replies.chouette_seats("ann", ["bob", "cat"]): ChouetteSeats("ann", ("bob", "cat")),
        replies.chouette_game_starts(3, "ann", "bob"): ChouetteGameStarts(3, "ann", "bob"),
        replies.chouette_acting_captain("cat"): ActingCaptain("cat"),
        replies.chouette_team_doubles("bob", 2): TeamDoubles("bob", 2),
        replies.chouette_doubles_for("cat", "bob", 4): TeamDoubles("bob", 4),
        replies.chouette_box_answers(["bob", "cat"]): BoxAnswers(("bob", "cat")),
        replies.chouette_box_doubles("bob", 2): BoxDoubles("bob", 2),
        replies.CHOUETTE_ANSWER_BOX_DOUBLE: BoxDoublesYou(),
        replies.chouette_box_accepts("bob", 2): CubeAnswered("bob", 2, by_box=True),
        replies.chouette_box_rejects("bob"): CubeAnswered("bob", None, by_box=True),
        replies.chouette_member_accepts("bob", 2): CubeAnswered("bob", 2, by_box=False),
        replies.chouette_beavers("bob", 4): CubeAnswered("bob", 4, by_box=False),
        replies.chouette_raccoons("bob", 8): CubeAnswered("bob", 8, by_box=True),
        replies.chouette_member_rejects("bob"): CubeAnswered("bob", None, by_box=False),
        replies.chouette_resign_offered("ann", "bob", WinKind.GAMMON, 4): ChouetteResignOffered(
            "ann", "bob", 4
        ),
        replies.chouette_resign_offered("bob", "ann", WinKind.SINGLE, 1): ChouetteResignOffered(
            "bob", "ann", 1
        ),
        replies.chouette_partner_offered("cat"): PartnerOffered("cat"),
        replies.CHOUETTE_AUTO_DOUBLE_OPTION: AutoDoubleOption(),
        replies.chouette_game_over(2, -3, False): ChouetteGameOver(2, -3, False),
        replies.chouette_game_over(1, 2, True): ChouetteGameOver(1, 2, True),
    }
    for line, wanted in cases.items():
        assert parse_chouette(line) == wanted, line
    for line in ("ann moves 13-7 8-7.", "bob doubles. Type 'accept' or 'reject'.", "hello"):
        assert parse_chouette(line) is None


def test_show_chouette_lines_parse_to_the_table() -> None:
    core = Chouette(ChouetteSettings(), SeededDice(5))
    for name in ("ann", "bob", "cat"):
        core.join(name)
    core.start_game()
    lines = [parse_chouette(line) for line in show_lines("ann", core, clip=True)]
    table = lines[0]
    assert isinstance(table, ChouetteTable)
    assert (table.host, table.game, table.box, table.partner) == ("ann", 1, core.box, None)
    assert table.line == core.line and table.phase == core.phase.value
    cubes = [c for c in lines if isinstance(c, ChouetteCube)]
    assert [(c.member, c.value, c.owner, c.result) for c in cubes] == [
        (m, 1, "centre", None) for m in core.cubes
    ]
    totals = [t for t in lines if isinstance(t, ChouetteTotal)]
    assert {t.name for t in totals} == {"ann", "bob", "cat"}
    assert {t.seat for t in totals if t.name == core.box} == {"box"}
    assert lines[-1] == ChouetteEnd()


def _view(
    colour: Colour,
    *,
    you: bool,
    turn: Colour,
    dice: tuple[int, int] = NO_DICE,
    doubled: Colour | None = None,
    may: tuple[bool, bool] = (True, True),
) -> BoardView:
    """A chouette board as the server draws it (the box O, the team X, D311)."""
    state = BoardState(
        o=SideState("ann", 0, dice if turn is Colour.O else NO_DICE, may[0]),
        x=SideState("bob", 0, dice if turn is Colour.X else NO_DICE, may[1]),
        board=Position.start().fibs_board(0),
        match_length=None,
        turn=turn,
        doubled=doubled,
    )
    return parse_board(board_lines(state, colour, 3, you=you)[0])


def test_what_is_due_at_a_chouette_for_each_seat() -> None:
    O, X = Colour.O, Colour.X
    # the box: roll or double, move, answer the team's doubles; its partner nothing
    assert chouette_due(_view(O, you=True, turn=O), box_offer=False) is Due.CUBE
    assert chouette_due(_view(O, you=True, turn=O, dice=(3, 1)), box_offer=False) is Due.MOVE
    pending = _view(O, you=True, turn=O, doubled=O, may=(False, False))
    assert chouette_due(pending, box_offer=False) is Due.ANSWER
    assert chouette_due(_view(O, you=False, turn=O), box_offer=False) is None
    assert chouette_due(_view(O, you=True, turn=X), box_offer=False) is None
    # the captain: its cube, then the team's move
    assert chouette_due(_view(X, you=True, turn=X), box_offer=False) is Due.CUBE
    assert chouette_due(_view(X, you=True, turn=X, dice=(6, 5)), box_offer=False) is Due.MOVE
    # a member: its own cube in the window, never the move; the box's double to answer
    assert chouette_due(_view(X, you=False, turn=X), box_offer=False) is Due.CUBE
    assert chouette_due(_view(X, you=False, turn=X, dice=(6, 5)), box_offer=False) is None
    box_owns = _view(X, you=False, turn=X, may=(True, False))
    assert chouette_due(box_owns, box_offer=False) is None
    doubled = _view(X, you=False, turn=X, doubled=X, may=(False, False))
    assert chouette_due(doubled, box_offer=True) is Due.ANSWER
    assert chouette_due(_view(X, you=False, turn=X), box_offer=True) is None  # not doubled
    assert chouette_due(_view(X, you=False, turn=O), box_offer=False) is None
