"""The web page's session token (issue 28 item 2, D320-D323): asked for with ``token!``,
used with ``login <client> <clipver> token! <token>``, replaced, ended, revoked by a
password change, paced like a password. Real sockets, port 0, every read under a
time-out."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from protocol import replies
from server.app import App
from server.config import ConfigError, Settings, load
from server.login import token_digest
from server.service import Service
from tests.conftest import DbTarget

from .conftest import Connect, clip_login
from .web_clients import WebClient, web_login, web_serving

pytestmark = pytest.mark.known_lines


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    changes: dict[str, Any] = getattr(request, "param", {})
    return settings.replace(**changes)


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


async def ask_token(client: WebClient, command: str = "token!") -> str:
    """Send ``command`` and read the token of its answer."""
    await client.send(command)
    answer = await client.line()
    while not answer.startswith("token! "):  # a status notice (CLIP 7, 8) came first
        answer = await client.line()
    word, token, lifetime = answer.split(" ")
    assert (word, lifetime) == ("token!", "43200")
    assert len(token) == 43 and token_digest(token) != token
    return token


async def token_login(service: Service, token: str) -> tuple[WebClient, list[str]]:
    """A new connection logging in with ``token``: the client and the lines after the
    login line up to the ``6`` or the next ``login: ``."""
    client = await WebClient.open(service)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send(f"login fibsweb 1008 token! {token}")
    lines = []
    while True:
        line = await client.line()
        lines.append(line)
        if line in ("6", replies.LOGIN_PROMPT):
            return client, lines


async def test_a_token_logs_in_again_until_it_is_replaced(
    service: Service, app: App, clients: list[WebClient]
) -> None:
    alice = await web_login(service, "alice")
    clients.append(alice)
    token = await ask_token(alice)
    # Only the digest is stored.
    assert await app.db.web_token_user(token) is None
    assert await app.db.web_token_user(token_digest(token)) == "alice"

    again, lines = await token_login(service, token)
    clients.append(again)
    assert lines[0] == replies.ALREADY_LOGGED_IN  # the dropped page's session replaced
    assert lines[1].startswith("1 alice ") and lines[-1] == "6"
    assert await alice.closed()
    # Replaced at once by the page: the old token no longer logs in.
    fresh = await ask_token(again, f"token! {token}")
    assert fresh != token
    refused, lines = await token_login(service, token)
    clients.append(refused)
    assert lines == [replies.LOGIN_PROMPT]
    third, lines = await token_login(service, fresh)
    clients.append(third)
    assert lines[-1] == "6"


async def test_ended_tokens_and_a_password_change(
    service: Service, app: App, clients: list[WebClient]
) -> None:
    alice = await web_login(service, "alice")
    clients.append(alice)
    first, second = await ask_token(alice), await ask_token(alice)
    await alice.send(f"token! end {first}")
    await alice.expect(replies.WEB_TOKEN_ENDED)
    client, lines = await token_login(service, first)
    clients.append(client)
    assert lines == [replies.LOGIN_PROMPT]
    # Another user cannot end alice's token.
    bob = await web_login(service, "bob")
    clients.append(bob)
    await bob.send(f"token! end {second}")
    await bob.expect(replies.WEB_TOKEN_ENDED)
    assert await app.db.web_token_user(token_digest(second)) == "alice"
    await bob.send("token! one two")
    await bob.expect(replies.WEB_TOKEN_USAGE)
    # A password change ends every token of the user.
    await alice.send("password secret:better1:better1")
    await alice.expect(replies.PASSWORD_CHANGED)
    client, lines = await token_login(service, second)
    clients.append(client)
    assert lines == [replies.LOGIN_PROMPT]


@pytest.mark.parametrize("settings", [{"login_attempts": 2}], indirect=True)
async def test_wrong_tokens_count_as_wrong_passwords(
    service: Service, clients: list[WebClient]
) -> None:
    client = await WebClient.open(service)
    clients.append(client)
    await client.expect(replies.LOGIN_PROMPT)
    await client.send("login fibsweb 1008 token! " + "A" * 43)
    assert await client.expect(replies.LOGIN_PROMPT) == []
    await client.send("login fibsweb 1008 token! " + "B" * 43)
    assert await client.closed()


async def test_a_telnet_client_that_never_asks_sees_nothing_new(connect: Connect, app: App) -> None:
    """The CLIP login and its lines are as before; ``token!`` is answered only to who
    sends it, and guests do not have it (they are told to register, as for any
    user's command)."""
    bob = await clip_login(connect, app, "bob")
    await bob.send("token!")
    assert (await bob.line()).startswith("token! ")
    guest = await connect()
    await guest.prompt(replies.LOGIN_PROMPT)
    await guest.send("guest")
    await guest.prompt(replies.TELNET_PROMPT)
    await guest.send("token!")
    assert "'token!' is for registered users" in await guest.line()


def test_the_token_settings(tmp_path: Path) -> None:
    shipped = load(Path(__file__).parents[2] / "fibs.conf")
    assert shipped.web_token_lifetime == Settings().web_token_lifetime == 43200
    assert shipped.web_tokens_per_user == Settings().web_tokens_per_user == 10
    path = tmp_path / "fibs.conf"
    path.write_text("[web]\ntoken_lifetime = 59\n")
    with pytest.raises(ConfigError, match=r"^\[web\] token_lifetime must be 60"):
        load(path)
    path.write_text("[web]\ntokens_per_user = 0\n")
    with pytest.raises(ConfigError, match=r"^\[web\] tokens_per_user must be 1"):
        load(path)
