"""Jellyfish ``.mat`` export of a stored match (issue 5 item 6; docs/records.md).

The ``.mat`` text format is the match transcript that Jellyfish wrote and that GNU
Backgammon (``import mat``), eXtreme Gammon and BGBlitz import. This module only
formats: it takes a match snapshot (:meth:`server.tables.matches.LiveMatch.snapshot`, which a
finished match's record keeps as its ``moves``) of a finished match or of one still in
progress, and returns the text; it reads the games through
:func:`protocol.game_record.game_turns`, the walk ``oldmoves`` uses too. The layout
reproduces, column for column, what GNU Backgammon 1.07 itself writes with
``export match mat`` (learnt by running it; gnubg's importer tells the two players'
entries apart by their columns):

* comment tags: ``; [Site "<server name>"]``, ``; [EventDate "2024.01.31"]`` (the
  match's start, UTC) and the rules (``; [Crawford "On"]`` in match play,
  ``; [Jacoby "Off"]`` and ``; [Beaver "On"]`` in money play, ``; [CubeLimit "64"]``),
  then an empty line;
* `` 3 point match`` (`` 0 point match`` for an unlimited match: a money session),
  an empty line;
* per game `` Game <n>``, then the players with the score at the start of the game,
  `` alice : 0`` padded to 32 characters followed by ``bob : 0``;
* numbered lines ``  1) 31: 8/5 6/5                 64: 24/18 13/9``: the line number
  right-aligned in three characters and ``) ``, then the first player's entry padded to
  28 characters, then the second player's. Each player's turn is one entry: the dice
  (higher die first), a colon, and the moves in that player's *own* point numbers
  (24 down to 1, ``25`` is the bar, ``0`` off), one per die, a hit marked ``*``; a
  roll that cannot be played is only ``63:``. Cube actions are entries of their own
  with a leading space: `` Doubles => 2``, `` Takes``, `` Drops``, and an instant
  redouble (beaver, raccoon, ...) `` Beavers => 4``; the acceptance of the last
  redouble is implied, as gnubg writes it (an exchange that ends otherwise is written
  `` Raccoons => 4`` with its answer, :func:`_redouble_word`);
* entries fill a line left to right; an entry for the first player, or one for the
  second player when that column is taken, starts a new numbered line (the second
  player's entry then follows 28 blanks);
* the game's end is the winner's entry `` Wins 2 points`` (``1 point``), with
  `` and the match`` after it when it ends the match; when it needs a new line, that
  line has no number. A resignation is recorded only by this line: the format has no
  notation for resignation offers, and importers take a ``Wins`` before the game is
  over as an accepted resignation of those points. Dice rolled but not played before
  it are left out, except an opening roll (importers need it to start the game);
* an empty line after every game.

Lines end in ``\\n``; the only trailing spaces are those of a first player's cube
action alone on its line, padded to the second column as gnubg pads it (its importer
misreads the line otherwise). Limits of the format (docs/records.md):
automatic doubles on opening ties, the Jacoby rule and a match without the Crawford
rule cannot be expressed; importers apply their own defaults for them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from backgammon.board import Player
from backgammon.dice import Roll
from backgammon.errors import SnapshotError
from backgammon.events import Event, event_from_json
from backgammon.match import MatchOptions
from backgammon.moves import Move
from protocol.game_record import (
    Cube,
    CubeAction,
    Played,
    Turn,
    Unplayed,
    Won,
    game_start,
    game_turns,
)

__all__ = [
    "ENTRY_WIDTH",
    "NAMES_WIDTH",
    "MatchTranscript",
    "format_mat",
    "format_mat_move",
    "snapshot_to_mat",
    "transcript_from_snapshot",
]

ENTRY_WIDTH = 28
"""Characters of the first player's column on a move line (gnubg's ``export match mat``)."""
NUMBER_WIDTH = 5
"""``"  1) "``: the line number in three characters, ``)`` and a space."""
NAMES_WIDTH = 32
"""The first player's ``name : score`` (with its leading space) is padded to this width."""


@dataclass(frozen=True)
class MatchTranscript:
    """What a ``.mat`` file shows: the players, the length and every game's events."""

    players: tuple[str, str]
    """Player 0 (the left column) and player 1, as the events number them."""
    length: int
    """Points to win; 0 for an unlimited match (written as a money session)."""
    games: tuple[tuple[Event, ...], ...]
    """Each game's events, the last one possibly unfinished."""
    started_at: int | None = None
    """Unix time of the match's start (the ``EventDate`` tag), if known."""
    site: str | None = None
    """The server's name for the ``Site`` tag, if wanted."""
    rules: MatchOptions | None = None
    """The match's rules, written as informational tags (gnubg's importer ignores them)."""
    tags: tuple[tuple[str, str], ...] = field(default=())
    """More ``; [Key "value"]`` tags, written after the others."""


def transcript_from_snapshot(
    snapshot: str | dict[str, Any], *, site: str | None = None
) -> MatchTranscript:
    """The transcript of a :meth:`server.tables.matches.LiveMatch.snapshot` (text or parsed).

    Works for a finished match (the ``moves`` of a match record) and for one in
    progress (its unfinished game is included as far as it went).

    :raises SnapshotError: the data is not a version 1 snapshot.
    """
    try:
        data: dict[str, Any] = json.loads(snapshot) if isinstance(snapshot, str) else snapshot
        if data.get("version") != 1:
            raise SnapshotError(f"unknown snapshot version {data.get('version')!r}")
        first, second = data["players"]
        match = data["match"]
        games = [[event_from_json(e) for e in game] for game in match["history"]]
        if match["record"]:
            games.append([event_from_json(e) for e in match["record"]])
        rules = MatchOptions(**match["options"])
        started = data.get("started_at")
    except SnapshotError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"not a match snapshot: {exc}") from exc
    return MatchTranscript(
        (str(first), str(second)),
        rules.length,
        tuple(tuple(game) for game in games),
        started_at=int(started) if started is not None else None,
        site=site,
        rules=rules,
    )


def snapshot_to_mat(
    snapshot: str | dict[str, Any], *, site: str | None = None, started_at: int | None = None
) -> str:
    """The ``.mat`` text of a match snapshot; ``started_at`` (Unix time) dates it when the
    snapshot does not (a match record keeps its start beside the snapshot).

    :raises SnapshotError: the data is not a version 1 snapshot.
    """
    transcript = transcript_from_snapshot(snapshot, site=site)
    if transcript.started_at is None and started_at is not None:
        transcript = dataclasses.replace(transcript, started_at=started_at)
    return format_mat(transcript)


def format_mat(transcript: MatchTranscript) -> str:
    """The whole ``.mat`` text (module docstring), ``\\n`` line ends."""
    lines: list[str] = []
    tags: list[tuple[str, str]] = []
    if transcript.site:
        tags.append(("Site", transcript.site))
    if transcript.started_at is not None:
        date = dt.datetime.fromtimestamp(transcript.started_at, dt.UTC)
        tags.append(("EventDate", date.strftime("%Y.%m.%d")))
    if transcript.rules is not None:
        tags += _rule_tags(transcript.rules)
    tags += transcript.tags
    for key, value in tags:
        lines.append(f'; [{key} "{_tag_value(value)}"]')
    if tags:
        lines.append("")
    lines += [f" {transcript.length} point match", ""]
    for index, game in enumerate(transcript.games, start=1):
        lines += _game_lines(transcript, index, game)
        lines.append("")
    return "".join(f"{line}\n" for line in lines)


def format_mat_move(move: Move, *, hit: bool = False) -> str:
    """One checker's move in the mover's own numbers: ``8/5``, ``25/21``, ``6/0``, ``9/6*``
    (unlike :func:`backgammon.notation.format_move`, FIBS's absolute ``13-7``)."""
    return f"{move.src}/{move.dst}{'*' if hit else ''}"


def format_play(roll: Roll, moves: Sequence[Move], hits: Iterable[int] = ()) -> str:
    """One turn: ``64: 24/18 13/9*``; ``63:`` when nothing could be played."""
    marked = set(hits)
    texts = []
    for move in moves:
        # An opposing blot on a point is hit by the first checker that lands there.
        hit = move.dst in marked
        marked.discard(move.dst)
        texts.append(format_mat_move(move, hit=hit))
    return " ".join([f"{roll.high}{roll.low}:", *texts])


# -- one game ------------------------------------------------------------------------------


@dataclass
class _Layout:
    """Numbered two-column lines, filled left to right (module docstring)."""

    lines: list[str] = field(default_factory=list)
    number: int = 0
    left: str | None = None
    right: str | None = None
    numbered: bool = True
    """Whether the line being filled shows its number (a ``Wins`` line may not)."""
    padded: bool = False
    """Pad the first player's entry to full width even with nothing after it."""

    def add(self, player: Player, entry: str, *, numbered: bool = True, cube: bool = False) -> None:
        """Place ``player``'s entry; ``cube`` marks a cube action (gnubg pads those)."""
        if player == 1 and self.left is not None and self.right is None:
            self.right = entry
            return
        self.flush()
        if numbered:
            self.number += 1
        self.left, self.right = (entry, None) if player == 0 else ("", entry)
        self.numbered = numbered
        self.padded = cube and player == 0

    def flush(self) -> None:
        if self.left is None:
            return
        prefix = f"{self.number:3d}) " if self.numbered else " " * NUMBER_WIDTH
        if self.right is not None:
            line = prefix + self.left.ljust(ENTRY_WIDTH - 1) + " " + self.right
        elif self.padded:
            # gnubg 1.07 writes a lone cube action padded to the second column, and its
            # importer needs that: without it a ``Wins`` that follows a lone ``Takes``
            # of the first player gains a phantom double.
            line = prefix + self.left.ljust(ENTRY_WIDTH)
        else:
            line = prefix + self.left
        self.lines.append(line)
        self.left = self.right = None


def _game_lines(transcript: MatchTranscript, index: int, events: Sequence[Event]) -> list[str]:
    """`` Game <n>``, the names with the score, and the game's entries."""
    started = game_start(events)
    score = started.score if started is not None else (0, 0)
    number = started.game if started is not None else index
    first, second = transcript.players
    names = f" {first} : {score[0]}".ljust(NAMES_WIDTH - 1) + " " + f"{second} : {score[1]}"
    layout = _Layout()
    turns = list(game_turns(events))
    implied_take = False
    for position, turn in enumerate(turns):
        match turn:
            case Played(player=player, roll=roll, moves=moves, hits=hits):
                layout.add(player, format_play(roll, moves, hits))
            case Unplayed(player=player, roll=roll):
                ends = position + 1 < len(turns) and isinstance(turns[position + 1], Won)
                if not ends or layout.number == 0:
                    # A roll not yet played: the game stopped in the middle. Before the
                    # win only an opening roll is kept: importers need a roll to see the
                    # game begin (gnubg records it as dice set, not a move); later
                    # unplayed dice are left out, as gnubg plays a forced one.
                    layout.add(player, format_play(roll, ()))
            case Cube(player=player, action=CubeAction.DOUBLE, value=value):
                layout.add(player, f" Doubles => {value}", cube=True)
            case Cube(player=player, action=CubeAction.REDOUBLE, value=value):
                word = _redouble_word(turns[position + 1 :])
                implied_take = word == "Beavers"
                if word is not None:
                    layout.add(player, f" {word} => {value}", cube=True)
            case Cube(player=player, action=CubeAction.TAKE, redoubled=redoubled):
                if not (redoubled and implied_take):
                    layout.add(player, " Takes", cube=True)
                implied_take = False
            case Cube(player=player, action=CubeAction.DROP):
                layout.add(player, " Drops", cube=True)
            case Won(player=player, points=points, match=ended):
                text = f" Wins {points} point{'' if points == 1 else 's'}"
                if ended and transcript.length:
                    text += " and the match"
                layout.add(player, text, numbered=False)
    layout.flush()
    return [f" Game {number}", names, *layout.lines]


def _redouble_word(rest: Sequence[Turn]) -> str | None:
    """How to write an instant redouble, given the game's entries after it.

    * ``Beavers``: taken and then a roll was played, or the game is unfinished. The
      take is implied, as gnubg writes it: gnubg's importer adds it at the next roll.
    * ``Raccoons``, the answer written out: dropped, or taken and the game ended by a
      resignation before another roll. After ``Beavers`` gnubg's importer keeps waiting
      for a roll to take on (a flag neither a drop nor a game's end clears), loses every
      later roll of the file and warns ``Take record found but doesn't follow a double``.
    * None, left out: still unanswered when a resignation ended the game. The
      resignation is worth the cube before the offers (docs/rules.md), while gnubg
      counts a beaver as a take and would value it at the doubled cube.
    """
    taken = False
    for turn in rest:
        match turn:
            case Cube(action=CubeAction.TAKE):
                taken = True
            case Played():
                return "Beavers" if taken else "Raccoons"
            case Cube(action=CubeAction.DROP):
                return "Raccoons"
            case Won():
                return "Raccoons" if taken else None
    return "Beavers"


def _rule_tags(rules: MatchOptions) -> list[tuple[str, str]]:
    """The rules as the tags eXtreme Gammon writes (gnubg's importer skips them).

    They tell a reader what an importer cannot know: gnubg assumes the Crawford rule in
    match play and its own ``set jacoby`` setting for money sessions (docs/records.md).
    """

    def on(flag: bool) -> str:
        return "On" if flag else "Off"

    if rules.length:
        tags = [("Crawford", on(rules.crawford))]
    else:
        tags = [("Jacoby", on(rules.jacoby)), ("Beaver", on(rules.instant_redoubles != 0))]
    if rules.cube_limit is not None:
        tags.append(("CubeLimit", str(rules.cube_limit)))
    return tags


def _tag_value(value: str) -> str:
    """A tag value on one line without double quotes (they would end the value)."""
    return " ".join(value.replace('"', "'").split())
