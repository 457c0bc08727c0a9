"""Password hashes: salted scrypt (hashlib), computed off the event loop.

A stored hash reads ``scrypt$N$r$p$salt$hash`` (salt and hash in hex), so the cost can
be raised later and old hashes still verify. Passwords are never logged.

Hashing runs on a dedicated pool of :data:`HASH_WORKERS` threads, one fewer than the
CPUs, at a lower priority on Linux. ``hashlib.scrypt`` releases the GIL, so a burst of
logins never blocks the event loop; the bound keeps a burst from also taking every core
from it and caps the memory of the hashes running at once (16 MiB each at the
production cost). The default executor ran up to six at a time
(docs/performance.md §4). Logins beyond the bound wait their turn in the pool's queue;
a login whose connection goes away before its turn is dropped from the queue unhashed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import secrets
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar, TypeVarTuple

_SALT_BYTES = 16
_KEY_BYTES = 32

HASH_WORKERS = max(1, (os.cpu_count() or 2) - 1)
"""Hashes computed at once: one CPU stays for the event loop."""
HASH_NICENESS = 10
"""How much lower than the server's the hashing threads' priority is (Linux ``nice``)."""
_THREAD_PREFIX = "fibs-hash"

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
