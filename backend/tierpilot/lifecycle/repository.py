"""Only this module queries the lifecycle tables (configurations, moves, meter).

The catalog rows a sweep scans and the catalog writes a move makes (switch an object's tier, delete an
expired object) are the catalog repository's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Column,
    ColumnElement,
    SQLColumnExpression,
    Table,
    and_,
    bindparam,
    case,
    delete,
    func,
    or_,
    select,
    update,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from tierpilot.lifecycle.models import LifecycleConfiguration, LifecycleMeter, LifecycleMove


def _insert(session: Session) -> Any:
    """The dialect's INSERT with ON CONFLICT support (SQLite and PostgreSQL share the API)."""
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


# configurations --------------------------------------------------------------------------------------


def get_configuration(session: Session, bucket_id: int, for_update: bool = False) -> LifecycleConfiguration | None:
    q = select(LifecycleConfiguration).where(LifecycleConfiguration.bucket_id == bucket_id)
    if for_update:
        q = q.with_for_update()
    return session.scalar(q)


def configurations(session: Session, bucket_id: int | None = None) -> list[LifecycleConfiguration]:
    """Every stored configuration, or the one of a bucket."""
    q = select(LifecycleConfiguration)
    if bucket_id is not None:
        q = q.where(LifecycleConfiguration.bucket_id == bucket_id)
    return list(session.scalars(q))


def delete_configuration(session: Session, bucket_id: int) -> bool:
    result = session.execute(delete(LifecycleConfiguration).where(LifecycleConfiguration.bucket_id == bucket_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]


# moves -----------------------------------------------------------------------------------------------


def has_move(object_id: SQLColumnExpression[int], locator: SQLColumnExpression[str]) -> ColumnElement[bool]:
    """SQL: a move (open, done or given up) exists for this object version (a due scan leaves those out)."""
    return select(LifecycleMove.id).where(LifecycleMove.object_id == object_id,
                                          LifecycleMove.src_locator == locator).exists()


def has_version_move(version_pk: SQLColumnExpression[int], locator: SQLColumnExpression[str]) -> ColumnElement[bool]:
    """``has_move`` for noncurrent versions and delete markers (their moves' ``object_id`` is a version id)."""
    return select(LifecycleMove.id).where(LifecycleMove.object_id == version_pk, LifecycleMove.src_locator == locator,
                                          LifecycleMove.action.in_(("nc_transition", "nc_expiration",
                                                                    "expire_marker"))).exists()


def entered_tier_at(session: Session, object_id: int, locator: str) -> datetime | None:
    """When the current copy of an object got onto its tier by a lifecycle move (None: it was written there)."""
    return session.scalar(select(LifecycleMove.switched_at).where(
        LifecycleMove.object_id == object_id, LifecycleMove.dst_locator == locator,
        LifecycleMove.switched_at.is_not(None)).limit(1))


def dedup_key(action: str, object_ref: str, locator: str) -> str:
    return hashlib.sha256(f"{action}\0{object_ref}\0{locator}".encode()).hexdigest()


def insert_moves(session: Session, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Queue moves; rows whose dedup_key exists already are left alone. Returns the ids of the new ones."""
    if not rows:
        return []
    table = cast(Table, LifecycleMove.__table__)
    if session.get_bind().dialect.name == "postgresql":
        return _insert_moves_unnest(session, table, rows)
    # one statement compiled once, sent in batches (SQLAlchemy's insertmanyvalues) with RETURNING
    stmt = _insert(session)(table).on_conflict_do_nothing(index_elements=["dedup_key"]).returning(table.c.id)
    return [int(r[0]) for r in session.execute(stmt, list(rows))]


_UNNEST_BATCH = 10_000


def _insert_moves_unnest(session: Session, table: Table, rows: Sequence[dict[str, Any]]) -> list[int]:
    """PostgreSQL: one INSERT … SELECT FROM unnest(one array per column) per 10,000 rows.

    A multi-row VALUES statement of 10,000 rows has 170,000 placeholders, and the driver spends seconds
    of Python parsing it; with one array parameter per column the statement stays 17 parameters long
    and the server builds the rows.
    """
    columns = [c for c in table.c if c.name != "id"]
    defaults = {c.name: _python_default(c) for c in columns}  # for the columns a row leaves out
    ids: list[int] = []
    for start in range(0, len(rows), _UNNEST_BATCH):
        batch = [defaults | dict(r) for r in rows[start:start + _UNNEST_BATCH]]
        arrays = [sql_cast(bindparam(f"a_{c.name}", [r[c.name] for r in batch], type_=ARRAY(c.type)), ARRAY(c.type))
                  for c in columns]
        source = func.unnest(*arrays).table_valued(*(c.name for c in columns)).render_derived()
        stmt = (postgresql.insert(table).from_select([c.name for c in columns], select(*source.c))
                .on_conflict_do_nothing(index_elements=["dedup_key"]).returning(table.c.id))
        ids += [int(r[0]) for r in session.execute(stmt)]
    return ids


def _python_default(column: Column[Any]) -> Any:
    """What the ORM would insert for a column a row leaves out (its Python-side default, else NULL)."""
    default = column.default
    if default is not None and getattr(default, "is_scalar", False):
        return default.arg  # type: ignore[attr-defined]
    if default is not None and getattr(default, "is_callable", False):
        return default.arg(None)  # type: ignore[attr-defined]
    return None


def get_move(session: Session, move_id: int, for_update: bool = False) -> LifecycleMove | None:
    q = select(LifecycleMove).where(LifecycleMove.id == move_id)
    if for_update:
        q = q.with_for_update()
    return session.scalar(q)


def get_moves(session: Session, move_ids: Sequence[int]) -> list[LifecycleMove]:
    return list(session.scalars(select(LifecycleMove).where(LifecycleMove.id.in_(list(move_ids)))
                                .execution_options(populate_existing=True)))


def claim_moves(session: Session, move_ids: Sequence[int], owner: str, now: datetime, lease_until: datetime,
                steal_from: Sequence[str] = ()) -> set[int]:
    """Take the leases of open moves nobody holds (or whose lease ran out, or whose holder is dead), in one
    statement; returns the ids taken. Moves coming back from ``queued`` or a due retry become ``running``."""
    if not move_ids:
        return set()
    free = or_(LifecycleMove.lease_until.is_(None), LifecycleMove.lease_until < now)
    if steal_from:
        free = or_(free, LifecycleMove.lease_owner.in_(list(steal_from)))
    runnable = or_(LifecycleMove.state.in_(("queued", "running", "switched")),
                   and_(LifecycleMove.state == "failed", LifecycleMove.next_attempt_at.is_not(None),
                        LifecycleMove.next_attempt_at <= now))
    restart = LifecycleMove.state.in_(("queued", "failed"))
    result = session.execute(
        update(LifecycleMove)
        .where(LifecycleMove.id.in_(list(move_ids)), runnable, free)
        .values(lease_owner=owner, lease_until=lease_until, attempts=LifecycleMove.attempts + 1,
                started_at=func.coalesce(LifecycleMove.started_at, now),
                state=case((restart, "running"), else_=LifecycleMove.state),
                next_attempt_at=case((restart, None), else_=LifecycleMove.next_attempt_at))
        .returning(LifecycleMove.id)
        .execution_options(synchronize_session=False)
    )
    return {int(r[0]) for r in result}


def set_target_locators(session: Session, locators: dict[int, str]) -> None:
    """Record each claimed transition's copy locator before the copies start (one statement)."""
    if not locators:
        return
    table = cast(Table, LifecycleMove.__table__)
    session.execute(update(table).where(table.c.id == bindparam("move_id")).values(dst_locator=bindparam("loc")),
                    [{"move_id": k, "loc": v} for k, v in locators.items()])


def update_move(session: Session, move_id: int, owner: str | None = None, **values: Any) -> bool:
    """Change a move; with ``owner``, only while that worker still holds its lease."""
    q = update(LifecycleMove).where(LifecycleMove.id == move_id)
    if owner is not None:
        q = q.where(LifecycleMove.lease_owner == owner)
    result = session.execute(q.values(**values).execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def close_moves(session: Session, move_ids: Sequence[int], owner: str, now: datetime) -> set[int]:
    """Mark moves done (only those this worker still holds); returns the ids closed."""
    if not move_ids:
        return set()
    result = session.execute(
        update(LifecycleMove).where(LifecycleMove.id.in_(list(move_ids)), LifecycleMove.lease_owner == owner)
        .values(state="done", finished_at=now, lease_owner=None, lease_until=None)
        .returning(LifecycleMove.id).execution_options(synchronize_session=False))
    return {int(r[0]) for r in result}


def moves_to_resume(session: Session, now: datetime, queued_before: datetime, limit: int,
                    bucket_id: int | None = None) -> list[int]:
    """Open moves nobody is working on: queued long ago (lost message), lease expired, retry due."""
    stuck = and_(LifecycleMove.state.in_(("queued", "running", "switched")),
                 or_(LifecycleMove.lease_until.is_(None), LifecycleMove.lease_until < now),
                 or_(LifecycleMove.state != "queued",
                     func.coalesce(LifecycleMove.handed_out_at, LifecycleMove.created_at) <= queued_before))
    retry = and_(LifecycleMove.state == "failed", LifecycleMove.next_attempt_at.is_not(None),
                 LifecycleMove.next_attempt_at <= now)
    q = select(LifecycleMove.id).where(or_(stuck, retry))
    if bucket_id is not None:
        q = q.where(LifecycleMove.bucket_id == bucket_id)
    return [int(i) for i in session.scalars(q.order_by(LifecycleMove.id).limit(limit))]


def leased_moves(session: Session, now: datetime, bucket_id: int | None = None) -> list[tuple[int, str]]:
    """(id, lease owner) of open moves whose lease still runs: the sweep checks whether their worker lives."""
    q = select(LifecycleMove.id, LifecycleMove.lease_owner).where(
        LifecycleMove.state.in_(("running", "switched")), LifecycleMove.lease_until >= now)
    if bucket_id is not None:
        q = q.where(LifecycleMove.bucket_id == bucket_id)
    return [(int(i), str(o)) for i, o in session.execute(q) if o]


def move_sizes(session: Session, move_ids: Sequence[int]) -> dict[int, int]:
    return {int(i): int(n) for i, n in session.execute(
        select(LifecycleMove.id, LifecycleMove.size).where(LifecycleMove.id.in_(list(move_ids))))}


def mark_handed_out(session: Session, move_ids: Sequence[int], now: datetime) -> None:
    for start in range(0, len(move_ids), 500):
        session.execute(update(LifecycleMove).where(LifecycleMove.id.in_(list(move_ids[start:start + 500])))
                        .values(handed_out_at=now).execution_options(synchronize_session=False))


def open_moves(session: Session, bucket_id: int | None = None, limit: int = 100_000) -> list[int]:
    q = select(LifecycleMove.id).where(LifecycleMove.state.in_(("queued", "running", "switched")))
    if bucket_id is not None:
        q = q.where(LifecycleMove.bucket_id == bucket_id)
    return [int(i) for i in session.scalars(q.order_by(LifecycleMove.id).limit(limit))]


def list_moves(session: Session, *, bucket_ids: Sequence[int] | None, states: Sequence[str] = (),
               before_id: int | None = None, limit: int = 100) -> list[LifecycleMove]:
    q = select(LifecycleMove)
    if bucket_ids is not None:
        q = q.where(LifecycleMove.bucket_id.in_(list(bucket_ids)))
    if states:
        q = q.where(LifecycleMove.state.in_(list(states)))
    if before_id is not None:
        q = q.where(LifecycleMove.id < before_id)
    return list(session.scalars(q.order_by(LifecycleMove.id.desc()).limit(limit)))


def count_moves_by_state(session: Session, bucket_ids: Sequence[int] | None) -> dict[str, int]:
    q = select(LifecycleMove.state, func.count(LifecycleMove.id)).group_by(LifecycleMove.state)
    if bucket_ids is not None:
        q = q.where(LifecycleMove.bucket_id.in_(list(bucket_ids)))
    return {str(s): int(n) for s, n in session.execute(q)}


def moves_of_object_locators(session: Session, tier_id: int) -> dict[str, tuple[str, int]]:
    """Locators on a tier that open moves are writing or about to delete: locator -> (state, move id)."""
    out: dict[str, tuple[str, int]] = {}
    q = select(LifecycleMove.id, LifecycleMove.state, LifecycleMove.src_tier_id, LifecycleMove.src_locator,
               LifecycleMove.dst_tier_id, LifecycleMove.dst_locator).where(
        LifecycleMove.state.in_(("queued", "running", "switched")),
        or_(LifecycleMove.src_tier_id == tier_id, LifecycleMove.dst_tier_id == tier_id))
    for move_id, state, src_tier, src_loc, dst_tier, dst_loc in session.execute(q):
        if src_tier == tier_id:
            out[src_loc] = (state, move_id)
        if dst_tier == tier_id and dst_loc:
            out[dst_loc] = (state, move_id)
    return out


def moves_for_object(session: Session, object_id: int) -> list[LifecycleMove]:
    return list(session.scalars(select(LifecycleMove).where(LifecycleMove.object_id == object_id)
                                .order_by(LifecycleMove.id.desc())))


# metering --------------------------------------------------------------------------------------------


_METER_COUNTERS = ("objects", "bytes", "transition_requests", "early_deletion_nanousd", "early_deletions", "failures")
_meter_upserts: dict[str, Any] = {}


def _meter_upsert(session: Session) -> Any:
    """The meter's upsert statement, built once per dialect (it runs once per executed move)."""
    dialect = session.get_bind().dialect.name
    stmt = _meter_upserts.get(dialect)
    if stmt is None:
        table = LifecycleMeter.__table__
        ins = _insert(session)(table)
        stmt = ins.on_conflict_do_update(
            index_elements=["day", "action", "src_tier_id", "dst_tier_id"],
            set_={c: table.c[c] + ins.excluded[c] for c in _METER_COUNTERS})
        _meter_upserts[dialect] = stmt
    return stmt


def add_meter(session: Session, *, day: str, action: str, src_tier_id: int, dst_tier_id: int, objects: int = 0,
              nbytes: int = 0, transition_requests: int = 0, early_deletion_nanousd: int = 0,
              early_deletions: int = 0, failures: int = 0) -> None:
    """Add to one day's totals of an action and tier pair (one upsert statement)."""
    session.execute(_meter_upsert(session), dict(
        day=day, action=action, src_tier_id=src_tier_id, dst_tier_id=dst_tier_id, objects=objects, bytes=nbytes,
        transition_requests=transition_requests, early_deletion_nanousd=early_deletion_nanousd,
        early_deletions=early_deletions, failures=failures))


def meter_totals(session: Session, since_day: str | None = None) -> list[tuple[Any, ...]]:
    """Totals per action and tier pair (optionally from a day on)."""
    t = LifecycleMeter
    q = select(t.action, t.src_tier_id, t.dst_tier_id, func.sum(t.objects), func.sum(t.bytes),
               func.sum(t.transition_requests), func.sum(t.early_deletion_nanousd), func.sum(t.early_deletions),
               func.sum(t.failures)).group_by(t.action, t.src_tier_id, t.dst_tier_id)
    if since_day is not None:
        q = q.where(t.day >= since_day)
    return [tuple(r) for r in session.execute(q.order_by(t.action, t.src_tier_id, t.dst_tier_id))]


def transitions_by_bucket(session: Session, since: datetime, until: datetime,
                          bucket_ids: Sequence[int] | None) -> list[tuple[int, int, int]]:
    """(bucket id, target tier id, transitions of current and noncurrent versions) switched in [since, until):
    what spend bills transition fees on."""
    m = LifecycleMove
    q = (select(m.bucket_id, m.dst_tier_id, func.count(m.id))
         .where(m.action.in_(("transition", "nc_transition")), m.switched_at >= since, m.switched_at < until,
                m.state.in_(("switched", "done")), m.dst_tier_id.is_not(None))
         .group_by(m.bucket_id, m.dst_tier_id))
    if bucket_ids is not None:
        q = q.where(m.bucket_id.in_(list(bucket_ids)))
    return [(int(b), int(t), int(n)) for b, t, n in session.execute(q) if t is not None]
