"""Password hashing: salted scrypt on a small dedicated pool (docs/performance.md §4)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from server.world import passwords
from server.world.passwords import (
    Client,
    ClientGone,
    PasswordChecks,
    ScryptCost,
    hash_password,
    shutdown_hashing,
    verify_password,
)

CHEAP = ScryptCost(n=16, r=1, p=1)


@pytest.fixture(autouse=True)
def fresh_pool() -> Iterator[None]:
    """Each test starts and ends without a pool, so settings it patches take effect."""
    shutdown_hashing()
    yield
    shutdown_hashing()


async def test_hash_and_verify() -> None:
    stored = await hash_password("secret", CHEAP)
    assert stored.startswith("scrypt$16$1$1$")
    assert await verify_password("secret", stored)
    assert not await verify_password("Secret", stored)
    assert not await verify_password("secret", "plain$text")


async def test_hashing_runs_on_the_bounded_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten logins at once: every hash runs on a ``fibs-hash`` thread, never more than
    ``HASH_WORKERS`` at a time, and none on the event loop's thread."""
    monkeypatch.setattr(passwords, "HASH_WORKERS", 2)
    lock = threading.Lock()
    running = 0
    most = 0
    threads: set[str] = set()
    real_derive = passwords._derive

    def slow_derive(password: str, salt: bytes, cost: ScryptCost) -> bytes:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            threads.add(threading.current_thread().name)
        try:
            time.sleep(0.02)  # long enough for the others to pile up
            return real_derive(password, salt, cost)
        finally:
            with lock:
                running -= 1

    monkeypatch.setattr(passwords, "_derive", slow_derive)
    stored = await asyncio.gather(*(hash_password(f"pw{i}", CHEAP) for i in range(5)))
    checks = await asyncio.gather(*(verify_password(f"pw{i}", s) for i, s in enumerate(stored)))
    assert all(checks)
    assert most == 2
    assert threads and all(name.startswith("fibs-hash") for name in threads)
    assert threading.current_thread().name not in threads


def test_the_default_bound_leaves_a_cpu_for_the_event_loop() -> None:
    assert max(1, (os.cpu_count() or 2) - 1) == passwords.HASH_WORKERS


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priority is Linux's")
async def test_hashing_threads_run_at_a_lower_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def niceness(password: str, salt: bytes, cost: ScryptCost) -> bytes:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return b"\0" * 32

    monkeypatch.setattr(passwords, "_derive", niceness)
    await hash_password("secret", CHEAP)
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen == [min(19, mine + passwords.HASH_NICENESS)]


async def test_shutdown_cancels_queued_hashes_and_a_new_pool_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stopping the server does not wait for a queue of logins; a later hash works."""
    monkeypatch.setattr(passwords, "HASH_WORKERS", 1)
    started = threading.Event()
    release = threading.Event()
    real_derive = passwords._derive

    def blocking_derive(password: str, salt: bytes, cost: ScryptCost) -> bytes:
        started.set()
        release.wait(5)
        return real_derive(password, salt, cost)

    monkeypatch.setattr(passwords, "_derive", blocking_derive)
    running = asyncio.ensure_future(hash_password("first", CHEAP))
    queued = asyncio.ensure_future(hash_password("second", CHEAP))
    await asyncio.to_thread(started.wait, 5)
    shutdown_hashing()
    release.set()
    assert (await running).startswith("scrypt$")  # the running one finishes
    with pytest.raises(asyncio.CancelledError):
        await queued
    monkeypatch.setattr(passwords, "_derive", real_derive)
    assert await verify_password("third", await hash_password("third", CHEAP))


class _Held:
    """A hashing pool of one worker whose first check waits until released, and the
    order in which passwords were checked (the password names the check)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.order: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        real = passwords.verify_password_sync

        def recording(password: str, stored: str) -> bool:
            self.order.append(password)
            if password == "first":
                self.started.set()
                self.release.wait(5)
            return real(password, stored)

        monkeypatch.setattr(passwords, "verify_password_sync", recording)


def _client(address: str, present: list[bool] | None = None) -> Client:
    there = present if present is not None else [True]
    return Client(address, lambda: there[0])


async def _checks_waiting(checks: PasswordChecks, count: int) -> None:
    for _ in range(100):
        if checks.waiting() >= count:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{checks.waiting()} checks waiting, not {count}")


async def test_an_address_whose_checks_fail_waits_behind_one_whose_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """D330: a free worker takes the check of the address that failed fewest checks;
    among those, the one served longest ago, so one address's queue of checks does
    not hold up another address's single check."""
    held = _Held(monkeypatch)
    checks = PasswordChecks(time.monotonic, workers=1)
    stored = await hash_password("right", CHEAP)
    assert not await checks.verify("wrong", stored, _client("10.0.0.1"))  # one failure
    first = asyncio.ensure_future(checks.verify("first", stored, _client("10.0.0.9")))
    await asyncio.to_thread(held.started.wait, 5)
    guesses = [
        asyncio.ensure_future(checks.verify(f"guess{i}", stored, _client("10.0.0.1")))
        for i in range(3)
    ]
    owner = asyncio.ensure_future(checks.verify("right", stored, _client("10.0.0.2")))
    more = asyncio.ensure_future(checks.verify("more", stored, _client("10.0.0.9")))
    await _checks_waiting(checks, 5)
    held.release.set()
    assert await owner
    await asyncio.gather(first, more, *guesses)
    assert held.order == ["wrong", "first", "right", "guess0", "more", "guess1", "guess2"]
    assert checks.checks_run == 7


async def test_a_check_whose_connection_went_away_is_dropped_unhashed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection that goes away takes its queued check with it (issue 34 item 12):
    the check is never made, its caller gets ClientGone; a cancelled caller takes its
    check out of the queue."""
    held = _Held(monkeypatch)
    checks = PasswordChecks(time.monotonic, workers=1)
    stored = await hash_password("right", CHEAP)
    first = asyncio.ensure_future(checks.verify("first", stored, _client("10.0.0.9")))
    await asyncio.to_thread(held.started.wait, 5)
    present = [True]
    gone = asyncio.ensure_future(checks.verify("gone", stored, _client("10.0.0.1", present)))
    cancelled = asyncio.ensure_future(checks.verify("cancelled", stored, _client("10.0.0.3")))
    kept = asyncio.ensure_future(checks.verify("right", stored, _client("10.0.0.2")))
    await _checks_waiting(checks, 3)
    present[0] = False
    cancelled.cancel()
    held.release.set()
    assert await kept
    with pytest.raises(ClientGone):
        await gone
    assert cancelled.cancelled()
    await first
    assert held.order == ["first", "right"]
    assert (checks.checks_run, checks.checks_dropped, checks.waiting()) == (2, 1, 0)
    with pytest.raises(ClientGone):  # already gone: not even queued
        await checks.verify("late", stored, _client("10.0.0.1", present))


async def test_closing_drops_every_waiting_check(monkeypatch: pytest.MonkeyPatch) -> None:
    held = _Held(monkeypatch)
    checks = PasswordChecks(time.monotonic, workers=1)
    stored = await hash_password("right", CHEAP)
    first = asyncio.ensure_future(checks.verify("first", stored, _client("10.0.0.9")))
    await asyncio.to_thread(held.started.wait, 5)
    queued = asyncio.ensure_future(checks.hash("new", CHEAP, _client("10.0.0.1")))
    await _checks_waiting(checks, 1)
    checks.close()
    held.release.set()
    with pytest.raises(ClientGone):
        await queued
    assert not await first
    assert held.order == ["first"]


async def test_failures_are_forgotten_after_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    checks = PasswordChecks(lambda: now[0], workers=1)
    stored = await hash_password("right", CHEAP)
    for _ in range(3):
        assert not await checks.verify("wrong", stored, _client("10.0.0.1"))
    assert checks.failed_addresses() == 1
    assert checks._failed("10.0.0.1", now[0]) == 3
    now[0] = passwords.FAILURE_WINDOW + 1
    assert checks._failed("10.0.0.1", now[0]) == 0
    monkeypatch.setattr(passwords, "MAX_ADDRESSES", 1)
    assert not await checks.verify("wrong", stored, _client("10.0.0.2"))
    assert checks.failed_addresses() == 1  # the expired one made room
