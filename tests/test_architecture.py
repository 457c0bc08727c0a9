"""The import rules of shared/docs/architecture.md, enforced.

Imports flow ``backgammon <- protocol <- server -> db``; ``db`` may import
``backgammon``; ``bots`` use ``protocol`` and ``backgammon``, never ``server``.
``backgammon`` and ``protocol`` are pure: no asyncio, sockets, SQL or logging.
No module imports itself back through others (no import circle), telnetlib3 is
imported by the telnet module only and SQLAlchemy by ``db/`` only, so a second
transport or store is a module of its own (issue 15).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
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


TELNET_MODULE = "server/telnet.py"
"""The one module that may import telnetlib3: the telnet transport."""
SQL_PACKAGE = "db"
"""The one package that may import SQLAlchemy (and Alembic, its migrations)."""


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


def test_telnetlib3_is_imported_by_the_telnet_module_only() -> None:
    bad = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in _modules(package)
        if "telnetlib3" in _imports(path) and path.relative_to(ROOT).as_posix() != TELNET_MODULE
    ]
    assert not bad, f"telnetlib3 imported outside {TELNET_MODULE}: {bad}"


def test_sqlalchemy_is_imported_in_db_only() -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package in PACKAGES
        if package != SQL_PACKAGE
        for path in _modules(package)
        for name in _imports(path) & {"sqlalchemy", "alembic"}
    ]
    assert not bad, f"SQL outside {SQL_PACKAGE}/: {bad}"


# -- import circles ------------------------------------------------------------------


def _module_files(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` by dotted name; a package's
    ``__init__`` is the package itself."""
    files: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def _known(name: str, modules: Mapping[str, Path]) -> str | None:
    """The project module that ``import name`` names: ``name`` itself, or the longest
    dotted prefix of it that is a module; None for a module outside the project."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _absolute(node: ast.ImportFrom, module: str, path: Path) -> str:
    """The absolute module name of a ``from ... import`` (relative ones resolved)."""
    if node.level == 0:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def _import_graph(
    root: Path = ROOT, packages: Iterable[str] = PACKAGES
) -> dict[str, dict[str, str]]:
    """Which project modules each module imports, each with where the first such import
    stands (``file:line``).

    Every import statement counts wherever it stands: at module level, inside a
    function, under ``if TYPE_CHECKING:`` (a circle that only the type checker sees
    still ties the modules together, and a lazy import only hides one).
    ``from pkg import name`` imports the module ``pkg.name`` when there is one, else
    ``pkg``.
    """
    modules = _module_files(root, packages)
    graph: dict[str, dict[str, str]] = {}
    for module, path in modules.items():
        edges: dict[str, str] = {}
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str | None]
            if isinstance(node, ast.Import):
                targets = [_known(alias.name, modules) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, module, path)
                targets = [
                    f"{source}.{alias.name}"
                    if f"{source}.{alias.name}" in modules
                    else _known(source, modules)
                    for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target is not None and target != module:
                    edges.setdefault(target, f"{path.relative_to(root)}:{node.lineno}")
        graph[module] = edges
    return graph


def _circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): each is a set of modules that import one another in a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, successors = work[-1]
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = len(index)
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph.get(succ, ())))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def test_the_circle_finder_finds_circles_and_only_them() -> None:
    graph = {
        "a": ["b"],
        "b": ["c", "d"],
        "c": ["a"],
        "d": ["e"],
        "e": ["d", "f"],
        "f": [],
        "g": ["a"],
    }
    assert _circles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _circles({"a": ["b"], "b": ["c"], "c": []}) == []


def test_the_import_graph_counts_every_import(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "from pkg.a import thing\n",
        "pkg/a.py": "def f() -> None:\n    import pkg.b.deep\n",
        "pkg/b/__init__.py": "",
        "pkg/b/deep.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg import c\n"
            "from .. import a\n"
        ),
        "pkg/c.py": "import os\nfrom pkg import thing, b\nfrom pkg.b.deep import name\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = {module: set(edges) for module, edges in _import_graph(tmp_path, ["pkg"]).items()}
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b.deep"},
        "pkg.b": set(),
        "pkg.b.deep": {"pkg.c", "pkg.a"},
        "pkg.c": {"pkg", "pkg.b", "pkg.b.deep"},
    }
    assert _circles(graph) == [["pkg", "pkg.a", "pkg.b.deep", "pkg.c"]]


def test_no_import_circles() -> None:
    graph = _import_graph()
    circles = _circles(graph)
    described = []
    for circle in circles:
        members = set(circle)
        imports = [
            f"  {module} imports {target} ({where})"
            for module in circle
            for target, where in sorted(graph[module].items())
            if target in members
        ]
        described.append(f"{{{', '.join(circle)}}}:\n" + "\n".join(imports))
    assert not circles, "import circles:\n" + "\n".join(described)
