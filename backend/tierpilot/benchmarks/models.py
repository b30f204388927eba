from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class BenchmarkRun(Base):
    """A sweep a user started from the dashboard or the API, run by the worker; points filled in as it goes."""

    __tablename__ = "benchmark_runs"
    __table_args__ = (
        Index("ix_benchmark_runs_owner_created", "owner_id", "created_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # queued -> running -> done | failed | cancelled
    state: Mapped[str] = mapped_column(String(16), default="queued")
    progress: Mapped[float] = mapped_column(default=0.0)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    points: Mapped[list[Any]] = mapped_column(default=list)
    error: Mapped[str] = mapped_column(String(500), default="")
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
