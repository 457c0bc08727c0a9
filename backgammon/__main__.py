"""Command-line tool: legal plays for a position, for analysis and checking against gnubg.

``python -m backgammon moves POSITION_ID ROLL``
    One legal play a line: the FIBS move text (the player on roll taken as O, so the
    numbers are that player's own points), a TAB, and the gnubg Position ID of the
    result seen from the same player (not swapped). Nothing when no play is possible.

``python -m backgammon`` (no arguments)
    Reads ``POSITION_ID ROLL`` lines from standard input and answers each with one
    line: the sorted, space-separated Position IDs of all distinct results (an empty
    line when there is none).

Bad input gets a one-line error on standard error and exit status 2; ``--help`` prints
what the tool does. A reader that stops early (``| head``) ends it quietly.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.errors import BackgammonError
from backgammon.moves import Play, legal_plays
from backgammon.notation import decode_position_id, encode_position_id, format_moves

USAGE = "usage: python -m backgammon [moves POSITION_ID ROLL]"
HELP = f"""{USAGE}

Legal plays of backgammon positions (gnubg Position IDs; the player on roll is FIBS's O,
so move numbers are that player's own points).

  python -m backgammon moves POSITION_ID ROLL
      one legal play a line: the FIBS move text, a TAB, the result's Position ID
      (seen from the same player, not swapped); nothing when no play is possible.
      Example: python -m backgammon moves 4HPwATDgc/ABMA 31
  python -m backgammon < cases.txt
      with no arguments: reads 'POSITION_ID ROLL' lines from standard input (until
      end of input, Ctrl-D at a terminal) and answers each with one line, the sorted
      Position IDs of every distinct result (an empty line when there is none).

Bad input: one line on standard error, exit status 2."""
STDIN_HINT = (
    "python -m backgammon: reading 'POSITION_ID ROLL' lines from standard input; "
    "Ctrl-D ends, --help explains"
)


def _plays(position_id: str, roll_text: str) -> list[Play]:
    position: Position = decode_position_id(position_id, on_roll=0)
    return legal_plays(position, 0, Roll.parse(roll_text))


def _moves_command(position_id: str, roll_text: str, out: TextIO) -> None:
    plays = _plays(position_id, roll_text)
    lines = sorted(
        f"{format_moves(p.moves, Colour.O)}\t{encode_position_id(p.result, 0)}" for p in plays
    )
    out.writelines(line + "\n" for line in lines)


def _batch(source: TextIO, out: TextIO) -> None:
    for number, line in enumerate(source, start=1):
        words = line.split()
        if len(words) != 2:
            raise BackgammonError(
                f"line {number}: expected 'POSITION_ID ROLL', got {line.strip()!r}"
            )
        try:
            plays = _plays(words[0], words[1])
        except BackgammonError as exc:
            raise BackgammonError(f"line {number}: {exc}") from exc
        out.write(" ".join(sorted(encode_position_id(p.result, 0) for p in plays)) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help", "help"):
        print(HELP)
        return 0
    try:
        if not args:
            if sys.stdin.isatty():
                print(STDIN_HINT, file=sys.stderr)
            _batch(sys.stdin, sys.stdout)
        elif args[0] == "moves" and len(args) == 3:
            _moves_command(args[1], args[2], sys.stdout)
        else:
            print(USAGE, file=sys.stderr)
            return 2
    except BackgammonError as exc:
        sys.stdout.flush()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly. Python would report the
        # failed flush of standard output at exit, so point it at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
