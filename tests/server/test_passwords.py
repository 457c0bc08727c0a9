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
from server.world.passwords import ScryptCost, hash_password, shutdown_hashing, verify_password

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
