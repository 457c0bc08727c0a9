"""The server's CPU instructions per match action, counted by valgrind's callgrind.

Seconds of CPU per action move with the machine: on the shared machines of this project
the same code measured 0.55 to 0.75 ms per action from one run to the next. An
instruction count does not (the same workload twice: within 0.5 %), so it compares two
versions of the code on any machine, one after the other (docs/performance.md §13).

Runs ``benchmarks/load.py --scenario matches`` twice with the server under callgrind
(about 50 times slower, hence a few pairs at one action a second each), once with a
short and once with a long measured window, and divides the difference in instructions
by the difference in actions answered: what start-up, accounts and logins cost cancels
out. Prints one JSON object; needs ``valgrind``.

Run: ``python benchmarks/instructions.py [--pairs 20] [--short 5] [--long 40]
[--postgres URL] [--set SECTION.KEY=VALUE ...]``.

``--fixed`` counts a fixed workload instead of time windows (``benchmarks/fixed_play.py``:
``--pairs`` pairs play ``--matches`` 1-point matches each, one command at a time, the
server's dice seeded by ``--seed``): one server from its start to its stop with the
workload, one with the same logins and no action, and the difference divided by the
workload's actions. No window depends on the clock, so the count is the same from run
to run on a busy machine; ``--root`` runs another checkout's server (a worktree of an
older commit) with its own shipped fibs.conf, on a fresh SQLite file each run:
``python benchmarks/instructions.py --fixed [--root PATH] [--pairs 10] [--matches 2]
[--seed 7] [--port 4510] [--runs 2] [--set SECTION.KEY=VALUE ...] [--env NAME=VALUE
...]`` (``--env``: in the server's environment only, e.g. ``PYTHONMALLOC=pymalloc``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import fixed_play  # benchmarks/fixed_play.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
_TOTALS = re.compile(r"^totals: (\d+)", re.MULTILINE)


def one_run(args: argparse.Namespace, duration: float, workdir: Path) -> dict[str, Any]:
    """One load.py run under callgrind: its instructions, actions and errors."""
    profile = workdir / f"callgrind-{duration:g}.out"
    summary = workdir / f"summary-{duration:g}.json"
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "load.py"),
        "--scenario",
        "matches",
        "--pairs",
        str(args.pairs),
        "--rate",
        str(args.rate),
        "--duration",
        str(duration),
        "--warmup",
        "2",
        "--cheap-hashes",
        "--seed",
        str(args.seed),
        "--time-limit",
        "1800",
        "--server-callgrind",
        str(profile),
        "--json-out",
        str(summary),
    ]
    if args.postgres:
        command += ["--postgres", args.postgres]
    for setting in args.set or ():
        command += ["--set", setting]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    data = json.loads(summary.read_text())
    return {
        "instructions": callgrind_total(profile),
        "actions": data["totals"]["actions_answered"],
        "errors": data["errors"]["count"],
    }


def callgrind_total(profile: Path) -> int:
    """The instructions callgrind counted in ``profile``, all threads."""
    found = _TOTALS.search(profile.read_text(errors="replace"))
    if found is None:
        raise SystemExit(f"no instruction total in {profile}")
    return int(found.group(1))


def fixed(args: argparse.Namespace) -> dict[str, Any]:
    """The fixed workload's instructions per action (``--fixed``): a run with no action,
    then ``--runs`` runs of the workload, each a fresh server under callgrind."""
    root = args.root.resolve()
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="fibs-instructions-") as tmp:

        def one(matches: int, k: int) -> dict[str, Any]:
            profile = Path(tmp) / f"callgrind-{matches}-{k}.out"
            done = fixed_play.run(
                root,
                args.pairs,
                matches,
                args.seed,
                args.set or [],
                args.port,
                profile,
                args.env or [],
            )
            return {
                **done.counts,
                "instructions": callgrind_total(profile),
                "seconds": round(done.seconds),
            }

        idle = one(0, 0)
        runs = [one(args.matches, k) for k in range(1, args.runs + 1)]
    for r in runs:
        r["instructions_per_action"] = round(
            (r["instructions"] - idle["instructions"]) / r["actions"]
        )
    return {
        "root": str(root),
        "commit": commit,
        "database": "sqlite",
        "settings": args.set or [],
        "env": args.env or [],
        "pairs": args.pairs,
        "matches": args.matches,
        "seed": args.seed,
        "no_actions": idle,
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=int, default=20, help="matches played at once")
    p.add_argument("--rate", type=float, default=1.0, help="actions a second per player")
    p.add_argument("--short", type=float, default=5.0, help="the short window, seconds")
    p.add_argument("--long", type=float, default=40.0, help="the long window, seconds")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--fixed", action="store_true", help="a fixed workload (fixed_play.py)")
    p.add_argument("--root", type=Path, default=ROOT, help="--fixed: the server's checkout")
    p.add_argument("--matches", type=int, default=2, help="--fixed: matches each pair plays")
    p.add_argument("--runs", type=int, default=2, help="--fixed: runs of the workload")
    p.add_argument("--port", type=int, default=4510, help="--fixed: the server's port")
    p.add_argument("--postgres", metavar="URL", help="as load.py's --postgres")
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help="as load.py's --set (e.g. analysis.enabled=no)",
    )
    p.add_argument(
        "--env",
        action="append",
        metavar="NAME=VALUE",
        help="--fixed: set NAME in the server's environment only (e.g. PYTHONMALLOC=malloc)",
    )
    args = p.parse_args(argv)
    if args.fixed:
        print(json.dumps(fixed(args), indent=2))
        return 0
    with tempfile.TemporaryDirectory(prefix="fibs-instructions-") as tmp:
        short = one_run(args, args.short, Path(tmp))
        long = one_run(args, args.long, Path(tmp))
    actions = long["actions"] - short["actions"]
    if actions <= 0:
        raise SystemExit("the long run answered no more actions than the short one")
    per_action = (long["instructions"] - short["instructions"]) / actions
    print(
        json.dumps(
            {
                "database": "postgresql" if args.postgres else "sqlite",
                "pairs": args.pairs,
                "rate": args.rate,
                "runs": {"short": short, "long": long},
                "instructions_per_action": round(per_action),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
