"""One TCP connection to a FIBS server: send lines, read lines and prompts, with timeouts.

Built on ``asyncio.open_connection``; :class:`bots.telnet.TelnetFilter` removes telnet
negotiation and :class:`bots.telnet.LineSplitter` finds lines and prompts. Text is decoded
as UTF-8 with replacement (FIBS itself is 7-bit, §1.1).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from types import TracebackType

from bots.telnet import LineSplitter, Prompt, TelnetFilter

log = logging.getLogger(__name__)

_READ_SIZE = 4096


class ConnectionClosed(ConnectionError):
    """The server closed the connection (end of input)."""


class Connection:
    """A FIBS connection: :meth:`send` a command, :meth:`read` the next line or prompt.

    Use :meth:`open` to connect; close with :meth:`close` or ``async with``.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._filter = TelnetFilter()
        self._lines = LineSplitter()
        self._eof = False
        self.name = ""
        """Used in log messages (the account name once known)."""

    @classmethod
    async def open(cls, host: str, port: int, *, timeout: float = 30.0) -> Connection:
        """Connect to ``host:port``.

        :raises OSError: if the connection cannot be made (``TimeoutError`` after ``timeout``).
        """
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        return cls(reader, writer)

    async def __aenter__(self) -> Connection:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        return self._eof or self._writer.is_closing()

    async def send(self, line: str, *, secret: bool = False) -> None:
        """Send one command line (CR LF appended); a ``secret`` line is not logged.

        :raises ConnectionError: if the connection is gone.
        """
        if self._writer.is_closing():
            raise ConnectionClosed("connection closed")
        log.debug("%s >> %s", self.name, "****" if secret else _mask(line))
        self._writer.write(line.encode("utf-8", "replace") + b"\r\n")
        await self._writer.drain()

    async def read(
        self, prompts: Iterable[str] = (), *, timeout: float | None = None
    ) -> str | Prompt:
        """The next line (without terminator), or one of ``prompts`` printed without one.

        :raises ConnectionClosed: at end of input (after the last line was returned).
        :raises TimeoutError: if nothing arrives within ``timeout`` seconds.
        """
        wanted = tuple(prompts)
        if timeout is None:
            return await self._read(wanted)
        return await asyncio.wait_for(self._read(wanted), timeout)

    async def _read(self, prompts: tuple[str, ...]) -> str | Prompt:
        while True:
            item = self._lines.pop(prompts)
            if item is not None:
                if isinstance(item, str):
                    log.debug("%s << %s", self.name, item)
                return item
            if self._eof:
                tail = self._lines.flush()
                if tail is not None:
                    return tail
                raise ConnectionClosed("connection closed by the server")
            data = await self._reader.read(_READ_SIZE)
            if not data:
                self._eof = True
                continue
            clean, reply = self._filter.feed(data)
            if reply and not self._writer.is_closing():
                self._writer.write(reply)
            self._lines.feed(clean.decode("utf-8", "replace"))

    async def close(self) -> None:
        """Close the connection; never raises."""
        if not self._writer.is_closing():
            self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 5.0)
        except (OSError, TimeoutError) as exc:
            log.debug("%s: error while closing: %r", self.name, exc)


def _mask(line: str) -> str:
    """The line as it may be logged: the password of a CLIP login line replaced."""
    words = line.split(" ")
    if len(words) == 5 and words[0] == "login":
        return " ".join([*words[:4], "****"])
    return line
