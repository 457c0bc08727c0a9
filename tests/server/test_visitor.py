"""Watching without an account (D256-D258): ``visitor!`` at the login prompt.

A visitor sees the lobby (the who list and its updates) and watches any match, over the
WebSocket or telnet, through the same connection code as a user, and can do nothing
else; no user sees it in a who list or hears it watch."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from backgammon.dice import SeededDice
from protocol import replies
from protocol.arguments import VISITOR
from server.app import App
from server.config import Settings
from server.service import Service
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, clip_login, connect_from, make_user, running
from .match_driver import Player, play_out
from .sessions import command, ready_pair, telnet_login
from .web_clients import WebClient, web_serving

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Scripted clients answer at once: lift the per-connection command rate limit."""
    return settings.replace(commands_per_second=10_000.0, command_burst=10_000)


@pytest.fixture
async def service(settings: Settings, db_target: DbTarget) -> AsyncIterator[Service]:
    async with web_serving(settings, db_target) as service:
        yield service


@pytest.fixture
async def clients() -> AsyncIterator[list[WebClient]]:
    opened: list[WebClient] = []
    yield opened
    for client in opened:
        await client.close()


async def web_visitor(service: Service) -> WebClient:
    """A CLIP visitor over the WebSocket; its who list read."""
    client = await WebClient.open(service)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send(f"login fibsweb 1008 {VISITOR}")
    return client


async def test_a_visitor_sees_the_lobby_and_watches_every_move(
    service: Service, app: App, connect: Connect, clients: list[WebClient]
) -> None:
    app.dice = lambda: SeededDice(11)
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    visitor = await web_visitor(service)
    clients.append(visitor)
    lobby = await visitor.expect("6")
    assert sorted(line.split()[1] for line in lobby) == ["alice", "bob"]
    assert all(line.startswith("5 ") for line in lobby)
    assert app.presence.count() == 2 and app.presence.visitor_count() == 1
    # Live: a login (CLIP 7 and its CLIP 5), like any CLIP user's.
    carol = await clip_login(connect, app, "carol")
    await visitor.expect("7 carol carol logs in.")
    while not (await visitor.line()).startswith("5 carol "):
        pass
    # In no who list.
    assert [line.split()[1] for line in app.presence.who_list()] == ["alice", "bob", "carol"]
    await carol.send("rawwho")  # its lines: no visitor among what carol saw (below)
    # Nothing a visitor may do but look and watch: one refusal line each.
    for line, word in (("shout hi", "shout"), ("invite bob 1", "invite"), ("move 8-5", "move")):
        await visitor.send(line)
        await visitor.expect(replies.visitor_refused(word))
    # The match, watched move by move by the visitor and by carol (a user).
    await carol.send("set boardstyle 3")
    for watcher in (carol, visitor):
        await watcher.send("watch alice")
        await watcher.expect(replies.now_watching("alice"))
    await alice.expect(replies.is_watching_you("carol"))
    await alice.send("invite bob 1")
    await alice.expect_prefix("** You invited bob to")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await alice.expect(replies.player_joined("bob", 1))
    await play_out(Player(alice, "alice"), Player(bob, "bob"))
    end = next(line for line in alice.seen if " point match " in line)
    if end.startswith("You win"):
        end = replies.wins_match("alice", 1, 1, 0)
    await carol.expect(end)
    await visitor.expect(end)
    carol_boards = [line for line in carol.seen if line.startswith("board:")]
    visitor_boards = [line for line in visitor.seen if line.startswith("board:")]
    assert len(visitor_boards) > 4 and visitor_boards == carol_boards
    # The players never heard of the visitor, nor did anyone else.
    for client in (alice, bob, carol):
        assert not any(VISITOR in line for line in client.seen)
    # A watcher may look at the board; then stop.
    await visitor.send("unwatch")
    await visitor.expect(replies.you_stop_watching("alice"))
    await visitor.send("bye")
    assert await visitor.closed()


async def test_a_telnet_visitor_and_normal_logins(connect: Connect, app: App) -> None:
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send(VISITOR)
    assert await client.prompt(replies.TELNET_PROMPT) == list(replies.VISITOR_WELCOME)
    alice = await telnet_login(connect, app, "alice")
    assert await command(client, "who") != []
    assert await command(client, "whisper hi") == [replies.visitor_refused("whisper")]
    assert await command(client, "toggle") == [replies.visitor_refused("toggle")]
    who = await command(alice, "who")
    assert not any(VISITOR in line for line in who)
    # Not found by name completion either.
    assert await command(alice, "watch visit") == [replies.no_one_there("visit")]
    # A user called visitor logs in as ever: the word is "visitor!", no name.
    await make_user(app, "visitor")
    normal = await telnet_login(connect, app, "visitor", create=False)
    assert app.presence.get("visitor") is not None
    await normal.send("bye")
    assert await normal.closed()
    # No one can register the visitor word as a name.
    guest = await connect()
    await guest.prompt(replies.LOGIN_PROMPT)
    await guest.send("guest")
    await guest.prompt(replies.TELNET_PROMPT)
    await guest.send(f"name {VISITOR}")
    assert replies.NAME_INVALID in await guest.prompt(replies.TELNET_PROMPT)


@pytest.mark.parametrize("limit", [1, 0])
async def test_visitors_are_bounded_apart_from_users(
    connect: Connect, app: App, settings: Settings, limit: int
) -> None:
    app.settings = settings.replace(max_visitors=limit, max_logins=1)
    if limit:
        first = await connect()
        await first.prompt(replies.LOGIN_PROMPT)
        await first.send(VISITOR)
        await first.prompt(replies.TELNET_PROMPT)
    second = await connect()
    await second.prompt(replies.LOGIN_PROMPT)
    await second.send(VISITOR)
    assert await second.expect(replies.TOO_MANY_VISITORS) == []
    assert await second.closed()
    # Visitors take no user's place: the one login max_logins allows still works.
    await clip_login(connect, app, "alice")
    assert app.presence.count() == 1


async def test_a_visitor_is_no_connection_waiting_to_log_in(
    connect: Connect, app: App, settings: Settings
) -> None:
    """D230/D231 are for connections that have not logged in: a visitor has entered, so
    it leaves their count and their time limit (max_visitors bounds it, D257)."""
    app.settings = settings.replace(login_timeout=0.5)
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    assert app.pre_login.count == 1
    await client.send(VISITOR)
    await client.prompt(replies.TELNET_PROMPT)
    assert app.pre_login.count == 0
    await client.nothing(1.0)  # past the time to log in: no "Connection timed out."
    assert await command(client, "version") != []


async def test_visitors_are_capped_per_address(settings: Settings, db_target: DbTarget) -> None:
    """Issue 34 item 6, D268: one address cannot fill max_visitors. Two visitors from
    127.0.0.2 (with no trusted network), a third from there is refused with its line
    and closed while one from 127.0.0.3 comes in; when one of the first leaves, its
    address may send another."""
    capped = settings.replace(max_visitors=5, max_visitors_per_address=2, trusted_networks=())
    async with running(capped, db_target) as app:
        opened: list[ScriptedClient] = []

        async def visitor(source: str) -> ScriptedClient:
            client = await connect_from(app, source)
            opened.append(client)
            await client.prompt(replies.LOGIN_PROMPT)
            await client.send(VISITOR)
            return client

        try:
            first, second = [await visitor("127.0.0.2") for _ in range(2)]
            for entered in (first, second):
                await entered.prompt(replies.TELNET_PROMPT)
            refused = await visitor("127.0.0.2")
            assert await refused.expect(replies.TOO_MANY_VISITORS_FROM_ADDRESS) == []
            assert await refused.closed()
            other = await visitor("127.0.0.3")
            assert await other.prompt(replies.TELNET_PROMPT) == list(replies.VISITOR_WELCOME)
            await first.send("bye")
            assert await first.closed()
            again = await visitor("127.0.0.2")
            assert await again.prompt(replies.TELNET_PROMPT) == list(replies.VISITOR_WELCOME)
            assert app.presence.visitor_count() == 3
        finally:
            for client in opened:
                await client.close()
