"""**The table seam**: what a command may ask of the tables, whoever owns them.

Handlers never hold a running match: they send the owner of the tables what the user
asked for (a :data:`TableCommand` is plain, frozen data, parsed from the command's words
before it is sent) and the owner looks the caller's table up, applies the command under
that table's lock, saves, announces, and answers: nothing (done) or
:class:`server.errors.Reply` with the refusal. What handlers read of the tables comes as
plain values (:class:`GameSummary`, names, :class:`~server.world.presence.Peer` views),
never a :class:`~server.tables.matches.LiveMatch`. So the owner may live elsewhere (a
table on another node) and handlers stay as they are; ``tests/server/test_table_seam.py``
fails on any access around the seam.

The caller's own :class:`~server.world.session.Session` comes along for its replies, as
it does to the presence. Implemented by :class:`server.tables.local.LocalTables` (this
process's tables).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from backgammon.events import WinKind

if TYPE_CHECKING:
    from backgammon.chouette_settings import ChouetteSettings
    from db.records import SavedMatch
    from server.config import RulesDefaults
    from server.world.presence import Peer
    from server.world.session import Session


# -- commands as data -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Roll:
    """``roll`` (§4.4)."""


@dataclass(frozen=True, slots=True)
class Double:
    """``double`` (§4.6). At a chouette (D306), ``members``: the box doubles these
    members' cubes (none named: every cube it may turn), a member doubles these cubes
    delegated to them (none named: their own); a match ignores them."""

    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Moves:
    """``move ...`` (§4.5): the moves as typed, in the mover's absolute FIBS numbers,
    read by the owner, who knows the mover's colour."""

    text: str


@dataclass(frozen=True, slots=True)
class BearOff:
    """``off``: bear off with every die, when that is a legal play (§4.5)."""


@dataclass(frozen=True, slots=True)
class Accept:
    """``accept``: take a double or accept a resignation, whichever waits (§4.6, §4.7).
    At a chouette (D306), ``members``: the box accepts these members' doubles and
    rejects the rest (none named: all); a member answers for these cubes (none named:
    every cube they answer for); a match ignores them."""

    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Reject:
    """``reject``: drop a double or reject a resignation, whichever waits. At a chouette
    (D306), ``members``: the box rejects these members' doubles and accepts the rest
    (none named: rejects all); a member answers for these cubes."""

    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Redouble:
    """``redouble``, or ``beaver``/``raccoon``/``otter``, the name as typed (§4.6)."""

    name: str


@dataclass(frozen=True, slots=True)
class Resign:
    """``resign normal|gammon|backgammon`` (§4.7)."""

    kind: WinKind


TableCommand = Roll | Double | Moves | BearOff | Accept | Reject | Redouble | Resign
"""A game action a player sends to their table."""


@dataclass(frozen=True, slots=True)
class ChouetteOpen:
    """``chouette open [setting=value ...]`` (D303): the table's settings, parsed."""

    settings: ChouetteSettings


@dataclass(frozen=True, slots=True)
class ChouetteInvite:
    """``chouette invite NAME`` (D304): ``NAME`` as completed by the presence."""

    name: str


@dataclass(frozen=True, slots=True)
class ChouetteJoin:
    """``chouette join NAME``: accept the invitation to the table ``NAME`` sits at."""

    name: str


@dataclass(frozen=True, slots=True)
class ChouetteStart:
    """``chouette start``: the first game (later ones start when a game ends)."""


@dataclass(frozen=True, slots=True)
class ChouetteLeave:
    """``chouette leave`` (or ``leave`` at a chouette): leave the table (§8)."""


@dataclass(frozen=True, slots=True)
class ChouetteShow:
    """``show chouette [NAME]`` (D308): the caller's table, or the one ``NAME`` sits at."""

    name: str | None
    clip: bool
    """The line form for programs (a CLIP session's reply), else the text for people (a
    telnet session, or a ``text!`` command from the page's command box, D376)."""


@dataclass(frozen=True, slots=True)
class ChouetteDelegate:
    """``chouette delegate [NAME]`` (D313): NAME, another member of the line, makes the
    caller's cube decisions too (§8); without a name the delegation ends."""

    proxy: str | None


@dataclass(frozen=True, slots=True)
class ChouetteReturn:
    """``chouette return`` (D361): back to one's seat after a disconnection, a logout or a
    restart of the server (the table restored from the database when it is not running).

    ``at_login``: the server's own return at a login (D410), silent when the user sits at
    no table and, for a login that replaced a session still at the table, the new session
    seated and shown the table."""

    at_login: bool = False


@dataclass(frozen=True, slots=True)
class ChouetteRecord:
    """``chouette record [NAME]`` (D363): the caller's table's standings over its finished
    games, or NAME's chouette games over every table."""

    name: str | None


@dataclass(frozen=True, slots=True)
class TeamTalk:
    """``chouette team TEXT`` (D310): to the other members of the team, never the box."""

    text: str


ChouetteCommand = (
    ChouetteOpen
    | ChouetteInvite
    | ChouetteJoin
    | ChouetteStart
    | ChouetteLeave
    | ChouetteShow
    | ChouetteDelegate
    | ChouetteReturn
    | ChouetteRecord
    | TeamTalk
)
"""What a player asks of the chouette tables (docs/chouette.md); the game actions at a
chouette are the :data:`TableCommand`s."""


@dataclass(frozen=True, slots=True)
class MatchRequest:
    """What an invitation to a new match asks for (§4.3, D56)."""

    length: int | None
    """None: unlimited."""
    rules: RulesDefaults | None
    """The rules chosen with the invitation; None keeps fibs.conf's."""
    words: tuple[str, ...]
    """The rule words as given, for the ``** Match rules:`` line."""


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One running match, for ``show games`` (§4.14)."""

    names: tuple[str, str]
    length: int | None
    score: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ChouetteSummary:
    """One chouette table with a game, for ``show games`` (D364)."""

    box: str
    captain: str
    """The acting captain: who plays the team's checkers."""
    players: int
    """Everyone at the table (the waiting and the away included)."""
    game: int


# -- the seam ---------------------------------------------------------------------------


class Tables(Protocol):
    """The tables of the world: matches, invitations, watchers.

    Every method that changes something refuses with :class:`server.errors.Reply`
    (nothing changed) and otherwise answers the caller through ``session`` and everyone
    else through the presence, in the order one process gives them.
    """

    # -- looking ------------------------------------------------------------------------

    def playing(self, name: str) -> bool:
        """``name`` plays a running match, or sits at a chouette table."""
        ...

    def opponent_of(self, name: str) -> str | None:
        """The opponent of ``name`` in their running match; None when they play none."""
        ...

    def inviters_of(self, name: str) -> list[str]:
        """Who has invited ``name`` and waits for the answer, sorted."""
        ...

    def games(self) -> list[GameSummary]:
        """Every running match, once each."""
        ...

    def chouette_games(self) -> list[ChouetteSummary]:
        """Every chouette table with a game, once each (D364)."""
        ...

    async def hearers(self, session: Session, *, watchers_only: bool) -> list[Peer]:
        """Who hears ``session``'s table talk at the table it plays at or watches
        (``kibitz``: the players and the watchers; ``whisper``: the watchers only),
        the caller and whoever gags them left out (§4.12)."""
        ...

    # -- inviting and joining (§4.3, §4.8, §4.9) ---------------------------------------

    async def invitable(self, session: Session, target: Peer) -> SavedMatch | None:
        """Check that ``session`` may invite ``target`` now; their saved match, if any."""
        ...

    def invite(
        self,
        session: Session,
        target: Peer,
        saved: SavedMatch | None,
        request: MatchRequest | None,
    ) -> None:
        """Invite ``target`` to a new match (``request``) or to resume ``saved``
        (``request`` None)."""
        ...

    async def join(self, session: Session, name: str) -> None:
        """Accept ``name``'s invitation: the match starts or resumes."""
        ...

    async def join_next_game(self, session: Session) -> None:
        """``join`` between games: the second player's join starts the next game."""
        ...

    async def leave(self, session: Session) -> None:
        """``leave``: stop the match; it stays saved."""
        ...

    async def session_ended(self, session: Session) -> None:
        """``session`` left the server: its match saved, its invitation gone, its
        watchers told."""
        ...

    # -- playing (§4.4-§4.7) -------------------------------------------------------------

    async def act(self, session: Session, command: TableCommand) -> None:
        """Apply ``command`` for ``session`` at its table."""
        ...

    async def chouette(self, session: Session, command: ChouetteCommand) -> None:
        """Apply a chouette table's own ``command`` for ``session`` (docs/chouette.md);
        the game actions at a chouette go through :meth:`act`."""
        ...

    async def drained(self) -> None:
        """This node was drained and its users' connections are closed (D415): what
        still runs here for users of other nodes (a chouette, D446) leaves it, saved,
        for them to take up at their nodes."""
        ...

    # -- boards and watching (§4.10, §4.11) ----------------------------------------------

    async def show_board(self, session: Session) -> None:
        """The caller's board, or that of the player they watch, as announced (D197)."""
        ...

    async def show_pips(self, session: Session) -> None:
        """``pip``: the pip counts of the caller's match or the one they watch."""
        ...

    async def look(self, session: Session, target: Peer) -> None:
        """``look``: ``target``'s board."""
        ...

    async def saved_board(self, session: Session, opponent: str) -> None:
        """``oldboard``: the board of the caller's saved match with ``opponent``."""
        ...

    async def saved_moves(self, session: Session, opponent: str) -> None:
        """``oldmoves``: the last game of the caller's saved match with ``opponent``."""
        ...

    async def watch(self, session: Session, name: str) -> None:
        """``session`` starts watching ``name`` (§4.11)."""
        ...

    def stop_watching(self, session: Session) -> None:
        """``unwatch``."""
        ...

    def ban_watcher(self, name: str, watcher: Peer) -> None:
        """``name`` blinds ``watcher``, who watches them or their opponent: out of the
        table, the opponent told (§4.11, §4.12)."""
        ...
