"""Password hashes: salted scrypt (hashlib), computed off the event loop.

A stored hash reads ``scrypt$N$r$p$salt$hash`` (salt and hash in hex), so the cost can
be raised later and old hashes still verify. Hashing runs in a worker thread: a burst
of logins never blocks the event loop. Passwords are never logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from dataclasses import dataclass

_SALT_BYTES = 16
_KEY_BYTES = 32


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
    """A new salted hash, computed in a worker thread."""
    return await asyncio.to_thread(hash_password_sync, password, cost)


async def verify_password(password: str, stored: str) -> bool:
    """Check ``password`` against ``stored`` in a worker thread."""
    return await asyncio.to_thread(verify_password_sync, password, stored)
