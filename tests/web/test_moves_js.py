"""The page's legal plays (server/static/moves.js) against the rules core's.

For positions of random games, from the opening to the bear-off, and every roll, the
page must offer exactly the plays ``backgammon.moves.legal_plays`` allows: the same
set of resulting positions, each reached with the required number of moves. Run with
Node.js (Debian ``nodejs``); skipped with the reason when it is absent."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays, moves_required
from tests.backgammon.helpers import position as build

NODE = shutil.which("node")
STATIC = Path(__file__).resolve().parents[2] / "server" / "static"

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Debian nodejs) not found")

ROLLS = [Roll(a, b) for a in range(1, 7) for b in range(a, 7)]

RUNNER = """
import { readFileSync } from "node:fs";
const { legalPlays } = await import(process.argv[1]);
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = cases.map(({ mine, theirs, dice }) => {
  const results = new Set();
  let length = null;
  for (const play of legalPlays(mine, theirs, dice)) {
    const m = mine.slice();
    const t = theirs.slice();
    for (const [from, to, hit] of play) {
      m[from] -= 1;
      if (to > 0) m[to] += 1;
      if (hit) { t[to] -= 1; t[0] += 1; }
    }
    results.add(JSON.stringify([m, t]));
    length = play.length;
  }
  return { results: [...results].sort(), length };
});
console.log(JSON.stringify(out));
"""


def _page_sides(position: Position) -> tuple[list[int], list[int]]:
    """Player 0's checkers and the opponent's in player 0's numbering, as the page keeps
    them (``sides`` in clip.js): mine[p] for p = 1..24, mine[25] the bar; theirs[p] on
    the player's point p, theirs[0] the opponent's bar."""
    own = position.counts(0)
    other = position.counts(1)
    mine = [0] * 26
    theirs = [0] * 26
    for p in range(1, 25):
        mine[p] = own[p]
        theirs[p] = other[25 - p]
    mine[25] = own[25]
    theirs[0] = other[25]
    return mine, theirs


RULE_EXAMPLES = [
    build({12: 1, 2: 14}, {24: 2, 6: 13}),  # one die only: the higher one (6-5)
    build({12: 1, 2: 14}, {24: 2, 19: 2, 6: 11}),  # one die only: the one that can move
    build({4: 1, 2: 1}, {24: 15}),  # bearing off with higher dice
    build({6: 1, 2: 1}, {24: 15}),  # the higher die bears off only from the highest point
    build({7: 1, 3: 14}, {24: 15}),  # the last checker comes home, then bears off
    build({13: 2, 8: 3, 7: 9}, {19: 2, 20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 3}, my_bar=1),
    build({13: 2, 8: 3, 6: 9}, {20: 2, 21: 2, 22: 2, 23: 2, 24: 2, 1: 5}, my_bar=1),
    build({24: 2, 13: 5, 6: 8}, {18: 2, 17: 2, 16: 2, 15: 2, 14: 2, 3: 5}),
]
"""Positions of the rules' own examples (tests/backgammon/test_rules_examples.py and
closed boards, a prime), tried with every roll."""


def _positions(games: int, seed: int) -> list[Position]:
    """Positions met in random games (each seen from the player on roll)."""
    rng = random.Random(seed)
    found: list[Position] = []
    for _ in range(games):
        position = Position.start()
        for _turn in range(200):
            plays = legal_plays(position, 0, rng.choice(ROLLS))
            if plays:
                position = rng.choice(plays).result
            if position.off(0) == 15:
                break
            position = position.swapped()
            found.append(position)
    return found


def test_the_page_offers_exactly_the_legal_plays(tmp_path: Path) -> None:
    assert NODE is not None
    module = tmp_path / "moves.mjs"
    shutil.copyfile(STATIC / "moves.js", module)
    rng = random.Random(17)
    positions = rng.sample(_positions(40, 5), 400)
    cases = []
    expected = []
    tries = [(p, roll) for p in RULE_EXAMPLES for roll in ROLLS]
    tries += [(p, roll) for p in positions for roll in rng.sample(ROLLS, 4)]
    for position, roll in tries:
        mine, theirs = _page_sides(position)
        cases.append({"mine": mine, "theirs": theirs, "dice": [roll.d1, roll.d2]})
        results = sorted(
            json.dumps(list(_page_sides(play.result)), separators=(",", ":"))
            for play in legal_plays(position, 0, roll)
        )
        expected.append((results, moves_required(position, 0, roll), position, roll))
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", RUNNER, module.as_uri()],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout)
    assert len(got) == len(expected)
    bad = []
    for answer, (results, required, position, roll) in zip(got, expected, strict=True):
        length = answer["length"] or 0
        if answer["results"] != results or (results and length != required):
            bad.append((position.counts(0), position.counts(1), roll))
    assert not bad, f"{len(bad)} of {len(expected)} differ, e.g. {bad[:3]}"
