"""Only this module queries for lifecycle: its own tables, and the catalog rows it scans and switches.

The catalog writes that lifecycle makes (switch an object's tier, delete an expired object) are
guarded by the object's locator: a row that was overwritten or deleted since the sweep found it no
longer matches, and the statement changes nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Column, ColumnElement, Row, Table, and_, bindparam, case, delete, func, or_, select, update
from sqlalchemy import cast as sql_cast
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from tierpilot.catalog.models import Bucket, MultipartUpload, Object
from tierpilot.catalog.repository import prefix_end
from tierpilot.lifecycle.models import LifecycleConfiguration, LifecycleMeter, LifecycleMove
from tierpilot.tiers.models import Tier

# columns a sweep needs to decide and queue an action (no ORM objects: a sweep may read 10^5 rows)
CANDIDATE_COLUMNS = (Object.id, Object.key, Object.size, Object.tags, Object.tier_id, Object.storage_class,
                     Object.locator, Object.etag, Object.created_at)


def _insert(session: Session) -> Any:
    """The dialect's INSERT with ON CONFLICT support (SQLite and PostgreSQL share the API)."""
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


# configurations --------------------------------------------------------------------------------------


def get_configuration(session: Session, bucket_id: int, for_update: bool = False) -> LifecycleConfiguration | None:
    q = select(LifecycleConfiguration).where(LifecycleConfiguration.bucket_id == bucket_id)
    if for_update:
        q = q.with_for_update()
    return session.scalar(q)


def configured_buckets(session: Session, bucket_id: int | None = None) -> list[tuple[Bucket, LifecycleConfiguration]]:
    q = select(Bucket, LifecycleConfiguration).join(LifecycleConfiguration,
                                                    LifecycleConfiguration.bucket_id == Bucket.id)
    if bucket_id is not None:
        q = q.where(Bucket.id == bucket_id)
    return [(b, c) for b, c in session.execute(q.order_by(Bucket.name))]


def delete_configuration(session: Session, bucket_id: int) -> bool:
    result = session.execute(delete(LifecycleConfiguration).where(LifecycleConfiguration.bucket_id == bucket_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]


def list_tiers(session: Session) -> list[Tier]:
    return list(session.scalars(select(Tier).order_by(Tier.id)))


def get_bucket(session: Session, bucket_id: int) -> Bucket | None:
    return session.get(Bucket, bucket_id)


# due scans -------------------------------------------------------------------------------------------


def _filter_conditions(prefix: str, tags: Sequence[tuple[str, str]], size_gt: int | None, size_lt: int | None,
                       min_size: int | None) -> list[ColumnElement[bool]]:
    conds: list[ColumnElement[bool]] = []
    if prefix:
        conds.append(Object.key >= prefix)
        upper = prefix_end(prefix)
        if upper is not None:
            conds.append(Object.key < upper)
    for k, v in tags:
        conds.append(Object.tags[k].as_string() == v)
    if size_gt is not None:
        conds.append(Object.size > size_gt)
    if size_lt is not None:
        conds.append(Object.size < size_lt)
    if min_size is not None:
        conds.append(Object.size >= min_size)
    return conds


def due_objects(session: Session, bucket_id: int, tier_id: int, created_before: datetime, *, prefix: str = "",
                tags: Sequence[tuple[str, str]] = (), size_gt: int | None = None, size_lt: int | None = None,
                min_size: int | None = None, classes_below: Sequence[str] | None = None,
                limit: int | None = None, exclude_queued: bool = False) -> list[Row[Any]]:
    """Objects of one bucket on one tier created at or before ``created_before`` that pass a rule's filter.

    One range of the (bucket_id, tier_id, created_at) index, oldest first: objects leave the range when
    they move or expire, so the rows read are the ones due (plus any the rule's filter leaves behind).
    ``classes_below`` keeps only objects of those (warmer) classes; ``exclude_queued`` leaves out object
    versions that have a move already (open, done or given up), so they never crowd the batch.
    """
    conds = [Object.bucket_id == bucket_id, Object.tier_id == tier_id, Object.created_at <= created_before,
             *_filter_conditions(prefix, tags, size_gt, size_lt, min_size)]
    if classes_below is not None:
        conds.append(Object.storage_class.in_(list(classes_below)))
    if exclude_queued:
        conds.append(~select(LifecycleMove.id).where(LifecycleMove.object_id == Object.id,
                                                     LifecycleMove.src_locator == Object.locator).exists())
    q = select(*CANDIDATE_COLUMNS).where(and_(*conds)).order_by(Object.created_at, Object.id)
    if limit is not None:
        q = q.limit(limit)
    return list(session.execute(q))


def stale_uploads(session: Session, bucket_id: int, initiated_before: datetime, prefix: str,
                  limit: int) -> list[MultipartUpload]:
    q = select(MultipartUpload).where(MultipartUpload.bucket_id == bucket_id,
                                      MultipartUpload.initiated_at <= initiated_before)
    if prefix:
        q = q.where(MultipartUpload.key >= prefix)
        upper = prefix_end(prefix)
        if upper is not None:
            q = q.where(MultipartUpload.key < upper)
    return list(session.scalars(q.order_by(MultipartUpload.initiated_at).limit(limit)))


def get_upload(session: Session, upload_id: str) -> MultipartUpload | None:
    return session.scalar(select(MultipartUpload).where(MultipartUpload.upload_id == upload_id))


def tier_usage(session: Session, bucket_id: int | None) -> dict[int, tuple[int, int]]:
    """(bytes, objects) per tier, of one bucket or all."""
    q = select(Object.tier_id, func.coalesce(func.sum(Object.size), 0), func.count(Object.id)).group_by(Object.tier_id)
    if bucket_id is not None:
        q = q.where(Object.bucket_id == bucket_id)
    return {int(t): (int(b), int(n)) for t, b, n in session.execute(q)}


def iter_tier_objects(session: Session, tier_id: int, batch: int = 5000
                      ) -> Iterator[tuple[int, int, str, str, int]]:
    """(id, bucket_id, key, locator, size) of every object on a tier, in id order, read in batches."""
    last = 0
    while True:
        rows = session.execute(select(Object.id, Object.bucket_id, Object.key, Object.locator, Object.size)
                               .where(Object.tier_id == tier_id, Object.id > last)
                               .order_by(Object.id).limit(batch)).all()
        if not rows:
            return
        for r in rows:
            yield int(r[0]), int(r[1]), str(r[2]), str(r[3]), int(r[4])
        last = int(rows[-1][0])


# catalog switches ------------------------------------------------------------------------------------


def get_object(session: Session, object_id: int) -> Object | None:
    return session.get(Object, object_id)


def switch_object(session: Session, object_id: int, old_locator: str, old_etag: str, *, tier_id: int,
                  storage_class: str, locator: str) -> bool:
    """Point an object at its copy on another tier, only if it still is the version that was copied."""
    result = session.execute(
        update(Object)
        .where(Object.id == object_id, Object.locator == old_locator, Object.etag == old_etag)
        .values(tier_id=tier_id, storage_class=storage_class, locator=locator, restore_state=None,
                restore_speed=None, restore_expiry=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount == 1  # type: ignore[attr-defined]


def delete_object(session: Session, object_id: int, old_locator: str) -> bool:
    result = session.execute(delete(Object).where(Object.id == object_id, Object.locator == old_locator)
                             .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def entered_tier_at(session: Session, object_id: int, locator: str) -> datetime | None:
    """When the current copy of an object got onto its tier by a lifecycle move (None: it was written there)."""
    return session.scalar(select(LifecycleMove.switched_at).where(
        LifecycleMove.object_id == object_id, LifecycleMove.dst_locator == locator,
        LifecycleMove.switched_at.is_not(None)).limit(1))


# moves -----------------------------------------------------------------------------------------------


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


def get_objects_by_id(session: Session, object_ids: Sequence[int]) -> dict[int, Object]:
    if not object_ids:
        return {}
    return {o.id: o for o in session.scalars(select(Object).where(Object.id.in_(list(object_ids))))}


def bucket_names(session: Session, bucket_ids: Sequence[int]) -> dict[int, str]:
    return {int(i): str(n) for i, n in session.execute(select(Bucket.id, Bucket.name)
                                                       .where(Bucket.id.in_(list(bucket_ids))))}


def object_locators(session: Session, object_ids: Sequence[int]) -> dict[int, str]:
    if not object_ids:
        return {}
    return {int(i): str(loc) for i, loc in session.execute(select(Object.id, Object.locator)
                                                           .where(Object.id.in_(list(object_ids))))}


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
