"""The analyser against GNU Backgammon itself (issue 29 items 1 and 5).

* gnubg's own totals: the equity lost per decision, as read by
  :mod:`protocol.analysis`, adds up to the totals of gnubg's statistics, for each player,
  in match play (the cube converted with gnubg's ``mwc2eq``) and in money play;
* a differential test: on reference positions taken from an analysed match, a fresh gnubg
  asked for a ``hint`` at the same depth gives the stored best play and its equity;
* gnubg playing itself at 0-ply, analysed at 0-ply, makes no checker error at all and
  next to none at the cube.

Skipped only when ``/usr/games/gnubg`` is missing (the CI installs the Debian package).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from backgammon.dice import SeededDice
from backgammon.match import Match, MatchOptions, Phase
from backgammon.snapshot import match_to_json
from protocol.analysis import Decision, MatchAnalysis
from protocol.mat_export import snapshot_to_mat
from server.analysis.gnubg import analyse_mat
from tests.server.random_match import random_action

GNUBG = Path("/usr/games/gnubg")
pytestmark = pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg")


def random_mat(seed: int, options: MatchOptions, games: int = 3) -> str:
    """A seeded match of random plays and cube actions, as the server would export it."""
    rng = random.Random(seed)
    match = Match(options, SeededDice(seed), o_player=0)
    seen: Counter[str] = Counter()
    while match.phase is not Phase.MATCH_OVER:
        if not options.length and len(match.history) >= games and match.to_act is None:
            break
        # no resignations or instant redoubles here: keep to plain plays and the cube
        if match.resignation is not None:
            match.reject_resignation(match.to_act or 0)
            continue
        if not random_action(match, rng, 0.05, seen):
            break
        if match.resignation is not None:
            player = match.to_act
            assert player is not None
            match.accept_resignation(player)
        if match.cube >= 64 and match.phase is Phase.DOUBLED and match.to_act is not None:
            match.drop(match.to_act)
    data = {"version": 1, "players": ["alice", "bob"], "started_at": 1_700_000_000}
    data["match"] = match_to_json(match)
    return snapshot_to_mat(json.dumps(data))


async def analyse(mat: str, ply: int = 0) -> MatchAnalysis:
    return await analyse_mat(mat, ply=ply, binary=str(GNUBG), timeout=300)


@pytest.mark.parametrize("options", [MatchOptions(length=5), MatchOptions(length=0)])
async def test_each_decision_adds_up_to_gnubgs_own_totals(options: MatchOptions) -> None:
    analysis = await analyse(random_mat(3, options))
    assert analysis.games
    for player, stats in enumerate(analysis.players):
        mine = [d for d in analysis.decisions() if d.player == player]
        checker = sum(d.loss for d in mine if d.kind == "move")
        cube = sum(d.loss for d in mine if d.kind != "move")
        assert checker == pytest.approx(stats.checker_loss, abs=1e-4)
        assert cube == pytest.approx(stats.cube_loss, abs=1e-4)
        assert stats.rate > 20  # random play is terrible
        marked = stats.doubtful + stats.errors + stats.blunders
        assert marked == sum(1 for d in mine if d.mark)
        # gnubg 1.07's thresholds: 0.03, 0.06, 0.12
        assert all(d.mark == "blunder" for d in mine if d.loss > 0.1201)
        assert all(d.mark == "error" for d in mine if 0.0601 < d.loss < 0.1199)
        assert all(d.mark == "doubtful" for d in mine if 0.0301 < d.loss < 0.0599)
        assert not any(d.mark for d in mine if d.loss < 0.0299)
    games = analysis.games
    for player in (0, 1):
        assert sum(g.players[player].checker_decisions for g in games) == (
            analysis.players[player].checker_decisions
        )


# -- the differential test: reference positions asked of gnubg again ------------------------

_POSITIONS = """\
import gnubg, json
gnubg.command('import mat "%s"')
match = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)
found = []
gnubg.navigate()
for number, game in enumerate(match["games"]):
    if number:
        gnubg.navigate(game=1)
    at = turn = 0
    for index, record in enumerate(game["game"]):
        if record["action"] != "move":
            continue
        turn += 1
        gnubg.navigate(next=index - at)
        at = index
        found.append([number + 1, turn, gnubg.positionid(), gnubg.matchid()])
print("@@" + json.dumps(found))
"""

_HINT = re.compile(r"^\s+1\. Cubeful (\d)-ply\s+(.*?)\s+Eq\.: ([-+]?\d+\.\d+)")
_POSITION_ID = re.compile(r"Position ID: (\S+)")
_MATCH_ID = re.compile(r"Match ID\s+: (\S+)")


def _net(play: str) -> Counter[str]:
    """What a play does to the mover's points, whatever gnubg's notation groups:
    ``13/11 13/8``, ``13/6``, ``6/4(2)``, ``24/18*/16``, ``bar/20``, ``6/off``."""
    change: Counter[str] = Counter()
    for word in play.split():
        times = 1
        if m := re.fullmatch(r"(.*)\((\d)\)", word):
            word, times = m.group(1), int(m.group(2))
        points = word.replace("*", "").split("/")
        change[points[0]] -= times
        change[points[-1]] += times
    return Counter({point: n for point, n in change.items() if n})


def _run(args: list[str], stdin: str = "") -> str:
    done = subprocess.run(
        [str(GNUBG), "-t", "-q", "-r", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout


def gnubg_hints(
    positions: list[tuple[str, str]], ply: int
) -> dict[tuple[str, str], tuple[str, float]]:
    """A fresh gnubg's best play and its equity for each (position id, match id)."""
    commands = [
        f"set evaluation chequerplay evaluation plies {ply}",
        f"set evaluation cubedecision evaluation plies {ply}",
        "new match 1",
    ]
    for position, match_id in positions:
        commands += [f"set matchid {match_id}", f"set board {position}", "hint"]
    hints: dict[tuple[str, str], tuple[str, float]] = {}
    position = match_id = ""
    for line in _run([], "\n".join(commands) + "\n").splitlines():
        if m := _POSITION_ID.search(line):
            position = m.group(1)
        elif m := _MATCH_ID.search(line):
            match_id = m.group(1)
        elif (m := _HINT.match(line)) and int(m.group(1)) == ply:
            hints.setdefault((position, match_id), (m.group(2), float(m.group(3))))
    return hints


@pytest.mark.parametrize("ply", [0, 2])
async def test_stored_best_plays_and_equities_are_gnubgs(ply: int, tmp_path: Path) -> None:
    mat = random_mat(11, MatchOptions(length=3), games=1)
    analysis = await analyse(mat, ply)
    (tmp_path / "m.mat").write_text(mat)
    (tmp_path / "p.py").write_text(_POSITIONS % (tmp_path / "m.mat"))
    out = _run(["-p", str(tmp_path / "p.py")])
    found = json.loads(next(line[2:] for line in out.splitlines() if line.startswith("@@")))
    where = {(g, t): (p, m) for g, t, p, m in found}
    checked: list[Decision] = [d for d in analysis.decisions() if d.kind == "move"]
    checked = checked[:: max(1, len(checked) // (25 if ply == 0 else 6))]
    hints = gnubg_hints([where[(d.game, d.move)] for d in checked], ply)
    assert len(hints) == len({where[(d.game, d.move)] for d in checked})
    other_best = []
    for decision in checked:
        best, equity = hints[where[(decision.game, decision.move)]]
        assert decision.equity == pytest.approx(equity, abs=0.0006), decision
        if _net(best) != _net(decision.best):
            other_best.append((decision, best))
    # the same best play, but where two plays tie (then both have the equity checked above)
    assert len(other_best) <= len(checked) // 10, other_best


async def test_gnubg_playing_itself_makes_next_to_no_errors(tmp_path: Path) -> None:
    script = tmp_path / "self.py"
    out = tmp_path / "self.mat"
    script.write_text(
        "import gnubg\n"
        "for c in ['set rng mersenne', 'set seed 5', 'set player 0 gnubg',\n"
        "          'set player 1 gnubg', 'set player 0 name alice', 'set player 1 name bob',\n"
        "          'set player 0 chequerplay evaluation plies 0',\n"
        "          'set player 1 chequerplay evaluation plies 0',\n"
        "          'set player 0 cubedecision evaluation plies 0',\n"
        "          'set player 1 cubedecision evaluation plies 0', 'new match 3']:\n"
        "    gnubg.command(c)\n"
        "for _ in range(3000):\n"
        "    if gnubg.match(analysis=0)['match-info'].get('result'):\n"
        "        break\n"
        "    gnubg.command('play')\n"
        f"gnubg.command('export match mat \"{out}\"')\n"
    )
    _run(["-p", str(script)])
    analysis = await analyse(out.read_text())
    for stats in analysis.players:
        assert stats.checker_decisions > 10
        assert stats.checker_loss == 0
        assert stats.rate < 1.0
        assert stats.blunders == stats.errors == 0
