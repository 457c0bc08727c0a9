"""gnubg's analysis data read into ours, and stored and read back (protocol/analysis.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from backgammon.errors import SnapshotError
from protocol.analysis import (
    AnalysisError,
    Decision,
    analysis_from_json,
    analysis_to_json,
    format_gnubg_play,
    from_gnubg,
)


def _stats(unforced: int, skill: float, close: int, wrong_take: float, luck: float) -> Any:
    cube = {
        f"err-{k}-skill": 0.0
        for k in (
            "missed-double-below-cp",
            "missed-double-above-cp",
            "wrong-double-below-dp",
            "wrong-double-above-tg",
            "wrong-drop",
        )
    }
    cube["err-wrong-take-skill"] = wrong_take
    cube["close-cube"] = close
    cube["error-skill"] = wrong_take / close if close else 0.0  # gnubg's: per decision
    return {
        "moves": {"unforced-moves": unforced, "error-skill": skill},
        "cube": cube,
        "dice": {"luck": luck},
    }


def _move(player: str, dice: list[int], played: int, scores: list[float], **extra: Any) -> Any:
    moves = [{"move": [[24 - i, 20 - i]], "score": s} for i, s in enumerate(scores)]
    return {
        "action": "move",
        "player": player,
        "dice": dice,
        "move": moves[played]["move"],
        "analysis": {"moves": moves, "imove": played, **extra},
    }


GAME = [
    _move("O", [4, 1], 0, [0.1, 0.05]),
    _move("X", [6, 5], 1, [0.2, 0.05], skill="very bad"),  # a blunder of 0.15
    _move("O", [2, 1], 0, [0.3]),  # forced: one play
    # X doubles: ND 0.3, DT 1.2 (a pass), doubling is right; O takes, wrong by 0.2
    {"action": "double", "player": "X", "analysis": {"nd-eq": 0.3, "dt-eq": 1.2}},
    {"action": "take", "player": "O", "analysis": {"skill": "very bad"}},
    # before O's next roll: ND 0.5, DT 0.6, not doubling loses 0.1
    _move("O", [3, 3], 0, [0.1, 0.0], **{"nd-eq": 0.5, "dt-eq": 0.6, "cube-skill": "bad"}),
    # X doubles (judged); O's beaver and its answer are not
    {"action": "double", "player": "X", "analysis": {"nd-eq": 0.1, "dt-eq": 0.1}},
    {"action": "double", "player": "O", "analysis": {}},
    {"action": "take", "player": "X", "analysis": {}},
]


def gnubg_data() -> dict[str, Any]:
    x = _stats(1, 0.15, 1, 0.0, -0.5)
    o = _stats(2, 0.0, 2, 0.3, 0.5)
    return {
        "games": [{"game": GAME, "stats": {"X": x, "O": o}}],
        "stats": {"X": x, "O": o},
    }


def test_each_decision_is_read_with_gnubgs_equities() -> None:
    analysis = from_gnubg(gnubg_data(), ply=0)
    rounded = tuple(dataclasses.replace(d, loss=round(d.loss, 9)) for d in analysis.decisions())
    assert rounded == (
        Decision(1, 1, 1, "move", "24/20", "24/20", 0.0, 0.1, ""),
        Decision(1, 2, 0, "move", "23/19", "24/20", 0.15, 0.2, "blunder"),
        Decision(1, 4, 0, "double", "double", "double, pass", 0.0, 1.0, ""),
        Decision(1, 4, 1, "take", "take", "pass", 0.2, -1.0, "blunder"),
        Decision(1, 4, 1, "no double", "no double", "double, take", 0.1, 0.6, "error"),
        Decision(1, 4, 1, "move", "24/20", "24/20", 0.0, 0.1, ""),
        Decision(1, 5, 0, "double", "double", "no double", 0.0, 0.1, ""),
    )
    x, o = analysis.players
    assert (x.checker_decisions, x.cube_decisions, x.blunders, x.errors) == (1, 1, 1, 0)
    assert x.rate == pytest.approx(0.15 / 2 * 500)
    assert o.rate == pytest.approx(0.3 / 4 * 500)
    assert (o.blunders, o.errors, o.luck) == (1, 1, 0.5)
    assert analysis.games[0].players == analysis.players
    assert analysis.marked("blunder") == tuple(
        d for d in analysis.decisions() if d.mark == "blunder"
    )


def test_no_decision_gives_a_rate_of_zero() -> None:
    data = gnubg_data()
    data["stats"]["X"] = _stats(0, 0.0, 0, 0.0, 0.0)
    assert from_gnubg(data, ply=2).players[0].rate == 0.0


@pytest.mark.parametrize("broken", [{}, {"games": [{"game": [{"action": "move"}]}]}])
def test_data_that_is_not_gnubgs_is_refused(broken: dict[str, Any]) -> None:
    with pytest.raises(AnalysisError):
        from_gnubg(broken, ply=0)


def test_the_stored_form_round_trips() -> None:
    analysis = from_gnubg(gnubg_data(), ply=2)
    again = analysis_from_json(analysis_to_json(analysis))
    assert again.ply == 2
    assert again.players == analysis.players
    assert [d.loss for d in again.decisions()] == pytest.approx(
        [d.loss for d in analysis.decisions()]
    )
    with pytest.raises(SnapshotError):
        analysis_from_json('{"version": 9}')
    with pytest.raises(SnapshotError):
        analysis_from_json("not json")


def test_gnubgs_moves_in_the_movers_numbers() -> None:
    assert format_gnubg_play([[25, 21], [6, 0]]) == "bar/21 6/off"
    assert format_gnubg_play([]) == "-"
