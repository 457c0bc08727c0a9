"""A TCP proxy that delays every chunk by a fixed time each way, as the internet would.

``python -m benchmarks.delayproxy LISTEN_PORT TARGET_PORT [DELAY]`` forwards connections to
``127.0.0.1:LISTEN_PORT`` to ``127.0.0.1:TARGET_PORT``; every chunk read on one side is
written to the other ``DELAY`` seconds (default 0.040) after it was read, in order, so a
round trip takes twice ``DELAY`` plus the server's time. Chunks are kept as they were read
(no coalescing, no splitting): what a client far from the server sees, except that the
network's own jitter and segmenting are absent.

Real FIBS bots run here beside the server were run through it (docs/bots.md, "Real FIBS
bots on this server"): a bot that answers before the server's next line on 127.0.0.1
meets other races than at 40 ms each way, as on FIBS.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Copy ``reader`` to ``writer``, each chunk ``delay`` seconds after it was read;
    close ``writer`` once the reader's end and every chunk before it were delivered."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not data:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    delivering = asyncio.create_task(deliver())
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            queue.put_nowait((loop.time() + delay, data))
    queue.put_nowait((loop.time() + delay, b""))
    with contextlib.suppress(ConnectionError):
        await delivering


async def serve(listen: int, target: int, delay: float) -> None:
    """Accept on ``127.0.0.1:listen`` until cancelled, each connection to ``target``."""

    async def handle(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pump(client_r, server_w, delay), _pump(server_r, client_w, delay))

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    async with server:
        await server.serve_forever()


def main() -> None:
    """Parse the command line and run the proxy until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("listen", type=int, help="port to listen on (127.0.0.1)")
    parser.add_argument("target", type=int, help="port to forward to (127.0.0.1)")
    parser.add_argument("delay", type=float, nargs="?", default=0.040, help="seconds each way")
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.listen, args.target, args.delay))


if __name__ == "__main__":
    main()
