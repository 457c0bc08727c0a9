"""The stored match snapshot is built incrementally but is the same text as before.

:meth:`LiveMatch.snapshot` keeps the JSON text of every event and finished game it has
serialized (docs/performance.md §2). Whatever the match goes through — new games, cube
offers taken, dropped and redoubled, resignations offered, refused and accepted, a
resume from the stored text, several actions between two snapshots — the text must be
byte for byte the full serialization the server stored before the change, so every
stored match still loads and every new one loads in an older server.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from backgammon.dice import SeededDice
from backgammon.events import WinKind
from backgammon.match import Action, Match, MatchOptions
from db.records import SavedMatch
from server.matches import LiveMatch


def random_action(match: Match, rng: random.Random, cube_rate: float, seen: Counter[str]) -> bool:
    """Make one random allowed action (or start the next game); False when the match is
    over. ``cube_rate`` is how often a cube or resignation action is chosen when a roll
    or a move is also possible: low values give long games, high ones many short ones.
    """
    player = match.to_act
    if player is None:
        if Action.START_GAME not in match.allowed(0):
            return False
        match.start_game()
        seen["start_game"] += 1
        return True
    allowed = sorted(match.allowed(player), key=lambda a: a.value)
    plain: list[Action] = [a for a in allowed if a in (Action.ROLL, Action.MOVE)]
    action = rng.choice(plain) if plain and rng.random() >= cube_rate else rng.choice(allowed)
    seen[action.value] += 1
    if action is Action.MOVE:
        match.move(player, rng.choice(match.legal_plays()).moves)
    elif action is Action.RESIGN:
        match.resign(player, rng.choice(list(WinKind)))
    else:
        getattr(match, action.value)(player)
    return True


def resumed(live: LiveMatch, seed: int) -> LiveMatch:
    """The match as the server resumes it: from the stored text, with new dice."""
    text = live.snapshot()
    first, second = sorted(live.names)
    saved = SavedMatch(
        player1=first,
        player2=second,
        match_length=live.length,
        score1=live.match.score[live.names.index(first)],
        score2=live.match.score[live.names.index(second)],
        snapshot=text,
        updated_at=0,
    )
    again = LiveMatch.from_saved(saved, SeededDice(seed))
    assert again.snapshot() == text
    return again


def play_and_check(
    options: MatchOptions, seed: int, *, cube_rate: float, max_actions: int, seen: Counter[str]
) -> None:
    """Play one random match; compare the snapshot with the full text as it goes."""
    rng = random.Random(seed)
    live = LiveMatch(("alice", "bob"), Match(options, SeededDice(seed), o_player=seed % 2))
    live.started_at = 1_700_000_000 + seed
    for _ in range(max_actions):
        games = live.match.game
        if not random_action(live.match, rng, cube_rate, seen):
            break
        # Now and then let several actions pass unsaved (a game may end and the next
        # begin in between), as when a snapshot is not taken after every change.
        if rng.random() < 0.1:
            seen["skipped"] += 1
            if live.match.game != games:
                seen["skipped_new_game"] += 1
            continue
        assert live.snapshot() == live.full_snapshot()
        if rng.random() < 0.03:
            live = resumed(live, seed + rng.randrange(1000))
            seen["resumed"] += 1
            assert live.snapshot() == live.full_snapshot()
    assert live.snapshot() == live.full_snapshot()


OPTIONS = [
    MatchOptions(length=1),
    MatchOptions(length=3),
    MatchOptions(length=5, holland=True),
    MatchOptions(length=7, crawford=False, cube_limit=4),
    MatchOptions(length=0, instant_redoubles=None, auto_doubles=2),
    MatchOptions(length=0, jacoby=True, instant_redoubles=1, cube_limit=16),
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"length{o.length}")
def test_snapshot_is_the_full_serialization_after_every_action(options: MatchOptions) -> None:
    seen: Counter[str] = Counter()
    for seed in range(16):
        play_and_check(options, seed, cube_rate=(0.02, 0.3)[seed % 2], max_actions=200, seen=seen)
    # The random play went through what the cache must survive.
    assert seen["resumed"] > 5
    if options.length != 1:
        assert seen["start_game"] > 16 and seen["skipped_new_game"]
    for action in ("double", "take", "drop", "resign", "accept_resignation"):
        assert seen[action], action
    if options.length == 0:
        assert seen["redouble"] and seen["reject_resignation"]


def test_a_long_match_resumed_many_times() -> None:
    """A 7-point match with long games and a restore every few actions."""
    seen: Counter[str] = Counter()
    rng = random.Random(7)
    live = LiveMatch(("zed", "amy"), Match(MatchOptions(length=7), SeededDice(7)))
    while random_action(live.match, rng, 0.01, seen):
        assert live.snapshot() == live.full_snapshot()
        if rng.random() < 0.1:
            live = resumed(live, rng.randrange(10_000))
    assert live.match.phase.value == "match_over" and seen["start_game"] > 3
    assert live.snapshot() == live.full_snapshot()


def test_the_snapshot_loads_back_as_the_same_match() -> None:
    live = LiveMatch(("alice", "bob"), Match(MatchOptions(length=5), SeededDice(3)))
    rng = random.Random(3)
    for _ in range(200):
        if not random_action(live.match, rng, 0.05, Counter()):
            break
    data = json.loads(live.snapshot())
    assert list(data) == ["version", "players", "started_at", "match"]
    restored = Match.from_json(data["match"], SeededDice(3))
    assert restored.to_json() == live.match.to_json()
