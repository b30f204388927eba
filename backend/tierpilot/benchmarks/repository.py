"""Benchmark runs (table ``benchmark_runs``)."""

from __future__ import annotations

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from tierpilot.benchmarks.models import BenchmarkRun

_RUNS_LOCK_SPACE = 0x7462  # pg_advisory_xact_lock's first key: benchmark runs ("tb")


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
