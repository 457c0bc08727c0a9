"""The page's finished match step by step (server/static/record.js, D377) against the
rules core: for every step of seeded matches, the board the page draws (its view, in
the first player's numbering) holds each player's checkers where
``backgammon.board.Position`` has them, with the borne-off checkers, the cube's owner
and the dice of the step. Run with Node.js; skipped when it is absent."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from backgammon.board import Position
from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from protocol.match_replay import replay_json
from tests.server.random_match import random_action

NODE = shutil.which("node")
STATIC = Path(__file__).resolve().parents[2] / "server" / "static"

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Debian nodejs) not found")

RUNNER = """
import { readFileSync } from "node:fs";
const { stepView, stepText } = await import(process.argv[1] + "/record.js");
const { sides, cubeOwner } = await import(process.argv[1] + "/clip.js");
const found = JSON.parse(readFileSync(0, "utf8"));
const out = found.games.map((game, g) => [-1, ...game.steps.keys()].map((s) => {
  const { view, offered } = stepView(found, g, s);
  const { mine, theirs } = sides(view);
  return {
    mine, theirs, off: [view.playerHome, view.opponentHome], owner: cubeOwner(view),
    dice: [view.playerDice, view.opponentDice], offered,
    text: s >= 0 ? stepText(found, game.steps[s]) : null,
  };
}));
console.log(JSON.stringify(out));
"""


def replay(seed: int, options: MatchOptions) -> dict[str, object]:
    rng = random.Random(seed)
    match = Match(options, SeededDice(seed), o_player=seed % 2)
    while match.phase is not Phase.MATCH_OVER and len(match.history) < 3:
        random_action(match, rng, 0.05, Counter())
    snapshot = json.dumps(
        {"version": 1, "players": ["ann", "ben"], "started_at": 1, "match": match_to_json(match)}
    )
    found: dict[str, object] = json.loads(
        replay_json(
            snapshot,
            match_id=1,
            players=("ann", "ben"),
            score=(match.score[0], match.score[1]),
            winner=None,
            started_at=1,
            ended_at=2,
        )
    )
    return found


@pytest.mark.parametrize("seed", range(4))
def test_every_step_is_drawn_where_the_rules_core_has_the_checkers(seed: int) -> None:
    found = replay(seed, MatchOptions(length=0 if seed % 2 else 5))
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", RUNNER, str(STATIC)],
        input=json.dumps(found),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    drawn = json.loads(done.stdout)
    games = found["games"]
    assert isinstance(games, list)
    for game, views in zip(games, drawn, strict=True):
        steps = [None, *game["steps"]]
        assert len(views) == len(steps)
        for step, view in zip(steps, views, strict=True):
            board = step["board"] if step else game["start"]
            position = Position.from_fibs_board(board, game["o"])
            first, second = position.counts(0), position.counts(1)
            # The first player's own points 1..24 and bar; the second's seen from there.
            assert view["mine"][1:] == list(first[1:26])
            assert view["theirs"][1:25] == [second[25 - p] for p in range(1, 25)]
            assert view["theirs"][0] == second[25]
            assert view["off"] == [first[0], second[0]]
            if step is None:
                continue
            owner = {None: "centre", 0: "player", 1: "opponent"}[step["owner"]]
            assert view["owner"] == owner
            dice = step.get("dice") or [0, 0]
            assert view["dice"][step["player"]] == dice
            assert view["dice"][1 - step["player"]] == [0, 0]
            name = found["players"][step["player"]]  # type: ignore[index]
            assert view["text"].startswith(name)
            if step["kind"] == "move":
                assert view["text"].endswith(f": {step['text']}")
            if step["kind"] in ("double", "redouble"):
                assert view["offered"] == ("opponent" if step["player"] == 0 else "player")
