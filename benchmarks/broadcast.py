"""What one login broadcast costs per recipient: the server's way against the alternatives.

Starts the server's own telnet edge (:func:`server.doors.telnet.start_server`) in this
process with a shell that only keeps each connection's :class:`server.doors.telnet.TelnetOutput`,
connects ``--clients`` raw sockets on 127.0.0.1 that read and discard, makes each a
logged-in CLIP session with ``notify`` on in a :class:`server.world.registry.LocalPresence`, then
times, on the same connections, the event-loop CPU of:

* ``two_writes``: how ``LocalPresence.announce_login`` sent a login before
  docs/performance.md §3 was applied: per recipient the CLIP 7 notice is formatted and
  sent, then the who lines are sent (two ``TelnetOutput.send`` calls, each a telnetlib3
  write: encoding, IAC escaping, one ``send`` system call);
* ``one_write``: one ``TelnetOutput.send`` per recipient with all three lines;
* ``pre_encoded``: the three lines encoded once, one bare ``transport.write`` of the same
  bytes per recipient (the floor for any way through ``TelnetOutput``);
* ``announce_login``, ``announce_logout``, ``who_update``: the server's own
  ``LocalPresence`` methods, as a login, a logout and a status change run them;
* ``who_list_format``: the new user's who list formatted from scratch
  (``Session.who_info().format()`` per user, as ``complete_login`` did before §3), against
  ``who_list``: ``LocalPresence.who_list()``, the cached CLIP 5 lines it sends now.

Prints one JSON object (microseconds per recipient, milliseconds per broadcast).
``python benchmarks/broadcast.py --clients 2000 --rounds 20``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from protocol import clip, replies  # noqa: E402
from protocol.replies import Mode  # noqa: E402
from server.config import Settings  # noqa: E402
from server.doors.telnet import LineReader, TelnetOutput, bound_port, start_server  # noqa: E402
from server.world.registry import LocalPresence  # noqa: E402
from server.world.session import Session  # noqa: E402


class Sink(asyncio.Protocol):
    """A client that reads everything and keeps nothing."""

    def __init__(self) -> None:
        self.bytes = 0

    def data_received(self, data: bytes) -> None:
        self.bytes += len(data)


async def run(clients: int, rounds: int) -> dict[str, Any]:
    outputs: list[TelnetOutput] = []
    connected = asyncio.Event()
    hold = asyncio.Event()

    async def shell(lines: LineReader, output: TelnetOutput) -> None:
        outputs.append(output)
        if len(outputs) == clients:
            connected.set()
        await hold.wait()

    settings = Settings(host="127.0.0.1", port=0, negotiation_wait=0.0)
    server = await start_server(settings, shell)
    port = bound_port(server)
    loop = asyncio.get_running_loop()
    sinks = []
    for _ in range(clients):
        sink = Sink()
        await loop.create_connection(lambda s=sink: s, "127.0.0.1", port)  # type: ignore[misc]
        sinks.append(sink)
    await asyncio.wait_for(connected.wait(), 60)
    registry = LocalPresence()
    sessions = []
    for i, output in enumerate(outputs):
        session = Session(output)
        session.name = f"user{i:05d}"
        session.mode = Mode.CLIP
        session.client = "bench"
        session.login_time = int(time.time())
        session.enter_lobby()
        registry.add(session)
        sessions.append(session)
    newcomer = sessions[0]

    def two_writes() -> None:
        lines = clip.who_update(newcomer.who_info())
        for other in sessions:
            other.send(replies.login_notice(newcomer.name, other.mode))
            other.send_lines(lines)

    def one_write() -> None:
        lines = [replies.login_notice(newcomer.name, Mode.CLIP)]
        lines += clip.who_update(newcomer.who_info())
        for other in sessions:
            other.send_lines(lines)

    def pre_encoded() -> None:
        lines = [replies.login_notice(newcomer.name, Mode.CLIP)]
        lines += clip.who_update(newcomer.who_info())
        payload = "".join(f"{line}\r\n" for line in lines).encode()
        for other in sessions:
            transport = other.output._writer.transport  # type: ignore[attr-defined]
            transport.write(payload)

    def announce_login() -> None:
        registry.announce_login(newcomer)

    def announce_logout() -> None:
        registry.announce_logout(newcomer)

    def who_update() -> None:
        registry.who_update(newcomer)

    def who_list_format() -> None:
        newcomer.send_lines(s.who_info().format() for s in sessions)

    def who_list() -> None:
        newcomer.send_lines(registry.who_list())

    results: dict[str, Any] = {"clients": clients, "rounds": rounds}
    for name, fn in (
        ("two_writes", two_writes),
        ("one_write", one_write),
        ("pre_encoded", pre_encoded),
        ("announce_login", announce_login),
        ("announce_logout", announce_logout),
        ("who_update", who_update),
        ("who_list_format", who_list_format),
        ("who_list", who_list),
    ):
        spent = 0.0
        for _ in range(rounds):
            start = time.thread_time()
            fn()
            spent += time.thread_time() - start
            await asyncio.sleep(0.05)  # let the clients read, so buffers stay empty
        per = spent / rounds / clients * 1e6
        results[f"{name}_us_per_recipient"] = round(per, 2)
        results[f"{name}_ms_per_login"] = round(spent / rounds * 1e3, 2)
    hold.set()
    server.close()
    await server.wait_closed()
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python benchmarks/broadcast.py", description=__doc__.splitlines()[0]
    )
    p.add_argument("--clients", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=20)
    args = p.parse_args(argv)
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(json.dumps(asyncio.run(run(args.clients, args.rounds)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
