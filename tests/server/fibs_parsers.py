"""How two real FIBS parsers classify the texts of issue 19 item 6, for the tests.

FIBS Cookie Monster (FCM; repository ``bgnori/bglib``, ``FCM/FIBSCookieMonster.c``,
``PrepareBatches``) compiles POSIX extended regular expressions and, in its run state,
tries the batch the line's first character picks (a digit: the numeric batch, ``*``: the
stars batch, anything else: the alpha batch) in order; the first match names the line.
The expressions below are FCM's, in FCM's order, written as Python ``re`` patterns (for
these expressions POSIX ERE and ``re`` agree: ``(UTC)`` is a group in both). Only the
entries that decide the lines tested here are listed, with every earlier entry of the
same batch that is unanchored or starts with a name, so could take the line first.

GNU Gibbon (repository ``gitGNU/gnu_gibbon``, ``src/gibbon-clip.c``,
``gibbon_clip_parse``) splits a line on white space and compares whole words; its
``show saved`` words are :data:`GIBBON_SAVED_HEADER` and :data:`GIBBON_NO_SAVED`.
"""

from __future__ import annotations

import re

Batch = list[tuple[str, re.Pattern[str]]]


def _batch(*entries: tuple[str, str]) -> Batch:
    return [(cookie, re.compile(regex)) for cookie, regex in entries]


NAME = "[a-zA-Z_<>]+"

FCM_NUMERIC = _batch(
    ("CLIP_WHO_INFO", r"^5 [^ ]+ - - [01]"),
    ("CLIP_WHO_INFO", r"^5 [^ ]+ [^ ]+ - [01]"),
    ("CLIP_WHO_INFO", r"^5 [^ ]+ - [^ ]+ [01]"),
    ("FIBS_Average", r"^[0-9][0-9]:[0-9][0-9]-"),
    ("FIBS_DiceTest", r"^[1-6]-1 [0-9]"),
    ("FIBS_DiceTest", r"^[1-6]: [0-9]"),
    ("FIBS_Stat", r"^[0-9]+ bytes"),
    ("FIBS_Stat", r"^[0-9]+ accounts"),
    ("FIBS_Stat", r"^[0-9]+ ratings saved. reset log"),
    ("FIBS_Stat", r"^[0-9]+ registered users."),
    ("FIBS_Stat", r"^[0-9]+\([0-9]+\) saved games check by cron"),
    ("CLIP_WHO_END", r"^6$"),
    ("CLIP_SHOUTS", rf"^13 {NAME} "),
    ("CLIP_SAYS", rf"^12 {NAME} "),
    ("CLIP_WHISPERS", rf"^14 {NAME} "),
    ("CLIP_KIBITZES", rf"^15 {NAME} "),
    ("CLIP_YOU_SAY", rf"^16 {NAME} "),
    ("CLIP_YOU_SHOUT", r"^17 "),
    ("CLIP_YOU_WHISPER", r"^18 "),
    ("CLIP_YOU_KIBITZ", r"^19 "),
    ("CLIP_LOGIN", rf"^7 {NAME} "),
    ("CLIP_LOGOUT", rf"^8 {NAME} "),
)

FCM_ALPHA = _batch(
    ("FIBS_PlayerRolls", rf"^{NAME} rolls [1-6] and [1-6]"),
    ("FIBS_AcceptRejectDouble", r"doubles\. Type 'accept' or 'reject'\."),
    ("FIBS_Doubles", rf"^{NAME} doubles\."),
    ("FIBS_PlayerAcceptsDouble", r"accepts the double\."),
    ("FIBS_PlayerMoves", rf"^{NAME} moves"),
    ("FIBS_YouStopWatching", r"You're not watching anymore\."),
    ("FIBS_OpponentLogsOut", r"The game was saved\."),
    ("FIBS_FirstRoll", rf"{NAME} rolled [1-6].+rolled [1-6]"),
    ("FIBS_MakesFirstMove", r" makes the first move\."),
    ("FIBS_WatchResign", rf"^{NAME} wants to resign\. "),
    ("FIBS_ResignRefused", r"rejects\. The game continues\."),
    ("FIBS_PlayerStartsWatching", rf"{NAME} starts watching {NAME}\."),
    ("FIBS_PlayerStartsWatching", rf"{NAME} is watching you\."),
    ("FIBS_PlayerStopsWatching", rf"{NAME} stops watching {NAME}\."),
    ("FIBS_PlayerIsWatching", rf"{NAME} is watching "),
    ("FIBS_PlayerWantsToResign", r"wants to resign\."),
    ("FIBS_ResumeMatchAck0", r"has joined you\. Your running match was loaded"),
    ("FIBS_WatchGameWins", r"wins the game and gets"),
    ("FIBS_PlayersStartingUnlimitedMatch", r"start an unlimited match\."),
    ("FIBS_ReportLimitedMatch", rf"^{NAME} +- +{NAME} .+ point match"),
    ("FIBS_CantMove", rf"^{NAME} can't move"),
    ("FIBS_Waves", r"waves goodbye"),
    ("FIBS_NoSavedGames", r"^no saved games\."),
    ("FIBS_SavedMatch", rf"^  {NAME} +[0-9]+ +[0-9]+ +- +"),
    ("FIBS_SavedMatchPlaying", rf"^ \*{NAME} +[0-9]+ +[0-9]+ +- +"),
    ("FIBS_PlayerIsWaitingForYou", rf"^{NAME} is waiting for you to log in\."),
    ("FIBS_Done", r"^Done\."),
    ("FIBS_SavedMatchesHeader", r"^  opponent          matchlength   score \(your points first\)"),
    ("FIBS_Average", r"^Time (UTC)  average min max"),
    ("FIBS_DiceTest", r"^[nST]: "),
    ("FIBS_IsPlayingWith", r"is playing with"),
    ("FIBS_SavedScoreHeader", r"^opponent +matchlength"),
)

FCM_STARS = _batch(
    ("FIBS_SavedMatchReady", rf"^\*\*{NAME} +[0-9]+ +[0-9]+ +- +[0-9]+"),
)

FCM_AVERAGE_HEADER_MEANT = re.compile(r"^Time \(UTC\)  average min max")
"""FCM's ``^Time (UTC)  average min max`` with the brackets escaped, as its author meant
it: as written, ``(UTC)`` is a group and the expression wants ``Time UTC  average``, which
FIBS never sent, so FCM leaves FIBS's own header unnamed."""


def fcm_cookie(line: str) -> str:
    """The FCM cookie of ``line`` in the run state, among the entries above
    (``FIBS_Unknown`` when none matches, as FCM answers)."""
    if not line:
        return "FIBS_Empty"
    if line[0].isdigit():
        batch = FCM_NUMERIC
    elif line[0] == "*":
        batch = FCM_STARS
    else:
        batch = FCM_ALPHA
    for cookie, regex in batch:
        if regex.search(line):
            return cookie
    return "FIBS_Unknown"


GIBBON_SAVED_HEADER = ("opponent", "matchlength", "score", "(your", "points", "first)")
"""The words of the ``show saved`` header in ``gibbon_clip_parse`` (GIBBON_CLIP_CODE
SHOW_START_SAVED)."""
GIBBON_NO_SAVED = ("no", "saved", "games.")
"""The words of ``no saved games.`` in ``gibbon_clip_parse`` (SHOW_SAVED_NONE)."""
