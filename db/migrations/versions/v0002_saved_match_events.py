"""Add saved_match_events: a saved match's events as rows appended per action.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

Saved matches stored before this revision keep their whole text in
``saved_matches.snapshot`` and have no event rows; the server reads both forms
(docs/database.md). The downgrade writes the rows back into the text. Self-contained on
purpose, like 0001: this file knows the server's saved-match texts as they are at 0002.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the table of saved matches' events."""
    op.create_table(
        "saved_match_events",
        sa.Column("player1", sa.String(), nullable=False),
        sa.Column("player2", sa.String(), nullable=False),
        sa.Column("game", sa.Integer(), nullable=False),
        sa.Column("first_event", sa.Integer(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint(
            "player1", "player2", "game", "first_event", name="pk_saved_match_events"
        ),
        sa.CheckConstraint("game >= 0 AND first_event >= 0", name="ck_saved_match_events_position"),
        sa.ForeignKeyConstraint(
            ["player1", "player2"],
            ["saved_matches.player1", "saved_matches.player2"],
            name="fk_saved_match_events_player1_saved_matches",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    """Put each saved match's event rows back into its text, then drop the table.

    A match saved as state plus rows (the server's version 2 text) becomes the whole
    version 1 text that revision 0001's servers read: nothing saved is lost.
    """
    bind = op.get_bind()
    saved = sa.table(
        "saved_matches", sa.column("player1"), sa.column("player2"), sa.column("snapshot")
    )
    events = sa.table(
        "saved_match_events",
        sa.column("player1"),
        sa.column("player2"),
        sa.column("game"),
        sa.column("first_event"),
        sa.column("events"),
    )
    rows: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for player1, player2, game, text in bind.execute(
        sa.select(events.c.player1, events.c.player2, events.c.game, events.c.events).order_by(
            events.c.player1, events.c.player2, events.c.game, events.c.first_event
        )
    ):
        rows.setdefault((player1, player2), []).append((game, text))
    for player1, player2, snapshot in bind.execute(
        sa.select(saved.c.player1, saved.c.player2, saved.c.snapshot)
    ).all():
        data = json.loads(snapshot)
        if not isinstance(data, dict) or data.get("version") != 2:
            continue
        finished = data.pop("games")
        del data["events"]
        games: list[list[object]] = [[] for _ in range(finished + 1)]
        for game, text in rows.get((player1, player2), []):
            games[game].extend(json.loads(text))
        data["version"] = 1
        data["match"]["history"] = games[:finished]
        data["match"]["record"] = games[finished]
        whole = json.dumps(data, separators=(",", ":"), ensure_ascii=True)
        bind.execute(
            saved.update()
            .where(saved.c.player1 == player1, saved.c.player2 == player2)
            .values(snapshot=whole)
        )
    op.drop_table("saved_match_events")
