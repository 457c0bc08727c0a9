"""An analysis worker: a long-lived process that does a finished match's whole analysis
out of the server's process (``python -m server.analysis.worker``; docs/analysis.md).

The server (:mod:`server.analysis.workers`) starts one per ``[analysis] processes`` slot,
at the lowest priority, and writes it one request at a time, one line of JSON each: the
match record's data (its moves, its rules, its length, its start), the depth, gnubg's
path, the time-out, and whether it wants the analysis or gnubg's own file (SGF). The
worker builds the ``.mat`` text, runs gnubg on it (:mod:`server.analysis.gnubg`: the
temporary files, the process, its time-out), reads gnubg's output and answers with one
line of JSON (``ok``, the two players' rates, the ``size`` in bytes of what follows, or
the ``error``) and then, when ``ok``, that many bytes: the analysis as the database stores
it, or the SGF text. So the server neither forks a gnubg per match nor builds, parses or
writes anything of it on its event loop: it stores the bytes it is given.

A time-out kills gnubg, not the worker, which answers with the error and waits for the
next request. gnubg dies with its worker (Linux's parent-death signal). The worker ends
when its input ends (the server stopped or closed it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from typing import Any, BinaryIO

from backgammon.errors import SnapshotError
from protocol.analysis import AnalysisError, analysis_to_json
from protocol.mat_export import snapshot_to_mat
from server.analysis.gnubg import analyse_mat, sgf_of_mat
from server.analysis.workers import SGF


def mat_of(request: dict[str, Any]) -> tuple[str, bool]:
    """The request's ``.mat`` text, and whether gnubg must play it with the Jacoby rule
    (a money session's rule, which the file cannot say)."""
    mat = snapshot_to_mat(request["moves"], site=request["site"], started_at=request["started_at"])
    jacoby = not request["length"] and bool(json.loads(request["rules"]).get("jacoby"))
    return mat, jacoby


async def answer(request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """The reply's header and its payload for one request."""
    try:
        mat, jacoby = mat_of(request)
        options = {
            "ply": request["ply"],
            "binary": request["binary"],
            "jacoby": jacoby,
            "timeout": request["timeout"],
        }
        if request["kind"] == SGF:
            text, rates = await sgf_of_mat(mat, **options), None
        else:
            analysis = await analyse_mat(mat, **options)
            text = analysis_to_json(analysis)
            rates = [player.rate for player in analysis.players]
    except (AnalysisError, SnapshotError, ValueError) as exc:
        return {"ok": False, "error": str(exc)}, b""
    except Exception as exc:  # a bug: the server logs it with the match's id
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "bug": True}, b""
    payload = text.encode()
    return {"ok": True, "rates": rates, "size": len(payload)}, payload


def serve(source: BinaryIO, sink: BinaryIO) -> None:
    """Answer each request line of ``source`` on ``sink``, until ``source`` ends."""
    for line in source:
        header, payload = asyncio.run(answer(json.loads(line)))
        sink.write(json.dumps(header).encode() + b"\n" + payload)
        sink.flush()


def idle_priority() -> None:
    """This process and the gnubg it starts (the policy is inherited) run only on a core
    nobody else wants: Linux's ``SCHED_IDLE`` (sched(7)), below even ``nice 19``, which
    still took a share of the server's core often enough to triple the 500-match p99
    (docs/performance.md §21). Elsewhere the niceness alone."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def main() -> None:
    """Serve the server on stdin and stdout; anything else written to stdout goes to
    stderr, so that nothing but the replies reaches the server."""
    idle_priority()
    with os.fdopen(os.dup(sys.stdout.fileno()), "wb") as sink:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        serve(sys.stdin.buffer, sink)


if __name__ == "__main__":
    main()
