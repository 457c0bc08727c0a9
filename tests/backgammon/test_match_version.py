"""``Match.version``: counts the actions that changed a match, and nothing else."""

from __future__ import annotations

import pytest

from backgammon.dice import SeededDice
from backgammon.errors import ActionError
from backgammon.match import Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json, match_to_json_text


def test_every_action_that_changes_the_match_counts_once() -> None:
    match = Match(MatchOptions(length=3), SeededDice(5))
    assert match.version == 0
    match.start_game()
    assert match.version == 1
    mover = match.to_act
    assert mover is not None
    version = match.version
    with pytest.raises(ActionError):
        match.roll(mover)  # refused: the dice are out, nothing changes
    assert match.version == version
    match.move(mover, match.legal_plays()[0].moves)
    assert match.version == version + 1


def test_the_version_is_not_part_of_the_snapshot() -> None:
    match = Match(MatchOptions(length=3), SeededDice(5))
    match.start_game()
    restored = match_from_json(match_to_json(match), SeededDice(5))
    assert (restored.version, match.version) == (0, 1)
    assert match_to_json(restored) == match_to_json(match)
    assert match_to_json_text(restored) == match_to_json_text(match)
