"""The argument forms of the commands that read more than names (§4.3-§4.17): text in,
frozen values out.

A handler hands its words to the parse function of its command and acts on the value
it gets back; a refused argument comes back as :class:`Invalid`, which carries the
reply lines the client is sent (the handler stops with them). Every word a client
types as an option (``who ready``, ``set redoubles unlimited``, ``invite bob 5
nojacoby``, ``resign g``...) is read here, next to the replies in
:mod:`protocol.replies`, so the server holds no client words of its own.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Final

from backgammon.events import WinKind
from backgammon.fair_dice import is_player_seed
from protocol import replies
from protocol.commands import COMMAND_LIST
from protocol.replies import Toggle


@dataclass(frozen=True, slots=True)
class Invalid:
    """A refused argument: the lines the client is answered with (§4.1: no change made)."""

    lines: tuple[str, ...]

    @classmethod
    def of(cls, *lines: str) -> Invalid:
        return cls(lines)


# -- who, rawwho (§4.14) ------------------------------------------------------------------


class WhoKind(enum.Enum):
    """What a ``who``/``rawwho`` argument asks for."""

    ALL = "all"
    COUNT = "count"
    READY = "ready"
    PLAYING = "playing"
    AWAY = "away"
    FROM = "from"
    NAME = "name"


@dataclass(frozen=True, slots=True)
class WhoFilter:
    """A ``who`` filter: its kind and, for ``from``/a name, the text given."""

    kind: WhoKind
    text: str = ""


_WHO_WORDS: Final = {
    "count": WhoKind.COUNT,
    "ready": WhoKind.READY,
    "playing": WhoKind.PLAYING,
    "away": WhoKind.AWAY,
}


def parse_who_filter(args: Sequence[str]) -> WhoFilter:
    """§4.14: ``who``, ``who count|ready|playing|away``, ``who from <host>``,
    ``who <name>``; any other word (``from`` alone too) is a user's name."""
    if not args:
        return WhoFilter(WhoKind.ALL)
    word = args[0].lower()
    if word in _WHO_WORDS:
        return WhoFilter(_WHO_WORDS[word])
    if word == "from" and len(args) > 1:
        return WhoFilter(WhoKind.FROM, args[1].lower())
    return WhoFilter(WhoKind.NAME, args[0])


class WhoOrder(enum.Enum):
    """``set sortwho``: the order of ``who`` lists (§4.16)."""

    LOGIN = "login"
    NAME = "name"
    RATING = "rating"
    RRATING = "rrating"


# -- toggle (§4.15) -------------------------------------------------------------------------


def parse_toggle_name(word: str) -> Toggle | None:
    """A toggle from its name, a synonym or a unique prefix (any case); None for no
    toggle or more than one."""
    word = word.lower()
    synonym = replies.TOGGLE_SYNONYMS.get(word)
    if synonym is not None:
        return synonym
    if word in replies.TOGGLES:
        return Toggle(word)
    found = [t for t in replies.TOGGLES if t.startswith(word)]
    return found[0] if len(found) == 1 else None


# -- set (§4.16) ----------------------------------------------------------------------------


class SetVariable(enum.Enum):
    """The variables of ``set``; values are their names (and :class:`UserSettings` fields,
    but ``dice_seed``, which lasts the session and is not in ``set``'s list: D276)."""

    BOARDSTYLE = "boardstyle"
    LINELENGTH = "linelength"
    PAGELENGTH = "pagelength"
    REDOUBLES = "redoubles"
    SORTWHO = "sortwho"
    TIMEZONE = "timezone"
    DICE_SEED = "dice_seed"


MAX_LENGTH_SETTING: Final = 999
"""§4.16: the largest ``linelength``/``pagelength``."""
MAX_REDOUBLES: Final = 99
"""§4.16: the largest number of ``redoubles``."""
REDOUBLES_NONE: Final = "none"
REDOUBLES_UNLIMITED: Final = "unlimited"


def parse_set_variable(word: str) -> SetVariable | Invalid:
    """The variable ``word`` names exactly or as a unique prefix (any case)."""
    lowered = word.lower()
    found = [v for v in SetVariable if v.value.startswith(lowered)]
    if len(found) != 1:
        return Invalid.of(replies.SET_INVALID)
    return found[0]


def parse_set_value(
    variable: SetVariable, value: str, zones: Collection[str]
) -> int | str | Invalid | None:
    """The stored value of ``set <variable> <value>`` (§4.16): an int for the numbers
    (``redoubles``: None is unlimited), a string for ``sortwho`` and ``timezone``."""
    match variable:
        case SetVariable.BOARDSTYLE:
            if value not in ("1", "2", "3"):
                return Invalid.of(replies.BOARDSTYLE_INVALID)
            return int(value)
        case SetVariable.LINELENGTH | SetVariable.PAGELENGTH:
            if not value.isdigit():
                return 0  # §4.16: a non-number sets 0
            number = int(value)
            if number > MAX_LENGTH_SETTING:
                return Invalid.of(replies.LENGTH_INVALID)
            return number
        case SetVariable.REDOUBLES:
            lowered = value.lower()
            if lowered == REDOUBLES_NONE:
                return 0
            if lowered == REDOUBLES_UNLIMITED:
                return None
            if value.isdigit() and 1 <= int(value) <= MAX_REDOUBLES:
                return int(value)
            return Invalid.of(replies.REDOUBLES_INVALID)
        case SetVariable.SORTWHO:
            if value.lower() not in {order.value for order in WhoOrder}:
                return Invalid.of(replies.sortwho_invalid(value))
            return value.lower()
        case SetVariable.TIMEZONE:
            return parse_timezone(value, zones)
        case SetVariable.DICE_SEED:
            return parse_dice_seed((value,))


def parse_dice_seed(words: Sequence[str]) -> str | Invalid:
    """``set dice_seed <text>`` (D276): one word of 1 to 64 characters from ``!`` to ``~``
    (:func:`backgammon.fair_dice.is_player_seed`)."""
    if len(words) == 1 and is_player_seed(words[0]):
        return words[0]
    return Invalid.of(replies.DICE_SEED_INVALID)


def redoubles_shown(redoubles: int | None) -> str:
    """``set``'s text of a ``redoubles`` value: ``unlimited``, ``none`` or the number."""
    if redoubles is None:
        return REDOUBLES_UNLIMITED
    return REDOUBLES_NONE if redoubles == 0 else str(redoubles)


def parse_timezone(text: str, zones: Collection[str]) -> str | Invalid:
    """A zone of ``zones`` (exact name), or the §4.14 reply with the list of zones."""
    if text in zones:
        return text
    return Invalid((replies.bad_timezone(text), *replies.zone_list(sorted(zones))))


# -- invite (§4.3, D56) -----------------------------------------------------------------------


MAX_MATCH_LENGTH: Final = 99
"""Longest match (§4.3: lengths 1-99 and unlimited)."""
UNLIMITED_LENGTH: Final = "unlimited"
"""§4.3: the match length of an unlimited match."""


def parse_match_length(word: str) -> int | Invalid | None:
    """The match length argument of ``invite``: a number 1..99, or None for ``unlimited``."""
    if word.lower() == UNLIMITED_LENGTH:
        return None
    if not word.isdigit() or not 1 <= int(word) <= MAX_MATCH_LENGTH:
        return Invalid.of(replies.INVITE_BAD_LENGTH)
    return int(word)


@dataclass(frozen=True, slots=True)
class RuleChoices:
    """The rules named after the length of ``invite`` (D56); None: not named.

    ``cube_limit`` is only meaningful when ``cube_limit_named``: None then is no limit.
    """

    words: tuple[str, ...]
    """The words as given, lower case (they are shown to both players)."""
    holland: bool | None = None
    jacoby: bool | None = None
    dead_cube: bool | None = None
    auto_doubles: int | None = None
    cube_limit: int | None = None
    cube_limit_named: bool = False


_HOLLAND: Final = "holland"
_JACOBY: Final = "jacoby"
_DEAD_CUBE: Final = "deadcube"
_RULE_FLAGS: Final = (_HOLLAND, _JACOBY, _DEAD_CUBE)
"""The on/off rule words; ``no`` before one turns it off."""
_NO: Final = "no"
_NO_CUBE_LIMIT: Final = "nocubelimit"
_AUTO_DOUBLES: Final = "autodoubles"
_CUBE_LIMIT: Final = "cubelimit"


def parse_match_rules(words: Sequence[str]) -> RuleChoices | Invalid:
    """The rule words of ``invite <name> <length> <rules...>`` (D56), any case; a later
    word overrides an earlier one about the same rule."""
    choices = RuleChoices(tuple(w.lower() for w in words))
    for word in words:
        lowered = word.lower()
        key, _, value = lowered.partition("=")
        if lowered in _RULE_FLAGS:
            choices = _with_flag(choices, lowered, True)
        elif lowered.startswith(_NO) and lowered[len(_NO) :] in _RULE_FLAGS:
            choices = _with_flag(choices, lowered[len(_NO) :], False)
        elif lowered == _NO_CUBE_LIMIT:
            choices = dataclasses.replace(choices, cube_limit=None, cube_limit_named=True)
        elif key == _AUTO_DOUBLES and value.isdigit():
            choices = dataclasses.replace(choices, auto_doubles=int(value))
        elif key == _CUBE_LIMIT and value.isdigit():
            choices = dataclasses.replace(choices, cube_limit=int(value), cube_limit_named=True)
        else:
            return Invalid.of(replies.unknown_match_rule(word))
    return choices


def _with_flag(choices: RuleChoices, flag: str, on: bool) -> RuleChoices:
    """``choices`` with the on/off rule ``flag`` (one of :data:`_RULE_FLAGS`) set."""
    if flag == _HOLLAND:
        return dataclasses.replace(choices, holland=on)
    if flag == _JACOBY:
        return dataclasses.replace(choices, jacoby=on)
    return dataclasses.replace(choices, dead_cube=on)


# -- resign (§4.7) ----------------------------------------------------------------------------


_RESIGN_KINDS: Final = {
    "n": WinKind.SINGLE,
    "normal": WinKind.SINGLE,
    "g": WinKind.GAMMON,
    "gammon": WinKind.GAMMON,
    "b": WinKind.BACKGAMMON,
    "backgammon": WinKind.BACKGAMMON,
}


def parse_resign_kind(args: Sequence[str]) -> WinKind | Invalid:
    """``resign n|g|b`` (or the whole words, any case)."""
    kind = _RESIGN_KINDS.get(args[0].lower()) if args else None
    return Invalid.of(replies.RESIGN_USAGE) if kind is None else kind


def move_text(args: Sequence[str]) -> str:
    """The moves of ``move ...`` as one text for :func:`backgammon.notation.parse_moves`."""
    return " ".join(args)


# -- ratings (§4.14) -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RatingsQuery:
    """What ``ratings`` was asked for."""

    name: str | None = None
    start: int | None = None
    end: int | None = None
    rates: bool = False
    """``analysis`` was given: each line with the player's mean error rate (D341)."""


_FROM: Final = "from"
_TO: Final = "to"
_RATES: Final = "analysis"
"""D341: a command's name, so no one can register it (:data:`RESERVED_NAMES`)."""


def parse_ratings_query(args: Sequence[str]) -> RatingsQuery | Invalid:
    """``ratings [name] [from <n>] [to <m>] [analysis]``: a missing or bad number after
    ``from``/``to``, or two names, is refused (§4.14); ``analysis`` anywhere asks for the
    error rates (D341)."""
    name: str | None = None
    bounds: dict[str, int] = {}
    rates = False
    words = iter(args)
    for word in words:
        key = word.lower()
        if key == _RATES:
            rates = True
        elif key in (_FROM, _TO):
            number = next(words, "")
            if not number.isdigit() or int(number) < 1:
                return Invalid.of(replies.positive_number_after(key))
            bounds[key] = int(number)
        elif name is not None and name != word:
            return Invalid.of(replies.only_one_name(name, word))
        else:
            name = word
    return RatingsQuery(name, bounds.get(_FROM), bounds.get(_TO), rates)


# -- accounts: login, password, address, registration (§1.3, §1.7, §4.17) ---------------


MIN_PASSWORD: Final = 4
"""§1.7, §4.17: a shorter password is refused."""
PASSWORD_SEPARATOR: Final = ":"
"""§4.17: ``password old:new:new``; a password may not contain it (§1.7)."""


@dataclass(frozen=True, slots=True)
class PasswordChange:
    """``password old:new:new``."""

    old: str
    new: str


def parse_password_change(text: str) -> PasswordChange | Invalid:
    """§4.17: three non-empty parts, the new one twice and at least 4 characters."""
    parts = text.split(PASSWORD_SEPARATOR)
    if len(parts) != 3 or not all(parts):
        return Invalid(replies.PASSWORD_USAGE)
    old, new, again = parts
    if new != again:
        return Invalid.of(replies.NEW_PASSWORD_TWICE)
    if len(new) < MIN_PASSWORD:
        return Invalid.of(replies.PASSWORD_TOO_SHORT)
    return PasswordChange(old, new)


def password_typable(password: str) -> bool:
    """True when a login line can carry ``password`` (D233): printable ASCII without
    spaces. The CLIP login line splits at spaces (§1.3), and login lines are read as
    7-bit, tabs as spaces (§1.1), so any other character could never match again."""
    return all("!" <= ch <= "~" for ch in password)


def new_password_problem(password: str) -> str | None:
    """Why a new account's password is refused (the reply), or None (§1.7)."""
    if len(password) < MIN_PASSWORD:
        return replies.PASSWORD_TOO_SHORT
    if PASSWORD_SEPARATOR in password:
        return replies.PASSWORD_HAS_COLON
    if not password_typable(password):
        return replies.PASSWORD_NOT_TYPABLE
    return None


def parse_address(text: str) -> str | Invalid:
    """``address <email>`` (§4.17): ``local@domain.tld`` and no colon."""
    local, _, domain = text.partition("@")
    if not local or "." not in domain or ":" in text:
        return Invalid.of(replies.not_an_email(text))
    return text


class LoginKind(enum.Enum):
    """What a line typed at the ``login:`` prompt is (§1.3, §1.7)."""

    BLANK = "blank"
    """Nothing: the prompt again."""
    GUEST = "guest"
    """``guest``: register a new account."""
    CLIP = "clip"
    """``login <client> <clipver> <name> <password>`` (extra words ignored)."""
    CONNECT = "connect"
    """``connect <name> <password>``: a password login without the telnet prompts."""
    NAME = "name"
    """One word: a name, whose password the server asks for."""
    LEAVE = "leave"
    """``bye``: close the connection (D194)."""
    VISITOR = "visitor"
    """``visitor!`` (telnet mode) or ``login <client> <clipver> visitor!`` (CLIP mode):
    watching without an account (D256)."""
    TOKEN = "token"
    """``login <client> <clipver> token! <token>``: the web page logging in again with the
    session token the server gave it (D320)."""
    UNKNOWN = "unknown"
    """Anything else: a failed login."""


@dataclass(frozen=True, slots=True)
class LoginLine:
    """A line of the login prompt: its kind and its words."""

    kind: LoginKind
    words: tuple[str, ...]


LEAVE: Final = "bye"
"""D194: typed at the login prompt or at a password prompt, ``bye`` leaves. No one may
register the name (:data:`RESERVED_NAMES`) and no password is that short
(:data:`MIN_PASSWORD`)."""
GUEST: Final = "guest"
"""§1.7: the login word of a new user (and a name no one may register)."""
VISITOR: Final = "visitor!"
"""D256: the login word of a visitor; ``!`` is in no name (:func:`name_form_problem`), so
no account's login ever read as it."""
TOKEN: Final = "token!"
"""D320: the login word of a session token, in a CLIP login's place of the name; ``!``
is in no name, so no account's login is ever read as a token's."""
_CLIP_LOGIN: Final = "login"
_CONNECT: Final = "connect"


def parse_login_line(line: str) -> LoginLine:
    """The kind of a (cleaned) line typed at the login prompt; the login words are
    exact (``Guest`` is a name, not the guest login)."""
    words = tuple(line.split())
    if not words:
        kind = LoginKind.BLANK
    elif words[0] == GUEST and len(words) == 1:
        kind = LoginKind.GUEST
    elif words[-1] == VISITOR and (
        len(words) == 1 or (len(words) == 4 and words[0] == _CLIP_LOGIN)
    ):
        kind = LoginKind.VISITOR
    elif words[0] == LEAVE and len(words) == 1:
        kind = LoginKind.LEAVE
    elif words[0] == _CLIP_LOGIN and len(words) == 5 and words[3] == TOKEN:
        kind = LoginKind.TOKEN
    elif words[0] == _CLIP_LOGIN and len(words) >= 5:
        kind = LoginKind.CLIP
    elif words[0] == _CONNECT and len(words) == 3:
        kind = LoginKind.CONNECT
    elif len(words) == 1:
        kind = LoginKind.NAME
    else:
        kind = LoginKind.UNKNOWN
    return LoginLine(kind, words)


MAX_NAME: Final = 20
"""D52: user names are 1 to 20 letters or underscores."""
_NAME: Final = re.compile(r"[A-Za-z_]+\Z")
RESERVED_NAMES: Final = frozenset(
    {GUEST, LEAVE, VISITOR.rstrip("!"), _CLIP_LOGIN, _CONNECT}
    | {word for command in COMMAND_LIST for word in command.words}
)
"""Names no one may register (any case, D265): the login words (``guest``, §1.7;
``bye``, D194; ``visitor``, D256; ``login`` and ``connect``) and every command's name and
alias (``who``, ``tell``, ``adios``...): a line that names such a user reads like a
command. Accounts registered before keep their names."""


def name_form_problem(name: str, *, scrubbed: bool = False) -> str | None:
    """Why ``name`` is not a name one can register (the reply), or None; whether it is
    taken is the store's to say (§1.7, D52). ``scrubbed``: the line had control
    characters (:class:`protocol.parser.ScrubbedLine`), which no name may hold: the name
    is refused, not taken as what is left (D265)."""
    if scrubbed or not _NAME.match(name) or not name.strip("_"):  # ``_`` alone: D265
        return replies.NAME_INVALID
    if len(name) > MAX_NAME:
        return replies.NAME_TOO_LONG
    if name.lower() in RESERVED_NAMES:
        return replies.name_taken(name)
    return None


# -- export (D76) ------------------------------------------------------------------------------


def parse_record_id(word: str, usage: str = replies.EXPORT_USAGE) -> int | Invalid:
    """``export <id>``, ``show dice <id>``: a match record's number; else ``usage``."""
    return int(word) if word.isdigit() else Invalid.of(usage)


class ExportForm(enum.Enum):
    """What ``export <id>`` sends: the ``.mat`` text (D77), the JSON record (D275) or
    GNU Backgammon's SGF with its analysis (D291)."""

    MAT = "mat"
    JSON = "json"
    SGF = "sgf"


def parse_export_form(words: Sequence[str]) -> ExportForm | Invalid:
    """The words after ``export <id>``: none (the ``.mat`` text), ``json`` or ``sgf``."""
    if not words:
        return ExportForm.MAT
    if len(words) == 1 and words[0].lower() in (ExportForm.JSON.value, ExportForm.SGF.value):
        return ExportForm(words[0].lower())
    return Invalid.of(replies.EXPORT_USAGE)
