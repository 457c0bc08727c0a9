"""The complete example bot of docs/bots.md runs: it imports, decides and plays legally."""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from bots.strategy import ME, CubeAnswer
from protocol.board_fibs import parse_board
from tests.bots.fakefibs import board

DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def example(tmp_path: Path) -> ModuleType:
    text = DOC.read_text()
    section = text[text.index("## Writing a new bot") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    path = tmp_path / "racer.py"
    path.write_text(code.group(1))
    spec = importlib.util.spec_from_file_location("racer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_documented_example_bot_plays(tmp_path: Path) -> None:
    racer = example(tmp_path)
    make, close = await racer.factory(argparse.Namespace())
    strategy = make(0, "Racer")
    position, roll = Position.start(), Roll(6, 5)
    plays = legal_plays(position, ME, roll)
    view = parse_board(board(Colour.O, dice=(6, 5)))
    play = await strategy.choose_play(position, roll, plays, view)
    assert play in plays and play.result.pips(ME) == position.pips(ME) - 11
    assert await strategy.accept_invitation("x", 5)
    assert not await strategy.accept_invitation("x", None)
    assert not await strategy.should_double(view)
    assert await strategy.answer_double(view) is CubeAnswer.TAKE
    await close()
