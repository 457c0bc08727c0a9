"""One match analysed by a ``gnubg`` process (Debian's GNU Backgammon, run beside us).

gnubg is GPL software: it runs as its own process and none of its code is part of this
project. :func:`analyse_mat` writes the match's ``.mat`` text and a short script for
gnubg's embedded Python into a temporary directory and runs ``gnubg -t -q -r -p`` on it:
the script sets the analysis depth, imports the match, runs gnubg's ``analyse match``,
converts each analysed cube decision's equities to normalised money equity with gnubg's
own ``mwc2eq`` at that decision's score and cube (navigating to it), and writes gnubg's
``match()`` dictionary as JSON. :func:`protocol.analysis.from_gnubg` reads it. The
process runs with one thread (``set threads 1``), so a worker uses one core at most, and
at the lowest priority (``nice -n 19``), so it takes only what the server leaves.

These functions run in an analysis worker's process (:mod:`server.analysis.worker`), never
in the server's: gnubg is the worker's child and dies with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Final

from protocol.analysis import AnalysisError, MatchAnalysis, from_gnubg

DEFAULT_BINARY: Final = "/usr/games/gnubg"
NICENESS: Final = 19
"""gnubg runs at the lowest priority (``nice``): when the cores are busy, the server's
play and its password hashing (niceness 10, :mod:`server.world.passwords`) go first
and the analyses wait."""
PLIES: Final = (0, 1, 2)
"""The depths an analysis may run at (0: gnubg's net alone, the default)."""

_ANALYSE: Final = """\
import json
import gnubg

PLY, MAT, OUT, JACOBY = %r, %r, %r, %r
for command in (
    "set threads 1",
    "set jacoby " + ("on" if JACOBY else "off"),
    "set analysis chequerplay evaluation plies %%d" %% PLY,
    "set analysis cubedecision evaluation plies %%d" %% PLY,
    'import mat "%%s"' %% MAT,
    "analyse match",
):
    gnubg.command(command)
"""
"""gnubg's commands: the depth, the match imported, analysed (the start of both scripts)."""

_SGF: Final = (
    _ANALYSE
    + """\
gnubg.command('save match "%%s"' %% OUT)
"""
)
"""The analysed match saved in gnubg's own format (SGF, with the analysis)."""

_SCRIPT: Final = (
    _ANALYSE
    + """\
match = gnubg.match(analysis=1, boards=0, statistics=1, verbose=0)
length = match["match-info"].get("match-length", 0)
gnubg.navigate()
for number, game in enumerate(match["games"]):
    if number:
        gnubg.navigate(game=1)
    at = 0
    for index, record in enumerate(game["game"]):
        analysis = record.get("analysis") or {}
        moves = analysis.get("moves")
        if moves and len(moves) > 1 and "imove" in analysis:
            # only the best play and the one made are read: the file stays small
            analysis["moves"] = [moves[0], moves[analysis["imove"]]]
            analysis["imove"] = 1
        if "nd-cubeful-eq" not in analysis:
            continue
        nd, dt = analysis["nd-cubeful-eq"], analysis["dt-cubeful-eq"]
        if length:
            gnubg.navigate(next=index - at)
            at = index
            nd, dt = gnubg.mwc2eq(nd), gnubg.mwc2eq(dt)
        analysis["nd-eq"], analysis["dt-eq"] = nd, dt
with open(OUT, "w") as out:
    json.dump(match, out)
"""
)
"""The analysed match as gnubg's ``match()`` data, in JSON (:func:`analyse_mat`)."""


_PR_SET_PDEATHSIG: Final = 1
_prctl = ctypes.CDLL(None).prctl if sys.platform == "linux" else None


def _die_with_parent() -> None:
    """In gnubg's process before it starts: Linux kills it when its parent (the worker)
    dies, so a worker killed, or ended by the server, leaves no gnubg running."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def find_gnubg(binary: str | None = None) -> str | None:
    """The gnubg executable: ``binary`` if given (and only it), else Debian's path, else
    ``gnubg`` on the PATH; None when there is none."""
    for candidate in (binary,) if binary else (DEFAULT_BINARY, "gnubg"):
        if path := shutil.which(candidate):
            return path
    return None


async def analyse_mat(
    mat: str, *, ply: int = 0, binary: str, jacoby: bool = False, timeout: float = 600.0
) -> MatchAnalysis:
    """gnubg's analysis of the match in ``mat`` (``.mat`` text) at ``ply``.

    ``jacoby``: the Jacoby rule for a money session (gnubg takes it from its own
    setting, the file cannot say it). The process is killed on timeout or cancellation.

    :raises AnalysisError: gnubg failed, timed out or gave nothing.
    """
    with tempfile.TemporaryDirectory(prefix="fibs-analysis-") as folder:
        out = await _run(_SCRIPT, Path(folder), mat, ply, binary, jacoby, timeout)
        # off the event loop: a 5-point match is some 130 kB of JSON
        return await asyncio.to_thread(_read, out, ply)


async def sgf_of_mat(
    mat: str, *, ply: int = 0, binary: str, jacoby: bool = False, timeout: float = 600.0
) -> str:
    """The match in ``mat`` analysed by gnubg at ``ply`` and saved in gnubg's own format
    (SGF, the analysis included: some 350 kB for a 5-point match).

    :raises AnalysisError: gnubg failed, timed out or gave nothing.
    """
    with tempfile.TemporaryDirectory(prefix="fibs-analysis-") as folder:
        out = await _run(_SGF, Path(folder), mat, ply, binary, jacoby, timeout)
        return await asyncio.to_thread(out.read_text, encoding="utf-8", errors="replace")


async def _run(
    script: str, here: Path, mat: str, ply: int, binary: str, jacoby: bool, timeout: float
) -> Path:
    """Run ``script`` in gnubg on ``mat`` in the folder ``here``; the file it wrote."""
    if ply not in PLIES:
        raise ValueError(f"ply must be one of {PLIES}, not {ply}")
    (here / "match.mat").write_text(mat)
    out = here / "analysis.out"
    code = here / "script.py"
    code.write_text(script % (ply, str(here / "match.mat"), str(out), jacoby))
    nice = shutil.which("nice")
    lower = (nice, "-n", str(NICENESS)) if nice else ()
    process = await asyncio.create_subprocess_exec(
        *lower,
        binary,
        "-t",
        "-q",
        "-r",
        "-p",
        str(code),
        cwd=here,
        preexec_fn=_die_with_parent,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        await _kill(process)
        raise AnalysisError(f"gnubg took more than {timeout:g} s") from None
    except BaseException:
        await _kill(process)
        raise
    if process.returncode != 0 or not out.exists():
        tail = stderr.decode(errors="replace")[-500:]
        raise AnalysisError(f"gnubg exited with {process.returncode}: {tail}")
    return out


def _read(path: Path, ply: int) -> MatchAnalysis:
    """gnubg's JSON file read into the analysis (in a thread)."""
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise AnalysisError(f"gnubg's output is not JSON: {exc}") from exc
    return from_gnubg(data, ply)


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill gnubg and reap it (shielded: a cancelled analysis leaves no process)."""
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(BaseException):
        await asyncio.shield(process.wait())
