"""Only this module queries ``request_traces`` and ``benchmark_runs``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.orm import Session

from tierpilot.observability.models import BenchmarkRun, RequestTrace

_RUNS_LOCK_SPACE = 0x7462  # pg_advisory_xact_lock's first key: benchmark runs ("tb")


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


def lock_owner_runs(session: Session, owner_id: int) -> None:
    """Serialise run creation per owner until the transaction ends: a PostgreSQL advisory lock (SQLite's
    mutating requests already hold the database's write lock from BEGIN)."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(CAST(:space AS integer), CAST(:owner AS integer))"),
                        {"space": _RUNS_LOCK_SPACE, "owner": owner_id})


def active_run_of(session: Session, owner_id: int) -> BenchmarkRun | None:
    return session.scalar(select(BenchmarkRun).where(BenchmarkRun.owner_id == owner_id,
                                                     BenchmarkRun.state.in_(("queued", "running"))).limit(1))


def delete_run(session: Session, run: BenchmarkRun) -> None:
    session.delete(run)
