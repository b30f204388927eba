"""The spend domain's queries: its tables `usage_meter`, `storage_history`, `spend_daily`, `spend_rollup` and
`spend_plans`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any
from typing import cast as typed

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tierpilot.kit.db import epoch_s
from tierpilot.spend.models import SpendDaily, SpendPlan, SpendRollup, StorageHistory, UsageMeter

MeterRow = tuple[str, int, int, str, int, int]  # day, user id, bucket id, kind (direction), requests, bytes


def add_usage(session: Session, rows: Sequence[MeterRow]) -> None:
    """Add a batch of counters (one upsert statement for the batch)."""
    if not rows:
        return
    table = typed(Table, UsageMeter.__table__)
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


def ended_span_seconds(session: Session, bucket_ids: Sequence[int], since: datetime,
                       until: datetime) -> Iterator[tuple[int, int, int, int, int]]:
    """The spans of ``ended_spans`` as (bucket, tier, size, stored from, ended at), times in whole epoch seconds."""
    if not bucket_ids:
        return
    h = StorageHistory
    q = (select(h.bucket_id, h.tier_id, h.size, epoch_s(session, h.stored_from), epoch_s(session, h.ended_at))
         .where(h.bucket_id.in_(list(bucket_ids)), h.ended_at >= since, h.ended_at < until)
         .execution_options(yield_per=10_000))
    for b, t, n, start, end in session.execute(q):
        yield int(b), int(t), int(n), int(start), int(end)


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


ROLLUP = "storage"
# day, bucket id, tier id, byte-seconds, billable byte-seconds, short byte-seconds, version-seconds
DayRow = tuple[str, int, int, int, int, int, int]
# month (YYYY-MM), bucket id, tier id, then the sums of a DayRow's four measures
MonthRow = tuple[str, int, int, Decimal, Decimal, Decimal, Decimal]


def rollup_until(session: Session, for_update: bool = False) -> str | None:
    """The first day (YYYY-MM-DD) the roll-up has not closed; None before its first run."""
    q = select(SpendRollup.until).where(SpendRollup.name == ROLLUP)
    return session.scalar(q.with_for_update() if for_update else q)


def store_days(session: Session, since: str | None, until: str, rows: Sequence[DayRow]) -> bool:
    """Store the finished days from ``since`` (None: from the first of the rows) to ``until`` and move the mark
    there, if the mark still says ``since``; False when another run moved it first (then nothing is stored)."""
    if rollup_until(session, for_update=True) != since:
        return False
    d = SpendDaily
    first = since if since is not None else min((r[0] for r in rows), default=until)
    session.execute(delete(d).where(d.day >= first, d.day < until))
    for chunk in range(0, len(rows), 5000):
        session.execute(d.__table__.insert(), [  # type: ignore[attr-defined]
            dict(day=day, bucket_id=b, tier_id=t, byte_s=n, billable_byte_s=billable, short_byte_s=short, object_s=o)
            for day, b, t, n, billable, short, o in rows[chunk:chunk + 5000]])
    moved = session.execute(update(SpendRollup).where(SpendRollup.name == ROLLUP).values(until=until))
    if not moved.rowcount:  # type: ignore[attr-defined]
        # the migration inserts the row; a database emptied table by table (tests) lost it: a concurrent first
        # run then fails on the primary key instead of closing the days twice
        session.add(SpendRollup(name=ROLLUP, until=until))
        session.flush()
    return True


def month_totals(session: Session, bucket_ids: Sequence[int], first_day: str, until: str) -> list[MonthRow]:
    """The closed days' sums per month, bucket and tier, of the days in [first_day, until)."""
    if not bucket_ids or first_day >= until:
        return []
    d = SpendDaily
    month = func.substr(d.day, 1, 7)
    q = (select(month, d.bucket_id, d.tier_id, func.sum(d.byte_s), func.sum(d.billable_byte_s),
                func.sum(d.short_byte_s), func.sum(d.object_s))
         .where(d.day >= first_day, d.day < until, d.bucket_id.in_(list(bucket_ids)))
         .group_by(month, d.bucket_id, d.tier_id))
    return [(str(m), int(b), int(t), Decimal(n or 0), Decimal(bb or 0), Decimal(sb or 0), Decimal(o or 0))
            for m, b, t, n, bb, sb, o in session.execute(q)]


def prune_history(session: Session, before: datetime, limit: int) -> int:
    """Delete up to ``limit`` history rows that ended before ``before``, oldest first; returns how many went."""
    h = StorageHistory
    # rows are appended as spans end, so the oldest ids end first: a scan by id stops at the first young rows
    ids = list(session.scalars(select(h.id).where(h.ended_at < before).order_by(h.id).limit(limit)))
    if ids:
        session.execute(delete(h).where(h.id.in_(ids)))
    return len(ids)


def plans(session: Session, bucket_ids: Sequence[int]) -> dict[int, SpendPlan]:
    """The saved plans of some buckets, by bucket id (a bucket without one plans storage only)."""
    if not bucket_ids:
        return {}
    rows = session.scalars(select(SpendPlan).where(SpendPlan.bucket_id.in_(list(bucket_ids))))
    return {row.bucket_id: row for row in rows}


def put_plan(session: Session, bucket_id: int, **values: Any) -> SpendPlan:
    """Create or replace a bucket's plan."""
    row = session.get(SpendPlan, bucket_id)
    if row is None:
        row = SpendPlan(bucket_id=bucket_id)
        session.add(row)
    for name, value in values.items():
        setattr(row, name, value)
    session.flush()
    return row


def delete_plan(session: Session, bucket_id: int) -> bool:
    """Delete a bucket's plan; False when it had none."""
    result = session.execute(delete(SpendPlan).where(SpendPlan.bucket_id == bucket_id))
    return int(getattr(result, "rowcount", 0) or 0) > 0
