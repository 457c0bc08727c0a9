"""A scripted fake FIBS server for the bot tests: real sockets, the exact texts of the spec.

:class:`FakeFibs` listens on 127.0.0.1 (port 0). It plays the login dialogue itself - the
banner and the ``login: `` prompt (§1.2), CLIP login and its CLIP 1/2/3/4/5/6 lines (§1.4),
a refused login (§1.5), the guest registration (§1.7) - and answers ``set boardstyle``,
``toggle`` and ``show saved`` like the server would (texts from :mod:`protocol.replies`).
Each logged-in connection becomes a :class:`FakeSession` the test drives: ``send`` lines to
the bot, ``expect`` the commands it sends. Every wait has a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from backgammon.board import Colour, Position
from protocol import replies
from protocol.board_fibs import board_line
from protocol.board_view import BoardState, SideState
from protocol.clip import MotdBegin, MotdEnd, OwnInfo, Welcome, WhoInfo, WhoInfoEnd
from protocol.replies import Toggle

IAC_WILL_ECHO = b"\xff\xfb\x01"
IAC_WONT_ECHO = b"\xff\xfc\x01"
IAC_DO_TTYPE = b"\xff\xfd\x18"
TIMEOUT = 5.0


def own_info(name: str, **toggles: bool) -> OwnInfo:
    """CLIP 2 for a fresh account (defaults of §4.15), with ``toggles`` changed."""
    info = OwnInfo(
        name=name,
        allowpip=True,
        autoboard=True,
        autodouble=False,
        automove=False,
        away=False,
        bell=False,
        crawford=True,
        double=True,
        experience=0,
        greedy=False,
        moreboards=False,
        moves=False,
        notify=True,
        rating=1500.0,
        ratings=False,
        ready=False,
        redoubles=0,
        report=True,
        silent=False,
        timezone="UTC",
    )
    return replace(info, **toggles)  # type: ignore[arg-type]


def who(name: str, opponent: str | None = None, *, ready: bool = True) -> WhoInfo:
    """A CLIP 5 line for ``name``."""
    return WhoInfo(
        name, opponent, None, ready, False, 1500.0, 0, 0, 1_700_000_000, "localhost", None, None
    )


class FakeSession:
    """One logged-in connection, as the test sees it."""

    def __init__(self, name: str, client: str, writer: asyncio.StreamWriter) -> None:
        self.name = name
        self.client = client
        self.lines: list[str] = []
        """Every line the bot sent after logging in, in order."""
        self.received: asyncio.Queue[str] = asyncio.Queue()
        self.closed = asyncio.Event()
        self._writer = writer

    async def send(self, *lines: str) -> None:
        """Send lines to the bot, each with CR LF."""
        self._writer.write("".join(f"{line}\r\n" for line in lines).encode())
        await self._writer.drain()

    async def expect(
        self, want: str | re.Pattern[str] | Callable[[str], bool], timeout: float = TIMEOUT
    ) -> str:
        """The next line the bot sends that equals / fully matches / satisfies ``want``
        (other lines are skipped but stay in :attr:`lines`).

        :raises TimeoutError: if no such line comes within ``timeout`` seconds.
        """

        def ok(line: str) -> bool:
            if isinstance(want, str):
                return line == want
            if isinstance(want, re.Pattern):
                return want.fullmatch(line) is not None
            return want(line)

        async def wait() -> str:
            while True:
                line = await self.received.get()
                if ok(line):
                    return line

        return await asyncio.wait_for(wait(), timeout)

    async def quiet(self, seconds: float = 0.3) -> list[str]:
        """Wait ``seconds`` and return the lines the bot sent meanwhile."""
        await asyncio.sleep(seconds)
        got = []
        while not self.received.empty():
            got.append(self.received.get_nowait())
        return got

    async def drop(self) -> None:
        """Close the connection abruptly (a crashed server or network)."""
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()


@dataclass
class FakeFibs:
    """The fake server. ``async with FakeFibs(...) as fibs``; ``await fibs.session()``."""

    accounts: dict[str, str] = field(default_factory=dict)
    toggles: dict[str, dict[str, bool]] = field(default_factory=dict)
    """Per account: CLIP 2 values differing from :func:`own_info` defaults."""
    saved: list[str] = field(default_factory=list)
    """``show saved`` lines (texts of :func:`protocol.replies.saved_line`)."""
    others: list[WhoInfo] = field(default_factory=list)
    """Users in the who list after login, besides the bot itself."""
    negotiate: bool = True
    """Open with ``IAC DO TTYPE`` as a telnetlib3 server does."""
    log: list[tuple[str, str]] = field(default_factory=list)
    """Every line read before a session starts: (phase, line)."""
    port: int = 0

    def __post_init__(self) -> None:
        self._sessions: asyncio.Queue[FakeSession] = asyncio.Queue()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.connections = 0
        self.registered: list[str] = []

    async def __aenter__(self) -> FakeFibs:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        for writer in list(self._writers):
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        await self._server.wait_closed()

    async def session(self, timeout: float = TIMEOUT) -> FakeSession:
        """The next connection that logged in with CLIP."""
        return await asyncio.wait_for(self._sessions.get(), timeout)

    # -- the server side --------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            await self._dialogue(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _dialogue(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def lines(*texts: str) -> None:
            writer.write("".join(f"{t}\r\n" for t in texts).encode())

        if self.negotiate:
            writer.write(IAC_DO_TTYPE)
        lines(*replies.BANNER, "")
        writer.write(replies.LOGIN_PROMPT.encode())
        while True:
            line = await _readline(reader)
            if line is None:
                return
            self.log.append(("login", line))
            words = line.split()
            if words == ["guest"]:
                await self._guest(reader, writer)
                return
            if len(words) == 5 and words[0] == "login" and self.accounts.get(words[3]) == words[4]:
                await self._clip_session(reader, writer, words[3], words[1])
                return
            writer.write(replies.LOGIN_PROMPT.encode())

    async def _guest(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def lines(*texts: str) -> None:
            writer.write("".join(f"{t}\r\n" for t in texts).encode())

        lines(*replies.GUEST_WELCOME)
        writer.write(replies.TELNET_PROMPT.encode())
        while True:
            line = await _readline(reader)
            if line is None:
                return
            self.log.append(("guest", line))
            if line == "bye":
                return
            if not line.startswith("name "):
                writer.write(replies.TELNET_PROMPT.encode())
                continue
            name = line[5:].strip()
            if name in self.accounts or name == "guest":
                lines(replies.name_taken(name))
                writer.write(replies.TELNET_PROMPT.encode())
                continue
            lines(replies.name_will_be(name), replies.NO_PASSWORD_HINT)
            writer.write(IAC_WILL_ECHO + replies.GIVE_PASSWORD_PROMPT.encode())
            first = await _readline(reader)
            writer.write(replies.RETYPE_PASSWORD_PROMPT.encode())
            second = await _readline(reader)
            writer.write(IAC_WONT_ECHO + b"\r\n")
            self.log.append(("guest", "<passwords>"))
            if first is None or first != second:
                return
            self.accounts[name] = first
            self.registered.append(name)
            lines(replies.REGISTERED, replies.REGISTERED_HINT)
            writer.write(replies.TELNET_PROMPT.encode())

    async def _clip_session(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str, client: str
    ) -> None:
        def lines(*texts: str) -> None:
            writer.write("".join(f"{t}\r\n" for t in texts).encode())

        info = own_info(name, **self.toggles.get(name, {}))
        values = {t: bool(getattr(info, t)) for t in replies.TOGGLES if hasattr(info, t)}
        lines(
            Welcome(name, 0, "localhost").format(),
            info.format(),
            MotdBegin().format(),
            "Welcome to the fake FIBS.",
            MotdEnd().format(),
            *(w.format() for w in [*self.others, who(name, ready=info.ready)]),
            WhoInfoEnd().format(),
        )
        await writer.drain()
        session = FakeSession(name, client, writer)
        await self._sessions.put(session)
        try:
            while True:
                line = await _readline(reader)
                if line is None:
                    return
                session.lines.append(line)
                await session.received.put(line)
                if line == "set boardstyle 3":
                    lines(replies.set_changed("boardstyle", "3"))
                elif line.startswith("toggle "):
                    toggle = Toggle(line.split()[1])
                    values[toggle] = not values.get(toggle, False)
                    lines(replies.toggle_message(toggle, values[toggle]))
                elif line == "show saved":
                    if self.saved:
                        lines(replies.SAVED_HEADER, *self.saved)
                    else:
                        lines(replies.NO_SAVED_GAMES)
                elif line == "bye":
                    lines(*replies.GOODBYE)
                    await writer.drain()
                    return
                await writer.drain()
        finally:
            session.closed.set()


async def _readline(reader: asyncio.StreamReader) -> str | None:
    """One line from the bot without CR LF and telnet bytes; None at end of input."""
    try:
        raw = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError:
        return None
    text = re.sub(rb"\xff[\xfb-\xfe].", b"", raw).decode()
    return text.rstrip("\r\n")


def board(
    me: Colour,
    *,
    dice: tuple[int, int] = (0, 0),
    turn: Colour | None = None,
    doubled: bool = False,
    may_double: tuple[bool, bool] = (True, True),
    points: tuple[int, ...] | None = None,
    length: int | None = 3,
    score: tuple[int, int] = (0, 0),
    cube: int = 1,
    me_name: str = "botty",
    opponent: str = "alice",
    post_crawford: bool = False,
) -> str:
    """The ``board:`` line the bot (colour ``me``) receives, built with :mod:`protocol`.

    ``dice`` are the dice of the side on ``turn`` (default: the bot); ``doubled`` means the
    bot must answer a double; ``may_double`` is (bot, opponent); ``points`` the 26 absolute
    numbers (default: the starting position); ``score`` is (bot, opponent).
    """
    turn = me if turn is None else turn
    mine = SideState(me_name, score[0], dice if turn is me else (0, 0), may_double[0])
    theirs = SideState(opponent, score[1], dice if turn is not me else (0, 0), may_double[1])
    o, x = (mine, theirs) if me is Colour.O else (theirs, mine)
    state = BoardState(
        o,
        x,
        points if points is not None else Position.start().fibs_board(),
        length,
        turn,
        cube,
        doubled=me if doubled else None,
        can_move=2 if dice != (0, 0) else 0,
        post_crawford=int(post_crawford),
    )
    return board_line(state, me)
