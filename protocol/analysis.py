"""A finished match as GNU Backgammon analysed it: read from gnubg's data, stored, read back.

GNU Backgammon (Debian's ``gnubg``) analyses a match the server exports as ``.mat``
(:mod:`protocol.mat_export`); the server's analyser (:mod:`server.analysis.gnubg`) runs
it and hands over the dictionary of gnubg's own ``gnubg.match(analysis=1,
statistics=1)``, with each analysed cube decision's no-double and double/take equities
converted by gnubg to normalised money equity (``nd-eq``, ``dt-eq``, gnubg's
``mwc2eq`` at that decision's score and cube). This module only reads that data: no
evaluation of its own (docs/analysis.md).

Every figure is gnubg's, in its units: equity normalised to a 1-cube money game (EMG).

* a **checker play** loses the equity between gnubg's best play and the one made (the
  move list's ``score``); it is *forced* when it was the only legal play;
* a **cube decision** is judged as gnubg's analysis does it (``analysis.c``): with ND
  (no double), DT (double, take) and DP (double, pass, always +1), the best action's
  equity is ``max(ND, min(DT, DP))``; not doubling loses ``best - ND``, doubling loses
  ``best - min(DT, DP)``, a take loses ``DT - DP`` when positive, a pass ``DP - DT``;
  an instant redouble (beaver) and its answer are not judged;
* each decision carries gnubg's mark: *doubtful*, *error* (gnubg's "bad") or *blunder*
  ("very bad"), gnubg's thresholds of 0.03, 0.06 and 0.12 (``show analysis`` in gnubg 1.07);
* per game and for the match, each player's **rate** is gnubg's error rate (mEMG) halved:
  the equity lost per non-forced decision (unforced checker plays and close cube
  decisions, as gnubg counts them) times 500, the scale of the "PR" players quote;
  **luck** is gnubg's luck of the dice (EMG, the sum over the player's rolls).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backgammon.errors import SnapshotError

DP = 1.0
"""Double, pass: the doubler wins the cube's value, +1 in normalised equity."""
RATE_SCALE = 500.0
"""Mean equity lost per decision times this is the rate (gnubg's mEMG is x1000)."""
MARKS = {"doubtful": "doubtful", "bad": "error", "very bad": "blunder"}
"""gnubg's skill marks to ours (its thresholds: 0.03, 0.06, 0.12 EMG lost)."""
MARK_SIGNS = {"": "", "doubtful": "?!", "error": "?", "blunder": "??"}
"""How a mark is written after a play (the chess convention gnubg's GUI uses)."""


CUBE_ERRORS = (
    "missed-double-below-cp",
    "missed-double-above-cp",
    "wrong-double-below-dp",
    "wrong-double-above-tg",
    "wrong-take",
    "wrong-drop",
)
"""gnubg's kinds of cube error: their sum is a player's equity lost at the cube (its
``error-skill`` of the cube is that sum per close decision)."""


class AnalysisError(ValueError):
    """gnubg's data is not what was expected (a bug or a gnubg we do not know)."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One judged decision of one player."""

    game: int
    """The game's number in the match, from 1."""
    move: int
    """The turn's number in the game, from 1 (both players' turns counted; a cube
    action belongs to the turn it comes before)."""
    player: int
    """0: the match's first player (who invited), 1: the second."""
    kind: str
    """``move`` (a checker play), ``no double``, ``double``, ``take`` or ``pass``."""
    played: str
    """The play made (``24/23 13/11``; ``bar``, ``off``), or the cube action."""
    best: str
    """gnubg's best play or cube action."""
    loss: float
    """Equity lost (EMG, 0 or more)."""
    equity: float
    """The equity of gnubg's best choice for the player deciding (EMG)."""
    mark: str
    """``""``, ``doubtful``, ``error`` or ``blunder`` (gnubg's)."""


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One player's figures over a game or the match (gnubg's statistics)."""

    checker_decisions: int
    """Unforced checker plays."""
    cube_decisions: int
    """Close cube decisions (gnubg's count: the ones that matter)."""
    checker_loss: float
    cube_loss: float
    doubtful: int
    errors: int
    blunders: int
    luck: float
    """The luck of the dice, EMG: positive is lucky."""

    @property
    def decisions(self) -> int:
        return self.checker_decisions + self.cube_decisions

    @property
    def rate(self) -> float:
        """Equity lost per non-forced decision x500 (0 with no decision)."""
        if not self.decisions:
            return 0.0
        return (self.checker_loss + self.cube_loss) / self.decisions * RATE_SCALE


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """One game: both players' figures and the judged decisions, in order."""

    players: tuple[PlayerStats, PlayerStats]
    decisions: tuple[Decision, ...]


@dataclass(frozen=True, slots=True)
class MatchAnalysis:
    """A whole match as gnubg judged it."""

    ply: int
    """gnubg's evaluation depth (0: its neural net alone, 2: two plies ahead)."""
    players: tuple[PlayerStats, PlayerStats]
    games: tuple[GameAnalysis, ...]

    def decisions(self) -> tuple[Decision, ...]:
        return tuple(d for game in self.games for d in game.decisions)

    def marked(self, mark: str) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions() if d.mark == mark)


# -- gnubg's data to ours -------------------------------------------------------------------


def format_gnubg_play(moves: Sequence[Sequence[int]]) -> str:
    """gnubg's move tuple in the mover's own numbers (``[[24, 23], [13, 11]]``) as
    ``24/23 13/11``; ``bar`` and ``off`` for 25 and 0 (a roll not played: ``-``)."""
    parts = []
    for src, dst in moves:
        parts.append(f"{'bar' if src == 25 else src}/{'off' if dst <= 0 else dst}")
    return " ".join(parts) if parts else "-"


def from_gnubg(data: Mapping[str, Any], ply: int) -> MatchAnalysis:
    """Our analysis from gnubg's ``match()`` dictionary (with ``nd-eq``/``dt-eq`` added
    to each analysed cube decision). gnubg's X is our first player, O the second.

    :raises AnalysisError: the data lacks what gnubg always gives.
    """
    try:
        games = tuple(_game(number, game) for number, game in enumerate(data["games"], 1))
        totals = data.get("stats") or {}
        players = (_stats(totals.get("X"), games, 0), _stats(totals.get("O"), games, 1))
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise AnalysisError(f"unexpected gnubg data: {exc!r}") from exc
    return MatchAnalysis(ply, players, games)


def _side(player: str) -> int:
    if player not in ("X", "O"):
        raise AnalysisError(f"unknown player {player!r}")
    return 0 if player == "X" else 1


def _mark(record: Mapping[str, Any], key: str = "skill") -> str:
    """gnubg's mark of a record (in its ``analysis``): ``skill``, or ``cube-skill`` for
    the cube decision before a checker play."""
    analysis = record.get("analysis") or {}
    return MARKS.get(str(analysis.get(key, "")), "")


def _game(number: int, game: Mapping[str, Any]) -> GameAnalysis:
    decisions: list[Decision] = []
    turn = 0
    cube: tuple[float, float] | None = None
    """ND and DT of the double waiting for its answer (None: no normal double)."""
    doubled = False
    for record in game["game"]:
        action = record["action"]
        player = _side(record["player"])
        analysis: Mapping[str, Any] = record.get("analysis") or {}
        if action == "move":
            turn += 1
            doubled = False
            cube_mark = _mark(record, "cube-skill")
            decisions.extend(_no_double(number, turn, player, analysis, cube_mark))
            checker = _checker(number, turn, player, record, analysis)
            if checker is not None:
                decisions.append(checker)
        elif action == "double":
            if doubled:  # an instant redouble (beaver): not judged
                cube = None
                continue
            doubled = True
            cube = _nd_dt(analysis)
            if cube is not None:
                nd, dt = cube
                best = max(nd, min(dt, DP))
                loss = max(0.0, best - min(dt, DP))
                decisions.append(
                    Decision(
                        number,
                        turn + 1,
                        player,
                        "double",
                        "double",
                        _best_cube(nd, dt),
                        loss,
                        best,
                        _mark(record),
                    )
                )
        elif action in ("take", "drop"):
            doubled = False
            if cube is not None:
                nd, dt = cube
                take = action == "take"
                loss = max(0.0, (dt - DP) if take else (DP - dt))
                answer = "take" if dt <= DP else "pass"
                decisions.append(
                    Decision(
                        number,
                        turn + 1,
                        player,
                        "take" if take else "pass",
                        "take" if take else "pass",
                        answer,
                        loss,
                        max(-dt, -DP),
                        _mark(record),
                    )
                )
            cube = None
    stats = game.get("stats") or {}
    players = (
        _stats(stats.get("X"), (), 0, decisions),
        _stats(stats.get("O"), (), 1, decisions),
    )
    return GameAnalysis(players, tuple(decisions))


def _nd_dt(analysis: Mapping[str, Any]) -> tuple[float, float] | None:
    if "nd-eq" not in analysis:
        return None
    return float(analysis["nd-eq"]), float(analysis["dt-eq"])


def _best_cube(nd: float, dt: float) -> str:
    if min(dt, DP) > nd:
        return "double, take" if dt <= DP else "double, pass"
    return "no double" if nd <= DP else "too good"


def _no_double(
    game: int, turn: int, player: int, analysis: Mapping[str, Any], mark: str
) -> list[Decision]:
    """The cube decision before a roll: a missed double when doubling was better."""
    cube = _nd_dt(analysis)
    if cube is None:
        return []
    nd, dt = cube
    loss = max(nd, min(dt, DP)) - nd
    if loss <= 0:
        return []
    best = nd + loss
    return [
        Decision(game, turn, player, "no double", "no double", _best_cube(nd, dt), loss, best, mark)
    ]


def _checker(
    game: int, turn: int, player: int, record: Mapping[str, Any], analysis: Mapping[str, Any]
) -> Decision | None:
    moves = analysis.get("moves") or []
    if len(moves) < 2 or "imove" not in analysis:
        return None  # forced, or not analysed
    played = moves[int(analysis["imove"])]
    best = moves[0]
    loss = max(0.0, float(best["score"]) - float(played["score"]))
    return Decision(
        game,
        turn,
        player,
        "move",
        format_gnubg_play(record.get("move") or played["move"]),
        format_gnubg_play(best["move"]),
        loss,
        float(best["score"]),
        _mark(record),
    )


def _stats(
    stats: Mapping[str, Any] | None,
    games: Sequence[GameAnalysis],
    player: int,
    decisions: Sequence[Decision] = (),
) -> PlayerStats:
    """gnubg's statistics of one player; the marks counted over ``decisions`` (a game's)
    or over ``games`` (the match's)."""
    mine = [d for d in decisions if d.player == player] + [
        d for g in games for d in g.decisions if d.player == player
    ]
    if not stats:
        raise AnalysisError("no statistics: was the match analysed?")
    moves, cube, dice = stats["moves"], stats["cube"], stats["dice"]
    return PlayerStats(
        checker_decisions=int(moves["unforced-moves"]),
        cube_decisions=int(cube["close-cube"]),
        checker_loss=float(moves["error-skill"]),
        cube_loss=sum(float(cube[f"err-{kind}-skill"]) for kind in CUBE_ERRORS),
        doubtful=sum(d.mark == "doubtful" for d in mine),
        errors=sum(d.mark == "error" for d in mine),
        blunders=sum(d.mark == "blunder" for d in mine),
        luck=float(dice["luck"]),
    )


# -- stored form ---------------------------------------------------------------------------

FORMAT_VERSION = 1


def analysis_to_json(analysis: MatchAnalysis) -> str:
    """The analysis as JSON text (what the database stores)."""
    return json.dumps(
        {
            "version": FORMAT_VERSION,
            "ply": analysis.ply,
            "players": [_stats_json(p) for p in analysis.players],
            "games": [
                {
                    "players": [_stats_json(p) for p in game.players],
                    "decisions": [
                        [
                            d.game,
                            d.move,
                            d.player,
                            d.kind,
                            d.played,
                            d.best,
                            round(d.loss, 6),
                            round(d.equity, 6),
                            d.mark,
                        ]
                        for d in game.decisions
                    ],
                }
                for game in analysis.games
            ],
        },
        separators=(",", ":"),
    )


def analysis_from_json(text: str) -> MatchAnalysis:
    """Back from :func:`analysis_to_json`.

    :raises SnapshotError: not such text.
    """
    try:
        data = json.loads(text)
        if data.get("version") != FORMAT_VERSION:
            raise SnapshotError(f"unknown analysis version {data.get('version')!r}")
        return MatchAnalysis(
            int(data["ply"]),
            _pair(data["players"]),
            tuple(
                GameAnalysis(
                    _pair(game["players"]),
                    tuple(
                        Decision(
                            int(g),
                            int(m),
                            int(p),
                            str(k),
                            str(pl),
                            str(b),
                            float(loss),
                            float(eq),
                            str(mk),
                        )
                        for g, m, p, k, pl, b, loss, eq, mk in game["decisions"]
                    ),
                )
                for game in data["games"]
            ),
        )
    except SnapshotError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"not an analysis: {exc}") from exc


_STATS_FIELDS = (
    "checker_decisions",
    "cube_decisions",
    "checker_loss",
    "cube_loss",
    "doubtful",
    "errors",
    "blunders",
    "luck",
)


def _stats_json(stats: PlayerStats) -> list[float | int]:
    values: list[float | int] = []
    for name in _STATS_FIELDS:
        value = getattr(stats, name)
        values.append(round(value, 6) if isinstance(value, float) else value)
    return values


def _pair(items: Sequence[Sequence[float]]) -> tuple[PlayerStats, PlayerStats]:
    first, second = (
        PlayerStats(int(a), int(b), float(c), float(d), int(e), int(f), int(g), float(h))
        for a, b, c, d, e, f, g, h in items
    )
    return first, second
