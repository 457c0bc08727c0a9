"""This process's tables: :class:`LocalTables`, the in-process owner behind the table seam.

It owns the running matches and the invitations of one node, is the
:class:`~server.tables.host.TableHost` the table modules run on (the process's services,
forwarded, and that state), and implements :class:`server.tables.seam.Tables` by calling
them: :mod:`server.tables.match_lifecycle` (invite, join, leave, watch),
:mod:`server.tables.match_commands` (a game action) and the board renderer. Next: an
owner of tables on several nodes, which keeps one of these for the tables of its own node.
"""

from __future__ import annotations

from collections.abc import Callable

from backgammon.dice import DiceRoller
from backgammon.errors import SnapshotError
from db.records import ONE_NODE, SavedMatch
from db.repository import Database
from protocol import replies
from protocol.game_record import last_game, oldmoves_lines
from protocol.replies import Toggle
from server.analysis.pool import Analyses
from server.clock import Timer
from server.config import Settings
from server.doors.admission import OutageLog
from server.errors import Reply
from server.tables import chouette_commands, dice_proof, match_commands, match_lifecycle
from server.tables.announce import seated_side
from server.tables.chouette_table import LiveChouette
from server.tables.dice_stats import DiceStats
from server.tables.edge import TableEdge
from server.tables.host import TableServices
from server.tables.match_lifecycle import announced, players_of, send_board
from server.tables.matches import Invitation, LiveMatch, watchers_at
from server.tables.seam import (
    ChouetteCommand,
    ChouetteLeave,
    ChouetteStart,
    ChouetteSummary,
    GameSummary,
    MatchRequest,
    TableCommand,
)
from server.tables.sides import OPPOSITE
from server.tables.updates import TableUpdate
from server.world.presence import Caller, Peer, Presence
from server.world.session import Session


class LocalTables:
    """The tables of this process: every running match and invitation in it."""

    def __init__(self, services: TableServices) -> None:
        self._services = services
        self.matches: dict[str, LiveMatch] = {}
        """Running matches by each player's name (tests look inside; everything else
        goes through the seam's methods)."""
        self.invitations: dict[str, Invitation] = {}
        """The one outstanding invitation of each inviter (§4.3)."""
        self.chouettes: dict[str, LiveChouette] = {}
        """The chouette tables by each player's name (:mod:`server.tables.chouette_commands`)."""
        self.edge = TableEdge(lambda: self.presence, self.resync)
        """This node's users' end of the table updates (:mod:`server.tables.edge`)."""
        self.on_opened: Callable[[str, GameSummary], None] | None = None
        """Told of every table of this node that is seated (an owner of tables on
        several nodes keeps the world's directory of tables with these)."""
        self.on_update: Callable[[TableUpdate], None] | None = None
        """Told every update of this node's tables, after its edge."""
        self.on_closed: Callable[[str], None] | None = None
        """Told of every table of this node that closes."""
        self.on_chouettes: Callable[[], None] | None = None
        """Told of every change of this node's chouette tables (:meth:`chouettes_changed`)."""
        self.node = ONE_NODE
        """This node's name in the tables' owner rows (a cluster's node name)."""

    # -- the host's services (server.tables.host.TableServices) ---------------------------

    @property
    def presence(self) -> Presence:
        return self._services.presence

    @property
    def db(self) -> Database:
        return self._services.db

    @property
    def settings(self) -> Settings:
        return self._services.settings

    @property
    def clock(self) -> Callable[[], float]:
        return self._services.clock

    @property
    def timer(self) -> Timer:
        return self._services.timer

    @property
    def dice(self) -> Callable[[], DiceRoller] | None:
        return self._services.dice

    @property
    def entropy(self) -> Callable[[int], bytes]:
        return self._services.entropy

    @property
    def coin(self) -> Callable[[], int]:
        return self._services.coin

    @property
    def dice_stats(self) -> DiceStats:
        return self._services.dice_stats

    @property
    def stopping(self) -> bool:
        return self._services.stopping

    @property
    def outage_log(self) -> OutageLog:
        return self._services.outage_log

    @property
    def analyses(self) -> Analyses:
        return self._services.analyses

    # -- where the updates go (server.tables.host.TableHost) --------------------------------

    def table_opened(self, live: LiveMatch) -> None:
        if self.on_opened is not None:
            self.on_opened(live.table_id, _summary(live))

    def deliver(self, update: TableUpdate) -> None:
        self.edge.deliver(update)
        if self.on_update is not None:
            self.on_update(update)

    def table_closed(self, table: str) -> None:
        self.edge.closed(table)
        if self.on_closed is not None:
            self.on_closed(table)

    def chouettes_changed(self) -> None:
        if self.on_chouettes is not None:
            self.on_chouettes()

    def resync(self, table: str) -> None:
        """Everyone at ``table`` gets its current board (an edge missed an update)."""
        live = next((m for m in self.matches.values() if m.table_id == table), None)
        if live is None:
            return
        frame = live.board_frame()
        presence = self.presence
        sides = live.sides
        for index in (0, 1):
            for player in seated_side(presence, sides, index):
                lines = frame.lines(index, player.settings.boardstyle, you=True)
                presence.send_lines(player, lines)
        for watcher in watchers_at(presence, sides.everyone, live.watchers):
            side = sides.side_of(watcher.watching or "")
            if side is not None:
                lines = frame.lines(side, watcher.settings.boardstyle, you=False)
                presence.send_lines(watcher, lines)

    # -- looking ----------------------------------------------------------------------------

    def superseded(self, name: str) -> None:
        """``name`` logged in again at another node while this one was taken for gone
        (a cluster, D417): their match here, if any, leaves this node without a write,
        its players here told, as when the database refuses a save (D370); the newer
        login resumed it, or may. Their chouette here, if any, leaves likewise, its
        players here told as when the fence refuses its save (D439, D447)."""
        live = self.matches.get(name)
        if live is not None:
            match_lifecycle.taken_over(self, live)
        table = self.chouettes.get(name)
        if table is not None:  # a chouette's likewise (D447)
            chouette_commands.taken_over(self, table)

    async def drained(self) -> None:
        await chouette_commands.hand_over(self)

    def playing(self, name: str) -> bool:
        return name in self.matches or name in self.chouettes

    def opponent_of(self, name: str) -> str | None:
        live = self.matches.get(name)
        return None if live is None else live.opponent_of(name)

    def inviters_of(self, name: str) -> list[str]:
        return sorted(n for n, i in self.invitations.items() if i.invitee == name)

    def games(self) -> list[GameSummary]:
        unique = {id(live): live for live in self.matches.values()}
        return [_summary(live) for live in unique.values()]

    def chouette_games(self) -> list[ChouetteSummary]:
        unique = {id(table): table for table in self.chouettes.values()}
        found = (chouette_summary(table) for table in unique.values())
        return [summary for summary in found if summary is not None]

    async def hearers(self, session: Caller, *, watchers_only: bool) -> list[Peer]:
        chouette = self.chouettes.get(session.name) or self.chouettes.get(session.watching or "")
        if chouette is not None:
            present = chouette.present()
            watchers = self.presence.watchers_of(present)
            players = [p for p in map(self.presence.get, present) if p is not None]
            heard = watchers if watchers_only else [*players, *watchers]
            return [p for p in heard if p.name != session.name and session.name not in p.gagged]
        live = self.matches.get(session.name) or self.matches.get(session.watching or "")
        if live is None:
            raise Reply(replies.NOT_WATCHING_OR_PLAYING)
        watchers = watchers_at(self.presence, live.names, live.watchers)
        recipients = watchers if watchers_only else [*players_of(self, live), *watchers]
        me = session.name
        return [p for p in recipients if p.name != me and me not in p.gagged]

    # -- inviting and joining -----------------------------------------------------------------

    async def invitable(self, session: Session, target: Peer) -> SavedMatch | None:
        return await match_lifecycle.invitable(self, session, target)

    def invite(
        self,
        session: Session,
        target: Peer,
        saved: SavedMatch | None,
        request: MatchRequest | None,
    ) -> None:
        if request is None:
            invitation = match_lifecycle.resume_invitation(session, target, saved)
        else:
            invitation = match_lifecycle.new_invitation(
                self, session, target, request.length, request.rules, request.words, saved
            )
        match_lifecycle.invite(self, session, target, invitation, saved)

    async def join(self, session: Caller, name: str) -> None:
        await match_lifecycle.join(self, session, name)

    async def join_next_game(self, session: Caller) -> None:
        if session.name in self.chouettes:
            await self.chouette(session, ChouetteStart())
            return
        await match_lifecycle.join_next_game(self, session)

    async def leave(self, session: Caller) -> None:
        if session.name in self.chouettes:
            await self.chouette(session, ChouetteLeave())
            return
        await match_lifecycle.leave(self, session)

    async def session_ended(self, session: Caller) -> None:
        if session.name in self.chouettes and not session.replaced:  # away (D361)
            await chouette_commands.away(self, session.name)
        await match_lifecycle.session_ended(self, session)

    async def chouette(self, session: Caller, command: ChouetteCommand) -> None:
        await chouette_commands.command(self, session, command)

    # -- playing ------------------------------------------------------------------------------

    async def act(self, session: Caller, command: TableCommand) -> None:
        if session.name in self.chouettes:
            await chouette_commands.act(self, session, command)
            return
        await match_commands.act(self, session, command)

    # -- boards and watching ------------------------------------------------------------------

    async def show_board(self, session: Caller) -> None:
        style = session.settings.boardstyle
        chouette = self.chouettes.get(session.name)
        if chouette is not None:
            session.send_lines(chouette.board_for(session.name, style))
            return
        table = self.chouettes.get(session.watching or "")
        if table is not None:
            session.send_lines(table.board_for(session.name, style, watching=session.watching))
            return
        live = await announced(self, session.name)
        if live is not None:
            send_board(session, live, session.name, you=True)
            return
        if session.watching is not None:
            watched = await announced(self, session.watching)
            if watched is None:
                raise Reply(replies.not_playing_name(session.watching))
            send_board(session, watched, session.watching, you=False)
            return
        raise Reply(replies.NOT_PLAYING)

    async def show_pips(self, session: Caller) -> None:
        live = await announced(self, session.name)
        if live is not None:
            opponent = live.opponent_of(session.name)
            other = self.presence.get(opponent)
            if not session.toggles[Toggle.ALLOWPIP]:
                raise Reply(replies.TOGGLE_ALLOWPIP_FIRST)
            if other is not None and not other.toggles[Toggle.ALLOWPIP]:
                raise Reply(replies.doesnt_allow_pip(opponent))
            p = live.player_of(session.name)
            position = live.match.position
            mine, theirs = position.pips(p), position.pips(OPPOSITE[p])
            session.send(replies.pipcounts(replies.CALLER_NAME, mine, opponent, theirs))
            return
        watched = await announced(self, session.watching or "")
        if watched is None:
            raise Reply(replies.NOT_PLAYING_OR_WATCHING)
        position = watched.match.position
        a, b = watched.names
        session.send(replies.pipcounts(a, position.pips(0), b, position.pips(1)))

    async def look(self, session: Caller, target: Peer) -> None:
        live = await announced(self, target.name)
        if live is None:
            raise Reply(replies.not_playing_name(target.name))
        if any(session.name in s.blinded for s in players_of(self, live)):
            raise Reply(replies.doesnt_want_look(target.name))
        send_board(session, live, target.name, you=False)

    async def saved_board(self, session: Session, opponent: str) -> None:
        if session.name in self.matches:
            raise Reply(replies.CANT_WHILE_PLAYING)
        saved = await self.db.load_match(session.name, opponent)
        if saved is None:
            raise Reply(replies.no_saved_match_called(opponent))
        live = self._restored(saved)
        send_board(session, live, session.name, you=True)

    async def saved_moves(self, session: Session, opponent: str) -> None:
        saved = await self.db.load_match(session.name, opponent)
        if saved is None:
            raise Reply(replies.no_saved_game_with(opponent))
        live = self._restored(saved)
        match = live.match
        events = last_game(match)
        session.send_lines(oldmoves_lines(events, live.names, live.length, match.o_player))

    def _restored(self, saved: SavedMatch) -> LiveMatch:
        try:
            return LiveMatch.from_saved(saved, dice_proof.resumed_roller(self))
        except SnapshotError:
            raise Reply(replies.SAVED_MATCH_CORRUPT) from None

    async def watch(self, session: Caller, name: str) -> None:
        await match_lifecycle.watch(self, session, name)

    def stop_watching(self, session: Caller) -> None:
        match_lifecycle.stop_watching(self, session)

    def ban_watcher(self, name: str, watcher: Peer) -> None:
        live = self.matches.get(name)
        if watcher.watching != name and (live is None or watcher.watching not in live.names):
            return
        presence = self.presence
        if live is not None:
            live.watchers.discard(watcher.name)
            other = presence.get(live.opponent_of(name))
            if other is not None:
                presence.send(other, replies.bans_from_watching(name, watcher.name))
        presence.stop_watching(watcher, replies.bans_you(name))


def chouette_summary(table: LiveChouette) -> ChouetteSummary | None:
    """``table`` for ``show games`` (D364), when it has a game."""
    core = table.core
    if core.box is None or not core.line or core.game <= 0:
        return None
    captain = core.acting_captain() or core.line[0]
    return ChouetteSummary(core.box, captain, len(table.present()), core.game)


def _summary(live: LiveMatch) -> GameSummary:
    """``live`` for ``show games``."""
    score = live.match.score
    return GameSummary(live.names, live.length, (score[0], score[1]))
