"""What ``analysis <id>`` shows of a stored analysis (D286, D288, D326; docs/analysis.md).

Three forms of the same figures: the text people read in telnet mode (both players' error
rates, marks and luck, then the match's errors and blunders with their game and move
numbers), ``analysis <id> json`` with every judged decision as one line of JSON for the
web page (D326), and a line form for programs (CLIP sessions): one line per item, words
separated by single spaces, plays and cube actions without spaces.
"""

from __future__ import annotations

import json
from typing import Any

from protocol import replies
from protocol.analysis import MARK_SIGNS, MatchAnalysis, PlayerStats

MISTAKES: tuple[str, ...] = ("error", "blunder")
"""The marks the telnet text lists (a doubtful play is only counted)."""
MOST_MISTAKES = 60
"""At most so many errors and blunders listed (the line form lists every mark)."""


def analysis_text(match_id: int, names: tuple[str, str], analysis: MatchAnalysis) -> list[str]:
    """The telnet text: header, each player's figures, the errors and blunders, end."""
    lines = [replies.analysis_header(match_id, *names, analysis.ply)]
    lines += [_player(name, stats) for name, stats in zip(names, analysis.players, strict=True)]
    mistakes = [d for d in analysis.decisions() if d.mark in MISTAKES]
    if mistakes:
        lines.append(replies.ANALYSIS_MISTAKES)
        lines += [
            replies.analysis_mistake(
                d.game, d.move, names[d.player], d.played, d.best, d.loss, MARK_SIGNS[d.mark]
            )
            for d in mistakes[:MOST_MISTAKES]
        ]
    else:
        lines.append(replies.ANALYSIS_NO_MISTAKES)
    lines.append(replies.analysis_end(match_id))
    return lines


def _player(name: str, stats: PlayerStats) -> str:
    return replies.analysis_player(
        name, stats.rate, stats.decisions, stats.doubtful, stats.errors, stats.blunders, stats.luck
    )


def analysis_lines(match_id: int, names: tuple[str, str], analysis: MatchAnalysis) -> list[str]:
    """The line form: the match, each player over the match (game 0) and each game, each
    marked decision, the end."""
    lines = [replies.analysis_line_header(match_id, *names, analysis.ply)]
    totals = [(0, analysis.players)]
    games = [(number, game.players) for number, game in enumerate(analysis.games, 1)]
    for number, players in totals + games:
        for name, stats in zip(names, players, strict=True):
            lines.append(
                replies.analysis_line_player(
                    match_id,
                    number,
                    name,
                    stats.rate,
                    stats.decisions,
                    stats.doubtful,
                    stats.errors,
                    stats.blunders,
                    stats.luck,
                )
            )
    for d in analysis.decisions():
        if d.mark:
            lines.append(
                replies.analysis_line_decision(
                    match_id,
                    d.game,
                    d.move,
                    names[d.player],
                    _word(d.played),
                    _word(d.best),
                    d.loss,
                    d.mark,
                )
            )
    lines.append(replies.analysis_line_end(match_id))
    return lines


def _word(choice: str) -> str:
    """A play or cube action as one word: ``13/7 8/7`` -> ``13/7,8/7``; ``no double`` ->
    ``no-double``; ``double, take`` -> ``double-take``."""
    if "/" in choice:
        return choice.replace(" ", ",")
    return choice.replace(", ", "-").replace(" ", "-")


def analysis_json(match_id: int, names: tuple[str, str], analysis: MatchAnalysis) -> list[str]:
    """``analysis <id> json`` (D326): the line before, the whole analysis as one line of
    JSON, the end line. Unlike the line form it has every judged decision (marked or
    not) with the equity of gnubg's best choice, for the page's move list and equity
    graph; keys are named, figures rounded as stored."""
    document = {
        "match": match_id,
        "players": list(names),
        "ply": analysis.ply,
        "stats": [_stats(p) for p in analysis.players],
        "games": [
            {
                "stats": [_stats(p) for p in game.players],
                "decisions": [
                    {
                        "move": d.move,
                        "player": d.player,
                        "kind": d.kind,
                        "played": d.played,
                        "best": d.best,
                        "loss": round(d.loss, 4),
                        "equity": round(d.equity, 4),
                        "mark": d.mark,
                    }
                    for d in game.decisions
                ],
            }
            for game in analysis.games
        ],
    }
    return [
        replies.analysis_json_begin(match_id),
        json.dumps(document, separators=(",", ":")),
        replies.analysis_end(match_id),
    ]


def _stats(stats: PlayerStats) -> dict[str, Any]:
    return {
        "rate": round(stats.rate, 2),
        "decisions": stats.decisions,
        "doubtful": stats.doubtful,
        "errors": stats.errors,
        "blunders": stats.blunders,
        "luck": round(stats.luck, 3),
    }
