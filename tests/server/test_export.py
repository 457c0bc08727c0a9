"""The Jellyfish ``.mat`` export (issue 5 item 6; protocol/mat_export.py, docs/records.md).

* The formatter on hand-built records: every entry kind, column for column as GNU
  Backgammon 1.07 writes it (``export match mat``).
* Seeded matches played through the rules core with random cube actions and
  resignations, imported into GNU Backgammon: no warning, and gnubg's record of every
  game (rolls, moves, cube actions, resignations, winner, points) equals ours.
* A whole 3-point match over real sockets, exported with the ``export`` command and
  with ``python -m server export``, imported into GNU Backgammon with the same final
  score; other people's matches are refused.

The gnubg parts are skipped only when ``/usr/games/gnubg`` is missing (CI installs it).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backgammon.dice import Roll, ScriptedDice, SeededDice
from backgammon.events import (
    CheckersMoved,
    CubeDropped,
    CubeOffered,
    CubeRedoubled,
    CubeTaken,
    DiceRolled,
    Event,
    GameEnd,
    GameStarted,
    GameWon,
    MatchWon,
    OpeningRoll,
    ResignationAccepted,
    ResignationOffered,
    ResignationRejected,
    TurnPassed,
    WinKind,
)
from backgammon.match import Action, Match, MatchOptions, Phase
from backgammon.moves import Move
from backgammon.snapshot import match_to_json
from protocol import replies
from protocol.mat_export import (
    MatchTranscript,
    format_mat,
    snapshot_to_mat,
    transcript_from_snapshot,
)
from server.app import App
from server.config import Settings
from tests.conftest import GNUBG_MISSING

from .conftest import TIMEOUT, Connect, ScriptedClient, clip_login
from .match_driver import Player, play_out
from .sessions import ready_pair

ROOT = Path(__file__).resolve().parents[2]
GNUBG = Path("/usr/games/gnubg")
START = 1_700_000_000
"""2023-11-14 UTC."""
WARNING = re.compile(
    r"warning|error|invalid|illegal|unrecognised|doesn't follow|no game in progress"
    r"|not a valid",
    re.IGNORECASE,
)
"""What gnubg prints when a .mat line does not fit (learnt by feeding it broken files)."""

needs_gnubg = pytest.mark.skipif(not GNUBG.exists(), reason=GNUBG_MISSING)


def mv(*pairs: tuple[int, int]) -> tuple[Move, ...]:
    return tuple(Move(s, d) for s, d in pairs)


# -- the formatter on hand-built records ----------------------------------------------------

MATCH_GAMES: tuple[tuple[Event, ...], ...] = (
    (
        GameStarted(1, 0, False, (0, 0)),
        OpeningRoll((3, 3), None),
        OpeningRoll((1, 3), 1),
        CheckersMoved(1, mv((8, 5), (6, 5)), ()),
        DiceRolled(0, Roll(6, 4), 2),
        CheckersMoved(0, mv((24, 18), (13, 9)), ()),
        CubeOffered(1, 2),
        CubeTaken(0, 2, False),
        DiceRolled(1, Roll(2, 5), 2),
        CheckersMoved(1, mv((13, 11), (11, 6)), (11,)),
        DiceRolled(0, Roll(6, 6), 0),
        TurnPassed(0),
        DiceRolled(1, Roll(4, 1), 2),
        CheckersMoved(1, mv((4, 0), (1, 0)), ()),
        DiceRolled(0, Roll(3, 5), 2),
        CheckersMoved(0, mv((25, 20), (20, 17)), (20,)),
        DiceRolled(1, Roll(1, 2), 2),
        CheckersMoved(1, mv((6, 4), (5, 4)), ()),
        CubeOffered(0, 4),
        CubeDropped(1, 2),
        GameWon(0, WinKind.SINGLE, GameEnd.DROPPED, 2, (2, 0)),
    ),
    (
        GameStarted(2, 1, True, (2, 0)),
        OpeningRoll((6, 5), 0),
        CheckersMoved(0, mv((24, 18), (18, 13)), ()),
        DiceRolled(1, Roll(3, 2), 2),
        ResignationOffered(1, WinKind.SINGLE, 1),
        ResignationRejected(0),
        CheckersMoved(1, mv((13, 10), (13, 11)), ()),
        DiceRolled(0, Roll(1, 1), 4),
        CheckersMoved(0, mv((6, 5), (6, 5), (8, 7), (8, 7)), ()),
        DiceRolled(1, Roll(2, 1), 2),
        ResignationOffered(1, WinKind.GAMMON, 2),
        ResignationAccepted(0, 2),
        GameWon(0, WinKind.GAMMON, GameEnd.RESIGNED, 2, (4, 0)),
        MatchWon(0, (4, 0)),
    ),
)

MATCH_TEXT = """\
; [Site "fibs-test"]
; [EventDate "2023.11.14"]
; [Crawford "On"]

 3 point match

 Game 1
 alice : 0                      bob : 0
  1)                             31: 8/5 6/5
  2) 64: 24/18 13/9               Doubles => 2
  3)  Takes                      52: 13/11* 11/6
  4) 66:                         41: 4/0 1/0
  5) 53: 25/20* 20/17            21: 6/4 5/4
  6)  Doubles => 4                Drops
      Wins 2 points

 Game 2
 alice : 2                      bob : 0
  1) 65: 24/18 18/13             32: 13/10 13/11
  2) 11: 6/5 6/5 8/7 8/7
      Wins 2 points and the match

"""


def test_a_match_with_every_kind_of_entry() -> None:
    transcript = MatchTranscript(
        ("alice", "bob"),
        3,
        MATCH_GAMES,
        started_at=START,
        site="fibs-test",
        rules=MatchOptions(length=3),
    )
    assert format_mat(transcript) == MATCH_TEXT


MONEY_GAMES: tuple[tuple[Event, ...], ...] = (
    (  # a beaver taken (the take implied), then a beaver dropped
        GameStarted(1, 0, False, (0, 0)),
        OpeningRoll((5, 2), 0),
        CheckersMoved(0, mv((13, 8), (13, 11)), ()),
        CubeOffered(1, 2),
        CubeRedoubled(0, 4, 1),
        CubeTaken(1, 4, True),
        DiceRolled(1, Roll(6, 3), 2),
        CheckersMoved(1, mv((24, 18), (13, 10)), ()),
        DiceRolled(0, Roll(4, 3), 2),
        CheckersMoved(0, mv((13, 9), (13, 10)), ()),
        CubeOffered(1, 8),
        CubeRedoubled(0, 16, 1),
        CubeDropped(1, 8),
        GameWon(0, WinKind.SINGLE, GameEnd.DROPPED, 8, (8, 0)),
    ),
    (  # a take alone on its line (padded), then a resignation with the dice out
        GameStarted(2, 1, False, (8, 0)),
        OpeningRoll((2, 6), 1),
        CheckersMoved(1, mv((24, 18), (13, 11)), ()),
        DiceRolled(0, Roll(3, 1), 2),
        CheckersMoved(0, mv((8, 5), (6, 5)), ()),
        CubeOffered(1, 2),
        CubeTaken(0, 2, False),
        DiceRolled(1, Roll(5, 5), 4),
        ResignationOffered(1, WinKind.SINGLE, 2),
        ResignationAccepted(0, 2),
        GameWon(0, WinKind.SINGLE, GameEnd.RESIGNED, 2, (10, 0)),
    ),
    (  # resigned before the opening roll was played: the roll is written
        GameStarted(3, 0, False, (10, 0)),
        OpeningRoll((4, 1), 0),
        ResignationOffered(1, WinKind.SINGLE, 1),
        ResignationAccepted(0, 1),
        GameWon(0, WinKind.SINGLE, GameEnd.RESIGNED, 1, (11, 0)),
    ),
    (  # a resignation while a beaver waits: the unanswered redouble is left out
        GameStarted(4, 1, False, (11, 0)),
        OpeningRoll((6, 5), 0),
        CheckersMoved(0, mv((24, 18), (18, 13)), ()),
        CubeOffered(1, 2),
        CubeRedoubled(0, 4, 1),
        ResignationOffered(1, WinKind.SINGLE, 1),
        ResignationAccepted(0, 1),
        GameWon(0, WinKind.SINGLE, GameEnd.RESIGNED, 1, (12, 0)),
    ),
    (  # unfinished: the roll not yet played ends the game's lines
        GameStarted(5, 0, False, (12, 0)),
        OpeningRoll((6, 5), 0),
        CheckersMoved(0, mv((24, 18), (18, 13)), ()),
        DiceRolled(1, Roll(3, 3), 4),
    ),
)

MONEY_TEXT = """\
; [EventDate "2023.11.14"]
; [Jacoby "Off"]
; [Beaver "On"]

 0 point match

 Game 1
 alice : 0                      bob : 0
  1) 52: 13/8 13/11               Doubles => 2
  2)  Beavers => 4               63: 24/18 13/10
  3) 43: 13/9 13/10               Doubles => 8
  4)  Raccoons => 16              Drops
      Wins 8 points

 Game 2
 alice : 8                      bob : 0
  1)                             62: 24/18 13/11
  2) 31: 8/5 6/5                  Doubles => 2
  3)  Takes                      \n\
      Wins 2 points

 Game 3
 alice : 10                     bob : 0
  1) 41:
      Wins 1 point

 Game 4
 alice : 11                     bob : 0
  1) 65: 24/18 18/13              Doubles => 2
      Wins 1 point

 Game 5
 alice : 12                     bob : 0
  1) 65: 24/18 18/13             33:

"""


def test_a_money_session_with_beavers_resignations_and_an_unfinished_game() -> None:
    transcript = MatchTranscript(
        ("alice", "bob"),
        0,
        MONEY_GAMES,
        started_at=START,
        rules=MatchOptions(length=0, instant_redoubles=None),
    )
    assert format_mat(transcript) == MONEY_TEXT


def test_the_layout_is_gnubgs() -> None:
    """Columns gnubg's importer relies on: the second player's entry at column 33, a
    cube action one further (it starts with a space), the names line's second name at
    column 32, and a lone cube action of the first player padded to column 33."""
    lines = MONEY_TEXT.splitlines()
    assert lines[lines.index(" Game 1") + 1].index("bob") == 32
    assert lines[lines.index(" Game 2") + 2].index("62:") == 33
    assert lines[lines.index(" Game 1") + 2].index("Doubles") == 34
    [take] = [i for i, line in enumerate(lines) if "Takes" in line]
    assert len(lines[take]) == 33 and lines[take].endswith(" ")
    assert all(not line.endswith(" ") for i, line in enumerate(lines) if i != take)


def test_a_snapshot_round_trips_through_the_transcript() -> None:
    match = _random_match(7, MatchOptions(length=3))
    snapshot = _snapshot(match)
    transcript = transcript_from_snapshot(snapshot)
    assert transcript.players == ("alice", "bob")
    assert transcript.length == 3
    assert list(transcript.games) == [tuple(g) for g in match.history]
    assert snapshot_to_mat(snapshot) == snapshot_to_mat(json.loads(snapshot))


# -- seeded matches through the core, imported into gnubg -----------------------------------


def _random_match(seed: int, options: MatchOptions, *, games: int = 4) -> Match:
    """A match with random plays, doubles, beavers, takes, drops and resignations."""
    rng = random.Random(seed)
    match = Match(options, SeededDice(seed), o_player=rng.randint(0, 1))
    match.start_game()
    for _ in range(20_000):
        if match.phase is Phase.MATCH_OVER:
            break
        if match.phase is Phase.GAME_OVER:
            if not options.length and len(match.history) >= games:
                break
            match.start_game()
            continue
        player = match.to_act
        assert player is not None
        allowed = match.allowed(player)
        if match.resignation is not None:
            if rng.random() < 0.7:
                match.accept_resignation(player)
            else:
                match.reject_resignation(player)
        elif Action.RESIGN in allowed and rng.random() < 0.03:
            match.resign(player, rng.choice(list(WinKind)))
        elif match.phase is Phase.DOUBLED:
            assert match.offer is not None
            r = rng.random()
            if Action.REDOUBLE in allowed and match.offer.value < 64 and r < 0.3:
                match.redouble(player)
            elif r < 0.75:
                match.take(player)
            else:
                match.drop(player)
        elif match.phase is Phase.TURN:
            # gnubg 1.07 crashes importing a cube of 512; keep the cubes sane.
            if Action.DOUBLE in allowed and match.cube < 64 and rng.random() < 0.08:
                match.double(player)
            else:
                match.roll(player)
        else:
            match.move(player, rng.choice(match.legal_plays()).moves)
    return match


def _snapshot(match: Match) -> str:
    return json.dumps(
        {
            "version": 1,
            "players": ["alice", "bob"],
            "started_at": START,
            "match": match_to_json(match),
        }
    )


def _net(moves: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """What a turn changed for the mover: checkers gained or lost per point (the same
    for every order and split of the same play)."""
    change: Counter[int] = Counter()
    for src, dst in moves:
        change[src] -= 1
        change[dst] += 1
    return sorted((point, n) for point, n in change.items() if n)


GameView = tuple[tuple[int, int], list[tuple[Any, ...]], tuple[int, int] | None]
"""A game as both sides are compared: the score at its start, its actions, and the
winner with the points won."""


def expected_games(games: Sequence[Sequence[Event]]) -> list[GameView]:
    """Our record as gnubg should have imported it (docs/records.md: rejected
    resignations and unplayed dice are not in the format; a redouble still unanswered
    when a resignation ends the game is left out)."""
    out: list[GameView] = []
    for events in games:
        started = events[0]
        assert isinstance(started, GameStarted)
        actions: list[tuple[Any, ...]] = []
        pending: tuple[int, list[int]] | None = None
        winner: tuple[int, int] | None = None
        for i, event in enumerate(events):
            if isinstance(event, OpeningRoll) and event.starter is not None:
                pending = (event.starter, sorted(event.dice))
            elif isinstance(event, DiceRolled):
                pending = (event.player, sorted(event.roll))
            elif isinstance(event, TurnPassed) and pending is not None:
                actions.append(("move", pending[0], pending[1], []))
                pending = None
            elif isinstance(event, CheckersMoved) and pending is not None:
                actions.append(("move", event.player, pending[1], _net(event.moves)))
                pending = None
            elif isinstance(event, CubeOffered):
                actions.append(("double", event.player))
            elif isinstance(event, CubeRedoubled):
                closing = next(
                    (
                        e
                        for e in events[i + 1 :]
                        if isinstance(e, CubeTaken | CubeDropped | GameWon)
                    ),
                    None,
                )
                if not isinstance(closing, GameWon):
                    actions.append(("double", event.player))
            elif isinstance(event, CubeTaken):
                actions.append(("take", event.player))
            elif isinstance(event, CubeDropped):
                actions.append(("drop", event.player))
            elif isinstance(event, ResignationAccepted):
                if pending is not None and not actions:
                    actions.append(("set", pending[0], pending[1]))
                actions.append(("resign", 1 - event.player))
            elif isinstance(event, GameWon):
                winner = (event.winner, event.points)
        out.append((started.score, actions, winner))
    return out


def gnubg_games(match: dict[str, Any]) -> list[GameView]:
    """gnubg's ``gnubg.match()`` in the same shape (X is the first player, O the second)."""
    side = {"X": 0, "O": 1}
    out: list[GameView] = []
    for game in match["games"]:
        info = game["info"]
        actions: list[tuple[Any, ...]] = []
        for action in game["game"]:
            player = side[action["player"]]
            kind = action["action"]
            if kind == "move":
                actions.append(("move", player, sorted(action["dice"]), _net(action["move"])))
            elif kind in ("double", "take", "drop", "resign"):
                actions.append((kind, player))
            else:
                actions.append((kind, player, sorted(action.get("dice") or [])))
        winner = (side[info["winner"]], info["points-won"]) if info.get("winner") else None
        out.append(((info["score-X"], info["score-O"]), actions, winner))
    return out


@dataclass
class GnubgImport:
    """What gnubg made of some .mat files: its messages and each file's match."""

    messages: list[str]
    matches: dict[str, dict[str, Any]]

    @property
    def warnings(self) -> list[str]:
        return [line for line in self.messages if WARNING.search(line)]


_DUMP = """\
import gnubg, json, sys
gnubg.command("set jacoby %s")
for path in %r:
    print("@@FILE " + path)
    gnubg.command('import mat "%%s"' %% path)
    match = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
    print("@@JSON " + json.dumps({"path": path, "match": match}, default=list))
    sys.stdout.flush()
"""


def gnubg_import(paths: Sequence[Path], tmp_path: Path, *, jacoby: bool = False) -> GnubgImport:
    """Import each file into gnubg (its embedded Python) and return what it made of them.

    ``jacoby``: gnubg takes the Jacoby rule of money sessions from its own setting (the
    file cannot say it); FIBS has none.
    """
    script = tmp_path / "dump_matches.py"
    script.write_text(_DUMP % ("on" if jacoby else "off", [str(p) for p in paths]))
    done = subprocess.run(
        [str(GNUBG), "-t", "-q", "-p", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    messages: list[str] = []
    matches: dict[str, dict[str, Any]] = {}
    for line in (done.stdout + done.stderr).splitlines():
        if line.startswith("@@JSON "):
            data = json.loads(line[len("@@JSON ") :])
            matches[data["path"]] = data["match"]
        else:
            messages.append(line)
    return GnubgImport(messages, matches)


@needs_gnubg
@pytest.mark.parametrize(
    "options",
    [
        MatchOptions(length=1),
        MatchOptions(length=3),
        MatchOptions(length=7),
        MatchOptions(length=0, instant_redoubles=None),
        MatchOptions(length=0, instant_redoubles=2),
    ],
    ids=["1-point", "3-point", "7-point", "money-beavers", "money-two-redoubles"],
)
def test_seeded_core_matches_import_into_gnubg(options: MatchOptions, tmp_path: Path) -> None:
    matches: dict[str, Match] = {}
    for seed in range(12):
        match = _random_match(1000 * options.length + seed, options)
        file = tmp_path / f"match{seed}.mat"
        file.write_text(snapshot_to_mat(_snapshot(match)))
        matches[str(file)] = match
    result = gnubg_import([Path(p) for p in matches], tmp_path)
    assert not result.warnings, result.warnings
    assert set(result.matches) == set(matches)
    for path, match in matches.items():
        games = match.history + ([match.record] if match.record else [])
        assert gnubg_games(result.matches[path]) == expected_games(games), path
        info = result.matches[path]["match-info"]
        assert (info["X"]["name"], info["O"]["name"]) == ("alice", "bob")
        assert info["match-length"] == options.length


def _scripted(options: MatchOptions, dice: list[int], steps: str) -> Match:
    """A match played by a script of actions, each by the player who must act: ``start``,
    ``roll``, ``move`` (the first legal play), ``double``, ``take``, ``drop``, ``beaver``,
    ``resign-n``/``-g``/``-b``, ``accept``."""
    match = Match(options, ScriptedDice(dice))
    kinds = {"n": WinKind.SINGLE, "g": WinKind.GAMMON, "b": WinKind.BACKGAMMON}
    for step in steps.split():
        player = match.to_act
        if step == "start":
            match.start_game()
        elif step == "move":
            assert player is not None
            match.move(player, match.legal_plays()[0].moves)
        elif step.startswith("resign-"):
            assert player is not None
            match.resign(player, kinds[step[-1]])
        else:
            assert player is not None
            action = {"beaver": match.redouble, "accept": match.accept_resignation}.get(step)
            (action or getattr(match, step))(player)
    return match


SCRIPTS = {
    # gnubg 1.07 misreads a lone "Takes" of the first player unless it is padded.
    "resign after a take": (
        MatchOptions(length=3),
        [1, 3, 6, 4, 5, 2],
        "start move roll move double take resign-g accept",
    ),
    # After a dropped "Beavers" gnubg would lose every later roll.
    "dropped beaver, next game": (
        MatchOptions(length=0, instant_redoubles=None),
        [5, 2, 4, 1, 6, 5],
        "start move double beaver drop start move roll move",
    ),
    # A taken beaver, then the doubler resigns with the dice out.
    "taken beaver, then a resignation": (
        MatchOptions(length=0, instant_redoubles=None),
        [5, 2, 6, 3, 4, 1],
        "start move double beaver take resign-n accept start move",
    ),
    # gnubg needs the opening roll to see the game begin.
    "resigned in the opening": (MatchOptions(length=5), [6, 1], "start resign-b accept"),
}


@needs_gnubg
def test_the_cases_gnubg_is_particular_about(tmp_path: Path) -> None:
    matches: dict[str, Match] = {}
    for number, (options, dice, steps) in enumerate(SCRIPTS.values()):
        match = _scripted(options, dice, steps)
        file = tmp_path / f"case{number}.mat"
        file.write_text(snapshot_to_mat(_snapshot(match)))
        matches[str(file)] = match
    result = gnubg_import([Path(p) for p in matches], tmp_path)
    assert not result.warnings, result.warnings
    for name, (path, match) in zip(SCRIPTS, matches.items(), strict=True):
        games = match.history + ([match.record] if match.record else [])
        assert gnubg_games(result.matches[path]) == expected_games(games), name


@needs_gnubg
def test_the_jacoby_rule_needs_gnubgs_setting(tmp_path: Path) -> None:
    """Money play under the Jacoby rule imports the same with gnubg's ``set jacoby on``."""
    options = MatchOptions(length=0, jacoby=True, instant_redoubles=None)
    matches: dict[str, Match] = {}
    for seed in range(6):
        match = _random_match(seed, options)
        file = tmp_path / f"jacoby{seed}.mat"
        file.write_text(snapshot_to_mat(_snapshot(match)))
        matches[str(file)] = match
    result = gnubg_import([Path(p) for p in matches], tmp_path, jacoby=True)
    assert not result.warnings, result.warnings
    for path, match in matches.items():
        assert gnubg_games(result.matches[path]) == expected_games(match.history), path


# -- a whole match over the wire, exported in the server and from the command line ----------


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def _play_three_point_match(
    connect: Connect, app: App
) -> tuple[ScriptedClient, ScriptedClient]:
    app.dice = lambda: SeededDice(5)
    app.coin = lambda: 1
    alice, bob = await ready_pair(connect, app)
    await alice.send("invite bob 3")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    return alice, bob


async def _mat_lines(client: ScriptedClient, match_id: int) -> list[str]:
    await client.send(f"export {match_id}")
    await client.expect(replies.export_begin(match_id))
    lines: list[str] = []
    while (line := await client.line(TIMEOUT)) != replies.export_end(match_id):
        lines.append(line)
    return lines


async def test_export_command_and_cli_of_a_three_point_match(
    connect: Connect, app: App, tmp_path: Path
) -> None:
    alice, bob = await _play_three_point_match(connect, app)
    [record] = await app.db.list_match_records("alice")
    assert record.match_length == 3 and max(record.score1, record.score2) >= 3

    # In the server: the list, then the .mat text, for both players.
    await alice.send("export")
    await alice.expect(replies.EXPORT_HEADER)
    row = await alice.line()
    assert row.split()[:2] == [str(record.id), "bob"]
    text = snapshot_to_mat(record.moves, site=app.settings.server_name)
    assert await _mat_lines(alice, record.id) == text.splitlines()
    assert await _mat_lines(bob, record.id) == text.splitlines()
    assert " 3 point match" in text.splitlines()
    assert text.splitlines()[-2].endswith(" and the match")

    # Others' matches and bad ids are refused.
    carol = await clip_login(connect, app, "carol")
    await carol.send(f"export {record.id}")
    await carol.expect(replies.export_not_found(record.id))
    await carol.send("export")
    await carol.expect(replies.EXPORT_NONE)
    await alice.send(f"export {record.id + 1}")
    await alice.expect(replies.export_not_found(record.id + 1))
    await alice.send("export x")
    await alice.expect(replies.EXPORT_USAGE)
    await alice.send("export 1 2")
    await alice.expect(replies.EXPORT_USAGE)

    # The command line: the same text, to a file and to stdout (it reads the SQLite
    # file; the PostgreSQL run checks the rest).
    out = tmp_path / "match.mat"
    if app.settings.database.startswith("sqlite"):
        config = tmp_path / "empty.conf"
        config.write_text("")
        command = [sys.executable, "-m", "server", "export", str(record.id)]
        command += ["--config", str(config), "--database", app.settings.database]
        done = await asyncio.to_thread(_run, [*command, "-o", str(out)])
        assert done.returncode == 0, done.stderr
        assert out.read_text() == text
        done = await asyncio.to_thread(_run, command)
        assert done.returncode == 0 and done.stdout == text
        missing = [sys.executable, "-m", "server", "export", "999", "--config", str(config)]
        done = await asyncio.to_thread(_run, [*missing, "--database", app.settings.database])
        assert done.returncode == 1 and "no finished match 999" in done.stderr
    else:
        out.write_text(text)

    # GNU Backgammon: no warning, and the same final score.
    if not GNUBG.exists():
        pytest.skip(GNUBG_MISSING)
    commands = f'import mat "{out}"\nshow score\n'
    shown = await asyncio.to_thread(
        subprocess.run,
        [str(GNUBG), "-t", "-q"],
        input=commands,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    output = shown.stdout + shown.stderr
    assert not [line for line in output.splitlines() if WARNING.search(line)], output
    score = re.search(r"The score \(after (\d+) games?\) is: alice (\d+), bob (\d+)", output)
    assert score is not None, output
    games = len(transcript_from_snapshot(record.moves).games)
    assert (int(score[1]), int(score[2]), int(score[3])) == (games, record.score1, record.score2)
    result = await asyncio.to_thread(gnubg_import, [out], tmp_path)
    assert not result.warnings, result.warnings
    imported = gnubg_games(result.matches[str(out)])
    assert imported == expected_games(transcript_from_snapshot(record.moves).games)


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )


@pytest.mark.parametrize("match_id", [2**31 - 1, 2**31, 2**63 - 1, 2**63, 10**30])
async def test_an_id_past_what_the_database_holds_is_not_found(
    connect: Connect, app: App, match_id: int
) -> None:
    """Issue 18: ids of 2**63 and more (SQLite) or 2**31 and more (PostgreSQL) answered
    "internal error"; no record has such an id."""
    alice = await clip_login(connect, app, "alice")
    await alice.send(f"export {match_id}")
    assert await alice.line() == replies.export_not_found(match_id)
    await alice.send("export")
    assert await alice.line() == replies.EXPORT_NONE
