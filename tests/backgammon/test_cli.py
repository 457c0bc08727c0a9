"""``python -m backgammon``: the moves command and the batch mode."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from backgammon.board import Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import decode_position_id, encode_position_id


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backgammon", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_moves_command_prints_one_play_a_line() -> None:
    done = run("moves", "4HPwATDgc/ABMA", "31")
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 16
    assert "8-5 6-5\t4HPwATCwZ/ABMA" in lines
    for line in lines:
        _text, pid = line.split("\t")
        assert decode_position_id(pid).pips(0) == 167 - 4


def test_no_play_prints_nothing() -> None:
    closed = Position.from_counts(
        [0] * 13 + [14] + [0] * 11 + [1], [0, 2, 2, 2, 2, 2, 2] + [0] * 6 + [3] + [0] * 12
    )
    done = run("moves", encode_position_id(closed, 0), "66")
    assert (done.returncode, done.stdout) == (0, "")


def test_batch_mode_answers_each_line() -> None:
    done = run(stdin="4HPwATDgc/ABMA 66\n4HPwATDgc/ABMA 21\n")
    assert done.returncode == 0
    first, second = done.stdout.splitlines()
    expected = sorted(
        encode_position_id(p.result, 0) for p in legal_plays(Position.start(), 0, Roll(6, 6))
    )
    assert first.split() == expected
    assert len(second.split()) == len(legal_plays(Position.start(), 0, Roll(2, 1)))


def test_bad_input_is_one_line_on_stderr_and_a_failure() -> None:
    for args, stdin in (
        (("moves", "nonsense", "31"), ""),
        (("moves", "4HPwATDgc/ABMA", "71"), ""),
        ((), "4HPwATDgc/ABMA\n"),
        (("frobnicate",), ""),
    ):
        done = run(*args, stdin=stdin)
        assert done.returncode != 0
        assert len(done.stderr.strip().splitlines()) == 1


def test_help_says_what_no_arguments_do() -> None:
    done = run("--help")
    assert done.returncode == 0 and done.stderr == ""
    assert "with no arguments: reads 'POSITION_ID ROLL' lines from standard input" in done.stdout
    example = next(line for line in done.stdout.splitlines() if "Example:" in line)
    shown = example.split("python -m backgammon ", 1)[1].split()
    assert run(*shown).returncode == 0  # the example in the help runs


def test_a_reader_that_stops_early_ends_it_quietly(tmp_path: Path) -> None:
    cases = tmp_path / "cases.txt"
    cases.write_text("4HPwATDgc/ABMA 31\n" * 20_000, encoding="ascii")
    errors = tmp_path / "errors.txt"
    done = subprocess.run(
        f"{shlex.quote(sys.executable)} -m backgammon < {cases} 2> {errors} | head -1;"
        " echo ${PIPESTATUS[0]}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    first, status = done.stdout.splitlines()
    assert len(first.split()) == 16
    assert status == "1"
    assert errors.read_text(encoding="utf-8") == ""  # no traceback
