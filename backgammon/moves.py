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
the mover's packed side plus what its hits did to the opponent's side, so two plays
that differ only in a hit-and-run are different plays.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from itertools import repeat
from typing import NamedTuple

from backgammon.board import BAR, OFF, SHIFT, UNIT, Player, Position
from backgammon.dice import Roll

_HIT_SHIFT = 112
"""Where the hits start in a result key (above the mover's 104 packed bits)."""
_HIT_SIDE = 1 << _HIT_SHIFT
"""Result keys from here up are of plays that hit."""
_SIDE_MASK = _HIT_SIDE - 1
_HIT = (0, *((UNIT[BAR] - UNIT[25 - p]) << _HIT_SHIFT for p in range(1, 25)), 0)
"""A hit on each of the mover's points as it adds to a result key: what it adds to the
opponent's packed side (a checker from their point ``25 - p`` to their bar). Their sum
over the blots hit is positive and tells which blots were hit."""
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
_HELD = bytes.maketrans(b"0123456789abcdef", b"0111111111111111")
_BLOCKED = bytes.maketrans(b"0123456789abcdef", b"0011111111111111")
"""Hex digits of a packed side to binary ones: the index holds a checker / two or more."""


def _chunk_points(low: int) -> tuple[tuple[int, ...], ...]:
    """For each 9-bit mask, the points ``low + bit`` of its set bits, highest first."""
    return tuple(tuple(low + p for p in range(8, -1, -1) if (m >> p) & 1) for m in range(512))


_POINTS_HIGH = _chunk_points(18)
_POINTS_MIDDLE = _chunk_points(9)
_POINTS_LOW = _chunk_points(0)


class Move(NamedTuple):
    """One checker moved by one die, in the mover's own numbering (25 bar, 0 off)."""

    src: int
    dst: int

    @classmethod
    def of(cls, src: int, dst: int) -> Move:
        """The move from ``src`` to ``dst``: one shared instance per pair of indexes.

        A game keeps every move played in its record for minutes; shared instances made
        at import are not new objects for the garbage collector to scan
        (docs/performance.md §10).
        """
        if 0 <= src <= 25 and 0 <= dst <= 25:
            return _MOVE[src][dst]
        return cls(src, dst)


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
    new = tuple.__new__
    keys = found.keys()
    if not keys or max(keys) < _HIT_SIDE:
        # No hits: built with map and zip, so no Python code runs per play.
        sides = zip(keys, repeat(opp)) if player == 0 else zip(repeat(opp), keys)
        results: Iterable[Position] = map(new, repeat(Position), sides)
    elif player == 0:
        # Some play hits: split each key into the mover's side and what the hits
        # added to the opponent's.
        results = [new(Position, (k & _SIDE_MASK, opp + (k >> _HIT_SHIFT))) for k in keys]
    else:
        results = [new(Position, (opp + (k >> _HIT_SHIFT), k & _SIDE_MASK)) for k in keys]
    return list(map(new, repeat(Play), zip(found.values(), results, strict=True)))


class LegalResults(NamedTuple):
    """The legal plays of a roll in the compact form a match keeps for a turn: how many
    moves each play has, and the :func:`result_key` of each play's result.

    It holds no object per play. A turn lasts seconds, and every object alive that long
    is scanned by the garbage collector's young generation: the plays of 500 matches'
    turns were most of what its pauses scanned (docs/performance.md §10).
    """

    required: int
    keys: frozenset[int]


def legal_results(position: Position, player: Player, roll: Roll) -> LegalResults:
    """The :class:`LegalResults` of ``roll`` for ``player``."""
    found = _generate(position.packed(player), position.packed(1 - player), roll.d1, roll.d2)
    return LegalResults(_required(found), frozenset(found))


def result_key(position: Position, player: Player, result: Position) -> int:
    """The key of the play by ``player`` that turns ``position`` into ``result``: the
    mover's packed side plus what its hits added to the opponent's (see :data:`_HIT`)."""
    opponent = 1 - player
    return result.packed(player) + (
        (result.packed(opponent) - position.packed(opponent)) << _HIT_SHIFT
    )


def moves_required(position: Position, player: Player, roll: Roll) -> int:
    """How many checkers ``player`` must move with ``roll`` (0 when no move is possible)."""
    return _required(
        _generate(position.packed(player), position.packed(1 - player), roll.d1, roll.d2)
    )


def _required(found: dict[int, _Path]) -> int:
    """The number of moves of every play found (all have the same), 0 for none."""
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


def _points(mask: int) -> list[int]:
    """The points of the set bits of ``mask`` (bit ``p`` for point ``p``, up to 26),
    highest first."""
    return [*_POINTS_HIGH[mask >> 18], *_POINTS_MIDDLE[(mask >> 9) & 511], *_POINTS_LOW[mask & 511]]


def _generate(me: int, opp: int, d1: int, d2: int) -> dict[int, _Path]:
    """Map each distinct legal result key to one path that reaches it.

    A result key is the mover's packed side plus the sum of :data:`_HIT` over the
    blots hit (a blot is hit by the first checker that lands on it).
    """
    # In the 26-digit hex form of a packed side, digit ``j`` from the left is index
    # ``25 - j``. Read in base 2 after translating, the mover's digits give bit ``i``
    # for index ``i``. The opponent's index ``25 - p`` is the mover's point ``p``, so
    # their digit ``p`` from the left is the mover's point ``p``: reversed, it gives
    # bit ``p`` for point ``p``.
    held = int((b"%026x" % me).translate(_HELD), 2) & ~1  # bit p: a checker on p (1..25)
    digits = b"%026x" % opp
    blocked = int(digits[::-1].translate(_BLOCKED), 2)
    hits = [0] * 26  # what a checker landing on each point hits: blots are digits 1
    blot = digits.find(b"1")
    while blot >= 0:
        hits[blot] = _HIT[blot]
        blot = digits.find(b"1", blot + 1)
    outside = me >> _HOME_SHIFT
    if d1 == d2:
        if not me >> _BAR_SHIFT and _FEW_OUTSIDE.get(outside, False):
            return _doubles(me, _points(held)[::-1], blocked, hits, d1)
        return _doubles_contact(me, held, blocked, hits, d1)
    if outside and outside not in _ONE_OUTSIDE and not me >> _BAR_SHIFT:
        return _two_dice_contact(me, held, blocked, hits, d1, d2)
    return _two_dice_general(me, _points(held), blocked, hits, d1, d2)


def _two_dice_contact(
    me: int, held: int, blocked: int, hits: list[int], a: int, b: int
) -> dict[int, _Path]:
    """Two different dice, nothing on the bar and two or more checkers outside home.

    No bear-off can happen, so each die's single moves are independent of order:
    the two-checker plays are the pairs of single moves, plus one checker moving by
    both dice through either intermediate point. ``held`` has bit ``p`` for each
    point ``p`` with a checker; ``hits[p]`` is what landing on ``p`` hits.
    """
    unit = UNIT
    move = _MOVE
    # The points that can move by each die (the source is above the die, the
    # destination is not blocked), highest first.
    by_a = _points(held & ~(blocked << a) & (-2 << a))
    by_b = _points(held & ~(blocked << b) & (-2 << b))
    # Each move by b: its source, what it adds to a result key, the move.
    seconds = [(s, unit[s - b] - unit[s] + hits[s - b], move[s][s - b]) for s in by_b]
    found: dict[int, _Path] = {}
    for s1 in by_a:
        t1 = s1 - a
        hit1 = hits[t1]
        base = me - unit[s1] + unit[t1] + hit1
        first = move[s1][t1]
        pairs = seconds
        if hit1 and t1 + b in by_b:
            # A checker that lands there by b finds the blot already hit.
            i = by_b.index(t1 + b)
            s2, change, second = seconds[i]
            pairs = [*seconds[:i], (s2, change - hit1, second), *seconds[i + 1 :]]
        alone = s1 if (me >> SHIFT[s1]) & 15 == 1 else 0  # a lone checker moves once
        for s2, change, second in pairs:
            if s2 != alone:
                found[base + change] = (first, second)
        t2 = t1 - b
        if t2 >= 1 and not (blocked >> t2) & 1:
            found[me - unit[s1] + unit[t2] + hit1 + hits[t2]] = (first, move[t1][t2])
    for s1 in by_b:
        t1 = s1 - b
        t2 = t1 - a
        if t2 >= 1 and not (blocked >> t2) & 1:
            key = me - unit[s1] + unit[t2] + hits[t1] + hits[t2]
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
        found[me - unit[s] + unit[t] + hits[t]] = (move[s][t],)
    return found


def _step(me: int, src: int, die: int, blocked: int) -> int:
    """The destination of moving a checker of ``me`` from ``src`` by ``die``, or -1.

    Checks blocking and bearing-off rules; the caller knows ``src`` holds a checker
    and that nothing else is on the bar when ``src`` is not the bar.
    """
    dst = src - die
    if dst >= 1:
        return -1 if (blocked >> dst) & 1 else dst
    if me >> _HOME_SHIFT:
        return -1  # not all home
    if dst < 0 and me >> SHIFT[src + 1]:
        return -1  # a higher die bears off only from the highest point
    return OFF


def _two_dice_general(
    me: int, occupied: list[int], blocked: int, hits: list[int], a: int, b: int
) -> dict[int, _Path]:
    """Two different dice in any position (bar, bear-off): both orders, full checks.

    ``occupied`` is descending (the bar first).
    """
    unit = UNIT
    move = _MOVE
    found: dict[int, _Path] = {}
    singles: dict[int, dict[int, _Path]] = {a: {}, b: {}}
    # With a checker on the bar, only the bar can move.
    firsts = occupied[:1] if me >> _BAR_SHIFT else occupied
    for first, second in ((a, b), (b, a)):
        for s1 in firsts:
            t1 = _step(me, s1, first, blocked)
            if t1 < 0:
                continue
            m1 = me - unit[s1] + unit[t1]
            hit1 = hits[t1]
            first_move = move[s1][t1]
            singles[first][m1 + hit1] = (first_move,)
            if m1 >> _BAR_SHIFT:
                after = firsts
            else:
                after = occupied if (m1 >> SHIFT[s1]) & 15 else [s for s in occupied if s != s1]
                if t1 and t1 not in after:
                    after = [*after, t1]
            home = not m1 >> _HOME_SHIFT
            for s2 in after:
                # _step, written out: this loop is where the time goes.
                t2 = s2 - second
                if t2 >= 1:
                    if (blocked >> t2) & 1:
                        continue
                elif not home or (t2 < 0 and m1 >> SHIFT[s2 + 1]):
                    continue
                else:
                    t2 = OFF
                # A second checker landing on t1 finds the blot already hit.
                key = m1 - unit[s2] + unit[t2] + hit1 + (hits[t2] if t2 != t1 else 0)
                found[key] = (first_move, move[s2][t2])
    if found:
        return found
    high, low = (a, b) if a > b else (b, a)
    return singles[high] or singles[low]


def _doubles_contact(
    me: int, held: int, blocked: int, hits: list[int], die: int
) -> dict[int, _Path]:
    """A double where no checker can bear off within four moves: four or more checkers
    outside home, or some on the bar (one that enters needs three more moves to come
    home).

    The checkers on the bar enter first; after that, a checker on point ``s`` can move
    exactly when ``s - die`` is a point that is not blocked, a set fixed for the whole
    play. Like :func:`_doubles`, the search takes sources from the highest down, depth
    first, but as four nested loops over the points that can ever move (those holding
    a checker, and the unblocked points a moving checker can reach), so each level only
    checks that its source still holds a checker. Every such sequence of four moves
    reaches a different result. When no sequence plays all four dice,
    :func:`_doubles` finds the longest ones. ``held`` has bit ``p`` for each point
    ``p`` with a checker.
    """
    unit = UNIT
    move = _MOVE
    shift = SHIFT
    enter = 25 - die
    on_bar = min(me >> _BAR_SHIFT, 4)
    if on_bar and (blocked >> enter) & 1:
        return {}
    # The sources, highest first: (the index of the entry, so the next level starts
    # there; the source's nibble mask; what the move adds to a result key; the move).
    sources: list[tuple[int, int, int, Move]] = []
    reachable = 1 << enter if on_bar else 0
    for src in range(24, die, -1):
        dst = src - die
        if (blocked >> dst) & 1 or not ((held >> src) & 1 or (reachable >> src) & 1):
            continue
        reachable |= 1 << dst
        change = unit[dst] - unit[src] + hits[dst]
        sources.append((len(sources), 15 << shift[src], change, move[src][dst]))
    # The sources a move can follow, from each index on. Moving again from the same
    # point lands where the previous move did: a blot there is already hit.
    rest = [
        [(i, nibble, change - hits[step.dst], step), *sources[i + 1 :]]
        for i, nibble, change, step in sources
    ]
    firsts = sources
    if on_bar:
        # Each checker on the bar enters in turn (only the first can hit), then any
        # source can follow.
        change = unit[enter] - unit[BAR] + hits[enter]
        entries = [
            (len(rest) + j, 15 << _BAR_SHIFT, change - (hits[enter] if j else 0), move[BAR][enter])
            for j in range(on_bar)
        ]
        rest += [[entry] for entry in entries[1:]]
        rest.append(sources)
        firsts = entries[:1]
    found: dict[int, _Path] = {}
    for i1, nibble1, change1, move1 in firsts:
        if not me & nibble1:
            continue
        m1 = me + change1
        for i2, nibble2, change2, move2 in rest[i1]:
            if not m1 & nibble2:
                continue
            m2 = m1 + change2
            for i3, nibble3, change3, move3 in rest[i2]:
                if not m2 & nibble3:
                    continue
                m3 = m2 + change3
                for _, nibble4, change4, move4 in rest[i3]:
                    if m3 & nibble4:
                        found[m3 + change4] = (move1, move2, move3, move4)
    if found:
        return found
    return _doubles(me, _points(held)[::-1], blocked, hits, die)


def _doubles(
    me: int, occupied: list[int], blocked: int, hits: list[int], die: int
) -> dict[int, _Path]:
    """A double: up to four moves of ``die``, as many as possible.

    Any legal order can be rearranged to take sources from the highest down (entering
    from the bar comes first, a checker moved twice moves from higher to lower, and
    checkers come home before anything bears off), so only non-increasing source
    sequences are searched, depth first; each such sequence reaches a different
    result. ``occupied`` is ascending; each stack entry carries the sources still
    allowed (occupied and not above the last source). A checker landing where the
    mover has none is the first there, so it hits a blot there.
    """
    unit = UNIT
    move = _MOVE
    shift = SHIFT
    found: dict[int, _Path] = {}
    best = 0
    enter = 25 - die
    stack: list[tuple[int, int, list[int], _Path]] = [(me, 0, occupied, ())]
    pop = stack.pop
    push = stack.append
    while stack:
        m, hit, sources, path = pop()
        extended = False
        if len(path) < 4:
            if m >> _BAR_SHIFT:
                if not (blocked >> enter) & 1:
                    extended = True
                    after = m - unit[BAR] + unit[enter]
                    below = sources if after >> _BAR_SHIFT else sources[:-1]
                    landed = hit
                    if not (m >> shift[enter]) & 15:
                        below = below.copy()
                        insort(below, enter)
                        landed += hits[enter]
                    push((after, landed, below, (*path, move[BAR][enter])))
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
                    landed = hit
                    if dst and not (m >> shift[dst]) & 15:
                        insort(below, dst)
                        landed += hits[dst]
                    push((after, landed, below, (*path, move[src][dst])))
        if not extended and len(path) >= best:
            if len(path) > best:
                best = len(path)
                found = {}
            if path:
                found[m + hit] = path
    return found
