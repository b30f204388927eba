"""The usage meter's queries (the spend domain owns `usage_meter`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from tierpilot.spend.models import UsageMeter

MeterRow = tuple[str, int, int, str, int, int]  # day, user id, bucket id, direction, requests, bytes


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
