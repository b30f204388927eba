from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class AuditEvent(Base):
    """One security-relevant event. Actor and target are kept as text too: they outlive deleted users."""

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_at", "at"),
        Index("ix_audit_events_event_at", "event", "at"),
        Index("ix_audit_events_actor_at", "actor", "at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow)
    event: Mapped[str] = mapped_column(String(64))
    # no foreign key: the log keeps a deleted user's events
    actor_id: Mapped[int | None] = mapped_column(default=None)
    actor: Mapped[str] = mapped_column(String(64), default="")
    client: Mapped[str] = mapped_column(String(64), default="")
    target: Mapped[str] = mapped_column(String(300), default="")
    detail: Mapped[dict[str, Any]] = mapped_column(default=dict)
