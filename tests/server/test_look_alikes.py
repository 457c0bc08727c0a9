"""Look-alike names (issue 34 item 5, D269): new names unique without regard to case,
``whois`` saying when a name has look-alikes, and name completion that never crosses
case to another user while the exact user exists offline. Through real sockets."""

from __future__ import annotations

import pytest

from protocol import replies
from protocol.replies import Mode
from server.app import App

from .conftest import Connect, make_user
from .sessions import command, telnet_login

pytestmark = pytest.mark.known_lines


async def test_a_name_in_another_case_is_taken(connect: Connect, app: App) -> None:
    """``Casey`` is registered: ``casey``, ``CASEY`` and ``cAsEy`` are refused with
    FIBS's line for a taken name, and no account is made."""
    await make_user(app, "Casey")
    guest = await connect()
    await guest.prompt(replies.LOGIN_PROMPT)
    await guest.send("guest")
    await guest.prompt(replies.TELNET_PROMPT)
    for name in ("casey", "CASEY", "cAsEy"):
        assert await command(guest, f"name {name}") == [replies.name_taken(name)], name
    assert await app.db.names_like("casey") == ["Casey"]


async def test_whois_names_the_look_alikes(connect: Connect, app: App) -> None:
    """Look-alikes registered before D269 keep their names; ``whois`` of each ends with
    the others, and a name without look-alikes gets no such line."""
    await make_user(app, "Casey")
    await make_user(app, "casey", allow_look_alikes=True)
    await make_user(app, "CASEY", allow_look_alikes=True)
    alice = await telnet_login(connect, app, "alice")
    casey = await command(alice, "whois casey")
    assert casey[0] == "Information about casey:"
    assert casey[-1] == replies.look_alikes_line(["CASEY", "Casey"])
    upper = await command(alice, "whois Casey")
    assert upper[-1] == replies.look_alikes_line(["CASEY", "casey"])
    own = await command(alice, "whois alice")
    assert own[0] == "Information about alice:"
    assert not any("differ only in case" in line for line in own)


async def test_completion_never_crosses_case_to_another_user(connect: Connect, app: App) -> None:
    """Only ``Casey`` is online; ``casey`` is registered and offline. ``tell``, ``watch``
    and ``where`` with ``casey`` do not reach ``Casey``, and ``gag casey`` gags the
    offline ``casey``. A prefix that is no registered name still completes to ``Casey``,
    and ``dana`` reaches ``Dana`` when no user is called ``dana`` (as on FIBS)."""
    await make_user(app, "Casey")
    await make_user(app, "casey", allow_look_alikes=True)
    alice = await telnet_login(connect, app, "alice")
    impostor = await telnet_login(connect, app, "Casey")
    dana = await telnet_login(connect, app, "Dana")
    for client in (alice, impostor):
        await client.expect(replies.logs_in("Dana"))
    assert await command(alice, "tell casey hi") == [replies.no_one_called("casey")]
    assert await command(alice, "watch casey") == [replies.no_one_there("casey")]
    assert await command(alice, "where casey") == [replies.no_one_there("casey")]
    assert await command(alice, "gag casey") == [replies.you_gag("casey")]
    assert await app.db.list_gags("alice") == ("casey",)
    await impostor.nothing()  # none of those reached Casey
    assert await command(alice, "tell cas hi") == [replies.you_say("Casey", "hi", Mode.TELNET)]
    assert await impostor.expect(replies.says("alice", "hi", Mode.TELNET)) == []
    assert await command(alice, "tell dana hi") == [replies.you_say("Dana", "hi", Mode.TELNET)]
    await dana.expect(replies.says("alice", "hi", Mode.TELNET))
