"""Shared helpers for the chouette tests: seating a table in a known order, random play."""

from __future__ import annotations

import random
from collections.abc import Sequence

from backgammon.chouette import Chouette
from backgammon.chouette_settings import ChouetteSettings
from backgammon.chouette_snapshot import chouette_from_json, chouette_to_json
from backgammon.chouette_state import BOX, TEAM, ChouetteAction, ChouettePhase, Cube
from backgammon.dice import ScriptedDice
from backgammon.errors import ActionError, Refusal
from backgammon.events import WinKind
from backgammon.moves import Play, legal_plays

from .helpers import side


def draw_dice(count: int) -> list[int]:
    """Dice for the first draw that seat ``count`` players in the order they joined:
    pairs tie on 6, 5, 4, ... and each pair then rolls 2 against 1."""
    first = [6 - i // 2 for i in range(count)]
    return first + [2, 1] * (count // 2)


def seated(
    names: Sequence[str],
    dice: Sequence[int] = (),
    settings: ChouetteSettings | None = None,
) -> Chouette:
    """A table whose first draw seats ``names`` in order (the box, the captain, the
    line), before its first game; ``dice`` follow for the game (the opening roll's box
    die first)."""
    roller = ScriptedDice((*draw_dice(len(names)), *dice))
    table = Chouette(settings or ChouetteSettings(), roller)
    for name in names:
        table.join(name)
    return table


def started(
    names: Sequence[str],
    dice: Sequence[int],
    settings: ChouetteSettings | None = None,
) -> Chouette:
    """:func:`seated`, and its first game started (no box partner is offered)."""
    table = seated(names, dice, settings)
    table.start_game()
    assert table.phase is not ChouettePhase.WAITING
    return table


def team_on_roll(
    names: Sequence[str], dice: Sequence[int] = (), settings: ChouetteSettings | None = None
) -> Chouette:
    """A first game in which the box opened (3-1) and played: the team is on roll."""
    table = started(names, (3, 1, *dice), settings)
    play_first(table)
    assert table.turn == TEAM and table.phase is ChouettePhase.TURN
    return table


def box_on_roll(
    names: Sequence[str], dice: Sequence[int] = (), settings: ChouetteSettings | None = None
) -> Chouette:
    """A first game in which the team opened (3-1) and the captain played: the box is
    on roll."""
    table = started(names, (1, 3, *dice), settings)
    play_first(table)
    assert table.turn == BOX and table.phase is ChouettePhase.TURN
    return table


def phase(table: Chouette) -> ChouettePhase:
    """The table's phase, read anew (mypy keeps what an earlier ``assert`` narrowed)."""
    return table.phase


def play_first(table: Chouette) -> None:
    """The side with dice plays the first of its legal plays."""
    mover = table.mover()
    assert mover is not None
    table.move(mover, table.legal_plays()[0].moves)


def restored(
    table: Chouette,
    *,
    box: dict[int, int] | None = None,
    team: dict[int, int] | None = None,
    cubes: dict[str, Cube] | None = None,
    dice: Sequence[int] = (),
) -> Chouette:
    """The table through its JSON snapshot, with a hand-made board (``box`` and ``team``
    as ``{own point: checkers}``, the rest borne off) or cubes, and ``dice`` to come."""
    data = chouette_to_json(table)
    if box is not None and team is not None:
        data["position"] = [side(box), side(team)]
    for member, cube in (cubes or {}).items():
        index = [c[0] for c in data["cubes"]].index(member)
        data["cubes"][index] = [member, cube.value, cube.owner.value, cube.turned]
    return chouette_from_json(data, ScriptedDice(tuple(dice)))


class RandomPlayer:
    """Random play at a table: any action the rules allow, by anyone, with the table's
    own changes (presence, delegation, leaving, joining, timers) mixed in.

    Each checker play is one of :func:`backgammon.moves.legal_plays` for the position
    and the dice (the existing move generator), and :meth:`step` checks that the table's
    board became that play's result.
    """

    LEAVE_RATE = 0.004
    """The chance that a step is someone leaving during a game."""

    def __init__(self, table: Chouette, rng: random.Random) -> None:
        self.table = table
        self.rng = rng
        self.joined = len(table.players)

    def step(self) -> None:
        """One random action (or table change)."""
        table, rng = self.table, self.rng
        if table.phase is ChouettePhase.WAITING:
            self._between_games()
            return
        chance = rng.random()
        if chance < self.LEAVE_RATE:
            self._leave(rng.choice(table.players))
        elif chance < 0.03:
            self._presence(rng.choice(table.players))
        elif chance < 0.04:
            self._delegate()
        elif chance < 0.05:
            self._time_out()
        else:
            self._act()

    def _between_games(self) -> None:
        table, rng = self.table, self.rng
        for name in [n for n in sorted(table.absent) if rng.random() < 0.5]:
            table.set_present(name, True)
        if table.partner_offer is not None:
            if rng.random() < 0.2:
                table.time_out()  # declines for the candidate
            else:
                table.set_present(table.partner_offer, True)
                table.answer_partner(table.partner_offer, rng.random() < 0.5)
        elif rng.random() < 0.1 and len(table.players) > 2:
            self._leave(rng.choice(table.players))
        elif rng.random() < 0.2 or len(table.players) < 2:
            self._join()
        elif ChouetteAction.START_GAME in table.allowed(table.players[0]):
            table.start_game()

    def _join(self) -> None:
        if len(self.table.players) < 10:
            self.table.join(f"n{self.joined}")
            self.joined += 1

    def _leave(self, name: str) -> None:
        present = [n for n in self.table.players if self.table.at_table(n)]
        if len(present) > 2 and name in present:
            self.table.leave(name)

    def _presence(self, name: str) -> None:
        if self.table.at_table(name):
            self.table.set_present(name, name in self.table.absent)

    def _delegate(self) -> None:
        table = self.table
        line = [m for m in table.line if table.at_table(m) and m not in table.absent]
        if len(line) >= 2:
            member, proxy = self.rng.sample(line, 2)
            table.delegate(member, proxy if self.rng.random() < 0.8 else None)

    def _time_out(self) -> None:
        try:
            self.table.time_out()
        except ActionError as error:
            assert error.reason is Refusal.NO_DECISION

    def _act(self) -> None:
        table, rng = self.table, self.rng
        options = [
            (name, action)
            for name in table.players
            # In a fixed order: a set's order changes with the process's hash seed, and
            # a random choice from it would make each run of a seed a different game.
            for action in sorted(table.allowed(name), key=lambda a: a.value)
            if action is not ChouetteAction.START_GAME
        ]
        if not options:
            # Nobody present can act (an absent box or team): someone comes back, or
            # the timer decides.
            absent = sorted(table.absent)
            if absent:
                table.set_present(rng.choice(absent), True)
            else:
                self._time_out()
            return
        name, action = rng.choice(options)
        self._do(name, action)

    def _do(self, name: str, action: ChouetteAction) -> None:
        table, rng = self.table, self.rng
        if action is ChouetteAction.MOVE:
            assert table.dice is not None
            plays = legal_plays(table.position, table.turn, table.dice)
            play: Play = rng.choice(plays)
            table.move(name, play.moves)
            assert table.position == play.result
        elif action is ChouetteAction.ROLL:
            table.roll(name)
        elif action is ChouetteAction.DOUBLE:
            if rng.random() < 0.3:
                table.double(name, rng.choice(table.doubles_for(name)))
            elif table.mover() == name:
                table.roll(name)
        elif action is ChouetteAction.BOX_DOUBLE:
            if rng.random() < 0.2:
                self._box_double(name)
            else:
                table.roll(name)
        elif action is ChouetteAction.ANSWER_DOUBLES:
            self._answer_doubles(name)
        elif action in (ChouetteAction.TAKE, ChouetteAction.DROP, ChouetteAction.BEAVER):
            member = rng.choice(table.answers_for(name))
            getattr(table, action.value)(name, member)
        elif action is ChouetteAction.RACCOON:
            beavered = table.raccoons_possible()
            table.raccoon(name, [m for m in beavered if rng.random() < 0.5])
        elif action is ChouetteAction.AUTO_DOUBLE:
            table.auto_double(name, rng.random() < 0.5)
        elif action is ChouetteAction.RESIGN:
            if rng.random() < 0.03:
                self._resign(name)
        elif action is ChouetteAction.ACCEPT_RESIGNATION:
            if rng.random() < 0.5:
                table.accept_resignation(name)
            else:
                table.reject_resignation(name)

    def _box_double(self, box: str) -> None:
        table, rng = self.table, self.rng
        turnable = table.box_may_double()
        chosen = [m for m in turnable if rng.random() < 0.6] or list(turnable)
        try:
            table.box_double(box, chosen)
        except ActionError as error:
            assert error.reason in (Refusal.SINGLE_CUBE, Refusal.BOX_DOUBLE_NEEDS_CAPTAIN)
            table.box_double(box)

    def _answer_doubles(self, box: str) -> None:
        table, rng = self.table, self.rng
        accepted = [m for m in table.team_doubles if rng.random() < 0.6]
        try:
            table.answer_doubles(box, accepted)
        except ActionError as error:
            assert error.reason in (Refusal.SINGLE_CUBE, Refusal.BOX_MUST_ACCEPT_HALF)
            table.answer_doubles(box, table.team_doubles if rng.random() < 0.5 else ())

    def _resign(self, name: str) -> None:
        table, rng = self.table, self.rng
        kind = rng.choice(list(WinKind))
        if name == table.box:
            members = [m for m in table.members_in_game() if table.at_table(m)]
            members = [m for m in members if m not in table.absent]
            if members:
                table.resign(name, rng.choice(members), kind)
        else:
            table.resign(name, name, kind)
