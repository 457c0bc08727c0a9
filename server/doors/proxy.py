"""The PROXY protocol: the client's real address, told by a proxy in front (HAProxy).

A proxy such as HAProxy (deploy/haproxy.cfg, docs/cluster.md) opens its own connection
to the server for each client, so the server's peer address is the proxy's. With
``send-proxy`` or ``send-proxy-v2`` it first sends one header naming the client's
address (HAProxy's "The PROXY protocol", versions 1 and 2); a door configured for it
(``[server] proxy_protocol``, ``[web] proxy_protocol``) reads that header before
anything else sees a byte, takes the client's address from it for everything that uses
the peer address (the caps per address, the login throttle, the trusted networks, the
logs, ``whois`` and the last login's host), and refuses a connection whose first bytes
are no valid header (D368).

:class:`HeaderReader` takes a connection's first bytes as they arrive and says when the
header is whole (:class:`ProxyHeader`), or that it can never be one
(:class:`ProxyError`): at the first byte that cannot begin or continue a header, not
after a wait. This module knows no socket; the doors feed it.
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

V1_PREFIX: Final = b"PROXY "
"""The first bytes of a version 1 (text) header."""
V1_MAX: Final = 107
"""The longest version 1 header, its CR LF included (the specification's 107 bytes)."""
V1_END: Final = b"\r\n"
V2_SIGNATURE: Final = b"\r\n\r\n\x00\r\nQUIT\n"
"""The twelve bytes that begin a version 2 (binary) header."""
V2_FIXED: Final = 16
"""The signature, the version and command byte, the family byte and the two-byte length."""
V2_MAX_LENGTH: Final = 1024
"""The most bytes of addresses and TLVs after a version 2 header's first 16 accepted:
HAProxy sends 12 or 36 and a few TLVs when configured to; more is no proxy of ours."""
V2_VERSION: Final = 0x2
V2_LOCAL: Final = 0x0
"""The command of a connection the proxy makes for itself (a health check): the real
peer address stands."""
V2_PROXY: Final = 0x1
V2_TCP4: Final = 0x11
V2_TCP6: Final = 0x21
V2_HEAD: Final = "!BBH"
"""The ``struct`` format of the version and command, the family and the length."""
V2_ADDRESSES: Final = {V2_TCP4: "!4s4sHH", V2_TCP6: "!16s16sHH"}
"""For TCP over IPv4 and IPv6: the ``struct`` format of the addresses and ports."""
V1_FAMILIES: Final = {b"TCP4": ipaddress.IPv4Address, b"TCP6": ipaddress.IPv6Address}
V1_UNKNOWN: Final = b"UNKNOWN"
"""A version 1 header of a connection whose addresses the proxy does not know or tell
(its own health checks): the real peer address stands."""


HEADER_TIMEOUT: Final = 5.0
"""Seconds a connection has to send its whole header: a proxy sends it at once, so a
connection that holds back is closed. Until then it counts in no cap of the doors:
only the proxy can reach a proxied port, and the proxy's own ``maxconn`` bounds it."""
LOG_INTERVAL: Final = 60.0
"""Seconds between two log lines about connections refused for want of a header."""
TIMED_OUT: Final = "no PROXY header in time"
"""Why a connection whose header did not come in time was closed (logged, never sent)."""


class ProxyError(ValueError):
    """The connection's first bytes are not a valid PROXY header: why (for the log)."""


@dataclass(frozen=True, slots=True)
class ProxyHeader:
    """A whole PROXY header."""

    length: int
    """Its bytes: what follows them is the client's own."""
    source: tuple[str, int] | None
    """The client's address and port; None: the proxy names none (v1 ``UNKNOWN``, v2
    ``LOCAL`` or another family), the connection's own peer address stands."""


class HeaderReader:
    """One connection's first bytes, until they make a PROXY header (at most
    :data:`V2_FIXED` + :data:`V2_MAX_LENGTH` bytes are kept)."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> tuple[ProxyHeader, bytes] | None:
        """Add ``data``: the header and the bytes after it once it is whole, else None
        (more is needed).

        :raises ProxyError: the bytes so far can begin no valid header.
        """
        self._buffer += data
        header = parse(self._buffer)
        if header is None:
            return None
        rest = self._buffer[header.length :]
        self._buffer = b""
        return header, rest

    def take(self, data: bytes, refuse: Callable[[str], None]) -> tuple[ProxyHeader, bytes] | None:
        """:meth:`feed`, where a :class:`ProxyError` calls ``refuse`` with why (the door
        closes the connection) and gives None too."""
        try:
            return self.feed(data)
        except ProxyError as exc:
            refuse(str(exc))
            return None


def parse(data: bytes) -> ProxyHeader | None:
    """The PROXY header at the start of ``data``; None when ``data`` is a beginning of
    one that needs more bytes.

    :raises ProxyError: ``data`` begins no valid header.
    """
    if data.startswith(V2_SIGNATURE):
        return _parse_v2(data)
    if data.startswith(V1_PREFIX):
        return _parse_v1(data)
    if V2_SIGNATURE.startswith(data[: len(V2_SIGNATURE)]) or V1_PREFIX.startswith(
        data[: len(V1_PREFIX)]
    ):
        return None  # a beginning of either signature (a split first packet)
    raise ProxyError(f"no PROXY header: {data[:16]!r}")


def _parse_v1(data: bytes) -> ProxyHeader | None:
    end = data.find(V1_END, 0, V1_MAX)
    if end < 0:
        if len(data) >= V1_MAX:
            raise ProxyError("a PROXY v1 header longer than 107 bytes")
        if b"\n" in data:
            raise ProxyError("a PROXY v1 header not ended by CR LF")
        return None
    words = data[len(V1_PREFIX) : end].split(b" ")
    length = end + len(V1_END)
    if words[0] == V1_UNKNOWN:
        return ProxyHeader(length, None)
    family = V1_FAMILIES.get(words[0])
    if family is None:
        raise ProxyError(f"a PROXY v1 header of an unknown protocol {words[0][:8]!r}")
    if len(words) != 5:
        raise ProxyError("a PROXY v1 header without its four fields")
    try:
        address = family(words[1].decode("ascii"))
        family(words[2].decode("ascii"))
        port = _port(words[3])
        _port(words[4])
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProxyError(f"a PROXY v1 header with a bad address or port: {exc}") from None
    return ProxyHeader(length, (str(address), port))


def _port(text: bytes) -> int:
    """A v1 port: 1 to 5 digits, 0-65535."""
    if not text.isdigit() or len(text) > 5 or int(text) > 65535:
        raise ValueError(f"port {text[:8]!r}")
    return int(text)


def _parse_v2(data: bytes) -> ProxyHeader | None:
    if len(data) < V2_FIXED:
        return None
    version_command, family, size = struct.unpack_from(V2_HEAD, data, len(V2_SIGNATURE))
    version, command = version_command >> 4, version_command & 0x0F
    if version != V2_VERSION:
        raise ProxyError(f"a PROXY v2 header of version {version}")
    if command not in (V2_LOCAL, V2_PROXY):
        raise ProxyError(f"a PROXY v2 header with command {command}")
    if size > V2_MAX_LENGTH:
        raise ProxyError(f"a PROXY v2 header of {size} bytes")
    length = V2_FIXED + size
    if len(data) < length:
        return None
    if command == V2_LOCAL or family not in V2_ADDRESSES:
        return ProxyHeader(length, None)
    layout = V2_ADDRESSES[family]
    if size < struct.calcsize(layout):
        raise ProxyError(f"a PROXY v2 header too short for its addresses ({size} bytes)")
    source, _destination, port, _ = struct.unpack_from(layout, data, V2_FIXED)
    return ProxyHeader(length, (str(ipaddress.ip_address(source)), port))
