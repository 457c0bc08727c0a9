"""docs/server.md keeps up with the command table and with fibs.conf."""

from __future__ import annotations

import configparser
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
