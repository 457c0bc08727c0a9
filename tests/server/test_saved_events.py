"""A running match is saved as its state plus the events of each action, appended as rows.

:meth:`LiveMatch.next_save` writes the state and only the events the database lacks;
:func:`whole_snapshot` puts state and rows back together. Whatever the match goes
through (new games, cube actions, resignations, several actions between two saves, a
save that failed or whose outcome is unknown, a resume from the database), the stored
match read back must be the whole match, and a save after the first must write only
what is new. Matches stored whole before the change still load.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from backgammon.dice import SeededDice
from backgammon.errors import SnapshotError
from backgammon.match import Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json
from db.records import SavedEvents, SavedMatch
from db.repository import Database
from server.tables.matches import LiveMatch, MatchSave, whole_snapshot
from tests.conftest import DbTarget
from tests.server.random_match import OPTIONS, random_action


class FakeStore:
    """The database's side of saves (Database.save_match, load_match), kept in memory."""

    def __init__(self, names: tuple[str, str]) -> None:
        self.pair = sorted(names)
        self.state = ""
        self.rows: dict[tuple[int, int], str] = {}

    def apply(self, save: MatchSave) -> None:
        if not save.append:
            self.rows.clear()
        for row in save.events:
            key = (row.game, row.first_event)
            assert key not in self.rows, "an appended row is already stored"
            self.rows[key] = row.events
        self.state = save.state

    def saved_match(self) -> SavedMatch:
        events = tuple(SavedEvents(*key, text) for key, text in sorted(self.rows.items()))
        return SavedMatch("t", self.pair[0], self.pair[1], None, 0, 0, self.state, 0, events)


def save(
    live: LiveMatch, store: FakeStore, rng: random.Random, seen: Counter[str], *, known: bool
) -> bool:
    """One save, which now and then fails before or after reaching the store; whether its
    outcome is known. ``known``: the last save's was, so this one must append."""
    plan = live.next_save()
    assert plan.append == known
    seen["append" if plan.append else "replace"] += 1
    if plan.append:
        # Only what is new: each row continues its game where the store's rows end.
        for row in plan.events:
            stored = [k for k in store.rows if k[0] == row.game]
            ends = sum(len(json.loads(store.rows[k])) for k in stored)
            assert row.first_event == ends
    outcome = rng.random()
    if outcome < 0.03:  # failed: nothing stored
        live.save_unknown()
        seen["failed"] += 1
    elif outcome < 0.06:  # cancelled, but the write went on to its commit
        store.apply(plan)
        live.save_unknown()
        seen["unknown"] += 1
    else:
        store.apply(plan)
        live.saved(plan)
    if outcome >= 0.03:
        assert whole_snapshot(store.saved_match()) == json.loads(live.snapshot())
    return outcome >= 0.06


def play_and_save(options: MatchOptions, seed: int, seen: Counter[str]) -> None:
    rng = random.Random(seed)
    live = LiveMatch(
        ("bob", "alice"),
        Match(options, SeededDice(seed), o_player=seed % 2),
        started_at=1_700_000_000,
    )
    store = FakeStore(live.names)
    known = save(live, store, rng, seen, known=False)
    for _ in range(250):
        if not random_action(live.match, rng, (0.02, 0.3)[seed % 2], seen):
            break
        if rng.random() < 0.1:  # several actions between two saves
            continue
        known = save(live, store, rng, seen, known=known)
        if rng.random() < 0.03:
            known = False
            # Resumed from the store, with new dice; its first save replaces every row.
            live = LiveMatch.from_saved(store.saved_match(), SeededDice(rng.randrange(1000)))
            assert live.snapshot() == json.dumps(
                whole_snapshot(store.saved_match()), separators=(",", ":")
            )
            seen["resumed"] += 1


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"length{o.length}")
def test_the_stored_match_is_the_whole_match_after_every_save(options: MatchOptions) -> None:
    seen: Counter[str] = Counter()
    for seed in range(12):
        play_and_save(options, seed, seen)
    assert seen["append"] > 5 * seen["replace"]
    assert seen["failed"] and seen["unknown"] and seen["resumed"] > 3
    # The random play went through every kind of event the rows must carry.
    if options.length != 1:
        assert seen["start_game"] > 12
    for action in ("double", "take", "drop", "resign", "accept_resignation"):
        assert seen[action], action
    if options.length == 0:
        assert seen["redouble"] and seen["reject_resignation"]


def test_a_save_writes_only_the_last_actions_events() -> None:
    """However long the match, a save writes the state and the new events only."""
    rng = random.Random(5)
    live = LiveMatch(
        ("amy", "zed"), Match(MatchOptions(length=7), SeededDice(5)), started_at=1_700_000_000
    )
    live.saved(live.next_save())
    sizes: list[int] = []
    while random_action(live.match, rng, 0.01, Counter()):
        plan = live.next_save()
        assert plan.append
        sizes.append(len(plan.state) + sum(len(row.events) for row in plan.events))
        live.saved(plan)
    whole = len(live.snapshot())
    assert len(sizes) > 300 and whole > 40_000
    assert max(sizes) < 2_000, (max(sizes), whole)


def test_a_match_stored_whole_still_loads() -> None:
    """Saved matches stored before the events were rows (one text, no rows)."""
    live = LiveMatch(
        ("alice", "bob"), Match(MatchOptions(length=5), SeededDice(3)), started_at=1_700_000_000
    )
    rng = random.Random(3)
    for _ in range(150):
        random_action(live.match, rng, 0.05, Counter())
    text = live.snapshot()
    old = SavedMatch("t", "alice", "bob", 5, 0, 0, text, 0)
    assert whole_snapshot(old) == json.loads(text)
    again = LiveMatch.from_saved(old, SeededDice(4))
    assert again.snapshot() == text
    first = again.next_save()
    assert not first.append and sum(len(json.loads(r.events)) for r in first.events) == sum(
        len(game) for game in [*again.match.history, again.match.record]
    )


def _stored(live: LiveMatch) -> SavedMatch:
    store = FakeStore(live.names)
    store.apply(live.next_save())
    return store.saved_match()


@pytest.mark.parametrize(
    "damage",
    ["drop a row", "shift a row", "game out of range", "count", "games", "version", "json"],
)
def test_damaged_rows_are_refused(damage: str) -> None:
    live = LiveMatch(
        ("alice", "bob"), Match(MatchOptions(length=3), SeededDice(8)), started_at=1_700_000_000
    )
    rng = random.Random(8)
    while live.match.game < 2:
        random_action(live.match, rng, 0.3, Counter())
    saved = _stored(live)
    events = list(saved.events)
    state = json.loads(saved.snapshot)
    assert len(events) >= 2
    if damage == "drop a row":
        del events[0]
    elif damage == "shift a row":
        events[-1] = SavedEvents(events[-1].game, events[-1].first_event + 1, events[-1].events)
    elif damage == "game out of range":
        events.append(SavedEvents(state["games"] + 1, 0, "[]"))
    elif damage == "count":
        state["events"] += 1
    elif damage == "games":
        state["games"] = -1
    elif damage == "version":
        state["version"] = 3
    text = json.dumps(state) if damage != "json" else saved.snapshot[:-1]
    broken = SavedMatch("t", "alice", "bob", 3, 0, 0, text, 0, tuple(events))
    with pytest.raises(SnapshotError):
        whole_snapshot(broken)
    with pytest.raises(SnapshotError):
        LiveMatch.from_saved(broken, SeededDice(1))


@pytest.fixture
async def database(db_target: DbTarget) -> AsyncIterator[Database]:
    database = await db_target.open()
    try:
        for name in ("alice", "bob"):
            await database.create_user(name, "h")
        yield database
    finally:
        await database.close()


async def test_saves_through_the_database_read_back_whole(database: Database) -> None:
    """The same through Database.save_match and load_match, on each back end."""
    rng = random.Random(11)
    live = LiveMatch(
        ("bob", "alice"), Match(MatchOptions(length=3), SeededDice(11)), started_at=1_700_000_000
    )
    saves = 0
    while random_action(live.match, rng, 0.05, Counter()) and saves < 120:
        plan = live.next_save()
        await database.save_match(
            live.table_id,
            *live.names,
            plan.state,
            match_length=live.length,
            score_a=live.match.score[0],
            score_b=live.match.score[1],
            events=plan.events,
            append=plan.append,
        )
        live.saved(plan)
        saves += 1
        if saves % 10 == 0:
            saved = await database.load_match("alice", "bob")
            assert saved is not None
            assert whole_snapshot(saved) == json.loads(live.snapshot())
            live = LiveMatch.from_saved(saved, SeededDice(saves))
    assert saves >= 100


def test_the_snapshot_loads_back_as_the_same_match() -> None:
    live = LiveMatch(
        ("alice", "bob"), Match(MatchOptions(length=5), SeededDice(3)), started_at=1_700_000_000
    )
    rng = random.Random(3)
    for _ in range(200):
        if not random_action(live.match, rng, 0.05, Counter()):
            break
    data = json.loads(live.snapshot())
    assert list(data) == ["version", "players", "started_at", "match"]
    restored = match_from_json(data["match"], SeededDice(3))
    assert match_to_json(restored) == match_to_json(live.match)
