"""Only this module queries ``request_traces``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from tierpilot.observability.models import BenchmarkRun, RequestTrace


def add_many(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(insert(RequestTrace), list(rows))


def prune(session: Session, keep: int) -> int:
    """Delete all but the newest ``keep`` traces (ids grow: the newest have the largest)."""
    newest = session.scalar(select(func.max(RequestTrace.id)))
    if newest is None or newest <= keep:
        return 0
    result = session.execute(delete(RequestTrace).where(RequestTrace.id <= newest - keep)
                             .execution_options(synchronize_session=False))
    return int(getattr(result, "rowcount", 0) or 0)


def get(session: Session, request_id: str) -> RequestTrace | None:
    return session.scalar(select(RequestTrace).where(RequestTrace.request_id == request_id))


def recent(session: Session, user_id: int | None, operation: str | None, bucket: str | None,
           slower_than_ms: float | None, limit: int) -> list[RequestTrace]:
    """The newest traces, optionally of one user, operation, bucket, or slower than a time."""
    q = select(RequestTrace)
    if user_id is not None:
        q = q.where(RequestTrace.user_id == user_id)
    if operation:
        q = q.where(RequestTrace.operation == operation)
    if bucket:
        q = q.where(RequestTrace.bucket == bucket)
    if slower_than_ms is not None:
        q = q.where(RequestTrace.total_ms >= slower_than_ms)
    return list(session.scalars(q.order_by(RequestTrace.id.desc()).limit(limit)))


def add_run(session: Session, run: BenchmarkRun) -> BenchmarkRun:
    session.add(run)
    session.flush()
    return run


def get_run(session: Session, run_id: int, for_update: bool = False) -> BenchmarkRun | None:
    q = select(BenchmarkRun).where(BenchmarkRun.id == run_id)
    return session.scalar(q.with_for_update() if for_update else q)


def runs(session: Session, owner_id: int | None, limit: int) -> list[BenchmarkRun]:
    q = select(BenchmarkRun)
    if owner_id is not None:
        q = q.where(BenchmarkRun.owner_id == owner_id)
    return list(session.scalars(q.order_by(BenchmarkRun.id.desc()).limit(limit)))


def active_run_of(session: Session, owner_id: int) -> BenchmarkRun | None:
    return session.scalar(select(BenchmarkRun).where(BenchmarkRun.owner_id == owner_id,
                                                     BenchmarkRun.state.in_(("queued", "running"))).limit(1))


def delete_run(session: Session, run: BenchmarkRun) -> None:
    session.delete(run)
