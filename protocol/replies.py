"""Every human-readable FIBS message, in one place (spec §1-§6).

Fixed texts are ``UPPER_CASE`` constants, texts with values are small functions returning
one line (``str``) or several (``list[str]``). Each cites its spec section; choices where
the spec marks a text ⚠ UNCONFIRMED are recorded in docs/protocol-decisions.md (cited
here as "D<n>"). Strings carry no line terminators; prompts (``login: ``, ``> ``, password
prompts) are the only texts that must be sent *without* CR LF (§1.1) and are named
``*_PROMPT``.

Where telnet mode and CLIP mode differ (§2.4), a function takes a :class:`Mode`.
Tests and the server compare against these names and never retype the strings.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, assert_never

from backgammon.errors import Refusal
from backgammon.events import WinKind
from backgammon.fair_dice import RULE as DICE_RULE
from protocol import clip


class Mode(enum.Enum):
    """How a session wants its output (§1.3, §1.6): prose (telnet) or numbered CLIP lines."""

    TELNET = "telnet"
    CLIP = "clip"


def plural(n: int, word: str) -> str:
    """``1 point`` / ``2 points``: singular for exactly one (§4.6-§4.8)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def points(n: int) -> str:
    """``1 point`` / ``n points`` (§4.6, §4.7, §4.8)."""
    return plural(n, "point")


def match_phrase(length: int | None) -> str:
    """``a 3 point match`` / ``an unlimited match`` (§4.3); ``None`` = unlimited."""
    return "an unlimited match" if length is None else f"a {length} point match"


# =====================================================================================
# §1 Connection and login
# =====================================================================================

LOGIN_PROMPT: Final = "login: "
"""§1.2: the login prompt, exactly; no line terminator."""
TELNET_PROMPT: Final = "> "
"""§1.6: the telnet-mode prompt after each block of output; never sent in CLIP mode."""
PASSWORD_PROMPT: Final = "password: "
"""§1.6 ⚠ (BaldLies): the telnet login password prompt (D1)."""

BANNER_REQUIRED_LINE: Final = "One account per person only!"
"""§1.2: MatchDog logs in only after a banner line containing this - keep it."""
BANNER: Final[tuple[str, ...]] = (
    "WELCOME TO THE",
    "            _______   _          ______            _____",
    "           |  _____| | |        |  __  \\          / ____|",
    "           | |___    | |        | |__|  |        | |____",
    "           |  ___|   | |        |  __  <          \\____ \\",
    "           | |       | |        | |__|  |          ____| |",
    "           |_|irst   |_|nternet |______/ackgammon |_____/erver",
    "",
    "              LOGIN AS guest IF YOU ARE NEW TO THIS SERVER!",
    "                     " + BANNER_REQUIRED_LINE,
)
"""§1.2: the banner before the login prompt (free-form; clients do not parse it)."""


def asctime(when: dt.datetime) -> str:
    """C ``asctime`` without the newline: ``Thu Jan  2 00:27:27 2003`` (§1.2, §4.14)."""
    return f"{when:%a %b} {when.day:>2} {when:%H:%M:%S %Y}"


def date_line(local: dt.datetime, utc: dt.datetime) -> str:
    """§1.2, §4.14 (``time``): the local date, then the same instant in UTC.

    ``Thursday, January 02 01:27:27 MET   ( Thu Jan  2 00:27:27 2003 UTC )``.

    ``local`` must be timezone-aware (its ``tzname()`` is shown); ``utc`` is the same
    instant in UTC.
    """
    zone = local.tzname() or "UTC"
    return f"{local:%A, %B %d %H:%M:%S} {zone}   ( {asctime(utc)} UTC )"


def banner(local: dt.datetime, utc: dt.datetime) -> list[str]:
    """§1.2: banner, a blank line, the date line. The ``login: `` prompt follows separately."""
    return [*BANNER, "", date_line(local, utc)]


ALREADY_LOGGED_IN: Final = "** Warning: You are already logged in."
"""§1.4: to the new connection when the account was connected elsewhere."""


def closed_old_connection(name: str) -> str:
    """§1.4, §4.9: to the opponent of a session replaced by a second login."""
    return f"Closed old connection with user {name}. The game was saved."


def user_authenticated(name: str) -> str:
    """§1.6 (telnet login) ⚠: ``** User <name> authenticated.`` (D1)."""
    return f"** User {name} authenticated."


def last_login(when: str, host: str) -> str:
    """§1.6 (telnet login) ⚠: ``** Last login: <date> from <host>`` (D1)."""
    return f"** Last login: {when} from {host}"


def telnet_date(when: dt.datetime) -> str:
    """§1.6 ⚠: the date of ``** Last login:`` (BaldLies: ``%a %b %d %H:%M:%S %Y``, D1)."""
    return f"{when:%a %b %d %H:%M:%S %Y}"


# §1.7 guest login and registration ------------------------------------------------------

GUEST_WELCOME: Final[tuple[str, ...]] = (
    "Welcome to FIBS. You just logged in as guest.",
    "Please register before using this server:",
    "",
    "Type 'name username' where name is the word 'name' and",
    "username is the login name you want to use.",
    "The username may contain only letters (A-Z, a-z) and the underscore _,",
    "at most 20 of them; 'help name' says more.",
    "The system will then ask you for your password twice.",
    "Please make sure that you don't forget your password. All",
    "passwords are encrypted before they are saved. If you forget",
    "your password there is no way to find out what it was.",
    "Please type 'bye' if you don't want to register now.",
    "",
    "ONE USERNAME PER PERSON ONLY!!!",
    "",
)
"""§1.7: after ``guest`` at the login prompt; the ``> `` prompt follows."""


def name_will_be(name: str) -> str:
    """§1.7: first reply to ``name <login>`` (GIB ignores lines starting ``Your name will be ``)."""
    return f"Your name will be {name}"


NO_PASSWORD_HINT: Final = "Type in no password and hit Enter/Return if you want to change it now."
"""§1.7: second line after ``name <login>``."""
GIVE_PASSWORD_PROMPT: Final = "Please give your password: "
"""§1.7: first password prompt (no terminator; GIB matches it byte for byte)."""
RETYPE_PASSWORD_PROMPT: Final = "Please retype your password: "
"""§1.7: second password prompt (no terminator)."""
REGISTERED: Final = "You are registered."
"""§1.7: GIB looks for this line."""
REGISTERED_HINT: Final = "Type 'help beginner' to get started."
"""§1.7."""


VISITOR_WELCOME: Final[tuple[str, ...]] = (
    "Welcome to FIBS. You are a visitor: you may watch, not play or talk.",
    "Type 'who' for who is online, 'show games' for the matches, 'watch <name>' to watch.",
)
"""D256: the visitor's greeting (telnet mode; a CLIP visitor gets the who list)."""
TOO_MANY_VISITORS: Final = "** Too many visitors are watching right now. Please try again later."
"""D257: ``[limits] max_visitors`` visitors are on already (or visitors are off)."""
TOO_MANY_VISITORS_FROM_ADDRESS: Final = (
    "** Too many visitors from your address are watching right now. Please try again later."
)
"""D268: ``[limits] max_visitors_per_address`` visitors from this address are on already."""


def visitor_refused(word: str) -> str:
    """D256: a visitor typed a command that acts (anything but watching and looking)."""
    return f"** '{word}' is not for visitors. Log in (or register as guest) to do that."


def guest_must_register(word: str) -> str:
    """D191: a guest typed a command only registered users have (telnet mode only: a
    guest is always in telnet mode, and GIB sends a guest nothing but ``name``)."""
    return f"** '{word}' is for registered users. Please register first: type 'name <username>'."


LOGIN_INCORRECT: Final = "Login incorrect."
"""D192: a wrong name or password at the telnet ``password: `` prompt, before the next
``login: `` (FIBS sends nothing but the prompt, §1.5; CLIP logins keep that)."""


def logged_in_elsewhere(host: str) -> str:
    """D193: to the first session of a user who logs in a second time, before it closes."""
    return f"** You logged in again from {host}. This connection is closed."


NAME_INVALID: Final = "** Your name may only contain letters and the underscore character _ ."
"""§1.7."""
NO_PASSWORD_GIVEN: Final = "** No password given. Please choose a new name"
"""§1.7: empty first password; back to the ``name`` step."""
PASSWORD_TOO_SHORT: Final = "Minimal password length is 4 characters."
"""§1.7: then the first password prompt again."""
PASSWORDS_DIFFER_PROMPT: Final = (
    "** The two passwords were not identical. Please give them again. Password: "
)
"""§1.7: a prompt (no terminator); the first-password step repeats."""
PASSWORD_HAS_COLON: Final = "Your password may not contain ':'"
"""§1.7 ⚠ (BaldLies text, D2)."""
PASSWORD_NOT_TYPABLE: Final = (
    "** Your password may only contain ASCII letters, digits and punctuation, no spaces:"
    " a login line could not carry it."
)
"""D233: a new password with a space, a tab or a character outside ASCII (the CLIP
login line splits at spaces, §1.3; the server reads login lines as 7-bit, §1.1)."""
NAME_NOT_CHANGEABLE: Final = "** You're not supposed to change your name."
"""§4.2: ``name`` after login."""


def name_taken(name: str) -> str:
    """§1.7: the name is used or reserved (e.g. ``guest``)."""
    return f"** Please use another name. '{name}' is already used by someone else."


# §1.8 logging out -------------------------------------------------------------------------

GOODBYE: Final[tuple[str, ...]] = (
    "",
    "                      Thanks for playing backgammon here.",
    "",
    "                                 Goodbye.",
)
"""§1.8: logout text; FCM detects ``           Goodbye\\.`` (11+ leading spaces)."""
YOU_WAVE: Final = "You wave goodbye."
"""§1.8: first ``wave``."""
YOU_WAVE_AGAIN: Final = "You wave goodbye again and log out."
"""§1.8: second ``wave``, then the logout text."""


def waves(name: str) -> str:
    """§1.8: to others (with shouts enabled) after a first ``wave``."""
    return f"{name} waves goodbye."


def waves_again(name: str) -> str:
    """§1.8: to others after a second ``wave``."""
    return f"{name} waves goodbye again."


def logs_in(name: str) -> str:
    """§2.4: CLIP 7 text and the telnet line ``<name> logs in.``."""
    return f"{name} logs in."


def logs_out(name: str) -> str:
    """§1.8, §2.4: CLIP 8 text and telnet line after ``bye``."""
    return f"{name} logs out."


def drops_connection(name: str) -> str:
    """§1.8, §2.4: CLIP 8 text and telnet line when the socket closed."""
    return f"{name} drops connection."


def timed_out(name: str) -> str:
    """§1.8 ⚠, §6.1: CLIP 8 text after an idle timeout (D3)."""
    return f"Connection with {name} timed out."


CONNECTION_TIMED_OUT: Final = "Connection timed out."
"""§6.1: to the idle user before the server closes the connection."""

# =====================================================================================
# §2.4 CLIP messages and their telnet-mode equivalents
# =====================================================================================


def login_notice(name: str, mode: Mode) -> str:
    """§2.4 code 7: a user logged in (to users with ``notify`` on)."""
    text = logs_in(name)
    return clip.Login(name, text).format() if mode is Mode.CLIP else text


def logout_notice(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 8: ``text`` is :func:`logs_out`, :func:`drops_connection` or :func:`timed_out`."""
    return clip.Logout(name, text).format() if mode is Mode.CLIP else text


def message_line(sender: str, time: int, text: str, mode: Mode) -> str:
    """§2.4 code 9: a stored message; telnet ⚠ ``Message from <name>: <text>`` (D4)."""
    if mode is Mode.CLIP:
        return clip.Message(sender, time, text).format()
    return f"Message from {sender}: {text}"


MESSAGES_FOR_YOU: Final = "There are messages for you:"
"""§2.4 (FCM): telnet header before stored messages at login (D4)."""
NO_NEW_MESSAGES: Final = "There are no new messages for you."
"""§4.12: ``message`` without arguments and nothing stored."""


def message_delivered(name: str, mode: Mode) -> str:
    """§2.4 code 10: your message was delivered at once; telnet ⚠ (D4)."""
    if mode is Mode.CLIP:
        return clip.MessageDelivered(name).format()
    return f"Message delivered to {name}."


def message_saved(name: str, mode: Mode) -> str:
    """§2.4 code 11: your message was stored; telnet ⚠ (D4)."""
    if mode is Mode.CLIP:
        return clip.MessageSaved(name).format()
    return f"Message saved for {name}."


def messages_full(name: str) -> str:
    """D270: ``name`` has ``[limits] max_stored_messages`` waiting; nothing was stored."""
    return f"** {name} has too many messages waiting already. Your message was not saved."


TOO_MANY_MESSAGES_SENT: Final = (
    "** You have too many messages waiting to be read already. Your message was not saved."
)
"""D270: the sender has ``[limits] max_stored_messages_per_sender`` stored for others."""


def says(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 12: a tell to you or your opponent's say; telnet ⚠ ``<name> says: <text>`` (D4)."""
    return clip.Says(name, text).format() if mode is Mode.CLIP else f"{name} says: {text}"


def shouts(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 13; telnet ⚠ ``<name> shouts: <text>`` (D4)."""
    return clip.Shouts(name, text).format() if mode is Mode.CLIP else f"{name} shouts: {text}"


def whispers(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 14; telnet ⚠ ``<name> whispers: <text>`` (D4)."""
    if mode is Mode.CLIP:
        return clip.Whispers(name, text).format()
    return f"{name} whispers: {text}"


def kibitzes(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 15; telnet ``<name> kibitzes: <text>`` [C] TGB capture."""
    if mode is Mode.CLIP:
        return clip.Kibitzes(name, text).format()
    return f"{name} kibitzes: {text}"


def you_say(name: str, text: str, mode: Mode) -> str:
    """§2.4 code 16: echo of your tell/say (``name`` = recipient).

    Telnet: ``** You tell <name>: <text>`` [C] FCM.
    """
    if mode is Mode.CLIP:
        return clip.YouSay(name, text).format()
    return f"** You tell {name}: {text}"


def you_shout(text: str, mode: Mode) -> str:
    """§2.4 code 17; telnet ⚠ ``** You shout: <text>`` (D4)."""
    return clip.YouShout(text).format() if mode is Mode.CLIP else f"** You shout: {text}"


def you_whisper(text: str, mode: Mode) -> str:
    """§2.4 code 18; telnet ⚠ ``** You whisper: <text>`` (D4)."""
    return clip.YouWhisper(text).format() if mode is Mode.CLIP else f"** You whisper: {text}"


def you_kibitz(text: str, mode: Mode) -> str:
    """§2.4 code 19; telnet ⚠ ``** You kibitz: <text>`` (D4)."""
    return clip.YouKibitz(text).format() if mode is Mode.CLIP else f"** You kibitz: {text}"


def alert(name: str, text: str, mode: Mode) -> str:
    """§2.1 code 20 ⚠ (optional ``alert``); telnet ⚠ ``<name> alerts: <text>`` (D4)."""
    return clip.Alert(name, text).format() if mode is Mode.CLIP else f"{name} alerts: {text}"


BELL: Final = "\x07"
"""§2.4: appended to invitations and messages for users with ``toggle bell`` on."""

# =====================================================================================
# §3.6 boardstyle (the rest of ``set`` is §4.16)
# =====================================================================================

BOARDSTYLE_INVALID: Final = "** Valid arguments are the numbers 1 to 3."
"""§3.6, §4.16."""

# =====================================================================================
# §4.1 parsing
# =====================================================================================


def unknown_command(word: str) -> str:
    """§4.1: the first word as typed, in single quotes; also for ambiguous prefixes."""
    return f"** Unknown command: '{word}'"


def ambiguous_command(word: str, candidates: Sequence[str]) -> str:
    """D170: telnet mode, after :func:`unknown_command` for a prefix of several commands."""
    return f"'{word}' is ambiguous: {', '.join(candidates)}."


def did_you_mean(word: str, commands: Sequence[str]) -> str:
    """D170: telnet mode, after :func:`unknown_command` for a close typo of a command."""
    names = " or ".join(f"'{c}'" for c in commands)
    return f"Did you mean {names}? Type 'help' for the commands."


def ambiguous_name(candidates: Sequence[str], name: str) -> list[str]:
    """§4.1 ⚠ (BaldLies, with its typo ``Ambigous``): a name prefix matching several users (D5)."""
    return [f"Ambigous name: Try one of: {', '.join(candidates)}", no_one_called(name)]


NO_MOTD: Final = "There is no message of the day."
"""D178: telnet-mode ``motd`` when none is set (CLIP mode: ``3`` and ``4`` alone)."""
YOURE_AWAY: Final = "You're away. Please type 'back'"
"""§1.6, §4.1, §4.13: after every reply while away (and the reply to ``away <msg>``)."""
PERMISSION_DENIED: Final = "** Permission denied"
"""§4.2: admin commands (``erase``, ``shutdown``) for normal users."""
PERMISSON_DENIED: Final = "** Permisson denied"
"""§4.2: ``co``, ``ne``, ``ye`` (the typo is FIBS's, [C] SPEC)."""
NO_HELP: Final = "** No help available on that topic."
"""§4.2 ⚠: ``help <unknown>`` (D6)."""

# =====================================================================================
# §4.3 invite and join
# =====================================================================================

INVITE_WHO: Final = "** invite who?"
"""§4.3: ``invite`` without a name."""
CANT_INVITE_YOURSELF: Final = "** You can't invite yourself."
ALREADY_PLAYING: Final = "** You are already playing."
INVITE_BAD_LENGTH: Final = (
    "** The second argument to 'invite' has to be a number or the word 'unlimited'"
)
NOT_EXPERIENCED: Final = "** You're not experienced enough to play a match of that length."
INVITE_LENGTH_RANGE: Final = "A match length is a number from 1 to 99, or 'unlimited'."
"""D172: telnet mode, after :data:`INVITE_BAD_LENGTH`."""


def experience_needed(longest: int, needed: int, experience: int) -> str:
    """D172: telnet mode, after :data:`NOT_EXPERIENCED`."""
    return (
        f"Matches longer than {longest} points need an experience above {needed};"
        f" yours is {experience}."
    )


def how_to_get_ready(name: str) -> str:
    """D172: telnet mode, after :func:`refusing_games`: how that player becomes ready."""
    return (
        f"{name} accepts invitations only after typing 'toggle ready'"
        f" (you could 'tell {name}' so); 'who ready' lists the players who are ready."
    )


NOBODY_INVITED_YOU: Final = "Nobody has invited you; 'invite <name> <n>' invites someone."
"""D173: telnet mode, after :data:`JOIN_WHO` when no invitation waits."""


def invited_by(names: Sequence[str]) -> str:
    """D173: telnet mode, after :data:`JOIN_WHO` when several invitations wait."""
    return f"You are invited by {', '.join(names)}: type 'join <name>' to accept one."


def no_one_called(name: str) -> str:
    """§4.3, §4.12: unknown or offline user (no period)."""
    return f"** There is no one called {name}"


def no_one_called_period(name: str) -> str:
    """§4.14 (``who <name>``): same with a final period."""
    return f"** There is no one called {name}."


def refusing_games(name: str) -> str:
    """§4.3: invitee/target not ready."""
    return f"** {name} is refusing games."


def already_playing_with(name: str) -> str:
    """§4.3 (``invite``): the invitee plays."""
    return f"** {name} is already playing with someone else."


def you_invited(name: str, length: int | None) -> str:
    """§4.3: ``** You invited bob to a 3 point match.`` / ``... to an unlimited match.``."""
    return f"** You invited {name} to {match_phrase(length)}."


def you_invited_resume(name: str) -> str:
    """§4.3: invite without a length when a saved match exists."""
    return f"** You invited {name} to resume a saved match."


def no_saved_match_give_length(name: str) -> str:
    """§4.3: invite without a length and no saved match."""
    return f"** There's no saved match with {name}. Please give a match length."


def is_away(name: str, message: str) -> str:
    """§4.3, §4.13: the invitee/tell recipient is away (after an empty line for invite)."""
    return f"{name} is away: {message}"


def invitation(inviter: str, length: int | None) -> list[str]:
    """§4.3: what the invitee receives for a new match (two lines)."""
    return [f"{inviter} wants to play {match_phrase(length)} with you.", type_join(inviter)]


def invitation_resume(inviter: str) -> list[str]:
    """§4.3: what the invitee receives for a saved match."""
    return [f"{inviter} wants to resume a saved match with you.", type_join(inviter)]


def type_join(inviter: str) -> str:
    """§4.3: second line of an invitation."""
    return f"Type 'join {inviter}' to accept."


def saved_match_warning(length: int | None) -> str:
    """§4.3: third invitation line when a different saved match exists."""
    which = "unlimited" if length is None else f"{length} point"
    return f"WARNING: Don't accept if you want to continue the saved {which} match!"


JOIN_WHO: Final = "** Error: Join who?"
"""§4.3: ``join`` without a name and no match to continue."""
CANT_PLAY_TWO: Final = "** You can't play two games at once"
SAVED_MATCH_CORRUPT: Final = "** ERROR: Saved match is corrupt. Please start another one."


def join_already_playing(name: str) -> str:
    """§4.3 (``join``): target playing."""
    return f"** Error: {name} is already playing with someone else."


def didnt_invite_you(name: str) -> str:
    """§4.3."""
    return f"** {name} didn't invite you."


def cant_find_player(name: str) -> str:
    """§4.3 ⚠ (GIB, BaldLies): ``join`` to a user who is not logged in (D7)."""
    return f"** Error: can't find player {name}"


def now_playing(inviter: str, length: int | None) -> str:
    """§4.3: to the invitee on a new match (no final period)."""
    if length is None:
        return f"** You are now playing an unlimited match with {inviter}"
    return f"** You are now playing a {length} point match with {inviter}"


def player_joined(invitee: str, length: int | None) -> str:
    """§4.3: to the inviter on a new match (the unlimited form has no ``** ``, [C] SPEC/GIB)."""
    if length is None:
        return f"Player {invitee} has joined you for an unlimited match."
    return f"** Player {invitee} has joined you for a {length} point match."


def now_playing_resumed(inviter: str) -> str:
    """§4.3: to the invitee on a resumed match."""
    return f"You are now playing with {inviter}. Your running match was loaded."


def joined_resumed(invitee: str) -> str:
    """§4.3: to the inviter on a resumed match."""
    return f"{invitee} has joined you. Your running match was loaded."


def resume_synopsis(
    turn: str, length: int | None, name1: str, score1: int, name2: str, score2: int
) -> list[str]:
    """§4.3 (SPEC/MatchDog form, D8): the synopsis both players get after a resume."""
    return [
        f"turn: {turn}.",
        "unlimited matchlength" if length is None else f"match length: {length}",
        f"points for {name1}: {score1}",
        f"points for {name2}: {score2}",
    ]


def match_start_report(p1: str, p2: str, length: int | None) -> str:
    """§4.3: report line ``<p1> and <p2> start a <n> point match.``."""
    return f"{p1} and {p2} start {match_phrase(length)}."


def match_resume_report(p1: str, p2: str, length: int | None) -> str:
    """§4.3: report line for a resumed match (``<n>-point`` with a hyphen)."""
    what = "unlimited match" if length is None else f"{length}-point match"
    return f"{p1} and {p2} are resuming their {what}."


def match_end_report(winner: str, loser: str, length: int, score_w: int, score_l: int) -> str:
    """§4.3: report line, two spaces before the score and a space before the period."""
    return f"{winner} wins a {length} point match against {loser}  {score_w}-{score_l} ."


# =====================================================================================
# §4.4 start of a game and the opening roll
# =====================================================================================


def starting_new_game(opponent: str) -> str:
    """§4.4: to both players (and watchers, naming the watched player's opponent)."""
    return f"Starting a new game with {opponent}."


def opening_roll(mine: int, opponent: str, theirs: int) -> str:
    """§4.4: ``You rolled 6, bob rolled 2`` (no period, D9)."""
    return f"You rolled {mine}, {opponent} rolled {theirs}"


def opening_roll_watched(p1: str, d1: int, p2: str, d2: int) -> str:
    """§4.4: what watchers see of the opening roll."""
    return f"{p1} rolled {d1}, {p2} rolled {d2}"


YOUR_TURN_TO_MOVE: Final = "It's your turn to move."
"""§4.4: to the player who won the opening roll."""


def makes_first_move(name: str) -> str:
    """§4.4: to the other player and to watchers."""
    return f"{name} makes the first move."


def cube_now(value: int) -> str:
    """§4.4: autodouble on an opening tie (no period in SPEC)."""
    return f"The number on the doubling cube is now {value}"


# =====================================================================================
# §4.5 a turn: roll, move
# =====================================================================================

ROLL_OR_DOUBLE: Final = "It's your turn. Please roll or double"
"""§4.5: no period (SPEC/JIBS/FCM, D10)."""


def you_roll(d1: int, d2: int) -> str:
    """§4.5: ``You roll 3 and 1.``."""
    return f"You roll {d1} and {d2}."


def please_move(n: int) -> str:
    """§4.5: always ``pieces``, even for 1 (D11)."""
    return f"Please move {n} pieces."


def dice_when_saved(d1: int, d2: int) -> str:
    """D175: telnet mode, after :func:`please_move` on a resume with the dice out."""
    return f"Your dice were {d1} and {d2} when the match was saved; type 'board' to see it."


YOU_CANT_MOVE: Final = "You can't move."
"""§4.5: no legal move; the turn passes."""


def cant_move(name: str) -> str:
    """§4.5: the opponent/watcher view of "can't move"."""
    return f"{name} can't move."


def moves_with_full_stop(moves: Iterable[str]) -> str:
    """§4.5: moves separated by single spaces and terminated by `` .``."""
    return " ".join([*moves, "."])


def only_possible_move(moves: Iterable[str]) -> str:
    """§4.5: ``automove``: ``The only possible move is 24-18 13-8 .``."""
    return f"The only possible move is {moves_with_full_stop(moves)}"


def bearing_off(moves: Iterable[str]) -> str:
    """§4.5 ⚠: greedy bear-off, ``Bearing off: 6 o 5 o`` (spacing unconfirmed, D12).

    ``moves`` are the source points; each is followed by ``o``.
    """
    return "Bearing off: " + " ".join(f"{p} o" for p in moves)


def bear_off(moves: Iterable[str]) -> str:
    """§4.5: reply to the ``off`` command when possible (``Bear off: <p> o <p> o``)."""
    return "Bear off: " + " ".join(f"{p} o" for p in moves)


def rolls(name: str, d1: int, d2: int) -> str:
    """§4.5: opponent's / watched player's roll."""
    return f"{name} rolls {d1} and {d2}."


def moves(name: str, move_list: Iterable[str]) -> str:
    """§4.5: ``gflohr moves 8-5 6-5 .`` - absolute points, ``bar``/``off``, space + period."""
    return f"{name} moves {moves_with_full_stop(move_list)}"


NOT_YOUR_TURN_TO_MOVE: Final = "** It's not your turn to move."
"""§4.5."""
ROLL_FIRST: Final = "** You have to roll the dice before moving."
"""§4.5."""
NOT_PLAYING: Final = "** You're not playing."
"""§4.5, §4.6, §4.7, §4.10."""
CANT_BEAR_OFF_WITH_EVERY_NUMBER: Final = "** You can't bear off with every number you have rolled."
"""§4.5 (``off``)."""
NOT_YOUR_TURN: Final = "** It's not your turn."
"""§4.5 (``off``)."""
ALREADY_ROLLED: Final = "** You did already roll the dice."
"""§4.5 (``roll``)."""
NOT_YOUR_TURN_TO_ROLL: Final = "** It's not your turn to roll the dice."
"""§4.5 (``roll``)."""

ORDINALS: Final = ("first", "second", "third", "fourth")
"""§4.5: how FIBS names a move by its 0-based index."""


def ordinal(index: int) -> str:
    """``first`` .. ``fourth`` for a 0-based move index (§4.5); ``5th`` etc. beyond."""
    if 0 <= index < len(ORDINALS):
        return ORDINALS[index]
    return f"{index + 1}th"


class MoveErrorReason(enum.Enum):
    """Why a ``move`` was refused (§4.5). Values equal ``backgammon.errors.IllegalReason``'s,
    so ``MoveErrorReason(err.reason.value)`` converts a core error."""

    TOO_FEW = "too_few"
    TOO_MANY = "too_many"
    NO_CHECKER = "no_checker"
    WRONG_DISTANCE = "wrong_distance"
    BLOCKED = "blocked"
    MUST_ENTER = "must_enter"
    NOT_ALL_HOME = "not_all_home"
    CANNOT_BEAR_OFF = "cannot_bear_off"
    BACKWARDS = "backwards"
    BAD_WORD = "bad_word"
    """A point word that is not a number, ``bar``, ``home``, ``off``, ``b``, ``h``, ``o``."""


def move_error(
    reason: MoveErrorReason,
    index: int = 0,
    point: int | str | None = None,
    count: int = 0,
) -> str:
    """The FIBS reply for a refused move (§4.5; mapping of reasons to texts: D13).

    :param index: 0-based index of the offending move (``first`` .. ``fourth``).
    :param point: the absolute point (or ``bar``) the text names: the source for
        NO_CHECKER/NOT_ALL_HOME, the distance for WRONG_DISTANCE, the destination for
        BLOCKED.
    :param count: the required number of moves for TOO_FEW/TOO_MANY.
    """
    k = ordinal(index)
    if reason is MoveErrorReason.TOO_FEW:
        return f"** You must give {count} moves."
    if reason is MoveErrorReason.TOO_MANY:
        return f"** Please don't give more than {count} moves."
    if reason is MoveErrorReason.NO_CHECKER:
        return f"** You can't move from {point} in your {k} move."
    if reason is MoveErrorReason.WRONG_DISTANCE:
        return f"** You can't move {point} points in your {k} move."
    if reason is MoveErrorReason.BLOCKED:
        return f"** You can't move to {point} in your {k} move."
    if reason is MoveErrorReason.MUST_ENTER:
        return f"** You have to remove pieces from the bar in your {k} move."
    if reason is MoveErrorReason.CANNOT_BEAR_OFF:
        return f"** You can't remove this piece in your {k} move."
    if reason is MoveErrorReason.NOT_ALL_HOME:
        return f"** You can't move {point}-home in your {k} move."
    if reason is MoveErrorReason.BACKWARDS:
        return f"** You can't move home in your {k} move."
    return f"** {k} move: legal words are 'bar', 'home', 'off', 'b', 'h' and 'o'."


def move_problem(reason: MoveErrorReason, what: str, point: int | str, d1: int, d2: int) -> str:
    """D171: telnet mode, after :func:`move_error`: the typed move that failed and why,
    in a player's words.

    :param what: the failing move as the player typed it (``13-8``).
    :param point: as for :func:`move_error` (the distance for WRONG_DISTANCE).
    :param d1: the dice rolled (``d1``, ``d2``).
    """
    dice = f"{d1}-{d2}"
    if reason is MoveErrorReason.NO_CHECKER:
        return f"Your move {what}: you have no checker on {point}."
    if reason is MoveErrorReason.WRONG_DISTANCE:
        return (
            f"Your move {what} goes {point} pips, which no die of your {dice} may play now:"
            " each move uses one die (a checker that uses both is typed as two moves),"
            " and you must play both dice if you can, else the higher one."
        )
    if reason is MoveErrorReason.BLOCKED:
        return (
            f"Your move {what}: {point} is blocked (your opponent has two checkers or more there)."
        )
    if reason is MoveErrorReason.MUST_ENTER:
        return (
            f"Your move {what}: a checker of yours is on the bar;"
            " it must come in first (bar-<point>)."
        )
    if reason is MoveErrorReason.NOT_ALL_HOME:
        return (
            f"Your move {what}: you may bear off only when all your checkers"
            " are in your home board."
        )
    if reason is MoveErrorReason.CANNOT_BEAR_OFF:
        return (
            f"Your move {what}: a checker bears off with the exact number, or with a higher one"
            " only when no checker of yours is farther from home."
        )
    if reason is MoveErrorReason.BACKWARDS:
        return f"Your move {what}: checkers never move backwards."
    return f"Your move {what}: write a point as a number 1 to 24, 'bar' or 'off'."


def move_count_problem(given: int, count: int, d1: int, d2: int) -> str:
    """D171: telnet mode, after ``You must give <n> moves.`` or ``Please don't give more
    than <n> moves.``: how many moves were typed and why the roll needs ``count``."""
    typed = plural(given, "move")
    if given > count:
        return f"You typed {typed}, but your roll of {d1}-{d2} allows only {count}."
    return (
        f"You typed {typed}; your roll of {d1}-{d2} must be played in full where the rules"
        f" allow it: {plural(count, 'move')} (doubles give four)."
    )


def move_slash(word: str) -> str:
    """D171: a move typed with ``/`` (``13/9``): here it is written with a minus."""
    return f"Moves are written with a minus here: {word.replace('/', '-')}, not {word}."


def move_incomplete(word: str) -> str:
    """D171: a move without a destination (``move 13``)."""
    return f"The move {word} has no destination: write it as from-to, for example 13-9."


def move_direction(colour: str, start: int, end: int, six: int) -> str:
    """D171: telnet mode, after every refused move: which way the player's checkers go,
    in the point numbers the player types (``six``: the home board's far end)."""
    low, high = sorted((six, end))
    return (
        f"You are {colour}: your checkers move from {start} towards {end}; your home board"
        f" is points {low} to {high}, and 'off' bears off (e.g. {six}-off)."
    )


def hasnt_responded_to_double(opponent: str) -> str:
    """§4.5 (BaldLies; GBOT matches it): a game command while your double is pending."""
    return f"** {opponent} hasn't responded to your double yet."


def hasnt_responded_to_resign(opponent: str) -> str:
    """§4.5, §4.7: a game command while your resignation is pending."""
    return f"** {opponent} hasn't accepted or rejected your resign yet."


# =====================================================================================
# §4.6 doubling
# =====================================================================================


def you_double(opponent: str, *, redouble_allowed: bool = False) -> str:
    """§4.6: to the doubler; the ``redouble`` form when instant redoubles are allowed."""
    if redouble_allowed:
        return f"You double. Please wait for {opponent} to accept, reject or redouble."
    return f"You double. Please wait for {opponent} to accept or reject."


def doubles_offer(doubler: str, *, redouble_allowed: bool = False) -> str:
    """§4.6: to the doubled player (a board with "was doubled" = 1 follows)."""
    if redouble_allowed:
        return f"{doubler} doubles. Type 'accept', 'reject' or 'redouble'."
    return f"{doubler} doubles. Type 'accept' or 'reject'."


def doubles(doubler: str) -> str:
    """§4.6: to watchers."""
    return f"{doubler} doubles."


def you_accept_double(cube: int) -> str:
    """§4.6: to the acceptor (one space before ``The cube``)."""
    return f"You accept the double. The cube shows {cube}."


def accepts_double(name: str, cube: int) -> str:
    """§4.6: to the doubler."""
    return f"{name} accepts the double. The cube shows {cube}."


def accepts_double_watched(name: str) -> str:
    """§4.6: to watchers."""
    return f"{name} accepts the double."


def you_give_up(doubler: str, n: int) -> str:
    """§4.6: to the player who rejects a double (``n`` = cube before the double)."""
    return f"You give up. {doubler} wins {points(n)}."


def gives_up_you_win(rejecter: str, n: int) -> str:
    """§4.6: to the doubler when the double is rejected."""
    return f"{rejecter} gives up. You win {points(n)}."


def gives_up(rejecter: str, doubler: str, n: int) -> str:
    """§4.6: to watchers when a double is rejected."""
    return f"{rejecter} gives up. {doubler} wins {points(n)}."


DOUBLE_BEFORE_ROLL: Final = "** You can only double before you roll the dice."
"""§4.6."""
NOT_YOUR_TURN_TO_DOUBLE: Final = "** It's not your turn to double"
"""§4.6: no period; also when you do not own the cube or a double is pending."""
CRAWFORD_NO_DOUBLE: Final = "** The Crawford rule doesn't allow you to double in this game."
"""§4.6 ⚠ (GBOT matches the prefix ``** The Crawford rule doesn``; D14)."""
NO_DOUBLE_FIRST_MOVE: Final = "** You cannot double in the first move."
"""§4.6 ⚠ (BaldLies text without ``** ``; D14)."""
NOT_PLAYING_CANT_GIVE_UP: Final = "** You're not playing, so you can't give up."
"""§4.6: ``reject`` when not playing."""


def wait_until_moved(opponent: str) -> str:
    """§4.6: ``double`` during the opponent's turn."""
    return f"** Please wait until {opponent} has moved."


def didnt_double_or_resign(opponent: str) -> str:
    """§4.6: ``accept``/``reject`` with nothing pending."""
    return f"** {opponent} didn't double or resign."


def you_redouble(cube: int, opponent: str, *, more_allowed: bool) -> list[str]:
    """§4.6: to the side that accepts and instantly redoubles."""
    if more_allowed:
        wait = f"Please wait for {opponent} to accept, reject or redouble."
    else:
        wait = f"Please wait for {opponent} to accept or reject."
    return [f"You accept the double to {cube} and redouble.", wait]


def redoubles_offer(name: str, cube: int, *, more_allowed: bool) -> str:
    """§4.6: to the other side after a redouble (``cube`` = the new value on offer)."""
    if more_allowed:
        return f"{name} redoubles to {cube}. Type 'accept', 'reject' or 'redouble'."
    return f"{name} redoubles to {cube}. Type 'accept' or 'reject'."


def redoubles(name: str) -> str:
    """§4.6: to watchers."""
    return f"{name} redoubles."


def you_accept_redouble(cube: int) -> str:
    """§4.6."""
    return f"You accept the redouble. The cube shows {cube}."


def accepts_redouble(name: str, cube: int) -> str:
    """§4.6."""
    return f"{name} accepts the redouble. The cube shows {cube}."


def accepts_redouble_watched(name: str) -> str:
    """§4.6: to watchers."""
    return f"{name} accepts the redouble."


REDOUBLE_NAMES: Final = ("beaver", "raccoon", "otter")
"""§4.6: the names of instant redoubles #1, #2, #3."""


def wrong_redouble_name(used: str, expected: str) -> str:
    """§4.6: e.g. ``** This redouble is not a beaver. Please type 'raccoon' or 'redouble'.``."""
    return f"** This redouble is not a {used}. Please type '{expected}' or 'redouble'."


REDOUBLES_ONLY_UNLIMITED: Final = "** Instant redoubles are only available for unlimited matches."
"""§4.6."""
NOT_ALLOWED_TO_REDOUBLE: Final = "** You are not allowed to redouble."
"""§4.6: over the limit or no double pending."""

# =====================================================================================
# §4.7 resigning
# =====================================================================================


def you_want_to_resign(opponent: str, n: int) -> str:
    """§4.7: to the resigner."""
    return f"You want to resign. {opponent} will win {points(n)}."


def wants_to_resign(resigner: str, n: int) -> str:
    """§4.7: to the opponent."""
    return f"{resigner} wants to resign. You will win {points(n)}. Type 'accept' or 'reject'."


def wants_to_resign_watched(resigner: str, opponent: str, n: int) -> str:
    """§4.7: to watchers."""
    return f"{resigner} wants to resign. {opponent} will win {points(n)}."


def you_accept_and_win(n: int) -> str:
    """§4.7."""
    return f"You accept and win {points(n)}."


def accepts_and_wins(name: str, n: int) -> str:
    """§4.7: to the resigner and to watchers."""
    return f"{name} accepts and wins {points(n)}."


YOU_REJECT: Final = "You reject. The game continues."
"""§4.7."""


def rejects(name: str) -> str:
    """§4.7: to the resigner and watchers (send a fresh board afterwards, §6.3)."""
    return f"{name} rejects. The game continues."


RESIGN_USAGE: Final = "** Type 'n' (normal), 'g' (gammon) or 'b' (backgammon) after resign."
"""§4.7."""
ALREADY_DID_THAT: Final = "** You already did that."
"""§4.7: a second resignation offer."""


def wanted_to_resign(opponent: str) -> str:
    """§4.7: another command while the opponent's resignation is pending."""
    return f"** {opponent} wanted to resign. Type 'accept' or 'reject'."


# =====================================================================================
# §4.8 end of game, next game, end of match
# =====================================================================================


def you_win_game(n: int) -> str:
    """§4.8."""
    return f"You win the game and get {points(n)}. Congratulations!"


def wins_game(winner: str, n: int) -> str:
    """§4.8: to the loser."""
    return f"{winner} wins the game and gets {points(n)}. Sorry."


def wins_game_watched(winner: str, n: int) -> str:
    """§4.8: to watchers."""
    return f"{winner} wins the game and gets {points(n)}."


def score_line(length: int | None, first: str, s1: int, second: str, s2: int) -> str:
    """§4.8: the receiver first (D15): ``score in 3 point match: alice-2 bob-0``."""
    what = "unlimited match" if length is None else f"{length} point match"
    return f"score in {what}: {first}-{s1} {second}-{s2}"


JOIN_NEXT_GAME: Final = "Type 'join' if you want to play the next game, type 'leave' if you don't."
"""§4.8: to both players after a game when the match continues."""


def wait_for_join(opponent: str) -> str:
    """§4.8: to the first player who sends ``join``."""
    return f"** Please wait for {opponent} to join too."


def you_win_match(length: int, a: int, b: int) -> str:
    """§4.8: with a space before the final period (D16)."""
    return f"You win the {length} point match {a}-{b} ."


def wins_match(winner: str, length: int, a: int, b: int) -> str:
    """§4.8: to the loser and watchers (D16)."""
    return f"{winner} wins the {length} point match {a}-{b} ."


# =====================================================================================
# §4.9 leaving, dropping, saving
# =====================================================================================

YOU_TERMINATED: Final = "** You terminated the game. The game was saved."
"""§4.9: ``leave`` while playing."""
NO_ONE_TO_LEAVE: Final = "** Error: No one to leave."
"""§4.9."""
PANIC_SAVED: Final = "Your game was saved in the panic file."
"""§4.9."""


def has_left(name: str) -> str:
    """§4.9: to the opponent of a player who typed ``leave`` (D17)."""
    return f"** Player {name} has left the game. The game was saved."


def saved_after(reason: str) -> str:
    """§4.9: ``<reason> The game was saved.`` where ``reason`` is :func:`logs_out` etc."""
    return f"{reason} The game was saved."


def game_with_saved(opponent: str) -> str:
    """§4.9: to a player who logs out during a match."""
    return f"Your game with {opponent} was saved."


def network_error(name: str) -> str:
    """§4.9."""
    return f"Network error with {name}. The game was saved."


# =====================================================================================
# §4.10 board, pip, look, oldboard, oldmoves
# =====================================================================================


def not_playing_name(name: str) -> str:
    """§4.10: ``board``/``look`` on a player who is idle."""
    return f"** {name} is not playing."


def pipcounts(first: str, n1: int, second: str, n2: int) -> str:
    """§4.10: ``Pipcounts: You 167   bob 167`` (three spaces between the pairs)."""
    return f"Pipcounts: {first} {n1}   {second} {n2}"


NOT_PLAYING_OR_WATCHING: Final = "** You're not playing or watching."
"""§4.10 (``pip``)."""
TOGGLE_ALLOWPIP_FIRST: Final = "** Type 'toggle allowpip' first."
"""§4.10."""
LOOK_AT_WHO: Final = "** Look at who?"
"""§4.10."""
YOU_LOOK_GREAT: Final = "You look great."
"""§4.10: ``look`` yourself."""
OLDBOARD_USAGE: Final = "** usage: oldboard <name>"
OLDMOVES_USAGE: Final = "** usage: oldmoves <name>"
CANT_WHILE_PLAYING: Final = "** You can't do this while playing."
"""§4.10 (``oldboard``)."""


def doesnt_allow_pip(opponent: str) -> str:
    """§4.10."""
    return f"** {opponent} doesn't allow this. Ask {opponent} to 'toggle allowpip'"


def doesnt_want_look(name: str) -> str:
    """§4.10."""
    return f"** {name} doesn't want you to look."


def no_saved_match_called(name: str) -> str:
    """§4.10 (``oldboard``)."""
    return f"** There's no saved match with a player called '{name}'."


def no_saved_game_with(name: str) -> str:
    """§4.10 (``oldmoves``)."""
    return f"** There is no saved game with {name}."


def oldmoves_header(
    score1: int, score2: int, length: int | None, x_name: str, o_name: str
) -> list[str]:
    """§4.10: first lines of ``oldmoves`` (and of the ``toggle moves`` list, §4.8)."""
    what = "an unlimited match" if length is None else f"a {length} point match"
    return [f"Score is {score1}-{score2} in {what}.", f"{x_name} is X - {o_name} is O", ""]


def oldmoves_roll(colour: str, d1: int, d2: int, move_list: Sequence[str]) -> str:
    """§4.10: ``O: (5 1) 13-8 24-23``; ``O: (4 4) can't move`` for no moves."""
    played = " ".join(move_list) if move_list else "can't move"
    return f"{colour}: ({d1} {d2}) {played}"


def oldmoves_action(colour: str, action: str) -> str:
    """§4.10: ``X: doubles``, ``O: accepts``, ``X: rejects``, ``O: wins``."""
    return f"{colour}: {action}"


# =====================================================================================
# §4.11 watching
# =====================================================================================

WATCH_WHO: Final = "** Watch who?"
USE_A_MIRROR: Final = "** Use a mirror to do that."
CANT_WATCH_WHILE_PLAYING: Final = "** You can't watch another game while you're playing."
NOT_WATCHING: Final = "** You're not watching."


def stop_watching_first(name: str) -> str:
    """§4.11: ``watch`` while already watching someone."""
    return f"** You stop watching {name}."


def now_watching(name: str) -> str:
    """§4.11."""
    return f"You're now watching {name}."


def nothing_interesting(name: str) -> str:
    """§4.11: the watched player is not in a game."""
    return f"{name} is not doing anything interesting."


def no_one_there(name: str) -> str:
    """§4.11, §4.14 (``watch``, ``where``): ``** There's no one called <name>.``."""
    return f"** There's no one called {name}."


def doesnt_want_watch(name: str) -> str:
    """§4.11."""
    return f"** {name} doesn't want you to watch."


def is_watching_you(watcher: str) -> str:
    """§4.11: to the watched player."""
    return f"{watcher} is watching you."


def starts_watching(watcher: str, watched: str) -> str:
    """§4.11: to the watched player's opponent."""
    return f"{watcher} starts watching {watched}."


def stops_watching_you(watcher: str) -> str:
    """§4.11."""
    return f"{watcher} stops watching you."


def stops_watching(watcher: str, watched: str) -> str:
    """§4.11."""
    return f"{watcher} stops watching {watched}."


def you_stop_watching(name: str) -> str:
    """§4.11: ``unwatch``."""
    return f"You stop watching {name}."


def not_watching_anymore(reason: str) -> str:
    """§4.11: ``<reason>. You're not watching anymore.`` - two periods, [C] SPEC.

    ``reason`` is :func:`logs_out`, :func:`drops_connection` or :func:`timed_out`.
    """
    return f"{reason}. You're not watching anymore."


def bans_you(name: str) -> str:
    """§4.11: ``blind`` while you watch."""
    return f"{name} bans you from watching."


def bans_from_watching(blinder: str, watcher: str) -> str:
    """§4.11: to the other player."""
    return f"{blinder} bans {watcher} from watching."


WATCHING_PLAYERS: Final = "Watching players:"
WATCHING_PLAYERS_NONE: Final = "Watching players: none."


def is_watching(watcher: str, watched: str) -> str:
    """§4.11 (``show watchers``)."""
    return f"{watcher} is watching {watched}."


# =====================================================================================
# §4.12 chat commands
# =====================================================================================


def wont_listen(name: str) -> str:
    """§4.12: the recipient gagged you."""
    return f"** {name} won't listen to you."


CANT_TALK_WONT_LISTEN: Final = "** You can't talk if you won't listen."
SAY_OUTSIDE_GAME: Final = "** 'say' can't be used outside a game"
TOGGLE_SILENT_BEFORE_SHOUT: Final = "** Please type 'toggle silent' again before you shout."
NOT_WATCHING_OR_PLAYING: Final = "** You're not watching or playing."
"""§4.12 (``kibitz``, ``whisper``)."""
NOBODY_HEARD: Final = "** But nobody heard you."
MESSAGE_USAGE: Final = "** usage: message <user> <text>"


def say_to_yourself(text: str) -> str:
    """§4.12: ``tell`` yourself."""
    return f"You say to yourself: {text}"


def heard_you(n: int) -> str:
    """§4.12: after kibitz/whisper: ``** 1 user heard you.`` / ``** <n> users heard you.``."""
    return NOBODY_HEARD if n == 0 else f"** {plural(n, 'user')} heard you."


def dont_know_user(name: str) -> str:
    """§4.12 (``message``)."""
    return f"** Don't know user {name}."


def gagged_users(names: Sequence[str]) -> str:
    """§4.12."""
    return f"** Gagged users: {','.join(names) if names else 'none'}"


def you_gag(name: str) -> str:
    return f"** You gag {name}."


def you_ungag(name: str) -> str:
    return f"** You ungag {name}."


GAG_YOURSELF: Final = "** You talk too much, don't you?"
BLIND_YOURSELF: Final = "** You can't read this message now, can you?"


def no_one_quoted(name: str) -> str:
    """§4.12 (``gag``): ``** There is no one called '<name>'``."""
    return f"** There is no one called '{name}'"


def blinded_users(names: Sequence[str]) -> str:
    """§4.12."""
    return f"** Blinded users: {','.join(names) if names else 'none'}"


def you_blind(name: str) -> str:
    return f"** You blind {name}."


def you_unblind(name: str) -> str:
    return f"** You unblind {name}."


NOT_WAITING: Final = "You are not waiting for any players."


def waiting_for(names: Sequence[str]) -> list[str]:
    """§4.12: ``waitfor`` without arguments."""
    if not names:
        return [NOT_WAITING]
    if len(names) == 1:
        return [f"You are waiting for {names[0]}"]
    return [f"You are waiting for the following {len(names)} players:", *names]


def will_receive_message(name: str) -> str:
    return f"** You'll receive a message when '{name}' logs in."


def no_user_called(name: str) -> str:
    """§4.12 (``waitfor``)."""
    return f"** There is no user called '{name}'."


def already_logged_in(name: str) -> str:
    """§4.12 (``waitfor``)."""
    return f"** '{name}' is already logged in."


WAITFOR_YOURSELF: Final = "** Look behind you. Maybe you are waiting there."


def finally_logs_in(name: str) -> str:
    """§4.12: to the waiter, followed by three BELs."""
    return f"** FINALLY!!! {name} logs in.{BELL * 3}"


def is_waiting_for_you(waiter: str) -> str:
    """§4.12: to the user who logs in, without SPEC's ``** ``: FCM's
    ``^[a-zA-Z_<>]+ is waiting for you to log in\\.`` is an ordinary line (D161)."""
    return f"{waiter} is waiting for you to log in."


# =====================================================================================
# §4.13 away / back
# =====================================================================================

NONE_AWAY: Final = "None of the users is away."
AWAY_HEADER: Final = "The following users are away:"
WELCOME_BACK: Final = "Welcome back."
NOT_AWAY: Final = "** You're not away."


def away_entry(name: str, message: str) -> str:
    """§4.13: one line of the away list (``You: ...`` for yourself)."""
    return f"{name}: {message}"


# =====================================================================================
# §4.14 who, whois, where, ratings, last, show, time, version
# =====================================================================================

WHO_HEADER: Final = "No  S  username        rating   exp login  idle from"
"""§4.14: the telnet who header (also the CLIP-mode quirk for an empty filter result), D20."""


def who_count(n: int) -> str:
    """§4.14 ⚠ (BaldLies: "this is what FIBS gives you"): ``who count``."""
    return f"There are {n} users logged on."


WHOIS_USAGE: Final = "** please give a name as an argument."


def no_information(name: str) -> str:
    """§4.14 (``whois``)."""
    return f"No information found on user {name}."


@dataclass(frozen=True, slots=True)
class WhoisInfo:
    """The values of a ``whois`` answer (§4.14); dates already formatted for the asker."""

    name: str
    last_login: str
    host: str
    online: bool
    idle_seconds: int = 0
    last_logout: str = ""
    ready: bool = False
    watching: str | None = None
    playing: str | None = None
    away_message: str | None = None
    rating: float = 1500.0
    experience: int = 0
    email: str | None = None
    bot: bool = False
    """Say that the user is a bot (telnet mode only, D179)."""
    look_alikes: tuple[str, ...] = ()
    """Other users whose names differ from this one only in case (D269)."""


def whois(info: WhoisInfo) -> list[str]:
    """§4.14: the ``whois`` block (two leading spaces after the first line)."""
    lines = [
        f"Information about {info.name}:",
        f"  Last login:  {info.last_login} from {info.host}",
    ]
    if info.online:
        if info.idle_seconds < 60:
            lines.append(f"  Still logged in. {info.idle_seconds} seconds idle.")
        else:
            m, s = divmod(info.idle_seconds, 60)
            lines.append(f"  Still logged in. {m}:{s:02d} minutes idle.")
        if info.playing is not None:
            lines.append(f"  {info.name} is playing with {info.playing}.")
        else:
            ready = "ready" if info.ready else "not ready"
            watching = f"watching {info.watching}" if info.watching else "not watching"
            lines.append(f"  {info.name} is {ready} to play, {watching}, not playing.")
    else:
        lines.append(f"  Last logout: {info.last_logout}")
        lines.append("  Not logged in right now.")
    if info.bot:
        lines.append(f"  {info.name} is a bot: a program that plays, not a person.")
    if info.away_message is not None:
        lines.append(f"  {is_away(info.name, info.away_message)}")
    lines.append(f"  Rating: {clip.format_rating(info.rating)} Experience: {info.experience}")
    lines.append(f"  Email address: {info.email}" if info.email else "  No email address.")
    if info.look_alikes:
        lines.append(look_alikes_line(info.look_alikes))
    return lines


def whois_error_rate(rate: float, analysed: int) -> str:
    """D290: the last line of ``whois`` in telnet mode for a user with analysed matches:
    the mean of their error rates over the last ones."""
    matches = "match" if analysed == 1 else "matches"
    return (
        f"  Error rate: {rate:.1f} over the last {analysed} {matches} analysed by GNU Backgammon."
    )


def look_alikes_line(names: Sequence[str]) -> str:
    """D269: the last line of ``whois`` when other users' names differ only in case."""
    return f"  Not the same user as {', '.join(names)}: the names differ only in case."


def whois_date(when: dt.datetime) -> str:
    """§4.14: ``Tuesday, January 14 20:27 EST`` in the asker's zone (aware datetime)."""
    return f"{when:%A, %B %d %H:%M} {when.tzname() or 'UTC'}"


def where(name: str, ip: str, hostname: str | None = None) -> str:
    """§4.14: ``<name> from <ip>`` plus `` (<hostname>)`` when known."""
    return f"{name} from {ip}" + (f" ({hostname})" if hostname else "")


RATINGS_HEADER: Final = " rank name            rating    Experience"
"""§4.14."""


def ratings_who(experience: int) -> str:
    """D178: telnet mode, after the ``ratings`` list: who is on it."""
    return (
        f"Listed: players with an experience above {experience} (points of finished matches);"
        " 'ratings <name>' shows one, 'ratings from <n> to <m>' a range."
    )


RATINGS_RATES_HEADER: Final = RATINGS_HEADER + "  Error rate"
"""D341: ``ratings ... analysis``: the header with the error rate's column."""


def ratings_rate_line(
    rank: int,
    name: str,
    rating: float,
    experience: int,
    rate: float | None,
    *,
    marked: bool = False,
) -> str:
    """D341: a :func:`ratings_line` with the player's mean error rate (one decimal) under
    ``Error rate``, ``-`` when none of their matches is analysed."""
    shown = "-" if rate is None else f"{rate:.1f}"
    return f"{ratings_line(rank, name, rating, experience, marked=marked)}{shown:>17}"


RATINGS_RANGE_LIMIT: Final = "** range currently limited to 100."


def ratings_line(
    rank: int, name: str, rating: float, experience: int, *, marked: bool = False
) -> str:
    """§4.14: ``    1 NIHILIST        2295.11     7274``; ``*`` in column 0 when marked."""
    return f"{'*' if marked else ' '}{rank:>4} {name:<15} {rating:7.2f}{experience:>9}"


def invalid_range(start: int, end: int) -> str:
    return f"** invalid range from {start} to {end}"


def positive_number_after(word: str) -> str:
    """§4.14: ``word`` is ``from`` or ``to``."""
    return f"** Please give a positive number after '{word}'."


def only_one_name(a: str, b: str) -> str:
    return f"** Please use only one of the given names '{a}' and '{b}'."


LAST_HEADER: Final = "The 20 last logins/logouts:"
LAST_USE_WHOIS: Final = "** Please use the 'whois' command."


def last_line(day_time: str, zone: str, text: str) -> str:
    """§4.14: ``Wed 11:08 UTC: someplayer drops connection.``."""
    return f"{day_time} {zone}: {text}"


def bad_timezone(zone: str) -> str:
    """§4.14, §4.16: followed by the zone list."""
    return f"Can't find timezone '{zone}'. Try one of:"


GAMES_HEADER: Final = "List of games:"


def game_line(p1: str, p2: str, length: int | None, s1: int, s2: int) -> str:
    """§4.14 (``show games``): ``someplayer      -          myself (1 point match 0-0)``."""
    what = "unlimited match" if length is None else f"{length} point match"
    return f"{p1:<15} - {p2:>15} ({what} {s1}-{s2})"


def chouette_game_line(box: str, captain: str, players: int, game: int) -> str:
    """D364 (``show games``): a chouette, the box against the acting captain, as a match's
    line is: ``ann             -             bob (chouette of 4, game 2)``."""
    return f"{box:<15} - {captain:>15} (chouette of {players}, game {game})"


SAVED_HEADER: Final = "  opponent          matchlength   score (your points first)"
"""§4.14: the first line of ``show saved``, also before :data:`NO_SAVED_GAMES` (D163)."""
NO_SAVED_GAMES: Final = "no saved games."
"""§4.14: after :data:`SAVED_HEADER` when nothing is saved (D163)."""


class SavedMark(enum.Enum):
    """§4.14: the two-character prefix of a ``show saved`` line (SPEC meaning)."""

    OFFLINE = "  "
    PLAYING = " *"
    """The saved match you are currently playing."""
    ONLINE = "**"
    """The opponent is logged in."""


def saved_line(mark: SavedMark, opponent: str, length: int | None, mine: int, theirs: int) -> str:
    """§4.14: ``**bonehead                3                1 -  2`` (column widths: D18)."""
    what = "unlimited" if length is None else str(length)
    return f"{mark.value}{opponent:<24}{what:<17}{mine} - {theirs:>2}"


def savedcount(name: str, n: int) -> str:
    """§4.14 (GIB, GBOT): ``show savedcount <name>``."""
    if n == 0:
        return f"{name} has no saved games."
    return f"{name} has {plural(n, 'saved game')}."


def max_logins(current: int, maximum: int) -> str:
    return f"max_logins is {current} (maximum: {maximum})"


SHOW_WHAT: Final = "** show what?"


def dont_know_show(what: str) -> str:
    return f"** Don't know how to show {what}"


def version(text: str) -> str:
    """§4.14: anything after ``** Version ``."""
    return f"** Version {text}"


def port(number: int) -> str:
    """§4.2 (undocumented ``port``)."""
    return f"The server is running on port {number}."


# =====================================================================================
# §4.15 toggle
# =====================================================================================


class Toggle(enum.StrEnum):
    """§4.15: the toggles, in the order ``toggle`` lists them; values are their names (as
    typed, shown and stored)."""

    ALLOWPIP = "allowpip"
    AUTOBOARD = "autoboard"
    AUTODOUBLE = "autodouble"
    AUTOMOVE = "automove"
    BELL = "bell"
    CRAWFORD = "crawford"
    DOUBLE = "double"
    GREEDY = "greedy"
    MOREBOARDS = "moreboards"
    MOVES = "moves"
    NOTIFY = "notify"
    RATINGS = "ratings"
    READY = "ready"
    REPORT = "report"
    SILENT = "silent"
    TELNET = "telnet"
    WRAP = "wrap"


TOGGLES: Final[tuple[Toggle, ...]] = tuple(Toggle)
"""§4.15: the toggles in the order ``toggle`` lists them."""
TOGGLE_SYNONYMS: Final[Mapping[str, Toggle]] = {"autoroll": Toggle.DOUBLE}
"""§4.15: ``autoroll`` is another name of ``double``."""

_TOGGLE_MESSAGES: Final[Mapping[Toggle, tuple[str, str]]] = {
    Toggle.ALLOWPIP: (
        "** You allow the use the server's 'pip' command.",
        "** You don't allow the use of the server's 'pip' command.",
    ),
    Toggle.AUTOBOARD: (
        "** The board will be refreshed after every move.",
        "** The board won't be refreshed after every move.",
    ),
    Toggle.AUTODOUBLE: (
        "** You agree that doublets during opening double the cube.",
        "** You don't agree that doublets during opening double the cube.",
    ),
    Toggle.AUTOMOVE: (
        "** Forced moves will be done automatically.",
        "** Forced moves won't be done automatically.",
    ),
    Toggle.BELL: (
        "** Your terminal will ring the bell if someone talks to you or invites you",
        "** Your terminal won't ring the bell if someone talks to you or invites you",
    ),
    Toggle.CRAWFORD: (
        "** You insist on playing with the Crawford rule.",
        "** You would like to play without using the Crawford rule.",
    ),
    Toggle.DOUBLE: (
        "** You will be asked if you want to double.",
        "** You won't be asked if you want to double.",
    ),
    Toggle.GREEDY: (
        "** Will use automatic greedy bearoffs.",
        "** Won't use automatic greedy bearoffs.",
    ),
    Toggle.MOREBOARDS: (
        "** Will send rawboards after rolling.",
        "** Won't send rawboards after rolling.",
    ),
    Toggle.MOVES: (
        "** You want a list of moves after this game.",
        "** You won't see a list of moves after this game.",
    ),
    Toggle.NOTIFY: (
        "** You'll be notified when new users log in.",
        "** You won't be notified when new users log in.",
    ),
    Toggle.RATINGS: (
        "** You'll see how the rating changes are calculated.",
        "** You won't see how the rating changes are calculated.",
    ),
    Toggle.READY: (
        "** You're now ready to invite or join someone.",
        "** You're now refusing to play with someone.",
    ),
    Toggle.REPORT: (
        "** You will be informed about starting and ending matches.",
        "** You won't be informed about starting and ending matches.",
    ),
    # §4.15 ⚠: silent ON = you do not hear shouts (help text + original FCM, D19).
    Toggle.SILENT: (
        "** You won't hear what other players shout.",
        "** You will hear what other players shout.",
    ),
    Toggle.TELNET: (
        "** You use telnet and don't need extra 'newlines'.",
        "** You use a client program and will receive extra 'newlines'.",
    ),
    # §4.15 ⚠: SPEC/Dart FCM/JIBS order (D19).
    Toggle.WRAP: (
        "** The server will wrap long lines.",
        "** Your terminal knows how to wrap long lines.",
    ),
}


def toggle_message(name: Toggle, value: bool) -> str:
    """§4.15: the reply after a toggle was flipped to ``value``."""
    on, off = _TOGGLE_MESSAGES[name]
    return on if value else off


def toggle_list(values: Mapping[Toggle, bool]) -> list[str]:
    """§4.15: ``toggle`` alone: the header and one ``name  YES|NO`` line per toggle (column 17)."""
    return ["The current settings are:"] + [
        f"{name:<16}{'YES' if values[name] else 'NO'}" for name in TOGGLES
    ]


def dont_know_toggle(arg: str) -> str:
    """§4.15."""
    return f"** Don't know how to toggle {arg}"


SETTINGS_SAVED: Final = "Settings saved."
"""§4.15 (``save``)."""

# =====================================================================================
# §4.16 set
# =====================================================================================

SET_VARIABLES: Final = (
    "boardstyle",
    "linelength",
    "pagelength",
    "redoubles",
    "sortwho",
    "timezone",
)
"""§4.16: in the order ``set`` lists them."""


def set_list(values: Mapping[str, str]) -> list[str]:
    """§4.16: ``set`` alone; values already as text (redoubles ``none``/``unlimited``/n)."""
    return ["Settings of variables:"] + [
        f"{name + ':':<12}{values[name]}" for name in SET_VARIABLES
    ]


def set_value(name: str, value: str) -> str:
    """§4.16: ``set <var>``."""
    return f"Value of '{name}' is {value}"


def set_changed(name: str, value: str) -> str:
    """§4.16: ``Value of 'boardstyle' set to 3.``; a word value of redoubles is quoted."""
    if name == "redoubles" and not value.isdigit():
        return f"Value of '{name}' set to '{value}'."
    return f"Value of '{name}' set to {value}."


LENGTH_INVALID: Final = "** Valid arguments are the numbers 0 to 999. Use 0 for no linelength."
"""§4.16: linelength/pagelength."""
REDOUBLES_INVALID: Final = "** Valid arguments are 'none', 'unlimited' and the numbers 1 to 99."
SET_INVALID: Final = "** Invalid argument. Type 'help set'."


def sortwho_invalid(value: str) -> str:
    return f"** Unknown value '{value}'. Try 'login', 'name', 'rating' or 'rrating'."


# =====================================================================================
# §4.17 address, password, misc
# =====================================================================================

ADDRESS_MISSING: Final = "** You didn't give your address."


def address_set(address: str) -> str:
    return f"Your email address is '{address}'."


def not_an_email(text: str) -> str:
    """§4.17 ⚠ (GIB test, BaldLies)."""
    return f"** '{text}' is not an email address."


PASSWORD_USAGE: Final[tuple[str, ...]] = (
    "** usage: password <old password>:<new password>:<new password>",
    "** NOTE: The character between the passwords is now a colon!",
)
PASSWORD_CHANGED: Final = "Password changed."
WEB_TOKEN_USAGE: Final = "** usage: token! [<old token>] | token! end <token>"
"""D321: ``token!`` with other words (not a FIBS command; only the web page sends it)."""
WEB_TOKEN_ENDED: Final = "token! ended"
"""D321: the answer to ``token! end <token>`` (whether or not the token was still valid)."""
MATCH_PAGE_USAGE: Final = "** usage: match! <match id>"
"""D377: ``match!`` without one match id (not a FIBS command; only the web page sends it)."""
PROFILE_USAGE: Final = "** usage: profile! <name>"
"""D377: ``profile!`` without one name (only the web page sends it)."""


def match_page(found: str) -> str:
    """D377: the answer to ``match! <id>``, the finished match as one line of JSON."""
    return f"match! {found}"


def profile_page(found: str) -> str:
    """D377: the answer to ``profile! <name>``, the player as one line of JSON."""
    return f"profile! {found}"


TEXT_BEGIN: Final = "text! begin"
"""D376: before the telnet-style reply to ``text! <command>`` in CLIP mode."""
TEXT_END: Final = "text! end"
"""D376: after the telnet-style reply to ``text! <command>`` in CLIP mode."""


def web_token(token: str, lifetime: int) -> str:
    """D321: the answer to ``token!``: the new session token and the seconds it lasts.
    Only a client that asks gets it; the web page keeps it to itself (docs/web.md)."""
    return f"token! {token} {lifetime}"


OLD_PASSWORD_WRONG: Final = "** Sorry. Old password not correct."
NEW_PASSWORD_TWICE: Final = "** Please give your new password twice."
CLEAR_SCREEN: Final = "\x1b[;H\x1b[2J"
"""§4.2, §4.17: ``cls`` (followed by CR LF like any line)."""

# =====================================================================================
# §5.3 rating calculation
# =====================================================================================


@dataclass(frozen=True, slots=True)
class RatingCalculationPlayer:
    """One player's part of the §5.3 rating calculation block (§5.1): the text's view of
    :class:`backgammon.rating.RatingChange`, which holds both players' results."""

    name: str
    experience: int
    k: float
    change: float


def rating_calculation(
    difference: float,
    length: int,
    upset_probability: float,
    probability: float,
    winner: RatingCalculationPlayer,
    loser: RatingCalculationPlayer,
) -> list[str]:
    """§5.3: the block sent with ``toggle ratings`` before the match-end line (winner first).

    All numbers with six decimals; the block ends with an empty line.
    """
    return [
        "rating calculation:",
        f"rating difference D={difference:f}",
        f"match length      N={length}",
        f"Experience: {winner.name} {winner.experience} - {loser.name} {loser.experience}",
        f"Probability that underdog wins: Pu=1/(10^(D*sqrt(N)/2000)+1)={upset_probability:f}",
        f"P={probability:f} is 1-Pu if underdog wins and Pu if favorite wins",
        f"K=max(1 , -Experience/100+5) for {winner.name}: {winner.k:f}",
        f"change for {winner.name}: 4*K*sqrt(N)*P={winner.change:f}",
        f"K=max(1 , -Experience/100+5) for {loser.name}: {loser.k:f}",
        f"change for {loser.name}: -4*K*sqrt(N)*P={loser.change:f}",
        "",
    ]


# =====================================================================================
# §6 other things
# =====================================================================================


def shutdown_warning(seconds: int, *, restart: bool) -> str:
    """§6.4: GBOT exits on these lines."""
    what = "restart" if restart else "shut down"
    return f"*** ATTENTION ! FIBS will {what} in {plural(seconds, 'second')}"


# =====================================================================================
# Server limits (not in FIBS: this server's defences, issue 4 item 7; D45-D49)
# =====================================================================================

LINE_TOO_LONG: Final = "** Your line was too long and has been ignored."
"""D45: a line over the configured cap (``[limits] max_line_length``); nothing runs."""
TOO_MUCH_INPUT: Final = (
    "** You are sending commands much faster than they are answered. Closing the connection."
)
"""D120: the last line to a client whose unread input passed ``[limits]
max_unread_input``; commands over the rate are never refused, they wait (D46 retired)."""
INTERNAL_ERROR: Final = "** Sorry, the server could not do that (internal error)."
"""D47: an unexpected server fault while running a command; the session goes on."""
TABLE_NODE_GONE: Final = "** The server node of your match is gone. The game was saved."
"""D345: the node that ran a match of a player of another node stopped or was lost (a
cluster, docs/cluster.md); the match is saved as of its last action, and ``invite`` +
``join`` resume it at any node."""
CLUSTER_UNREACHABLE: Final = (
    "** Sorry, the server could not do that just now (it cannot reach the server node"
    " of that table). Please try again in a moment."
)
"""D345: a command for a table of another node while the bus between the nodes is away
(NATS restarting): refused at once, never left waiting."""
DATABASE_OUTAGE: Final = (
    "** Sorry, the server could not do that just now (its database is not available)."
    " Please try again in a moment."
)
"""D296: the database could not do what a command needs (PostgreSQL restarting or
unreachable, a full disk); nothing was done and the session goes on."""
MATCH_NOT_SAVED: Final = (
    "** The server cannot save this match just now (its database is not available)."
    " The game goes on as soon as it can."
)
"""D297: to both players when a match action's save fails; the action's lines follow
once a retry has saved it."""
CHOUETTE_NODE_GONE: Final = (
    "** The server node of your chouette table is gone. The table was saved;"
    " type 'chouette return' to sit down again."
)
"""D440: the node that ran a chouette of a player of another node stopped or was lost
(a cluster, docs/cluster.md); the table is saved as of its last action (D362), and
``chouette return`` restores it at the player's node."""


def chouette_node_gone_watching(name: str) -> str:
    """D448: to a watcher of ``name``, a player of a chouette whose node stopped, was
    lost with none of the table's players on it, or was drained (D446): ``name`` is back
    in the lobby, the table saved; the watcher goes on watching them."""
    return f"** The server node of {name}'s chouette table is gone. The table was saved."


CHOUETTE_TAKEN_OVER: Final = (
    "** Your chouette table is now run by another server node; your last action was not"
    " saved. Please log in again."
)
"""D439: to the players of a chouette at a node that no longer runs it (another node
restored it from the database meanwhile: this node was cut off or paused and its users
taken for gone); at the next login they are back at the table (D410)."""

MATCH_TAKEN_OVER: Final = (
    "** Your match is now run by another server node; your last action was not saved."
    " Please log in again and type 'board'."
)
"""D370: to a match's players at a node that no longer owns the table (another node took
it over while this one was cut off; its save was refused): the match leaves this node."""
SHOUTING_TOO_MUCH: Final = (
    "** You are shouting too much. Please wait a moment before you shout again."
)
"""D300: ``[limits] shouts_per_minute`` shouts in the last minute; this one is not sent."""


def invited_too_often(name: str) -> str:
    """D301: ``[limits] invitations_per_minute`` invitations to ``name`` in the last
    minute; this one is not sent."""
    return f"** You invited {name} too often. Please wait a moment before you invite them again."


NAME_TOO_LONG: Final = "** Your name may not be longer than 20 characters."
"""D48: registration; §1.7 leaves the maximum open (FBC shows 15 characters on boards)."""
TOO_MANY_LOGINS: Final = "** Sorry, the server is full. Please try again later."
"""D49: ``[limits] max_logins`` users are logged in."""
TOO_MANY_WAITING: Final = (
    "** Sorry, too many connections are waiting to log in. Please try again later."
)
"""D230: ``[limits] max_pre_login`` connections have not logged in yet; the new one
gets this line instead of the banner and is closed."""
TOO_MANY_WAITING_FROM_ADDRESS: Final = (
    "** Sorry, too many connections from your address are waiting to log in."
    " Please try again later."
)
"""D230: ``[limits] max_pre_login_per_address`` connections from the same address have
not logged in yet; the new one gets this line instead of the banner and is closed."""
TOO_MANY_REGISTRATIONS: Final = (
    "** Sorry, too many new accounts were made in the last minute. Please try again later."
)
"""D267: ``[limits] registrations_per_minute`` accounts were registered in the last
minute; the guest stays a guest and may try ``name`` again later."""
TOO_MANY_REGISTRATIONS_FROM_ADDRESS: Final = (
    "** Sorry, too many new accounts were made from your address in the last minute."
    " Please try again later."
)
"""D267: ``[limits] registrations_per_address`` accounts came from this address in the
last minute."""


def idle_warning(seconds: int) -> str:
    """D50: sent once before the idle timeout (§6.1) closes the connection."""
    return f"** You have been idle for a long time. You will be logged out in {seconds} seconds."


def who_row(
    number: int,
    status: str,
    name: str,
    rating: float,
    experience: int,
    login: str,
    idle: str,
    host: str,
    bot: bool = False,
) -> str:
    """D53: one row of the telnet-mode ``who`` table under :data:`WHO_HEADER` (§4.14
    leaves the row layout open; columns follow the header's). A bot has ``B`` after its
    status letter (D179)."""
    shown = status + BOT_MARK if bot else status
    return (
        f"{number:<3} {shown:<2} {name:<15}{rating:>7.2f}{experience:>6} "
        f"{login:>5} {idle:>5} {host}"
    )


BOT_MARK: Final = "B"
"""D179: after the status letter of a bot in the telnet-mode ``who`` table."""


# =====================================================================================
# Doubling refusals for the optional rules (docs/rules.md; D54)
# =====================================================================================

HOLLAND_NO_DOUBLE: Final = "** The Holland rule doesn't allow you to double yet."
"""D54: post-Crawford, the trailer before both sides have rolled twice (FIBS has no Holland)."""
DEAD_CUBE_NO_DOUBLE: Final = "** You can't double: the cube is dead for you."
"""D54: only with ``[rules] dead_cube_doubles = no`` (FIBS allows such doubles)."""
CUBE_LIMIT_NO_DOUBLE: Final = "** The cube has reached its limit."
"""D54: ``[rules] cube_limit``."""


def refusal(
    command: GameCommand, reason: Refusal, opponent: str, *, opponent_moving: bool = False
) -> str:
    """The FIBS reply when the core refuses ``command`` for ``reason`` (§4.5-§4.7): the
    command's own text where FIBS has one, else the one every game command shares.

    Total over (command, reason): a new :class:`~backgammon.errors.Refusal` fails the
    type check at the ``assert_never`` below until it has its text. Pairs the core does
    not produce, or that FIBS words no differently, answer :data:`NOT_YOUR_TURN`.

    :param opponent: the refused player's opponent, whom several texts name.
    :param opponent_moving: the opponent is moving now: a ``double`` out of turn then
        answers "wait until ... moved" instead of "not your turn to double".
    """
    match reason:
        case Refusal.DOUBLE_PENDING_YOURS:
            return hasnt_responded_to_double(opponent)
        case Refusal.RESIGN_PENDING_YOURS:
            return hasnt_responded_to_resign(opponent)
        case Refusal.RESIGN_PENDING_THEIRS:
            return wanted_to_resign(opponent)
        case Refusal.MUST_ANSWER_DOUBLE:
            return doubles_offer(opponent)
        case Refusal.NO_GAME:
            return JOIN_NEXT_GAME
        case Refusal.MATCH_OVER:
            return NOT_PLAYING
        case Refusal.NOT_YOUR_TURN:
            if command is GameCommand.DOUBLE:
                return wait_until_moved(opponent) if opponent_moving else NOT_YOUR_TURN_TO_DOUBLE
            return _for(command, roll=NOT_YOUR_TURN_TO_ROLL, move=NOT_YOUR_TURN_TO_MOVE)
        case Refusal.ALREADY_ROLLED:
            return _for(command, roll=ALREADY_ROLLED, double=DOUBLE_BEFORE_ROLL)
        case Refusal.MUST_ROLL:
            return _for(command, move=ROLL_FIRST)
        case Refusal.NOT_OWNER:
            return _for(command, double=NOT_YOUR_TURN_TO_DOUBLE)
        case Refusal.CRAWFORD:
            return _for(command, double=CRAWFORD_NO_DOUBLE)
        case Refusal.HOLLAND:
            return _for(command, double=HOLLAND_NO_DOUBLE)
        case Refusal.DEAD_CUBE:
            return _for(command, double=DEAD_CUBE_NO_DOUBLE)
        case Refusal.CUBE_LIMIT:
            return _for(command, double=CUBE_LIMIT_NO_DOUBLE, redouble=NOT_ALLOWED_TO_REDOUBLE)
        case Refusal.NOTHING_OFFERED:
            nothing = didnt_double_or_resign(opponent)
            return _for(command, accept=nothing, reject=nothing, redouble=NOT_ALLOWED_TO_REDOUBLE)
        case Refusal.REDOUBLES_UNLIMITED_ONLY:
            return _for(command, redouble=REDOUBLES_ONLY_UNLIMITED)
        case Refusal.REDOUBLE_LIMIT:
            return _for(command, redouble=NOT_ALLOWED_TO_REDOUBLE)
        case Refusal.ALREADY_RESIGNED:
            return _for(command, resign=ALREADY_DID_THAT)
        case Refusal.GAME_IN_PROGRESS:
            return NOT_YOUR_TURN
        case (
            Refusal.TABLE_FULL
            | Refusal.ALREADY_SEATED
            | Refusal.NOT_SEATED
            | Refusal.NOT_ENOUGH_PLAYERS
            | Refusal.ABSENT
            | Refusal.PARTNER_UNANSWERED
            | Refusal.NOT_BOX
            | Refusal.NOT_CAPTAIN
            | Refusal.NOT_IN_GAME
            | Refusal.NOT_YOUR_CUBE
            | Refusal.ALREADY_DOUBLED
            | Refusal.BOX_MUST_ACCEPT_HALF
            | Refusal.BOX_DOUBLE_NEEDS_CAPTAIN
            | Refusal.SINGLE_CUBE
            | Refusal.BEAVERS_OFF
            | Refusal.BAD_PROXY
            | Refusal.NO_DECISION
        ):
            # The chouette's (backgammon/chouette.py): a match never refuses with them;
            # at a chouette they answer chouette_refusal's texts (D309).
            return NOT_YOUR_TURN
        case _:
            assert_never(reason)


def _for(
    command: GameCommand,
    *,
    roll: str = NOT_YOUR_TURN,
    move: str = NOT_YOUR_TURN,
    double: str = NOT_YOUR_TURN,
    accept: str = NOT_YOUR_TURN,
    reject: str = NOT_YOUR_TURN,
    redouble: str = NOT_YOUR_TURN,
    resign: str = NOT_YOUR_TURN,
) -> str:
    """The text given for ``command`` (:data:`NOT_YOUR_TURN` where none is)."""
    match command:
        case GameCommand.ROLL:
            return roll
        case GameCommand.MOVE:
            return move
        case GameCommand.DOUBLE:
            return double
        case GameCommand.ACCEPT:
            return accept
        case GameCommand.REJECT:
            return reject
        case GameCommand.REDOUBLE:
            return redouble
        case GameCommand.RESIGN:
            return resign
        case _:
            assert_never(command)


# =====================================================================================
# Chat usage, server information and the zone list (§4.2, §4.12, §4.14; D71-D73)
# =====================================================================================


def usage(synopsis: str) -> str:
    """D71: a chat command without its text, in the form of ``** usage: message <user> <text>``
    (§4.12): ``** usage: tell <name> <text>``."""
    return f"** usage: {synopsis}"


def about(server_name: str, version_text: str) -> list[str]:
    """§4.2 ``about``: free text (D72)."""
    return [
        f"This is {server_name} {version_text}, a FIBS-compatible backgammon server.",
        "It speaks the FIBS telnet and client (CLIP 1008) protocols.",
        "Type 'help' for the list of commands.",
    ]


def stat_date(when: dt.datetime) -> str:
    """SPEC's ``stat`` date: ``Tue Dec 31 21:17:01`` (in UTC; the year is not shown)."""
    return when.strftime("%a %b %d %H:%M:%S")


def stat(started: str, registered: int, online: int, peak: int, logins: int) -> list[str]:
    """§4.2 ``stat`` (D160): SPEC's lines that this server has numbers for, in FIBS's
    words (FCM's ``^[0-9]+ registered users.`` names it FIBS_Stat), then this server's
    own. ``started`` comes from :func:`stat_date`."""
    return [
        f"The server is running since {started} UTC.",
        f"{registered} registered users.",
        f"Users logged in: {online} (most at once: {peak}).",
        f"Logins since the start: {logins}.",
    ]


AVERAGE_HEADER: Final = "Time (UTC)  average min max    Time (UTC)  average min max"
"""§4.2 ``average``: SPEC's header, two tables side by side (D160)."""


@dataclass(frozen=True)
class HourUsers:
    """Users logged in during one hour of the day (UTC): the time-weighted mean, the
    fewest and the most (``average``)."""

    mean: float = 0.0
    least: int = 0
    most: int = 0


def _average_cell(hour: int, users: HourUsers) -> str:
    return f"{hour:02d}:00-{hour:02d}:59{users.mean:6.1f}{users.least:6d}{users.most:4d}"


def average_row(hour: int, left: HourUsers, right: HourUsers) -> str:
    """§4.2 ``average``: one row of SPEC's table under :data:`AVERAGE_HEADER`, ``hour``
    (0-11) on the left and ``hour + 12`` on the right:
    ``00:00-00:59 115.1    72 153    12:00-12:59  72.0    55 100``. Every row starts
    ``hh:mm-``, FCM's ``^[0-9][0-9]:[0-9][0-9]-`` (FIBS_Average; D160)."""
    return f"{_average_cell(hour, left)}    {_average_cell(hour + 12, right)}"


def unknown_timezone(zone: str) -> str:
    """D177: telnet mode, instead of :func:`bad_timezone` and the whole zone list."""
    return (
        f"** Can't find timezone '{zone}'. Type 'show timezones' for the list,"
        " or 'show timezones Europe' for the zones starting so."
    )


NO_TIMEZONES: Final = "** No time zone starts so. Type 'show timezones' for the list."
"""D177: ``show timezones <prefix>`` that matches no zone."""


def zone_list(zones: Sequence[str]) -> list[str]:
    """§4.14, §4.16: the zones after ``Can't find timezone '<x>'. Try one of:``, six a line
    (D73)."""
    return [", ".join(zones[i : i + 6]) for i in range(0, len(zones), 6)]


# =====================================================================================
# Match timeouts (issue 5 item 7; D55)
# =====================================================================================


def turn_reminder(waiting: str) -> str:
    """D55: to the player who must act after ``[limits] match_reminder`` seconds."""
    return f"** {waiting} is waiting for you. It's your turn."


def opponent_too_slow(slow: str, seconds: int) -> str:
    """D55: to the waiting player after ``[limits] match_timeout`` seconds."""
    return (
        f"** {slow} has not played for {seconds} seconds. "
        "Type 'leave' to end the wait; the match will be saved."
    )


# =====================================================================================
# Match rules chosen with invite (extension, issue 5 item 1; D56)
# =====================================================================================

MATCH_RULE_WORDS: Final[tuple[str, ...]] = (
    "holland",
    "noholland",
    "jacoby",
    "nojacoby",
    "deadcube",
    "nodeadcube",
    "autodoubles=N",
    "cubelimit=N",
    "nocubelimit",
)
"""D56: the words ``invite <name> <length>`` accepts after the length."""


def unknown_match_rule(word: str) -> str:
    """D56: a word after the length that is not a rule."""
    return f"** Unknown match rule '{word}'. Try one of: {', '.join(MATCH_RULE_WORDS)}."


def bad_match_rules(reason: str) -> str:
    """D56: rules that do not go together (e.g. Jacoby in match play)."""
    return f"** These rules cannot be used together: {reason}."


def match_rules_line(rules: Sequence[str]) -> str:
    """D56: to both players when an invitation or match uses chosen rules."""
    return f"** Match rules: {', '.join(rules)}."


# =====================================================================================
# Match records: the export command (extension, issue 5 item 6; D76-D77)
# =====================================================================================

EXPORT_USAGE: Final = "** usage: export [<match id> [json|sgf]]"
"""D76, D275: ``export`` with more than two words, a word that is not a match id, or a
second word other than ``json``."""
EXPORT_NONE: Final = "** You have no finished matches."
"""D76: ``export`` without an id, and no finished match of the caller is stored."""
EXPORT_HEADER: Final = "Your finished matches (type 'export <id>' to get one as a .mat file):"
"""D76: before the rows of :func:`export_row`, newest match first."""


def export_row(
    match_id: int, opponent: str, length: int | None, mine: int, theirs: int, ended: dt.datetime
) -> str:
    """D76: one finished match: id, opponent, length, score (caller first), end in UTC."""
    what = "unlimited" if length is None else f"{length} point"
    return (
        f"{match_id:>6}  {opponent:<20} {what:<10} {mine:>3}-{theirs:<3} "
        f"{ended.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC"
    )


def export_not_found(match_id: int) -> str:
    """D76: no finished match with this id that the caller played (others' are refused
    with the same words, so ids of other people's matches reveal nothing)."""
    return f"** You have no finished match {match_id}."


def export_begin(match_id: int) -> str:
    """D77: the line before the ``.mat`` text of ``export <id>`` (sent verbatim after it)."""
    return f"*** Match {match_id} in Jellyfish .mat format:"


def export_end(match_id: int) -> str:
    """D77: the line after the ``.mat`` text."""
    return f"*** End of match {match_id}."


# =====================================================================================
# Dice anyone can verify (extension, issue 30; docs/dice.md; D271-D276)
# =====================================================================================
# What the server tells of a match's dice starts with ``*** ``, as the other lines of
# this server's own that refuse nothing (``export``, ``dicetest``): clients read ``** ``
# as a refusal (the bots library's ``Error``), and these lines may come at any moment
# around a match (D271).


def dice_offered(commitment: str) -> str:
    """D271: with a new match's invitation, to the inviter and the invitee: the commitment
    to the server's seed, before either player's seed is final."""
    return (
        f"*** The dice of this match are committed: {commitment}. To add a seed of your own,"
        " type 'set dice_seed <text>' before it starts."
    )


def dice_committed(
    commitment: str, first: str, first_seed: str, second: str, second_seed: str
) -> str:
    """D272: at a match's start and at each resume, to the players and the watchers: the
    commitment and the two players' seeds the dice are derived from."""
    return (
        f"*** Dice of this match ({DICE_RULE}): commitment {commitment},"
        f" seeds {first} {first_seed} and {second} {second_seed}."
    )


def dice_revealed(server_seed: str, match_id: int) -> str:
    """D273: at a match's end (won or resigned), to the players and the watchers: the
    server's seed, and where the whole proof is."""
    return (
        f"*** Dice of this match revealed: server seed {server_seed}."
        f" Type 'show dice {match_id}' for the proof."
    )


def saved_dice_revealed(opponent: str, server_seed: str, commitment: str) -> str:
    """D273: a new match replaces the players' saved one, which ends unfinished: to both
    players, the old match's server seed and commitment."""
    return (
        f"*** Your saved match with {opponent} is over; its dice's server seed was"
        f" {server_seed} (commitment {commitment})."
    )


SHOW_DICE_USAGE: Final = "** usage: show dice <match id>"
"""D274: ``show dice`` without a match id, or with a word that is not one."""


def show_dice(
    match_id: int,
    rolls: int,
    commitment: str,
    server_seed: str,
    first: str,
    first_seed: str,
    second: str,
    second_seed: str,
) -> list[str]:
    """D274: ``show dice <id>``: a finished match's proof, four lines."""
    return [
        f"*** Dice of match {match_id}: {DICE_RULE}, {rolls} rolls.",
        f"*** Commitment: {commitment}",
        f"*** Server seed: {server_seed}",
        f"*** Seeds: {first} {first_seed}, {second} {second_seed}",
    ]


def no_finished_match(match_id: int) -> str:
    """D274: ``show dice`` with an id that is no finished match."""
    return f"** There is no finished match {match_id}."


def dice_not_committed(match_id: int) -> str:
    """D274: a finished match whose dice were not committed (played before there were
    proofs)."""
    return f"** The dice of match {match_id} were not committed."


def chouette_dice_next(commitment: str) -> str:
    """D352: the commitment to the next chouette game's server seed: to the opener when
    the table opens, to a player when they join it, and to the table and its watchers
    when a game starts (the game after it)."""
    return (
        f"*** The dice of the next chouette game are committed: {commitment}. To add a seed"
        " of your own, type 'set dice_seed <text>' before it starts."
    )


def seed_pairs(names: Sequence[str], seeds: Sequence[str]) -> str:
    """D353's seeds: each player's name and seed, in the HMAC message's order, separated
    by single spaces (neither a name nor a seed holds one, D276)."""
    return " ".join(f"{name} {seed}" for name, seed in zip(names, seeds, strict=True))


def chouette_dice_committed(commitment: str, seeds: str) -> str:
    """D353: as a chouette game starts, before its first die (the first draw's, or the
    opening roll's), to the table and its watchers: the commitment told before and the
    seeds of the players at the table (:func:`seed_pairs`)."""
    return f"*** Dice of this chouette game ({DICE_RULE}): commitment {commitment}, seeds {seeds}."


def chouette_dice_revealed(server_seed: str, dice: int) -> str:
    """D354: right after a chouette game's end, to the table and its watchers: its server
    seed and how many dice it drew."""
    return f"*** Dice of this chouette game revealed: server seed {server_seed}, {dice} dice drawn."


# -- analysis <id> (issue 29; D285-D289; docs/analysis.md) ----------------------------------

ANALYSIS_USAGE: Final = "** usage: analysis <match id>"
"""D285: ``analysis`` without a match id, or with a word that is not one."""
ANALYSIS_OFF: Final = "** Matches are not analysed on this server."
"""D287: ``[analysis] enabled = no``, or gnubg is not installed."""
ANALYSIS_MISTAKES: Final = (
    "    Errors and blunders (game, move, player, play, gnubg's best, equity lost):"
)
"""D286: the heading of the list of a match's errors and blunders."""
ANALYSIS_NO_MISTAKES: Final = "    No errors or blunders."
"""D286: a match without an error or a blunder."""


def analysis_queued(match_id: int, ahead: int) -> str:
    """D287: a finished match not analysed yet (it is queued now, if it was not)."""
    return (
        f"** Match {match_id} is queued for analysis ({ahead} before it)."
        f" Type 'analysis {match_id}' again in a moment."
    )


def analysis_failed(match_id: int) -> str:
    """D287: GNU Backgammon could not analyse the match (the log says why)."""
    return f"** GNU Backgammon could not analyse match {match_id}."


def analysis_header(match_id: int, first: str, second: str, ply: int) -> str:
    """D286: the first line of ``analysis <id>`` in telnet mode."""
    return f"*** Analysis of match {match_id}, {first} - {second}, by GNU Backgammon at {ply}-ply:"


def analysis_player(
    name: str, rate: float, decisions: int, doubtful: int, errors: int, blunders: int, luck: float
) -> str:
    """D286: one player's figures: the error rate (equity lost per decision x500), the
    decisions that were not forced, the marks, the luck (EMG, positive: lucky)."""
    return (
        f"    {name}: error rate {rate:.1f} over {decisions} decisions;"
        f" doubtful {doubtful}, errors {errors}, blunders {blunders}; luck {luck:.2f}"
    )


def analysis_mistake(
    game: int, move: int, name: str, played: str, best: str, loss: float, sign: str
) -> str:
    """D286: one error (``?``) or blunder (``??``)."""
    return f"    {game:>2} {move:>3}  {name}  {played} {sign}  {best}  {loss:.3f}"


def analysis_json_begin(match_id: int) -> str:
    """D326: the line before the one line of JSON of ``analysis <id> json`` (the web
    page's form); :func:`analysis_end` after it."""
    return f"*** Analysis of match {match_id} as JSON:"


def analysis_end(match_id: int) -> str:
    """D286: the last line of ``analysis <id>`` in telnet mode."""
    return f"*** End of analysis of match {match_id}."


def analysis_line_header(match_id: int, first: str, second: str, ply: int) -> str:
    """D288: the line form (CLIP sessions): the match, its players, the depth."""
    return f"analysis {match_id} match {first} {second} {ply}"


def analysis_line_player(
    match_id: int,
    game: int,
    name: str,
    rate: float,
    decisions: int,
    doubtful: int,
    errors: int,
    blunders: int,
    luck: float,
) -> str:
    """D288: a player's figures over a game (``game`` from 1) or the match (``game`` 0)."""
    return (
        f"analysis {match_id} player {game} {name} {rate:.2f} {decisions}"
        f" {doubtful} {errors} {blunders} {luck:.3f}"
    )


def analysis_line_decision(
    match_id: int, game: int, move: int, name: str, played: str, best: str, loss: float, mark: str
) -> str:
    """D288: a marked decision (doubtful, error or blunder); plays and cube actions
    without spaces (``13/7,8/7``, ``no-double``)."""
    return f"analysis {match_id} mark {game} {move} {name} {played} {best} {loss:.4f} {mark}"


def analysis_line_end(match_id: int) -> str:
    """D288: the last line of the line form."""
    return f"analysis {match_id} end"


def export_sgf_begin(match_id: int) -> str:
    """D291: the line before GNU Backgammon's SGF of the match with its analysis
    (``export <id> sgf``); :func:`export_end` after it."""
    return f"*** Match {match_id} as GNU Backgammon's SGF, with its analysis:"


def export_json_begin(match_id: int) -> str:
    """D275: the line before the JSON record of ``export <id> json`` (one line), which
    ``python -m backgammon.fair_dice verify FILE`` checks; :func:`export_end` after it."""
    return f"*** Match {match_id} as JSON:"


DICE_SEED_INVALID: Final = (
    "** A dice seed is 1 to 64 characters from '!' to '~' (letters, digits, signs), no spaces."
)
"""D276: ``set dice_seed`` with a value :func:`backgammon.fair_dice.is_player_seed` refuses."""
DICE_SEED_UNSET: Final = "none"
"""D276: ``set dice_seed`` before one was set (the server draws one at the match's start)."""


# =====================================================================================
# dicetest (§4.14; SPEC "Dicetest"; issue 5 item 8; D78)
# =====================================================================================

DICETEST_START: Final = "*** running dice test:"
"""§4.14: the report's first line; clients capture everything up to :data:`DICETEST_END`."""
DICETEST_END: Final = "Done."
"""§4.14: the report's last line."""


def dicetest_rolled(rolls: int) -> str:
    """SPEC's second line: ``*** Rolled 3329664 times with 2 dice``."""
    return f"*** Rolled {rolls} times with 2 dice"


def dicetest_pairs(first: int, n1: int, n2: int, n3: int, n4: int, n5: int, n6: int) -> str:
    """SPEC's table row for one first die, six cells: ``1-1 92359   1-2 92773 ...``.

    One space between the pair and its count, whatever the count (D162): FCM classifies a
    row by ``^[1-6]-1 [0-9]``, which SPEC's right-aligned ``1-1  92359`` only meets once
    counts have six digits. The counts are padded on the right to keep the columns.
    """
    cells = (n1, n2, n3, n4, n5, n6)
    row = "  ".join(f"{first}-{second} {n:<6}" for second, n in enumerate(cells, start=1))
    return row.rstrip()


def dicetest_faces(n1: int, n2: int, n3: int, n4: int, n5: int, n6: int) -> str:
    """D78: how often each face showed, over both dice of every roll."""
    cells = (n1, n2, n3, n4, n5, n6)
    return "*** Faces: " + "  ".join(f"{face}: {n}" for face, n in enumerate(cells, start=1))


def dicetest_chi_square(what: str, value: float, freedom: int, probability: float) -> str:
    """D78: Pearson's chi-square of ``what`` (``faces``, ``pairs``) against fair dice, its
    degrees of freedom, and P, the chance that fair dice deviate at least this much."""
    return (
        f"*** Chi-square of the {what}: {value:.2f} with {freedom} degrees of freedom, "
        f"P = {probability:.3f}"
    )


# =====================================================================================
# Words and marks inside other replies (§4.5, §4.10, §4.13, §4.14; D53, D78)
# =====================================================================================

CALLER_NAME: Final = "You"
"""The caller in place of their name: ``away``'s list and ``pip``'s counts (§4.10, §4.13)."""
BAR_POINT: Final = "bar"
"""§4.5: the bar named in a move error (the other points are numbers)."""
UNKNOWN_HOST: Final = "-"
"""A host that is not known (no peer address, never logged in): ``who`` and ``whois``."""
UTC_ZONE: Final = "UTC"
"""The zone name shown when a time has none, and the zone ``set timezone`` always knows."""
UNKNOWN_VERSION: Final = "0"
"""The version ``version`` and ``about`` show for a server run from an uninstalled tree."""
WEB_ORIGIN_REFUSED: Final = "This page may not connect to this server."
"""The HTTP 403 answer to a WebSocket request from another site's page (docs/web.md, D251)."""
WEB_VERSION_REFUSED: Final = "This server speaks WebSocket version 13 only."
"""The HTTP 426 answer to a WebSocket request of another version (RFC 6455 §4.4, D262)."""
WEB_FRAME_NOT_MASKED: Final = "client frames must be masked"
"""The reason in the close frame (code 1002) that ends a WebSocket whose client sent an
unmasked frame (RFC 6455 §5.1, D262)."""


class WhoStatus(enum.StrEnum):
    """§4.14 (HELP who): the status column of the telnet-mode ``who`` table."""

    PLAYING = "P"
    WATCHING = "W"
    AWAY = "A"
    READY = "R"
    NONE = "-"


def who_status(*, playing: bool, watching: bool, away: bool, ready: bool) -> WhoStatus:
    """The first that holds: playing, watching, away, ready; else none."""
    if playing:
        return WhoStatus.PLAYING
    if watching:
        return WhoStatus.WATCHING
    if away:
        return WhoStatus.AWAY
    return WhoStatus.READY if ready else WhoStatus.NONE


def version_with_python(version_text: str, python_version: str) -> str:
    """``0.1.0 (Python 3.11.9)``: the server's version and the Python it runs on."""
    return f"{version_text} (Python {python_version})"


def redouble_name(redoubles: int) -> str:
    """The word for the redouble after ``redoubles`` others (§4.6): ``beaver``,
    ``raccoon``, ``otter``, then ``redouble``."""
    return REDOUBLE_NAMES[redoubles] if redoubles < len(REDOUBLE_NAMES) else "redouble"


class GameCommand(enum.StrEnum):
    """The game actions whose refusals :func:`refusal` words by command (§4.5-§4.7);
    values are the commands' table names."""

    ROLL = "roll"
    DOUBLE = "double"
    MOVE = "move"
    ACCEPT = "accept"
    REJECT = "reject"
    REDOUBLE = "redouble"
    RESIGN = "resign"


def dicetest_faces_chi_square(value: float, freedom: int, probability: float) -> str:
    """D78: the chi-square line of the faces (:func:`dicetest_chi_square`)."""
    return dicetest_chi_square("faces", value, freedom, probability)


def dicetest_pairs_chi_square(value: float, freedom: int, probability: float) -> str:
    """D78: the chi-square line of the ordered pairs (:func:`dicetest_chi_square`)."""
    return dicetest_chi_square("pairs", value, freedom, probability)


# =====================================================================================
# The chouette (docs/chouette.md; issue 31; D303-D312): not FIBS's, this server's own
# =====================================================================================

CHOUETTE_USAGE: Final = (
    "** Usage: chouette open [setting=value ...] | invite <name> | join <name>"
    " | start | leave | show [name] | team <text> | delegate [name] | return"
    " | record [name]"
)
"""D303: ``chouette`` without a known word."""
CHOUETTE_OPENED: Final = (
    "** You open a chouette table. Invite players with 'chouette invite <name>'."
)
"""D303."""
ALREADY_AT_CHOUETTE: Final = "** You are already at a chouette table."
NOT_AT_CHOUETTE: Final = "** You are not at a chouette table."
CHOUETTE_NEEDS_TWO: Final = "** A chouette game needs two players at the table."
CHOUETTE_NO_GAME: Final = "** No chouette game is being played. Type 'chouette start'."
CHOUETTE_GAME_RUNNING: Final = "** A chouette game is being played."
CHOUETTE_TABLE_FULL: Final = "** The chouette table is full."
CHOUETTE_ABSENT: Final = "** You are absent from the chouette table."
CHOUETTE_PARTNER_WAITS: Final = "** The seat of the box's partner waits for its answer."
CHOUETTE_NOT_BOX: Final = "** Only the box may do that."
CHOUETTE_NOT_CAPTAIN: Final = "** Only the captain may do that."
CHOUETTE_NOT_IN_GAME: Final = "** That cube is not in the game."
CHOUETTE_NOT_YOUR_CUBE: Final = "** That is not your cube."
CHOUETTE_ALREADY_DOUBLED: Final = "** That cube is already doubled."
CHOUETTE_HALF_OR_NONE: Final = (
    "** The box must accept at least half of the initial doubles, or none."
)
CHOUETTE_NEEDS_CAPTAIN: Final = "** The box's double must include the captain's cube."
CHOUETTE_SINGLE_CUBE: Final = "** This table plays a single cube: it moves for the whole team."
CHOUETTE_NO_BEAVERS: Final = "** This table plays without beavers."
CHOUETTE_BAD_PROXY: Final = "** The proxy must be another member of the line."
CHOUETTE_NO_DECISION: Final = "** No decision is waiting."
CHOUETTE_NOTHING_TO_ANSWER: Final = "** There is no double or resignation for you to answer."
CHOUETTE_DOUBLE_WAITS: Final = "** A double waits for its answer."
CHOUETTE_RESIGNATION_WAITS: Final = "** A resignation waits for its answer."
CHOUETTE_TEAM_TALK_BOX: Final = "** The box never hears team talk."
CHOUETTE_TEAM_TALK_REFUSED: Final = "** The table's consultation setting does not let you talk now."
"""D310: team talk refused by the consultation setting (docs/chouette.md)."""
CHOUETTE_ANSWER_BOX_DOUBLE: Final = (
    "The box doubles you. Type 'accept' or 'reject' ('beaver' where the table allows)."
)
"""D306: to each member whose cube the box doubled."""
CHOUETTE_AUTO_DOUBLE_OPTION: Final = (
    "The opening roll tied: type 'accept' to double every cube, 'reject' not to."
)
"""D306: to the box, at the first opening tie with ``auto_doubles=box_option`` (§2)."""


def chouette_rules(words: Sequence[str]) -> str:
    """D303: the table's settings as ``setting=value`` words, to the opener and the invited."""
    return "** Chouette rules: " + " ".join(words)


def chouette_bad_setting(word: str) -> str:
    """D303: a ``chouette open`` word that is no ``setting=value`` of the table."""
    return f"** Unknown chouette setting or value: '{word}'. See 'help chouette'."


def chouette_settings_clash(text: str) -> str:
    """D303: settings that do not go together (the core's reason)."""
    return f"** These chouette settings do not go together: {text}."


def chouette_invites_you(name: str) -> str:
    """D304: to the invited player, before the rules line and :func:`chouette_join_hint`."""
    return f"{name} invites you to a chouette table."


def chouette_join_hint(name: str) -> str:
    """D304."""
    return f"Type 'chouette join {name}' to join it."


def you_invite_to_chouette(name: str) -> str:
    """D304: to the inviter."""
    return f"** You invite {name} to your chouette table."


def no_chouette_invitation(name: str) -> str:
    """D304: ``chouette join`` a table one was not invited to."""
    return f"** {name} didn't invite you to a chouette table."


def chouette_joins(name: str) -> str:
    """D305: to everyone at the table and its watchers."""
    return f"{name} joins the chouette."


def chouette_waits(name: str) -> str:
    """D305: a player who joined during a game sits down when it ends."""
    return f"{name} sits down when this game ends."


def chouette_leaves(name: str) -> str:
    """D305."""
    return f"{name} leaves the chouette."


def chouette_draws(name: str, die: int) -> str:
    """D305: one line per player of each round of the first draw for the seats."""
    return f"{name} draws {die}."


def chouette_seats(box: str, line: Sequence[str]) -> str:
    """D305: the seats, the line in rank order (its first is the captain)."""
    return f"The box: {box}. The line: {', '.join(line)}."


def chouette_partner(name: str) -> str:
    """D305: the box's partner (docs/chouette.md, §7)."""
    return f"{name} is the box's partner."


def chouette_partner_offered(name: str) -> str:
    """D305: to everyone; the candidate answers ``accept`` or ``reject``."""
    return f"{name} is offered the seat of the box's partner: 'accept' or 'reject'."


def chouette_partner_answered(name: str, accepted: bool) -> str:
    """D305."""
    return f"{name} {'takes' if accepted else 'declines'} the seat of the box's partner."


def chouette_partner_share(name: str, won: int) -> str:
    """D305: the partner's share of the box's net result (negative: a loss)."""
    return f"{name} shares the box's result: {won:+d}."


def chouette_game_starts(game: int, box: str, captain: str) -> str:
    """D305."""
    return f"Chouette game {game}: {box} is the box, {captain} the captain."


def chouette_acting_captain(name: str) -> str:
    """D305: a new acting captain plays the team's checkers (§3, §8)."""
    return f"{name} plays for the team now."


def chouette_team_doubles(member: str, value: int) -> str:
    """D306: a member doubles their own cube against the box."""
    return f"{member} doubles the box: the cube to {value}."


def chouette_doubles_for(by: str, member: str, value: int) -> str:
    """D306: a proxy (or the single cube's captain) doubles another member's cube."""
    return f"{by} doubles the box for {member}: the cube to {value}."


def chouette_box_answers(members: Sequence[str]) -> str:
    """D306: the doubling window closed; the box answers every double at once."""
    return f"The box answers the doubles of {', '.join(members)}: 'accept' or 'reject'."


def chouette_box_doubles(member: str, value: int) -> str:
    """D306."""
    return f"The box doubles {member}: the cube to {value}."


def chouette_box_accepts(member: str, value: int) -> str:
    """D306."""
    return f"The box accepts the double of {member}: the cube is {value}."


def chouette_box_rejects(member: str) -> str:
    """D306."""
    return f"The box rejects the double of {member}."


def chouette_member_accepts(member: str, value: int) -> str:
    """D306."""
    return f"{member} accepts the box's double: the cube is {value}."


def chouette_member_rejects(member: str) -> str:
    """D306."""
    return f"{member} rejects the box's double."


def chouette_beavers(member: str, value: int) -> str:
    """D306."""
    return f"{member} beavers the box's double: the cube is {value}."


def chouette_raccoons(member: str, value: int) -> str:
    """D306."""
    return f"The box raccoons {member}: the cube is {value}."


def chouette_auto_double_declined(box: str) -> str:
    """D306."""
    return f"{box} declines the automatic double."


def chouette_timed_out(names: Sequence[str]) -> str:
    """D306: a decision's time ran out."""
    return f"Time is up for {', '.join(names)}."


def chouette_member_wins(member: str, won: int) -> str:
    """D307: a member's cube settled in their favour."""
    return f"{member} wins {points(won)} from the box."


def chouette_box_wins(member: str, won: int) -> str:
    """D307: a member's cube settled in the box's favour."""
    return f"The box wins {points(won)} from {member}."


_RESIGNED: Final = {
    WinKind.SINGLE: "normal game",
    WinKind.GAMMON: "gammon",
    WinKind.BACKGAMMON: "backgammon",
}


def chouette_resign_offered(by: str, to: str, kind: WinKind, value: int) -> str:
    """D307: a resignation on one member's cube."""
    resigned = _RESIGNED[kind]
    return f"{by} offers {to} to resign a {resigned} ({points(value)}): 'accept' or 'reject'."


def chouette_resign_accepted(by: str) -> str:
    """D307."""
    return f"{by} accepts the resignation."


def chouette_resign_rejected(by: str) -> str:
    """D307."""
    return f"{by} rejects the resignation."


def chouette_resign_withdrawn(member: str) -> str:
    """D307."""
    return f"The resignation on the cube of {member} is withdrawn."


def chouette_presence(name: str, present: bool) -> str:
    """D305."""
    return f"{name} {'is back at' if present else 'is away from'} the table."


def chouette_held(box: str) -> str:
    """D361: the box is away; the table is saved and waits for it."""
    return f"The table waits for {box}, the box: it is saved and goes on when {box} returns."


CHOUETTE_SAVED_TABLE: Final = (
    "** You have a saved chouette table. Type 'chouette return' to go back to it,"
    " or 'chouette leave'."
)
"""D361: ``chouette open`` or ``join`` by a player whose table is saved."""
CHOUETTE_NOT_AWAY: Final = "** You are at your chouette table already."
"""D361: ``chouette return`` by a player present at their table."""


def chouette_record_heading(host: str) -> str:
    """D363: ``chouette record`` at a table, before one line per player."""
    return f"Standings at {host}'s chouette table over its finished games:"


def chouette_record_line(name: str, games: int, points: int) -> str:
    """D363: one player's line of a table's standings."""
    return f"  {name:<20} {games:>4} games {points:>+6} points"


def chouette_player_record(name: str, tables: int, games: int, points: int) -> str:
    """D363: ``chouette record <name>``: a player's chouettes over every table."""
    return f"{name} played {games} chouette games at {tables} tables: {points:+d} points."


def chouette_proxy(member: str, proxy: str) -> str:
    """D305: a delegation of cube decisions (§8)."""
    return f"{proxy} decides for the cube of {member}."


def chouette_proxy_ended(member: str) -> str:
    """D305."""
    return f"{member} decides for their own cube again."


def chouette_game_over(game: int, box_net: int, box_stays: bool) -> str:
    """D307: every cube is settled; the rotation (§5) follows in the seats line."""
    stays = "the box stays" if box_stays else "the box rotates"
    return f"Chouette game {game} is over: the box's net result is {box_net:+d}; {stays}."


def chouette_heading(host: str, game: int) -> str:
    """D308: the first line of ``show chouette`` in telnet mode."""
    return f"The chouette of {host}, game {game}:"


def chouette_show_seats(box: str, partner: str | None, line: Sequence[str]) -> str:
    """D308: the seats in ``show chouette`` (telnet mode)."""
    with_partner = "" if partner is None else f" with {partner} as partner"
    return f"  The box: {box}{with_partner}. The line: {', '.join(line)}."


def chouette_show_waiting(names: Sequence[str]) -> str:
    """D308: who sits down when the game ends."""
    return f"  Waiting for the next game: {', '.join(names)}."


def chouette_show_phase(phase: str, on_roll: str | None) -> str:
    """D308: the table's phase (docs/chouette.md) and which side is on roll."""
    return f"  Phase: {phase}." if on_roll is None else f"  Phase: {phase}, the {on_roll} on roll."


def chouette_show_cube(
    member: str, value: int, owner: str, turned: bool, settled: int | None
) -> str:
    """D308: one member's cube (``owner``: centre, box, member)."""
    state = "in the game" if settled is None else f"settled at {settled:+d}"
    turn = ", turned" if turned else ""
    return f"  Cube of {member}: {value}, {owner}{turn}, {state}."


def chouette_show_total(name: str, total: int, seat: str) -> str:
    """D308: a player's running total and where they sit (box, partner, line, waiting,
    gone)."""
    return f"  Total of {name}: {total:+d} ({seat})."


def chouette_table_line(
    host: str, game: int, phase: str, box: str, partner: str, line: Sequence[str], turn: str
) -> str:
    """D308: the first of ``show chouette``'s lines for programs (CLIP mode): fields
    separated by ``:``, lists by ``,``; ``-`` for none."""
    return f"chouette:{host}:{game}:{phase}:{box}:{partner}:{','.join(line) or '-'}:{turn}"


def chouette_cube_line(member: str, value: int, owner: str, turned: bool, result: str) -> str:
    """D308: one member's cube (``owner``: centre, box or member; ``result``: ``-`` while
    in the game, else the points settled, with their sign)."""
    return f"chouette-cube:{member}:{value}:{owner}:{int(turned)}:{result}"


def chouette_total_line(name: str, total: int, seat: str) -> str:
    """D308: a player's running total (``seat``: box, partner, line, waiting, gone)."""
    return f"chouette-total:{name}:{total}:{seat}"


def chouette_may_line(name: str, action: str, members: Sequence[str]) -> str:
    """D405: one action ``name`` may take now (the core's ``ChouetteAction`` values) and
    the members whose cubes it concerns (``-``: none)."""
    return f"chouette-may:{name}:{action}:{','.join(members) or '-'}"


def chouette_away_line(name: str) -> str:
    """D405: a player away from the table (``chouette return`` takes the seat again)."""
    return f"chouette-away:{name}"


def chouette_proxy_line(member: str, proxy: str) -> str:
    """D405: ``proxy`` decides for ``member``'s cube too (``chouette delegate``)."""
    return f"chouette-proxy:{member}:{proxy}"


CHOUETTE_END_LINE: Final = "chouette-end"
"""D308: the last line of ``show chouette`` for programs."""


def team_talks(name: str, text: str) -> str:
    """D310: team talk as the other members hear it."""
    return f"{name} tells the team: {text}"


def you_team_talk(text: str) -> str:
    """D310: the echo of team talk."""
    return f"** You tell the team: {text}"


def chouette_refusal(command: GameCommand | None, reason: Refusal) -> str:
    """D309: the reply when the chouette's core refuses ``command`` (None: a command of
    the table, ``chouette join``/``start``/``leave``) for ``reason``: the match's FIBS
    text where the situation is the same, else the chouette's own. Total over the
    reasons (``assert_never``)."""
    if command is None:
        command = GameCommand.ACCEPT  # the table's commands answer as no game command does
    match reason:
        case Refusal.NOT_YOUR_TURN:
            return _for(
                command,
                roll=NOT_YOUR_TURN_TO_ROLL,
                move=NOT_YOUR_TURN_TO_MOVE,
                double=NOT_YOUR_TURN_TO_DOUBLE,
                accept=CHOUETTE_NOTHING_TO_ANSWER,
                reject=CHOUETTE_NOTHING_TO_ANSWER,
            )
        case Refusal.ALREADY_ROLLED:
            return _for(command, roll=ALREADY_ROLLED, double=DOUBLE_BEFORE_ROLL)
        case Refusal.MUST_ROLL:
            return _for(command, move=ROLL_FIRST)
        case Refusal.NOT_OWNER:
            return NOT_YOUR_TURN_TO_DOUBLE
        case Refusal.NOTHING_OFFERED:
            return CHOUETTE_NOTHING_TO_ANSWER
        case Refusal.ALREADY_RESIGNED:
            return ALREADY_DID_THAT
        case Refusal.RESIGN_PENDING_YOURS | Refusal.RESIGN_PENDING_THEIRS:
            return CHOUETTE_RESIGNATION_WAITS
        case Refusal.DOUBLE_PENDING_YOURS | Refusal.MUST_ANSWER_DOUBLE:
            return CHOUETTE_DOUBLE_WAITS
        case Refusal.NO_GAME | Refusal.MATCH_OVER:
            return CHOUETTE_NO_GAME
        case Refusal.GAME_IN_PROGRESS:
            return CHOUETTE_GAME_RUNNING
        case (
            Refusal.CRAWFORD
            | Refusal.HOLLAND
            | Refusal.DEAD_CUBE
            | Refusal.CUBE_LIMIT
            | Refusal.REDOUBLES_UNLIMITED_ONLY
            | Refusal.REDOUBLE_LIMIT
        ):
            return NOT_YOUR_TURN  # a match's rules: the chouette never refuses with them
        case Refusal.TABLE_FULL:
            return CHOUETTE_TABLE_FULL
        case Refusal.ALREADY_SEATED:
            return ALREADY_AT_CHOUETTE
        case Refusal.NOT_SEATED:
            return NOT_AT_CHOUETTE
        case Refusal.NOT_ENOUGH_PLAYERS:
            return CHOUETTE_NEEDS_TWO
        case Refusal.ABSENT:
            return CHOUETTE_ABSENT
        case Refusal.PARTNER_UNANSWERED:
            return CHOUETTE_PARTNER_WAITS
        case Refusal.NOT_BOX:
            return CHOUETTE_NOT_BOX
        case Refusal.NOT_CAPTAIN:
            return CHOUETTE_NOT_CAPTAIN
        case Refusal.NOT_IN_GAME:
            return CHOUETTE_NOT_IN_GAME
        case Refusal.NOT_YOUR_CUBE:
            return CHOUETTE_NOT_YOUR_CUBE
        case Refusal.ALREADY_DOUBLED:
            return CHOUETTE_ALREADY_DOUBLED
        case Refusal.BOX_MUST_ACCEPT_HALF:
            return CHOUETTE_HALF_OR_NONE
        case Refusal.BOX_DOUBLE_NEEDS_CAPTAIN:
            return CHOUETTE_NEEDS_CAPTAIN
        case Refusal.SINGLE_CUBE:
            return CHOUETTE_SINGLE_CUBE
        case Refusal.BEAVERS_OFF:
            return CHOUETTE_NO_BEAVERS
        case Refusal.BAD_PROXY:
            return CHOUETTE_BAD_PROXY
        case Refusal.NO_DECISION:
            return CHOUETTE_NO_DECISION
        case _:
            assert_never(reason)
