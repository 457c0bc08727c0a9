"""The chouette's own commands (docs/chouette.md; D303-D310): ``chouette open``,
``invite``, ``join``, ``start``, ``leave``, ``show``, ``team``, ``delegate``, ``return``
and ``record``.

The words are parsed here and sent through the table seam as commands of plain data
(:data:`server.tables.seam.ChouetteCommand`); the owner of the tables applies them.
The game actions at a chouette are the match's own commands (``roll``, ``move``,
``double``, ``accept``...), whose handlers send the same :data:`TableCommand`\\s.
"""

from __future__ import annotations

from protocol import replies
from protocol.chouette_view import chouette_word, parse_settings
from protocol.parser import ParsedCommand
from server.errors import Reply
from server.handlers import valid
from server.handlers.context import Context
from server.tables.seam import (
    ChouetteCommand,
    ChouetteDelegate,
    ChouetteInvite,
    ChouetteJoin,
    ChouetteLeave,
    ChouetteOpen,
    ChouetteRecord,
    ChouetteReturn,
    ChouetteShow,
    ChouetteStart,
    TeamTalk,
)


async def chouette(ctx: Context, cmd: ParsedCommand) -> None:
    """``chouette <word> ...``: a unique prefix of the word selects it; alone, ``show``."""
    word = valid(chouette_word(cmd.args))
    await ctx.app.tables.chouette(ctx.session, await _command(ctx, word, cmd))


async def _command(ctx: Context, word: str, cmd: ParsedCommand) -> ChouetteCommand:
    rest = cmd.args[1:]
    match word:
        case "open":
            return ChouetteOpen(valid(parse_settings(rest)))
        case "invite" | "join":
            if not rest:
                raise Reply(replies.CHOUETTE_USAGE)
            name = (await ctx.app.complete(rest[0])).name
            return ChouetteInvite(name) if word == "invite" else ChouetteJoin(name)
        case "start":
            return ChouetteStart()
        case "leave":
            return ChouetteLeave()
        case "delegate":
            return ChouetteDelegate((await ctx.app.complete(rest[0])).name if rest else None)
        case "return":
            return ChouetteReturn()
        case "record":
            return ChouetteRecord(rest[0] if rest else None)  # offline players too
        case "team":
            text = cmd.text_after(1)
            if not text:
                raise Reply(replies.CHOUETTE_USAGE)
            return TeamTalk(text)
        case _:
            shown = (await ctx.app.complete(rest[0])).name if rest else None
            return ChouetteShow(shown, ctx.clip)


async def show_chouette(ctx: Context, args: tuple[str, ...]) -> list[str]:
    """``show chouette [name]`` (D308): the lines come from the table's owner."""
    name = (await ctx.app.complete(args[0])).name if args else None
    await ctx.app.tables.chouette(ctx.session, ChouetteShow(name, ctx.clip))
    return []
