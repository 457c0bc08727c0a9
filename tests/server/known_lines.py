"""A catalogue of every line form ``protocol/`` produces, to check what the server sends.

A line is known when it is

* a CLIP line :func:`protocol.clip.parse_clip` accepts, or a ``board:`` line
  :func:`protocol.board_fibs.parse_board` accepts;
* a constant of :mod:`protocol.replies` (a string, or one line of a tuple of strings);
* a line of ``protocol.commands.help_lines`` for any topic;
* the output of a template function of :mod:`protocol.replies`.

Template functions are called with every value of a small set per parameter type (both
modes, both booleans, every enum member, 0/1/2/77 for integers so singular/plural
branches show, markers for strings, lists of zero, one and two markers...); each line
they return becomes a regular expression in which the markers match a name, a host, a
list or free text, depending on the parameter. Before matching, digits runs become
``#``, weekday and month names ``@`` and runs of spaces one space, in the template and in
the line alike: the catalogue checks the *form* of a line, not its values. A trailing
BEL (``toggle bell``, ``waitfor``) is ignored.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import inspect
import itertools
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from protocol import board_fibs, clip, commands, replies
from protocol.errors import LineParseError

NAME = "\x01"
TEXT = "\x02"
HOST = "\x03"
ZONE = "\x04"
ITEM_A = "\x05"
ITEM_B = "\x06"
_PATTERNS = {
    NAME: r"[A-Za-z_]+",
    TEXT: r".*",
    HOST: r"\S+",
    ZONE: r"\S+",
    ITEM_A: r"[^\s,]+",
    ITEM_B: r"[^\s,]+",
}
_TEXT_PARAMS = frozenset(
    {
        "text",
        "message",
        "reason",
        "when",
        "value",
        "what",
        "played",  # a play or a cube action, best or made (analysis, D286)
        "best",
        "sign",  # ? or ?? after a play (analysis, D286)
        "arg",
        "word",
        "used",
        "expected",
        "synopsis",
        "server_name",
        "version_text",
        "started",
        "since",
        "last_login",
        "last_logout",
        "commitment",  # hex digits: numbers and letters (D271-D274)
        "server_seed",
        "first_seed",  # a player's dice seed: any printable ASCII (D276)
        "second_seed",
        "seeds",  # a chouette game's names and seeds (D353)
    }
)
_HOST_PARAMS = frozenset(
    {"host", "ip", "hostname", "zone", "colour", "address", "email", "token"}  # token: D321
)
_REASONS = (replies.logs_out(NAME), replies.drops_connection(NAME), replies.timed_out(NAME))
_OVERRIDES: Mapping[tuple[str, str], Sequence[Any]] = {
    ("toggle_message", "name"): replies.TOGGLES,
    ("logout_notice", "text"): _REASONS,
    ("saved_after", "reason"): _REASONS,
    ("not_watching_anymore", "reason"): _REASONS,
    ("last_line", "text"): (replies.logs_in(NAME), *_REASONS),
    ("oldmoves_action", "action"): ("doubles", "accepts", "rejects", "wins"),
    ("oldmoves_action", "colour"): ("X", "O"),
    ("oldmoves_roll", "colour"): ("X", "O"),
    ("last_line", "day_time"): ("Wed 11:08",),
    ("HourUsers", "mean"): (15.5,),  # ``average``: a width-6 column, as in SPEC's table
    ("who_row", "status"): ("P", "R", "W", "A", "-"),
    ("who_row", "login"): ("12",),
    ("who_row", "idle"): ("3",),
    ("chouette_game_over", "box_net"): (2, -2),  # signed: "+#" and "#" are two forms
    # CLIP lines are checked by parse_clip; the templates render the telnet forms only.
    **{(f, "mode"): (replies.Mode.TELNET,) for f in dir(replies)},
}
"""Parameters whose values must come from a closed set (the function raises otherwise)."""
_FRAGMENTS = frozenset(
    {
        "plural",
        "points",
        "match_phrase",
        "ordinal",
        "moves_with_full_stop",
        "asctime",
        "telnet_date",
        "whois_date",
        "seed_pairs",
    }
)
"""Helpers that build parts of lines, not lines."""
_MAX_CALLS = 20_000

_DAYS_MONTHS = re.compile(
    r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|"
    r"January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b"
)
_NUMBER = re.compile(r"-?\d+")
_SPACES = re.compile(r" +")


def normalize(line: str) -> str:
    """The form of a line: no trailing BELs, numbers as ``#``, days/months as ``@``,
    single spaces."""
    line = line.rstrip(replies.BELL)
    line = _NUMBER.sub("#", line)
    line = _DAYS_MONTHS.sub("@", line)
    return _SPACES.sub(" ", line)


class _MarkerZone(dt.tzinfo):
    """A UTC offset whose name is the zone marker."""

    def utcoffset(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)

    def tzname(self, when: dt.datetime | None) -> str:
        return ZONE

    def dst(self, when: dt.datetime | None) -> dt.timedelta:
        return dt.timedelta(0)


_WHEN = dt.datetime(2003, 1, 2, 0, 27, 27, tzinfo=_MarkerZone())


class _AllMapping(dict[str, Any]):
    """A mapping with a value for every key (``toggle_list``, ``set_list``)."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value

    def __missing__(self, key: str) -> Any:
        return self.value


def _string_marker(param: str) -> str:
    if param in _TEXT_PARAMS:
        return TEXT
    if param in _HOST_PARAMS:
        return HOST
    return NAME


def _values(annotation: Any, param: str, owner: str) -> list[Any]:
    """The values a parameter is tried with."""
    if (owner, param) in _OVERRIDES:
        return list(_OVERRIDES[(owner, param)])
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        return [_string_marker(param)]
    if annotation is bool:
        return [False, True]
    if annotation is int:
        return [0, 1, 2, 77]
    if annotation is float:
        return [1500.0]
    if annotation is dt.datetime:
        return [_WHEN]
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return list(annotation)
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return list(_instances(annotation))
    if origin in (typing.Union, types.UnionType):
        values: list[Any] = []
        for arg in args:
            values += [None] if arg is type(None) else _values(arg, param, owner)
        return values
    if origin in (Sequence, Iterable, list, tuple):
        return [[], [ITEM_A], [ITEM_A, ITEM_B]]
    if origin is Mapping:
        if args and args[1] is bool:
            return [_AllMapping(True), _AllMapping(False)]
        return [_AllMapping(TEXT)]
    raise TypeError(f"no test values for {owner}({param}: {annotation!r})")


def _instances(cls: type[Any]) -> Iterator[Any]:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    choices = [_values(hints[name], name, cls.__name__) for name in names]
    for combo in itertools.product(*choices):
        yield cls(**dict(zip(names, combo, strict=True)))


def _calls(function: Callable[..., Any]) -> Iterator[Any]:
    """Every output of ``function`` over the product of its parameters' test values."""
    hints = typing.get_type_hints(function)
    params = inspect.signature(function).parameters
    choices = [_values(hints[name], name, function.__name__) for name in params]
    kinds = [p.kind for p in params.values()]
    for count, combo in enumerate(itertools.product(*choices)):
        if count >= _MAX_CALLS:
            raise AssertionError(f"{function.__name__}: too many combinations")
        positional = [v for v, k in zip(combo, kinds, strict=True) if k is not k.KEYWORD_ONLY]
        keywords = {
            name: v
            for (name, p), v in zip(params.items(), combo, strict=True)
            if p.kind is p.KEYWORD_ONLY
        }
        yield function(*positional, **keywords)


def _lines(output: Any) -> Iterator[str]:
    if isinstance(output, str):
        yield output
    elif isinstance(output, (list, tuple)):
        for item in output:
            yield from _lines(item)


_LIST = re.compile(f"{ITEM_A}(.{{0,3}}?){ITEM_B}")
_PIECES = re.compile(f"({ITEM_A}(?:.{{0,3}}?){ITEM_B}|[{NAME}-{ITEM_B}])")


def _literal(text: str) -> str:
    """Literal template text; every space is optional, because padded columns
    (``{name:<15}``, ``{rank:>4}``) lose theirs when a value fills the column."""
    return re.escape(text).replace("\\ ", " ?")


def _regex(template: str) -> str:
    """A normalized template line as a regular expression."""
    if template in (ITEM_A, ITEM_B):
        return _PATTERNS[NAME]  # a list written one name a line (``waitfor``)
    pieces = [p for p in _PIECES.split(template) if p]
    out: list[str] = []
    for piece in pieces:
        listed = _LIST.fullmatch(piece)
        if listed:
            item = _PATTERNS[ITEM_A]
            out.append(f"{item}(?:{_literal(listed.group(1))}{item})*")
        elif piece in _PATTERNS:
            out.append(_PATTERNS[piece])
        else:
            out.append(_literal(piece))
    return "".join(out)


def _is_marker_free(line: str) -> bool:
    return not any(ch in line for ch in _PATTERNS)


@dataclasses.dataclass
class Catalogue:
    """The known forms: exact normalized lines (spaces removed) and template regular
    expressions."""

    exact: set[str]
    patterns: list[re.Pattern[str]]

    def knows(self, line: str) -> bool:
        """True when ``line`` is one of the forms of ``protocol/``."""
        bare = line.rstrip(replies.BELL)
        if clip.is_clip_line(bare):
            return True
        if bare.startswith("board:"):
            try:
                board_fibs.parse_board(bare)
            except LineParseError:
                return False
            return True
        form = normalize(bare)
        if form.replace(" ", "") in self.exact:
            return True
        return any(p.fullmatch(form) for p in self.patterns)

    def unknown(self, lines: Iterable[str]) -> list[str]:
        """The lines that are not known, in order, without repeats."""
        return list(dict.fromkeys(line for line in lines if not self.knows(line)))


def _constants() -> Iterator[str]:
    for name, value in vars(replies).items():
        if name.startswith("_") or not name.isupper():
            continue
        yield from _lines(value)


def _help() -> Iterator[str]:
    yield from commands.help_lines(None)
    for topic in (*commands.COMMANDS, *commands.HELP_TOPICS, "no-such-topic"):
        yield from commands.help_lines(topic)


def _templates() -> Iterator[str]:
    for name, function in vars(replies).items():
        if name.startswith("_") or name in _FRAGMENTS or not inspect.isfunction(function):
            continue
        if function.__module__ != replies.__name__:
            continue
        for output in _calls(function):
            yield from _lines(output)


@cache
def catalogue() -> Catalogue:
    """Build (once) the catalogue of every form ``protocol/`` produces."""
    exact = {normalize(line).replace(" ", "") for line in itertools.chain(_constants(), _help())}
    regexes: set[str] = set()
    for line in _templates():
        form = normalize(line)
        if _is_marker_free(form):
            exact.add(form.replace(" ", ""))
        else:
            regexes.add(_regex(form))
    return Catalogue(exact, [re.compile(r) for r in sorted(regexes)])
