"""Naming online users as FIBS does, without reaching a look-alike by its case (D269).

The presence completes a name (§4.1: the exact name, else a unique case-sensitive
prefix, else a unique case-insensitive one); these add the rule that a name typed
exactly as a registered user who is not online never reaches another user whose name
differs only in case: with ``casey`` registered, ``tell casey`` does not reach ``Casey``.
Only that case asks the database.
"""

from __future__ import annotations

from db.repository import Database
from protocol import replies
from server.errors import Reply
from server.world.presence import Peer, Presence


async def complete(presence: Presence, db: Database, prefix: str) -> Peer:
    """The online user ``prefix`` names (:meth:`Presence.complete`), never one reached by
    crossing case from an exact registered name.

    :raises Reply: nobody (``** There is no one called x``) or several candidates.
    """
    peer = presence.complete(prefix)
    if await _crossed_case(db, peer, prefix):
        raise Reply(replies.no_one_called(prefix))
    return peer


async def find(presence: Presence, db: Database, prefix: str) -> Peer | None:
    """:meth:`Presence.find`, with :func:`complete`'s rule: None rather than another user
    reached by crossing case from an exact registered name."""
    peer = presence.find(prefix)
    if peer is not None and await _crossed_case(db, peer, prefix):
        return None
    return peer


async def _crossed_case(db: Database, peer: Peer, prefix: str) -> bool:
    """Whether ``peer`` was found for ``prefix`` only without regard to case while
    ``prefix`` is exactly a registered name (asked of the store only then)."""
    return not peer.name.startswith(prefix) and await db.user_exists(prefix)
