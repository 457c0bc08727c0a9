"""The PROXY protocol header (HAProxy's specification, versions 1 and 2), read from a
connection's first bytes: whole, split, malformed, truncated and too long, without
sockets (server/doors/proxy.py, D368)."""

from __future__ import annotations

import socket
import struct

import pytest

from server.doors.proxy import (
    V1_MAX,
    V2_MAX_LENGTH,
    V2_SIGNATURE,
    HeaderReader,
    ProxyError,
    ProxyHeader,
    parse,
)

V1_TCP4 = b"PROXY TCP4 203.0.113.7 10.0.0.1 51234 4321\r\n"
V1_TCP6 = b"PROXY TCP6 2001:db8::7 2001:db8::1 51234 4321\r\n"


def v2(command: int, family: int, body: bytes) -> bytes:
    """A version 2 header: the signature, version 2 with ``command``, ``family``, the
    length, and ``body`` (the addresses and any TLVs)."""
    return V2_SIGNATURE + struct.pack("!BBH", 0x20 | command, family, len(body)) + body


def v2_tcp4(source: str, port: int, tlvs: bytes = b"") -> bytes:
    body = socket.inet_aton(source) + socket.inet_aton("10.0.0.1") + struct.pack("!HH", port, 4321)
    return v2(0x1, 0x11, body + tlvs)


def test_v1_tcp4_and_tcp6_name_the_client() -> None:
    assert parse(V1_TCP4 + b"login") == ProxyHeader(len(V1_TCP4), ("203.0.113.7", 51234))
    assert parse(V1_TCP6) == ProxyHeader(len(V1_TCP6), ("2001:db8::7", 51234))


def test_v1_unknown_keeps_the_real_address() -> None:
    header = b"PROXY UNKNOWN\r\n"
    assert parse(header) == ProxyHeader(len(header), None)
    header = b"PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n"
    assert parse(header) == ProxyHeader(len(header), None)


def test_v2_tcp4_tcp6_with_tlvs_and_local() -> None:
    tlv = bytes((0x05, 0x00, 0x03)) + b"abc"  # a unique id TLV
    header = v2_tcp4("198.51.100.9", 40000, tlv)
    assert parse(header + b"GET /") == ProxyHeader(len(header), ("198.51.100.9", 40000))
    six = socket.inet_pton(socket.AF_INET6, "2001:db8::9")
    header = v2(0x1, 0x21, six + six + struct.pack("!HH", 1, 2))
    assert parse(header) == ProxyHeader(len(header), ("2001:db8::9", 1))
    local = v2(0x0, 0x00, b"")  # HAProxy's own health check
    assert parse(local) == ProxyHeader(16, None)
    unix = v2(0x1, 0x31, bytes(216))  # a family without an IP address
    assert parse(unix) == ProxyHeader(16 + 216, None)


@pytest.mark.parametrize("header", [V1_TCP4, v2_tcp4("192.0.2.1", 5)])
def test_a_header_split_anywhere_is_read_whole_and_what_follows_kept(header: bytes) -> None:
    for cut in range(1, len(header)):
        reader = HeaderReader()
        assert reader.feed(header[:cut]) is None
        found = reader.feed(header[cut:] + b"guest\r\n")
        assert found is not None
        assert found[0].length == len(header) and found[1] == b"guest\r\n"


@pytest.mark.parametrize(
    "data",
    [
        b"guest\r\n",  # no header at all: refused at its first byte
        b"GET / HTTP/1.1\r\n",
        b"\xff\xfd\x18",  # a telnet negotiation
        b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
        b"PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n",  # an IPv6 address said to be IPv4
        b"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",
        b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",  # LF without CR
        b"PROXY TCP4 1.2.3.\xff 5.6.7.8 1 2\r\n",
        v2(0x1, 0x11, bytes(8)),  # too short for two IPv4 addresses and ports
        V2_SIGNATURE + bytes((0x11, 0x11, 0, 12)) + bytes(12),  # version 1 in a v2 header
        V2_SIGNATURE + bytes((0x22, 0x11, 0, 12)) + bytes(12),  # command 2
    ],
)
def test_malformed_headers_are_refused(data: bytes) -> None:
    with pytest.raises(ProxyError):
        HeaderReader().feed(data)


def test_too_long_headers_are_refused_before_they_are_kept() -> None:
    reader = HeaderReader()
    assert reader.feed(b"PROXY TCP4 " + b"1" * (V1_MAX - 20)) is None
    with pytest.raises(ProxyError, match="longer than 107"):
        reader.feed(b"1" * 20)
    too_long = V2_SIGNATURE + struct.pack("!BBH", 0x21, 0x11, V2_MAX_LENGTH + 1)
    with pytest.raises(ProxyError):
        HeaderReader().feed(too_long)  # refused from its length, before its body comes


def test_truncated_headers_wait_for_more() -> None:
    for part in (
        b"P",
        b"PROXY",
        b"PROXY TCP4 1.2.3.4",
        V2_SIGNATURE[:5],
        v2_tcp4("1.2.3.4", 1)[:20],
    ):
        assert HeaderReader().feed(part) is None
