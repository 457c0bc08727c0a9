"""Where table updates become lines: :class:`TableEdge`, one per node.

The owner of a table emits each action's :class:`~server.tables.updates.TableUpdate` once,
after the save; a node's edge renders it for the users the presence has
(:func:`server.tables.announce.announce`: each recipient's lines with their own board
style and toggles) and sends them (one write per recipient, shared payloads), then the
broadcasts beyond the table. In one process the owner calls :meth:`TableEdge.deliver`
directly; across nodes the same update would come over a bus, so the edge checks the
versions: an update that does not follow the last one it saw of that table means it
missed one, and it asks the owner for the table's current state instead (a resync).
"""

from __future__ import annotations

from collections.abc import Callable

from server.doors.output import Payload
from server.tables.announce import Outbox, announce
from server.tables.updates import TableUpdate
from server.world.presence import Presence


class TableEdge:
    """Renders and sends the table updates for this node's users."""

    def __init__(self, presence: Callable[[], Presence], resync: Callable[[str], None]) -> None:
        """``presence``: this node's presence, read at each update; ``resync``: asks the
        owner of a table to send its current state to everyone at it."""
        self._presence = presence
        self._resync = resync
        self._seen: dict[str, int] = {}
        """The version each running table had in the last update seen of it."""

    def deliver(self, update: TableUpdate) -> None:
        """Send ``update``'s lines, or ask for a resync after a missed update; an update
        older than the last one seen of its table is dropped."""
        seen = self._seen.get(update.table)
        if seen is not None and update.since < seen:
            return
        self._seen[update.table] = update.version
        if seen is not None and update.since > seen:
            self._resync(update.table)
            return
        presence = self._presence()
        outbox, broadcasts = announce(presence, update)
        send(presence, outbox)
        for broadcast in broadcasts:
            presence.broadcast(list(broadcast.lines), broadcast.audience)

    def closed(self, table: str) -> None:
        """``table`` left the world (its match finished or stopped): nothing more of it."""
        self._seen.pop(table, None)

    def tables(self) -> int:
        """How many tables the edge follows (for tests: none is left behind)."""
        return len(self._seen)


def send(presence: Presence, outbox: Outbox) -> None:
    """One write per recipient (:meth:`~server.world.presence.Presence.send_payload`).
    Recipients with exactly the same lines share one rendered :class:`Payload`, encoded
    once (docs/performance.md §3)."""
    shared: dict[tuple[str, ...], Payload] = {}
    for peer, lines in outbox.take():
        key = tuple(lines)
        payload = shared.get(key)
        if payload is None:
            payload = shared[key] = Payload(key)
        presence.send_payload(peer, payload)
