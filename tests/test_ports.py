"""No test listens on a fixed port: every server a test starts asks for port 0 (the
system gives a free one), so test runs never collide with each other or with a running
server (README, 'Tests'). The bots' and benchmarks' ports are options (``--port``,
``--gnubg-port``), tested where they are defined.
"""

from __future__ import annotations

import re
from pathlib import Path

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
