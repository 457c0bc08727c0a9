"""Database maintenance from the command line: ``python -m db COMMAND URL``.

* ``upgrade URL`` — migrate to the newest schema (the server also does this at start).
* ``current URL`` — print the database's revision (``none`` when empty) and the newest one.
* ``revision URL -m MESSAGE [--autogenerate]`` — developers: write the next revision file
  ``db/migrations/versions/vNNNN_<slug>.py``, with ``--autogenerate`` filled in from the
  difference between ``db/models.py`` and the database at ``URL`` (which must be up to date).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from alembic import command
from alembic.config import Config

from db.engine import (
    cannot_open,
    create_engine,
    current_revision,
    head_revision,
    migrate_engine,
    normalize_url,
    require_sqlite_file,
    run_alembic,
)
from db.errors import DatabaseError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m db", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in [
        ("upgrade", "migrate the database to the newest schema"),
        ("current", "show the database's revision and the newest one"),
        ("revision", "write a new revision file (developers)"),
    ]:
        sub = commands.add_parser(name, help=text)
        sub.add_argument("url", help="database URL, e.g. sqlite+aiosqlite:///fibs.db")
        sub.add_argument("--schema", help="PostgreSQL schema (search_path)")
        if name == "revision":
            sub.add_argument("-m", "--message", required=True, help="what the revision does")
            sub.add_argument(
                "--autogenerate", action="store_true", help="compare models with the database"
            )
    return parser


async def _run(arguments: argparse.Namespace) -> str:
    url = normalize_url(arguments.url)
    if arguments.command == "current":
        require_sqlite_file(url)  # reading must not leave an empty file behind
    try:
        return await _command(arguments)
    except Exception as exc:
        unavailable = cannot_open(url, exc)
        if unavailable is None:
            raise
        raise unavailable from exc


async def _command(arguments: argparse.Namespace) -> str:
    engine = create_engine(arguments.url, schema=arguments.schema)
    try:
        if arguments.command == "upgrade":
            await migrate_engine(engine)
            return f"at revision {await current_revision(engine)}"
        if arguments.command == "current":
            return f"current {await current_revision(engine) or 'none'}, head {head_revision()}"
        next_id = f"{int(head_revision()) + 1:04d}"

        def write(config: Config) -> None:
            config.set_main_option("file_template", "v%%(rev)s_%%(slug)s")
            command.revision(
                config,
                message=arguments.message,
                autogenerate=arguments.autogenerate,
                rev_id=next_id,
            )

        await run_alembic(engine, write)
        return f"wrote revision {next_id}"
    finally:
        await engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; print its result, or a one-line error and return 1."""
    arguments = _parser().parse_args(argv)
    try:
        print(asyncio.run(_run(arguments)))
    except (ValueError, DatabaseError) as exc:
        print(f"python -m db: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
