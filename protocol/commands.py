"""The FIBS command table (§4.2): names, aliases, synopsis, help, allowed session states.

One :class:`Command` per command of §4.2. :func:`resolve` turns a typed first word into a
command the way FIBS does (§4.1): an exact name or alias first, then the special one- and
two-letter abbreviations (``b`` board, ``k`` kibitz, ``m`` move, ``r`` roll, ``s`` say,
``t`` tell, ``w`` who, ``wh`` whisper, ``to`` toggle), then any unique prefix. ``help`` and
``help <topic>`` are generated from the table by :func:`help_lines`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from protocol import replies
from protocol.errors import AmbiguousCommandError, UnknownCommandError


class SessionState(enum.Flag):
    """Where a session is (architecture.md "Session"); a command lists the states it allows."""

    GUEST = enum.auto()
    """Logged in as ``guest``, not yet registered (§1.7)."""
    LOBBY = enum.auto()
    """Logged in, neither playing nor watching."""
    PLAYING = enum.auto()
    """In a match (also between its games)."""
    WATCHING = enum.auto()
    """Watching another player (§4.11)."""
    NEW_PASSWORD = enum.auto()
    """A guest who chose a name and was asked for a password (§1.7): the next line is
    that password, not a command."""
    RETYPE_PASSWORD = enum.auto()
    """A guest asked to type the new password again (§1.7): the next line is no command."""
    VISITOR = enum.auto()
    """Watching without an account (D256): dispatch reads a visitor's session as in this
    state whatever it watches, so only the read-only commands that list it run."""


NOBODY: Final = SessionState(0)
"""No state allows the command: it always answers its refusal (``co``, ``ne``, ``ye``)."""
USER: Final = SessionState.LOBBY | SessionState.PLAYING | SessionState.WATCHING
"""Any registered, logged-in user."""
ANYONE: Final = USER | SessionState.GUEST | SessionState.VISITOR
IN_GAME: Final = SessionState.PLAYING | SessionState.WATCHING
NOT_PLAYING_STATES: Final = SessionState.LOBBY | SessionState.WATCHING
"""A logged-in user who is not playing (the lobby or watching)."""
DIALOG: Final = SessionState.NEW_PASSWORD | SessionState.RETYPE_PASSWORD
"""The states of a prompt that takes the next line as typed (no command runs in them)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One entry of the command table (§4.2)."""

    name: str
    synopsis: str
    """The syntax, as shown by ``help``."""
    summary: str
    """One line of help text."""
    aliases: tuple[str, ...] = ()
    """Other full names (``bye``: ``adios``, ``ciao``, ...); resolved like the name."""
    states: SessionState = USER
    """The session states in which the command runs."""
    refusal: tuple[str, ...] = ()
    """The reply when the session state is not in :attr:`states`; empty = treat the
    command as unknown in that state (``** Unknown command: '<word>'``)."""
    min_args: int = 0
    max_args: int | None = None
    no_args_ok: bool = False
    """With ``min_args`` > 0: zero arguments are nevertheless fine (``message``)."""
    usage: tuple[str, ...] = ()
    """The reply for a wrong number of arguments."""
    repeatable: bool = True
    """``!!`` may repeat it (not the chat commands, §4.1)."""
    remembered: bool = True
    """It becomes the command ``!!`` looks at; ``False`` for ``name``, a step of the guest
    dialog, after which ``!!`` still means the guest's last command."""
    prefixable: bool = True
    """A unique prefix selects it; ``False`` for exact-only words (``name``, ``co``)."""
    hidden: bool = False
    """Not listed by ``help``."""
    details: tuple[str, ...] = ()
    """More lines of ``help <command>`` after the summary (D176)."""

    @property
    def words(self) -> tuple[str, ...]:
        """The name followed by the aliases."""
        return (self.name, *self.aliases)

    def allows(self, state: SessionState) -> bool:
        """True when the command may run in ``state``."""
        return bool(state & self.states)

    def arguments_ok(self, n: int) -> bool:
        """True when ``n`` arguments fit the command's arity."""
        if n == 0 and self.no_args_ok:
            return True
        if n < self.min_args:
            return False
        return self.max_args is None or n <= self.max_args


_NOT_PLAYING = (replies.NOT_PLAYING,)

COMMAND_LIST: Final[tuple[Command, ...]] = (
    Command("about", "about", "Information about this server.", states=ANYONE),
    Command(
        "accept",
        "accept",
        "Accept a double or a resignation.",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "address",
        "address <email>",
        "Set the e-mail address others see in who and whois.",
        min_args=1,
        usage=(replies.ADDRESS_MISSING,),
    ),
    Command(
        "alert",
        "alert <name> <text>",
        "Like tell, but the other user's client program may show it as an alert.",
        min_args=2,
        repeatable=False,
    ),
    Command("average", "average", "Users per hour."),
    Command(  # not a FIBS command: this server's extension (D285)
        "analysis",
        "analysis <match id> [json]",
        "GNU Backgammon's analysis of a finished match: error rates, errors and blunders.",
        details=(
            "Every finished match is analysed by GNU Backgammon after it ends. The error",
            "rate is the equity lost per decision times 500: lower is better. See 'export'",
            "for your matches' ids. 'json' gives every decision as one line of JSON.",
            "'show analysis <match id>' is the same. 'ratings analysis' adds each player's",
            "mean error rate over their last 20 analysed matches to the rating list.",
        ),
        min_args=1,
        max_args=2,
        usage=(replies.ANALYSIS_USAGE,),
    ),
    Command("away", "away [message]", "List away users, or mark yourself away with a message."),
    Command("back", "back", "You are back: clears away."),
    Command(
        "beaver",
        "beaver",
        "The first instant redouble (unlimited matches).",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "blind",
        "blind [name]",
        "List blinded users, or toggle banning name from watching you.",
    ),
    Command(
        "board",
        "board",
        "Show the board of your game or of the game you watch.",
        states=IN_GAME | SessionState.VISITOR,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "bye",
        "bye",
        "Log out; a running match is saved.",
        aliases=("adios", "ciao", "end", "exit", "logout", "quit", "tschoe"),
        states=ANYONE,
    ),
    Command("cls", "cls", "Clear the screen.", aliases=("clear",)),
    Command("dicetest", "dicetest", "Dice statistics."),
    Command(  # not a FIBS command: this server's chouette (D303-D310, docs/chouette.md)
        "chouette",
        "chouette open [setting=value ...]|invite <name>|join <name>|start|leave|show [name]"
        "|team <text>|delegate [name]|return|record [name]",
        "Backgammon for 2 to 10 players at one board: the box against a team.",
        details=(
            "'chouette open' opens a table with its settings (cubes=single, beavers=on,"
            " rotation=la, consultation=free|none, ...; the defaults in 'help chouette'"
            " are the rules' own); 'chouette invite <name>' invites, 'chouette join"
            " <name>' accepts, 'chouette start' begins the first game; the next ones"
            " begin when a game ends. 'chouette leave' (or 'leave') leaves the table.",
            "The box plays alone against the team; the captain rolls and moves for the"
            " team. 'roll', 'move', 'resign' as in a match. Each member has a cube of"
            " their own: a member's 'double' doubles it before the captain rolls; the"
            " box's 'double [name ...]' doubles all the cubes it may, or the named.",
            "The box answers every team double at once: 'accept' (all), 'accept <name>"
            " ...' (those, rejecting the rest), 'reject' (all), 'reject <name> ...'. A"
            " member doubled by the box answers 'accept', 'reject' or 'beaver'.",
            "'show chouette' (or 'chouette show'): the line, the cubes and the totals"
            " (as lines for programs when you log in with a client program). 'chouette"
            " team <text>' talks to the team; the box never hears it. 'chouette delegate"
            " <name>' lets another member decide for your cube too; alone, it ends that.",
            "The team rolls by itself once the members' short window to double is over"
            " (autoroll); the box's answer and a member's answer to the box's double"
            " have a timer, after which the table's default answer is given. Logging"
            " out or losing the connection keeps your seat: your cube follows the"
            " captain, the next member plays for an absent captain, and an absent box"
            " holds the table (saved) until it is back. Logging in again seats you"
            " again, after a restart of the server too ('chouette return' by hand)."
            " 'chouette record': your"
            " table's standings over its finished games; 'chouette record <name>': a"
            " player's over every table.",
        ),
    ),
    Command(
        "double",
        "double",
        "Offer the cube to your opponent.",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command("erase", "erase", "Administrators only.", hidden=True),
    Command(  # not a FIBS command: this server's extension (D76)
        "export",
        "export [<match id> [json|sgf]]",
        "List your finished matches, or send one as a Jellyfish .mat file (or as JSON,"
        " or as GNU Backgammon's SGF with its analysis).",
        max_args=2,
        usage=(replies.EXPORT_USAGE,),
    ),
    Command(
        "gag",
        "gag [name]",
        "List gagged users, or toggle ignoring name.",
    ),
    Command("help", "help [topic]", "Help on a command or topic.", aliases=("man",), states=ANYONE),
    Command(
        "invite",
        "invite <name> [<n>|unlimited [rule ...]]",
        "Invite name to an n-point (1 to 99) or unlimited match, or, without a length,"
        " to resume your saved match with name.",
        details=(
            "Rules may follow the length: 'invite bob 7 holland' or",
            "'invite bob unlimited jacoby autodoubles=1 cubelimit=64' (see 'help rules').",
        ),
        states=NOT_PLAYING_STATES,
        refusal=(replies.ALREADY_PLAYING,),
        min_args=1,
        usage=(replies.INVITE_WHO,),
    ),
    Command(
        "join",
        "join [name]",
        "Accept an invitation, or start the next game of your match.",
        details=("'join' alone accepts your invitation when there is just one.",),
    ),
    Command(
        "kibitz",
        "kibitz <text>",
        "Talk to the players and watchers of your game.",
        states=IN_GAME,
        refusal=(replies.NOT_WATCHING_OR_PLAYING,),
        repeatable=False,
    ),
    Command(
        "last",
        "last",
        "The last 20 logins and logouts.",
        max_args=0,
        usage=(replies.LAST_USE_WHOIS,),
    ),
    Command(
        "leave",
        "leave",
        "Stop the match; it is saved.",
        states=SessionState.PLAYING,
        refusal=(replies.NO_ONE_TO_LEAVE,),
    ),
    Command(
        "look",
        "look <name>",
        "Show the board of name's game once.",
        min_args=1,
        usage=(replies.LOOK_AT_WHO,),
    ),
    Command(
        "message",
        "message [<name> <text>]",
        "Leave a message for name, or read yours.",
        min_args=2,
        no_args_ok=True,
        usage=(replies.MESSAGE_USAGE,),
        repeatable=False,
    ),
    Command("motd", "motd", "Show the message of the day."),
    Command(
        "move",
        "move <from>-<to> ...",
        "Move checkers; the word move may be omitted.",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "off",
        "off",
        "Bear off with every die, if possible.",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "oldboard",
        "oldboard <name>",
        "Show the board of your saved match with name.",
        states=NOT_PLAYING_STATES,
        refusal=(replies.CANT_WHILE_PLAYING,),
        min_args=1,
        usage=(replies.OLDBOARD_USAGE,),
    ),
    Command(
        "oldmoves",
        "oldmoves <name>",
        "The moves of the current game of your saved match.",
        min_args=1,
        usage=(replies.OLDMOVES_USAGE,),
    ),
    Command(
        "otter",
        "otter",
        "The third instant redouble (unlimited matches).",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "panic",
        "panic",
        "Save your game to the panic file (bug report).",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "password",
        "password <old>:<new>:<new>",
        "Change your password.",
        min_args=1,
        max_args=1,
        usage=replies.PASSWORD_USAGE,
        repeatable=False,
    ),
    Command(
        "pip",
        "pip",
        "Show the pip counts.",
        states=IN_GAME,
        refusal=(replies.NOT_PLAYING_OR_WATCHING,),
    ),
    Command("port", "port", "The port the server runs on.", hidden=True),
    Command(
        "raccoon",
        "raccoon",
        "The second instant redouble (unlimited matches).",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "ratings",
        "ratings [name] [from <n>] [to <m>] [analysis]",
        "The rating list.",
        details=(
            "With 'analysis', each line ends with the player's mean error rate over their",
            "last 20 matches analysed by GNU Backgammon ('-' when none; lower is better).",
        ),
    ),
    Command(
        "rawwho",
        "rawwho [args]",
        "The who list in the form client programs read: one line a user, then a 6.",
        states=USER | SessionState.VISITOR,
    ),
    Command(
        "redouble",
        "redouble",
        "An instant redouble (unlimited matches).",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
    ),
    Command(
        "reject",
        "reject",
        "Reject a double or a resignation.",
        states=SessionState.PLAYING,
        refusal=(replies.NOT_PLAYING_CANT_GIVE_UP,),
    ),
    Command(
        "resign",
        "resign n|g|b",
        "Offer to resign a normal game, a gammon or a backgammon.",
        states=SessionState.PLAYING,
        refusal=_NOT_PLAYING,
        min_args=1,
        usage=(replies.RESIGN_USAGE,),
    ),
    Command("roll", "roll", "Roll the dice.", states=SessionState.PLAYING, refusal=_NOT_PLAYING),
    Command("save", "save", "Save your toggles and settings."),
    Command(
        "say",
        "say <text>",
        "Talk to your opponent.",
        states=SessionState.PLAYING,
        refusal=(replies.SAY_OUTSIDE_GAME,),
        repeatable=False,
    ),
    Command(
        "set",
        "set [<variable> [<value>]]",
        "Show or set boardstyle, linelength, pagelength, redoubles, sortwho, timezone, dice_seed.",
        details=(
            "'set dice_seed <text>' adds a seed of yours to the dice of your next matches",
            "(until you log out); 'show dice <match id>' proves a finished match's dice.",
        ),
    ),
    Command("shout", "shout <text>", "Talk to everybody.", repeatable=False),
    Command(
        "show",
        "show games|saved|savedcount <name>|watchers|max|timezones [prefix]|dice <match id>"
        "|chouette [name]|analysis <match id> [json]",
        "Show various lists.",
        states=USER | SessionState.VISITOR,
        min_args=1,
        usage=(replies.SHOW_WHAT,),
    ),
    Command("shutdown", "shutdown", "Administrators only.", hidden=True),
    Command("stat", "stat", "Server statistics."),
    Command(
        "tell",
        "tell <name> <text>",
        "Send a private message to name.",
        repeatable=False,
    ),
    Command(
        "tellx",
        "tellx <name> <text>",
        "Tell without name completion.",
        repeatable=False,
    ),
    Command(
        "time",
        "time [zone]",
        "The current time in your time zone and in UTC.",
        aliases=("date",),
        states=ANYONE,
    ),
    Command("toggle", "toggle [option ...]", "Show your toggles, or flip some."),
    Command(
        "unwatch",
        "unwatch",
        "Stop watching.",
        states=SessionState.WATCHING | SessionState.VISITOR,
        refusal=(replies.NOT_WATCHING,),
    ),
    Command("version", "version", "The server version.", states=ANYONE),
    Command("waitfor", "waitfor [name ...]", "Be told when name logs in."),
    Command(
        "watch",
        "watch <name>",
        "Watch name's games.",
        states=NOT_PLAYING_STATES | SessionState.VISITOR,
        refusal=(replies.CANT_WATCH_WHILE_PLAYING,),
        min_args=1,
        usage=(replies.WATCH_WHO,),
    ),
    Command("wave", "wave", "Wave goodbye; twice to log out."),
    Command("where", "where [name]", "Where a user comes from."),
    Command(
        "whisper",
        "whisper <text>",
        "Talk to the watchers of your game.",
        states=IN_GAME,
        refusal=(replies.NOT_WATCHING_OR_PLAYING,),
        repeatable=False,
    ),
    Command(
        "who",
        "who [ready|playing|away|count|<name>|from <site>]",
        "Who is logged in.",
        states=ANYONE,
        details=(
            "The S column: P playing, W watching, A away, R ready to play (accepts",
            "invitations), - none of these; a B after it marks a bot (a program).",
            "rating and exp: rating and experience (points of finished matches);",
            "login and idle: minutes since the login and since the last command.",
        ),
    ),
    Command(
        "whois",
        "whois <name>",
        "Details about a user.",
        min_args=1,
        usage=(replies.WHOIS_USAGE,),
    ),
    # Exact words that are no FIBS commands for users (§4.2).
    Command(
        "token!",
        "token! [<old token>] | token! end <token>",
        "The web page's session token, to log in again after a dropped connection.",
        min_args=0,
        max_args=2,
        usage=(replies.WEB_TOKEN_USAGE,),
        repeatable=False,
        remembered=False,
        prefixable=False,
        hidden=True,
        details=(
            "Not a FIBS command: the page asks for a token at its login and logs in with",
            "'login <client> <clipver> token! <token>' after a dropped connection (D320).",
        ),
    ),
    Command(
        "match!",
        "match! <match id>",
        "The web page's page of a finished match: every step and the .mat text, as JSON.",
        min_args=1,
        max_args=1,
        usage=(replies.MATCH_PAGE_USAGE,),
        repeatable=False,
        prefixable=False,
        hidden=True,
        details=("Not a FIBS command: only the web page sends it (D377).",),
    ),
    Command(
        "profile!",
        "profile! <name>",
        "The web page's profile of a player: rating, experience, recent matches, as JSON.",
        min_args=1,
        max_args=1,
        usage=(replies.PROFILE_USAGE,),
        repeatable=False,
        prefixable=False,
        hidden=True,
        details=("Not a FIBS command: only the web page sends it (D377).",),
    ),
    Command(
        "name",
        "name <username>",
        "Guests: choose your login name, 1 to 20 letters (A-Z, a-z) or underscores _.",
        states=SessionState.GUEST,
        refusal=(replies.NAME_NOT_CHANGEABLE,),
        min_args=1,
        max_args=1,
        remembered=False,
        prefixable=False,
        hidden=True,
    ),
    Command(
        "co",
        "co",
        "",
        states=NOBODY,
        refusal=(replies.PERMISSON_DENIED,),
        prefixable=False,
        hidden=True,
    ),
    Command(
        "ne",
        "ne",
        "",
        states=NOBODY,
        refusal=(replies.PERMISSON_DENIED,),
        prefixable=False,
        hidden=True,
    ),
    Command(
        "ye",
        "ye",
        "",
        states=NOBODY,
        refusal=(replies.PERMISSON_DENIED,),
        prefixable=False,
        hidden=True,
    ),
)
"""Every command of §4.2, alphabetically, then the exact-only words."""

COMMANDS: Final[dict[str, Command]] = {c.name: c for c in COMMAND_LIST}
"""Commands by name."""

ABBREVIATIONS: Final[dict[str, str]] = {
    "b": "board",
    "k": "kibitz",
    "m": "move",
    "r": "roll",
    "s": "say",
    "t": "tell",
    "w": "who",
    "wh": "whisper",
    "to": "toggle",
}
"""§4.1: abbreviations that win although other commands share the prefix."""

_WORDS: Final[dict[str, Command]] = {w: c for c in COMMAND_LIST for w in c.words}

HELP_TOPICS: Final[dict[str, tuple[str, ...]]] = {
    "autologin": (
        "At the login prompt you may type 'connect <name> <password>' to log in",
        "without a password prompt.",
    ),
    "beginner": (
        "Type 'toggle ready' to be ready to play, 'who ready' to find opponents,",
        "'invite <name> <n>' to invite someone to an n-point match and 'join <name>'",
        "to accept an invitation. 'help <command>' explains a command.",
    ),
    "boardstyle": (
        "'set boardstyle 1' and '2' show ASCII boards (style 2 puts the point numbers",
        "above and below the board), '3' sends one board: line for client programs.",
    ),
    "client": ("Client programs log in with 'login <client> 1008 <name> <password>'.",),
    "commands": ("Type 'help' for the list of commands.",),
    "complaints": ("Please send complaints to the server administrator.",),
    "countries": ("'who from <site>' lists the users from a site.",),
    "crawford": (
        "The Crawford rule is used if either player has 'crawford' toggled on:",
        "nobody may double in the game after a player reaches match point minus one.",
    ),
    "formula": (
        "Ratings change after every finished match of limited length:",
        "winner += 4*K*sqrt(N)*P, loser -= 4*K*sqrt(N)*P, K = max(1, 5 - experience/100).",
    ),
    "hostnames": ("'where <name>' shows where a user comes from.",),
    "names": (
        "Most commands taking a user name accept a unique prefix of a logged-in",
        "user's name.",
    ),
    "rawboard": ("'set boardstyle 3' sends boards as one board: line of 53 fields.",),
    "rules": (
        "Moves are typed from-to in the point numbers your board shows: 'move 13-10 10-9',",
        "'bar-22', '6-off'; each move uses one die, and 'board' shows which way you move.",
        "Rules an invitation may name after the length: holland, noholland, jacoby,",
        "nojacoby, deadcube, nodeadcube, autodoubles=N, cubelimit=N, nocubelimit.",
    ),
    "screen": ("'set linelength' and 'set pagelength' describe your screen.",),
    "sortwho": ("'set sortwho login|name|rating|rrating' sorts the who list.",),
    "timezones": (
        "'set timezone <zone>' sets your time zone, e.g. Europe/Berlin;",
        "'show timezones' lists the zones, 'show timezones Europe' those starting so.",
    ),
    "tinyfugue": ("Any telnet client works; TinyFugue users can use 'connect' (help autologin).",),
}
"""§4.2: help topics that are no commands (texts are ours; clients do not parse them)."""


def iter_visible() -> Iterator[Command]:
    """The commands ``help`` lists, alphabetically."""
    return (c for c in sorted(COMMAND_LIST, key=lambda c: c.name) if not c.hidden)


def resolve(word: str) -> Command:
    """The command a typed first word selects (§4.1); case-insensitive.

    :raises AmbiguousCommandError: if the prefix matches several commands.
    :raises UnknownCommandError: if it matches none.
    """
    key = word.lower()
    if key in _WORDS:
        return _WORDS[key]
    if key in ABBREVIATIONS:
        return COMMANDS[ABBREVIATIONS[key]]
    matches = {c.name: c for w, c in _WORDS.items() if c.prefixable and w.startswith(key)}
    if len(matches) == 1 and key:
        return next(iter(matches.values()))
    if len(matches) > 1:
        raise AmbiguousCommandError(word, tuple(sorted(matches)))
    raise UnknownCommandError(word)


def help_lines(topic: str | None = None) -> list[str]:
    """``help`` (the command list) or ``help <topic>`` (one command or topic), §4.2."""
    if topic is None:
        names = [c.name for c in iter_visible()]
        lines = ["Available commands:"]
        for i in range(0, len(names), 6):
            lines.append("  " + "".join(f"{n:<12}" for n in names[i : i + 6]).rstrip())
        lines.append("Help topics: " + ", ".join(sorted(HELP_TOPICS)))
        lines.append("Type 'help <command>' for more.")
        return lines
    key = topic.lower()
    if key in HELP_TOPICS and key not in _WORDS:
        return [*HELP_TOPICS[key]]
    try:
        command = resolve(key)
    except UnknownCommandError:
        return [replies.NO_HELP]
    if command.hidden and not command.allows(SessionState.GUEST):  # a guest's own: helped
        return [replies.NO_HELP]
    lines = [f"Usage: {command.synopsis}", command.summary, *command.details]
    if command.aliases:
        lines.append("Also: " + ", ".join(command.aliases))
    abbreviations = sorted(a for a, n in ABBREVIATIONS.items() if n == command.name)
    if abbreviations:
        lines.append("Abbreviation: " + ", ".join(abbreviations))
    return lines
