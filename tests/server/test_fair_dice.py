"""Dice anyone can verify, through real sockets (issue 30; D271-D276; docs/dice.md).

A match with the production dice (the App's ``dice`` left None, seeds from the CSPRNG):
the commitment comes with the invitation, before either player's seed is final; the
start tells the players and the watchers the commitment and both seeds; no line nor log
record shows the server seed before the end; the end reveals it; ``show dice`` gives the
proof, ``export <id> json`` the record, and the verifier (``backgammon.fair_dice``)
finds every roll the players were told to be the one the seeds give. A match left, the
server restarted and the match resumed goes on with the same seeds and no die changed;
a saved match that a new match replaces reveals its seed too.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from backgammon.dice import Roll, SeededDice
from backgammon.fair_dice import DiceSeeds, record_games, record_proof, recorded_rolls
from backgammon.fair_dice.__main__ import main as verify_main
from backgammon.moves import legal_plays
from backgammon.notation import format_moves
from bots.events import Text, parse_event
from protocol import replies
from protocol.board_fibs import parse_board
from server.app import App
from server.config import Settings
from server.service import Service
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, clip_login, running
from .fibs_parsers import fcm_cookie
from .match_driver import Player, play_out
from .sessions import ready_pair

pytestmark = pytest.mark.known_lines

HEX = "[0-9a-f]{64}"
OFFERED = re.compile(rf"\*\*\* The dice of this match are committed: ({HEX})\. ")
COMMITTED = re.compile(
    rf"\*\*\* Dice of this match \(fibs-dice/1\): commitment ({HEX}),"
    r" seeds (\S+) (\S+) and (\S+) (\S+)\."
)
REVEALED = re.compile(rf"\*\*\* Dice of this match revealed: server seed ({HEX})\. .* (\d+)' ")
SAVED_REVEALED = re.compile(rf"\*\*\* Your saved match with \S+ is over; .* was ({HEX}) ")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


def found(client: ScriptedClient, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    """Every line ``client`` has seen that ``pattern`` matches (from its start)."""
    return [m for line in client.seen if (m := pattern.match(line)) is not None]


def told_rolls(client: ScriptedClient, opponent: str) -> list[tuple[int, int]]:
    """Every roll player 0 (``client``) was told, in order: each opening roll (their die,
    then the opponent's), their own rolls and the opponent's."""
    forms = [
        re.compile(rf"You rolled (\d), {opponent} rolled (\d)$"),  # replies.opening_roll
        re.compile(r"You roll (\d) and (\d)\.$"),  # replies.you_roll
        re.compile(rf"{opponent} rolls (\d) and (\d)\.$"),  # replies.rolls
    ]
    return [
        (int(m[1]), int(m[2]))
        for line in client.seen
        for pattern in forms
        if (m := pattern.match(line)) is not None
    ]


async def start(alice: ScriptedClient, bob: ScriptedClient, words: str) -> str:
    """alice invites bob (``words``: the length); both are told the commitment (D271);
    bob sets a seed of his own after seeing it, then joins. The commitment."""
    await alice.send(f"invite bob {words}")
    await bob.expect(replies.type_join("alice"))
    offered = OFFERED.match(await bob.line())
    assert offered is not None
    commitment = offered[1]
    await alice.expect(replies.dice_offered(commitment))
    await bob.send("set dice_seed bob's-own!")
    await bob.expect(replies.set_changed("dice_seed", "bob's-own!"))
    await bob.send("join alice")
    return commitment


async def finish(alice: ScriptedClient, bob: ScriptedClient) -> None:
    """Both play on (first legal play) until the match is over."""
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=120.0)


async def revealed(client: ScriptedClient) -> tuple[str, int]:
    """The server seed and the record id of the reveal line (D273), read up to it."""
    line = await client.expect_prefix("*** Dice of this match revealed:", timeout=10)
    match = REVEALED.match(line)
    assert match is not None, line
    seed, record_id = match[1], int(match[2])
    assert line == replies.dice_revealed(seed, record_id)
    return seed, record_id


async def verified(client: ScriptedClient, record_id: int, tmp_path: Path) -> str:
    """``export <id> json``, written to a file and checked as a player would:
    ``python -m backgammon.fair_dice verify FILE`` (in-process). The record's text."""
    await client.send(f"export {record_id} json")
    await client.expect(replies.export_json_begin(record_id))
    record = await client.line()
    await client.expect(replies.export_end(record_id))
    path = tmp_path / f"match{record_id}.json"
    path.write_text(record)
    out = io.StringIO()
    status = verify_main(["verify", str(path)], out)
    assert status == 0, out.getvalue()
    return record


async def test_a_match_commits_plays_and_proves_its_dice(
    connect: Connect, app: App, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    alice, bob = await ready_pair(connect, app)
    carol = await clip_login(connect, app, "carol")
    await carol.send("set boardstyle 3")
    await carol.expect(replies.set_changed("boardstyle", "3"))
    await carol.send("watch alice")
    await carol.expect(replies.now_watching("alice"))
    await alice.send("set dice_seed")
    await alice.expect(replies.set_value("dice_seed", replies.DICE_SEED_UNSET))
    await alice.send("set dice_seed tulip-7")
    await alice.expect(replies.set_changed("dice_seed", "tulip-7"))
    commitment = await start(alice, bob, "1")
    committed = replies.dice_committed(commitment, "alice", "tulip-7", "bob", "bob's-own!")
    for client in (alice, bob, carol):  # before the first roll
        await client.expect(committed)
        assert not any(line.startswith("You rolled") for line in client.seen)
    await finish(alice, bob)
    seed, record_id = await revealed(alice)
    assert (await revealed(bob)) == (seed, record_id)
    assert (await revealed(carol)) == (seed, record_id)
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment
    # Before the reveal no line showed the server seed, in any form; no log ever did.
    for client in (alice, bob, carol):
        before = client.seen[: client.seen.index(replies.dice_revealed(seed, record_id))]
        assert not any(seed in line.lower() for line in before)
    assert not any(seed in record.getMessage().lower() for record in caplog.records)
    # Every roll alice was told is the seeds' roll, in order, opening ties included.
    seeds = DiceSeeds(bytes.fromhex(seed), ("tulip-7", "bob's-own!"))
    told = told_rolls(alice, "bob")
    assert told == [seeds.roll(n) for n in range(len(told))] and len(told) > 10
    # The proof, to anyone (carol did not play), and the record, to a player.
    await carol.send(f"show dice {record_id}")
    proof = replies.show_dice(
        record_id, len(told), commitment, seed, "alice", "tulip-7", "bob", "bob's-own!"
    )
    for line in proof:
        await carol.expect(line)
    text = await verified(alice, record_id, tmp_path)
    record = json.loads(text)
    assert recorded_rolls(record_games(record)) == told
    assert record_proof(record)[1] is not None
    if app.settings.database.startswith("sqlite"):  # the operator's export: the same record
        config = tmp_path / "empty.conf"
        config.write_text("")
        command = [sys.executable, "-m", "server", "export", str(record_id), "--json"]
        command += ["--config", str(config), "--database", app.settings.database]
        done = await asyncio.to_thread(
            subprocess.run, command, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == text + "\n"
    # Clients that do not know these lines pass them by: the bots library reads them as
    # plain text, FIBS Cookie Monster names none of them.
    dice_lines = [
        replies.dice_offered(commitment),
        committed,
        replies.dice_revealed(seed, record_id),
        *proof,
    ]
    for line in dice_lines:
        assert parse_event(line) == Text(line)
        assert fcm_cookie(line) == "FIBS_Unknown"


async def test_a_resumed_match_goes_on_with_the_same_dice(
    connect: Connect, settings: Settings, db_target: DbTarget, tmp_path: Path, service: Service
) -> None:
    """Left in the middle, the server stopped and started again on the same database,
    the match resumed: the same commitment and seeds are told, and the whole match,
    before and after, verifies; every roll told is the seeds'."""
    alice, bob = await ready_pair(connect, service.app)
    commitment = await start(alice, bob, "3")
    await alice.expect_prefix("*** Dice of this match (fibs-dice/1)")
    await play_moves((alice, bob), 6)
    await alice.send("leave")
    await alice.expect(replies.YOU_TERMINATED)
    told_before = told_rolls(alice, "bob")
    await service.stop()
    async with running(settings, db_target) as again:
        clients = [await login_at(again.port, name) for name in ("alice", "bob")]
        alice2, bob2 = clients
        await alice2.send("invite bob")
        await bob2.expect(replies.type_join("alice"))
        await bob2.send("join alice")
        line = await alice2.expect_prefix("*** Dice of this match (fibs-dice/1)")
        match = COMMITTED.match(line)
        assert match is not None and match[1] == commitment
        assert match.groups()[1:] == ("alice", match[3], "bob", "bob's-own!")
        for client in (alice2, bob2):
            await client.expect_prefix("points for ")
            await client.expect_prefix("points for ")
            await client.send("board")
        await finish(alice2, bob2)
        seed, record_id = await revealed(alice2)
        seeds = DiceSeeds(bytes.fromhex(seed), (match[3], "bob's-own!"))
        told = told_before + told_rolls(alice2, "bob")
        assert 2 < len(told_before) < len(told)
        assert told == [seeds.roll(n) for n in range(len(told))]
        record = json.loads(await verified(alice2, record_id, tmp_path))
        assert recorded_rolls(record_games(record)) == told
        for client in clients:
            await client.close()


async def test_a_resigned_match_reveals_its_seed(connect: Connect, app: App) -> None:
    """A match won by a resignation is over too: its seed is revealed (D273)."""
    alice, bob = await ready_pair(connect, app)
    commitment = await start(alice, bob, "1")
    await alice.expect_prefix("*** Dice of this match (fibs-dice/1)")
    await alice.send("resign n")
    await bob.expect(replies.wants_to_resign("alice", 1))
    await bob.send("accept")
    for client in (alice, bob):
        seed, _ = await revealed(client)
        assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment


async def test_a_replaced_saved_match_reveals_its_seed(connect: Connect, app: App) -> None:
    """An unlimited match is never won: it ends when the pair starts a new match, which
    replaces it; then both are told its server seed (D273)."""
    alice, bob = await ready_pair(connect, app)
    commitment = await start(alice, bob, "unlimited")
    await play_moves((alice, bob), 2)
    await alice.send("leave")
    await alice.expect(replies.YOU_TERMINATED)
    await bob.expect(replies.has_left("alice"))
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    for me, other in ((alice, "bob"), (bob, "alice")):
        line = await me.expect_prefix(f"*** Your saved match with {other} is over;")
        match = SAVED_REVEALED.match(line)
        assert match is not None, line
        assert line == replies.saved_dice_revealed(other, match[1], commitment)
        assert hashlib.sha256(bytes.fromhex(match[1])).hexdigest() == commitment
        before = me.seen[: me.seen.index(line)]
        assert not any(match[1] in earlier for earlier in before)


async def test_show_dice_refusals_and_matches_without_proof(connect: Connect, app: App) -> None:
    """A test's dice make no dice lines and no proof: ``show dice`` says so."""
    app.dice = lambda: SeededDice(4)
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    await alice.send("invite bob 1")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await finish(alice, bob)
    records = await app.db.list_match_records("alice")
    await alice.send(f"show dice {records[0].id}")
    await alice.expect(replies.dice_not_committed(records[0].id))
    for words, answer in (
        ("show dice", replies.SHOW_DICE_USAGE),
        ("show dice x", replies.SHOW_DICE_USAGE),
        ("show dice 999", replies.no_finished_match(999)),
        ("show d 999", replies.no_finished_match(999)),
        ("export 999 mat", replies.EXPORT_USAGE),
        ("set dice_seed two words", replies.DICE_SEED_INVALID),
        (f"set dice_seed {'x' * 65}", replies.DICE_SEED_INVALID),
    ):
        await alice.send(words)
        await alice.expect(answer)
    await alice.send("set")  # FIBS's list, without dice_seed (D276)
    await alice.expect(replies.set_list({name: "" for name in replies.SET_VARIABLES})[0])
    listed = [await alice.line() for _ in replies.SET_VARIABLES]
    assert not any("dice_seed" in line for line in listed)
    for client in (alice, bob):
        for pattern in (OFFERED, COMMITTED, REVEALED):
            assert not found(client, pattern)


# -- helpers -------------------------------------------------------------------------------


async def login_at(port: int, name: str) -> ScriptedClient:
    """A CLIP client of the server on ``port`` logged in as ``name`` (an account made
    before), with ``board:`` lines."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    client = ScriptedClient(reader, writer)
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send(f"login test_client 1008 {name} secret")
    await client.expect("6")
    await client.send("set boardstyle 3")
    await client.expect(replies.set_changed("boardstyle", "3"))
    return client


async def play_moves(clients: tuple[ScriptedClient, ScriptedClient], count: int) -> None:
    """Both play (first legal play) until ``count`` moves were sent in all."""
    sent = 0
    names = ("alice", "bob")

    async def run(me: ScriptedClient) -> None:
        nonlocal sent
        while sent < count:
            line = await me.line(timeout=10)
            if line == replies.ROLL_OR_DOUBLE:
                await me.send("roll")
            elif line.startswith("board:"):
                view = parse_board(line)
                if view.turn is view.colour and view.player_dice != (0, 0) and view.can_move:
                    plays = legal_plays(view.position(0), 0, Roll(*view.player_dice))
                    sent += 1
                    await me.send("move " + format_moves(plays[0].moves, view.colour))
            elif line == replies.JOIN_NEXT_GAME:
                await me.send("join")

    tasks = [asyncio.create_task(run(client)) for client in clients]
    done, pending = await asyncio.wait(tasks, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in done:
        task.result()
    assert sent >= count, f"only {sent} moves between {names}"
    await asyncio.sleep(0.2)  # the last move is stored and announced
