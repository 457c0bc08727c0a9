"""``backgammon.snapshot.match_to_json_text``: the compact JSON of ``match_to_json``,
whole or the state alone.

The server stores the whole text as a finished match's record, and the state alone
(``events=False``) after every action of a running match, whose events it keeps as rows
(docs/database.md). Both must be exactly the compact dump of ``match_to_json``, the
second with the record and the history left empty.
"""

from __future__ import annotations

import json
import random

from backgammon.dice import SeededDice
from backgammon.match import Action, Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json, match_to_json_text


def full_text(match: Match) -> str:
    """What ``match_to_json_text`` must equal."""
    return json.dumps(match_to_json(match), separators=(",", ":"))


def state_text(match: Match) -> str:
    """What ``match_to_json_text(match, events=False)`` must equal."""
    return json.dumps({**match_to_json(match), "record": [], "history": []}, separators=(",", ":"))


def played(seed: int, games: int, options: MatchOptions | None = None) -> Match:
    """A match with ``games`` finished games and a game under way, by random play; both
    texts are checked after every action."""
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
        assert match_to_json_text(match) == full_text(match)
        assert match_to_json_text(match, events=False) == state_text(match)
    return match


def test_the_text_is_the_compact_dump_and_loads_back() -> None:
    match = played(1, 3)
    text = match_to_json_text(match)
    assert text == full_text(match)
    restored = match_from_json(json.loads(text), SeededDice(1))
    assert match_to_json_text(restored) == text
    assert match_to_json_text(restored, events=False) == match_to_json_text(match, events=False)


def test_a_fresh_match_and_a_restored_one() -> None:
    match = Match(MatchOptions(length=5), SeededDice(2))
    assert match_to_json_text(match) == full_text(match)
    assert match_to_json_text(match, events=False) == state_text(match)
    restored = match_from_json(json.loads(full_text(played(2, 2))), SeededDice(2))
    assert match_to_json_text(restored) == full_text(restored)
    assert match_to_json_text(restored, events=False) == state_text(restored)


def test_new_options_are_in_the_state_text() -> None:
    match = played(6, 1)
    assert match_to_json_text(match, events=False) == state_text(match)
    match.options = MatchOptions(length=0, jacoby=True, instant_redoubles=None)
    assert match_to_json_text(match, events=False) == state_text(match)
    assert '"jacoby":true' in match_to_json_text(match, events=False)


def test_equal_options_of_other_json_are_not_mixed_up() -> None:
    """The state text reuses the options' JSON data per options object, not per equal
    value: ``1 == True``, but they are different JSON."""
    first = Match(MatchOptions(length=0, jacoby=True), SeededDice(3))
    second = Match(MatchOptions(length=0, jacoby=1), SeededDice(3))  # type: ignore[arg-type]
    assert first.options == second.options
    assert match_to_json_text(first, events=False) == state_text(first)
    assert match_to_json_text(second, events=False) == state_text(second)
    assert '"jacoby":1' in match_to_json_text(second, events=False)
