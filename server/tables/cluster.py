"""The tables of a world of several server nodes (:class:`ClusterTables`): each table is
owned by one node, which runs it in its :class:`~server.tables.local.LocalTables`; a
command about a table of another node is sent there as data and answered over the bus
(issue 33, items 1 and 4; the cluster of issue 32 puts NATS under it).

* **Who owns what.** A match is owned by the node of its inviter (the invitation lives
  there; ``join`` goes to it). Each node publishes its tables as they change (names,
  length, score) and when they close, so every node answers ``playing``, ``show games``
  and the routing of a command without asking; invitations are published likewise, for
  a bare ``join``. A chouette is owned by its opener's node, which publishes everyone
  at it after each change (D438); its own commands (:data:`ChouetteCommand` as JSON)
  and game actions go there like a match's.
* **A call.** The caller's node sends the command (:data:`TableCommand` as JSON) with
  the caller as the owner needs them (:meth:`ClusterPresence.caller_to_json`); the owner
  runs the same code a single node runs, with a
  :class:`~server.world.cluster.RemoteCaller` for the caller, and answers with nothing
  or the refusal's lines. Whatever the command writes to the caller or changes of their
  state goes to their node first, on the same ordered stream as the answer, so the
  caller's lines come in the order one node gives them.
* **Rendering.** The owner renders each update for every recipient with their own
  settings (a remote user's are in their published state) and the presence carries the
  lines; shipping the :class:`~server.tables.updates.TableUpdate` itself to each node's
  edge is the next step (the edge already checks versions for it).

Known limits, for the cluster (issue 32): a node that stops answering leaves its calls
waiting; a watcher of a table on a third node is not taken off that table's watcher
list when they start watching another one (the owner's announcing skips watchers whose
state says they watch someone else).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import enum
import itertools
import logging
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, assert_never

from backgammon.chouette_settings import settings_from_json, settings_to_json
from backgammon.events import WinKind
from db.records import SavedMatch
from protocol import replies
from server.errors import Reply
from server.tables.local import LocalTables, chouette_summary
from server.tables.seam import (
    Accept,
    BearOff,
    ChouetteCommand,
    ChouetteDelegate,
    ChouetteInvite,
    ChouetteJoin,
    ChouetteLeave,
    ChouetteOpen,
    ChouetteRecord,
    ChouetteReturn,
    ChouetteShow,
    ChouetteStart,
    ChouetteSummary,
    Double,
    GameSummary,
    MatchRequest,
    Moves,
    Redouble,
    Reject,
    Resign,
    Roll,
    TableCommand,
    TeamTalk,
)
from server.tables.updates import Batch, TableUpdate
from server.world import names
from server.world.bus import Bus
from server.world.cluster import KINDS, ClusterPresence
from server.world.presence import Caller, Peer
from server.world.registry import ACTOR
from server.world.remote import Json, RemotePeer
from server.world.session import Session

log = logging.getLogger(__name__)


class TableKind(enum.StrEnum):
    """What a message of the tables between nodes is (its ``k``)."""

    TABLE = enum.auto()
    """A table of the sending node started or changed: its players, length, score."""
    CHOUETTE = enum.auto()
    """A chouette of the sending node opened or changed: everyone at it and its
    ``show games`` line, if it has a game (D438). A kind of its own, which a node of an
    earlier release skips (D424), rather than a ``TABLE`` it would take for a match."""
    CLOSED = enum.auto()
    """A table of the sending node closed."""
    INVITED = enum.auto()
    """A user of the sending node invited someone (their one invitation, §4.3)."""
    CALL = enum.auto()
    """A command for a table the receiver owns."""
    ANSWER = enum.auto()
    """The owner's answer to a call: done, or the refusal's lines."""


_TABLE_KINDS = frozenset(TableKind)


class Method(enum.StrEnum):
    """The seam's methods a node runs for a caller of another node."""

    ACT = enum.auto()
    JOIN = enum.auto()
    JOIN_NEXT_GAME = enum.auto()
    LEAVE = enum.auto()
    SESSION_ENDED = enum.auto()
    SHOW_BOARD = enum.auto()
    SHOW_PIPS = enum.auto()
    LOOK = enum.auto()
    WATCH = enum.auto()
    STOP_WATCHING = enum.auto()
    HEARERS = enum.auto()
    BAN_WATCHER = enum.auto()
    CHOUETTE = enum.auto()
    """A chouette's own command (:func:`chouette_command_to_json`, D438)."""


_METHODS = frozenset(Method)

_COMMANDS: dict[str, type[TableCommand]] = {
    c.__name__: c for c in (Roll, Double, Moves, BearOff, Accept, Reject, Redouble, Resign)
}
"""The game actions by class name (their JSON's ``c``)."""


def command_to_json(command: TableCommand) -> Json:
    """A game action as JSON: its class and its fields (a resignation's kind by value,
    a chouette's member names as a list)."""
    data: Json = {"c": type(command).__name__}
    for field in dataclasses.fields(command):
        value = getattr(command, field.name)
        if isinstance(value, WinKind):
            value = value.value
        elif isinstance(value, tuple):
            value = list(value)
        data[field.name] = value
    return data


def command_from_json(data: Json) -> TableCommand:
    """:func:`command_to_json`'s inverse."""
    kind = _COMMANDS[data["c"]]
    values = {k: v for k, v in data.items() if k != "c"}
    if kind is Resign:
        values["kind"] = WinKind(values["kind"])
    if "members" in values:
        values["members"] = tuple(values["members"])
    return kind(**values)


_CHOUETTE_COMMANDS: dict[str, type[ChouetteCommand]] = {
    c.__name__: c
    for c in (
        ChouetteOpen,
        ChouetteInvite,
        ChouetteJoin,
        ChouetteStart,
        ChouetteLeave,
        ChouetteShow,
        ChouetteDelegate,
        ChouetteReturn,
        ChouetteRecord,
        TeamTalk,
    )
}
"""The chouette's own commands by class name (their JSON's ``c``)."""


def chouette_command_to_json(command: ChouetteCommand) -> Json:
    """A chouette's own command as JSON: its class and its fields, the settings of
    ``chouette open`` in the core's JSON form (the one a saved table keeps)."""
    data: Json = {"c": type(command).__name__}
    for field in dataclasses.fields(command):
        value = getattr(command, field.name)
        data[field.name] = settings_to_json(value) if field.name == "settings" else value
    return data


def chouette_command_from_json(data: Json) -> ChouetteCommand:
    """:func:`chouette_command_to_json`'s inverse."""
    kind = _CHOUETTE_COMMANDS[data["c"]]
    values = {k: v for k, v in data.items() if k != "c"}
    if "settings" in values:
        values["settings"] = settings_from_json(values["settings"])
    return kind(**values)


class CallFailed(Exception):
    """The node owning a table failed to run a call (an error its log shows); the
    caller's command ends as any command whose code fails."""


@dataclass(slots=True)
class RemoteTable:
    """A table of another node, as it last published it."""

    node: str
    names: tuple[str, ...]
    """A match's two players; everyone at a chouette (the away too)."""
    length: int | None
    score: tuple[int, int]
    chouette: bool = False
    """A chouette table (D438): ``names`` its players, ``game`` its directory line."""
    game: ChouetteSummary | None = None
    """A chouette with a game, as ``show games`` lists it (D364)."""


class ClusterTables:
    """:class:`~server.tables.seam.Tables` for one node of several (see the module)."""

    @classmethod
    def on(cls, bus: Bus) -> Callable[[LocalTables], ClusterTables]:
        """What :class:`server.app.App` takes as ``tables``: a node's tables on ``bus``
        around the node's own (the App's presence must be a :class:`ClusterPresence`
        on the same bus)."""
        return lambda local: cls(local, bus)

    def __init__(self, local: LocalTables, bus: Bus) -> None:
        presence = local.presence
        assert isinstance(presence, ClusterPresence), presence
        self.local = local
        self.presence = presence
        self.bus = bus
        self.node = bus.node
        local.node = bus.node
        self._tables: dict[str, RemoteTable] = {}
        """The other nodes' tables by id."""
        self._seated: dict[str, str] = {}
        """Each player at another node's table: that table's id."""
        self._invited: dict[str, tuple[str, str]] = {}
        """Other nodes' users' invitations: inviter -> (invitee, node)."""
        self._published: dict[str, GameSummary] = {}
        """This node's tables as last published (only changes are published again)."""
        self._published_chouettes: dict[str, Json] = {}
        """This node's chouette tables as last published, by id (their TABLE messages)."""
        self._calls: dict[int, asyncio.Future[list[str] | None]] = {}
        self._call_nodes: dict[int, str] = {}
        """The node each waiting call went to."""
        self._ids = itertools.count(1)
        self._running: set[asyncio.Task[None]] = set()
        self._unknown: set[tuple[bool, str]] = set()
        """Message kinds (False) and call methods (True) of a later release already
        logged (D424: once each)."""
        local.on_opened = self._opened
        local.on_update = self._updated
        local.on_closed = self._closed
        local.on_chouettes = self._chouettes_changed
        presence.before_lost.append(self._lost)
        presence.before_gone.append(self._gone)
        presence.before_superseded.append(self._superseded)
        self._handing_over = False
        """The chouettes closing now leave a drained node (D446): their CLOSED says so."""
        self._superseded_logins: weakref.WeakSet[Session] = weakref.WeakSet()
        """This node's logins superseded by a newer one elsewhere (D417), closing."""
        bus.subscribe(self._receive, met=self._met)

    # -- where a table is ----------------------------------------------------------------------

    def _remote_table_of(self, name: str) -> RemoteTable | None:
        """The table of another node ``name`` plays at, if any."""
        table = self._seated.get(name)
        return None if table is None else self._tables.get(table)

    def _owner_of(self, name: str) -> str | None:
        """The node whose table ``name`` plays at, when it is another node."""
        if self.local.playing(name):
            return None
        table = self._remote_table_of(name)
        return None if table is None else table.node

    # -- looking --------------------------------------------------------------------------------

    def playing(self, name: str) -> bool:
        return self.local.playing(name) or name in self._seated

    def opponent_of(self, name: str) -> str | None:
        mine = self.local.opponent_of(name)
        if mine is not None:
            return mine
        table = self._remote_table_of(name)
        if table is None or table.chouette:
            return None
        a, b = table.names
        return b if name == a else a

    def inviters_of(self, name: str) -> list[str]:
        remote = [
            inviter
            for inviter, (invitee, node) in self._invited.items()
            if invitee == name and self._online_at(inviter, node) and not self.playing(inviter)
        ]
        return sorted({*self.local.inviters_of(name), *remote})

    def _online_at(self, name: str, node: str) -> bool:
        peer = self.presence.get(name)
        return isinstance(peer, RemotePeer) and peer.node == node

    def games(self) -> list[GameSummary]:
        remote = [
            GameSummary((t.names[0], t.names[1]), t.length, t.score)
            for t in self._tables.values()
            if not t.chouette
        ]
        return self.local.games() + remote

    def chouette_games(self) -> list[ChouetteSummary]:
        """Every node's chouettes with a game: this node's and those the others
        published (D438)."""
        remote = [t.game for t in self._tables.values() if t.game is not None]
        return self.local.chouette_games() + remote

    async def hearers(self, session: Session, *, watchers_only: bool) -> list[Peer]:
        owner = self._owner_of(session.name) or self._owner_of(session.watching or "")
        if owner is None:
            return await self.local.hearers(session, watchers_only=watchers_only)
        answer = await self._call(owner, Method.HEARERS, session, watchers_only=watchers_only)
        found = (self.presence.get(name) for name in answer or ())
        return [peer for peer in found if peer is not None]

    # -- inviting and joining -------------------------------------------------------------------

    async def invitable(self, session: Session, target: Peer) -> SavedMatch | None:
        if target.name != session.name:
            if session.name in self._seated:
                raise Reply(replies.ALREADY_PLAYING)
            if target.name in self._seated:
                raise Reply(replies.already_playing_with(target.name))
        return await self.local.invitable(session, target)

    def invite(
        self,
        session: Session,
        target: Peer,
        saved: SavedMatch | None,
        request: MatchRequest | None,
    ) -> None:
        self.local.invite(session, target, saved, request)
        message = {"k": TableKind.INVITED, "inviter": session.name, "invitee": target.name}
        self._publish(None, message)

    async def join(self, session: Session, name: str) -> None:
        inviter = self.presence.get(name)
        if isinstance(inviter, RemotePeer) and not self.playing(session.name):
            await self._call(inviter.node, Method.JOIN, session, name=name)
            return
        if self._owner_of(session.name) is not None:  # at a table of another node
            raise Reply(replies.CANT_PLAY_TWO)
        await self.local.join(session, name)

    async def join_next_game(self, session: Session) -> None:
        owner = self._owner_of(session.name)
        if owner is None:
            await self.local.join_next_game(session)
        else:
            await self._call(owner, Method.JOIN_NEXT_GAME, session)

    async def leave(self, session: Session) -> None:
        owner = self._owner_of(session.name)
        if owner is None:
            await self.local.leave(session)
        else:
            await self._call(owner, Method.LEAVE, session)

    def _superseded(self, name: str) -> None:
        """``name`` logged in again elsewhere while this node was taken for gone (D417):
        their match here leaves without a write, and their older login's end, next,
        touches nothing at other nodes (the tables there are the newer login's)."""
        self.local.superseded(name)
        session = self.presence.local.get(name)
        if session is not None:
            self._superseded_logins.add(session)

    async def drained(self) -> None:
        """This drained node's chouettes leave it (D446): the others hear each close as
        a hand-over (``gone`` in its CLOSED) and tell the players and watchers there as
        for a lost node's table (D440, D448)."""
        self._handing_over = True
        try:
            await self.local.drained()
        finally:
            self._handing_over = False

    async def session_ended(self, session: Session) -> None:
        owner = self._owner_of(session.name)
        if owner is None or session in self._superseded_logins:
            await self.local.session_ended(session)
            return
        self.local.invitations.pop(session.name, None)
        with contextlib.suppress(Reply):  # out of reach: the owner ends it at their "gone"
            await self._call(owner, Method.SESSION_ENDED, session)

    async def chouette(self, session: Session, command: ChouetteCommand) -> None:
        """A chouette's own commands, run by the node that runs the table (D438): the
        caller's table, or the one the command names; a new table (``chouette open``,
        and a saved one brought back by ``chouette return`` when it runs nowhere) at
        the caller's node, which owns it from then on."""
        owner = self._chouette_owner(session, command)
        if owner is None:
            if isinstance(command, ChouetteInvite):
                self._check_invitee(command.name)
            await self.local.chouette(session, command)
        else:
            data = chouette_command_to_json(command)
            await self._call(owner, Method.CHOUETTE, session, command=data)

    def _chouette_owner(self, session: Session, command: ChouetteCommand) -> str | None:
        """The node of the chouette ``command`` is for, when it is another; refuses
        what a table elsewhere rules out as one node's ``_free`` does (D361)."""
        me = session.name
        match command:
            case ChouetteOpen() | ChouetteJoin(_):
                table = self._remote_table_of(me)
                if table is not None and not self.local.playing(me):
                    if table.chouette:
                        raise Reply(replies.ALREADY_AT_CHOUETTE)
                    raise Reply(replies.ALREADY_PLAYING)
                if isinstance(command, ChouetteJoin):
                    return self._owner_of(command.name)
                return None
            case ChouetteShow(name, _) if name is not None:
                return self._owner_of(name)
            case ChouetteRecord(name) if name is not None:
                return None  # every table's records, from the database
            case _:
                return self._owner_of(me)

    def _check_invitee(self, name: str) -> None:
        """``chouette invite NAME`` of a table here: NAME at a table of another node
        is refused as one node refuses a player at a table (D304)."""
        if self._remote_table_of(name) is not None and not self.local.playing(name):
            raise Reply(replies.already_playing_with(name))

    # -- playing --------------------------------------------------------------------------------

    async def act(self, session: Session, command: TableCommand) -> None:
        owner = self._owner_of(session.name)
        if owner is None:
            await self.local.act(session, command)
        else:
            await self._call(owner, Method.ACT, session, command=command_to_json(command))

    # -- boards and watching --------------------------------------------------------------------

    def _viewed_owner(self, session: Session) -> str | None:
        """The node of the table ``session`` plays at, or else watches, if another."""
        if self.local.playing(session.name):
            return None
        return self._owner_of(session.name) or self._owner_of(session.watching or "")

    async def show_board(self, session: Session) -> None:
        owner = self._viewed_owner(session)
        if owner is None:
            await self.local.show_board(session)
        else:
            await self._call(owner, Method.SHOW_BOARD, session)

    async def show_pips(self, session: Session) -> None:
        owner = self._viewed_owner(session)
        if owner is None:
            await self.local.show_pips(session)
        else:
            await self._call(owner, Method.SHOW_PIPS, session)

    async def look(self, session: Session, target: Peer) -> None:
        owner = self._owner_of(target.name)
        if owner is None:
            await self.local.look(session, target)
        else:
            await self._call(owner, Method.LOOK, session, target=target.name)

    async def saved_board(self, session: Session, opponent: str) -> None:
        table = self._remote_table_of(session.name)
        if table is not None and not table.chouette:  # one node refuses a match's players
            raise Reply(replies.CANT_WHILE_PLAYING)
        await self.local.saved_board(session, opponent)

    async def saved_moves(self, session: Session, opponent: str) -> None:
        await self.local.saved_moves(session, opponent)

    async def watch(self, session: Session, name: str) -> None:
        if self.playing(session.name):
            raise Reply(replies.CANT_WATCH_WHILE_PLAYING)
        target = self.presence.get(name)
        if target is None:
            try:
                target = await names.complete(self.presence, self.local.db, name)
            except Reply:
                target = None  # the owner's own refusal (the local code's) follows
        owner = None if target is None else self._owner_of(target.name)
        if owner is None or target is None:
            await self.local.watch(session, name)
        else:
            await self._call(owner, Method.WATCH, session, name=target.name)

    def stop_watching(self, session: Session) -> None:
        owner = self._owner_of(session.watching or "")
        if owner is None:
            self.local.stop_watching(session)
        else:
            self._send_call(owner, Method.STOP_WATCHING, session, None)

    def ban_watcher(self, name: str, watcher: Peer) -> None:
        owner = self._owner_of(name)
        if owner is None:
            self.local.ban_watcher(name, watcher)
        else:
            message = {"k": TableKind.CALL, "method": Method.BAN_WATCHER, "id": None}
            self._publish(owner, message | {"name": name, "watcher": watcher.name})

    # -- calls ----------------------------------------------------------------------------------

    async def _call(
        self, owner: str, method: Method, session: Session, **arguments: Any
    ) -> list[str] | None:
        """Run ``method`` for ``session`` on the node ``owner`` and wait for its answer.

        :raises Reply: the owner refused (its lines)."""
        if not self.bus.connected:
            raise Reply(replies.CLUSTER_UNREACHABLE)
        call = next(self._ids)
        answer: asyncio.Future[list[str] | None] = asyncio.get_running_loop().create_future()
        self._calls[call] = answer
        self._call_nodes[call] = owner
        try:
            self._send_call(owner, method, session, call, **arguments)
            return await answer
        finally:
            self._calls.pop(call, None)
            self._call_nodes.pop(call, None)

    def _send_call(
        self, owner: str, method: Method, session: Session, call: int | None, **arguments: Any
    ) -> None:
        caller = self.presence.caller_to_json(session)
        message = {"k": TableKind.CALL, "method": method, "id": call, "caller": caller}
        self._publish(owner, message | arguments)

    def _on_call(self, node: str, message: Json) -> None:
        if message["method"] not in _METHODS:  # a later release's (D424): answered
            self._later_release(node, message["method"], call=True)
            if message["id"] is not None:  # the caller's command fails, never waits
                self._send_answer(node, message["id"], None, [], [])
            return
        method = Method(message["method"])
        if method is Method.BAN_WATCHER:
            watcher = self.presence.get(message["watcher"])
            if watcher is not None:
                self.local.ban_watcher(message["name"], watcher)
            return
        caller = self.presence.caller_from_json(node, message["caller"])
        actor = self.presence.remote_login(caller.name, node, caller.login)
        stale = method is not Method.SESSION_ENDED and self._stale(caller)
        run = self._refuse_stale() if stale else self._run(method, caller, message)
        call: int | None = message["id"]
        context = contextvars.copy_context()
        context.run(ACTOR.set, actor)
        task = asyncio.get_running_loop().create_task(
            self._answer(node, call, run), context=context
        )
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _answer(
        self, node: str, call: int | None, run: Coroutine[Any, Any, list[str] | None]
    ) -> None:
        """Run a call and send its answer (none for a call that wants none)."""
        value: list[str] | None = None
        refusal: list[str] | None = None
        telnet: list[str] = []
        try:
            value = await run
        except Reply as reply:
            refusal = list(reply.lines)
            telnet = list(reply.telnet)
        except Exception:
            log.exception("a call from node %s failed", node)
            refusal = []
        if call is not None:
            self._send_answer(node, call, value, refusal, telnet)

    def _send_answer(
        self,
        node: str,
        call: int,
        value: list[str] | None,
        refusal: list[str] | None,
        telnet: list[str],
    ) -> None:
        """The answer to ``node``'s call: a value, or a refusal's lines (empty: the call
        failed, :class:`CallFailed` at the caller)."""
        answer = {"id": call, "value": value, "refusal": refusal, "telnet": telnet}
        self._publish(node, {"k": TableKind.ANSWER} | answer)

    def _stale(self, caller: RemotePeer) -> bool:
        """Whether ``caller`` is an older login of a name logged in again elsewhere (its
        node was taken for gone and has just come back, D417): this node knows another
        login of that name, here or at another node. (The end of an older login's
        session still runs: after a second login, it saves the match the older login
        was playing, as on one node; a login superseded after a pause ends at its own
        node only, :meth:`session_ended`.)"""
        current = self.presence.get(caller.name)
        if current is None:
            return False  # gone meanwhile (its connection's end): still its own
        if isinstance(current, RemotePeer):
            return (current.node, current.login) != (caller.node, caller.login)
        return True  # logged in here now

    async def _refuse_stale(self) -> list[str] | None:
        """A call of an older login: nothing runs (the newer login's match is not
        that login's to play or end), and it hears why (D370's line)."""
        raise Reply(replies.MATCH_TAKEN_OVER)

    async def _run(self, method: Method, caller: Caller, message: Json) -> list[str] | None:
        """The local code of ``method`` for ``caller``; its value, if it has one."""
        local = self.local
        if method is Method.ACT:
            await local.act(caller, command_from_json(message["command"]))
        elif method is Method.JOIN:
            await local.join(caller, message["name"])
        elif method is Method.JOIN_NEXT_GAME:
            await local.join_next_game(caller)
        elif method is Method.LEAVE:
            await local.leave(caller)
        elif method is Method.SESSION_ENDED:
            await local.session_ended(caller)
        elif method is Method.SHOW_BOARD:
            await local.show_board(caller)
        elif method is Method.SHOW_PIPS:
            await local.show_pips(caller)
        elif method is Method.LOOK:
            target = self.presence.get(message["target"])
            if target is None:
                raise Reply(replies.not_playing_name(message["target"]))
            await local.look(caller, target)
        elif method is Method.WATCH:
            await local.watch(caller, message["name"])
        elif method is Method.STOP_WATCHING:
            local.stop_watching(caller)
        elif method is Method.HEARERS:
            hearers = await local.hearers(caller, watchers_only=message["watchers_only"])
            return [peer.name for peer in hearers]
        elif method is Method.CHOUETTE:
            command = chouette_command_from_json(message["command"])
            if isinstance(command, ChouetteInvite):
                self._check_invitee(command.name)
            await local.chouette(caller, command)
        elif method is Method.BAN_WATCHER:
            pass  # handled in _on_call: no caller
        else:
            assert_never(method)
        return None

    def _on_answer(self, node: str, message: Json) -> None:
        answer = self._calls.get(message["id"])
        if answer is None or answer.done():
            return
        refusal = message["refusal"]
        if refusal is None:
            answer.set_result(message["value"])
        elif refusal:
            answer.set_exception(Reply(*refusal, telnet=message.get("telnet", ())))
        else:
            answer.set_exception(CallFailed(node))

    # -- the directory of tables ----------------------------------------------------------------

    def _opened(self, table: str, game: GameSummary) -> None:
        """One of this node's tables is seated: the others know it before any line of
        it reaches their users (the bus keeps this node's messages in order)."""
        self._publish_table(table, game)

    def _updated(self, update: TableUpdate) -> None:
        """One of this node's tables changed: the others show its new score."""
        score = next(
            (item.moment.score for item in reversed(update.told) if isinstance(item, Batch)),
            None,
        )
        if score is not None:
            game = GameSummary(update.sides.acting_names, update.length, score)
            self._publish_table(update.table, game)

    def _publish_table(self, table: str, game: GameSummary) -> None:
        if self._published.get(table) == game:
            return
        self._published[table] = game
        self._publish(None, _table_message(table, game))

    def _lost(self, node: str, users: list[RemotePeer]) -> None:
        """``node`` is gone with ``users``: its tables and invitations leave the
        directory, its calls here are refused, and this node's matches with one of its
        users are saved and stopped as after a dropped connection (their opponents and
        watchers told, §4.9)."""
        self._tell_watchers(node, users)
        for table, known in list(self._tables.items()):
            if known.node == node:
                self._table_lost(known)
                self._on_closed(node, {"table": table})
        for inviter, (_, where) in list(self._invited.items()):
            if where == node:
                del self._invited[inviter]
        for call, answer in list(self._calls.items()):
            if not answer.done() and self._call_nodes.get(call) == node:
                answer.set_exception(Reply(replies.TABLE_NODE_GONE))
        for peer in users:
            if self.local.playing(peer.name) or peer.watching is not None:
                self._end_for(peer)

    def _tell_watchers(self, node: str, users: list[RemotePeer]) -> None:
        """This node's watchers of what ``node`` ran, or of its users, hear what a
        watcher hears when a player's connection drops on one node (§4.11, D174, D416):
        a watcher of a player of ``node`` stops watching (``<name> drops connection.
        You're not watching anymore.``); a watcher of their opponent, on another node,
        hears ``<name> drops connection. The game was saved.`` as the opponent's
        watchers do. Players at a table of a node still here are left to that node,
        which ends their match as for a dropped connection and tells the watchers. A
        chouette of ``node`` with none of its players there: its players' watchers here
        hear that its node is gone (D448)."""
        lost = {peer.name for peer in users}
        local = self.presence.local
        for name in lost:
            table = self._remote_table_of(name)
            if self.local.playing(name) or (table is not None and table.node != node):
                continue  # the table's node tells the watchers
            reason = replies.not_watching_anymore(replies.drops_connection(name))
            for watcher in local.watchers_of([name]):
                self.presence.stop_watching(watcher, reason)
        for known in self._tables.values():
            dropped = [name for name in known.names if name in lost]
            if known.node != node:
                continue
            if not dropped:
                if known.chouette:  # its players all elsewhere (D448)
                    self._tell_chouette_watchers(known)
                continue
            line = replies.saved_after(replies.drops_connection(dropped[0]))
            staying = [name for name in known.names if name not in lost]
            for watcher in local.watchers_of(staying):
                self.presence.send(watcher, line)

    def _tell_chouette_watchers(self, table: RemoteTable) -> None:
        """A chouette of a node gone or drained left it with none of its players there
        (D446, D448): this node's watchers of its players hear that the table's node is
        gone and the table saved, and go on watching them, back in the lobby."""
        for watcher in self.presence.local.watchers_of(table.names):
            name = watcher.watching or ""
            self.presence.send(watcher, replies.chouette_node_gone_watching(name))

    def _gone(self, peer: RemotePeer) -> None:
        """A remote user left while still at a table here (their node could not tell
        this one first): the table ends it as a dropped connection."""
        if self.local.playing(peer.name):
            self._end_for(peer)

    def _end_for(self, peer: RemotePeer) -> None:
        """``peer``'s connection ended: what they were at here ends as on one node."""
        task = asyncio.get_running_loop().create_task(
            self.local.session_ended(self.presence.caller_of(peer))
        )
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    def _table_lost(self, table: RemoteTable) -> None:
        """A table of a node gone: its players here are told and back in the lobby (its
        saved state is in the database, resumed by ``invite`` + ``join`` anywhere; a
        chouette's by ``chouette return``, D440)."""
        line = replies.CHOUETTE_NODE_GONE if table.chouette else replies.TABLE_NODE_GONE
        for name in table.names:
            player = self.presence.local.get(name)
            if player is not None and not player.closed:
                self.presence.enter_lobby(player)
                self.presence.send(player, line)

    def _met(self, node: str) -> None:
        """``node`` joined (or this node did): it gets this node's tables and
        invitations."""
        for table, game in self._published.items():
            self._publish(node, _table_message(table, game))
        for message in self._published_chouettes.values():
            self._publish(node, message)
        for inviter, invitation in self.local.invitations.items():
            message = {"k": TableKind.INVITED, "inviter": inviter, "invitee": invitation.invitee}
            self._publish(node, message)

    def _closed(self, table: str) -> None:
        if self._published.pop(table, None) is not None:
            self._publish(None, {"k": TableKind.CLOSED, "table": table})

    def _chouettes_changed(self) -> None:
        """This node's chouettes changed: each table whose players or game changed is
        published again (everyone at it, for the others' routing, and its directory
        line), one that left this node is closed (D438)."""
        tables = {table.table_id: table for table in self.local.chouettes.values()}
        for table_id, table in tables.items():
            players = [p for p in table.present() if self.local.chouettes.get(p) is table]
            message = {
                "k": TableKind.CHOUETTE,
                "table": table_id,
                "names": players,
                "game": _chouette_game(self.local, table_id),
            }
            if self._published_chouettes.get(table_id) != message:
                self._published_chouettes[table_id] = message
                self._publish(None, message)
        for table_id in [t for t in self._published_chouettes if t not in tables]:
            del self._published_chouettes[table_id]
            closed: Json = {"k": TableKind.CLOSED, "table": table_id}
            if self._handing_over:
                closed["gone"] = True  # a field an older node skips (D424)
            self._publish(None, closed)

    def _on_table(self, node: str, message: Json) -> None:
        a, b = message["names"]
        s0, s1 = message["score"]
        self._seat(message["table"], RemoteTable(node, (a, b), message["length"], (s0, s1)))

    def _on_chouette(self, node: str, message: Json) -> None:
        game = message["game"]
        summary = None if game is None else ChouetteSummary(**game)
        known = RemoteTable(node, tuple(message["names"]), None, (0, 0), True, summary)
        self._seat(message["table"], known)

    def _seat(self, table: str, known: RemoteTable) -> None:
        """Another node's table ``table`` is ``known`` now: its players are seated at it
        (those no longer at a chouette are not)."""
        names = known.names
        before = self._tables.get(table)
        self._tables[table] = known
        for name in before.names if before is not None else ():
            if name not in names and self._seated.get(name) == table:
                del self._seated[name]  # left the chouette
        for name in names:
            self._seated[name] = table
            self._invited.pop(name, None)

    def _on_closed(self, node: str, message: Json) -> None:
        table = self._tables.get(message["table"])
        if table is None or table.node != node:  # a node that lost the table to another
            return
        del self._tables[message["table"]]
        for name in table.names:
            if self._seated.get(name) == message["table"]:
                del self._seated[name]
        if table.chouette and message.get("gone"):  # a drained node's (D446)
            self._tell_chouette_watchers(table)
            self._table_lost(table)

    def _on_invited(self, node: str, message: Json) -> None:
        self._invited[message["inviter"]] = (message["invitee"], node)

    # -- the bus --------------------------------------------------------------------------------

    def _publish(self, to: str | None, message: Json) -> None:
        self.presence.publish_json(to, message)

    def _receive(self, node: str, data: bytes) -> None:
        try:
            message = self.presence.read(data)  # decoded once for both (D430)
            kind = message["k"]
            if kind not in _TABLE_KINDS:
                if kind not in KINDS:
                    self._later_release(node, kind, call=False)
                return  # the presence's
            handlers: dict[str, Callable[[str, Json], None]] = {
                TableKind.TABLE: self._on_table,
                TableKind.CHOUETTE: self._on_chouette,
                TableKind.CLOSED: self._on_closed,
                TableKind.INVITED: self._on_invited,
                TableKind.CALL: self._on_call,
                TableKind.ANSWER: self._on_answer,
            }
            handlers[kind](node, message)
        except Exception:  # this message's alone: the node goes on
            log.exception("table message from node %s could not be handled", node)

    def _later_release(self, node: str, name: str, *, call: bool) -> None:
        """``node`` sent a message kind (or, with ``call``, a call method) this release
        does not know: skipped (a call answered as failed), and said once in the log
        (D424)."""
        if (call, name) not in self._unknown:
            self._unknown.add((call, name))
            log.warning(
                "node %s sent a %s this node does not know, %r (a later release?): skipped",
                node,
                "call method" if call else "message kind",
                name,
            )


def _chouette_game(local: LocalTables, table_id: str) -> Json | None:
    """The directory line of this node's chouette ``table_id`` as JSON, if it has a game."""
    table = next(t for t in local.chouettes.values() if t.table_id == table_id)
    summary = chouette_summary(table)
    return None if summary is None else dataclasses.asdict(summary)


def _table_message(table: str, game: GameSummary) -> Json:
    """A table of this node as the others learn it."""
    return {
        "k": TableKind.TABLE,
        "table": table,
        "names": list(game.names),
        "length": game.length,
        "score": list(game.score),
    }
