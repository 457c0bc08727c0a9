"""GNU Backgammon as a separate process, spoken to over its ``external`` socket.

gnubg is GPL software: it runs as its own process and none of its code is part of this
project. :class:`GnubgEngine` starts ``gnubg -t -q -r`` (text mode, quiet, no rc files),
writes the strength settings and ``external localhost:PORT`` to its standard input, waits
for ``Waiting for a connection from localhost:PORT...`` and connects. Each request is one
line and each answer one line, under a lock (gnubg serves one request at a time) and a
timeout. If gnubg dies, hangs or closes the socket, the engine kills it, starts a new one
and retries the request once. :meth:`close` kills the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import socket
from types import TracebackType
from typing import Final

from bots.gnubg.translate import Conventions, move_request
from protocol.board_fibs import parse_board

log = logging.getLogger(__name__)

DEFAULT_BINARY: Final = "/usr/games/gnubg"
_WAITING: Final = b"Waiting for a connection from"


class GnubgError(RuntimeError):
    """gnubg could not be started or did not answer."""


class GnubgRefused(GnubgError):
    """gnubg answered ``Error: ...``: it could not read the request."""


def find_gnubg(binary: str | None = None) -> str | None:
    """The gnubg executable: ``binary`` if given, else Debian's path, else ``gnubg`` on PATH."""
    for candidate in (binary, DEFAULT_BINARY, "gnubg"):
        if candidate and (path := shutil.which(candidate)):
            return path
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class GnubgEngine:
    """One gnubg process. ``async with GnubgEngine(plies=1) as engine:`` then :meth:`ask`.

    :param plies: lookahead of chequer play and cube decisions (0 fastest, 2 strongest
        of the usual settings).
    :param timeout: seconds for one answer (and for the start).
    :param port: the local port of gnubg's ``external`` socket; 0 (the default) takes a
        free one at each start. gnubg cannot pick one itself: given port 0 it does not
        say which it took.
    """

    def __init__(
        self,
        *,
        plies: int = 0,
        binary: str | None = None,
        timeout: float = 60.0,
        port: int = 0,
    ) -> None:
        if not 0 <= plies <= 4:
            raise ValueError(f"plies must be 0..4, not {plies}")
        if not 0 <= port <= 65535:
            raise ValueError(f"port must be 0..65535, not {port}")
        self.plies = plies
        self.port = port
        self.binary = binary
        self.timeout = timeout
        self.conventions = Conventions()
        self.restarts = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._drain_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._calibrated = False
        self._started = False

    async def __aenter__(self) -> GnubgEngine:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Start gnubg and connect (and calibrate, the first time).

        :raises GnubgError: if the binary is missing or gnubg does not come up in time.
        """
        async with self._lock:
            await self._start()
        if not self._calibrated:
            self._calibrated = True
            await self._calibrate()

    async def _start(self) -> None:
        binary = find_gnubg(self.binary)
        if binary is None:
            raise GnubgError("gnubg not found (Debian: apt-get install gnubg)")
        port = self.port or _free_port()
        proc = await asyncio.create_subprocess_exec(
            binary,
            "-t",
            "-q",
            "-r",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        commands = [
            f"set evaluation chequerplay evaluation plies {self.plies}",
            f"set evaluation cubedecision evaluation plies {self.plies}",
            "set threads 1",
            f"external localhost:{port}",
        ]
        proc.stdin.write("".join(f"{c}\n" for c in commands).encode())
        try:
            await proc.stdin.drain()
            await asyncio.wait_for(self._wait_listening(proc.stdout), self.timeout)
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port), self.timeout
            )
        except (OSError, TimeoutError, EOFError) as exc:
            await self._kill()
            raise GnubgError(f"gnubg did not start: {exc!r}") from exc
        self._drain_task = asyncio.create_task(self._drain(proc.stdout))
        self._started = True
        log.info("gnubg %d listening on port %d (%d plies)", proc.pid, port, self.plies)

    @staticmethod
    async def _wait_listening(stdout: asyncio.StreamReader) -> None:
        while True:
            line = await stdout.readline()
            if not line:
                raise EOFError("gnubg exited before listening")
            log.debug("gnubg: %s", line.decode(errors="replace").rstrip())
            if line.startswith(_WAITING):
                return

    @staticmethod
    async def _drain(stdout: asyncio.StreamReader) -> None:
        """Keep reading gnubg's console so its pipe never fills up."""
        while line := await stdout.readline():
            log.debug("gnubg: %s", line.decode(errors="replace").rstrip())

    async def close(self) -> None:
        """Stop gnubg (terminate, then kill); never raises."""
        async with self._lock:
            await self._kill()

    async def _kill(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        self._reader = self._writer = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 5.0)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if proc is not None and proc.stdin is not None:
            proc.stdin.close()
        if self._drain_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._drain_task, 5.0)
            self._drain_task = None

    # -- requests --------------------------------------------------------------------------

    async def ask(self, line: str) -> str:
        """Send one request line, return gnubg's one-line answer (stripped).

        Runs to completion even if the caller is cancelled, so the socket stays in step.

        :raises GnubgError: if gnubg fails twice (it is restarted in between).
        """
        return await asyncio.shield(self._ask_locked(line))

    async def _ask_locked(self, line: str) -> str:
        async with self._lock:
            failure: Exception | None = None
            for _attempt in range(2):
                try:
                    if not self._alive():
                        if self._started:
                            self.restarts += 1
                            log.warning("gnubg is not running; starting it again")
                        await self._kill()
                        await self._start()
                    return await self._exchange(line)
                except GnubgRefused:
                    raise
                except (OSError, TimeoutError, EOFError, GnubgError) as exc:
                    failure = exc
                    log.warning("gnubg request failed (%r); restarting it", exc)
                    await self._kill()
            raise GnubgError(f"gnubg failed twice: {failure!r}") from failure

    def _alive(self) -> bool:
        return (
            self._writer is not None
            and self._proc is not None
            and self._proc.returncode is None
            and not self._writer.is_closing()
        )

    async def _exchange(self, line: str) -> str:
        assert self._reader is not None and self._writer is not None
        log.debug("gnubg << %s", line)
        self._writer.write(line.encode() + b"\n")
        await self._writer.drain()
        answer = await asyncio.wait_for(self._reader.readuntil(b"\n"), self.timeout)
        text = answer.decode(errors="replace").strip()
        log.debug("gnubg >> %s", text)
        if text.startswith("Error"):
            raise GnubgRefused(f"gnubg refused {line!r}: {text}")
        return text

    async def _calibrate(self) -> None:
        """Find how this gnubg reads the score fields (see :mod:`bots.gnubg.translate`).

        5-point match, post-Crawford, the bot trails 0-4 in the starting position: the
        trailer must double. gnubg says ``double`` if it reads the scores as sent.
        """
        probe = (
            "board:You:opponent:5:0:4:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0"
            ":1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:1:0"
        )
        view = parse_board(probe)
        try:
            answer = await self.ask(move_request(view, Conventions(swap_scores=False)))
        except GnubgError as exc:
            log.warning("gnubg calibration failed (%s); assuming gnubg 1.07 conventions", exc)
            return
        self.conventions = Conventions(swap_scores=answer != "double")
        reads = "the opponent's" if self.conventions.swap_scores else "the player's"
        log.info("gnubg reads field 4 as %s score", reads)
