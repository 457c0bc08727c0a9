"""The fast board rendering gives, byte for byte, what the plain rules say (§3.1-§3.7).

``board_state`` / ``board_lines`` precompute per state (the board text, borne-off and bar
counts), fill views in without re-checking, and draw ASCII boards from tables. Here the
expected output is built the slow, obvious way, straight from the rules core's ``Match``
(a reference written in this file, the renderer as it was before it was made fast), and
compared with the real output at every state of seeded random matches: styles 1, 2 and
3, both perspectives, ``you`` true and false.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from backgammon.board import BAR, CHECKERS, Colour, Position, unpack
from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions, Phase
from protocol.board_ascii import render_ascii, render_board
from protocol.board_fibs import format_board, parse_board
from protocol.board_view import BoardState, BoardView, SideState
from protocol.match_view import board_lines, board_state, rolled_for_state
from tests.backgammon.helpers import random_action

# -- the reference: the rules, slowly ------------------------------------------------


def ref_unpack(packed: int) -> tuple[int, ...]:
    return tuple((packed >> (4 * i)) & 15 for i in range(26))


def ref_fibs_board(position: Position, o_player: int) -> tuple[int, ...]:
    o, x = ref_unpack(position[o_player]), ref_unpack(position[1 - o_player])
    board = [0] * 26
    for n in range(1, 25):
        if o[n]:
            board[n] = o[n]
        elif x[25 - n]:
            board[n] = -x[25 - n]
    board[25] = o[BAR]
    board[0] = -x[BAR]
    return tuple(board)


IN_GAME = (Phase.TURN, Phase.MOVE, Phase.DOUBLED)


def ref_table(match: Match) -> tuple[int, ...]:
    """The board numbers FIBS shows: the game's, or the opening table between games (D101)."""
    if match.phase in IN_GAME or match.phase is Phase.MATCH_OVER:
        return ref_fibs_board(match.position, match.o_player)
    return ref_fibs_board(Position.start(), match.o_player)


def ref_line(match: Match, names: Sequence[str], colour: Colour, you: bool) -> str:
    """The ``board:`` line of ``match`` for the ``colour`` player's side (§3.1-§3.4), with
    FIBS's flags (D24, D100-D102)."""
    me = match.o_player if colour is Colour.O else 1 - match.o_player
    other = 1 - me
    board = ref_table(match)
    in_game = match.phase in IN_GAME
    between = not in_game and match.phase is not Phase.MATCH_OVER

    def dice(player: int) -> tuple[int, int]:
        if match.phase is Phase.MOVE and match.turn == player and match.dice is not None:
            return (match.dice.d1, match.dice.d2)
        return (0, 0)

    def off(c: Colour) -> int:
        if c is Colour.O:
            return CHECKERS - sum(v for v in board if v > 0)
        return CHECKERS + sum(v for v in board if v < 0)

    def bar(c: Colour) -> int:
        return board[25] if c is Colour.O else -board[0]

    offer = match.offer
    pending = match.phase is Phase.DOUBLED and offer is not None
    doubled = pending and offer is not None and offer.doubler == other
    owner = None if between else match.cube_owner

    def may(player: int) -> int:
        if pending:
            return 0  # a double is pending: 0 for both
        return int(owner is None or owner == player)  # the Crawford game makes no difference

    if not in_game:
        turn = 0
    elif pending and offer is not None:
        turn = match.colour(1 - offer.doubler).value
    else:
        turn = match.colour(match.turn).value  # a pending resignation changes nothing
    length = match.options.length
    one_away = bool(length) and length - 1 in match.score
    if in_game:
        post = match.post_crawford
    elif between:
        post = (match.crawford_played or match.crawford_game) and one_away
    else:
        post = match.post_crawford and one_away
    must_move = in_game and match.turn == me and dice(me) != (0, 0)
    redoubles = match.options.instant_redoubles if match.options.unlimited else 0
    fields: list[object] = [
        "board",
        "You" if you else names[me],
        names[other],
        length or 9999,
        match.score[me],
        match.score[other],
        *board,
        turn,
        *dice(me),
        *dice(other),
        1 if between else match.cube,
        may(me),
        may(other),
        int(you and doubled),
        colour.value,
        -colour.value,  # direction: O moves down, X up (§3.2)
        0 if colour is Colour.O else 25,  # home
        25 if colour is Colour.O else 0,  # bar
        off(colour),
        off(colour.other),
        bar(colour),
        bar(colour.other),
        match.moves_required() if must_move else 0,
        3 if length and not match.options.crawford and one_away else 0,
        1 if post else 0,
        9999 if redoubles is None else redoubles,
    ]
    return ":".join(str(f) for f in fields)


def ref_ascii(view: BoardView, style: int) -> list[str]:
    """The ASCII board of §3.7, one cell at a time (the renderer before it was made fast)."""
    me, them = view.colour, view.colour.other
    letter = {Colour.O: "O", Colour.X: "X"}
    if me is Colour.O:
        layout = (range(13, 19), range(19, 25), range(12, 6, -1), range(6, 0, -1))
    else:
        layout = (range(1, 7), range(7, 13), range(24, 18, -1), range(18, 12, -1))

    def cell(count: int, mark: str, row: int) -> str:
        if row < 5:
            return f" {mark} " if count >= row else "   "
        return f" {mark} " if count == 5 else f"{count:>2} " if count > 5 else "   "

    def point(value: int, row: int) -> str:
        return cell(abs(value), "O" if value > 0 else "X", row)

    def numbers(points: tuple[range, range], fill: str) -> str:
        chars = [" "] * 3 + [fill] * 44
        for start, pts in zip((5, 29), points, strict=True):
            for i, p in enumerate(pts):
                text = str(p)
                col = start + 3 * i
                chars[col - len(text) + 1 : col + 1] = list(text)
        return "".join(chars).rstrip()

    def frame(points: tuple[range, range]) -> list[str]:
        if style == 1:
            line = numbers(points, "-")
            return [line[:3] + "+" + line[4:46] + "+"]
        return ["   +" + "-" * 42 + "+", numbers(points, " ")]

    def row(pts: tuple[range, range], bar: int, mark: str, r: int) -> str:
        left = "".join(point(view.board[p], r) for p in pts[0])
        right = "".join(point(view.board[p], r) for p in pts[1])
        return f"   |{left}|{cell(bar, mark, r)}| {right}|"

    upper, lower_pts = (layout[0], layout[1]), (layout[2], layout[3])
    top, bottom = frame(upper), frame(lower_pts)
    top_label = f" {letter[them]}: {view.opponent[:15]} - score: {view.opponent_score}"
    name = view.player_login if view.player_login is not None else view.player
    bottom_label = f" {letter[me]}: {name[:15]} - score: {view.player_score}"
    middle = ("  v|" if me is Colour.O else "   |") + " " * 18 + "|BAR|" + " " * 19 + "|"
    middle += "" if me is Colour.O else "v"
    middle += (
        "    unlimited match"
        if view.match_length is None
        else f"    {view.match_length}-point match"
    )
    lines = [top[0] + top_label] if style == 1 else [top[1], top[0] + top_label]
    lines += [row(upper, view.opponent_bar, letter[them], r) for r in range(1, 6)]
    lines.append(middle)
    lower = [row(lower_pts, view.player_bar, letter[me], r) for r in range(5, 0, -1)]
    if view.match_length is None:
        n = view.redoubles
        text = (
            "Unlimited redoubles"
            if n is None
            else "No redoubles"
            if n == 0
            else "1 redouble"
            if n == 1
            else f"{n} redoubles"
        )
        lower[0] += "     " + text
    lines += lower
    lines += [bottom[0] + bottom_label] if style == 1 else [bottom[0] + bottom_label, bottom[1]]
    bars = {me: view.player_bar, them: view.opponent_bar}
    homes = {me: view.player_home, them: view.opponent_home}
    status = (
        f"   BAR: O-{bars[Colour.O]} X-{bars[Colour.X]}"
        f"   OFF: O-{homes[Colour.O]} X-{homes[Colour.X]}"
        f"   Cube: {view.cube}"
    )
    if view.player_may_double != view.opponent_may_double:
        status += f" (owned by {view.player if view.player_may_double else view.opponent})"
    if any(view.player_dice):
        status += f"  {view.player} rolled {view.player_dice[0]} {view.player_dice[1]}."
    elif any(view.opponent_dice):
        status += f"  {view.opponent} rolled {view.opponent_dice[0]} {view.opponent_dice[1]}."
    elif view.turn is not None:
        status += f"  turn: {view.player if view.turn is me else view.opponent}"
    return [*lines, "", status]


# -- random matches --------------------------------------------------------------------


OPTIONS = [
    MatchOptions(length=5),
    MatchOptions(length=3, crawford=False),
    MatchOptions(length=0, instant_redoubles=None, cube_limit=8),
    MatchOptions(length=0, instant_redoubles=2, jacoby=True, auto_doubles=1),
]
NAMES = [("alice", "bob"), ("averyveryverylongname", "x")]


@pytest.mark.parametrize("seed", range(8))
def test_every_view_of_random_matches_is_byte_identical_to_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    match = Match(OPTIONS[seed % len(OPTIONS)], SeededDice(seed), o_player=seed % 2)
    names = NAMES[seed % len(NAMES)]
    checked = 0
    while checked < 150 and random_action(match, rng):
        checked += 1
        state = board_state(match, names)
        assert state.board == ref_table(match)
        for colour in (Colour.O, Colour.X):
            login = names[match.o_player if colour is Colour.O else 1 - match.o_player]
            for you in (True, False):
                expected = ref_line(match, names, colour, you)
                assert board_lines(state, colour, 3, you=you) == [expected]
                parsed = parse_board(expected)
                assert format_board(parsed) == expected
                # The ASCII boards: the reference drawn from the reference line's fields.
                view = dataclasses.replace(parsed, player_login=login)
                for style in (1, 2):
                    assert board_lines(state, colour, style, you=you) == ref_ascii(view, style)
                # The unchecked fill-in gives what the checking constructor gives, every
                # field included (the ones ``==`` ignores too).
                fast = BoardView.for_viewer(state, colour, you=you)
                assert all_fields(fast) == all_fields(view)
                # The line written without a view (board_line) is the view's line.
                assert format_board(fast) == expected
            # The unchecked copy before a roll the server makes (D278) is what the
            # checking constructor makes of the same fields.
            barred = rolled_for_state(state, colour)
            assert all_fields(barred) == all_fields(
                dataclasses.replace(barred, o=barred.o, x=barred.x)
            )
            assert not barred.side(colour).may_double
    assert checked > 20


def all_fields(value: object) -> dict[str, object]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}  # type: ignore[arg-type]


# -- odd values, the public constructors ------------------------------------------------


def odd_view(board: tuple[int, ...], **changes: object) -> BoardView:
    view = BoardView(
        player="You",
        opponent="them",
        match_length=None,
        player_score=3,
        opponent_score=12,
        board=board,
        turn=None,
        player_dice=(0, 0),
        opponent_dice=(0, 0),
        cube=64,
        player_may_double=False,
        opponent_may_double=True,
        was_doubled=False,
        colour=Colour.X,
        player_home=0,
        opponent_home=2,
        player_bar=17,
        opponent_bar=3,
        can_move=0,
        redoubles=7,
    )
    return dataclasses.replace(view, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize("colour", [Colour.O, Colour.X])
def test_numbers_outside_the_tables_are_drawn_and_written_like_the_others(colour: Colour) -> None:
    # Nothing a match reaches, but a BoardView takes them: more than 15 checkers on a
    # point or on the bar, from a hand-made view or a parsed line.
    board = (-16, 20, -33, 0, 7, *([0] * 20), 99)
    view = odd_view(board, colour=colour)
    for style in (1, 2):
        assert render_ascii(view, style) == ref_ascii(view, style)
    line = format_board(view)
    assert line.split(":")[6:32] == [str(v) for v in board]
    assert format_board(parse_board(line)) == line
    assert render_board(view, 3) == [line]


def test_derived_values_follow_the_fields() -> None:
    state = BoardState(
        o=SideState("a"),
        x=SideState("b"),
        board=[0, *([0] * 24), 2],  # type: ignore[arg-type]  # a list is made a tuple
        match_length=0,
    )
    assert isinstance(state.board, tuple)
    assert state.match_length is None
    assert state.board_text == ":".join(["0"] * 25 + ["2"])
    moved = dataclasses.replace(state, board=(-1, 3, *([0] * 23), 0))
    assert moved.board_text == "-1:3:" + ":".join(["0"] * 24)
    view = BoardView.for_viewer(moved, Colour.X, you=False)
    assert (view.player_home, view.opponent_home, view.player_bar, view.opponent_bar) == (
        14,
        12,
        1,
        0,
    )
    assert dataclasses.replace(view, board=state.board).board_text == state.board_text
    # Derived values are not compared and not shown.
    assert "board_text" not in repr(state) and "board_text" not in repr(view)


def test_the_public_constructors_still_check() -> None:
    good = odd_view((0,) * 26)
    with pytest.raises(ValueError):
        dataclasses.replace(good, board=(0,) * 25)
    with pytest.raises(ValueError):
        dataclasses.replace(good, board=(1, *([0] * 25)))
    with pytest.raises(ValueError):
        dataclasses.replace(good, player_dice=(7, 1))
    with pytest.raises(ValueError):
        dataclasses.replace(good, opponent_dice=(1, 2, 3))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        dataclasses.replace(good, match_length=-1)
    with pytest.raises(ValueError):
        BoardState(o=SideState("a", dice=(0, 9)), x=SideState("b"), board=(0,) * 26, match_length=1)
    with pytest.raises(ValueError):
        BoardState(o=SideState("a"), x=SideState("b"), board=(0,) * 26, match_length=1, cube=0)
    with pytest.raises(ValueError):
        format_board(dataclasses.replace(good, opponent="two words"))


def test_unpack_and_fibs_board_equal_the_shift_and_mask_loops() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        # Any nibbles at all, valid positions or not, and bits above the 26 nibbles.
        a = rng.getrandbits(rng.choice([8, 60, 104, 112]))
        b = rng.getrandbits(rng.choice([8, 60, 104, 112]))
        assert unpack(a) == ref_unpack(a)
        position = Position(a, b)
        for o_player in (0, 1):
            assert position.counts(o_player) == ref_unpack(position[o_player])
            assert position.fibs_board(o_player) == ref_fibs_board(position, o_player)
