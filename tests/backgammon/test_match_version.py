"""``Match.version``: counts the actions that changed a match, and nothing else."""

from __future__ import annotations

import pytest

from backgammon.dice import SeededDice
from backgammon.errors import ActionError
from backgammon.match import Match, MatchOptions


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
    restored = Match.from_json(match.to_json(), SeededDice(5))
    assert (restored.version, match.version) == (0, 1)
    assert restored.to_json() == match.to_json()
    assert restored.to_json_text() == match.to_json_text()
