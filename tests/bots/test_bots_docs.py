"""The complete example bot of docs/bots.md runs: it imports, decides and plays legally."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from backgammon.board import Colour, Position
from backgammon.dice import Roll
from backgammon.moves import legal_plays
from bots.random import RandomStrategy
from bots.strategy import ME, CubeAnswer
from protocol.board_fibs import parse_board
from tests.bots.fakefibs import board
from tests.bots.test_bots_e2e import (
    check_match_over,
    finish,
    make_bot,
    play_match,
    running,
    serving,
    winner_of,
)
from tests.conftest import DbTarget

DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def example(tmp_path: Path) -> ModuleType:
    text = DOC.read_text()
    section = text[text.index("## Writing a new bot") :]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)  # the first: racer.py
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


def snippets(language: str) -> list[str]:
    """The ``language`` code blocks of docs/bots.md, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), re.DOTALL | re.MULTILINE)


async def test_the_example_bot_beats_the_random_bot_quickly(
    tmp_path: Path, db_target: DbTarget
) -> None:
    """A 3-point match against ``python -m bots.random``'s strategy, well under a minute."""
    racer = example(tmp_path)
    async with asyncio.timeout(60), serving(db_target, dice_seed=3) as app:
        bot = make_bot(app.port, "racer", racer.RacerStrategy(), invite="rando", length=3)
        rando = make_bot(app.port, "rando", RandomStrategy(3))
        await play_match([bot, rando], limit=30.0)
        assert winner_of([bot, rando]) == (bot, rando)
        check_match_over(bot, rando, 3)


async def test_the_embedding_snippet_plays_a_match(tmp_path: Path, db_target: DbTarget) -> None:
    """The second snippet, run as written, with the first one's ``RacerStrategy``."""
    racer = example(tmp_path)
    namespace: dict[str, object] = {"RacerStrategy": racer.RacerStrategy}
    exec(compile(snippets("python")[1], str(DOC), "exec"), namespace)
    play_one_match = namespace["play_one_match"]
    assert callable(play_one_match)
    async with asyncio.timeout(60), serving(db_target, dice_seed=4) as app:
        rando = make_bot(app.port, "rando", RandomStrategy(4), invite="Racer", length=1)
        async with running([rando]) as tasks:
            await asyncio.wait_for(play_one_match("127.0.0.1", app.port), 30.0)
            await finish([rando], tasks, 30.0)
        assert rando.client.matches_finished == 1
