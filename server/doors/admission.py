"""Who may wait at the ``login:`` prompt: caps on the connections that have not logged in.

A connection is *pre-login* from its accept until a user logs in on it: at the
``login:`` prompt and, after ``guest``, until the new account is registered. Those
connections cost the server a socket (an open file) each and nobody is accountable for
them, so they are capped (issue 18 item 3): at most ``[limits] max_pre_login`` in all
(and at most half of the process's open-file limit, so logged-in users always keep
room), at most ``[limits] max_pre_login_per_address`` from one address. A connection
over a cap gets one line saying which and is closed before the banner. Addresses in
``[limits] trusted_networks`` (the machine itself by default, where a local proxy makes
every client one address and bots reconnect a thousand at once) have a cap of their
own per address, ``max_pre_login_per_trusted_address`` (half the total by default), so
that one client there cannot take every place either (issue 34 item 13, D295).

An IPv6 client counts by its /64 network, the block one subscriber usually gets, so that
stepping through the addresses of one's own network does not escape the per-address
caps; an IPv4-mapped IPv6 address counts as its IPv4 address.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import logging
import math
import resource
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from db.errors import DatabaseOutage
from protocol import replies

log = logging.getLogger(__name__)

IPV6_PREFIX = 64
"""The IPv6 prefix length that counts as one address."""
REGISTRATION_WINDOW = 60.0
"""Seconds over which new accounts are counted (``[limits] registrations_per_minute``)."""


def address_key(host: str) -> str:
    """The address that ``host`` counts as for per-address limits and throttling."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host  # not an IP address (a test double's, or "unknown")
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, IPV6_PREFIX), strict=False))
    return str(address)


def exact_address(host: str) -> str:
    """``host`` as one address (an IPv4-mapped IPv6 address as its IPv4 address)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


class Networks:
    """A set of trusted networks (``[limits] trusted_networks``)."""

    def __init__(self, networks: Iterable[str]) -> None:
        self._networks = [ipaddress.ip_network(n, strict=False) for n in networks]

    def __contains__(self, host: object) -> bool:
        if not isinstance(host, str) or not self._networks:
            return False
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address in network for network in self._networks)


def open_file_limit() -> int | None:
    """The process's open-file limit (the soft one), or None where it is unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_open_file_limit() -> tuple[int, int]:
    """Raise the open-file limit to the hard limit; return (before, now) and log both.

    A server of thousands of connections needs one file per connection; the usual soft
    limit of 1,024 let about 1,000 idle connections lock everyone out (issue 18).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard
    if wanted != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as exc:
            log.warning("cannot raise the open-file limit from %d to %d: %s", soft, hard, exc)
    now, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinity = resource.RLIM_INFINITY
    log.info(
        "open-file limit %s (was %s, hard limit %s)",
        *("unlimited" if n == infinity else n for n in (now, soft, hard)),
    )
    return soft, now


class AddressCounts:
    """What each address holds now (connections waiting to log in, visitors), at most
    ``limit`` each. An address in ``[limits] trusted_networks`` is counted by itself
    (not by its /64) against ``trusted_limit``, or not at all when that is None (a
    total cap kept elsewhere bounds them then)."""

    def __init__(self, limit: int, trusted: Networks, trusted_limit: int | None = None) -> None:
        self.limit = limit
        self.trusted_limit = trusted_limit
        self._trusted = trusted
        self._held: dict[tuple[bool, str], int] = {}

    def _key(self, host: str) -> tuple[tuple[bool, str] | None, int]:
        """The key ``host`` counts under (None: not counted) and its cap."""
        if host not in self._trusted:
            return (False, address_key(host)), self.limit
        if self.trusted_limit is None:
            return None, 0
        return (True, exact_address(host)), self.trusted_limit

    def take(self, host: str) -> bool:
        """Count one more for ``host``; False, and nothing counted, when it holds its
        cap already."""
        key, limit = self._key(host)
        if key is None:
            return True
        held = self._held.get(key, 0)
        if held >= limit:
            return False
        self._held[key] = held + 1
        return True

    def give_back(self, host: str) -> None:
        """One that :meth:`take` counted for ``host`` has gone."""
        key, _ = self._key(host)
        if key is None:
            return
        held = self._held.get(key, 0) - 1
        if held > 0:
            self._held[key] = held
        else:
            self._held.pop(key, None)


class PreLogin:
    """Counts the connections that have not logged in, in all and per address."""

    def __init__(
        self,
        total: int,
        per_address: int,
        trusted: Networks,
        files: int | None,
        per_trusted_address: int | None = None,
    ) -> None:
        self.total = total if files is None else max(1, min(total, files // 2))
        """The cap in all: ``[limits] max_pre_login``, at most half the open-file limit."""
        trusted_cap = per_trusted_address if per_trusted_address else max(1, self.total // 2)
        self._by_address = AddressCounts(per_address, trusted, trusted_cap)
        self._count = 0

    @property
    def per_address(self) -> int:
        """The cap per address: ``[limits] max_pre_login_per_address``."""
        return self._by_address.limit

    @property
    def per_trusted_address(self) -> int:
        """The cap per address of a trusted network: ``[limits]
        max_pre_login_per_trusted_address``, or half the total cap when that is 0."""
        assert self._by_address.trusted_limit is not None
        return self._by_address.trusted_limit

    @property
    def count(self) -> int:
        """Connections counted now."""
        return self._count

    def enter(self, host: str) -> str | None:
        """Count a new connection from ``host``; or, over a cap, the line refusing it
        (and nothing is counted)."""
        if self._count >= self.total:
            return replies.TOO_MANY_WAITING
        if not self._by_address.take(host):
            return replies.TOO_MANY_WAITING_FROM_ADDRESS
        self._count += 1
        return None

    def leave(self, host: str) -> None:
        """The connection from ``host`` logged in or ended: it no longer counts."""
        self._count -= 1
        self._by_address.give_back(host)


class Registrations:
    """New accounts in the last :data:`REGISTRATION_WINDOW` seconds: at most
    ``per_address`` from one address (trusted networks not counted) and ``total`` in
    all (issue 34 item 3: one address registered 1,297 accounts a minute)."""

    def __init__(
        self, total: int, per_address: int, trusted: Networks, now: Callable[[], float]
    ) -> None:
        self._total = total
        self._per_address = per_address
        self._trusted = trusted
        self._now = now
        self._all: deque[float] = deque()
        self._by_address: dict[str, deque[float]] = {}

    def refusal(self, host: str) -> str | None:
        """The line refusing a registration from ``host`` now, or None: it may go on."""
        now = self._now()
        if len(self._recent(self._all, now)) >= self._total:
            return replies.TOO_MANY_REGISTRATIONS
        if host in self._trusted:
            return None
        times = self._by_address.get(address_key(host))
        if times is not None and len(self._recent(times, now)) >= self._per_address:
            return replies.TOO_MANY_REGISTRATIONS_FROM_ADDRESS
        return None

    def count(self, host: str) -> None:
        """A registration from ``host`` is made now (after :meth:`refusal` allowed it).
        Addresses with none in the window are forgotten, so at most ``total`` are kept."""
        now = self._now()
        self._all.append(now)
        for key in [k for k, times in self._by_address.items() if not self._recent(times, now)]:
            del self._by_address[key]
        if host not in self._trusted:
            self._by_address.setdefault(address_key(host), deque()).append(now)

    @staticmethod
    def _recent(times: deque[float], now: float) -> deque[float]:
        """``times`` without those older than the window (dropped for good)."""
        while times and now - times[0] >= REGISTRATION_WINDOW:
            times.popleft()
        return times


class QuietLog:
    """One kind of warning, logged at most once per ``interval`` seconds: the first at
    once, the rest counted and summed up in the next line ("... and 4,312 more")."""

    def __init__(self, logger: logging.Logger, interval: float, clock: Callable[[], float]):
        self._log = logger
        self._interval = interval
        self._clock = clock
        self._last = -math.inf
        self._held = 0

    def warning(self, message: str, *args: object) -> bool:
        """Log ``message % args`` now, or count it; True when it was logged."""
        now = self._clock()
        if now - self._last < self._interval:
            self._held += 1
            return False
        if self._held:
            self._log.warning(
                message + " (and %d more like it in the %.0f s before)",
                *args,
                self._held,
                now - self._last,
            )
        else:
            self._log.warning(message, *args)
        self._held = 0
        self._last = now
        return True


class OutageLog:
    """The log of the database failing for the moment (D296: PostgreSQL restarting or
    cut off, a full disk): one WARNING line without a traceback at most every
    ``interval`` seconds, the others counted in the next."""

    def __init__(self, logger: logging.Logger, interval: float, clock: Callable[[], float]):
        self._log = QuietLog(logger, interval, clock)

    def warning(self, what: str, error: Exception) -> bool:
        """Log that the database could not do ``what``; True when the line was written.

        A full disk is named as such on both back ends (D390): SQLite's own text says
        ``database or disk is full``, PostgreSQL's only ``No space left on device``."""
        if isinstance(error, DatabaseOutage) and error.disk_full:
            return self._log.warning(
                "database not available, its disk is full (%s): %s", what, error
            )
        return self._log.warning("database not available (%s): %s", what, error)


ACCEPT_ERROR_INTERVAL = 60.0
"""Seconds between two log lines about failing accepts (out of open files, ...)."""
OUTAGE_LOG_INTERVAL = 60.0
"""Seconds between two log lines about the database failing for the moment (D296)."""
REFUSAL_LOG_INTERVAL = 10.0
"""Seconds between two log lines about connections refused by a cap."""
_ACCEPT_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, *, interval: float) -> None:
    """Make ``loop`` log failing accepts (asyncio: "socket.accept() out of system
    resource", with a traceback, each time it retries) once per ``interval`` seconds,
    one line without a traceback; every other error goes to the handler it had."""
    previous = loop.get_exception_handler()
    quiet_log = QuietLog(log, interval, time.monotonic)

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        retry = getattr(getattr(context.get("handle"), "_callback", None), "__name__", "")
        if retry == "_start_serving" and isinstance(exc, ValueError | OSError):
            # A retry of a failed accept that fired after the server closed its socket.
            log.debug("accept retry after the server stopped listening: %s", exc)
            return
        if isinstance(exc, OSError) and exc.errno in _ACCEPT_ERRNOS:
            quiet_log.warning(
                "cannot accept connections: %s (open-file limit %s); retrying",
                exc.strerror or exc,
                open_file_limit() or "unlimited",
            )
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
