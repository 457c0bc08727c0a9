"""``analysis <id>`` over real sockets (issue 29 item 3; D285-D288): a match played to its
end is analysed by gnubg in the background, and the command shows it in telnet mode
(text) and in CLIP mode (lines); a match not analysed yet is queued on demand."""

from __future__ import annotations

import asyncio
import json

import pytest

from backgammon.dice import SeededDice
from db.repository import RATING_LIST_EXPERIENCE
from protocol import replies
from protocol.analysis import analysis_from_json
from protocol.analysis_view import analysis_lines, analysis_text
from protocol.arguments import VISITOR
from server.app import App
from server.config import Settings
from tests.conftest import DbTarget

from .conftest import (
    TIMEOUT,
    Connect,
    ScriptedClient,
    clip_login,
    connect_from,
    make_user,
    running,
)
from .match_driver import Player, play_out
from .sessions import command, ready_pair, telnet_login
from .test_analysis_queue import GNUBG, record_random_match

pytestmark = pytest.mark.skipif(not GNUBG.exists(), reason="needs /usr/games/gnubg")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Analysis on; scripted clients answer at once (no command rate limit)."""
    return settings.replace(analysis="yes", commands_per_second=10_000.0, command_burst=10_000)


async def _lines_until(client: ScriptedClient, last: str) -> list[str]:
    lines = []
    while (line := await client.line(TIMEOUT)) != last:
        lines.append(line)
    return [*lines, last]


@pytest.mark.known_lines
async def test_a_played_match_is_analysed_and_shown(connect: Connect, app: App) -> None:
    app.dice = lambda: SeededDice(5)
    app.coin = lambda: 1
    alice, bob = await ready_pair(connect, app)
    await alice.send("invite bob 3")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await play_out(Player(alice, "alice"), Player(bob, "bob"), limit=30)
    [record] = await app.db.list_match_records("alice")
    await asyncio.wait_for(app.analyses.wait_idle(), 60)
    stored = await app.db.get_analysis(record.id)
    assert stored is not None and stored.state == "done" and stored.result is not None
    analysis = analysis_from_json(stored.result)
    names = (record.player1, record.player2)

    # telnet: the text, for anyone (carol did not play)
    carol = await telnet_login(connect, app, "carol")
    shown = await command(carol, f"analysis {record.id}")
    assert shown == analysis_text(record.id, names, analysis)
    assert shown[0] == replies.analysis_header(record.id, "alice", "bob", 0)

    # CLIP: the lines
    await alice.send(f"analysis {record.id}")
    await alice.expect(replies.analysis_line_header(record.id, "alice", "bob", 0))
    lines = await _lines_until(alice, replies.analysis_line_end(record.id))
    assert [replies.analysis_line_header(record.id, "alice", "bob", 0), *lines] == (
        analysis_lines(record.id, names, analysis)
    )

    # whois: the mean rate of the last analysed matches, for people (D290)
    whois = await command(carol, "whois alice")
    rate_line = (
        f"  Error rate: {stored.rate1:.1f} over the last 1 match analysed by GNU Backgammon."
    )
    assert rate_line in whois
    await alice.send("whois bob")
    await alice.expect("Information about bob:")
    block = await _lines_until(alice, "  No email address.")
    assert not any("Error rate" in line for line in block)

    # bad ids
    assert await command(carol, "analysis x") == [replies.ANALYSIS_USAGE]
    assert await command(carol, "analysis") == [replies.ANALYSIS_USAGE]
    missing = record.id + 100
    assert await command(carol, f"analysis {missing}") == [replies.no_finished_match(missing)]


@pytest.mark.known_lines
async def test_a_match_not_analysed_is_queued_on_demand(connect: Connect, app: App) -> None:
    match_id = await record_random_match(app.db, 3)  # stored without a request
    dave = await clip_login(connect, app, "dave")
    await dave.send(f"analysis {match_id}")
    await dave.expect(replies.analysis_queued(match_id, 0))
    await asyncio.wait_for(app.analyses.wait_idle(), 60)
    await dave.send(f"analysis {match_id}")
    await dave.expect(replies.analysis_line_header(match_id, "alice", "bob", 0))
    await _lines_until(dave, replies.analysis_line_end(match_id))


async def test_with_analysis_off_the_command_says_so(
    settings: Settings, db_target: DbTarget
) -> None:
    async with running(settings.replace(analysis="no"), db_target) as app:
        assert not app.analyses.enabled
        match_id = await record_random_match(app.db, 4)
        erin = await telnet_login(lambda: connect_from(app), app, "erin")
        assert await command(erin, f"analysis {match_id}") == [replies.ANALYSIS_OFF]
        assert await app.db.get_analysis(match_id) is None
        erin.writer.close()


async def test_export_sgf_is_gnubgs_own_file_with_its_analysis(connect: Connect, app: App) -> None:
    """``export <id> sgf`` (D291): the match analysed and saved by gnubg, for its players
    (its lines are gnubg's, not forms of protocol/: no known_lines mark, as for .mat)."""
    match_id = await record_random_match(app.db, 5, length=3)
    alice = await clip_login(connect, app, "alice")
    await alice.send(f"export {match_id} sgf")
    await alice.expect(replies.export_sgf_begin(match_id))
    sgf = await _lines_until(alice, replies.export_end(match_id))
    assert sgf[0].startswith("(;FF[4]GM[6]") and "AP[GNU Backgammon" in sgf[0]
    assert "PW[alice]PB[bob]" in sgf[0] and "MI[length:3]" in sgf[0]
    moves = [line for line in sgf if line.startswith((";B[", ";W["))]
    assert len(moves) > 10
    assert sum("A[" in line for line in moves) > len(moves) // 2  # the plays analysed
    carol = await clip_login(connect, app, "carol")
    await carol.send(f"export {match_id} sgf")
    await carol.expect(replies.export_not_found(match_id))


async def test_the_json_form_has_every_decision(connect: Connect, app: App) -> None:
    """``analysis <id> json`` (D326, the web page's form): one line of JSON between the
    begin and end lines, with every judged decision, in either mode; another word than
    ``json`` is refused with the usage; ``show analysis <id> json`` is the same (D342)."""
    match_id = await record_random_match(app.db, 3, 3)
    await app.analyses.request(match_id)
    await asyncio.wait_for(app.analyses.wait_idle(), 60)
    stored = await app.db.get_analysis(match_id)
    assert stored is not None and stored.result is not None
    analysis = analysis_from_json(stored.result)
    for login in (clip_login, telnet_login):
        client = await login(connect, app, "fay")
        await client.send(f"analysis {match_id} json")
        await client.expect(replies.analysis_json_begin(match_id))
        document = json.loads(await client.line(TIMEOUT))
        assert await client.line(TIMEOUT) == replies.analysis_end(match_id)
        assert document["match"] == match_id and document["players"] == ["alice", "bob"]
        assert document["ply"] == analysis.ply
        assert document["stats"][1]["rate"] == round(analysis.players[1].rate, 2)
        games = document["games"]
        assert [len(g["decisions"]) for g in games] == [len(g.decisions) for g in analysis.games]
        first = analysis.games[0].decisions[0]
        assert games[0]["decisions"][0] == {
            "move": first.move,
            "player": first.player,
            "kind": first.kind,
            "played": first.played,
            "best": first.best,
            "loss": round(first.loss, 4),
            "equity": round(first.equity, 4),
            "mark": first.mark,
        }
        assert any(d["mark"] == "" for g in games for d in g["decisions"])  # not only marks
        await client.send(f"show an {match_id} json")  # D342: the same, by 'show'
        begin = replies.analysis_json_begin(match_id)
        while not (await client.line(TIMEOUT)).endswith(begin):
            pass  # telnet: after the prompt
        assert json.loads(await client.line(TIMEOUT)) == document
        assert await client.line(TIMEOUT) == replies.analysis_end(match_id)
        await client.send(f"analysis {match_id} xml")
        while not (await client.line(TIMEOUT)).endswith(replies.ANALYSIS_USAGE):
            pass  # telnet: after the prompt
        client.writer.close()


@pytest.mark.known_lines
async def test_show_analysis_answers_as_analysis(connect: Connect, app: App) -> None:
    """``show analysis <id> [json]`` (D342): the ``analysis`` command's lines, in each
    mode, its refusals too; a visitor (D256) has no such topic, as no such command."""
    match_id = await record_random_match(app.db, 3, 3)
    await app.analyses.request(match_id)
    await asyncio.wait_for(app.analyses.wait_idle(), 60)
    stored = await app.db.get_analysis(match_id)
    assert stored is not None and stored.result is not None
    analysis = analysis_from_json(stored.result)
    names = ("alice", "bob")

    carol = await telnet_login(connect, app, "carol")
    shown = await command(carol, f"show analysis {match_id}")
    assert shown == analysis_text(match_id, names, analysis)
    assert await command(carol, f"analysis {match_id}") == shown
    assert await command(carol, "show analysis") == [replies.ANALYSIS_USAGE]
    assert await command(carol, "show analysis x") == [replies.ANALYSIS_USAGE]
    assert await command(carol, f"show analysis {match_id} xml") == [replies.ANALYSIS_USAGE]
    missing = match_id + 100
    assert await command(carol, f"show analysis {missing}") == [replies.no_finished_match(missing)]

    dave = await clip_login(connect, app, "dave")
    await dave.send(f"show analysis {match_id}")
    lines = await _lines_until(dave, replies.analysis_line_end(match_id))
    assert lines == analysis_lines(match_id, names, analysis)

    visitor = await connect()
    await visitor.prompt(replies.LOGIN_PROMPT)
    await visitor.send(f"login test_client 1008 {VISITOR}")
    await visitor.expect("6")
    await visitor.send(f"show analysis {match_id}")
    await visitor.expect(replies.dont_know_show("analysis"))
    await visitor.send(f"show dice {match_id}")  # a visitor's topics are still there
    await visitor.expect(replies.dice_not_committed(match_id))


@pytest.mark.known_lines
async def test_the_rating_list_shows_error_rates_when_asked(connect: Connect, app: App) -> None:
    """``ratings ... analysis`` (D341): the header with ``Error rate`` and each line with
    the player's mean rate over their last analysed matches (``-`` for none), in both
    modes; without the word the §4.14 lines are as before."""
    first = await record_random_match(app.db, 3, 3)
    second = await record_random_match(app.db, 4, 1)
    for match_id in (first, second):
        await app.analyses.request(match_id)
    await asyncio.wait_for(app.analyses.wait_idle(), 60)
    rates: dict[str, list[float]] = {"alice": [], "bob": []}
    for match_id in (first, second):
        stored = await app.db.get_analysis(match_id)
        assert stored is not None and stored.rate1 is not None and stored.rate2 is not None
        rates["alice"].append(stored.rate1)
        rates["bob"].append(stored.rate2)
    await make_user(app, "alice", rating=1700.0, experience=120)
    await make_user(app, "bob", rating=1600.0, experience=80)
    await make_user(app, "carol", rating=1650.0, experience=60)  # no analysed match
    plain = [
        replies.ratings_line(1, "alice", 1700.0, 120),
        replies.ratings_line(2, "carol", 1650.0, 60, marked=True),
        replies.ratings_line(3, "bob", 1600.0, 80),
    ]
    alice_rate = sum(rates["alice"]) / 2
    bob_rate = sum(rates["bob"]) / 2
    assert f"{alice_rate:.1f}" != f"{rates['alice'][0]:.1f}"  # the mean, not the last one
    with_rates = [
        replies.ratings_rate_line(1, "alice", 1700.0, 120, alice_rate),
        replies.ratings_rate_line(2, "carol", 1650.0, 60, None, marked=True),
        replies.ratings_rate_line(3, "bob", 1600.0, 80, bob_rate),
    ]
    footer = replies.ratings_who(RATING_LIST_EXPERIENCE)

    carol = await telnet_login(connect, app, "carol")
    assert await command(carol, "ratings") == [replies.RATINGS_HEADER, *plain, footer]
    assert await command(carol, "ratings analysis") == [
        replies.RATINGS_RATES_HEADER,
        *with_rates,
        footer,
    ]
    assert with_rates[1].endswith("  -") and with_rates[0].endswith(f"  {alice_rate:.1f}")

    eve = await clip_login(connect, app, "eve")
    await eve.send("ratings Analysis bob")
    await eve.expect(replies.RATINGS_RATES_HEADER)
    assert await eve.line(TIMEOUT) == replies.ratings_rate_line(
        3, "bob", 1600.0, 80, bob_rate, marked=True
    )
    await eve.send("ratings from 1 to 2")
    await eve.expect(replies.RATINGS_HEADER)
    assert [await eve.line(TIMEOUT), await eve.line(TIMEOUT)] == [
        plain[0],
        replies.ratings_line(2, "carol", 1650.0, 60),
    ]
