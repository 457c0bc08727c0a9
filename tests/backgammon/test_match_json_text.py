"""``Match.to_json_text``: the compact JSON of ``to_json()``, from cached event texts.

The cache (docs/performance.md §2) must never serve stale text. Match itself only
appends events and starts new lists, but the record and the history are plain public
lists: these tests change them from outside in every way the cache checks for (another
list, a shorter one, a longer one, a different last event, new options) and expect the
text to follow.
"""

from __future__ import annotations

import json
import random

from backgammon.dice import SeededDice
from backgammon.events import ResignationRejected, TurnPassed
from backgammon.match import Action, Match, MatchOptions


def full_text(match: Match) -> str:
    """What ``to_json_text`` must equal."""
    return json.dumps(match.to_json(), separators=(",", ":"))


def played(seed: int, games: int, options: MatchOptions | None = None) -> Match:
    """A match with ``games`` finished games and a game under way, by random play; the
    text is taken after every action so the cache is warm."""
    rng = random.Random(seed)
    match = Match(options or MatchOptions(length=0), SeededDice(seed))
    while len(match.history) < games or len(match.record) < 6:
        player = match.to_act
        if player is None:
            match.start_game()
        elif Action.MOVE in match.allowed(player):
            match.move(player, rng.choice(match.legal_plays()).moves)
        elif Action.ROLL in match.allowed(player) and rng.random() < 0.97:
            match.roll(player)
        elif Action.TAKE in match.allowed(player):
            match.drop(player)
        else:
            match.double(player)
        assert match.to_json_text() == full_text(match)
    return match


def test_the_text_is_the_compact_dump_and_loads_back() -> None:
    match = played(1, 3)
    text = match.to_json_text()
    assert text == full_text(match)
    restored = Match.from_json(json.loads(text), SeededDice(1))
    assert restored.to_json_text() == text


def test_a_fresh_match_and_a_restored_one() -> None:
    match = Match(MatchOptions(length=5), SeededDice(2))
    assert match.to_json_text() == full_text(match)
    restored = Match.from_json(json.loads(full_text(played(2, 2))), SeededDice(2))
    assert restored.to_json_text() == full_text(restored)


def test_a_replaced_or_shortened_history_is_serialized_again() -> None:
    match = played(3, 4)
    match.history = match.history[1:]
    assert match.to_json_text() == full_text(match)
    match.history = [list(game) for game in reversed(match.history)]
    assert match.to_json_text() == full_text(match)
    del match.history[1]
    assert match.to_json_text() == full_text(match)
    match.history = []
    assert match.to_json_text() == full_text(match)


def test_a_finished_game_changed_in_place_is_serialized_again() -> None:
    match = played(4, 3)
    match.history[1].append(TurnPassed(0))  # longer
    assert match.to_json_text() == full_text(match)
    match.history[1][-1] = TurnPassed(1)  # same length, another last event
    assert match.to_json_text() == full_text(match)
    del match.history[0][-2:]  # shorter
    assert match.to_json_text() == full_text(match)


def test_a_changed_record_is_serialized_again() -> None:
    match = played(5, 1)
    del match.record[-1]
    assert match.to_json_text() == full_text(match)
    match.record[-1] = ResignationRejected(1)
    assert match.to_json_text() == full_text(match)
    match.record = [*match.record, TurnPassed(0)]  # another list, longer
    assert match.to_json_text() == full_text(match)
    match.record = match.record[:2] + [ResignationRejected(0)] * 10
    assert match.to_json_text() == full_text(match)
    match.record = []
    assert match.to_json_text() == full_text(match)


def test_new_options_are_serialized_again() -> None:
    match = played(6, 1)
    match.options = MatchOptions(length=0, jacoby=True, instant_redoubles=None)
    assert match.to_json_text() == full_text(match)


def test_games_that_end_between_two_texts() -> None:
    """Several games played without taking the text: the finished ones (one of them the
    record at the last text) are all serialized."""
    match = played(7, 1)
    rng = random.Random(7)
    for _ in range(3):
        games = len(match.history)
        while len(match.history) == games:
            player = match.to_act
            assert player is not None
            if Action.ROLL in match.allowed(player):
                match.roll(player)
            else:
                match.move(player, rng.choice(match.legal_plays()).moves)
        match.start_game()
    assert match.to_json_text() == full_text(match)
