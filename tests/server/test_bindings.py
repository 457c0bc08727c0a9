"""The command table and the handlers agree both ways (server/handlers/bindings.py)."""

from __future__ import annotations

import inspect

from protocol.commands import COMMANDS, DIALOG, NOBODY, USER, SessionState
from server.handlers.bindings import BINDINGS, DIALOGS, UNBOUND
from server.world.session import Session

from .sessions import RecordingOutput


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


def test_every_dialog_state_has_a_handler() -> None:
    assert set(DIALOGS) == set(DIALOG)
    for state, handler in DIALOGS.items():
        assert inspect.iscoroutinefunction(handler), state


def test_no_command_runs_in_a_dialog_state() -> None:
    """A dialog state takes the next line as typed: no command may claim it."""
    for name, command in COMMANDS.items():
        assert not command.states & DIALOG, name


def test_logged_in_means_a_user_state() -> None:
    for state in (None, *SessionState):
        session = Session(RecordingOutput())
        session.state = state
        assert session.logged_in is (state is not None and state in USER), state
        assert session.in_dialog is (state is not None and state in DIALOG), state
