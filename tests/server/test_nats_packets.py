"""How the NATS bus packs what one step queued for other nodes into NATS messages
(``server.world.nats_bus.packets``): order kept per subject, no message over
``PACKET_BYTES`` of data (NATS refuses a message over its ``max_payload``, 1 MiB by
default: a node's thousands of users sent at once to a node it meets were)."""

from __future__ import annotations

from server.world.nats_bus import BEAT, DATA, PACKET_BYTES, frames, packets


def test_data_for_one_node_is_split_below_the_limit_and_kept_in_order() -> None:
    bodies = [f"user {i:05d} ".encode() * 100 for i in range(2000)]  # ~2.2 MB in all
    queued = [("w.node.b.a", DATA, body) for body in bodies]
    queued.insert(1000, ("w.node.c.a", DATA, b"to c"))
    out = packets(queued)
    to_b = [payload for subject, payload in out if subject == "w.node.b.a"]
    assert len(to_b) > 1
    assert all(len(p) <= PACKET_BYTES + 1 for p in to_b)  # the kind byte
    assert [f for p in to_b for f in frames(p)] == bodies
    assert [p for s, p in out if s == "w.node.c.a"] == [DATA + b"\x00\x00\x00\x04to c"]


def test_a_bus_message_still_closes_the_packet_before_it() -> None:
    out = packets([("s", DATA, b"x"), ("s", BEAT, b""), ("s", DATA, b"y")])
    assert [p[:1] for _, p in out] == [DATA, BEAT, DATA]
