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
        "aiohttp",
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
        "aiohttp",
        "threading",
        "subprocess",
        "selectors",
        "ssl",
    },
    "bots": {"sqlalchemy", "telnetlib3", "aiohttp"},
}


TELNET_MODULE = "server/doors/telnet.py"
"""The one module that may import telnetlib3: the telnet transport."""
WEB_MODULE = "server/doors/web.py"
"""The one module that may import aiohttp: the web door (the page and its WebSocket)."""
NATS_MODULE = "server/world/nats_bus.py"
"""The one module that may import nats: the bus between server nodes over NATS."""
SQL_PACKAGE = "db"
"""The one package that may import SQLAlchemy (and Alembic, its migrations, and asyncpg,
PostgreSQL's driver)."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _modules(package: str, root: Path = ROOT) -> list[Path]:
    return sorted((root / package).rglob("*.py"))


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


CONFINED = {
    "telnetlib3": TELNET_MODULE,
    "aiohttp": WEB_MODULE,
    "nats": NATS_MODULE,
}
"""Libraries one module alone may import, and that module."""


@pytest.mark.parametrize("library", sorted(CONFINED))
def test_a_confined_library_is_imported_by_its_module_only(library: str) -> None:
    module = CONFINED[library]
    bad = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in _modules(package)
        if library in _imports(path) and path.relative_to(ROOT).as_posix() != module
    ]
    assert not bad, f"{library} imported outside {module}: {bad}"


def test_sqlalchemy_is_imported_in_db_only() -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {name}"
        for package in PACKAGES
        if package != SQL_PACKAGE
        for path in _modules(package)
        for name in _imports(path) & {"sqlalchemy", "alembic", "asyncpg"}
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


# -- the rooms of server/ --------------------------------------------------------------

SERVER_LAYERS: tuple[tuple[str, ...], ...] = (
    ("server.config", "server.clock", "server.errors", "server.memory"),
    ("server.doors",),
    ("server.world",),
    ("server.analysis",),
    ("server.tables",),
    ("server.app",),
    ("server.login",),
    ("server.handlers",),
    ("server.connection",),
    ("server.service",),
    ("server.__main__",),
)
"""The rooms of ``server/``, lowest first (docs/architecture.md, "The import rule"): the
ground (settings, the clock, ``Reply``, memory), the doors (the transport seam and what
carries it), the world of users (the presence seam), the analysis of finished matches
(gnubg's workers, which the tables feed), the tables (running matches), the
App that wires them, the login dialog, the handlers (dispatch and the commands), the
connection loop, the service and the command line. A room is a sub-package or a top-level
module; a module may import its own sub-package and the rooms below its own."""

UPWARD: dict[tuple[str, str], str] = {
    ("server.world.visitors", "server.app"): "a visitor enters with the App's presence, "
    "settings and clock, as a login does",
}
"""Imports of a higher room that stay for now, each with why."""


def _room(module: str) -> str | None:
    """The room of a ``server`` module (:data:`SERVER_LAYERS`), None for ``server`` itself."""
    parts = module.split(".")
    if len(parts) > 2 and f"server.{parts[1]}" in _ROOMS:
        return f"server.{parts[1]}"
    return module if module in _ROOMS else None


_ROOMS = {room: level for level, rooms in enumerate(SERVER_LAYERS) for room in rooms}


def _upward_imports(graph: Mapping[str, Mapping[str, str]]) -> list[str]:
    """Each import of :data:`SERVER_LAYERS`' rooms that goes up or sideways, not allowed
    by :data:`UPWARD`, as ``module imports target (file:line)``."""
    found = []
    for module, targets in sorted(graph.items()):
        room = _room(module)
        if room is None:
            continue
        for target, where in sorted(targets.items()):
            other = _room(target)
            if other is None or other == room or (module, target) in UPWARD:
                continue
            if _ROOMS[other] >= _ROOMS[room]:
                found.append(f"{module} imports {target} ({where})")
    return found


def test_every_server_module_has_a_room() -> None:
    modules = [m for m in _import_graph() if m.startswith("server.")]
    assert [m for m in modules if _room(m) is None] == []


def test_the_rooms_of_server_import_downwards_only() -> None:
    graph = _import_graph()
    found = _upward_imports(graph)
    assert not found, "upward imports in server/ (see SERVER_LAYERS):\n" + "\n".join(found)
    stale = sorted(f"{a} -> {b}" for a, b in UPWARD if b not in graph.get(a, {}))
    assert not stale, f"UPWARD entries no longer imported: {stale}"


def test_the_room_rule_finds_an_upward_import() -> None:
    graph = {
        "server.doors.telnet": {"server.world.session": "telnet.py:1"},
        "server.world.session": {"server.doors.output": "session.py:2"},
        "server.tables.match_flow": {"server.app": "match_flow.py:3"},
        "server.world.visitors": {"server.app": "visitors.py:6"},
        "server.clock": {"server.config": "clock.py:4"},
        "server.handlers.chat": {"server.handlers.context": "chat.py:5"},
    }
    assert _upward_imports(graph) == [
        "server.clock imports server.config (clock.py:4)",
        "server.doors.telnet imports server.world.session (telnet.py:1)",
        "server.tables.match_flow imports server.app (match_flow.py:3)",
    ]


# -- client-visible text in server/ ---------------------------------------------------

OPERATOR_MODULES = {
    "server/__main__.py": "the command line: argparse and the operator's terminal",
    "server/config.py": "fibs.conf's keys and the operator's configuration errors",
    "server/analysis/gnubg.py": "gnubg's command line, its script and its files: what the "
    "server says to GNU Backgammon, never to a client",
    "server/analysis/worker.py": "the analysis worker process's wire to the server",
    "server/analysis/workers.py": "the worker processes' command line and wire: what the "
    "server says to its analysis workers, never to a client",
}
"""Modules of server/ whose text is the operator's, never a client's."""

LOG_METHODS = frozenset({"debug", "info", "warning", "error", "exception", "critical", "log"})
CLIENT_ERRORS = frozenset({"Reply"})
"""The exceptions whose text a client reads (server/errors.py); any other raised
exception is an internal error, its message for logs and tracebacks."""
NAME_CALLS = frozenset(
    {
        "getattr",
        "setattr",
        "hasattr",
        "delattr",
        "cast",
        "TypeVar",
        "TypeVarTuple",
        "ParamSpec",
        "NewType",
        "ContextVar",
        "getLogger",
        "import_module",
        "version",
        "float",
        "open",
        "Path",
        "compile",
        "match",
        "fullmatch",
        "search",
        "sub",
        "encode",
        "decode",
        "get_extra_info",
    }
)
"""Calls whose string arguments name things for Python or the standard library
(attributes, type variables, loggers, modules, codecs, files, regular expressions)."""
KEY_METHODS = frozenset({"get", "setdefault", "pop"})
"""Methods whose first argument is a key: the string is an identifier."""
NAME_KEYWORDS = frozenset({"encoding", "errors", "encoding_errors"})
"""Keyword arguments whose string value is an identifier (a codec, a toggle's name)."""
NAME_CONSTANTS: dict[str, str] = {
    "TELNETLIB3_INTERNALS": "telnetlib3's internal attribute and parameter names",
    "TELNETLIB3_VERSIONS": "the telnetlib3 versions those internals were read from",
    "AIOHTTP_VERSIONS": "the aiohttp versions the web door was tested with",
    "READER_FACTORY_KEYWORD": "the name of a telnetlib3 keyword argument",
    "WRITER_FACTORY_KEYWORD": "the name of a telnetlib3 keyword argument",
    "ENCODING": "a codec's name (every connection's encoding)",
    "CHARSETS": "character set names of the telnet CHARSET negotiation (RFC 2066): identifiers",
    "UNBOUND": "why a table command has no handler: for tests and readers of the code",
    "WS_PATH": "a URL path of the web door (HTTP routing)",
    "NATS_WIRE": "NATS subject and connection names, a packet's length format: between nodes",
    "PAGE_PATH": "a URL path of the web door (HTTP routing)",
    "STATIC_PATH": "a URL path of the web door (HTTP routing)",
    "STATIC_FOLDER": "the folder of the page's files",
    "PAGE": "the page's file name",
    "CONTENT_TYPES": "HTTP media types of the page's files (framing)",
    "SECURITY_HEADERS": "HTTP header values for browsers (framing)",
    "FRAME_HEADERS": "struct formats of WebSocket frame headers (framing)",
    "PAYLOAD_FORM": "the web door's key in a Payload's cache",
    "WS_VERSION": "the WebSocket version token of RFC 6455 §4.1 (framing)",
    "WS_VERSION_HEADERS": "HTTP header values of the 426 answer (RFC 6455 §4.4, framing)",
    "HTTP_STATUS_LINE": "the form of an HTTP status line (RFC 9112 §4, framing)",
    "HTTP_FIELD": "the form of an HTTP header field (RFC 9112 §5, framing)",
    "PLAIN_TEXT": "an HTTP media type (framing)",
    "CONNECTION_CLOSE": "an HTTP connection option (RFC 9112 §9.6, framing)",
    "V2_HEAD": "the struct format of a PROXY v2 header's fixed part (framing)",
    "V2_ADDRESSES": "the struct formats of a PROXY v2 header's addresses (framing)",
    "TIMED_OUT": "why a connection without a PROXY header was closed: logged, never sent",
}
"""Module constants whose strings are names or notes for developers, never sent, with why."""
PARSE_METHODS = frozenset(
    {
        "split",
        "rsplit",
        "partition",
        "rpartition",
        "strip",
        "lstrip",
        "rstrip",
        "startswith",
        "endswith",
        "removeprefix",
        "removesuffix",
        "find",
        "rfind",
        "index",
        "count",
    }
)
"""String methods that take input apart: their arguments are words read, not written."""

MUST_STAY: dict[tuple[str, str], str] = {
    ("server/tables/matches.py", ","): "the stored JSON's separators (storage, never sent)",
    ("server/tables/matches.py", ":"): "the stored JSON's separators (storage, never sent)",
    ("server/tables/matches.py", "}"): "the saved state's JSON text (storage, never sent)",
    (
        "server/tables/matches.py",
        '{"version":',
    ): "the saved state's JSON text (storage, never sent)",
    ("server/tables/matches.py", ',"games":'): "the saved state's JSON text (storage, never sent)",
    ("server/tables/matches.py", ',"events":'): "the saved state's JSON text (storage, never sent)",
    ("server/tables/matches.py", ',"match":'): "the saved state's JSON text (storage, never sent)",
    ("server/world/passwords.py", "fibs-hash"): "the hashing threads' name",
    ("server/world/passwords.py", "scrypt$"): "the stored password hash's format",
    ("server/world/passwords.py", "$"): "the stored password hash's format",
    ("server/doors/throttle.py", "name:"): "a login throttle key's prefix, never sent",
    ("server/doors/throttle.py", "addr:"): "a login throttle key's prefix, never sent",
    ("server/doors/throttle.py", "pair:"): "a login throttle key's prefix, never sent",
    ("server/doors/throttle.py", " "): "a login throttle key's separator, never sent",
    ("server/doors/telnet.py", "\r"): "the input's line-end characters (framing, not text)",
    ("server/doors/telnet.py", "\n"): "the input's line-end characters (framing, not text)",
    ("server/doors/telnet.py", "\x00"): "the input's line-end characters (framing, not text)",
    ("server/doors/telnet.py", "/proc/sys/net/core/somaxconn"): "a kernel file the server reads",
    ("server/doors/output.py", "\r\n"): "the line end every transport writes (framing, not text)",
    ("server/doors/output.py", "\x00<too long>\x00"): "the reader's in-band marker, never sent",
    ("server/handlers/dispatch.py", " ***"): "a logged line's hidden password, never sent",
    ("server/handlers/dispatch.py", "***"): "a logged dialog line (a password) hidden, never sent",
}
"""Literals of server/ that no client reads although the rules above cannot tell, each
with why it stays."""


def _skipped_and_parsed(tree: ast.AST) -> tuple[set[int], set[int]]:
    """The ids of the string constants of ``tree`` that no client reads, and of those
    that are words read from input (compared, or taken apart with)."""
    skipped: set[int] = set()
    parsed: set[int] = set()

    def mark(node: ast.AST | None, into: set[int]) -> None:
        if node is not None:
            into.update(id(sub) for sub in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            mark(node, skipped)  # a docstring, or an attribute's
        elif isinstance(node, ast.arg):
            mark(node.annotation, skipped)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation, skipped)
            if isinstance(node.target, ast.Name) and node.target.id in NAME_CONSTANTS:
                mark(node.value, skipped)
        elif isinstance(node, ast.Assert):
            mark(node.msg, skipped)  # an internal error's message, like a raise's
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            mark(getattr(node, "returns", None), skipped)
            for decorator in node.decorator_list:  # @handles("roll"): a command's name
                mark(decorator, skipped)
        elif isinstance(node, ast.Raise):
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if exc is not None and ast.unparse(exc).rpartition(".")[2] not in CLIENT_ERRORS:
                mark(node, skipped)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else ast.unparse(func)
            receiver = ast.unparse(func.value) if isinstance(func, ast.Attribute) else ""
            if (name in LOG_METHODS and "log" in receiver.lower()) or name in NAME_CALLS:
                mark(node, skipped)
            elif name in KEY_METHODS and node.args:
                mark(node.args[0], skipped)
            elif name in PARSE_METHODS:
                for argument in node.args:
                    mark(argument, parsed)
        elif isinstance(node, ast.keyword) and node.arg in NAME_KEYWORDS:
            mark(node, skipped)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                mark(key, skipped)
        elif isinstance(node, ast.Subscript):
            mark(node.slice, skipped)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("__all__", "__slots__", *NAME_CONSTANTS)
            for t in node.targets
        ):
            mark(node, skipped)
        elif isinstance(node, ast.FormattedValue):
            mark(node.format_spec, skipped)
        elif isinstance(node, ast.Compare):
            mark(node, parsed)
        elif isinstance(node, ast.match_case):
            mark(node.pattern, parsed)
    return skipped, parsed


def _server_literals(root: Path = ROOT, *, parsed: bool = False) -> list[tuple[str, int, str]]:
    """The string literals of server/ that could reach a client, as (file, line, text);
    with ``parsed``, instead the words that server/ reads from input.

    Not counted: docstrings, annotations, logging, internal errors' messages (any raised
    exception but :class:`server.errors.Reply`, and ``assert`` messages), the constants
    of :data:`NAME_CONSTANTS`, keys and names (dict keys, subscripts,
    ``get``/``pop`` keys, attribute, logger, codec, module and toggle names, ``__all__``,
    ``__slots__``), command names of handler decorators, format specs, regular
    expressions, empty strings, the operator's modules (:data:`OPERATOR_MODULES`) and
    :data:`MUST_STAY`. Comparisons, ``match`` patterns and the arguments of string
    methods that take input apart are words read, listed with ``parsed``.
    """
    found: list[tuple[str, int, str]] = []
    for path in _modules("server", root):
        where = path.relative_to(root).as_posix()
        if where in OPERATOR_MODULES:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        skipped, read = _skipped_and_parsed(tree)
        wanted = read if parsed else None
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
                continue
            if not node.value:
                continue
            if wanted is not None:
                keep = id(node) in wanted
            else:
                keep = id(node) not in skipped and id(node) not in read
                keep = keep and (where, node.value) not in MUST_STAY
            if keep:
                found.append((where, node.lineno, node.value))
    return sorted(found)


def test_the_literal_finder_tells_text_from_names() -> None:
    source = '''"""A docstring."""
log = logging.getLogger("name")
__all__ = ["thing"]


@handles("roll")
def f(session: "Session", words: list[str]) -> None:
    """A docstring."""
    log.info("logged %s", "too")
    if words[0] == "on" or words[1].startswith("-"):
        raise ValueError("internal")
    session.toggles[Toggle.READY] = True
    session.send(f"{42:>5}" + {"key": "You"}.get("key", "bar"))
    raise Reply("** Sorry.")
'''
    tree = ast.parse(source)
    skipped, parsed = _skipped_and_parsed(tree)
    texts = [
        (node.value, "parsed" if id(node) in parsed else "skipped" if id(node) in skipped else "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert sorted(t for t, kind in texts if not kind) == ["** Sorry.", "You", "bar"]
    assert sorted(t for t, kind in texts if kind == "parsed") == ["-", "on"]


def test_the_literal_finder_finds_a_new_literal_in_server(tmp_path: Path) -> None:
    """The enforced test below can fail: a handler that writes its own text is found, in
    a module of its own or next to what the rules skip and :data:`MUST_STAY` allows."""
    handler = tmp_path / "server" / "handlers" / "sample.py"
    handler.parent.mkdir(parents=True)
    handler.write_text(
        '"""A sample handler."""\n'
        "async def hello(ctx: Context, cmd: ParsedCommand) -> None:\n"
        '    assert ctx.session.name, "an internal note"\n'
        '    ctx.session.send("Hello there." if cmd.args else replies.HELLO)\n'
    )
    (tmp_path / "server" / "doors").mkdir()
    (tmp_path / "server" / "doors" / "output.py").write_text('END = "\\r\\n"\nBYE = "Goodbye."\n')
    assert _server_literals(tmp_path) == [
        ("server/doors/output.py", 2, "Goodbye."),
        ("server/handlers/sample.py", 4, "Hello there."),
    ]


def test_no_client_visible_literal_in_server() -> None:
    found = _server_literals()
    assert not found, "client-visible literals in server/ (move them to protocol/):\n" + "\n".join(
        f"{where}:{line}: {text!r}" for where, line, text in found
    )
    present = {
        (path.relative_to(ROOT).as_posix(), node.value)
        for path in _modules("server")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    stale = sorted(set(MUST_STAY) - present)
    assert not stale, f"MUST_STAY entries no longer in server/: {stale}"


if __name__ == "__main__":
    # What the literal test finds (and the words server/ reads), for a change that moves some.
    for title, literals in (
        ("client-visible literals", _server_literals()),
        ("words read from input", _server_literals(parsed=True)),
    ):
        print(f"# {title}: {len(literals)}")
        for where, line, text in literals:
            print(f"{where}:{line}: {text!r}")
