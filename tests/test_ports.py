"""No test listens on a fixed port: every server a test starts asks for port 0 (the
system gives a free one) or for one tests/ports.py found free in the test's worker's own
slice, so test runs never collide with each other or with a running server (README,
'Tests'). The bots' and benchmarks' ports are options (``--port``, ``--gnubg-port``),
tested where they are defined.
"""

from __future__ import annotations

import itertools
import re
import socket
from pathlib import Path

from tests import ports

ROOT = Path(__file__).resolve().parents[1]

_PORT_CHOICES = [
    re.compile(r"\bport\s*=\s*(\d+)"),  # Settings(port=...), settings.replace(port=...)
    re.compile(r"\"--port\",\s*\"(\d+)\""),  # a server or bot started with --port N
    re.compile(r"--port\s+(\d+)"),  # the same in a command line string
    re.compile(r"--gnubg-port\",?\s*\"?(\d+)"),
]


PARSED_ONLY = "parsed only"
"""A comment on a line (or the line before) whose port is only parsed, never used."""


def fixed_ports(text: str) -> list[str]:
    """The non-zero port numbers ``text`` chooses (lines marked :data:`PARSED_ONLY`
    left out)."""
    lines = text.splitlines()
    found: list[str] = []
    for number, line in enumerate(lines):
        if PARSED_ONLY in line or (number and PARSED_ONLY in lines[number - 1]):
            continue
        found.extend(
            m.group(0)
            for pattern in _PORT_CHOICES
            for m in pattern.finditer(line)
            if int(m.group(1)) != 0
        )
    return found


def test_the_scan_finds_a_fixed_port() -> None:
    assert fixed_ports('Settings(host="127.0.0.1", port=4321)') == ["port=4321"]
    assert fixed_ports('["python", "-m", "server", "--port", "4321"]') == ['"--port", "4321"']
    assert fixed_ports("Settings(port=0)") == []
    assert fixed_ports("parse(['--port', '1'])  # parsed only\n\nparse(['--port 2'])") == [
        "--port 2"
    ]


def test_no_test_chooses_a_fixed_port() -> None:
    found = {
        str(path.relative_to(ROOT)): ports
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "test_ports.py" and (ports := fixed_ports(path.read_text(encoding="utf-8")))
    }
    assert found == {}


_STARTS_THE_SERVER = re.compile(r'"-m",\s*"server"(?!,\s*"export")')
"""``python -m server`` started as a process (not its ``export`` command)."""

WEB_PORT_IN_CONFIG = "web port in its configuration"
"""A comment on a line that starts the server whose configuration file names the web
port."""


def servers_on_the_default_web_port(text: str) -> list[str]:
    """Where ``text`` starts ``python -m server`` with the web listener on its default
    port (8080): nowhere if the text turns it off (``--web-port``) or names it in a
    configuration (``[web]``); a start whose lines, or the one before or after, say
    :data:`WEB_PORT_IN_CONFIG` or :data:`PARSED_ONLY` left out. Each as its first line."""
    if "--web-port" in text or "[web]" in text:
        return []
    lines = text.splitlines()
    found = []
    for match in _STARTS_THE_SERVER.finditer(text):
        first = text.count("\n", 0, match.start())
        last = text.count("\n", 0, match.end()) + 1
        around = "\n".join(lines[max(first - 1, 0) : last + 1])
        if WEB_PORT_IN_CONFIG not in around and PARSED_ONLY not in around:
            found.append(lines[first].strip())
    return found


def test_every_server_process_a_test_starts_leaves_the_web_port_alone() -> None:
    """The web listener's default port is 8080 (fibs.conf): a test that starts the
    server as a process turns it off (``--web-port 0``) or names it in its own
    configuration, so that two such tests in parallel (the README's ``-n 3``) never both
    ask for 8080."""
    assert servers_on_the_default_web_port('["python", "-m",\n "server", "--port", "0"]')
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name != "test_ports.py"
        and (lines := servers_on_the_default_web_port(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_workers_free_ports_are_their_own_and_below_the_ephemeral_range() -> None:
    """tests/ports.py: three workers' slices do not overlap, and none reaches the
    ephemeral range that every outgoing connection takes its local port from."""
    end = ports.ephemeral_start()
    slices = [ports.worker_slice(f"gw{k}", 3, end) for k in range(3)]
    assert all(len(s) > 1000 for s in slices)
    assert all(a.stop <= b.start for a, b in itertools.pairwise(slices))
    assert slices[0].start == ports.LOWEST and slices[-1].stop <= end
    assert ports.worker_slice(None, 1, end) == range(ports.LOWEST, end)


def test_a_free_port_can_be_listened_on_and_a_taken_one_is_not_free() -> None:
    port = ports.free_port()
    assert ports.LOWEST <= port < ports.ephemeral_start()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", port))
        listener.listen()
        assert not ports.is_free(port)
    assert ports.is_free(port)
