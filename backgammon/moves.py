"""Moves, plays and legal-play generation.

A :class:`Move` takes one checker by one die, in the mover's own numbering
(25 is the bar, 0 is off). A :class:`Play` is what a player does with a whole roll:
its moves in an order that can be carried out, and the resulting position.

:func:`legal_plays` returns every distinct legal result (orders that end in the same
position are one play) under the complete rules: bar first, no landing on a point
held by two or more opposing checkers, hitting a blot, bearing off only with all
checkers home and with a higher die only from the highest point, both dice if any
sequence allows it, otherwise the higher die if it can be played, as many dice of
a double as possible.

Generation works on the packed form of :mod:`backgammon.board`. A result is keyed by
the mover's packed side plus the set of points where a blot was hit, so two plays
that differ only in a hit-and-run are different plays.
"""

from __future__ import annotations

from bisect import insort
from typing import NamedTuple

from backgammon.board import BAR, OFF, SHIFT, UNIT, Player, Position
from backgammon.dice import Roll

_HIT_SHIFT = 112
"""Where the hit mask starts in a result key (above the mover's 104 packed bits)."""
_SIDE_MASK = (1 << _HIT_SHIFT) - 1
_HIT = tuple(1 << (p + _HIT_SHIFT) for p in range(26))
"""A hit on each mover's point, as it appears in a result key."""
_BAR_SHIFT = SHIFT[BAR]
_HOME_SHIFT = SHIFT[7]
_ONE_OUTSIDE = frozenset(UNIT[i] >> _HOME_SHIFT for i in range(7, 26))
"""Packed sides, shifted past the home board, that hold exactly one checker outside."""
_FEW_OUTSIDE = {0: True}
"""Shifted packed sides with one to three checkers outside home (a double may bear off)."""
for _a in range(7, 26):
    for _b in range(_a, 26):
        for _c in range(_b, 26):
            _FEW_OUTSIDE[UNIT[_a] >> _HOME_SHIFT] = True
            _FEW_OUTSIDE[(UNIT[_a] + UNIT[_b]) >> _HOME_SHIFT] = True
            _FEW_OUTSIDE[(UNIT[_a] + UNIT[_b] + UNIT[_c]) >> _HOME_SHIFT] = True
_BLOCKED = str.maketrans("0123456789abcdef", "0011111111111111")
_BLOTS = str.maketrans("0123456789abcdef", "0100000000000000")


class Move(NamedTuple):
    """One checker moved by one die, in the mover's own numbering (25 bar, 0 off)."""

    src: int
    dst: int


class Play(NamedTuple):
    """A legal way to play a roll: its moves (in an order that can be carried out)
    and the position it leads to."""

    moves: tuple[Move, ...]
    result: Position


_Path = tuple[Move, ...]

_MOVE = tuple(tuple(Move(src, dst) for dst in range(26)) for src in range(26))
"""Every possible move, made once: paths share these instead of building new ones."""


def legal_plays(position: Position, player: Player, roll: Roll) -> list[Play]:
    """Every distinct legal play of ``roll`` for ``player`` (empty when none is possible).

    Each play lists the largest possible number of moves; all plays of one roll have
    the same number of moves.
    """
    me = position.packed(player)
    opp = position.packed(1 - player)
    found = _generate(me, opp, roll.d1, roll.d2)
    new_play = new_position = tuple.__new__
    plays: list[Play] = []
    append = plays.append
    for key, path in found.items():
        if key >> _HIT_SHIFT:
            mine, theirs = _result_sides(key, opp)
        else:
            mine, theirs = key, opp
        result = new_position(Position, (mine, theirs) if player == 0 else (theirs, mine))
        append(new_play(Play, (path, result)))
    return plays


def moves_required(position: Position, player: Player, roll: Roll) -> int:
    """How many checkers ``player`` must move with ``roll`` (0 when no move is possible)."""
    found = _generate(position.packed(player), position.packed(1 - player), roll.d1, roll.d2)
    return len(next(iter(found.values()))) if found else 0


def apply_moves(
    position: Position, player: Player, moves: tuple[Move, ...] | list[Move]
) -> tuple[Position, tuple[int, ...]]:
    """Carry out ``moves`` in order without checking dice or the rules of the roll.

    Returns the new position and the mover's points where an opposing blot was hit.
    Each move must at least take an existing checker: the caller has validated the
    play (see :mod:`backgammon.validate`).
    """
    me = position.packed(player)
    opp = position.packed(1 - player)
    hits = []
    for src, dst in moves:
        me += UNIT[dst] - UNIT[src]
        if 1 <= dst <= 24 and (opp >> SHIFT[25 - dst]) & 15 == 1:
            opp += UNIT[BAR] - UNIT[25 - dst]
            hits.append(dst)
    result = Position(me, opp) if player == 0 else Position(opp, me)
    return result, tuple(hits)


# -- generation ----------------------------------------------------------------------


def _result_sides(key: int, opp: int) -> tuple[int, int]:
    """Split a result key into the mover's packed side and the opponent's after hits."""
    hits = key >> _HIT_SHIFT
    while hits:
        low = hits & -hits
        point = low.bit_length() - 1
        opp += UNIT[BAR] - UNIT[25 - point]
        hits ^= low
    return key & _SIDE_MASK, opp


def _opponent_masks(opp: int) -> tuple[int, int]:
    """Bit ``p`` set where the mover's point ``p`` is blocked / holds an opposing blot.

    The opponent's own index ``25 - p`` is the mover's point ``p``; in the 26-digit hex
    form of the packed side, digit ``j`` (from the left) is index ``25 - j``, so digit
    ``j`` is the mover's point ``j``. Reversing the translated digits gives the masks.
    """
    digits = format(opp, "026x")
    return (
        int(digits.translate(_BLOCKED)[::-1], 2),
        int(digits.translate(_BLOTS)[::-1], 2),
    )


def _generate(me: int, opp: int, d1: int, d2: int) -> dict[int, _Path]:
    """Map each distinct legal result key to one path that reaches it."""
    blocked, blots = _opponent_masks(opp)
    digits = format(me, "026x")
    occupied = [25 - j for j in range(25) if digits[j] != "0"]  # descending, bar first
    outside = me >> _HOME_SHIFT
    if d1 == d2:
        if me >> _BAR_SHIFT or _FEW_OUTSIDE.get(outside, False):
            return _doubles(me, occupied[::-1], blocked, blots << _HIT_SHIFT, d1)
        return _doubles_contact(me, occupied, blocked, blots << _HIT_SHIFT, d1)
    if outside and outside not in _ONE_OUTSIDE and not me >> _BAR_SHIFT:
        return _two_dice_contact(me, occupied, blocked, blots << _HIT_SHIFT, d1, d2)
    return _two_dice_general(me, occupied, blocked, blots << _HIT_SHIFT, d1, d2)


def _two_dice_contact(
    me: int, occupied: list[int], blocked: int, blots: int, a: int, b: int
) -> dict[int, _Path]:
    """Two different dice, nothing on the bar and two or more checkers outside home.

    No bear-off can happen, so each die's single moves are independent of order:
    the two-checker plays are the pairs of single moves, plus one checker moving by
    both dice through either intermediate point.
    """
    unit = UNIT
    hit = _HIT
    move = _MOVE
    by_a = [s for s in occupied if s > a and not (blocked >> (s - a)) & 1]
    by_b = [s for s in occupied if s > b and not (blocked >> (s - b)) & 1]
    found: dict[int, _Path] = {}
    for s1 in by_a:
        t1 = s1 - a
        base = me - unit[s1] + unit[t1]
        hit1 = hit[t1]
        first = move[s1][t1]
        single = (me >> SHIFT[s1]) & 15 == 1
        for s2 in by_b:
            if s2 == s1 and single:
                continue
            t2 = s2 - b
            key = (base - unit[s2] + unit[t2]) | (blots & (hit1 | hit[t2]))
            found[key] = (first, move[s2][t2])
        t2 = t1 - b
        if t2 >= 1 and not (blocked >> t2) & 1:
            key = (me - unit[s1] + unit[t2]) | (blots & (hit1 | hit[t2]))
            found[key] = (first, move[t1][t2])
    for s1 in by_b:
        t1 = s1 - b
        t2 = t1 - a
        if t2 >= 1 and not (blocked >> t2) & 1:
            key = (me - unit[s1] + unit[t2]) | (blots & (hit[t1] | hit[t2]))
            found[key] = (move[s1][t1], move[t1][t2])
    if found:
        return found
    high, low = (a, b) if a > b else (b, a)
    singles = by_a if high == a else by_b
    if not singles:
        high = low
        singles = by_b if high == b else by_a
    for s in singles:
        t = s - high
        found[(me - unit[s] + unit[t]) | (blots & hit[t])] = (move[s][t],)
    return found


def _step(me: int, src: int, die: int, blocked: int) -> int:
    """The destination of moving a checker of ``me`` from ``src`` by ``die``, or -1.

    Checks bar-first, blocking and bearing-off rules; the caller knows ``src`` holds
    a checker.
    """
    if src != BAR and me >> _BAR_SHIFT:
        return -1
    dst = src - die
    if dst >= 1:
        return -1 if (blocked >> dst) & 1 else dst
    if me >> _HOME_SHIFT:
        return -1  # not all home
    if dst < 0 and me >> SHIFT[src + 1]:
        return -1  # a higher die bears off only from the highest point
    return OFF


def _two_dice_general(
    me: int, occupied: list[int], blocked: int, blots: int, a: int, b: int
) -> dict[int, _Path]:
    """Two different dice in any position (bar, bear-off): both orders, full checks."""
    unit = UNIT
    hit = _HIT
    found: dict[int, _Path] = {}
    singles: dict[int, dict[int, _Path]] = {a: {}, b: {}}
    for first, second in ((a, b), (b, a)):
        for s1 in occupied:
            t1 = _step(me, s1, first, blocked)
            if t1 < 0:
                continue
            m1 = me - unit[s1] + unit[t1]
            hit1 = blots & hit[t1]
            singles[first][m1 | hit1] = (_MOVE[s1][t1],)
            after = occupied if (m1 >> SHIFT[s1]) & 15 else [s for s in occupied if s != s1]
            if t1 and t1 not in after:
                after = [*after, t1]
            for s2 in after:
                t2 = _step(m1, s2, second, blocked)
                if t2 < 0:
                    continue
                key = (m1 - unit[s2] + unit[t2]) | hit1 | (blots & hit[t2])
                found[key] = (_MOVE[s1][t1], _MOVE[s2][t2])
    if found:
        return found
    high, low = (a, b) if a > b else (b, a)
    return singles[high] or singles[low]


def _doubles_contact(
    me: int, occupied: list[int], blocked: int, blots: int, die: int
) -> dict[int, _Path]:
    """A double with nothing on the bar and four or more checkers outside home.

    No checker can bear off within four moves, so a checker on point ``s`` can move
    exactly when ``s - die`` is a point that is not blocked; that set is fixed for the
    whole play. The search is :func:`_doubles`' (sources from the highest down), but
    it only ever looks at checkers that can move. ``occupied`` is descending.
    """
    unit = UNIT
    hit = _HIT
    move = _MOVE
    shift = SHIFT
    movable = 0
    for dst in range(1, 25 - die):
        if not (blocked >> dst) & 1:
            movable |= 1 << (dst + die)
    found: dict[int, _Path] = {}
    best = 0
    start = [s for s in occupied if (movable >> s) & 1]  # descending

    def search(m: int, hits: int, sources: list[int], path: _Path) -> None:
        nonlocal best, found
        depth = len(path)
        if depth == 3 and sources:
            # The fourth move ends every branch: record the results directly.
            if best < 4:
                best = 4
                found = {}
            for src in sources:
                dst = src - die
                found[(m - unit[src] + unit[dst]) | hits | (blots & hit[dst])] = (
                    *path,
                    move[src][dst],
                )
        elif sources:
            for i, src in enumerate(sources):
                dst = src - die
                after = m - unit[src] + unit[dst]
                below = sources[i:] if (after >> shift[src]) & 15 else sources[i + 1 :]
                if (movable >> dst) & 1 and not (m >> shift[dst]) & 15:
                    j = 0
                    while j < len(below) and below[j] > dst:
                        j += 1
                    below = [*below[:j], dst, *below[j:]]
                search(after, hits | (blots & hit[dst]), below, (*path, move[src][dst]))
        elif depth >= best:
            if depth > best:
                best = depth
                found = {}
            found[m | hits] = path

    if start:
        search(me, 0, start, ())
    return found


def _doubles(me: int, occupied: list[int], blocked: int, blots: int, die: int) -> dict[int, _Path]:
    """A double: up to four moves of ``die``, as many as possible.

    Any legal order can be rearranged to take sources from the highest down (entering
    from the bar comes first, a checker moved twice moves from higher to lower, and
    checkers come home before anything bears off), so only non-increasing source
    sequences are searched, depth first; each such sequence reaches a different
    result. ``occupied`` is ascending; each stack entry carries the sources still
    allowed (occupied and not above the last source).
    """
    unit = UNIT
    hit = _HIT
    move = _MOVE
    shift = SHIFT
    found: dict[int, _Path] = {}
    best = 0
    enter = 25 - die
    stack: list[tuple[int, int, list[int], _Path]] = [(me, 0, occupied, ())]
    pop = stack.pop
    push = stack.append
    while stack:
        m, hits, sources, path = pop()
        extended = False
        if len(path) < 4:
            if m >> _BAR_SHIFT:
                if not (blocked >> enter) & 1:
                    extended = True
                    after = m - unit[BAR] + unit[enter]
                    below = sources if after >> _BAR_SHIFT else sources[:-1]
                    if not (m >> shift[enter]) & 15:
                        below = below.copy()
                        insort(below, enter)
                    push((after, hits | (blots & hit[enter]), below, (*path, move[BAR][enter])))
            else:
                home = not m >> _HOME_SHIFT
                for i, src in enumerate(sources):
                    dst = src - die
                    if dst >= 1:
                        if (blocked >> dst) & 1:
                            continue
                    elif not home or (dst < 0 and m >> shift[src + 1]):
                        continue
                    else:
                        dst = OFF
                    extended = True
                    after = m - unit[src] + unit[dst]
                    below = sources[: i + 1] if (after >> shift[src]) & 15 else sources[:i]
                    if dst and not (m >> shift[dst]) & 15:
                        insort(below, dst)
                    push((after, hits | (blots & hit[dst]), below, (*path, move[src][dst])))
        if not extended and len(path) >= best:
            if len(path) > best:
                best = len(path)
                found = {}
            if path:
                found[m | hits] = path
    return found
