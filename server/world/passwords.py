"""Password hashes: salted scrypt (hashlib), computed off the event loop, fairly.

A stored hash reads ``scrypt$N$r$p$salt$hash`` (salt and hash in hex), so the cost can
be raised later and old hashes still verify. Passwords are never logged.

Hashing runs on a dedicated pool of :data:`HASH_WORKERS` threads, one fewer than the
CPUs, at a lower priority on Linux. ``hashlib.scrypt`` releases the GIL, so a burst of
logins never blocks the event loop; the bound keeps a burst from also taking every core
from it and caps the memory of the hashes running at once (16 MiB each at the
production cost). The default executor ran up to six at a time
(docs/performance.md §4).

What waits for a worker waits in :class:`PasswordChecks`, not in the pool's queue (D330,
issue 34 item 12): the pool's queue was first come, first served, so one client that
sent many wrong passwords on many connections (a trusted address has no address pace,
server/doors/throttle.py) queued its checks ahead of everyone's, and new logins could
not complete for 88.9 s. Now the checks wait per client address, and a free worker
takes the next check of the address that (1) has no check running, (2) has failed the
fewest checks in the last :data:`FAILURE_WINDOW` seconds, (3) was served longest ago.
So one address, however many checks it queues, gets one worker's turn in as many
turns as there are addresses waiting, and an address whose checks keep failing waits
behind every address whose do not: a well-behaved user's check waits for the check
running now, not for the queue. A check whose connection has gone when its turn comes
is dropped unhashed and its caller gets :class:`ClientGone` (a connection that goes
away takes its queued check with it), and a cancelled caller takes its check out of
the queue.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import os
import secrets
import sys
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar, TypeVarTuple

_SALT_BYTES = 16
_KEY_BYTES = 32

HASH_WORKERS = max(1, (os.cpu_count() or 2) - 1)
"""Hashes computed at once: one CPU stays for the event loop."""
HASH_NICENESS = 10
"""How much lower than the server's the hashing threads' priority is (Linux ``nice``)."""
_THREAD_PREFIX = "fibs-hash"
FAILURE_WINDOW = 600.0
"""Seconds after its last failed check at which an address's failures are forgotten
(the login throttle's window, server/doors/throttle.py)."""
MAX_ADDRESSES = 100_000
"""Addresses whose failures are kept at most; past this the oldest half is forgotten."""
PURGE_EVERY = 1024
"""Failed checks between two sweeps of the expired failures."""

_pool: ThreadPoolExecutor | None = None
_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")


@dataclass(frozen=True)
class ScryptCost:
    n: int = 16384
    r: int = 8
    p: int = 1


def _derive(password: str, salt: bytes, cost: ScryptCost) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=cost.n,
        r=cost.r,
        p=cost.p,
        maxmem=256 * cost.n * cost.r * cost.p + 1_048_576,
        dklen=_KEY_BYTES,
    )


def hash_password_sync(password: str, cost: ScryptCost) -> str:
    """A new salted hash of ``password`` (blocking; use :func:`hash_password`)."""
    salt = secrets.token_bytes(_SALT_BYTES)
    key = _derive(password, salt, cost)
    return f"scrypt${cost.n}${cost.r}${cost.p}${salt.hex()}${key.hex()}"


def verify_password_sync(password: str, stored: str) -> bool:
    """True when ``password`` matches ``stored`` (blocking; use :func:`verify_password`)."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt":
            return False
        cost = ScryptCost(int(n), int(r), int(p))
        expected = bytes.fromhex(key)
        actual = _derive(password, bytes.fromhex(salt), cost)
    except ValueError:
        return False
    return hmac.compare_digest(actual, expected)


async def hash_password(password: str, cost: ScryptCost) -> str:
    """A new salted hash, computed on the hashing pool."""
    return await _on_pool(hash_password_sync, password, cost)


async def verify_password(password: str, stored: str) -> bool:
    """Check ``password`` against ``stored`` on the hashing pool."""
    return await _on_pool(verify_password_sync, password, stored)


def shutdown_hashing() -> None:
    """Stop the hashing pool: hashes still queued are cancelled, running ones finish.

    Called when the server stops (:meth:`server.service.Service.stop`), so that a queue of
    logins does not hold up the exit (the interpreter joins pool threads at exit). A
    later hash starts a new pool, so tests may run one app after another.
    """
    global _pool
    pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


async def _on_pool(func: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``func(*args)`` on the hashing pool, made on first use."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(
            max_workers=HASH_WORKERS,
            thread_name_prefix=_THREAD_PREFIX,
            initializer=_lower_priority,
        )
    return await asyncio.get_running_loop().run_in_executor(_pool, func, *args)


def _lower_priority() -> None:
    """Pool thread initializer: make this thread yield the CPU to the event loop.

    On Linux ``setpriority`` with a thread id applies to that thread only, and raising
    one's own niceness needs no privilege. Elsewhere (or if it fails) the thread keeps
    the normal priority: the bound on the pool still holds, so errors are ignored.
    """
    if sys.platform == "linux":
        try:
            tid = threading.get_native_id()
            os.setpriority(
                os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + HASH_NICENESS
            )
        except OSError:
            pass


class ClientGone(ConnectionError):
    """The check's connection went away before its turn: it was dropped unhashed. A
    ``ConnectionError``, so the connection's task ends as for any lost client."""


@dataclass(frozen=True, slots=True)
class Client:
    """Whose check it is: the address checks are shared fairly between, and whether the
    connection that waits for the answer is still there."""

    address: str
    """The client's address as limits count it (server/doors/admission.py address_key)."""
    present: Callable[[], bool]
    """False once the connection is closing or closed: its check is dropped."""


@dataclass(eq=False, slots=True)
class _Check:
    """One check (or new hash) waiting for a worker."""

    work: Callable[[], Any]
    client: Client
    answer: asyncio.Future[Any]
    verifies: bool
    """A password check (its False counts as a failure), not a new hash."""


@dataclass(slots=True)
class _Address:
    """One address's checks waiting or running, and when it was last served."""

    waiting: deque[_Check] = field(default_factory=deque)
    running: int = 0
    served: int = 0
    """The turn at which this address's last check started (0: never)."""


@dataclass(slots=True)
class _Failures:
    """An address's failed checks, forgotten :data:`FAILURE_WINDOW` after the last."""

    count: int = 0
    last: float = 0.0


class PasswordChecks:
    """The password checks and new hashes of one server, handed to the hashing pool
    :data:`HASH_WORKERS` at a time, fairly between client addresses (module docstring,
    D330)."""

    def __init__(self, now: Callable[[], float], workers: int = HASH_WORKERS) -> None:
        self._now = now
        self._workers = workers
        self._running = 0
        self._turn = 0
        self._active: dict[str, _Address] = {}
        """The addresses with a check waiting or running."""
        self._failures: dict[str, _Failures] = {}
        self._closed = False
        self._failures_counted = 0
        self.checks_run = 0
        """Checks and hashes computed since the start."""
        self.checks_dropped = 0
        """Checks dropped unhashed: their connection had gone when their turn came."""

    async def verify(self, password: str, stored: str, client: Client) -> bool:
        """Whether ``password`` matches ``stored``, checked in ``client``'s turn.

        :raises ClientGone: the connection went away before the check's turn."""
        result: bool = await self._submit(
            lambda: verify_password_sync(password, stored), client, verifies=True
        )
        return result

    async def hash(self, password: str, cost: ScryptCost, client: Client) -> str:
        """A new salted hash of ``password``, made in ``client``'s turn.

        :raises ClientGone: the connection went away before the hash's turn."""
        result: str = await self._submit(
            lambda: hash_password_sync(password, cost), client, verifies=False
        )
        return result

    def waiting(self) -> int:
        """Checks waiting for a worker now."""
        return sum(len(a.waiting) for a in self._active.values())

    def failed_addresses(self) -> int:
        """Addresses whose failed checks are remembered now."""
        return len(self._failures)

    def close(self) -> None:
        """The server stops: every waiting check is dropped (:class:`ClientGone`), and
        so is any check asked for later."""
        self._closed = True
        for entry in self._active.values():
            while entry.waiting:
                check = entry.waiting.popleft()
                if not check.answer.done():
                    check.answer.set_exception(ClientGone())

    async def _submit(self, work: Callable[[], Any], client: Client, *, verifies: bool) -> Any:
        if self._closed or not client.present():
            raise ClientGone()
        check = _Check(work, client, asyncio.get_running_loop().create_future(), verifies)
        entry = self._active.setdefault(client.address, _Address())
        entry.waiting.append(check)
        self._start()
        try:
            return await check.answer
        finally:
            if not check.answer.done():  # cancelled while waiting: out of the queue
                check.answer.cancel()
                if check in entry.waiting:
                    entry.waiting.remove(check)
                self._release(client.address, entry)

    def _failed(self, address: str, now: float) -> int:
        failures = self._failures.get(address)
        if failures is None or now - failures.last > FAILURE_WINDOW:
            return 0
        return failures.count

    def _next(self) -> tuple[str, _Check] | None:
        """The check whose turn it is (module docstring), dropping those whose
        connection has gone; None when none waits."""
        now = self._now()
        best: tuple[tuple[int, int, int], str] | None = None
        for address, entry in list(self._active.items()):
            while entry.waiting and (
                entry.waiting[0].answer.done() or not entry.waiting[0].client.present()
            ):
                gone = entry.waiting.popleft()
                if not gone.answer.done():  # not cancelled: its connection has gone
                    self.checks_dropped += 1
                    gone.answer.set_exception(ClientGone())
            if not entry.waiting:
                self._release(address, entry)
                continue
            rank = (min(entry.running, 1), self._failed(address, now), entry.served)
            if best is None or rank < best[0]:
                best = (rank, address)
        if best is None:
            return None
        address = best[1]
        return address, self._active[address].waiting.popleft()

    def _start(self) -> None:
        """Hand checks to the pool while a worker is free."""
        while self._running < self._workers and not self._closed:
            chosen = self._next()
            if chosen is None:
                return
            address, check = chosen
            entry = self._active[address]
            self._running += 1
            entry.running += 1
            self._turn += 1
            entry.served = self._turn
            self.checks_run += 1
            done = asyncio.ensure_future(_on_pool(check.work))
            done.add_done_callback(functools.partial(self._finished, check, address))

    def _finished(self, check: _Check, address: str, done: asyncio.Future[Any]) -> None:
        self._running -= 1
        entry = self._active.get(address)
        if entry is not None:
            entry.running -= 1
            self._release(address, entry)
        if done.cancelled():
            outcome: BaseException | None = ClientGone()
        else:
            outcome = done.exception()
        if outcome is None and check.verifies and done.result() is False:
            self._count_failure(address)
        if not check.answer.done():
            if outcome is None:
                check.answer.set_result(done.result())
            else:
                check.answer.set_exception(outcome)
        self._start()

    def _release(self, address: str, entry: _Address) -> None:
        """Forget ``address``'s queue once nothing of it waits or runs."""
        if not entry.waiting and not entry.running and self._active.get(address) is entry:
            del self._active[address]

    def _count_failure(self, address: str) -> None:
        now = self._now()
        self._failures_counted += 1
        if self._failures_counted % PURGE_EVERY == 0:
            self._forget_failures(now)
        failures = self._failures.get(address)
        if failures is None:
            if len(self._failures) >= MAX_ADDRESSES:
                self._forget_failures(now)
            failures = self._failures[address] = _Failures()
        failures.count = self._failed(address, now) + 1
        failures.last = now

    def _forget_failures(self, now: float) -> None:
        """Too many addresses remembered: forget the expired ones, and if that is not
        enough, the half that failed longest ago."""
        for address in [a for a, f in self._failures.items() if now - f.last > FAILURE_WINDOW]:
            del self._failures[address]
        if len(self._failures) >= MAX_ADDRESSES:
            oldest = sorted(self._failures, key=lambda a: self._failures[a].last)
            for address in oldest[: len(oldest) // 2]:
                del self._failures[address]
