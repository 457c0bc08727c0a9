"""One input line -> the command and its arguments (§4.1), resolved against the table.

Rules (§1.1, §4.1):

* The line is cleaned first: a trailing CR dropped, tabs become spaces, leading and
  trailing blanks trimmed, non-ASCII characters become ``?`` (FIBS is 7-bit).
  A blank line is no command (:func:`parse` returns ``None``; telnet mode re-sends
  the ``> `` prompt, CLIP mode answers nothing).
* A line whose first word is a point - it starts with a digit, is ``bar``, or is
  ``bar-``/``b-``/``off-``/``o-``/``home-``/``h-`` something - is a ``move`` without the
  word ``move`` (``8-5 6-5``, ``bar 22``). ``off`` followed by more words is a move as
  well; ``off`` alone is the ``off`` command, and ``b 22`` is the ``board`` command
  (use ``m b 22``), as §4.5 says.
* Otherwise the first word is resolved by :func:`protocol.commands.resolve`.
* ``!!`` repeats the last command unless that was a chat command (§4.1). The parser does
  not remember lines; the session does, with :func:`repeat`.
* A line from which the transport removed control characters (D75) comes as a
  :class:`ScrubbedLine`; its command says so (:attr:`ParsedCommand.scrubbed`), so that a
  name typed with one is refused rather than read as what is left (D265).

Errors are :class:`~protocol.errors.CommandError` subclasses carrying the typed word;
:func:`error_lines` is their FIBS reply. Dispatch should check the session state with
:func:`state_refusal` *before* reporting a :class:`~protocol.errors.UsageError` (it names
the resolved command), so ``resign`` outside a game answers ``** You're not playing.``,
not the resign usage.
Decisions: D34-D40 in docs/protocol-decisions.md.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Final

from protocol import replies
from protocol.commands import COMMANDS, Command, SessionState, iter_visible, resolve
from protocol.errors import AmbiguousCommandError, CommandError, UnknownCommandError, UsageError

REPEAT: Final = "!!"
"""§4.1: repeat the previous command."""

_WORD = re.compile(r"\S+")
_MOVE_START = re.compile(r"(?:[0-9]|bar\Z|(?:bar|b|off|o|home|h)-)", re.IGNORECASE)


class ScrubbedLine(str):
    """An input line from which the transport removed control characters (D75): its
    text is what is left, and it says that something was there. The transports make
    one only when they removed something, so every other line stays a plain ``str``.

    A name is refused when typed with a control character (``name na<NUL>me`` does not
    register ``name``, D265); every other use of the line reads the text left.
    """

    __slots__ = ()


def clean(line: str) -> str:
    """The line as FIBS reads it (§1.1): no CR/LF, tabs as spaces, trimmed, 7-bit."""
    text = line.rstrip("\r\n").replace("\t", " ").strip()
    if text.isascii():
        return text  # the usual line: nothing to replace, no loop over its characters
    return "".join(ch if ord(ch) < 128 else "?" for ch in text)


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    """A resolved command line."""

    command: Command
    args: tuple[str, ...]
    """The whitespace-separated words after the command word (all words of an implicit move)."""
    raw: str
    """The cleaned line (see :func:`clean`)."""
    word: str
    """The command word as typed; empty for a move without the word ``move``."""
    scrubbed: bool = False
    """The line had control characters, removed before it got here (a
    :class:`ScrubbedLine`, D265)."""

    @property
    def name(self) -> str:
        """The command's table name (``board`` for ``b``)."""
        return self.command.name

    def text_after(self, n: int = 0) -> str:
        """The raw text after the command word and ``n`` arguments, spacing kept.

        ``tell bob  hi  there`` -> ``text_after(1) == "hi  there"``: chat texts are sent
        as typed (§4.12).
        """
        words = list(_WORD.finditer(self.raw))
        skip = n + (1 if self.word else 0)
        if skip >= len(words):
            return ""
        return self.raw[words[skip].start() :]


def _is_move(first: str, n_words: int) -> bool:
    if first.lower() == "off":
        return n_words > 1
    return bool(_MOVE_START.match(first))


def parse(line: str) -> ParsedCommand | None:
    """Resolve ``line`` to a command and its arguments; ``None`` for a blank line.

    :raises UnknownCommandError: for an unknown or ambiguous first word (§4.1).
    :raises UsageError: for a wrong number of arguments (the command's usage reply).
    """
    raw = clean(line)
    words = raw.split()
    if not words:
        return None
    first = words[0]
    scrubbed = isinstance(line, ScrubbedLine)
    if _is_move(first, len(words)):
        return ParsedCommand(COMMANDS["move"], tuple(words), raw, "", scrubbed)
    command = resolve(first)
    parsed = ParsedCommand(command, tuple(words[1:]), raw, first, scrubbed)
    if not command.arguments_ok(len(parsed.args)):
        raise UsageError(command.name, first)
    return parsed


def error_lines(error: CommandError) -> tuple[str, ...]:
    """The FIBS reply to a line :func:`parse` refused: the command's usage text for a
    wrong number of arguments (unknown-command when it has none), else
    ``** Unknown command: '<word>'`` (§4.1)."""
    if isinstance(error, UsageError) and COMMANDS[error.name].usage:
        return COMMANDS[error.name].usage
    return (replies.unknown_command(error.word),)


def explanation(error: CommandError) -> tuple[str, ...]:
    """What telnet mode adds to :func:`error_lines` (D170): the commands an ambiguous
    prefix matches (hidden ones left out), or the command a typo is close to."""
    if isinstance(error, AmbiguousCommandError):
        shown = [n for n in error.candidates if not COMMANDS[n].hidden] or list(error.candidates)
        return (replies.ambiguous_command(error.word, shown),)
    if isinstance(error, UnknownCommandError) and not isinstance(error, UsageError):
        words = sorted({w for c in iter_visible() for w in c.words})
        close = difflib.get_close_matches(error.word.lower(), words, n=2, cutoff=0.75)
        if close:
            return (replies.did_you_mean(error.word, close),)
    return ()


def state_refusal(command: Command, state: SessionState, word: str) -> tuple[str, ...] | None:
    """The reply when ``command`` may not run in ``state``, else ``None``.

    A command without a refusal text is unknown in that state (e.g. most commands for a
    guest, §1.7): ``** Unknown command: '<word>'``.
    """
    if command.allows(state):
        return None
    if state is SessionState.GUEST:  # a guest has only its few commands (D37, D191)
        return (replies.guest_must_register(word),)
    if state is SessionState.VISITOR:  # a visitor only watches (D256)
        return (replies.visitor_refused(word),)
    return command.refusal or (replies.unknown_command(word),)


TEXT_WORD: Final = "text!"
"""D376: ``text! <command>`` asks for the command's reply as in telnet mode (the page's
command box); ``!`` is in no command word, so no command is read as it."""


def text_request(line: str) -> str | None:
    """The command of a ``text! <command>`` line, else None (D376)."""
    word, _, rest = line.strip().partition(" ")
    return rest if word == TEXT_WORD else None


def is_repeat(line: str) -> bool:
    """True for the ``!!`` line (§4.1)."""
    return clean(line) == REPEAT


def repeat(last: ParsedCommand | None) -> ParsedCommand | None:
    """What ``!!`` runs: ``last`` unless there is none or it was a chat command (§4.1)."""
    if last is None or not last.command.repeatable:
        return None
    return last
