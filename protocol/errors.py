"""The protocol layer's exceptions: a small tree under :class:`ValueError`.

Two families: :class:`CommandError` for a command line a user typed, and
:class:`LineParseError` for a server line that does not parse back (a ``board:`` line or a
CLIP line read by a bot or a test). They carry data only and import nothing of the
protocol: the FIBS reply to a command error is :func:`protocol.parser.error_lines`.
"""

from __future__ import annotations


class ProtocolError(ValueError):
    """Base of every error raised by :mod:`protocol`."""


class CommandError(ProtocolError):
    """A command line that cannot be run as typed.

    :ivar word: the first word exactly as typed (the FIBS reply quotes it).
    """

    def __init__(self, message: str, word: str) -> None:
        super().__init__(message)
        self.word = word


class UnknownCommandError(CommandError):
    """The first word names no command (§4.1: ``** Unknown command: '<word>'``)."""

    def __init__(self, word: str) -> None:
        super().__init__(f"unknown command {word!r}", word)


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

    :ivar name: the resolved command's table name, so dispatch can check the session
        state first and prefer the state refusal over the usage text when both apply.
    """

    def __init__(self, name: str, word: str) -> None:
        super().__init__(f"wrong arguments for {name!r}", word)
        self.name = name


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
