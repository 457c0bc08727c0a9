"""protocol/ is pure: standard library, ``backgammon.board`` and itself only (architecture.md).

No asyncio, sockets, SQLAlchemy, telnetlib3 or ``server``/``db``/``bots`` (issue 3). Of the
rules core only ``backgammon.board`` is used, so protocol does not wait for the match
state machine.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol"
FORBIDDEN = {"asyncio", "socket", "selectors", "ssl", "telnetlib3", "sqlalchemy", "logging"}
ALLOWED_PROJECT = {"protocol", "backgammon.board"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_protocol_imports_only_stdlib_board_and_itself() -> None:
    files = sorted(PROTOCOL.glob("*.py"))
    assert files
    for path in files:
        for name in imported_modules(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN, (path.name, name)
            if top in ("protocol", "backgammon"):
                assert (
                    name == "protocol" or name.startswith("protocol.") or (name in ALLOWED_PROJECT)
                ), (path.name, name)
            else:
                assert top in sys.stdlib_module_names or top == "__future__", (path.name, name)
