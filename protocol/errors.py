"""The protocol layer's exceptions: a small tree under :class:`ValueError`.

Two families: :class:`CommandError` for a command line a user typed (it carries the FIBS
reply lines, so dispatch only has to send them), and :class:`LineParseError` for a server
line that does not parse back (a ``board:`` line or a CLIP line read by a bot or a test).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from protocol.commands import Command


class ProtocolError(ValueError):
    """Base of every error raised by :mod:`protocol`."""


class CommandError(ProtocolError):
    """A command line that cannot be run as typed.

    :ivar lines: the FIBS reply, one string per line, without line terminators.
    """

    def __init__(self, message: str, lines: tuple[str, ...]) -> None:
        super().__init__(message)
        self.lines = lines


class UnknownCommandError(CommandError):
    """The first word names no command (§4.1: ``** Unknown command: '<word>'``).

    :ivar word: the first word exactly as typed.
    """

    def __init__(self, word: str) -> None:
        # Imported here: replies is the one home of every text (§4.1), errors must not
        # import it at module level to keep the import graph a tree.
        from protocol import replies

        super().__init__(f"unknown command {word!r}", (replies.unknown_command(word),))
        self.word = word


class AmbiguousCommandError(UnknownCommandError):
    """A prefix shared by several commands; FIBS answers it like an unknown one (§4.1).

    :ivar candidates: the names of the commands the prefix would match, sorted.
    """

    def __init__(self, word: str, candidates: tuple[str, ...]) -> None:
        super().__init__(word)
        self.args = (f"ambiguous command {word!r}: {', '.join(candidates)}",)
        self.candidates = candidates


class UsageError(CommandError):
    """A known command with a wrong number of arguments (the usage reply of §4.3-§4.17).

    :ivar command: the resolved command, so dispatch can check the session state first
        and prefer the state refusal over the usage text when both apply.
    """

    def __init__(self, command: Command, lines: tuple[str, ...]) -> None:
        super().__init__(f"wrong arguments for {command.name!r}", lines)
        self.command = command


class LineParseError(ProtocolError):
    """A server line (``board:``, CLIP) that does not have the format of the spec.

    :ivar line: the offending line.
    """

    def __init__(self, message: str, line: str) -> None:
        super().__init__(f"{message}: {line!r}")
        self.line = line


class BoardLineError(LineParseError):
    """A ``board:`` line that is not 53 well-formed fields (§3.1)."""


class ClipParseError(LineParseError):
    """A CLIP line whose code or fields do not match §2.1-§2.3."""
