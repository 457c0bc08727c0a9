"""Property tests of the chouette (shared/docs/chouette-rules.md, cited as §n): random
tables of 2 to 10 players over many games, with random cube decisions, drops, beavers,
resignations, absences, delegations, time-outs, leaves and joins.

After every action: the totals sum to zero and equal the settlements announced; the
board is a legal position, and every checker play was one the existing move generator
made. After every game: the results are the settlements of that game and the seats
rotated as §5 and §7 say. At random moments: the JSON round trip gives the same table.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from backgammon.board import Position
from backgammon.chouette import Chouette
from backgammon.chouette_events import (
    ChouetteEvent,
    ChouetteGameFinished,
    ChouetteGameStarted,
    CubeSettled,
    PartnerShare,
    PlayerJoined,
    PlayerLeft,
    SeatsChanged,
)
from backgammon.chouette_settings import (
    AutoDoubles,
    BoxPartner,
    ChouetteSettings,
    Consultation,
    CubeMode,
    InitialDoubles,
    Leaving,
    LoneTaker,
    Rotation,
)
from backgammon.chouette_snapshot import chouette_from_json, chouette_to_json
from backgammon.chouette_state import ChouettePhase
from backgammon.dice import SeededDice

from .chouette_helpers import RandomPlayer


@st.composite
def table_settings(draw: st.DrawFn) -> ChouetteSettings:
    """Any settings a table may open with."""
    cubes = draw(st.sampled_from(CubeMode))
    multiple = cubes is CubeMode.MULTIPLE
    beavers = multiple and draw(st.booleans())
    return ChouetteSettings(
        cubes=cubes,
        initial_doubles=draw(st.sampled_from(InitialDoubles)),
        box_double_takes_captain=multiple and draw(st.booleans()),
        beavers=beavers,
        raccoons=beavers and draw(st.booleans()),
        lone_taker=draw(st.sampled_from(LoneTaker)) if multiple else LoneTaker.NOTHING,
        auto_doubles=draw(st.sampled_from(AutoDoubles)),
        jacoby=draw(st.booleans()),
        rotation=draw(st.sampled_from(Rotation)),
        consultation=draw(st.sampled_from(Consultation)),
        box_partner=draw(st.sampled_from(BoxPartner)),
        leaving=draw(st.sampled_from(Leaving)),
        box_timeout_accepts=draw(st.booleans()),
    )


@dataclass
class GameWatch:
    """What one game's events said, to check its end against the rules."""

    box: str
    partner: str | None
    line: tuple[str, ...]
    settled: dict[str, int] = field(default_factory=dict)
    left: set[str] = field(default_factory=set)
    joined: list[str] = field(default_factory=list)


def expected_seats(
    game: GameWatch, end: ChouetteGameFinished, rotation: Rotation
) -> tuple[str, str | None, tuple[str, ...]]:
    """§5 and §7 as the rules state them, then the leavers gone (an empty box is taken as
    when the box goes) and the newcomers at the bottom."""
    captain = game.line[0]
    if game.box in game.left:
        stays = False
    elif rotation is Rotation.KIT:
        stays = game.settled[captain] < 0  # the box beat the captain
    else:
        stays = end.box_net >= 0
    assert end.box_stays == stays
    if stays:
        box, partner, line = game.box, game.partner, [*game.line[1:], captain]
    else:
        extra = [game.partner] if game.partner else []
        box, partner, line = captain, None, [*extra, *game.line[1:], game.box]
    line = [n for n in line if n not in game.left]
    partner = None if partner in game.left else partner
    if box in game.left:
        if partner is not None:
            line.insert(1, partner)
            partner = None
        box, line = line[0], line[1:]
    return box, partner, (*line, *game.joined)


class Referee:
    """Checks a table after every action against the events it announced."""

    def __init__(self, table: Chouette) -> None:
        self.table = table
        self.ledger: Counter[str] = Counter()
        self.game: GameWatch | None = None
        self.end: ChouetteGameFinished | None = None
        self.games = 0
        self.seen: set[type] = set()

    def check(self, events: list[ChouetteEvent]) -> None:
        table = self.table
        for event in events:
            self.seen.add(type(event))
            self._follow(event)
        assert sum(table.totals.values()) == 0
        assert {n: t for n, t in table.totals.items() if t} == {
            n: t for n, t in self.ledger.items() if t
        }
        position = table.position
        assert Position.from_counts(position.counts(0), position.counts(1)) == position
        if table.phase is not ChouettePhase.WAITING:
            assert set(table.cubes) == set(table.line)

    def _follow(self, event: ChouetteEvent) -> None:
        table = self.table
        if isinstance(event, ChouetteGameStarted):
            assert self.end is None  # the last game's rotation was checked
            self.game = GameWatch(event.box, event.partner, event.line)
        elif isinstance(event, CubeSettled):
            assert self.game is not None
            self.game.settled[event.member] = event.points
            self.ledger[event.member] += event.points
            self.ledger[self.game.box] -= event.points
        elif isinstance(event, PartnerShare):
            assert self.game is not None and self.game.partner == event.partner
            self.ledger[event.partner] += event.points
            self.ledger[self.game.box] -= event.points
        elif isinstance(event, PlayerLeft) and self.game is not None:
            if event.mid_game:
                self.game.left.add(event.name)
            elif event.name in self.game.joined:  # a newcomer gone before being seated
                self.game.joined.remove(event.name)
        elif isinstance(event, PlayerJoined) and self.game is not None and not event.seated:
            self.game.joined.append(event.name)
        elif isinstance(event, ChouetteGameFinished):
            assert self.game is not None
            assert dict(event.results) == self.game.settled
            assert set(self.game.settled) == set(self.game.line)
            assert event.box_net == -sum(self.game.settled.values())
            self.games += 1
            self.end = event
        elif isinstance(event, SeatsChanged) and self.game is not None and self.end is not None:
            # The first seats after a game: the rotation.
            expected = expected_seats(self.game, self.end, table.settings.rotation)
            assert (event.box, event.partner, event.line) == expected
            self.game = self.end = None


def new_events(table: Chouette, games: int, record: int) -> list[ChouetteEvent]:
    """The events since the table had ``games`` finished games and ``record`` events in
    its record."""
    if len(table.history) == games:
        return table.record[record:]
    finished = [e for game in table.history[games + 1 :] for e in game]
    return [*table.history[games][record:], *finished, *table.record]


def play(table: Chouette, seed: int, games: int, round_trips: float) -> Referee:
    """Random play until ``games`` games ended, checking every action."""
    rng = random.Random(seed)
    player = RandomPlayer(table, rng)
    referee = Referee(table)
    for _ in range(40 * games * 60):
        if referee.games >= games:
            break
        games_before, record_before = len(table.history), len(table.record)
        player.step()
        referee.check(new_events(table, games_before, record_before))
        if rng.random() < round_trips:
            data = json.loads(json.dumps(chouette_to_json(table)))
            assert chouette_to_json(chouette_from_json(data, SeededDice(0))) == data
    assert referee.games >= games
    return referee


@settings(max_examples=30, deadline=None)
@given(table_settings(), st.integers(2, 10), st.integers(0, 10_000))
def test_random_chouettes_keep_the_rules(chosen: ChouetteSettings, players: int, seed: int) -> None:
    table = Chouette(chosen, SeededDice(seed))
    for i in range(players):
        table.join(f"p{i}")
    play(table, seed, games=4, round_trips=0.05)


def test_random_play_reaches_every_kind_of_event() -> None:
    """The random player makes every event the chouette has, so the properties above
    are checked on all of them."""
    from backgammon.chouette_events import CHOUETTE_EVENT_TYPES

    seen: set[type] = set()
    lively = ChouetteSettings(
        beavers=True,
        raccoons=True,
        lone_taker=LoneTaker.MANDATORY_BEAVER,
        auto_doubles=AutoDoubles.BOX_OPTION,
        box_partner=BoxPartner.OPTIONAL_AT_6,
    )
    for seed in range(10):
        table = Chouette(lively, SeededDice(seed))
        for i in range(7):
            table.join(f"p{i}")
        seen |= play(table, seed, games=5, round_trips=0.0).seen
    assert {cls.__name__ for cls in seen} == set(CHOUETTE_EVENT_TYPES)
