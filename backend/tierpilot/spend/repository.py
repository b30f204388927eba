"""The spend domain's queries: its tables `usage_meter` and `storage_history`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tierpilot.spend.models import StorageHistory, UsageMeter

MeterRow = tuple[str, int, int, str, int, int]  # day, user id, bucket id, kind (direction), requests, bytes


def add_usage(session: Session, rows: Sequence[MeterRow]) -> None:
    """Add a batch of counters (one upsert statement for the batch)."""
    if not rows:
        return
    table = cast(Table, UsageMeter.__table__)
    dialect = session.get_bind().dialect.name
    ins: Any = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)
    stmt = ins.on_conflict_do_update(index_elements=["day", "user_id", "bucket_id", "direction"],
                                     set_={c: table.c[c] + ins.excluded[c] for c in ("requests", "bytes")})
    session.execute(stmt, [dict(day=d, user_id=u, bucket_id=b, direction=r, requests=n, bytes=nb)
                           for d, u, b, r, n, nb in rows])


def usage_between(session: Session, first_day: str, last_day: str,
                  bucket_ids: Sequence[int] | None) -> list[MeterRow]:
    """Totals per day, user, bucket and direction between two days (inclusive), of some buckets or all."""
    t = UsageMeter
    q = (select(t.day, t.user_id, t.bucket_id, t.direction, func.sum(t.requests), func.sum(t.bytes))
         .where(t.day >= first_day, t.day <= last_day)
         .group_by(t.day, t.user_id, t.bucket_id, t.direction).order_by(t.day))
    if bucket_ids is not None:
        q = q.where(t.bucket_id.in_(list(bucket_ids)))
    return [(str(d), int(u), int(b), str(r), int(n or 0), int(nb or 0)) for d, u, b, r, n, nb in session.execute(q)]


# bucket, object id, tier, class, size, stored from, ended at, reason
Span = tuple[int, int | None, int, str, int, datetime, datetime, str]


def ended_spans(session: Session, bucket_ids: Sequence[int], since: datetime, until: datetime) -> Iterator[Span]:
    """Stored spans of the buckets that ended in [since, until): bucket, object id, tier, class, size, stored from,
    ended at, reason (streamed)."""
    if not bucket_ids:
        return
    h = StorageHistory
    q = (select(h.bucket_id, h.object_id, h.tier_id, h.storage_class, h.size, h.stored_from, h.ended_at, h.reason)
         .where(h.bucket_id.in_(list(bucket_ids)), h.ended_at >= since, h.ended_at < until)
         .execution_options(yield_per=10_000))
    for b, o, t, c, n, start, end, why in session.execute(q):
        yield int(b), (int(o) if o is not None else None), int(t), str(c), int(n), start, end, str(why)


def last_moves(session: Session, bucket_ids: Sequence[int],
               since: datetime) -> tuple[dict[int, datetime], dict[int, datetime]]:
    """When the bytes of objects and of noncurrent versions (by their row ids) last moved to another tier (a
    lifecycle transition), of those moved since ``since``: from then on they are on the tier the catalog names."""
    objects: dict[int, datetime] = {}
    versions: dict[int, datetime] = {}
    if not bucket_ids:
        return objects, versions
    h = StorageHistory
    q = (select(h.object_id, h.version_pk, func.max(h.ended_at))
         .where(h.bucket_id.in_(list(bucket_ids)), h.reason == "moved", h.ended_at >= since)
         .group_by(h.object_id, h.version_pk))
    for o, v, at in session.execute(q):
        if o is not None:
            objects[int(o)] = at
        elif v is not None:
            versions[int(v)] = at
    return objects, versions
