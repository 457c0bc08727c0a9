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
import typing

from backgammon.dice import SeededDice
from backgammon.events import Event, event_to_json, events_json_text
from backgammon.match import Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json, match_to_json_text
from tests.backgammon.helpers import random_action


def full_text(match: Match) -> str:
    """What ``match_to_json_text`` must equal."""
    return json.dumps(match_to_json(match), separators=(",", ":"))


def state_text(match: Match) -> str:
    """What ``match_to_json_text(match, events=False)`` must equal."""
    return json.dumps({**match_to_json(match), "record": [], "history": []}, separators=(",", ":"))


def played(seed: int, games: int, options: MatchOptions | None = None) -> Match:
    """A match with ``games`` finished games and a game under way (or over, if it ends
    sooner), by random play that makes every kind of event (doubles, redoubles, takes,
    drops, resignations offered, accepted and rejected); both texts are checked after
    every action."""
    rng = random.Random(seed)
    match = Match(options or MatchOptions(length=0, instant_redoubles=None), SeededDice(seed))
    while len(match.history) < games or len(match.record) < 6:
        if not random_action(match, rng):
            break
        assert match_to_json_text(match) == full_text(match)
        assert match_to_json_text(match, events=False) == state_text(match)
    return match


def test_random_play_makes_every_kind_of_event() -> None:
    """:func:`played` covers every event type, and each one's text is exactly the compact
    dump of :func:`event_to_json`'s dict, alone and in a list."""
    seen: set[type] = set()
    unlimited = MatchOptions(length=0, instant_redoubles=None, auto_doubles=1)
    for seed in range(4):
        match = played(seed, 8, unlimited if seed % 2 else MatchOptions(length=3))
        for event in [*match.record, *(e for game in match.history for e in game)]:
            seen.add(type(event))
            dump = json.dumps([event_to_json(event)], separators=(",", ":"))
            assert events_json_text([event]) == dump
    assert seen == set(typing.get_args(Event))


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
