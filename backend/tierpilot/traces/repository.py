"""Only this module queries ``request_traces`` and ``benchmark_runs``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from tierpilot.traces.models import RequestTrace


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


def phases_by_request_id(session: Session, request_ids: Sequence[str]) -> dict[str, list[Any]]:
    """The stored phases of those of ``request_ids`` that were kept."""
    if not request_ids:
        return {}
    rows = session.execute(select(RequestTrace.request_id, RequestTrace.phases)
                           .where(RequestTrace.request_id.in_(list(request_ids))))
    return {request_id: list(phases) for request_id, phases in rows}


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
