"""Match commands' rules through dispatch without sockets (tests/server/desk.py).

Each test runs command lines as users of a real App (database, presence, tables) and
reads the lines they were sent; the same commands' wire behaviour is tested through
sockets in test_match_play.py and test_match_rules.py.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

from backgammon.dice import SeededDice
from backgammon.match import Phase
from backgammon.notation import format_move
from backgammon.rating import rate_match
from protocol import replies
from protocol.replies import MoveErrorReason
from server.app import App
from server.config import Settings
from server.tables.local import LocalTables
from server.tables.seam import Moves, Roll, TableCommand, Tables
from server.tables.updates import Notice, Settlement, TableUpdate
from server.world.session import Session
from tests.conftest import DbTarget

from .desk import Desk


async def playing(desk: Desk) -> tuple[str, str]:
    """alice and bob in a 1-point match, its opening roll made: (mover, other)."""
    await desk.login("alice")
    await desk.login("bob")
    await desk.run("alice", "invite bob 1")
    await desk.run("bob", "join alice")
    match = desk.app.local_tables.matches["alice"].match
    assert match.phase is Phase.MOVE and match.to_act is not None
    names = desk.app.local_tables.matches["alice"].names
    await desk.settle()
    for name in names:
        desk.heard(name)
    return names[match.to_act], names[1 - match.to_act]


async def test_game_actions_outside_a_match_are_refused(desk: Desk) -> None:
    await desk.login("alice")
    for line in ("roll", "double", "move 1-2", "off", "accept", "reject", "board", "pip"):
        lines = await desk.run("alice", line)
        assert lines[0].startswith("** "), (line, lines)
    assert await desk.run("alice", "kibitz hello") == [replies.NOT_WATCHING_OR_PLAYING]
    assert await desk.run("alice", "leave") == [replies.NO_ONE_TO_LEAVE]


async def test_a_match_starts_and_is_listed(desk: Desk) -> None:
    await playing(desk)
    assert desk.app.tables.playing("alice") and desk.app.tables.playing("bob")
    assert desk.app.tables.opponent_of("alice") == "bob"
    lines = await desk.run("alice", "show games")
    assert lines == [replies.GAMES_HEADER, replies.game_line("alice", "bob", 1, 0, 0)]


async def test_a_roll_out_of_turn_changes_nothing(desk: Desk) -> None:
    mover, other = await playing(desk)
    live = desk.app.local_tables.matches[mover]
    version = live.match.version
    lines = await desk.run(other, "roll")
    assert len(lines) == 1 and lines[0].startswith("** ")
    assert live.match.version == version
    assert desk.heard(mover) == []


async def test_a_bad_move_word_is_explained_in_telnet_mode_only(desk: Desk) -> None:
    mover, _ = await playing(desk)
    clip = await desk.run(mover, "move 13-x")
    assert clip == [replies.move_error(MoveErrorReason.BAD_WORD, 0)]
    desk.sessions[mover].mode = replies.Mode.TELNET
    telnet = await desk.run(mover, "move 13-x")
    assert telnet[0] == clip[0]
    assert len(telnet) == 4  # the word and why, the direction, the prompt (D171)
    assert telnet[-1] == replies.TELNET_PROMPT


async def test_a_legal_move_is_announced_to_both(desk: Desk) -> None:
    mover, other = await playing(desk)
    live = desk.app.local_tables.matches[mover]
    play = live.match.legal_plays()[0]
    colour = live.match.colour(live.player_of(mover))
    text = " ".join(format_move(m, colour) for m in play.moves)
    await desk.run(mover, f"move {text}")
    assert live.match.to_act == live.player_of(other)
    assert any(line.startswith(f"{mover} moves") for line in desk.heard(other))


async def test_kibitz_reaches_the_opponent_and_a_watcher(desk: Desk) -> None:
    mover, other = await playing(desk)
    await desk.login("carol")
    await desk.run("carol", f"watch {mover}")
    desk.heard(mover)
    desk.heard(other)
    lines = await desk.run(other, "kibitz nice")
    assert lines[-1] == replies.heard_you(2)
    assert any("nice" in line for line in desk.heard(mover))
    assert any("nice" in line for line in desk.heard("carol"))


class SentCommands:
    """A table seam in front of this node's tables that keeps every game command it
    forwards: what an owner on another node would receive."""

    def __init__(self, local: LocalTables) -> None:
        self.local = local
        self.sent: list[tuple[str, TableCommand]] = []

    async def act(self, session: Session, command: TableCommand) -> None:
        self.sent.append((session.name, command))
        await self.local.act(session, command)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)


async def test_game_actions_cross_an_injected_seam_as_data(
    settings: Settings, db_target: DbTarget
) -> None:
    db = await db_target.open()
    seams: list[SentCommands] = []

    def tables(local: LocalTables) -> Tables:
        seams.append(SentCommands(local))
        return cast(Tables, seams[0])

    try:
        desk = Desk(App(settings, db, dice=lambda: SeededDice(11), coin=lambda: 0, tables=tables))
        mover, other = await playing(desk)
        await desk.run(other, "roll")
        await desk.run(mover, "move 13-x")
        assert seams[0].sent == [(other, Roll()), (mover, Moves("13-x"))]
    finally:
        await db.close()


async def _until_bear_off(desk: Desk) -> str:
    """Random legal play until the mover can bear off with every die: the mover."""
    await playing(desk)
    live = desk.app.local_tables.matches["alice"]
    match = live.match
    for _ in range(2000):
        assert match.phase is not Phase.MATCH_OVER, "the match ended before a bear-off"
        assert match.to_act is not None
        mover = live.names[match.to_act]
        if match.phase is Phase.TURN:
            await desk.run(mover, "roll")
            continue
        assert match.phase is Phase.MOVE and match.dice is not None
        plays = match.legal_plays()
        off = [p for p in plays if all(m.dst == 0 for m in p.moves)]
        if off and len(off[0].moves) == len(match.dice.dice):
            desk.heard(mover)
            return mover
        colour = match.colour(match.to_act)
        await desk.run(mover, "move " + " ".join(format_move(m, colour) for m in plays[0].moves))
    raise AssertionError("no bear-off with every die came")


async def test_off_bears_off_and_its_line_leads_the_actions_lines(desk: Desk) -> None:
    mover = await _until_bear_off(desk)
    match = desk.app.local_tables.matches["alice"].match
    version = match.version
    lines = await desk.run(mover, "off")
    assert lines[0].startswith("Bear off: "), lines
    assert len(lines) > 1 and match.version > version


async def test_off_reads_the_match_under_its_lock(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``off`` finds its play while it holds the match's lock, so an action saved
    meanwhile cannot leave it a stale play (issue 33: reads outside the lock)."""
    mover = await _until_bear_off(desk)
    live = desk.app.local_tables.matches["alice"]
    plays = live.match.legal_plays
    unlocked: list[str] = []

    def watched() -> Any:
        if not live.lock.locked():
            unlocked.append("legal_plays")
        return plays()

    monkeypatch.setattr(live.match, "legal_plays", watched)
    lines = await desk.run(mover, "off")
    assert lines[0].startswith("Bear off: ") and unlocked == []


# -- table updates at the edge (server/tables/edge.py) ----------------------------------


def _update_after(desk: Desk, mover: str, *, since: int, version: int) -> TableUpdate:
    """An update of ``mover``'s table that claims to follow version ``since``."""
    live = desk.app.local_tables.matches[mover]
    notice = Notice(live.player_of(mover), "a line of a missed action")
    return TableUpdate(
        live.table_id,
        live.sides,
        live.length,
        frozenset(live.watchers),
        since,
        version,
        (notice,),
        Settlement(),
    )


async def test_an_update_after_a_gap_brings_the_current_board_instead(desk: Desk) -> None:
    mover, other = await playing(desk)
    await desk.login("carol")
    await desk.run("carol", f"watch {mover}")
    await desk.settle()
    for name in (mover, other, "carol"):
        desk.heard(name)
    version = desk.app.local_tables.matches[mover].match.version
    later = version + 5
    desk.app.local_tables.edge.deliver(_update_after(desk, mover, since=version + 1, version=later))
    resynced = {name: desk.heard(name) for name in (mover, other, "carol")}
    for name, lines in resynced.items():  # each one's board, as ``board`` shows it
        assert lines and lines == await desk.run(name, "board"), name
    # The edge goes on from the version it was told of: the next update follows it.
    desk.app.local_tables.edge.deliver(_update_after(desk, mover, since=later, version=later + 1))
    assert desk.heard(mover) == ["a line of a missed action"]


async def test_an_update_older_than_the_last_one_seen_is_dropped(desk: Desk) -> None:
    mover, other = await playing(desk)
    live = desk.app.local_tables.matches[mover]
    version = live.match.version
    desk.app.local_tables.edge.deliver(
        _update_after(desk, mover, since=version - 1, version=version)
    )
    assert desk.heard(mover) == [] and desk.heard(other) == []


async def test_the_edge_forgets_a_table_that_left(desk: Desk) -> None:
    mover, _ = await playing(desk)
    assert desk.app.local_tables.edge.tables() == 1
    await desk.run(mover, "leave")
    assert desk.app.local_tables.edge.tables() == 0


# -- the rating at a match's end (server/tables/settle.py) --------------------------------


async def _play_out(desk: Desk) -> None:
    """Random legal plays until alice's match ends (the first play of each roll)."""
    live = desk.app.local_tables.matches["alice"]
    match = live.match
    for _ in range(2000):
        if match.phase is Phase.MATCH_OVER:
            return
        assert match.to_act is not None
        mover = live.names[match.to_act]
        if match.phase is Phase.TURN:
            await desk.run(mover, "roll")
            continue
        colour = match.colour(match.to_act)
        play = match.legal_plays()[0]
        await desk.run(mover, "move " + " ".join(format_move(m, colour) for m in play.moves))
    raise AssertionError("the match did not end")


async def test_a_match_is_rated_from_the_stored_ratings_not_the_presences(desk: Desk) -> None:
    """The finishing transaction reads the stored ratings: changed behind the presence's
    back (as by another node), the match is rated again from them, stored and told."""
    await playing(desk)
    await desk.app.db.update_rating("bob", 1700.0, 120)
    await _play_out(desk)
    (record,) = await desk.app.db.list_match_records("alice")
    assert record.winner is not None
    loser = "bob" if record.winner == "alice" else "alice"
    stored = {"alice": (1500.0, 0), "bob": (1700.0, 120)}
    change = rate_match(1, *stored[record.winner], *stored[loser])
    for name, rating, experience in (
        (record.winner, change.winner_rating, change.winner_experience),
        (loser, change.loser_rating, change.loser_experience),
    ):
        user = await desk.app.db.get_user(name)
        assert user is not None and (user.rating, user.experience) == (rating, experience)
        peer = desk.app.presence.get(name)
        assert peer is not None and (peer.rating, peer.experience) == (rating, experience)
