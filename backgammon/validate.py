"""Checking a play that a player submitted, with the reason when it is refused.

A submission is accepted exactly when its moves, in some order, are one of the legal
plays of the roll (FIBS: one entry per die, shared/docs/fibs-protocol.md §4.5). The
moves may be given in any order; the accepted :class:`~backgammon.moves.Play` keeps
the order as given when that order can be carried out, so announcements repeat what
the player typed.

When nothing fits, the error names the first rule the moves break, taken in the order
given (see docs/rules.md for the mapping to FIBS's texts).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import permutations

from backgammon.board import BAR, OFF, SHIFT, UNIT, Player, Position
from backgammon.dice import Roll
from backgammon.errors import IllegalMoveError, IllegalReason
from backgammon.moves import LegalResults, Move, Play, apply_moves, legal_results, result_key

_HOME_SHIFT = SHIFT[7]


def validate_play(
    position: Position,
    player: Player,
    roll: Roll,
    moves: Sequence[Move],
    legal: LegalResults | None = None,
) -> Play:
    """Return the legal play that ``moves`` make, or raise why they are not one.

    ``legal`` may pass the already computed
    :func:`~backgammon.moves.legal_results` of this roll.

    :raises IllegalMoveError: with the :class:`IllegalReason`, the 0-based index of
        the offending move and the point (own numbering) or distance concerned.
    """
    if legal is None:
        legal = legal_results(position, player, roll)
    required = legal.required
    if len(moves) < required:
        raise IllegalMoveError(
            f"{required} moves are required, {len(moves)} given",
            IllegalReason.TOO_FEW,
            count=required,
        )
    if len(moves) > required:
        raise IllegalMoveError(
            f"at most {required} moves are possible, {len(moves)} given",
            IllegalReason.TOO_MANY,
            count=required,
        )
    tried: set[tuple[Move, ...]] = set()
    for order in permutations(moves):
        if order in tried:
            continue
        tried.add(order)
        if _executable(position, player, roll, order):
            result, _ = apply_moves(position, player, order)
            if result_key(position, player, result) in legal.keys:
                return Play(tuple(order), result)
    raise _diagnose(position, player, roll, moves)


def _executable(position: Position, player: Player, roll: Roll, moves: Sequence[Move]) -> bool:
    """True when ``moves`` can be carried out one after another with the dice."""
    try:
        _walk(position, player, roll, moves)
    except IllegalMoveError:
        return False
    return True


def _diagnose(
    position: Position, player: Player, roll: Roll, moves: Sequence[Move]
) -> IllegalMoveError:
    """The error for moves that make no legal play, found by playing them as given."""
    try:
        used = _walk(position, player, roll, moves)
    except IllegalMoveError as error:
        return error
    # Every move can be carried out, yet the result is not legal: only the
    # higher-die rule can do that (one die playable, the lower one was used).
    index = used.index(min(used))
    return IllegalMoveError(
        f"the {min(used)} may not be played when the {roll.high} can be",
        IllegalReason.WRONG_DISTANCE,
        index=index,
        point=min(used),
    )


def _walk(position: Position, player: Player, roll: Roll, moves: Sequence[Move]) -> list[int]:
    """Carry out ``moves`` in order, checking each against the rules and the dice left.

    Returns the die used by each move. A bear-off that several dice could make uses
    the smallest of them, keeping the larger dice for the moves after it.

    :raises IllegalMoveError: at the first move that breaks a rule.
    """
    me = position.packed(player)
    opp = position.packed(1 - player)
    dice = list(roll.dice)
    used = []
    for index, (src, dst) in enumerate(moves):
        if dst >= src:
            raise IllegalMoveError(
                f"move {index + 1} goes away from home", IllegalReason.BACKWARDS, index=index
            )
        if src != BAR and me >> SHIFT[BAR]:
            raise IllegalMoveError(
                f"move {index + 1}: a checker on the bar must enter first",
                IllegalReason.MUST_ENTER,
                index=index,
            )
        if not (me >> SHIFT[src]) & 15:
            raise IllegalMoveError(
                f"move {index + 1}: no checker on point {src}",
                IllegalReason.NO_CHECKER,
                index=index,
                point=src,
            )
        if dst == OFF:
            die = _bear_off_die(me, src, dice, index)
        else:
            die = src - dst
            if die not in dice:
                raise IllegalMoveError(
                    f"move {index + 1}: no die of {die} left",
                    IllegalReason.WRONG_DISTANCE,
                    index=index,
                    point=die,
                )
            if (opp >> SHIFT[25 - dst]) & 15 >= 2:
                raise IllegalMoveError(
                    f"move {index + 1}: point {dst} is blocked",
                    IllegalReason.BLOCKED,
                    index=index,
                    point=dst,
                )
            if (opp >> SHIFT[25 - dst]) & 15 == 1:
                opp += UNIT[BAR] - UNIT[25 - dst]
        dice.remove(die)
        used.append(die)
        me += UNIT[dst] - UNIT[src]
    return used


def _bear_off_die(me: int, src: int, dice: list[int], index: int) -> int:
    """The die that bears a checker off from ``src``, or raise why none can."""
    if me >> _HOME_SHIFT:
        raise IllegalMoveError(
            f"move {index + 1}: not all checkers are home",
            IllegalReason.NOT_ALL_HOME,
            index=index,
            point=src,
        )
    if src in dice:
        return src
    higher = [d for d in dice if d > src]
    if not higher:
        raise IllegalMoveError(
            f"move {index + 1}: no die of {src} or more left",
            IllegalReason.WRONG_DISTANCE,
            index=index,
            point=src,
        )
    if me >> SHIFT[src + 1]:
        raise IllegalMoveError(
            f"move {index + 1}: checkers on higher points must move first",
            IllegalReason.CANNOT_BEAR_OFF,
            index=index,
            point=src,
        )
    return min(higher)
