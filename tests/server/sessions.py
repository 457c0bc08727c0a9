"""Logging clients in for the chat, info and settings tests: CLIP and telnet mode."""

from __future__ import annotations

from collections.abc import Iterable

from backgammon.dice import ScriptedDice
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.doors.output import Payload
from server.world.session import Session

from .conftest import Connect, ScriptedClient, clip_login, make_user


class RecordingOutput:
    """A session's Output without a socket: keeps every line it is sent (a broadcast's
    payload as its lines) and every prompt, for tests of the registry alone."""

    host = "example.org"

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closing = False

    def send(self, lines: Iterable[str]) -> None:
        self.sent.extend(lines)

    def send_payload(self, payload: Payload) -> None:
        self.sent.extend(payload.text.split("\r\n")[:-1])

    def prompt(self, text: str) -> None:
        self.sent.append(text)

    def echo_off(self) -> None:
        pass

    def echo_on(self) -> None:
        pass

    async def drain(self, timeout: float) -> None:
        pass

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True

    def peer_gone(self) -> bool:
        return self.closing


async def telnet_login(
    connect: Connect, app: App, name: str, password: str = "secret", *, create: bool = True
) -> ScriptedClient:
    """A person logged in through the telnet dialog (§1.6), read up to the first ``> ``."""
    if create and await app.db.get_user(name) is None:
        await make_user(app, name, password)
    client = await connect()
    await client.prompt(replies.LOGIN_PROMPT)
    await client.send(name)
    await client.prompt(replies.PASSWORD_PROMPT)
    await client.send(password)
    await client.expect(replies.user_authenticated(name))
    await client.prompt(replies.TELNET_PROMPT)
    return client


async def command(client: ScriptedClient, line: str) -> list[str]:
    """Telnet mode: send ``line`` and return the reply, the lines before the next prompt."""
    await client.send(line)
    return await client.prompt(replies.TELNET_PROMPT)


async def who_update_seen(client: ScriptedClient, name: str) -> str:
    """Read up to the CLIP 5 line about ``name`` and the end of its who update (``6``,
    after the other users' lines of the same batch); return the 5."""
    line = await client.expect_prefix(f"5 {name} ")
    while (after := await client.line()) != "6":
        assert after.startswith("5 "), f"a who update ends with 6, not {after!r}"
    return line


async def login_all(connect: Connect, app: App, *names: str) -> list[ScriptedClient]:
    """CLIP clients for ``names``, each logged in after the previous one; the login
    announcements to the earlier ones are read, so every client starts quiet."""
    clients: list[ScriptedClient] = []
    for name in names:
        client = await clip_login(connect, app, name)
        for earlier in clients:
            await who_update_seen(earlier, name)
        clients.append(client)
    return clients


def online(app: App, name: str) -> Session:
    """The logged-in session of ``name``."""
    session = app.registry.get(name)
    assert session is not None
    return session


async def ready_pair(connect: Connect, app: App) -> tuple[ScriptedClient, ScriptedClient]:
    """alice and bob logged in as CLIP clients with ``board:`` lines, bob ready to play."""
    alice = await clip_login(connect, app, "alice")
    bob = await clip_login(connect, app, "bob")
    for client in (alice, bob):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
    await bob.send("toggle ready")
    await bob.expect(replies.toggle_message(Toggle.READY, True))
    return alice, bob


async def start_match(
    connect: Connect, app: App, length: int
) -> tuple[ScriptedClient, ScriptedClient]:
    """alice (O, to move with 3-1) against bob in a ``length``-point match, both CLIP
    with ``board:`` lines."""
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: 0
    alice, bob = await ready_pair(connect, app)
    await alice.send(f"invite bob {length}")
    await bob.expect(replies.type_join("alice"))
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    return alice, bob
