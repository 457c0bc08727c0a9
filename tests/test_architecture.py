"""The import rule of shared/docs/architecture.md, enforced.

Imports flow ``backgammon <- protocol <- server -> db``; ``db`` may import
``backgammon``; ``bots`` use ``protocol`` and ``backgammon``, never ``server``.
``backgammon`` and ``protocol`` are pure: no asyncio, sockets, SQL or logging.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("backgammon", "protocol", "server", "db", "bots")
ALLOWED = {
    "backgammon": set(),
    "protocol": {"backgammon"},
    "server": {"backgammon", "protocol", "db"},
    "db": {"backgammon"},
    "bots": {"backgammon", "protocol"},
}
FORBIDDEN_EXTERNAL = {
    "backgammon": {
        "asyncio",
        "socket",
        "logging",
        "sqlalchemy",
        "telnetlib3",
        "threading",
        "subprocess",
        "selectors",
        "ssl",
    },
    "protocol": {
        "asyncio",
        "socket",
        "logging",
        "sqlalchemy",
        "telnetlib3",
        "threading",
        "subprocess",
        "selectors",
        "ssl",
    },
    "bots": {"sqlalchemy", "telnetlib3"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_flow_the_allowed_way(package: str) -> None:
    bad = []
    for path in _modules(package):
        for name in _imports(path):
            if name in PACKAGES and name != package and name not in ALLOWED[package]:
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
            if name in FORBIDDEN_EXTERNAL.get(package, set()):
                bad.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not bad, bad


def test_the_rules_core_uses_the_standard_library_only() -> None:
    stdlib = set(sys.stdlib_module_names) | {"backgammon", "__future__"}
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules("backgammon")
        for name in _imports(path)
        if name not in stdlib
    ]
    assert not bad, bad
