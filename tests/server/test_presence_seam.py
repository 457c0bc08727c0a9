"""Handlers reach other users only through the presence (server/world/presence.py).

A command writes its own replies to its own session (``ctx.session``, or a parameter
typed :class:`~server.world.session.Session`: the modules the match commands call take the
caller's session so); every line to another user, every change of another user's state
and every look-up of who is online goes through ``ctx.app.presence``. So a presence back
end over a message bus (users on other server nodes) serves every handler unchanged.
mypy checks the types (a :class:`~server.world.presence.Peer` has no ``send`` and its
attributes are read-only, ``LiveMatch.watchers`` holds names); this checks what the
types cannot: that no handler, nor a module they rely on, reaches the process's own
session table (``app.registry``, server/world/registry.py) or writes to a session that is not
the caller's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = ROOT / "server" / "handlers"

NOT_YET: dict[str, str] = {}
"""Handler modules that still reach sessions directly, each with the reason (none now)."""

SEAM_USERS = [
    ROOT / "server" / name
    for name in (
        "login.py",
        "connection.py",
        "tables/match_lifecycle.py",
        "tables/match_flow.py",
        "tables/match_timers.py",
        "tables/match_boards.py",
        "tables/announce.py",
        "tables/settle.py",
        "tables/matches.py",
    )
]
"""Modules outside the handlers that reach the others through the presence only."""

OWN_OUTPUT = {
    "login.py": "writes to its connection's output before the session is logged in (the "
    "login dialog, a replaced session's goodbye): checked for the registry only",
}
"""Modules of :data:`SEAM_USERS` whose writes the check cannot tell apart, with the reason."""

WRITES = frozenset(
    {"send", "send_lines", "send_payload", "enter_lobby", "start_playing", "start_watching"}
)
"""Session methods that write to a user or change their state."""


def _is_ctx_attr(node: ast.expr, attr: str) -> bool:
    """``ctx.<attr>``."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attr
        and isinstance(node.value, ast.Name)
        and node.value.id == "ctx"
    )


OWN_TYPES = frozenset({"Session", "Caller"})
"""The types of the caller's own session: their ``Session``, or the ``Caller`` the table
modules take (a remote caller's writes go to their own node, server.world.cluster)."""


def _bound_names(function: ast.AST) -> tuple[set[str], set[str]]:
    """Names a function binds to its own session and to the presence: ``ctx.session``,
    parameters and variables typed ``Session`` or ``Caller`` (of it or of the functions
    in it), the presence."""
    own: set[str] = set()
    presence: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            annotation = node.annotation
            if isinstance(annotation, ast.Name) and annotation.id in OWN_TYPES:
                own.add(node.arg)
            elif isinstance(annotation, ast.Name) and annotation.id == "Presence":
                presence.add(node.arg)
            continue
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(node.annotation, ast.Name) and node.annotation.id in OWN_TYPES:
                own.add(node.target.id)
            continue
        if not isinstance(node, ast.Assign):
            continue
        targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if _is_ctx_attr(node.value, "session"):
            own.update(targets)
        elif isinstance(node.value, ast.Attribute) and node.value.attr == "presence":
            presence.update(targets)
    return own, presence


def _outermost_functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions not inside another function: a nested one (a timer's callback) is
    checked with the names its enclosing function binds, which it may use."""
    functions = [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    nested = {
        id(inner)
        for outer in functions
        for inner in ast.walk(outer)
        if inner is not outer and isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return [f for f in functions if id(f) not in nested]


def problems(source: str, *, handler: bool = True) -> list[str]:
    """Where ``source`` reaches other sessions around the presence."""
    tree = ast.parse(source)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in (
            "server.world.registry",
            "server.world",
        ):
            if node.module == "server.world.registry" or any(
                a.name == "registry" for a in node.names
            ):
                found.append(f"line {node.lineno}: imports server.world.registry")
        elif isinstance(node, ast.Import) and any(
            a.name == "server.world.registry" for a in node.names
        ):
            found.append(f"line {node.lineno}: imports server.world.registry")
        elif isinstance(node, ast.Attribute) and node.attr == "registry":
            found.append(f"line {node.lineno}: reads .registry, not the presence")
    if not handler:
        return found
    for function in _outermost_functions(tree):
        own, presence = _bound_names(function)
        for call in ast.walk(function):
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr in WRITES
            ):
                continue
            receiver = call.func.value
            if _is_ctx_attr(receiver, "session"):
                continue
            if isinstance(receiver, ast.Name) and receiver.id in own | presence:
                continue
            if isinstance(receiver, ast.Attribute) and receiver.attr == "presence":
                continue
            found.append(
                f"line {call.lineno}: {ast.unparse(call.func)}() on a session other than "
                "ctx.session (use ctx.app.presence)"
            )
    return found


def _handler_modules() -> list[Path]:
    return sorted(p for p in HANDLERS.glob("*.py") if p.name not in NOT_YET)


@pytest.mark.parametrize("path", _handler_modules(), ids=lambda p: p.name)
def test_handlers_reach_other_users_only_through_the_presence(path: Path) -> None:
    assert problems(path.read_text()) == []


@pytest.mark.parametrize("path", SEAM_USERS, ids=lambda p: p.name)
def test_login_cleanup_and_the_match_modules_use_the_presence(path: Path) -> None:
    assert problems(path.read_text(), handler=path.name not in OWN_OUTPUT) == []


def test_the_exceptions_are_real_modules() -> None:
    """An exception for a module that is gone (or was renamed) must go too."""
    for name in NOT_YET:
        assert (HANDLERS / name).exists(), name
    for path in SEAM_USERS:
        assert path.exists(), path
    assert set(OWN_OUTPUT) <= {p.name for p in SEAM_USERS}


@pytest.mark.parametrize(
    "source",
    [
        "from server.world.registry import WHO_END",
        "from server.world import registry",
        "import server.world.registry",
        "def f(ctx):\n    return len(ctx.app.registry)",
        "async def tell(ctx, cmd):\n    target = ctx.app.presence.get('bob')\n"
        "    target.send('hi')",
        "def f(ctx):\n    for s in ctx.app.presence.users():\n        s.enter_lobby()",
        "def f(ctx, other):\n    session = ctx.session\n    other.send_lines(['x'])",
        # The match modules: the caller's session is a parameter typed Session.
        "def finish(app, live):\n    for w in live.watchers:\n        w.enter_lobby()",
        "def leave(app: App, session: Session, other: Peer):\n    other.send('bye')",
        "def send(presence: Presence, outbox):\n    for peer, p in outbox:\n"
        "        peer.send_payload(p)",
        "def watch(app, session: Session):\n    def later(target):\n"
        "        target.send('x')\n    return later",
    ],
)
def test_the_check_finds_a_handler_that_goes_around_the_presence(source: str) -> None:
    assert problems(source) != []


def test_the_check_lets_a_handler_write_to_itself_and_through_the_presence() -> None:
    source = (
        "async def tell(ctx, cmd):\n"
        "    session = ctx.session\n"
        "    presence = ctx.app.presence\n"
        "    target = presence.complete(cmd.args[0])\n"
        "    presence.send(target, 'hi')\n"
        "    ctx.app.presence.send_lines(target, ['there'])\n"
        "    session.send('told')\n"
        "    ctx.session.send_lines(['ok'])\n"
    )
    assert problems(source) == []


def test_the_check_lets_a_match_module_write_to_its_caller_and_through_the_presence() -> None:
    source = (
        "def watch(app: App, session: Session, name: str) -> None:\n"
        "    target = app.presence.complete(name)\n"
        "    session.start_watching(target.name)\n"
        "    app.presence.send(target, 'hi')\n"
        "    def later() -> None:\n"
        "        session.send('still there')\n"
        "def send(presence: Presence, outbox: Outbox) -> None:\n"
        "    for peer, payload in outbox:\n"
        "        presence.send_payload(peer, payload)\n"
    )
    assert problems(source) == []
