"""The page's dice check (server/static/dice.js) against the rules core's verifier.

Matches rolled by ``FairDice`` and played at random to their end are checked by the
page's ``verifyRecord`` (Node.js's Web Crypto, the same API as the browser's) and by
``backgammon.fair_dice.verify``: both must accept the true records and refuse the same
forgeries (a die changed, another seed, a commitment to another seed, a roll left out).
Run with Node.js (Debian ``nodejs``); skipped with the reason when it is absent."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from backgammon.fair_dice import DiceSeeds, FairDice, record_games, record_proof, verify
from backgammon.match import Match, MatchOptions
from server.tables.matches import LiveMatch
from tests.server.random_match import random_action

NODE = shutil.which("node")
STATIC = Path(__file__).resolve().parents[2] / "server" / "static"

pytestmark = pytest.mark.skipif(NODE is None, reason="node (Debian nodejs) not found")

RUNNER = """
import { readFileSync } from "node:fs";
const { verifyRecord, rollOf } = await import(process.argv[1]);
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const { record, commitment } of cases) out.push(await verifyRecord(record, commitment));
console.log(JSON.stringify(out));
"""


def _record(seed: int) -> tuple[dict[str, Any], str]:
    """A finished match's record (the JSON ``export <id> json`` sends) and the
    commitment told at its start."""
    rng = random.Random(seed)
    server_seed = rng.randbytes(32)
    seeds = DiceSeeds(server_seed, (f"p0-{seed}", "~!x"))
    length = rng.choice((1, 3))
    live = LiveMatch(
        ("alice", "bob"), Match(MatchOptions(length=length), FairDice(seeds)), started_at=0
    )
    while random_action(live.match, rng, 0.05, Counter()):
        pass
    return json.loads(live.snapshot()), hashlib.sha256(server_seed).hexdigest()


def _python_verdict(record: dict[str, Any], commitment: str) -> bool:
    _, dice = record_proof(record)
    assert dice is not None
    if hashlib.sha256(dice.seeds.server_seed).hexdigest() != commitment:
        return False
    return verify(dice, record_games(record)).verified


def _page_verdicts(cases: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    assert NODE is not None
    data = json.dumps([{"record": r, "commitment": c} for r, c in cases])
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", RUNNER, str(STATIC / "dice.js")],
        input=data,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    verdicts: list[dict[str, Any]] = json.loads(done.stdout)
    return verdicts


def _forgeries(record: dict[str, Any], commitment: str) -> list[tuple[dict[str, Any], str]]:
    """The record altered in each way a check must catch."""
    changed = copy.deepcopy(record)
    rolls = [
        e["dice"] if e["type"] == "OpeningRoll" else e["roll"]
        for g in [*changed["match"]["history"], changed["match"]["record"]]
        for e in g
        if e["type"] in ("DiceRolled", "OpeningRoll")
    ]
    rolls[-1][1] = rolls[-1][1] % 6 + 1
    other_seed = copy.deepcopy(record)
    other_seed["match"]["dice_proof"]["seeds"][1] = "someone-else"
    missing = copy.deepcopy(record)
    rolled_games = [
        g
        for g in [*missing["match"]["history"], missing["match"]["record"]]
        if any(e["type"] in ("DiceRolled", "OpeningRoll") for e in g)
    ]
    last = rolled_games[-1]
    index = max(i for i, e in enumerate(last) if e["type"] in ("DiceRolled", "OpeningRoll"))
    del last[index]
    return [
        (changed, commitment),
        (other_seed, commitment),
        (missing, commitment),
        (record, "0" * 64),
    ]


def test_the_page_verifies_every_roll_as_the_rules_core_does() -> None:
    cases: list[tuple[dict[str, Any], str]] = []
    seed = 0
    while len(cases) < 12 * 5:
        seed += 1
        record, commitment = _record(seed)
        _, dice = record_proof(record)
        if dice is None or dice.drawn < 20:
            continue  # a forged seed gives the same few rolls too often (1/36 a roll)
        cases.append((record, commitment))
        cases.extend(_forgeries(record, commitment))
    verdicts = _page_verdicts(cases)
    for (record, commitment), verdict in zip(cases, verdicts, strict=True):
        expected = _python_verdict(record, commitment)
        assert verdict["verified"] is expected, verdict
    true_ones = [v for v in verdicts if v["verified"]]
    assert len(true_ones) == 12 and all(v["rolls"] >= 10 for v in true_ones)


def test_the_pages_rolls_take_every_players_seed() -> None:
    """A chouette game's message has every seat's seed (D353): the page's ``rollOf``
    gives the rules core's rolls for three seeds too (docs/dice.md's example)."""
    assert NODE is not None
    seeds = DiceSeeds(bytes(range(32)), ("lily", "tulip", "rose"))
    runner = """
const { rollOf, hexToBytes } = await import(process.argv[1]);
const key = await crypto.subtle.importKey(
  "raw", hexToBytes(process.argv[2]), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
const out = [];
for (let n = 0; n < 40; n += 1) out.push(await rollOf(key, process.argv.slice(3), n));
console.log(JSON.stringify(out));
"""
    arguments = [seeds.server_seed.hex(), *seeds.player_seeds]
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", runner, str(STATIC / "dice.js"), *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert [tuple(r) for r in json.loads(done.stdout)] == [seeds.roll(n) for n in range(40)]
