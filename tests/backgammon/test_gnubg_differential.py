"""Differential tests against GNU Backgammon itself (skipped where gnubg is missing).

gnubg is GPL: these tests call it as a library (``gnubg_nn``) or a separate program
(``/usr/games/gnubg``); none of its code is in this project.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import (
    MatchIdState,
    decode_match_id,
    decode_position_id,
    encode_match_id,
    encode_position_id,
)
from tests.conftest import GNUBG_MISSING

gnubg_nn = pytest.importorskip(
    "gnubg_nn", reason="gnubg-nn is not installed: pip install -e '.[test]' installs it"
)
pytestmark = pytest.mark.gnubg

START_ID = "4HPwATDgc/ABMA"


def _gnubg_results(board: list[list[int]], d1: int, d2: int) -> set[str]:
    out = set()
    for key in gnubg_nn.moves(board, d1, d2):
        opp, me = gnubg_nn.board_from_position_key(key)
        out.add(gnubg_nn.position_id([list(opp), list(me)]))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_self_play_results_equal_gnubg(seed: int) -> None:
    """Random self-play, both engines on every position and roll: same distinct results."""
    rng = random.Random(seed)
    start = gnubg_nn.board_from_position_id(START_ID)
    checked = 0
    for _game in range(40):
        board = [list(start[0]), list(start[1])]
        for _ply in range(150):
            d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
            position = decode_position_id(gnubg_nn.position_id(board))
            mine = {encode_position_id(p.result, 0) for p in legal_plays(position, 0, Roll(d1, d2))}
            expected = _gnubg_results(board, d1, d2)
            assert mine == expected, (gnubg_nn.position_id(board), d1, d2)
            checked += 1
            keys = sorted(gnubg_nn.moves(board, d1, d2))
            if keys:
                opp, me = gnubg_nn.board_from_position_key(rng.choice(keys))
                board = [list(opp), list(me)]
            if not any(board[1]):
                break
            board = [board[1], board[0]]
    assert checked > 1000


def test_position_ids_equal_gnubg() -> None:
    rng = random.Random(5)
    start = gnubg_nn.board_from_position_id(START_ID)
    board = [list(start[0]), list(start[1])]
    for _ in range(2000):
        d1, d2 = rng.randint(1, 6), rng.randint(1, 6)
        keys = sorted(gnubg_nn.moves(board, d1, d2))
        if keys:
            opp, me = gnubg_nn.board_from_position_key(rng.choice(keys))
            board = [list(me), list(opp)]
        if not any(board[0]) or not any(board[1]):
            board = [list(start[0]), list(start[1])]
        pid = gnubg_nn.position_id(board)
        position = Position.from_counts(board[1], board[0])
        assert encode_position_id(position, 0) == pid
        assert decode_position_id(pid) == position


GNUBG = shutil.which("gnubg") or ("/usr/games/gnubg" if Path("/usr/games/gnubg").exists() else None)


@pytest.mark.skipif(GNUBG is None, reason=GNUBG_MISSING)
def test_match_id_equals_gnubg_program(tmp_path: Path) -> None:
    """Set a match state in the gnubg program and compare its Match ID with ours."""
    assert GNUBG is not None
    script = tmp_path / "state.py"
    script.write_text(
        "import gnubg\n"
        "gnubg.command('new match 7')\n"
        "gnubg.command('set score 2 4')\n"
        "gnubg.command('set cube value 4')\n"
        "gnubg.command('set cube owner 1')\n"
        "gnubg.command('set turn 0')\n"
        "gnubg.command('set dice 5 3')\n"
        "print('MATCHID', gnubg.matchid())\n"
    )
    out = subprocess.run(
        [GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True, timeout=60
    ).stdout
    match_id = next(line.split()[1] for line in out.splitlines() if line.startswith("MATCHID"))
    state = decode_match_id(match_id)
    assert (state.length, state.score, state.cube, state.cube_owner) == (7, (2, 4), 4, 1)
    assert (state.dice, state.on_roll, state.turn) == ((5, 3), 0, 0)
    assert encode_match_id(state) == match_id
    ours = MatchIdState(
        cube=4,
        cube_owner=1,
        on_roll=0,
        turn=0,
        dice=(5, 3),
        length=7,
        score=(2, 4),
        extra_bits=state.extra_bits,
    )
    assert encode_match_id(ours) == match_id
