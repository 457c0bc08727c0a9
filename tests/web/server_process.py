"""``python -m tests.web.server_process FOLDER WEB_PORT SEED``: the browser tests' server
(tests/web/browsers.py ``serve``) as a process of its own, for a test that kills it with
SIGKILL and starts it again (tests/web/test_reconnect.py). Prints ``listening <telnet
port> <web port>`` once it accepts connections, then runs until it is killed."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

from .browsers import page_settings, serve


async def main(folder: Path, web_port: int, seed: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The port of the run that was killed, at once: its connections may be in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", web_port))
    service = await serve(page_settings(folder), seed, sock)
    print(f"listening {service.port} {web_port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
