"""docs/server.md keeps up with the command table and with fibs.conf."""

from __future__ import annotations

import ast
import configparser
import functools
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from protocol.commands import iter_visible
from server.config import load

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")


def test_every_command_is_in_the_reference() -> None:
    def cell(synopsis: str) -> str:
        return "`" + synopsis.replace("|", "\\|") + "`"  # | is escaped in a table

    assert [c.synopsis for c in iter_visible() if cell(c.synopsis) not in DOC] == []


def test_every_setting_of_fibs_conf_is_documented() -> None:
    conf = ROOT / "fibs.conf"
    load(conf)  # the shipped file is valid
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(conf, encoding="utf-8")
    keys = [key for section in parser.sections() for key in parser[section]]
    assert keys
    assert [key for key in keys if f"`{key}`" not in DOC] == []


# -- every snippet of the docs runs as written ---------------------------------------------

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_PROJECT_PROGRAMS = ("backgammon", "bots.", "db", "server")
"""``python -m`` modules of this project (``bots.`` covers every bot)."""


def blocks(language: str) -> list[tuple[str, str]]:
    """Every ``language`` code block of the docs: (file name, code)."""
    return [
        (path.name, code)
        for path in DOCS
        for code in re.findall(
            rf"^```{language}\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M
        )
    ]


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: lines joined at ``\\``, comments dropped, split at
    ``&&``, leading ``NAME=value`` assignments and input redirections removed."""
    joined = code.replace("\\\n", " ")
    found: list[list[str]] = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in [*words, "&&"]:
            if word != "&&":
                command.append(word)
                continue
            while command and re.fullmatch(r"[A-Z_]+=\S*", command[0]):
                command.pop(0)
            if "<" in command:
                command = command[: command.index("<")]
            if command:
                found.append(command)
            command = []
    return found


@functools.cache
def help_text(*program: str) -> str:
    """What ``program --help`` prints (a sub-command's own help when it has one)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, *program, "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout if done.returncode == 0 else ""


def problems(command: list[str]) -> list[str]:
    """Why ``command`` would not run as written (options its help does not list, paths
    that do not exist, extras pyproject.toml does not define); [] for other programs."""
    if command[:3] == ["pip", "install", "-e"]:
        extras = re.fullmatch(r"\.(?:\[(\w+)\])?", command[3])
        defined = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]
        if extras is None:
            return [f"not this project: {command[3]}"]
        return [] if extras.group(1) in (None, *defined) else [f"no extra {command[3]}"]
    if command[0] != "python":
        return []  # telnet, createdb, mypy...: not this project's
    if command[1] == "-m" and command[2] == "pytest":
        return [
            f"no {w}"
            for w in command[3:]
            if w.startswith("tests") and not (ROOT / w.split("::")[0]).exists()
        ]
    if command[1] == "-m" and command[2].startswith(_PROJECT_PROGRAMS):
        program, rest = command[1:3], command[3:]
    elif command[1].endswith(".py"):
        if not (ROOT / command[1]).is_file():
            return [f"no file {command[1]}"]
        program, rest = command[1:2], command[2:]
    else:
        return []
    text = help_text(*program)
    if rest and re.fullmatch(r"[a-z]+", rest[0]):  # a sub-command with its own help
        text = help_text(*program, rest[0]) or text
    if not text:
        return [f"{' '.join(program)} --help fails"]
    options = [w.split("=")[0] for w in rest if w.startswith("--")]
    return [f"{option} is not in its --help" for option in options if option not in text]


def test_the_command_check_finds_mistakes() -> None:
    wrong = ["python", "-m", "server", "--prot", "1"]  # parsed only
    assert problems(wrong) == ["--prot is not in its --help"]
    assert problems(["python", "benchmarks/nothing.py"]) == ["no file benchmarks/nothing.py"]
    assert problems(["pip", "install", "-e", ".[nothing]"]) == ["no extra .[nothing]"]
    assert commands("A=1 python -m db current x && echo \\\n  hi  # note\n") == [
        ["python", "-m", "db", "current", "x"],
        ["echo", "hi"],
    ]


def test_every_shell_command_of_the_docs_runs_as_written() -> None:
    found = {
        f"{name}: {' '.join(command)}": trouble
        for name, code in blocks("sh")
        for command in commands(code)
        if (trouble := problems(command))
    }
    assert found == {}


def test_every_python_snippet_of_the_docs_compiles() -> None:
    """Python blocks compile (``await`` allowed at the top, as in an asyncio REPL); the
    bots' examples play (tests/bots/test_bots_docs.py), the database's runs below."""
    for name, code in blocks("python"):
        compile(code, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


async def test_the_database_snippet_runs(tmp_path: Path) -> None:
    ((_, code),) = [(n, c) for n, c in blocks("python") if "Database.open" in c]
    settings = load(None, database=f"sqlite+aiosqlite:///{tmp_path / 'fibs.db'}")
    namespace: dict[str, object] = {"settings": settings}
    done = eval(
        compile(code, "database.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT), namespace
    )
    if done is not None:
        await done
    assert (tmp_path / "fibs.db").is_file()
