"""Login throttling (issue 18 item 4, server/doors/throttle.py): attempts counted per address and
per account name before the password is checked, over real sockets on a hand-driven
clock, so that "waits" means "is not answered until the clock is moved on"."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from protocol import replies
from server.app import App
from server.config import Settings
from server.doors import throttle as throttle_module
from server.doors.throttle import Attempt, LoginThrottle
from server.service import STOP_GRACE
from server.world import passwords
from server.world.passwords import ScryptCost
from tests.conftest import DbTarget

from .conftest import ScriptedClient, connect_from, make_user, running, serving
from .fake_clock import FakeTimer


@pytest.fixture
def timer() -> FakeTimer:
    return FakeTimer()


@pytest.fixture
async def app(settings: Settings, db_target: DbTarget, timer: FakeTimer) -> AsyncIterator[App]:
    """Failed logins wait 1 s, doubling; 127.0.0.1 is not trusted, so the address counts;
    no time limit to log in (the clock moves far)."""
    throttled = settings.replace(
        login_delay=1.0, trusted_networks=(), login_timeout=0.0, login_attempts=10_000
    )
    async with running(throttled, db_target, timer=timer) as app:
        await make_user(app, "alice")
        await make_user(app, "mallory", "mallorys")
        yield app


@pytest.fixture
async def clients(app: App) -> AsyncIterator[list[ScriptedClient]]:
    opened: list[ScriptedClient] = []
    yield opened
    for client in opened:
        await client.close()


async def at_prompt(
    app: App, opened: list[ScriptedClient], source: str = "127.0.0.1"
) -> ScriptedClient:
    """A client at the ``login:`` prompt, connected from ``source`` (a loopback address)."""
    client = await connect_from(app, source)
    opened.append(client)
    await client.prompt(replies.LOGIN_PROMPT)
    return client


def guess(name: str, password: str = "wrong") -> str:
    return f"login test_client 1008 {name} {password}"


async def answered(client: ScriptedClient) -> None:
    """The failed login is answered: the ``login:`` prompt again."""
    await client.prompt(replies.LOGIN_PROMPT, timeout=2.0)


async def unanswered(client: ScriptedClient) -> None:
    """Nothing comes back (the attempt waits its turn)."""
    await asyncio.sleep(0.2)
    data = await _peek(client)
    assert not data, f"answered early: {data!r}"


async def _peek(client: ScriptedClient) -> bytes:
    try:
        return await asyncio.wait_for(client.reader.read(1024), 0.05)
    except TimeoutError:
        return b""


async def test_pipelined_guesses_wait_like_sequential_ones(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """Three guesses at alice sent at once on three connections: the first is checked
    at once, the second 1 s after it, the third 2 s after that (issue 18: pipelined
    guesses got 3 a second)."""
    guessers = [await at_prompt(app, clients) for _ in range(3)]
    for client in guessers:
        await client.send(guess("alice"))
    await answered(guessers[0])
    await unanswered(guessers[1])
    await unanswered(guessers[2])
    timer.advance(1.0)
    done = await _first_answered(guessers[1:])
    rest = guessers[2] if done is guessers[1] else guessers[1]
    await unanswered(rest)
    timer.advance(1.0)
    await unanswered(rest)
    timer.advance(1.0)
    await answered(rest)


async def _first_answered(candidates: list[ScriptedClient]) -> ScriptedClient:
    for _ in range(40):
        for client in candidates:
            if await _peek(client):
                return client
    raise AssertionError("no attempt was answered after its wait")


async def test_names_and_addresses_count_separately(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """A guess at another name still waits for the address's count."""
    client = await at_prompt(app, clients)
    await client.send(guess("alice"))
    await answered(client)
    await client.send(guess("bob"))  # another name, the same address: waits 1 s
    await unanswered(client)
    timer.advance(1.0)
    await answered(client)
    assert app.throttle.wait_for("name:bob") == 1.0
    assert app.throttle.wait_for("addr:127.0.0.1") == 2.0


async def test_a_success_takes_back_only_its_own_attempt(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """mallory guesses alice's password twice, then logs in to her own account: she
    waits her turn like a guess, her success takes back that one attempt and leaves the
    address's count of the guesses as it was (issue 18: a successful login from the
    address reset it), and her next guess waits for it."""
    client = await at_prompt(app, clients)
    await client.send(guess("alice"))
    await answered(client)
    timer.advance(1.0)
    await client.send(guess("alice"))
    await answered(client)
    assert app.throttle.wait_for("addr:127.0.0.1") == 2.0  # two attempts counted
    own = await at_prompt(app, clients)
    await own.send(guess("mallory", "mallorys"))
    await unanswered(own)
    timer.advance(2.0)
    await own.expect("6")
    assert app.throttle.wait_for("addr:127.0.0.1") == 2.0  # still two, not none (nor three)
    await client.send(guess("alice"))
    await unanswered(client)
    timer.advance(2.0)
    await answered(client)
    assert app.throttle.wait_for("name:alice") == 4.0  # three guesses at alice


async def test_guessing_from_many_addresses_never_locks_the_owner_out(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """Issue 34 item 2, D266: eight addresses guess alice's password, each again as soon
    as it may. Every guessing address is held back by the name's count (30 s a guess
    once there are many), while alice, from addresses that have not failed on her name,
    logs in at once, again and again during the attack, without the clock moving."""
    guessers = [await at_prompt(app, clients, f"127.0.0.{i}") for i in range(2, 10)]
    for client in guessers:  # each address's first try is not held back by the others'
        await client.send(guess("alice"))
        await answered(client)
    assert app.throttle.wait_for("name:alice") == 30.0
    for client in guessers:
        await client.send(guess("alice"))
    for _ in range(3):
        for client in guessers:
            await unanswered(client)
        for source in ("127.0.0.20", "127.0.0.21"):
            owner = await at_prompt(app, clients, source)
            await owner.send(guess("alice", "secret"))
            await owner.expect("6", timeout=2.0)
            await owner.close()
        timer.advance(1.0)
    wrong = await at_prompt(app, clients, "127.0.0.2")  # an address that failed on alice
    await wrong.send(guess("alice", "secret"))  # waits, whatever it sends
    await unanswered(wrong)
    timer.advance(30.0)
    assert await _first_answered(guessers)  # the guesses go on, one each 30 s or so


async def test_a_login_clears_only_its_own_address_on_the_name(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """An address that logs in after a typo is not held back at its next login by the
    name's count (its success shows it knows the password; its address's count still
    paces it), and its success takes back no other address's failures."""
    other = await at_prompt(app, clients, "127.0.0.2")
    await other.send(guess("alice"))
    await answered(other)
    owner = await at_prompt(app, clients, "127.0.0.3")
    await owner.send(guess("alice"))  # a typo
    await answered(owner)
    await owner.send(guess("alice", "secret"))  # waits for the name's count: 2 s
    await unanswered(owner)
    timer.advance(2.0)
    await owner.expect("6")
    again = await at_prompt(app, clients, "127.0.0.3")
    await again.send(guess("alice", "secret"))  # the address's own count: its typo, 1 s
    await unanswered(again)
    timer.advance(1.0)
    await again.expect("6")  # the name's count would have been 2 s
    await other.send(guess("alice"))
    await unanswered(other)  # the other address still waits for the name's count


async def test_no_count_overflows(
    app: App, clients: list[ScriptedClient], timer: FakeTimer
) -> None:
    """Past 1,024 failures the old doubling overflowed: each further failure closed the
    connection at once, with a traceback. The wait stays at its cap."""
    client = await at_prompt(app, clients)
    for _ in range(1_030):
        await client.send(guess("alice"))
        await answered(client)
        timer.advance(30.0)
    await client.send(guess("alice"))
    await answered(client)
    assert app.throttle.wait_for("name:alice") == 30.0
    await client.send(guess("alice"))
    await unanswered(client)
    timer.advance(30.0)
    await answered(client)


async def test_an_unknown_name_costs_a_real_hash(
    app: App, clients: list[ScriptedClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The password of a name nobody has is checked against a hash of the configured
    cost (issue 18: a cheaper one made those replies 48 ms faster)."""
    checked: list[ScryptCost] = []
    real = passwords.verify_password_sync

    def recording(password: str, stored: str) -> bool:
        _, n, r, p, *_ = stored.split("$")
        checked.append(ScryptCost(int(n), int(r), int(p)))
        return real(password, stored)

    monkeypatch.setattr(passwords, "verify_password_sync", recording)
    client = await at_prompt(app, clients)
    await client.send(guess("nobody"))
    await answered(client)
    assert checked == [app.cost]


@pytest.mark.alone  # a time limit is asserted
async def test_the_stop_does_not_wait_for_throttled_logins(
    settings: Settings, db_target: DbTarget
) -> None:
    """A login waiting its turn (here 30 s) ends when the server stops (issue 18: SIGTERM
    took 7 s while failed-login delays ran out)."""
    throttled = settings.replace(login_delay=30.0, trusted_networks=())
    async with serving(throttled, db_target) as service:
        app = service.app
        opened: list[ScriptedClient] = []
        try:
            client = await at_prompt(app, opened)
            await client.send(guess("alice"))
            await answered(client)
            await client.send(guess("alice"))
            await unanswered(client)
            started = time.monotonic()
            await service.stop()
            assert time.monotonic() - started < STOP_GRACE
            assert await client.closed(2.0)
        finally:
            for each in opened:
                await each.close()


async def test_a_trusted_address_counts_only_names(
    settings: Settings, db_target: DbTarget, timer: FakeTimer
) -> None:
    """From 127.0.0.1 (trusted by default) a guess at another name does not wait; a
    second guess at the same name does."""
    throttled = settings.replace(login_delay=1.0, login_timeout=0.0)
    async with running(throttled, db_target, timer=timer) as app:
        opened: list[ScriptedClient] = []
        try:
            client = await at_prompt(app, opened)
            await client.send(guess("alice"))
            await answered(client)
            await client.send(guess("bob"))
            await answered(client)
            await client.send(guess("alice"))
            await unanswered(client)
            timer.advance(1.0)
            await answered(client)
        finally:
            for each in opened:
                await each.close()


async def test_counts_past_the_window_are_forgotten() -> None:
    """A client that tries many names leaves no count behind for longer than the window:
    memory comes back after an attack (issue 18's hostile check)."""
    timer = FakeTimer(start=1000.0)
    throttle = LoginThrottle(timer, 1.0)
    for i in range(throttle_module.PURGE_EVERY):
        assert await throttle.admit(Attempt("192.0.2.1", f"guess{i}", trusted=True))
    assert len(throttle) == 2 * throttle_module.PURGE_EVERY  # each name and its pair
    timer.advance(throttle_module.WINDOW + 1)
    for i in range(throttle_module.PURGE_EVERY):
        assert await throttle.admit(Attempt("192.0.2.1", f"later{i}", trusted=True))
    assert len(throttle) <= 2 * throttle_module.PURGE_EVERY  # the first names are gone
    assert throttle.wait_for("name:guess0") == 0.0


async def test_a_login_that_never_failed_leaves_no_count() -> None:
    """Successful logins keep nothing: a thousand at once (a web flood's logged-in
    sockets, issue 34 item 9) leave no thousand counts pinning the memory they were made
    in; a count with failures before the success keeps them (the name's, the address's)."""
    timer = FakeTimer(start=1000.0)
    throttle = LoginThrottle(timer, 1.0)
    for i in range(1000):
        for trusted in (True, False):
            attempt = Attempt(f"192.0.2.{i % 200}", f"user{i}", trusted=trusted)
            assert await throttle.admit(attempt)
            throttle.succeeded(attempt)
    assert len(throttle) == 0
    guess = Attempt("198.51.100.7", "alice")
    assert await throttle.admit(guess)  # a failure: kept under all three keys
    timer.advance(1.0)
    owner = Attempt("203.0.113.9", "alice")
    assert await throttle.admit(owner)
    throttle.succeeded(owner)
    assert throttle.wait_for("name:alice") == 1.0  # the guess still counted
    assert len(throttle) == 3  # the guess's pair, name and address: the owner's are gone
