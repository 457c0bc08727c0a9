"""The command table and the handlers agree both ways (server/bindings.py)."""

from __future__ import annotations

import inspect

from protocol.commands import COMMANDS, NOBODY
from server.bindings import BINDINGS, UNBOUND


def test_every_table_command_has_a_handler_or_a_reason() -> None:
    missing = set(COMMANDS) - set(BINDINGS) - set(UNBOUND)
    assert not missing, f"table commands without a handler: {sorted(missing)}"


def test_every_handler_has_a_table_entry() -> None:
    unknown = (set(BINDINGS) | set(UNBOUND)) - set(COMMANDS)
    assert not unknown, f"bound names the table does not know: {sorted(unknown)}"


def test_a_command_is_either_bound_or_unbound() -> None:
    assert not set(BINDINGS) & set(UNBOUND)


def test_commands_no_state_allows_stay_unbound() -> None:
    """A command no state allows never reaches a handler: binding one would be dead code."""
    for name, command in COMMANDS.items():
        if command.states == NOBODY:
            assert name in UNBOUND, name


def test_handlers_are_coroutine_functions() -> None:
    for name, handler in BINDINGS.items():
        assert inspect.iscoroutinefunction(handler), name
