"""CLIP messages 1-20 (§2): one frozen value class per code, with ``format()`` and ``parse()``.

Every line is a decimal code, one space, then space-separated fields; the last field of
the chat-like messages is free text that may contain spaces (§2). Booleans are ``1``/``0``,
ratings have exactly two decimals, times are Unix seconds, "none" is ``-`` (§2.2, §2.3).
Parsing is strict - it accepts exactly what ``format()`` writes - so
``parse_clip(line).format() == line`` for every line that parses.

Use :func:`parse_clip` to read any line, or ``Cls.parse(line)`` for one code.
Decisions: D42-D44 in docs/protocol-decisions.md.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, fields
from typing import ClassVar, Final, TypeAlias

from protocol.errors import ClipParseError


class Code(enum.IntEnum):
    """The CLIP message codes (§2.1)."""

    WELCOME = 1
    OWN_INFO = 2
    MOTD_BEGIN = 3
    MOTD_END = 4
    WHO_INFO = 5
    WHO_INFO_END = 6
    LOGIN = 7
    LOGOUT = 8
    MESSAGE = 9
    MESSAGE_DELIVERED = 10
    MESSAGE_SAVED = 11
    SAYS = 12
    SHOUTS = 13
    WHISPERS = 14
    KIBITZES = 15
    YOU_SAY = 16
    YOU_SHOUT = 17
    YOU_WHISPER = 18
    YOU_KIBITZ = 19
    ALERT = 20


CLIP_VERSION: Final = 1008
"""The CLIP version clients send in their login line (§1.3); any number is accepted."""
UNLIMITED: Final = "unlimited"
"""CLIP 2's word for unlimited redoubles (§2.2)."""
NONE: Final = "-"
"""The placeholder of an empty CLIP 5 field (§2.3)."""

_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_RATING = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]{2}\Z")
_TOKEN = re.compile(r"\S+\Z")


def _check_token(value: str, what: str) -> None:
    if not _TOKEN.match(value):
        raise ValueError(f"{what} must be one non-empty token without spaces, not {value!r}")


def _flag(value: bool) -> str:
    return "1" if value else "0"


PROFILE_LENGTH = 20
"""§2.3 Player Profile Protocol: a client field of exactly 20 characters is a profile."""


def is_computer_client(client: str | None) -> bool:
    """True when a client field is a JavaFIBS player profile marking a computer (§2.3:
    20 characters starting with ``=``)."""
    return client is not None and len(client) == PROFILE_LENGTH and client[0] == "="


def format_rating(rating: float) -> str:
    """A rating as FIBS shows it everywhere: two decimals (§2.2, §6.13)."""
    return f"{rating:.2f}"


def _split(line: str, code: Code, n_fields: int, *, text: bool) -> list[str]:
    """Split ``line`` into its fields after the code; the last one is free text if ``text``."""
    head = f"{code.value}"
    if n_fields == 0:
        if line != head:
            raise ClipParseError(f"CLIP {code.value} is the code alone", line)
        return []
    if not line.startswith(head + " "):
        raise ClipParseError(f"not a CLIP {code.value} line", line)
    body = line[len(head) + 1 :]
    if text:
        parts = body.split(" ", n_fields - 1)
        if len(parts) != n_fields or any(not p for p in parts[:-1]):
            raise ClipParseError(f"CLIP {code.value} needs {n_fields} fields", line)
        return parts
    parts = body.split(" ")
    if len(parts) != n_fields or any(not p for p in parts):
        raise ClipParseError(f"CLIP {code.value} needs {n_fields} fields", line)
    return parts


def _int(token: str, line: str) -> int:
    if not _INT.match(token):
        raise ClipParseError(f"{token!r} is not an integer", line)
    return int(token)


def _bool(token: str, line: str) -> bool:
    if token not in ("0", "1"):
        raise ClipParseError(f"{token!r} is not 0 or 1", line)
    return token == "1"


def _rating(token: str, line: str) -> float:
    if not _RATING.match(token):
        raise ClipParseError(f"{token!r} is not a rating with two decimals", line)
    return float(token)


def _optional(token: str) -> str | None:
    return None if token == NONE else token


def _dash(value: str | None) -> str:
    return NONE if value is None else value


# -- 1-4 -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    """CLIP 1 ``1 name last_login last_host``: login succeeded (§1.4, §2.1)."""

    code: ClassVar[Code] = Code.WELCOME
    name: str
    last_login: int
    """Unix time of the previous login (0 for a first login, §1.4)."""
    last_host: str
    """Host of the previous login (a non-empty token)."""

    def __post_init__(self) -> None:
        _check_token(self.name, "name")
        _check_token(self.last_host, "last_host")

    def format(self) -> str:
        return f"1 {self.name} {self.last_login} {self.last_host}"

    @classmethod
    def parse(cls, line: str) -> Welcome:
        name, when, host = _split(line, cls.code, 3, text=False)
        return cls(name, _int(when, line), host)


@dataclass(frozen=True, slots=True)
class OwnInfo:
    """CLIP 2: the user's own settings, sent once after CLIP 1 - 21 fields (§2.2)."""

    code: ClassVar[Code] = Code.OWN_INFO
    name: str
    allowpip: bool
    autoboard: bool
    autodouble: bool
    automove: bool
    away: bool
    bell: bool
    crawford: bool
    double: bool
    experience: int
    greedy: bool
    moreboards: bool
    moves: bool
    notify: bool
    rating: float
    ratings: bool
    ready: bool
    redoubles: int | None
    """Instant redoubles the user allows; ``None`` is the word ``unlimited`` (§2.2)."""
    report: bool
    silent: bool
    timezone: str

    def __post_init__(self) -> None:
        _check_token(self.name, "name")
        _check_token(self.timezone, "timezone")

    def format(self) -> str:
        values: list[str] = ["2"]
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "rating":
                values.append(format_rating(value))
            elif f.name == "redoubles":
                values.append(UNLIMITED if value is None else str(value))
            elif isinstance(value, bool):
                values.append(_flag(value))
            else:
                values.append(str(value))
        return " ".join(values)

    @classmethod
    def parse(cls, line: str) -> OwnInfo:
        tokens = _split(line, cls.code, 21, text=False)
        values: dict[str, object] = {}
        for f, token in zip(fields(cls), tokens, strict=True):
            if f.name in ("name", "timezone"):
                values[f.name] = token
            elif f.name == "rating":
                values[f.name] = _rating(token, line)
            elif f.name == "experience":
                values[f.name] = _int(token, line)
            elif f.name == "redoubles":
                values[f.name] = None if token == UNLIMITED else _int(token, line)
            else:
                values[f.name] = _bool(token, line)
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class MotdBegin:
    """CLIP 3: ``3`` alone, the message of the day follows (§1.4)."""

    code: ClassVar[Code] = Code.MOTD_BEGIN

    def format(self) -> str:
        return "3"

    @classmethod
    def parse(cls, line: str) -> MotdBegin:
        _split(line, cls.code, 0, text=False)
        return cls()


@dataclass(frozen=True, slots=True)
class MotdEnd:
    """CLIP 4: ``4`` alone, end of the message of the day (§1.4)."""

    code: ClassVar[Code] = Code.MOTD_END

    def format(self) -> str:
        return "4"

    @classmethod
    def parse(cls, line: str) -> MotdEnd:
        _split(line, cls.code, 0, text=False)
        return cls()


def motd(lines: list[str] | tuple[str, ...]) -> list[str]:
    """The MOTD in CLIP mode: ``3``, the lines verbatim, ``4`` (§1.4, §4.14)."""
    return [MotdBegin().format(), *lines, MotdEnd().format()]


# -- 5-6 -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WhoInfo:
    """CLIP 5: one user's status, 12 fields, ``-`` for none (§2.3)."""

    code: ClassVar[Code] = Code.WHO_INFO
    name: str
    opponent: str | None
    watching: str | None
    ready: bool
    away: bool
    rating: float
    experience: int
    idle: int
    """Seconds since the user's last input."""
    login: int
    """Unix time of this login."""
    hostname: str
    client: str | None
    """The client name of the CLIP login line (§1.3)."""
    email: str | None

    def __post_init__(self) -> None:
        _check_token(self.name, "name")
        _check_token(self.hostname, "hostname")
        for what in ("opponent", "watching", "client", "email"):
            value = getattr(self, what)
            if value is not None:
                _check_token(value, what)

    def format(self) -> str:
        return (
            f"5 {self.name} {_dash(self.opponent)} {_dash(self.watching)}"
            f" {_flag(self.ready)} {_flag(self.away)} {format_rating(self.rating)}"
            f" {self.experience} {self.idle} {self.login} {self.hostname}"
            f" {_dash(self.client)} {_dash(self.email)}"
        )

    IDLE_FIELD: ClassVar[int] = 8
    """The idle field's index in the line split at spaces (the code ``5`` is index 0)."""

    def around_idle(self) -> tuple[str, str]:
        """The line before its idle field (ending in a space) and after it (starting with
        one), so a line can be remade with a new idle time without formatting it again.
        Every field is one token without spaces (checked), so spaces separate the words."""
        words = self.format().split(" ")
        i = self.IDLE_FIELD
        return " ".join(words[:i]) + " ", " " + " ".join(words[i + 1 :])

    @classmethod
    def parse(cls, line: str) -> WhoInfo:
        t = _split(line, cls.code, 12, text=False)
        return cls(
            t[0],
            _optional(t[1]),
            _optional(t[2]),
            _bool(t[3], line),
            _bool(t[4], line),
            _rating(t[5], line),
            _int(t[6], line),
            _int(t[7], line),
            _int(t[8], line),
            t[9],
            _optional(t[10]),
            _optional(t[11]),
        )


@dataclass(frozen=True, slots=True)
class WhoInfoEnd:
    """CLIP 6: ``6`` alone, end of a who list or of one asynchronous ``5`` update (§2.3)."""

    code: ClassVar[Code] = Code.WHO_INFO_END

    def format(self) -> str:
        return "6"

    @classmethod
    def parse(cls, line: str) -> WhoInfoEnd:
        _split(line, cls.code, 0, text=False)
        return cls()


def who_update(info: WhoInfo) -> list[str]:
    """An asynchronous status change: the ``5`` line followed by ``6`` (§2.3, §6.6)."""
    return [info.format(), WhoInfoEnd().format()]


# -- 7-20: a name and/or a text -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _NameText:
    """Base of the ``<code> name text`` messages."""

    code: ClassVar[Code]
    name: str
    text: str

    def __post_init__(self) -> None:
        _check_token(self.name, "name")
        if "\r" in self.text or "\n" in self.text:
            raise ValueError("CLIP text cannot contain line breaks")

    def format(self) -> str:
        return f"{self.code.value} {self.name} {self.text}"

    @classmethod
    def _fields(cls, line: str) -> list[str]:
        return _split(line, cls.code, 2, text=True)


@dataclass(frozen=True, slots=True)
class _Text:
    """Base of the ``<code> text`` messages (your own shout/whisper/kibitz)."""

    code: ClassVar[Code]
    text: str

    def __post_init__(self) -> None:
        if "\r" in self.text or "\n" in self.text:
            raise ValueError("CLIP text cannot contain line breaks")

    def format(self) -> str:
        return f"{self.code.value} {self.text}"

    @classmethod
    def _fields(cls, line: str) -> list[str]:
        head = f"{cls.code.value} "
        if not line.startswith(head):
            raise ClipParseError(f"not a CLIP {cls.code.value} line", line)
        return [line[len(head) :]]


@dataclass(frozen=True, slots=True)
class _Name:
    """Base of the ``<code> name`` messages."""

    code: ClassVar[Code]
    name: str

    def __post_init__(self) -> None:
        _check_token(self.name, "name")

    def format(self) -> str:
        return f"{self.code.value} {self.name}"


@dataclass(frozen=True, slots=True)
class Login(_NameText):
    """CLIP 7 ``7 name message``: a user logged in; text is ``<name> logs in.`` (§2.1, §2.4)."""

    code: ClassVar[Code] = Code.LOGIN

    @classmethod
    def parse(cls, line: str) -> Login:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Logout(_NameText):
    """CLIP 8 ``8 name message``: a user left, ``<name> logs out.`` etc. (§1.8, §2.4)."""

    code: ClassVar[Code] = Code.LOGOUT

    @classmethod
    def parse(cls, line: str) -> Logout:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Message:
    """CLIP 9 ``9 from time message``: a stored message (§1.4, §4.12)."""

    code: ClassVar[Code] = Code.MESSAGE
    sender: str
    time: int
    """Unix time the message was left."""
    text: str

    def __post_init__(self) -> None:
        _check_token(self.sender, "sender")

    def format(self) -> str:
        return f"9 {self.sender} {self.time} {self.text}"

    @classmethod
    def parse(cls, line: str) -> Message:
        sender, when, text = _split(line, cls.code, 3, text=True)
        return cls(sender, _int(when, line), text)


@dataclass(frozen=True, slots=True)
class MessageDelivered(_Name):
    """CLIP 10 ``10 name``: your message was delivered at once (§4.12)."""

    code: ClassVar[Code] = Code.MESSAGE_DELIVERED

    @classmethod
    def parse(cls, line: str) -> MessageDelivered:
        return cls(*_split(line, cls.code, 1, text=False))


@dataclass(frozen=True, slots=True)
class MessageSaved(_Name):
    """CLIP 11 ``11 name``: your message was stored for later (§4.12)."""

    code: ClassVar[Code] = Code.MESSAGE_SAVED

    @classmethod
    def parse(cls, line: str) -> MessageSaved:
        return cls(*_split(line, cls.code, 1, text=False))


@dataclass(frozen=True, slots=True)
class Says(_NameText):
    """CLIP 12 ``12 name message``: a tell to you, or your opponent's say (§2.4)."""

    code: ClassVar[Code] = Code.SAYS

    @classmethod
    def parse(cls, line: str) -> Says:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Shouts(_NameText):
    """CLIP 13 ``13 name message``: someone shouts (§2.4)."""

    code: ClassVar[Code] = Code.SHOUTS

    @classmethod
    def parse(cls, line: str) -> Shouts:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Whispers(_NameText):
    """CLIP 14 ``14 name message``: a watcher whispers (§2.4)."""

    code: ClassVar[Code] = Code.WHISPERS

    @classmethod
    def parse(cls, line: str) -> Whispers:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Kibitzes(_NameText):
    """CLIP 15 ``15 name message``: someone kibitzes in your game (§2.4)."""

    code: ClassVar[Code] = Code.KIBITZES

    @classmethod
    def parse(cls, line: str) -> Kibitzes:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class YouSay(_NameText):
    """CLIP 16 ``16 name message``: echo of your tell/say; name = the recipient (§2.4)."""

    code: ClassVar[Code] = Code.YOU_SAY

    @classmethod
    def parse(cls, line: str) -> YouSay:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class YouShout(_Text):
    """CLIP 17 ``17 message``: echo of your shout (§2.4)."""

    code: ClassVar[Code] = Code.YOU_SHOUT

    @classmethod
    def parse(cls, line: str) -> YouShout:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class YouWhisper(_Text):
    """CLIP 18 ``18 message``: echo of your whisper (§2.4)."""

    code: ClassVar[Code] = Code.YOU_WHISPER

    @classmethod
    def parse(cls, line: str) -> YouWhisper:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class YouKibitz(_Text):
    """CLIP 19 ``19 message``: echo of your kibitz (§2.4)."""

    code: ClassVar[Code] = Code.YOU_KIBITZ

    @classmethod
    def parse(cls, line: str) -> YouKibitz:
        return cls(*cls._fields(line))


@dataclass(frozen=True, slots=True)
class Alert(_NameText):
    """CLIP 20 ``20 name message`` (⚠ optional, GIB/BaldLies only; §2.1)."""

    code: ClassVar[Code] = Code.ALERT

    @classmethod
    def parse(cls, line: str) -> Alert:
        return cls(*cls._fields(line))


ClipMessage: TypeAlias = (
    Welcome
    | OwnInfo
    | MotdBegin
    | MotdEnd
    | WhoInfo
    | WhoInfoEnd
    | Login
    | Logout
    | Message
    | MessageDelivered
    | MessageSaved
    | Says
    | Shouts
    | Whispers
    | Kibitzes
    | YouSay
    | YouShout
    | YouWhisper
    | YouKibitz
    | Alert
)

_BY_CODE: Final[dict[Code, type[ClipMessage]]] = {
    cls.code: cls
    for cls in (
        Welcome,
        OwnInfo,
        MotdBegin,
        MotdEnd,
        WhoInfo,
        WhoInfoEnd,
        Login,
        Logout,
        Message,
        MessageDelivered,
        MessageSaved,
        Says,
        Shouts,
        Whispers,
        Kibitzes,
        YouSay,
        YouShout,
        YouWhisper,
        YouKibitz,
        Alert,
    )
}

_CODE = re.compile(r"([0-9]+)(?: |\Z)")


def parse_clip(line: str) -> ClipMessage:
    """Read any CLIP line (codes 1-20) into its value class; a trailing CR/LF is tolerated.

    :raises ClipParseError: if the line does not start with a known code or its fields
        do not match the layout of §2.1-§2.3.
    """
    text = line.rstrip("\r\n")
    m = _CODE.match(text)
    try:
        code = Code(int(m.group(1))) if m else None
    except ValueError:
        code = None
    if code is None:
        raise ClipParseError("not a CLIP line", line)
    return _BY_CODE[code].parse(text)


def is_clip_line(line: str) -> bool:
    """True when ``line`` parses as a CLIP message."""
    try:
        parse_clip(line)
    except ClipParseError:
        return False
    return True
