from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class RequestTrace(Base):
    """One sampled gateway request: who, what, how long, and its phases ``[[name, start_ms, duration_ms]]``."""

    __tablename__ = "request_traces"
    __table_args__ = (
        Index("ix_request_traces_request_id", "request_id", unique=True),
        Index("ix_request_traces_user_at", "user_id", "at"),
        Index("ix_request_traces_at", "at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    request_id: Mapped[str] = mapped_column(String(32))
    at: Mapped[datetime] = mapped_column(default=utcnow)
    # no foreign key: traces are pruned by count, a deleted user's leave with them
    user_id: Mapped[int | None] = mapped_column(default=None)
    bucket: Mapped[str] = mapped_column(String(63), default="")
    operation: Mapped[str] = mapped_column(String(64))
    status: Mapped[int] = mapped_column()
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    total_ms: Mapped[float] = mapped_column()
    reason: Mapped[str] = mapped_column(String(16))
    phases: Mapped[list[Any]] = mapped_column(default=list)
