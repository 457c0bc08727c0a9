"""Every statement the repository runs, built once per back end with named parameters.

Statements are SQLAlchemy Core constructs whose values are all ``bindparam``\\ s, so one
object serves every call: SQLAlchemy caches its compiled form for PostgreSQL, and
:mod:`db.runner` compiles it once to SQLite text. The few differences between the back
ends are decided here: ``INSERT ... ON CONFLICT`` comes from the back end's dialect, and
names sort in code-point order (``COLLATE "C"`` on PostgreSQL, SQLite's default BINARY).

Selected columns come in the order of the ``*_COLUMNS`` tuples, which the repository
uses to turn rows into records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Update,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import InstrumentedAttribute

from db.models import (
    BlindRow,
    ChouetteResultRow,
    GagRow,
    MatchAnalysisRow,
    MatchRecordRow,
    MessageRow,
    SavedChouettePlayerRow,
    SavedChouetteRow,
    SavedEventsRow,
    SavedMatchRow,
    TableOwnerRow,
    UserRow,
    WebTokenRow,
)

__all__ = [
    "ANALYSIS_COLUMNS",
    "MESSAGE_COLUMNS",
    "RECORD_COLUMNS",
    "SAVED_COLUMNS",
    "USER_COLUMNS",
    "ListStatements",
    "Statements",
]


def _keys(table: Any) -> tuple[str, ...]:
    """The column names of an ORM table, in declaration order."""
    return tuple(column.key for column in table.__table__.columns)


USER_COLUMNS: Final = _keys(UserRow)
SAVED_COLUMNS: Final = _keys(SavedMatchRow)
_SAVED_EVENTS_COLUMNS: Final = _keys(SavedEventsRow)
RECORD_COLUMNS: Final = _keys(MatchRecordRow)
MESSAGE_COLUMNS: Final = _keys(MessageRow)
ANALYSIS_COLUMNS: Final = _keys(MatchAnalysisRow)

_ListTable = type[GagRow] | type[BlindRow]


def _param(column: InstrumentedAttribute[Any], name: str | None = None) -> BindParameter[Any]:
    """A named parameter with the column's type (so PostgreSQL gets it right)."""
    return bindparam(name or column.key, type_=column.type)


def _columns(table: Any, keys: Iterable[str]) -> list[InstrumentedAttribute[Any]]:
    return [getattr(table, key) for key in keys]


def _values(table: Any, keys: Iterable[str]) -> dict[str, BindParameter[Any]]:
    """``{column: :column}`` for an INSERT or UPDATE."""
    return {key: _param(getattr(table, key)) for key in keys}


class ListStatements:
    """The statements of one of the per-user name lists (gags or blinds)."""

    def __init__(self, table: _ListTable, dialect: str) -> None:
        owner, target = _param(table.owner), _param(table.target)
        self.targets: Final = select(table.target).where(table.owner == owner).order_by(table.id)
        self.add: Final = (
            _dialect_insert(table, dialect)
            .values(owner=owner, target=target)
            .on_conflict_do_nothing(index_elements=["owner", "target"])
            .returning(table.id)
        )
        self.remove: Final = (
            delete(table)
            .where(table.owner == _param(table.owner), table.target == _param(table.target))
            .returning(table.id)
        )


class Statements:
    """The repository's statements for one back end (``"sqlite"`` or ``"postgresql"``)."""

    def __init__(self, dialect: str) -> None:
        self._dialect = dialect
        self._user_updates: dict[tuple[str, ...], Update] = {}
        name = _param(UserRow.name)

        # -- users
        self.insert_user: Final = insert(UserRow).values(_values(UserRow, USER_COLUMNS))
        self.user: Final = select(*_columns(UserRow, USER_COLUMNS)).where(UserRow.name == name)
        self.user_exists: Final = select(UserRow.name).where(UserRow.name == name)
        self.names_like: Final = (
            select(UserRow.name)
            .where(func.lower(UserRow.name) == func.lower(name))
            .order_by(self._name_order(UserRow.name))
        )
        self.count_users: Final = select(func.count()).select_from(UserRow)
        self.gags: Final = ListStatements(GagRow, dialect)
        self.blinds: Final = ListStatements(BlindRow, dialect)

        # -- messages
        recipient = _param(MessageRow.recipient)
        message_keys = [key for key in MESSAGE_COLUMNS if key != "id"]
        self.insert_message: Final = (
            insert(MessageRow).values(_values(MessageRow, message_keys)).returning(MessageRow.id)
        )
        self.messages_for: Final = (
            select(*_columns(MessageRow, MESSAGE_COLUMNS))
            .where(MessageRow.recipient == recipient)
            .order_by(MessageRow.sent_at, MessageRow.id)
        )
        self.delete_message: Final = (
            delete(MessageRow)
            .where(MessageRow.id == _param(MessageRow.id), MessageRow.recipient == recipient)
            .returning(MessageRow.id)
        )
        self.count_messages: Final = select(func.count()).where(MessageRow.recipient == recipient)
        self.count_messages_from: Final = select(func.count()).where(
            MessageRow.sender == _param(MessageRow.sender)
        )

        # -- the web page's session tokens (D320-D329)
        token_user = _param(WebTokenRow.user_name)
        self.insert_token: Final = insert(WebTokenRow).values(
            _values(WebTokenRow, _keys(WebTokenRow))
        )
        self.user_of_token: Final = select(WebTokenRow.user_name).where(
            WebTokenRow.digest == _param(WebTokenRow.digest),
            WebTokenRow.expires_at > _param(WebTokenRow.expires_at, "now"),
        )
        self.tokens_of: Final = (
            select(WebTokenRow.digest, WebTokenRow.expires_at)
            .where(WebTokenRow.user_name == token_user)
            .order_by(WebTokenRow.issued_at.desc(), WebTokenRow.digest)
        )
        self.delete_token: Final = (
            delete(WebTokenRow)
            .where(
                WebTokenRow.digest == _param(WebTokenRow.digest),
                WebTokenRow.user_name == token_user,
            )
            .returning(WebTokenRow.digest)
        )
        self.delete_tokens_of: Final = (
            delete(WebTokenRow)
            .where(WebTokenRow.user_name == token_user)
            .returning(WebTokenRow.digest)
        )

        # -- saved matches
        table = SavedMatchRow.table_id == _param(SavedMatchRow.table_id)
        pair = and_(
            SavedMatchRow.player1 == _param(SavedMatchRow.player1),
            SavedMatchRow.player2 == _param(SavedMatchRow.player2),
        )
        upsert = _dialect_insert(SavedMatchRow, dialect).values(
            _values(SavedMatchRow, SAVED_COLUMNS)
        )
        self.save_match: Final = upsert.on_conflict_do_update(
            index_elements=["table_id"],
            set_={
                key: upsert.excluded[key]
                for key in SAVED_COLUMNS
                if key not in ("table_id", "player1", "player2")
            },
        )
        self.load_match: Final = select(*_columns(SavedMatchRow, SAVED_COLUMNS)).where(pair)
        self.delete_match: Final = (
            delete(SavedMatchRow).where(table).returning(SavedMatchRow.table_id)
        )
        self.displace_saved: Final = delete(SavedMatchRow).where(
            pair, SavedMatchRow.table_id != _param(SavedMatchRow.table_id)
        )
        events_of_table = SavedEventsRow.table_id == _param(SavedEventsRow.table_id)
        self.insert_saved_events: Final = insert(SavedEventsRow).values(
            _values(SavedEventsRow, _SAVED_EVENTS_COLUMNS)
        )
        self.delete_saved_events: Final = delete(SavedEventsRow).where(events_of_table)
        self.saved_events: Final = (
            select(SavedEventsRow.game, SavedEventsRow.first_event, SavedEventsRow.events)
            .where(events_of_table)
            .order_by(SavedEventsRow.game, SavedEventsRow.first_event)
        )
        # -- who runs a match's table: its fencing token (docs/cluster.md, "Fencing")
        owner = TableOwnerRow.table_id == _param(TableOwnerRow.table_id)
        claim = _dialect_insert(TableOwnerRow, dialect).values(
            {**_values(TableOwnerRow, ("table_id", "node", "claimed_at")), "epoch": 1}
        )
        self.claim_table: Final = claim.on_conflict_do_update(
            index_elements=["table_id"],
            set_={
                "epoch": TableOwnerRow.epoch + 1,
                "node": claim.excluded.node,
                "claimed_at": claim.excluded.claimed_at,
            },
        ).returning(TableOwnerRow.epoch)
        self.table_epoch: Final = select(TableOwnerRow.epoch).where(owner)
        self.table_epoch_locked: Final = self.table_epoch.with_for_update()
        self.release_table: Final = delete(TableOwnerRow).where(owner)
        self.save_match_with_events: Final = _save_match_with_events(replay=False)
        self.save_match_replayed: Final = _save_match_with_events(replay=True)
        self.end_match: Final = _end_match(replay=False)
        self.end_match_replayed: Final = _end_match(replay=True)
        plays_in = or_(
            SavedMatchRow.player1 == _param(UserRow.name),
            SavedMatchRow.player2 == _param(UserRow.name),
        )
        self.saved_matches_of: Final = select(*_columns(SavedMatchRow, SAVED_COLUMNS)).where(
            plays_in
        )
        self.count_saved_matches: Final = select(func.count()).where(plays_in)

        # -- finished matches
        record_keys = [key for key in RECORD_COLUMNS if key != "id"]
        self.insert_record: Final = (
            insert(MatchRecordRow)
            .values(_values(MatchRecordRow, record_keys))
            .returning(MatchRecordRow.id)
        )
        self.record: Final = select(*_columns(MatchRecordRow, RECORD_COLUMNS)).where(
            MatchRecordRow.id == _param(MatchRecordRow.id)
        )
        # A user's finished matches, newest first (records_of, rates_of).
        played_by = or_(
            MatchRecordRow.player1 == _param(UserRow.name),
            MatchRecordRow.player2 == _param(UserRow.name),
        )
        newest_first = (MatchRecordRow.ended_at.desc(), MatchRecordRow.id.desc())
        self.records_of: Final = (
            select(*_columns(MatchRecordRow, RECORD_COLUMNS))
            .where(played_by)
            .order_by(*newest_first)
            # SQLite's compiler adds an OFFSET to every LIMIT: name it, or it gets a
            # generated parameter name.
            .offset(bindparam("offset"))
            .limit(bindparam("limit"))
        )

        # -- analyses of finished matches
        analysis_id = MatchAnalysisRow.match_id == _param(MatchAnalysisRow.match_id)
        self.insert_analysis: Final = insert(MatchAnalysisRow).values(
            _values(MatchAnalysisRow, ANALYSIS_COLUMNS)
        )
        self.delete_analysis: Final = delete(MatchAnalysisRow).where(analysis_id)
        self.drop_queued_analysis: Final = (
            delete(MatchAnalysisRow)
            .where(analysis_id, MatchAnalysisRow.state == "queued")
            .returning(MatchAnalysisRow.match_id)
        )
        self.analysis: Final = select(*_columns(MatchAnalysisRow, ANALYSIS_COLUMNS)).where(
            analysis_id
        )
        self.queued_analyses: Final = (
            select(*_columns(MatchAnalysisRow, ANALYSIS_COLUMNS))
            .where(MatchAnalysisRow.state == "queued")
            .order_by(MatchAnalysisRow.queued_at, MatchAnalysisRow.match_id)
        )
        self.finish_analysis: Final = (
            update(MatchAnalysisRow)
            .where(analysis_id, MatchAnalysisRow.state == "queued")
            .values(_values(MatchAnalysisRow, ("state", "finished_at", "rate1", "rate2", "result")))
            .returning(MatchAnalysisRow.match_id)
        )

        self.rates_of: Final = (
            select(MatchRecordRow.player1, MatchAnalysisRow.rate1, MatchAnalysisRow.rate2)
            .join(MatchAnalysisRow, MatchAnalysisRow.match_id == MatchRecordRow.id)
            .where(MatchAnalysisRow.state == "done", played_by)
            .order_by(*newest_first)
            .offset(bindparam("offset"))
            .limit(bindparam("limit"))
        )

        # -- the rating list
        listed = UserRow.experience > bindparam("experience_above", type_=UserRow.experience.type)
        self.rating_list: Final = (
            select(UserRow.name, UserRow.rating, UserRow.experience)
            .where(listed)
            .order_by(
                UserRow.rating.desc(),
                UserRow.experience.desc(),
                self._name_order(UserRow.name),
            )
            .offset(bindparam("offset"))
            .limit(bindparam("limit"))
        )
        rating, experience = _param(UserRow.rating), _param(UserRow.experience)
        ahead = or_(
            UserRow.rating > rating,
            and_(UserRow.rating == rating, UserRow.experience > experience),
            and_(
                UserRow.rating == rating,
                UserRow.experience == experience,
                self._name_order(UserRow.name) < self._name_order(name),
            ),
        )
        self.rating_of: Final = select(UserRow.name, UserRow.rating, UserRow.experience).where(
            UserRow.name == name
        )
        self.count_ahead: Final = select(func.count()).where(listed, UserRow.name != name, ahead)
        self.count_rated: Final = select(func.count()).where(listed)

        # -- chouette tables (D362, D363)
        chouette = SavedChouetteRow.table_id == _param(SavedChouetteRow.table_id)
        upsert_chouette = _dialect_insert(SavedChouetteRow, dialect).values(
            _values(SavedChouetteRow, _keys(SavedChouetteRow))
        )
        self.save_chouette: Final = upsert_chouette.on_conflict_do_update(
            index_elements=["table_id"],
            set_={key: upsert_chouette.excluded[key] for key in ("host", "snapshot", "updated_at")},
        )
        self.delete_chouette_players: Final = delete(SavedChouettePlayerRow).where(
            SavedChouettePlayerRow.table_id == _param(SavedChouettePlayerRow.table_id)
        )
        self.insert_chouette_player: Final = insert(SavedChouettePlayerRow).values(
            _values(SavedChouettePlayerRow, _keys(SavedChouettePlayerRow))
        )
        self.chouette_of: Final = (
            select(SavedChouetteRow.table_id, SavedChouetteRow.host, SavedChouetteRow.snapshot)
            .join(
                SavedChouettePlayerRow,
                SavedChouettePlayerRow.table_id == SavedChouetteRow.table_id,
            )
            .where(SavedChouettePlayerRow.name == _param(SavedChouettePlayerRow.name))
            .order_by(SavedChouetteRow.updated_at.desc(), SavedChouetteRow.table_id)
            .limit(1)
        )
        self.delete_chouette: Final = delete(SavedChouetteRow).where(chouette)
        self.insert_chouette_result: Final = insert(ChouetteResultRow).values(
            _values(ChouetteResultRow, _keys(ChouetteResultRow))
        )
        self.chouette_standings: Final = (
            select(
                ChouetteResultRow.name,
                func.count(),
                func.sum(ChouetteResultRow.points),
            )
            .where(ChouetteResultRow.table_id == _param(ChouetteResultRow.table_id))
            .group_by(ChouetteResultRow.name)
            .order_by(func.sum(ChouetteResultRow.points).desc(), ChouetteResultRow.name)
        )
        self.chouette_record: Final = select(
            func.count(func.distinct(ChouetteResultRow.table_id)),
            func.count(),
            func.coalesce(func.sum(ChouetteResultRow.points), 0),
        ).where(ChouetteResultRow.name == _param(ChouetteResultRow.name))

    def update_user(self, keys: Iterable[str]) -> Update:
        """``UPDATE users SET <keys> WHERE name = :who RETURNING name`` (built once per set).

        The name's parameter is ``who``: SQLAlchemy reserves a column's own name for the
        SET clause of an UPDATE.
        """
        columns = tuple(sorted(keys))
        statement = self._user_updates.get(columns)
        if statement is None:
            statement = (
                update(UserRow)
                .where(UserRow.name == _param(UserRow.name, "who"))
                .values(_values(UserRow, columns))
                .returning(UserRow.name)
            )
            self._user_updates[columns] = statement
        return statement

    def _name_order(
        self, column: ColumnElement[str] | InstrumentedAttribute[str]
    ) -> ColumnElement[str] | InstrumentedAttribute[str]:
        """``column`` compared in code-point order on both back ends."""
        return column.collate("C") if self._dialect == "postgresql" else column


_FENCE: Final = """owner AS (
    SELECT epoch FROM table_owners WHERE table_id = CAST(:table_id AS VARCHAR) FOR UPDATE
), fence AS (
    SELECT CAST(:epoch AS INTEGER) IS NULL
        OR EXISTS (SELECT 1 FROM owner WHERE epoch = CAST(:epoch AS INTEGER)) AS ok
)"""
"""PostgreSQL: the fencing check of a table's write (``epoch``, NULL: none), for a
``WITH``: ``fence.ok`` is whether the table's ``table_owners`` row has the writer's
epoch, read with a row lock so that a node taking the table meanwhile is waited for."""


def _save_match_with_events(*, replay: bool) -> Any:
    """PostgreSQL: a save of a running match as one statement, its state and its events.

    Parameters: the ``saved_matches`` columns; ``append`` (false: the table's event rows
    are replaced, true: added to); ``games``, ``first_events``, ``events``: the new
    event rows as three arrays. When replacing (a table's first save), a saved match of
    the same pair but another table is deleted first, with its rows (the pair keeps one
    saved match). The table's old rows are deleted first when replacing: the
    insert's filter reads the ``DELETE``'s result, so it has run to its end before the
    first row is inserted (a row deleted by its own transaction does not clash with a new
    one of the same key). The foreign key of the new rows is checked at the statement's
    end, after the upsert of their saved match (docs/database.md).

    ``epoch``: the writer's fencing token (NULL: not checked). Nothing is written unless
    the table's ``table_owners`` row has it, read with a row lock in this statement, so
    a node taking the table meanwhile (which raises the epoch) is waited for and then
    wins. The row: whether it was written (false: fenced).

    ``replay``: the form run again when the outcome of the first is unknown (a lost
    connection): event rows already there are left as they are, so it has the same
    effect whether or not the first was committed (the table's later saves wait behind
    it).
    """
    conflict = "ON CONFLICT (table_id, game, first_event) DO NOTHING" if replay else ""
    return text(
        f"""
WITH {_FENCE}, gone AS (
    DELETE FROM saved_match_events
    WHERE table_id = CAST(:table_id AS VARCHAR) AND NOT CAST(:append AS BOOLEAN)
        AND (SELECT ok FROM fence)
    RETURNING 1
), displaced AS (
    DELETE FROM saved_matches
    WHERE player1 = CAST(:player1 AS VARCHAR) AND player2 = CAST(:player2 AS VARCHAR)
        AND table_id <> CAST(:table_id AS VARCHAR) AND NOT CAST(:append AS BOOLEAN)
        AND (SELECT ok FROM fence)
    RETURNING 1
), state AS (
    INSERT INTO saved_matches
        (table_id, player1, player2, match_length, score1, score2, snapshot, updated_at)
    SELECT CAST(:table_id AS VARCHAR), CAST(:player1 AS VARCHAR), CAST(:player2 AS VARCHAR),
        CAST(:match_length AS INTEGER), CAST(:score1 AS INTEGER), CAST(:score2 AS INTEGER),
        CAST(:snapshot AS TEXT), CAST(:updated_at AS BIGINT)
    WHERE (SELECT count(*) FROM displaced) >= 0 AND (SELECT ok FROM fence)
    ON CONFLICT (table_id) DO UPDATE SET
        match_length = excluded.match_length, score1 = excluded.score1,
        score2 = excluded.score2, snapshot = excluded.snapshot,
        updated_at = excluded.updated_at
    RETURNING 1
), added AS (
    INSERT INTO saved_match_events (table_id, game, first_event, events)
    SELECT CAST(:table_id AS VARCHAR), e.game, e.first_event, e.events
    FROM unnest(CAST(:games AS INTEGER[]), CAST(:first_events AS INTEGER[]),
        CAST(:events AS TEXT[])) AS e(game, first_event, events)
    WHERE (SELECT count(*) FROM gone) >= 0 AND (SELECT count(*) FROM state) = 1
    {conflict}
    RETURNING 1
)
SELECT (SELECT ok FROM fence) FROM (SELECT count(*) FROM added) AS done
"""
    )


def _end_match(*, replay: bool) -> Any:
    """PostgreSQL: the end of a match as one statement that returns one row.

    The match's record (``record_*``: the record's players and scores in the match's
    order, not the pair's; ``winner``, ``started_at``, ``ended_at``, ``rules``,
    ``moves``, ``table_id``), the players' new ratings and experience (three arrays:
    ``rated``, ``ratings``, ``experiences``) and, with ``delete_saved``, the removal of
    the table's saved match (``table_id``; its event rows go with it). Nothing is written
    unless every name in ``rated`` is a user, and each rated player's stored rating and
    experience are the ones the new ones were computed from (``ratings_before``,
    ``experiences_before``, aligned with ``rated``; NULL: not checked), read with a row
    lock in this statement. One statement, so that the writer sends the ends waiting
    together as one round trip, as it does the saves (db/pgwriter.py).

    ``epoch``: the writer's fencing token, checked as a save checks it
    (:func:`_save_match_with_events`); the table's ``table_owners`` row goes with the
    end.

    The row: the new record's id; whether anything was written; whether the table was
    still the writer's (false: fenced, nothing written); and when nothing was
    because a stored rating differs, every rated player's stored ``[rating,
    experience]``, in the order of ``rated`` (else NULL: a name in ``rated`` is not a
    user).

    ``replay``: the form run again when the outcome of the first is unknown (a lost
    connection), with the same effect whether or not the first was committed: a record
    of the same table and players with the same start and end is not inserted again,
    and its id is returned (the ratings are set, not added to, and not compared once the
    record is there; the table's later writes wait behind the replay).
    """
    same_record = """
    SELECT id FROM match_records
    WHERE table_id = CAST(:table_id AS VARCHAR)
        AND player1 = CAST(:record_player1 AS VARCHAR)
        AND player2 = CAST(:record_player2 AS VARCHAR)
        AND started_at = CAST(:started_at AS BIGINT) AND ended_at = CAST(:ended_at AS BIGINT)
"""
    record_filter = f"AND NOT EXISTS ({same_record})" if replay else ""
    stored = f"EXISTS ({same_record})" if replay else "false"
    record_id = (
        f"COALESCE((SELECT id FROM record), (SELECT max(id) FROM ({same_record}) AS stored))"
        if replay
        else "(SELECT id FROM record)"
    )
    return text(
        f"""
WITH {_FENCE}, rated_now AS (
    SELECT r.ord, u.rating, u.experience, r.rating_before, r.experience_before
    FROM unnest(CAST(:rated AS VARCHAR[]), CAST(:ratings_before AS FLOAT[]),
        CAST(:experiences_before AS INTEGER[]))
        WITH ORDINALITY AS r(name, rating_before, experience_before, ord)
    JOIN users u ON u.name = r.name
    FOR UPDATE OF u
), checked AS (
    SELECT (SELECT count(*) FROM rated_now) = cardinality(CAST(:rated AS VARCHAR[])) AS known,
        {stored} OR NOT EXISTS (
            SELECT 1 FROM rated_now
            WHERE rating <> rating_before OR experience <> experience_before
        ) AS fresh
), owned AS (
    SELECT {stored} OR (SELECT ok FROM fence) AS ok
), allowed AS (
    SELECT known AND fresh AND (SELECT ok FROM owned) AS ok FROM checked
), record AS (
    INSERT INTO match_records (table_id, player1, player2, match_length, score1, score2,
        winner, started_at, ended_at, rules, moves)
    SELECT CAST(:table_id AS VARCHAR),
        CAST(:record_player1 AS VARCHAR), CAST(:record_player2 AS VARCHAR),
        CAST(:record_length AS INTEGER), CAST(:record_score1 AS INTEGER),
        CAST(:record_score2 AS INTEGER), CAST(:winner AS VARCHAR),
        CAST(:started_at AS BIGINT), CAST(:ended_at AS BIGINT),
        CAST(:rules AS TEXT), CAST(:moves AS TEXT)
    WHERE (SELECT ok FROM allowed) {record_filter}
    RETURNING id
), rated AS (
    UPDATE users SET rating = r.rating, experience = r.experience
    FROM unnest(CAST(:rated AS VARCHAR[]), CAST(:ratings AS FLOAT[]),
        CAST(:experiences AS INTEGER[])) AS r(name, rating, experience)
    WHERE (SELECT ok FROM allowed) AND users.name = r.name
    RETURNING 1
), removed AS (
    DELETE FROM saved_matches
    WHERE CAST(:delete_saved AS BOOLEAN) AND (SELECT ok FROM allowed)
        AND table_id = CAST(:table_id AS VARCHAR)
    RETURNING 1
), released AS (
    DELETE FROM table_owners
    WHERE (SELECT ok FROM allowed) AND table_id = CAST(:table_id AS VARCHAR)
    RETURNING 1
)
SELECT {record_id}, (SELECT ok FROM allowed), (SELECT ok FROM owned),
    CASE WHEN (SELECT known AND NOT fresh FROM checked) THEN
        (SELECT array_agg(ARRAY[rating, CAST(experience AS FLOAT)] ORDER BY ord)
            FROM rated_now)
    END
"""
    )


def _dialect_insert(
    table: type[UserRow]
    | _ListTable
    | type[SavedMatchRow]
    | type[SavedChouetteRow]
    | type[TableOwnerRow],
    dialect: str,
) -> postgresql.Insert | sqlite.Insert:
    """An INSERT that supports ``ON CONFLICT`` on the back end."""
    return postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)
