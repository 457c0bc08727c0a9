"""``Match.to_json_text``: the compact JSON of ``to_json()``, whole or the state alone.

The server stores the whole text as a finished match's record, and the state alone
(``events=False``) after every action of a running match, whose events it keeps as rows
(docs/database.md). Both must be exactly the compact dump of ``to_json()``, the second
with the record and the history left empty.
"""

from __future__ import annotations

import json
import random

from backgammon.dice import SeededDice
from backgammon.match import Action, Match, MatchOptions


def full_text(match: Match) -> str:
    """What ``to_json_text`` must equal."""
    return json.dumps(match.to_json(), separators=(",", ":"))


def state_text(match: Match) -> str:
    """What ``to_json_text(events=False)`` must equal."""
    return json.dumps({**match.to_json(), "record": [], "history": []}, separators=(",", ":"))


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
        assert match.to_json_text() == full_text(match)
        assert match.to_json_text(events=False) == state_text(match)
    return match


def test_the_text_is_the_compact_dump_and_loads_back() -> None:
    match = played(1, 3)
    text = match.to_json_text()
    assert text == full_text(match)
    restored = Match.from_json(json.loads(text), SeededDice(1))
    assert restored.to_json_text() == text
    assert restored.to_json_text(events=False) == match.to_json_text(events=False)


def test_a_fresh_match_and_a_restored_one() -> None:
    match = Match(MatchOptions(length=5), SeededDice(2))
    assert match.to_json_text() == full_text(match)
    assert match.to_json_text(events=False) == state_text(match)
    restored = Match.from_json(json.loads(full_text(played(2, 2))), SeededDice(2))
    assert restored.to_json_text() == full_text(restored)
    assert restored.to_json_text(events=False) == state_text(restored)


def test_new_options_are_in_the_state_text() -> None:
    match = played(6, 1)
    assert match.to_json_text(events=False) == state_text(match)
    match.options = MatchOptions(length=0, jacoby=True, instant_redoubles=None)
    assert match.to_json_text(events=False) == state_text(match)
    assert '"jacoby":true' in match.to_json_text(events=False)
