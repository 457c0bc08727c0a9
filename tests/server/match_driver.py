"""Drive two scripted CLIP clients through whole matches, the way a simple bot would."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from backgammon.dice import Roll
from backgammon.moves import legal_plays
from backgammon.notation import format_moves
from protocol import replies
from protocol.board_fibs import parse_board

from .conftest import ScriptedClient


@dataclass
class Player:
    """One scripted client and what it saw."""

    client: ScriptedClient
    name: str
    boards: list[str] = field(default_factory=list)
    done: bool = False


async def play_out(a: Player, b: Player, *, limit: float = 60.0, pick: int = 0) -> None:
    """Both clients play (first legal play, ``pick``-th if there are more) until the
    match ends; every read under a timeout."""

    async def run(me: Player) -> None:
        while not me.done:
            line = await me.client.line(timeout=limit)
            await react(me, line)

    async def react(me: Player, line: str) -> None:
        if line == replies.ROLL_OR_DOUBLE:
            await me.client.send("roll")
        elif line.startswith("board:"):
            me.boards.append(line)
            view = parse_board(line)
            if view.turn is view.colour and view.player_dice != (0, 0) and view.can_move:
                position = view.position(0)
                plays = legal_plays(position, 0, Roll(*view.player_dice))
                play = plays[min(pick, len(plays) - 1)]
                await me.client.send("move " + format_moves(play.moves, view.colour))
        elif line == replies.JOIN_NEXT_GAME:
            await me.client.send("join")
        elif " point match " in line and (line.startswith("You win the ") or " wins the " in line):
            me.done = True

    try:
        await asyncio.wait_for(asyncio.gather(run(a), run(b)), limit)
    except TimeoutError:
        tail = {p.name: p.client.seen[-12:] for p in (a, b)}
        raise AssertionError(f"the match did not finish; last lines: {tail}") from None
