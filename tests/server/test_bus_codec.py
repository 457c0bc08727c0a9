"""The bus messages' JSON (``server.world.bus.encode``/``decode``, D430): orjson's compact
JSON, which any reader (an earlier release's :func:`json.loads`) reads as it read
:func:`json.dumps`'s; what orjson refuses goes through :mod:`json`; and a node decodes
each message once for its presence and its tables (``ClusterPresence.read``)."""

from __future__ import annotations

import asyncio
import enum
import json
from typing import Any

import pytest

from server.world import cluster
from server.world.bus import LoopbackBus, decode, encode
from server.world.cluster import ClusterPresence
from server.world.registry import LocalPresence


class _Kind(enum.StrEnum):
    DELIVER = enum.auto()


def test_the_json_is_compact_and_reads_back_as_json_dumps_did() -> None:
    message = {
        "k": _Kind.DELIVER,  # a kind is a StrEnum: its value goes
        "to": "bjørn",
        "lines": ["bjørn says: ça va ?", "board:You:x:1:0:0"],
        "from": ("alice", "node2", 17),
        "stamp": 1764337000.123,
        "rating": 1500.0,
        "away": None,
        "closed": False,
    }
    data = encode(message)
    compact = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
    assert data == compact.encode()  # UTF-8 as it is, where json.dumps escaped it
    assert json.loads(data) == json.loads(json.dumps(message))
    assert decode(data) == json.loads(json.dumps(message))


def test_what_orjson_refuses_is_made_and_read_by_json() -> None:
    # a lone surrogate (a line of any origin) and a key that is a str subclass
    message: dict[str, Any] = {"k": "deliver", "lines": ["a\udcffb"], _Kind.DELIVER: 1}
    data = encode(message)
    assert data == json.dumps(message, separators=(",", ":")).encode()
    assert decode(data) == {"k": "deliver", "lines": ["a\udcffb"], "deliver": 1}


def test_an_earlier_release_s_json_is_read() -> None:
    message = {"k": "deliver", "lines": ["ça"], "rating": float("nan")}
    read = decode(json.dumps(message).encode())  # spaces, \\u escapes, NaN
    assert read["lines"] == ["ça"] and read["rating"] != read["rating"]


@pytest.mark.parametrize("data", [b"[1, 2]", b'"deliver"', b"{", b""])
def test_what_is_not_a_json_object_is_refused(data: bytes) -> None:
    with pytest.raises(ValueError):
        decode(data)


async def test_a_node_decodes_each_message_once_for_both_of_its_readers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded: list[bytes] = []

    def counting(data: bytes) -> dict[str, Any]:
        decoded.append(data)
        return decode(data)

    monkeypatch.setattr(cluster, "decode", counting)
    bus = LoopbackBus()
    sender = ClusterPresence(LocalPresence(0.02), bus.connect("node0"))
    receiver = ClusterPresence(LocalPresence(0.02), bus.connect("node1"))
    seen: list[dict[str, Any]] = []
    receiver.bus.subscribe(lambda node, data: seen.append(receiver.read(data)))  # the tables'
    for _ in range(2):  # the same message twice: two messages, each decoded once
        sender.publish_json("node1", {"k": "flush", "names": []})
    for _ in range(5):
        await asyncio.sleep(0)
    assert bus.idle
    assert len(decoded) == 2 and decoded[0] is not decoded[1]
    assert seen == [{"k": "flush", "names": []}] * 2 and seen[0] is not seen[1]
