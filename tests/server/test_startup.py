"""``python -m server`` at start: every database problem is one line on standard error
and exit status 2, naming the database (password hidden) and what to do; the log says
which database was opened; the read-only tools never create a database file.

The PostgreSQL cases need a server: they run when ``FIBS_TEST_DATABASE_URL`` names one
(its database and role must exist; the tests create and drop their own databases).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from db.engine import create_engine
from server.__main__ import (
    JEMALLOC_OPTIONS,
    allocator_environment,
    event_loop_factory,
    jemalloc_library,
)
from server.config import ConfigError
from tests.conftest import EVENT_LOOP_VARIABLE, PG_URL_VARIABLE

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60

needs_postgresql = pytest.mark.skipif(
    not os.environ.get(PG_URL_VARIABLE),
    reason=f"needs a PostgreSQL server: set {PG_URL_VARIABLE}, e.g. "
    "postgresql+asyncpg://postgres@127.0.0.1:5432/test (README, 'Tests')",
)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command of this project, run from ``cwd`` (no fibs.conf there)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def start(database: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(
        "server",
        "--port",
        "0",
        "--web-port",
        "0",
        "--log-level",
        "WARNING",
        "--database",
        database,
        cwd=cwd,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The start failed with exit status 2 and exactly one line on standard error."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("fibs-server: database error: ")
    assert "Traceback" not in result.stderr and "cannot listen" not in result.stderr
    return lines[0]


def closed_port() -> int:
    """A local port nothing listens on (taken and given back)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_an_unsupported_url_hides_its_password(tmp_path: Path) -> None:
    line = one_line_error(start("mysql://alice:s3cret@db.example.org/fibs", tmp_path))
    assert "s3cret" not in line
    assert "mysql://alice:***@db.example.org/fibs" in line
    assert "use sqlite+aiosqlite:///PATH or postgresql+asyncpg://" in line


def test_text_that_is_not_a_url(tmp_path: Path) -> None:
    line = one_line_error(start("not a url", tmp_path))
    assert "invalid database URL 'not a url'" in line
    assert "use sqlite+aiosqlite:///PATH" in line


def test_an_sqlite_file_in_a_missing_folder(tmp_path: Path) -> None:
    line = one_line_error(start("sqlite+aiosqlite:///no/such/folder/fibs.db", tmp_path))
    folder = tmp_path / "no" / "such" / "folder"
    assert f"sqlite+aiosqlite:///{folder}/fibs.db" in line  # the path made absolute
    assert f"the folder {folder} does not exist; create it or give another path" in line
    assert not (tmp_path / "no").exists()


def test_a_postgresql_server_that_does_not_answer(tmp_path: Path) -> None:
    port = closed_port()
    line = one_line_error(start(f"postgresql+asyncpg://fibs:pw@127.0.0.1:{port}/fibs", tmp_path))
    assert f"postgresql+asyncpg://fibs:***@127.0.0.1:{port}/fibs" in line
    assert f"no PostgreSQL server answers at 127.0.0.1:{port}" in line
    assert "start it, or correct the host and port in the URL" in line


@needs_postgresql
def test_a_postgresql_database_that_does_not_exist(tmp_path: Path) -> None:
    name = f"fibs_missing_{uuid.uuid4().hex[:12]}"
    url = make_url(os.environ[PG_URL_VARIABLE]).set(database=name)
    line = one_line_error(start(url.render_as_string(hide_password=False), tmp_path))
    assert f"database '{name}' does not exist; create it with: createdb " in line
    assert line.endswith(f" {name}")
    assert f"-h {url.host or 'localhost'} -p {url.port or 5432}" in line


@needs_postgresql
def test_a_postgresql_role_that_does_not_exist(tmp_path: Path) -> None:
    role = f"fibs_nobody_{uuid.uuid4().hex[:12]}"
    url = make_url(os.environ[PG_URL_VARIABLE]).set(username=role, password="pw")
    line = one_line_error(start(url.render_as_string(hide_password=False), tmp_path))
    assert f'role "{role}" does not exist; create the role with: createuser ' in line
    assert ":pw@" not in line and f"{role}:***@" in line


@pytest.fixture
async def empty_postgresql_database() -> AsyncIterator[str]:
    """The URL of a new, empty PostgreSQL database, dropped afterwards."""
    admin_url = os.environ[PG_URL_VARIABLE]
    name = f"fibs_empty_{uuid.uuid4().hex[:12]}"
    admin = create_engine(admin_url).execution_options(isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as connection:
            await connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as connection:
            await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


async def serve_once(
    database: str,
    cwd: Path,
    *,
    log_level: str = "WARNING",
    config: Path | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """Start the server, read its listening line, stop it with SIGTERM; its log.
    ``env``: the environment (default: this one's), ``PYTHONPATH`` set in it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        *(["--config", str(config)] if config is not None else []),
        "--port",
        "0",
        "--web-port",
        "0",  # no web listener: port 8080 may be taken
        "--log-level",
        log_level,
        "--database",
        database,
        cwd=cwd,
        env={**(os.environ if env is None else env), "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    try:
        line = (await asyncio.wait_for(process.stdout.readline(), TIMEOUT)).decode()
        assert line.startswith("fibs-server listening on 127.0.0.1:"), (
            line + (await process.stderr.read()).decode()
        )
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), TIMEOUT) == 0
        return (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@needs_postgresql
async def test_an_empty_postgresql_database_is_migrated_at_start(
    empty_postgresql_database: str, tmp_path: Path
) -> None:
    log = await serve_once(empty_postgresql_database, tmp_path, log_level="INFO")
    shown = make_url(empty_postgresql_database).render_as_string(hide_password=True)
    assert f"database {shown} (postgresql)" in log
    assert "Running upgrade  -> 0001" in log


async def test_the_log_names_the_sqlite_file_it_opened(tmp_path: Path) -> None:
    log = await serve_once("sqlite+aiosqlite:///fibs.db", tmp_path, log_level="INFO")
    assert f"database sqlite+aiosqlite:///{tmp_path / 'fibs.db'} (sqlite)" in log


async def test_the_server_runs_on_the_event_loop_it_is_configured_with(tmp_path: Path) -> None:
    """uvloop by default (docs/performance.md §14); the standard library's when asked."""
    log = await serve_once("sqlite+aiosqlite:///fibs.db", tmp_path, log_level="INFO")
    assert "event loop uvloop" in log
    config = tmp_path / "asyncio.conf"
    config.write_text("[server]\nevent_loop = asyncio\n", encoding="utf-8")
    log = await serve_once("sqlite+aiosqlite:///fibs.db", tmp_path, log_level="INFO", config=config)
    assert "event loop asyncio" in log


async def test_the_tests_run_on_the_servers_default_event_loop() -> None:
    """The in-process tests run on uvloop, as the server does by default; with
    FIBS_TEST_EVENT_LOOP=asyncio on the standard library's loop (tests/conftest.py)."""
    expected = os.environ.get(EVENT_LOOP_VARIABLE, "uvloop")
    assert type(asyncio.get_running_loop()).__module__.partition(".")[0] == expected


async def test_the_server_starts_with_the_allocator_it_is_configured_with(
    tmp_path: Path,
) -> None:
    """D434, D450: jemalloc by default; Python's pymalloc and glibc's malloc when asked,
    the process started again with PYTHONMALLOC (and LD_PRELOAD) set (the same process:
    the SIGTERM to the pid started ends it, its start-up logged once); a PYTHONMALLOC
    the operator set always wins."""
    if jemalloc_library() is None:
        pytest.skip("jemalloc is not installed (Debian: apt-get install libjemalloc2)")
    unset = {k: v for k, v in os.environ.items() if k not in ("PYTHONMALLOC", "LD_PRELOAD")}
    url = "sqlite+aiosqlite:///fibs.db"
    log = await serve_once(url, tmp_path, log_level="INFO", env=unset)
    assert "memory: Python's objects from jemalloc (PYTHONMALLOC=malloc, LD_PRELOAD)" in log
    assert log.count("memory: glibc") == 1, "the start-up ran once (the restart is before it)"
    for allocator, named in [
        ("pymalloc", "Python's pymalloc (PYTHONMALLOC=pymalloc)"),
        ("malloc", "glibc's malloc (PYTHONMALLOC=malloc)"),
    ]:
        config = tmp_path / f"{allocator}.conf"
        config.write_text(f"[server]\nallocator = {allocator}\n", encoding="utf-8")
        log = await serve_once(url, tmp_path, log_level="INFO", config=config, env=unset)
        assert f"memory: Python's objects from {named}" in log
        assert log.count("memory: glibc") == 1
    operator = {**unset, "PYTHONMALLOC": "pymalloc"}
    log = await serve_once(url, tmp_path, log_level="INFO", env=operator)
    assert "memory: Python's objects from Python's pymalloc" in log
    operator = {**unset, "PYTHONMALLOC": "malloc"}
    log = await serve_once(url, tmp_path, log_level="INFO", env=operator)
    assert "memory: Python's objects from glibc's malloc" in log


def test_jemalloc_is_preloaded_with_its_options_unless_missing_or_overridden() -> None:
    """D450: the environment the server starts itself again with for jemalloc: every
    object from ``malloc``, jemalloc's first (before the operator's own preloads), its
    background thread unless the operator set ``MALLOC_CONF``; none when jemalloc is
    not installed (pymalloc then) or ``PYTHONMALLOC`` is set."""
    found = lambda: "libjemalloc.so.2"  # noqa: E731
    env = allocator_environment("jemalloc", {"PATH": "/bin"}, found)
    assert env == {
        "PATH": "/bin",
        "PYTHONMALLOC": "malloc",
        "LD_PRELOAD": "libjemalloc.so.2",
        "MALLOC_CONF": JEMALLOC_OPTIONS,
    }
    env = allocator_environment("jemalloc", {"LD_PRELOAD": "a.so", "MALLOC_CONF": "x:1"}, found)
    assert env is not None and env["LD_PRELOAD"] == "libjemalloc.so.2:a.so"
    assert env["MALLOC_CONF"] == "x:1"
    assert allocator_environment("jemalloc", {}, lambda: None) is None
    assert allocator_environment("jemalloc", {"PYTHONMALLOC": "pymalloc"}, found) is None
    assert allocator_environment("malloc", {}, found) == {"PYTHONMALLOC": "malloc"}


@pytest.mark.parametrize(
    "setting, error",
    [
        (
            "allocator = tcmalloc",
            "[server] allocator must be jemalloc or pymalloc or malloc, not 'tcmalloc'",
        ),
        ("event_loop = trio", "[server] event_loop must be uvloop or asyncio, not 'trio'"),
    ],
)
def test_an_unknown_choice_is_refused_in_one_line(tmp_path: Path, setting: str, error: str) -> None:
    config = tmp_path / "bad.conf"
    config.write_text(f"[server]\n{setting}\n", encoding="utf-8")
    result = run("server", "--config", str(config), "--port", "0", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"fibs-server: configuration error: {error}"]


def test_uvloop_missing_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """A platform without uvloop: the start names the package and the other setting."""
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    with pytest.raises(ConfigError, match=r"needs the uvloop package .* event_loop = asyncio"):
        event_loop_factory("uvloop")
    assert event_loop_factory("asyncio") is None


def test_db_current_never_creates_a_file(tmp_path: Path) -> None:
    result = run("db", "current", "sqlite+aiosqlite:///fibs.db", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"python -m db: there is no database at sqlite+aiosqlite:///{tmp_path / 'fibs.db'}: "
        "the file does not exist (the server creates it at its first start; check "
        "--database or fibs.conf)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_export_never_creates_a_file(tmp_path: Path) -> None:
    result = run("server", "export", "1", "--database", "sqlite:///fibs.db", cwd=tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert "there is no database at" in line and "the file does not exist" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("module", "shown"),
    [
        ("server", "python -m server"),
        ("db", "python -m db"),
        ("bots.random", "python -m bots.random"),
        ("bots.gnubg", "python -m bots.gnubg"),
    ],
)
def test_help_shows_how_it_is_run(module: str, shown: str, tmp_path: Path) -> None:
    result = run(module, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: {shown} ")
    assert "__main__" not in result.stdout


def test_server_help_lists_every_command(tmp_path: Path) -> None:
    result = run("server", "--help", cwd=tmp_path)
    commands = result.stdout.split("commands:\n", 1)[1].splitlines()
    assert commands[0].split()[0] == "(none)"
    assert commands[1].split()[:2] == ["export", "MATCH_ID"]
    export = run("server", "export", "--help", cwd=tmp_path)
    assert export.stdout.startswith("usage: python -m server export ")
