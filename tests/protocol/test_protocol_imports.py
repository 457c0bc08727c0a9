"""protocol/ is pure: the standard library, the rules core and itself only (architecture.md).

No asyncio, sockets, SQLAlchemy, telnetlib3 or ``server``/``db``/``bots`` (issue 3).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PROTOCOL = Path(__file__).resolve().parents[2] / "protocol"
FORBIDDEN = {"asyncio", "socket", "selectors", "ssl", "telnetlib3", "sqlalchemy", "logging"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_protocol_imports_only_stdlib_the_core_and_itself() -> None:
    files = sorted(PROTOCOL.glob("*.py"))
    assert files
    for path in files:
        for name in imported_modules(path):
            top = name.split(".")[0]
            assert top not in FORBIDDEN, (path.name, name)
            if top not in ("protocol", "backgammon"):
                assert top in sys.stdlib_module_names or top == "__future__", (path.name, name)
