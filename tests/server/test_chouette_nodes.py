"""A chouette whose players are on different nodes (issue 32, D438), through real
sockets: the same play as ``test_chouette_play`` (four players, two telnet and two CLIP,
a watcher; a team double the box answers, the rotation, a member leaving mid-game, the
others playing on, ``show games``, everyone leaving) on one node, then with the players
spread over two and three nodes on the loopback bus and on NATS. The table runs at its
opener's node; every command and game action of a player elsewhere is sent there as
data, and every user hears the same lines in the same order as on one node.
"""

from __future__ import annotations

import json

import pytest

from backgammon.board import Colour
from backgammon.chouette_events import ChouetteGameFinished
from backgammon.chouette_settings import ChouetteSettings, CubeMode
from backgammon.chouette_state import BOX, TEAM, ChouettePhase
from backgammon.notation import format_moves
from db.records import SavedChouette
from db.repository import Database
from protocol import replies
from protocol.chouette_view import settings_words
from protocol.replies import Toggle
from server.config import Settings
from server.tables.chouette_table import LiveChouette
from server.tables.cluster import chouette_command_from_json, chouette_command_to_json
from server.tables.seam import (
    ChouetteCommand,
    ChouetteDelegate,
    ChouetteInvite,
    ChouetteJoin,
    ChouetteLeave,
    ChouetteOpen,
    ChouetteRecord,
    ChouetteReturn,
    ChouetteShow,
    ChouetteStart,
    TeamTalk,
)

from ..conftest import DbTarget
from .conftest import ScriptedClient
from .sessions import command
from .test_chouette_play import CLIP, TELNET, run, turn
from .test_two_nodes import Nodes, bus, heard_since, nodes, private_nats, until, world

__all__ = ["bus", "nodes"]  # the fixtures: two nodes, on the loopback bus and on NATS


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


async def ready(nodes: Nodes, placed: dict[str, int]) -> dict[str, ScriptedClient]:
    """The four players logged in at their nodes, ready (the toggle is stored: an earlier
    run on this database may have left it on), the CLIP ones with ``board:`` lines."""
    clients: dict[str, ScriptedClient] = {}
    on = replies.toggle_message(Toggle.READY, True)
    for name in TELNET:
        clients[name] = await nodes.telnet(placed[name], name)
        while on not in await command(clients[name], "toggle ready"):
            pass
    for name in CLIP:
        client = clients[name] = await nodes.clip(placed[name], name)
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
        while True:
            await client.send("toggle ready")
            if (await client.expect_prefix("** You're ")) == on:
                break
    opener = nodes.apps[placed["ann"]]
    for name in ("bob", "cat", "dan"):
        await until(lambda name=name: _ready_at(opener, name))  # type: ignore[misc]
    return clients


def _ready_at(app: object, name: str) -> bool:
    peer = app.presence.get(name)  # type: ignore[attr-defined]
    return peer is not None and bool(peer.toggles[Toggle.READY])


async def chouette_play(nodes: Nodes, placed: dict[str, int]) -> dict[str, list[str]]:
    """Two games of a four-player chouette ann opens, eve watching bob, and everyone
    leaving; returns what each user heard from the opening on, status notices left out.
    ``placed``: each user's node (the table runs at ann's)."""
    clients = await ready(nodes, placed)
    eve = await nodes.clip(placed["eve"], "eve")
    await eve.send("set boardstyle 3")
    await eve.expect("Value of 'boardstyle' set to 3.")
    everyone = {**clients, "eve": eve}
    start = {name: len(client.seen) for name, client in everyone.items()}
    assert replies.CHOUETTE_OPENED in await command(clients["ann"], "chouette open")
    for name in ("bob", "cat", "dan"):
        reply = await command(clients["ann"], f"chouette invite {name}")
        assert reply[-1] == replies.you_invite_to_chouette(name)
        await clients[name].expect(replies.chouette_join_hint("ann"))
        await run(clients, name, "chouette join ann", replies.chouette_joins(name))
    owner = nodes.apps[placed["ann"]]
    table: LiveChouette = owner.local_tables.chouettes["ann"]
    core = table.core
    await eve.send("watch bob")
    await eve.expect(replies.now_watching("bob"))
    await eve.expect_prefix("board:")
    await run(clients, "ann", "chouette start", replies.chouette_game_starts(1, "", "")[:15])
    box, line = core.box, core.line
    assert box is not None and len(line) == 3
    for name, client in clients.items():
        if name != "ann":
            await client.expect(replies.chouette_game_starts(1, box, line[0]))

    # Game 1: the last of the line doubles, the captain's roll closes the window, the
    # box accepts; played to its end.
    while not (core.turn == TEAM and core.phase is ChouettePhase.TURN):
        await turn(clients, table)
    captain, last = line[0], line[2]
    await run(clients, last, "double", replies.chouette_team_doubles(last, 2))
    await run(clients, captain, "roll", replies.chouette_box_answers([last]))
    await run(clients, box, "accept", replies.chouette_box_accepts(last, 2))
    while core.game == 1:
        await turn(clients, table)
    assert any(isinstance(e, ChouetteGameFinished) for e in core.history[0])
    started = replies.chouette_game_starts(2, core.box or "", core.line[0])
    for client in everyone.values():
        await client.expect(started)

    # Game 2: a member elsewhere lists the table (the directory, D438), one shows it,
    # the captain talks to the team, a member kibitzes, the second of the line leaves
    # mid-game; the others play it out.
    summary = replies.chouette_game_line(core.box or "", core.line[0], 4, 2)
    assert summary in await command(clients["dan"], "show games")
    member = core.line[-1]
    await run(clients, member, "show chouette", "")
    await run(clients, core.line[0], "chouette team steady now", "")
    await command(clients["dan"], "kibitz nice table")  # heard by the players and eve
    leaver = core.line[1]
    for _ in range(4):
        await turn(clients, table)
    await run(clients, leaver, "leave", replies.chouette_leaves(leaver))
    while core.game == 2:
        await turn(clients, table)
    for name, client in clients.items():
        if name != leaver:
            await client.expect_prefix("Chouette game 2 is over:")
    for name in [n for n in ("ann", "bob", "cat", "dan") if n != leaver]:
        await run(clients, name, "chouette leave", replies.chouette_leaves(name))
    # Everything said is read: each user's own command answered last.
    for name, client in everyone.items():
        if name in TELNET:
            await command(client, "set boardstyle 2")
        else:
            await client.send("set boardstyle 3")
            await client.expect("Value of 'boardstyle' set to 3.")
    assert await owner.db.load_chouette_of("ann") is None
    return heard_since(everyone, start)


@pytest.mark.parametrize(
    "count, placed",
    [
        # The table at ann's node; bob, dan and eve (watching bob) on the other.
        (2, {"ann": 0, "bob": 1, "cat": 0, "dan": 1, "eve": 1}),
        # bob and dan on a second node, cat and the watcher on a third.
        (3, {"ann": 0, "bob": 1, "cat": 2, "dan": 1, "eve": 2}),
    ],
    ids=["two nodes", "three nodes"],
)
async def test_a_chouette_across_nodes_sounds_as_on_one(
    settings: Settings, db_target: DbTarget, bus: str, count: int, placed: dict[str, int]
) -> None:
    async with world(settings, db_target, 1) as one:
        alone = await chouette_play(one, dict.fromkeys(placed, 0))
    async with world(settings, db_target, count, bus) as spread_over:
        spread = await chouette_play(spread_over, placed)
    assert len(alone["bob"]) > 50 and len(alone["eve"]) > 10
    assert any("nice table" in got for got in alone["eve"])  # dan's kibitz
    for name in alone:
        assert spread[name] == alone[name], name


@pytest.mark.parametrize(
    "sent",
    [
        ChouetteOpen(ChouetteSettings(cubes=CubeMode.SINGLE, jacoby=False, double_window=3)),
        ChouetteInvite("bob"),
        ChouetteJoin("ann"),
        ChouetteStart(),
        ChouetteLeave(),
        ChouetteShow(None, clip=True),
        ChouetteShow("ann", clip=False),
        ChouetteDelegate("cat"),
        ChouetteDelegate(None),
        ChouetteReturn(at_login=True),
        ChouetteRecord(None),
        ChouetteRecord("dan"),
        TeamTalk("take it"),
    ],
    ids=repr,
)
def test_a_chouette_command_crosses_the_bus_unchanged(sent: ChouetteCommand) -> None:
    """What a forwarded chouette command carries (``chouette open``'s settings too)."""
    data = json.loads(json.dumps(chouette_command_to_json(sent)))
    assert chouette_command_from_json(data) == sent


async def seated(nodes: Nodes, node: int) -> tuple[LiveChouette, dict[str, ScriptedClient]]:
    """cat opens a chouette at ``node``, bob (there too) joins, the first game starts."""
    clients = {name: await nodes.clip(node, name) for name in CLIP}
    bob = clients["bob"]
    while True:
        await bob.send("toggle ready")
        if (await bob.expect_prefix("** You're ")) == replies.toggle_message(Toggle.READY, True):
            break
    await run(clients, "cat", "chouette open", replies.CHOUETTE_OPENED)
    await run(clients, "cat", "chouette invite bob", replies.you_invite_to_chouette("bob"))
    await run(clients, "bob", "chouette join cat", replies.chouette_joins("bob"))
    await run(clients, "cat", "chouette start", replies.chouette_game_starts(1, "", "")[:15])
    return nodes.apps[node].local_tables.chouettes["cat"], clients


def action(table: LiveChouette) -> tuple[str, str]:
    """Who acts at ``table`` now, and a command of theirs the rules allow."""
    core = table.core
    mover = core.mover()
    assert mover is not None
    if core.phase is ChouettePhase.TURN:
        return mover, "roll"
    colour = Colour.O if core.turn == BOX else Colour.X
    return mover, f"move {format_moves(core.legal_plays()[0].moves, colour)}"


async def writes_on(
    db: Database,
    clients: dict[str, ScriptedClient],
    moved: LiveChouette,
    before: SavedChouette | None,
) -> None:
    """The node that took cat's table plays on: its mover's action is announced to them
    and the saved table is no longer ``before``."""
    mover, sent = action(moved)
    await clients[mover].send(sent)
    await clients[mover].expect_prefix(f"{mover} " + ("rolls" if sent == "roll" else "moves"))
    after = await db.load_chouette_of("cat")
    assert after is not None and before is not None and after.snapshot != before.snapshot


async def test_a_node_cut_off_cannot_write_a_chouette_another_node_took(nodes: Nodes) -> None:
    """D439: node 0 runs cat's chouette, then loses the bus while it still reaches the
    database. Taken for gone, cat and bob log in at node 1, where the table is restored
    (D410) and taken (its epoch goes up). Node 0's next action at the table is refused
    by the database: its players there are told and the table leaves node 0, the saved
    table unchanged; at node 1 the game goes on and is saved."""
    table, clients = await seated(nodes, 0)
    await nodes.lose(0)
    await until(lambda: nodes.apps[1].presence.get("cat") is None, timeout=10)
    again = {name: await nodes.clip(1, name) for name in CLIP}
    await until(lambda: "bob" in nodes.apps[1].local_tables.chouettes)
    moved = nodes.apps[1].local_tables.chouettes["cat"]
    rules = replies.chouette_rules(settings_words(moved.core.settings))
    for client in again.values():  # told after their return's save (D410)
        await client.expect(rules)
    assert not moved.core.absent
    db = nodes.apps[1].db
    before = await db.load_chouette_of("cat")

    mover, sent = action(table)  # at node 0, which still runs the table in memory
    await clients[mover].send(sent)
    for client in clients.values():
        await client.expect(replies.CHOUETTE_TAKEN_OVER)
    assert not nodes.apps[0].tables.playing("cat") and not nodes.apps[0].tables.playing("bob")
    assert await db.load_chouette_of("cat") == before

    await writes_on(db, again, moved, before)


async def spread_table(nodes: Nodes, cats: int) -> tuple[LiveChouette, dict[str, ScriptedClient]]:
    """cat opens a chouette at node ``cats``, bob at the other node joins, the first
    game starts."""
    bobs = 1 - cats
    clients = {"bob": await nodes.clip(bobs, "bob"), "cat": await nodes.clip(cats, "cat")}
    bob = clients["bob"]
    while True:
        await bob.send("toggle ready")
        if (await bob.expect_prefix("** You're ")) == replies.toggle_message(Toggle.READY, True):
            break
    await until(lambda: _ready_at(nodes.apps[cats], "bob"))
    await run(clients, "cat", "chouette open", replies.CHOUETTE_OPENED)
    await run(clients, "cat", "chouette invite bob", replies.you_invite_to_chouette("bob"))
    await bob.expect(replies.chouette_join_hint("cat"))  # as a user joins: once invited
    await run(clients, "bob", "chouette join cat", replies.chouette_joins("bob"))
    await run(clients, "cat", "chouette start", replies.chouette_game_starts(1, "", "")[:15])
    return nodes.apps[cats].local_tables.chouettes["cat"], clients


async def test_the_members_of_a_lost_node_s_chouette_are_told_elsewhere(nodes: Nodes) -> None:
    """D440: the node running cat's chouette dies; bob, at the table from the other
    node, is told the table was saved and is back in the lobby; ``chouette return``
    brings the saved table back at his node (taken there, D439), cat away."""
    table, clients = await spread_table(nodes, 1)
    bob = clients["bob"]
    await bob.expect_prefix(replies.chouette_game_starts(1, "", "")[:15])
    saved = await nodes.apps[0].db.load_chouette_of("bob")
    await nodes.lose(1)
    await bob.expect(replies.CHOUETTE_NODE_GONE, timeout=10)
    tables = nodes.apps[0].tables
    assert not tables.playing("bob") and tables.chouette_games() == []
    await bob.send("board")
    await bob.expect(replies.NOT_PLAYING)
    await bob.send("chouette return")
    await bob.expect(replies.chouette_presence("bob", True))
    restored = nodes.apps[0].local_tables.chouettes["bob"]
    assert restored.table_id == table.table_id and restored.core.absent == {"cat"}
    assert saved is not None and saved.table_id == table.table_id
    assert restored.core.game == table.core.game and restored.core.box == table.core.box


async def test_a_member_of_a_lost_node_is_away_at_a_chouette_elsewhere(nodes: Nodes) -> None:
    """D440: bob's node dies while he sits at cat's chouette on the other node: the
    table holds his seat as after a dropped connection (D361), cat is told, and the
    table is saved with bob away."""
    table, clients = await spread_table(nodes, 0)
    await nodes.lose(1)
    await clients["cat"].expect(replies.chouette_presence("bob", False), timeout=10)
    assert "bob" in table.core.absent and "bob" in table.present()
    saved = await nodes.apps[0].db.load_chouette_of("cat")
    assert saved is not None and '"absent": ["bob"]' in saved.snapshot


async def test_a_player_at_a_chouette_of_another_node_is_refused_as_on_one(nodes: Nodes) -> None:
    """D438: bob sits at cat's chouette, run by the other node; his node refuses him a
    table of his own and a match with one node's texts; at his node, eve, opening a
    table, cannot invite him to it, nor fay to a match."""
    _, clients = await spread_table(nodes, 0)
    bob = clients["bob"]
    for sent, refused in (
        ("chouette open", replies.ALREADY_AT_CHOUETTE),
        ("chouette join cat", replies.ALREADY_AT_CHOUETTE),
        ("join cat", replies.CANT_PLAY_TWO),
    ):
        await bob.send(sent)
        await bob.expect(refused)
    eve = await nodes.clip(1, "eve")
    await run({"eve": eve}, "eve", "chouette open", replies.CHOUETTE_OPENED)
    await eve.send("chouette invite bob")
    await eve.expect(replies.already_playing_with("bob"))
    fay = await nodes.clip(1, "fay")
    await fay.send("invite bob 1")
    await fay.expect(replies.already_playing_with("bob"))


async def test_the_watchers_of_a_lost_node_s_chouette_are_told(
    settings: Settings, db_target: DbTarget
) -> None:
    """D416 for a chouette (D440): the node running cat's table dies with cat; on a third
    node, eve watching bob (at the table from another node) hears that cat dropped and
    the table was saved, and dave watching cat watches no more, as when a watched
    player's connection drops."""
    async with world(settings, db_target, 3) as nodes:
        _, clients = await spread_table(nodes, 1)
        await clients["bob"].expect_prefix(replies.chouette_game_starts(1, "", "")[:15])
        eve = await nodes.clip(2, "eve")
        dave = await nodes.clip(2, "dave")
        for watcher, player in ((eve, "bob"), (dave, "cat")):
            await watcher.send(f"watch {player}")
            await watcher.expect(replies.now_watching(player))
        await nodes.lose(1)
        dropped = replies.drops_connection("cat")
        await clients["bob"].expect(replies.CHOUETTE_NODE_GONE)
        await eve.expect(replies.saved_after(dropped))
        await dave.expect(replies.not_watching_anymore(dropped))
        assert nodes.apps[2].presence.get("dave").watching is None  # type: ignore[union-attr]


async def test_a_drained_node_hands_its_chouette_to_the_members_elsewhere(
    settings: Settings, db_target: DbTarget, bus: str
) -> None:
    """D446: the node running cat's chouette is drained (D415) while bob sits at it from
    the other node, eve there watching him. cat is warned and closed (away at the table,
    bob told); then the table leaves the drained node, saved: bob hears what a lost
    node's member hears (D440) and is back in the lobby, eve what a lost node's
    chouette's watchers hear (D448), still watching bob. ``chouette return`` restores
    the table at bob's node, and cat, logging in there again, is back at it (D410)."""
    async with world(settings.replace(drain_grace=0.2), db_target, 2, bus) as nodes:
        table, clients = await spread_table(nodes, 1)
        bob = clients["bob"]
        await bob.expect_prefix(replies.chouette_game_starts(1, "", "")[:15])
        eve = await nodes.clip(0, "eve")
        await eve.send("watch bob")
        await eve.expect(replies.now_watching("bob"))
        nodes.services[1].drain(True)  # SIGUSR1
        await clients["cat"].expect_prefix("*** ATTENTION ! FIBS will restart in ")
        assert await clients["cat"].closed()
        await bob.expect(replies.chouette_presence("cat", False))
        await bob.expect(replies.CHOUETTE_NODE_GONE)
        await eve.expect(replies.chouette_node_gone_watching("bob"))
        assert nodes.apps[0].presence.get("eve").watching == "bob"  # type: ignore[union-attr]
        assert not nodes.apps[1].local_tables.chouettes  # left the drained node
        tables = nodes.apps[0].tables
        assert not tables.playing("bob") and tables.chouette_games() == []
        saved = await nodes.apps[0].db.load_chouette_of("bob")
        assert saved is not None and '"absent": ["cat"]' in saved.snapshot

        await bob.send("chouette return")
        await bob.expect(replies.chouette_presence("bob", True))
        restored = nodes.apps[0].local_tables.chouettes["bob"]
        assert restored.table_id == table.table_id and restored.core.absent == {"cat"}
        assert restored.core.game == table.core.game and restored.core.box == table.core.box
        cat = await nodes.clip(0, "cat")  # as HAProxy sends him: to a ready node
        await cat.expect(replies.chouette_rules(settings_words(restored.core.settings)))
        await bob.expect(replies.chouette_presence("cat", True))
        assert not restored.core.absent


async def test_a_paused_node_s_chouette_is_dropped_when_the_nodes_meet_again(
    settings: Settings, db_target: DbTarget
) -> None:
    """D447 (D417 for a chouette): node 0 runs cat's chouette, bob there too; the nodes
    lose each other (their NATS away), and cat and bob log in again at node 1, where the
    table is restored and taken (D410, D439). When the nodes meet again the newer logins
    win: node 0 drops the table without a write, before any action of it, its players
    there told (and closed as after a second login); at node 1 the game goes on."""
    async with private_nats() as restart:
        url = private_nats.url  # type: ignore[attr-defined]
        async with world(settings, db_target, 2, "nats", url) as nodes:
            table, clients = await seated(nodes, 0)
            db = nodes.apps[1].db
            again: dict[str, ScriptedClient] = {}

            async def log_in_at_node_1() -> None:
                await until(lambda: nodes.apps[1].presence.get("cat") is None, timeout=10)
                for name in CLIP:
                    again[name] = await nodes.clip(1, name)
                await until(lambda: "bob" in nodes.apps[1].local_tables.chouettes)

            await restart(log_in_at_node_1)
            moved = nodes.apps[1].local_tables.chouettes["cat"]
            before = await db.load_chouette_of("cat")
            for client in clients.values():
                await client.expect(replies.CHOUETTE_TAKEN_OVER, timeout=15)
                assert await client.closed()
            assert not nodes.apps[0].local_tables.chouettes
            assert table.core.game == moved.core.game
            assert await db.load_chouette_of("cat") == before

            await writes_on(db, again, moved, before)


async def test_the_watchers_of_a_lost_node_s_chouette_with_none_of_its_players_are_told(
    nodes: Nodes,
) -> None:
    """D448: node 1 runs cat's chouette; cat's connection ends (away at the table, D361),
    so none of its players is at node 1 when node 1 is lost. bob, at the table from node
    0, hears that the table's node is gone (D440), and eve, watching him there, hears it
    too and goes on watching him."""
    _, clients = await spread_table(nodes, 1)
    bob = clients["bob"]
    eve = await nodes.clip(0, "eve")
    await eve.send("watch bob")
    await eve.expect(replies.now_watching("bob"))
    await clients["cat"].close()
    await bob.expect(replies.chouette_presence("cat", False))
    await until(lambda: nodes.apps[0].presence.get("cat") is None)
    await nodes.lose(1)
    await bob.expect(replies.CHOUETTE_NODE_GONE, timeout=10)
    await eve.expect(replies.chouette_node_gone_watching("bob"))
    assert nodes.apps[0].presence.get("eve").watching == "bob"  # type: ignore[union-attr]
