"""How input becomes commands (issue 19 items 2 and 3): every line-end convention is one
line end (LF CR too, split across packets or not), blank lines cost nothing and get no
reply in CLIP mode, a repeated command is answered as FIBS answers it, and the listen
backlog is the configured one.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import sys
import time
from pathlib import Path

import pytest

from backgammon.dice import ScriptedDice
from protocol import replies
from protocol.replies import Toggle
from server.app import App
from server.config import ConfigError, Settings, load
from server.doors.output import TOO_LONG
from server.doors.telnet import LineReader, effective_backlog, kernel_somaxconn
from tests.conftest import DbTarget

from .conftest import Connect, ScriptedClient, clip_login, serving
from .sessions import command, login_all, telnet_login

pytestmark = pytest.mark.known_lines

LINE_ENDS = {"CR LF": "\r\n", "LF": "\n", "LF CR": "\n\r", "CR": "\r", "CR NUL": "\r\x00"}


class _Chunks:
    """A stand-in for telnetlib3's reader: the given chunks, then EOF."""

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks
        self.buffered = sum(len(c) for c in chunks)

    async def read(self, n: int) -> str:
        if not self.chunks:
            return ""
        chunk = self.chunks.pop(0)
        self.buffered -= len(chunk)
        return chunk

    def at_eof(self) -> bool:
        return not self.chunks


async def _lines(chunks: list[str]) -> list[str]:
    reader = LineReader(_Chunks(chunks), max_len=80)
    got: list[str] = []
    while (line := await reader.readline()) is not None:
        got.append(line)
    return got


@pytest.mark.parametrize("end", LINE_ENDS.values(), ids=LINE_ENDS.keys())
async def test_each_line_end_is_one_end_wherever_the_packets_split(end: str) -> None:
    """``roll``, a blank line, ``board``: three lines, however the stream is cut."""
    stream = f"roll{end}{end}board{end}"
    assert await _lines([stream]) == ["roll", "", "board"]
    for cut in range(1, len(stream)):
        assert await _lines([stream[:cut], stream[cut:]]) == ["roll", "", "board"], cut
    assert await _lines(list(stream)) == ["roll", "", "board"]


async def test_the_count_of_unread_input() -> None:
    reader = LineReader(_Chunks(["time\r\nwho\r\nha", "lf"]), max_len=80)
    assert reader.unread == 15  # all of it still in telnetlib3's reader
    assert await reader.readline() == "time"
    assert reader.unread == 8  # "who" and one for its end, "ha", and "lf" in the reader
    assert reader.queued_line() == "who"
    assert reader.queued_line() is None
    assert reader.unread == 4
    assert await reader.readline() is None  # EOF: "half" was never ended
    assert reader.unread == 4


async def test_settling_drops_an_over_long_line_as_far_as_it_has_come() -> None:
    """D451: what waits in telnetlib3's reader goes through the line splitting; the
    start of a line past ``max_len`` no longer counts, the lines before it do."""
    reader = LineReader(_Chunks(["who\r\n" + "x" * 200, "x\r\ntime\r\n"]), max_len=80)
    assert reader.unread == 214
    assert await reader.settle() == 4 + 9  # "who" and its end; the next chunk unread
    assert await reader.readline() == "who"
    assert await reader.readline() == TOO_LONG
    assert await reader.readline() == "time"


async def test_an_over_long_line_is_reported_once() -> None:
    long = "x" * 200
    assert await _lines([f"a\n{long[:100]}", f"{long[100:]}\n\rb\n\r"]) == ["a", TOO_LONG, "b"]


async def _send_lines(client: ScriptedClient, lines: list[str], end: str, *, split: bool) -> None:
    """Each line with ``end``; with ``split`` the line end's second half comes in a packet
    of its own (the client waits a little before sending it)."""
    for line in lines:
        data = (line + end).encode()
        if split and len(end) == 2:
            await client.send_raw(data[:-1])
            await asyncio.sleep(0.005)
            await client.send_raw(data[-1:])
        else:
            await client.send_raw(data)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A slow rate: one token more per command would cost seconds."""
    return settings.replace(commands_per_second=5.0, command_burst=20)


@pytest.mark.parametrize("split", [False, True], ids=["whole", "split"])
@pytest.mark.parametrize("end", LINE_ENDS.values(), ids=LINE_ENDS.keys())
@pytest.mark.alone  # a time limit is asserted
async def test_n_commands_get_n_answers_whatever_the_line_ends(
    connect: Connect, app: App, end: str, split: bool
) -> None:
    """20 commands (the burst) and 20 blank lines: 20 answers at once, nothing more. Were
    a line end or a blank line to cost a token, the last answers would wait 4 s."""
    alice, bob = await login_all(connect, app, "alice", "bob")
    await alice.send("away lunch")  # an away user is reminded after each reply ...
    await alice.expect(replies.YOURE_AWAY)
    await _quiet(alice)
    started = time.monotonic()
    commands = [line for i in range(20) for line in (f"tell bob {i}", "")]
    await _send_lines(alice, commands, end, split=split)
    got = [await alice.line(1.0) for _ in range(20 * 2)]
    assert time.monotonic() - started < 2.0
    assert got == [line for i in range(20) for line in (f"16 bob {i}", replies.YOURE_AWAY)]
    assert [await bob.line(1.0) for _ in range(20)] == [f"12 alice {i}" for i in range(20)]
    await alice.nothing(0.3)  # ... but not after a blank line (CLIP)


async def _quiet(client: ScriptedClient, gap: float = 0.3) -> None:
    """Read until nothing arrives for ``gap`` seconds."""
    while True:
        try:
            await client.line(gap)
        except TimeoutError:
            return


async def test_a_blank_line_in_telnet_mode_gets_the_prompt(connect: Connect, app: App) -> None:
    client = await telnet_login(connect, app, "alice")
    for end in LINE_ENDS.values():
        await client.send_raw(end.encode())
        assert await client.prompt(replies.TELNET_PROMPT, 1.0) == []
    (answer,) = await command(client, "time")  # and the next command as usual
    assert answer.endswith(" UTC )")


async def test_a_move_sent_twice_is_answered_as_fibs_answers_it(connect: Connect, app: App) -> None:
    """The BaldLies client sends each move twice, with LF CR line ends (it moves on the
    board pushed to it and on the one it asks for): the second is refused (§4.5)."""
    app.dice = lambda: ScriptedDice((3, 1))
    app.coin = lambda: 0  # alice plays first with 3-1
    alice, bob = await login_all(connect, app, "alice", "bob")
    for client in (alice, bob):
        await client.send("set boardstyle 3")
        await client.expect("Value of 'boardstyle' set to 3.")
        await client.send("toggle ready")
        await client.expect(replies.toggle_message(Toggle.READY, True))
    await alice.send("invite bob 3")
    await bob.expect("Type 'join alice' to accept.")
    await bob.send("join alice")
    await alice.expect(replies.YOUR_TURN_TO_MOVE)
    await alice.send_raw(b"move 8-5 6-5\n\rboard\n\rmove 8-5 6-5\n\r")
    await bob.expect(replies.moves("alice", ["8-5", "6-5"]))
    lines = await alice.expect(replies.NOT_YOUR_TURN_TO_MOVE)
    assert lines[-1].startswith("board:")  # the asked-for board, between the two moves
    await alice.nothing(0.3)
    await bob.expect(replies.ROLL_OR_DOUBLE)


def _listen_backlog(sock: socket.socket) -> int:
    """A listening socket's backlog, from Linux's TCP_INFO: on a listening socket
    ``tcpi_sacked`` (the sixth 32-bit field, after 8 bytes of flags) holds it."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return int(struct.unpack_from("6I", info, 8)[5])


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="reads Linux's TCP_INFO")


@linux_only
@pytest.mark.parametrize("backlog", [Settings().listen_backlog, 777])
async def test_the_listen_backlog_is_the_configured_one(
    settings: Settings, db_target: DbTarget, backlog: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="server.doors.telnet")
    expected = effective_backlog(backlog, kernel_somaxconn())
    async with serving(settings.replace(listen_backlog=backlog), db_target) as service:
        listener = service.listener
        assert listener is not None
        for transport_socket in listener.sockets:
            with transport_socket.dup() as sock:
                assert _listen_backlog(sock) == expected
    assert f"listen backlog {expected} (configured {backlog}," in caplog.text


def test_the_backlog_is_capped_by_somaxconn(tmp_path: Path) -> None:
    path = tmp_path / "somaxconn"
    path.write_text("128\n")
    assert effective_backlog(4096, kernel_somaxconn(str(path))) == 128
    assert effective_backlog(100, kernel_somaxconn(str(path))) == 100
    assert kernel_somaxconn(str(tmp_path / "missing")) is None
    assert effective_backlog(4096, None) == 4096


@pytest.mark.alone  # a time limit is asserted
async def test_300_connects_at_once_all_get_the_login_prompt(connect: Connect, app: App) -> None:
    async def connect_and_wait() -> float:
        started = time.monotonic()
        reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
        try:
            data = b""
            while not data.endswith(replies.LOGIN_PROMPT.encode()):
                chunk = await asyncio.wait_for(reader.read(4096), 10)
                assert chunk, "closed before the login prompt"
                data += chunk
            return time.monotonic() - started
        finally:
            writer.close()

    waits = await asyncio.gather(*(connect_and_wait() for _ in range(300)))
    assert len(waits) == 300
    assert max(waits) < 5.0  # a dropped SYN is retried only after 1 s, 3 s, 7 s ...
    alice = await clip_login(connect, app, "alice")  # and the server goes on as usual
    await alice.send("time")
    assert (await alice.line()).endswith(" UTC )")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[server]\nlisten_backlog = 0\n", "[server] listen_backlog must be 1 or more"),
        ("[server]\nlisten_backlog = many\n", "[server] listen_backlog must be a whole number"),
        (
            "[limits]\nmax_unread_input = 1000\n",
            "[limits] max_unread_input must be at least 4096 and twice max_line_length",
        ),
        (
            "[limits]\nmax_line_length = 4000\nmax_unread_input = 4096\n",
            "[limits] max_unread_input must be at least 4096 and twice max_line_length",
        ),
        ("[limits]\nmax_unread_input = 64k\n", "[limits] max_unread_input must be a whole"),
    ],
)
def test_bad_values_stop_the_start_with_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "fibs.conf"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load(path)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_the_shipped_values() -> None:
    settings = load(Path(__file__).parents[2] / "fibs.conf")
    assert settings.listen_backlog == 4096 and settings.max_unread_input == 65_536
    assert settings == Settings(listen_backlog=4096, max_unread_input=65_536)
