"""Commands reach the tables only through the table seam (server/tables/seam.py).

A handler sends the owner of the tables what its user asked for (``ctx.app.tables``: a
:class:`~server.tables.seam.Tables`, commands as data) and reads of them only plain values;
it never holds a running match, its lock or its watchers, nor the process's own tables
(``app.local_tables``). So an owner of tables on another node serves every handler
unchanged. mypy checks the types (``App.tables`` is the interface); this checks what the
types cannot: that no handler, nor the connection loop or the login, imports a table
module other than the seam or reaches into the tables' state.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SEAM_USERS = sorted(
    [
        *(ROOT / "server" / "handlers").glob("*.py"),
        ROOT / "server" / "connection.py",
        ROOT / "server" / "login.py",
        ROOT / "server" / "service.py",
    ]
)
"""The modules above the tables that reach them through the seam only."""

SEAM_MODULE = "server.tables.seam"
"""The one module of server/tables/ those may import: the interface and its data."""

STATE = frozenset(
    {"matches", "invitations", "chouettes", "local_tables", "watchers", "lock", "match", "core"}
)
"""Attributes of the tables' state (``LiveMatch.match``, ``LiveChouette.core``,
``.watchers``, ``.lock``, the owner's dicts, the process's own tables) that no seam user
reads."""

TABLE_TYPES = frozenset({"LiveMatch", "LiveChouette", "Invitation", "LocalTables", "TableHost"})
"""The owner's types, which no seam user names."""


def problems(source: str) -> list[str]:
    """Where ``source`` goes around the table seam."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.startswith("server.tables") and node.module != SEAM_MODULE:
                found.append(f"line {node.lineno}: imports {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("server.tables") and alias.name != SEAM_MODULE:
                    found.append(f"line {node.lineno}: imports {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr in STATE:
            found.append(f"line {node.lineno}: reads .{node.attr}")
        elif isinstance(node, ast.Name) and node.id in TABLE_TYPES:
            found.append(f"line {node.lineno}: names {node.id}")
    return found


@pytest.mark.parametrize("path", SEAM_USERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_above_the_tables_goes_around_the_seam(path: Path) -> None:
    assert problems(path.read_text()) == []


@pytest.mark.parametrize(
    "source",
    [
        "from server.tables.match_lifecycle import send_board",
        "from server.tables import match_lifecycle",
        "import server.tables.local",
        "live = ctx.app.matches.get(ctx.session.name)",
        "inviters = ctx.app.invitations",
        "ctx.app.local_tables.matches.clear()",
        "live.watchers.discard(name)",
        "score = live.match.score",
        "locked = live.lock.locked()",
        "def f(live: LiveMatch) -> None: ...",
    ],
)
def test_the_check_finds_a_handler_that_goes_around_the_seam(source: str) -> None:
    assert problems(source) != []


def test_the_check_passes_a_handler_that_uses_the_seam() -> None:
    source = (
        "from server.tables.seam import Moves, Roll\n"
        "async def move(ctx, cmd):\n"
        "    await ctx.app.tables.act(ctx.session, Moves(' '.join(cmd.args)))\n"
        "    for game in ctx.app.tables.games():\n"
        "        ctx.session.send(game.names[0])\n"
    )
    assert problems(source) == []
