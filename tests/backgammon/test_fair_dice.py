"""Dice anyone can verify (issue 30): the ``fibs-dice/1`` construction, its roller, its
state in a match's snapshot, and the verifier (backgammon/fair_dice, docs/dice.md).

The known answers below were computed outside this code, with the commands docs/dice.md
gives a player: ``sha256sum`` for the commitment and ``openssl dgst -sha256 -mac HMAC
-macopt hexkey:...`` for each roll's block; the other tests recompute the construction
here from its definition with :mod:`hashlib` and :mod:`hmac`.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from backgammon.dice import Roll, SeededDice
from backgammon.errors import SnapshotError
from backgammon.events import DiceRolled, Event, OpeningRoll
from backgammon.fair_dice import (
    PLAYER_SEED_LENGTH,
    RULE,
    SNAPSHOT_KEY,
    DiceSeeds,
    FairDice,
    commitment_of,
    dice_from,
    draw_player_seed,
    draw_server_seed,
    is_player_seed,
    record_games,
    record_proof,
    recorded_rolls,
    verify,
)
from backgammon.fair_dice.__main__ import main
from backgammon.match import Match, MatchOptions
from backgammon.snapshot import match_from_json, match_to_json, match_to_json_text
from server.handlers.records import FACE_FREEDOM, PAIR_FREEDOM, chi_square_tail
from server.tables.dice_stats import DiceStats
from tests.server.random_match import OPTIONS, random_action

ROOT = Path(__file__).resolve().parents[2]
SEED = bytes(range(32))
"""The server seed of the known answers: the bytes 0x00 to 0x1f."""
SEEDS = DiceSeeds(SEED, ("tulip", "7d3f9a2c01b2e4f5"))
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
"""``echo -n 000102...1f | xxd -r -p | sha256sum``."""
BLOCKS = {
    0: "ab3812bfad86dee917fe51dacb108edf423ea388e96b43a156e2c01b2aaeb769",
    1: "9edc4f1745c171d6929cddf9762e4ea763d17637616d32cdd23829d18efe262f",
    2: "45435d1859fc54f201d2d8cad5520c1d530af61c6956705770df2b61110e9bcb",
    3: "e920580da1bc4a802753194afb38bddc468beb2e35d9872cf2e06705537c952a",
    14: "fd37e5a299746e358cd11cadcc85aba4bd644fb605f84b02fd6fe31c5915e68b",
}
"""``printf 'fibs-dice/1 tulip 7d3f9a2c01b2e4f5 <n> 0' | openssl dgst -sha256 -mac HMAC
-macopt hexkey:000102...1f`` for roll ``n``."""
ROLLS = {0: (4, 3), 1: (3, 5), 2: (4, 2), 3: (6, 3), 14: (2, 2)}
"""The dice of those blocks, by hand: 0xab = 171, 171 % 6 + 1 = 4; 0x38 = 56 gives 3...
Roll 14's first byte, 0xfd = 253, is skipped: its dice are 0x37 and 0xe5."""


def reference_roll(server_seed: bytes, seeds: tuple[str, str], number: int) -> tuple[int, int]:
    """Roll ``number`` computed from the definition (module docstring of fair_dice),
    independently of the module's code."""
    dice: list[int] = []
    block = 0
    while len(dice) < 2:
        message = f"fibs-dice/1 {seeds[0]} {seeds[1]} {number} {block}".encode()
        mac = hmac.new(server_seed, message, hashlib.sha256).digest()
        dice += [b % 6 + 1 for b in mac if b < 252]
        block += 1
    return dice[0], dice[1]


def test_the_known_answers() -> None:
    assert SEEDS.commitment == COMMITMENT == commitment_of(SEED)
    for number, block in BLOCKS.items():
        assert SEEDS.message(number) == f"fibs-dice/1 tulip 7d3f9a2c01b2e4f5 {number} 0".encode()
        assert SEEDS.block(number).hex() == block
        assert SEEDS.roll(number) == ROLLS[number]


def test_every_roll_is_the_definitions() -> None:
    rng = random.Random(30)
    for _ in range(20):
        server_seed = rng.randbytes(32)
        seeds = ("a", rng.choice(["b", "!~", "x" * PLAYER_SEED_LENGTH]))
        derived = DiceSeeds(server_seed, seeds)
        for number in (0, 1, 2, 99, 12345):
            assert derived.roll(number) == reference_roll(server_seed, seeds, number)


def test_the_roller_gives_each_rolls_dice_in_order_and_is_deterministic() -> None:
    first, second = FairDice(SEEDS), FairDice(SEEDS)
    dice = [first.die() for _ in range(8)]
    assert dice == [4, 3, 3, 5, 4, 2, 6, 3]
    assert [second.die() for _ in range(8)] == dice
    assert first.drawn == 8
    other = FairDice(DiceSeeds(SEED, ("tulip", "7d3f9a2c01b2e4f6")))
    assert [other.die() for _ in range(40)] != [FairDice(SEEDS).die() for _ in range(40)]


def test_rejection_sampling_skips_bytes_252_to_255_across_blocks() -> None:
    assert dice_from([bytes([252, 253, 254, 255] * 8), bytes([0, 251, 7])]) == (1, 6)
    assert dice_from([bytes([255, 5]), bytes([6])]) == (6, 1)
    with pytest.raises(ValueError, match="before two dice"):
        dice_from([bytes([252] * 32), bytes([3])])


def test_seeds_are_checked() -> None:
    assert is_player_seed("!") and is_player_seed("~" * PLAYER_SEED_LENGTH)
    for text in ("", "a b", "x" * (PLAYER_SEED_LENGTH + 1), "tülip", "\t"):
        assert not is_player_seed(text)
    with pytest.raises(ValueError):
        DiceSeeds(bytes(31), ("a", "b"))
    with pytest.raises(ValueError):
        DiceSeeds(SEED, ("a", "b c"))
    assert draw_server_seed(bytes) == bytes(32)
    assert draw_player_seed(bytes) == "0" * 16
    assert is_player_seed(draw_player_seed())
    with pytest.raises(ValueError, match="gave 3 bytes"):
        draw_server_seed(lambda n: bytes(3))


def test_the_secret_is_in_no_repr() -> None:
    """A log line or a traceback that shows the seeds or the roller shows no server seed."""
    seeds = DiceSeeds(bytes(range(100, 132)), ("a", "b"))
    for shown in (repr(seeds), repr(FairDice(seeds)), str(seeds)):
        assert seeds.server_seed.hex() not in shown
        assert str(seeds.server_seed) not in shown


def test_the_dice_are_uniform_over_many_seeds() -> None:
    """Pearson's chi-square of the faces and of the ordered pairs, as ``dicetest``
    computes them, over the first rolls of 4,000 server seeds (deterministic: no flaky
    failures): fair dice would deviate this much or more with a chance P."""
    stats = DiceStats()
    for index in range(4_000):
        server_seed = hashlib.sha256(index.to_bytes(4, "big")).digest()
        seeds = DiceSeeds(server_seed, ("alice", f"s{index}"))
        for number in range(10):
            stats.record(*seeds.roll(number))
    assert stats.rolls == 40_000
    assert chi_square_tail(stats.face_chi_square(), FACE_FREEDOM) > 0.001
    assert chi_square_tail(stats.pair_chi_square(), PAIR_FREEDOM) > 0.001
    # The same seed with the other player's seed changed a little: a new sequence.
    same = [DiceSeeds(SEED, ("alice", f"s{i}")).roll(0) for i in range(36 * 40)]
    assert len(set(same)) == 36


def test_what_a_player_sees_predicts_no_roll() -> None:
    """Before the reveal a player knows the commitment, the players' seeds and the rolls
    so far. Rolls computed from those alone (HMAC keyed with the commitment, with the
    seeds, with nothing; the roll before) hit the real roll no more often than a guess
    (1/36), and each roll's first die is independent of the one before (Pearson's
    chi-square over 6 x 6 cells), over 2,000 server seeds of 10 rolls each."""
    seeds = ("alice", "bob")
    rolls, hits = 0, Counter[str]()
    successive = Counter[tuple[int, int]]()
    for index in range(2_000):
        server_seed = hashlib.sha256(b"unseen" + index.to_bytes(4, "big")).digest()
        real = DiceSeeds(server_seed, seeds)
        commitment = real.commitment
        guesses = {
            "the commitment as key": DiceSeeds(bytes.fromhex(commitment), seeds),
            "the seeds as key": DiceSeeds(hashlib.sha256(b"alice bob").digest(), seeds),
            "no key": DiceSeeds(bytes(32), seeds),
        }
        previous = None
        for number in range(10):
            roll = real.roll(number)
            rolls += 1
            for name, guess in guesses.items():
                hits[name] += guess.roll(number) == roll
            hits["the roll before"] += previous == roll
            if previous is not None:
                successive[previous[0], roll[0]] += 1
            previous = roll
    bound = rolls / 36 + 5 * (rolls * (1 / 36) * (35 / 36)) ** 0.5  # five deviations
    assert all(count < bound for count in hits.values()), (hits, bound)
    pairs = sum(successive.values())
    expected = pairs / 36
    chi = sum(
        (successive[a, b] - expected) ** 2 / expected for a in range(1, 7) for b in range(1, 7)
    )
    assert chi_square_tail(chi, 35) > 0.001


def _played(seed: int, options: MatchOptions, steps: int = 10_000) -> Match:
    """A match with fair dice, played by random actions for at most ``steps``."""
    rng = random.Random(seed)
    match = Match(options, FairDice(DiceSeeds(rng.randbytes(32), ("p0", "p1"))))
    match.start_game()
    seen: Counter[str] = Counter()
    for _ in range(steps):
        if not random_action(match, rng, 0.05, seen):
            break
    return match


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"length{o.length}")
def test_a_restored_match_rolls_the_same_dice(options: MatchOptions) -> None:
    """Saved at any moment and restored (with another roller given: the saved state
    wins), a match goes on with exactly the dice it would have had."""
    for moment in (0, 3, 17, 60):
        original = _played(moment, options, steps=moment)
        text = match_to_json_text(original)
        assert text == json.dumps(match_to_json(original), separators=(",", ":"))
        state = json.loads(match_to_json_text(original, events=False))
        assert isinstance(original.roller, FairDice)
        assert state[SNAPSHOT_KEY]["drawn"] == original.roller.drawn
        restored = match_from_json(json.loads(text), SeededDice(1))
        assert isinstance(restored.roller, FairDice)
        assert [restored.roller.die() for _ in range(20)] == [
            original.roller.die() for _ in range(20)
        ]


def test_the_state_round_trips_and_bad_states_are_refused() -> None:
    dice = FairDice(SEEDS, 7)
    data = json.loads(json.dumps(dice.to_json()))
    assert data == {
        "rule": RULE,
        "server_seed": SEED.hex(),
        "seeds": ["tulip", "7d3f9a2c01b2e4f5"],
        "drawn": 7,
    }
    again = FairDice.from_json(data)
    assert again.seeds == SEEDS and again.drawn == 7
    assert again.die() == 3  # die 7: roll 3's second die
    for broken in (
        {**data, "rule": "fibs-dice/2"},
        {**data, "drawn": -1},
        {**data, "drawn": True},
        {**data, "server_seed": "00"},
        {**data, "seeds": ["a"]},
        {**data, "seeds": ["a", "b c"]},
        [1, 2],
    ):
        with pytest.raises(SnapshotError):
            FairDice.from_json(broken)


def test_a_whole_match_verifies_and_a_changed_die_does_not() -> None:
    match = _played(5, MatchOptions(length=3))
    record = json.loads(match_to_json_text(match))
    names, dice = record_proof(record)
    assert names == ("player 0", "player 1") and dice is not None
    games = record_games(record)
    verdict = verify(dice, games)
    assert verdict.verified and verdict.rolls * 2 == dice.drawn > 20
    # Opening ties included, in the order drawn.
    rolls = recorded_rolls(games)
    assert [dice.seeds.roll(n) for n in range(len(rolls))] == rolls
    # One die changed in the record (the first turn's roll): that roll is found.
    events = [event for game in record["history"] for event in game]
    changed = next(event for event in events if event["type"] == "DiceRolled")
    changed["roll"][0] = 7 - changed["roll"][0]
    verdict = verify(dice, record_games(record))
    assert not verdict.verified and verdict.mismatch is not None
    number = verdict.mismatch.number
    assert verdict.mismatch.derived == rolls[number] == dice.seeds.roll(number)
    assert verdict.mismatch.recorded == tuple(changed["roll"]) != rolls[number]
    # A record that lacks a roll the proof says was drawn.
    short = FairDice(dice.seeds, dice.drawn + 2)
    assert not verify(short, games).verified and verify(short, games).mismatch is None


def test_the_verifier_on_files(tmp_path: Path) -> None:
    """``python -m backgammon.fair_dice verify FILE`` on the server's record form
    (players and the core's snapshot), a changed one, one without proof, a bad file."""
    match = _played(8, MatchOptions(length=1))
    record: dict[str, Any] = {"version": 1, "players": ["alice", "bob"]}
    record["match"] = match_to_json(match)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record))
    out = io.StringIO()
    assert main(["verify", str(good)], out) == 0
    text = out.getvalue()
    assert isinstance(match.roller, FairDice)
    assert match.roller.seeds.commitment in text
    assert "seed of alice: p0" in text and "seed of bob: p1" in text
    assert text.splitlines()[-1].startswith("verified: all ")
    opening = next(e for e in record["match"]["history"][0] if e["type"] == "OpeningRoll")
    opening["dice"] = [opening["dice"][1], opening["dice"][0]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    out = io.StringIO()
    assert main(["verify", str(bad)], out) == 1
    assert out.getvalue().splitlines()[-1].startswith("NOT verified: roll ")
    del record["match"][SNAPSHOT_KEY]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(record))
    out = io.StringIO()
    assert main(["verify", str(bare)], out) == 1
    assert "no dice proof" in out.getvalue()
    mat = tmp_path / "match.mat"
    mat.write_text(" 1 point match\n")
    assert main(["verify", str(mat)]) == 2
    assert main(["verify", str(tmp_path / "missing.json")]) == 2
    # The real command line, as a player runs it.
    done = subprocess.run(
        [sys.executable, "-m", "backgammon.fair_dice", "verify", str(good)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == text


def test_the_roll_command_shows_a_block_by_hand() -> None:
    out = io.StringIO()
    assert main(["roll", SEED.hex(), "tulip", "7d3f9a2c01b2e4f5", "14"], out) == 0
    assert out.getvalue().splitlines() == [
        "message:      fibs-dice/1 tulip 7d3f9a2c01b2e4f5 14 0",
        f"HMAC-SHA-256: {BLOCKS[14]}",
        "dice:         2 2",
    ]
    with pytest.raises(SystemExit):
        main(["roll", "00", "a", "b", "0"])
    with pytest.raises(SystemExit):
        main(["roll", SEED.hex(), "a", "b", "-1"])


CHOUETTE_BLOCKS = {
    0: "e1b08460d8d1dc2ba8439a1e6f33f87aae04210c70eae0d0073648eeb24d983c",
    1: "1e5f190b04d2b6b3589ef25c8b57075a3d805fd360f90319a94a1ebc41129902",
    2: "c82a664a066cd1320661c95a600e1e33d5f7a8a9fa4dbbcf071bc3d99163253e",
}
"""``printf 'fibs-dice/1 lily tulip rose <n> 0' | openssl dgst -sha256 -mac HMAC -macopt
hexkey:000102...1f``: a chouette game of three players (D353)."""


def test_a_chouette_games_seeds_and_its_dice_one_at_a_time() -> None:
    """Three players' seeds in the message; the dice drawn one at a time (the first
    draw's single dice too) are each roll's two in turn: 0xe1 gives 4, 0xb0 3, 0x1e 1..."""
    seeds = DiceSeeds(SEED, ("lily", "tulip", "rose"))
    for number, block in CHOUETTE_BLOCKS.items():
        assert seeds.message(number) == f"fibs-dice/1 lily tulip rose {number} 0".encode()
        assert seeds.block(number).hex() == block
    assert seeds.dice(6) == [4, 3, 1, 6, 3, 1]
    roller = FairDice(seeds)
    assert [roller.die() for _ in range(6)] == seeds.dice(6)
    assert FairDice.from_json(roller.to_json()).seeds == seeds
    assert SEEDS.dice(4) == [*ROLLS[0], *ROLLS[1]]  # a match's, the same rule
    with pytest.raises(ValueError, match="two or more"):
        DiceSeeds(SEED, ("lily",))
    out = io.StringIO()
    assert main(["dice", SEED.hex(), "lily", "tulip", "rose", "6"], out) == 0
    assert out.getvalue() == "4 3 1 6 3 1\n"
    out = io.StringIO()
    assert main(["roll", SEED.hex(), "lily", "tulip", "rose", "1"], out) == 0
    assert out.getvalue().splitlines()[0] == "message:      fibs-dice/1 lily tulip rose 1 0"
    with pytest.raises(SystemExit):
        main(["dice", SEED.hex(), "ann", "tulip", "-1"])
    # a match's record holds two seeds: three are no match's proof
    record = {"players": ["a", "b"], "match": {SNAPSHOT_KEY: roller.to_json()}}
    with pytest.raises(SnapshotError):
        record_proof(record)


def test_recorded_rolls_reads_opening_rolls_and_turns() -> None:
    games: list[list[Event]] = [
        [OpeningRoll((3, 3), None), OpeningRoll((5, 2), 0), DiceRolled(1, Roll(6, 1), 2)]
    ]
    assert recorded_rolls(games) == [(3, 3), (5, 2), (6, 1)]
