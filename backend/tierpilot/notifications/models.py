"""In-app notifications; a webhook delivery rides on the same row (state in the database)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow

# webhook_state: none (no URL) | pending (due at webhook_next_at) | delivered | failed (gave up)
WEBHOOK_STATES = ("none", "pending", "delivered", "failed")


class Notification(Base):
    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_user_id_created_at", "user_id", "created_at"),
        Index("ix_notifications_webhook_next_at", "webhook_next_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(64))  # e.g. restore.ready, restore.failed
    title: Mapped[str] = mapped_column(String(300))
    body: Mapped[str] = mapped_column(Text, default="")
    link: Mapped[str | None] = mapped_column(String(500), default=None)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    read_at: Mapped[datetime | None] = mapped_column(default=None)
    webhook_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    webhook_state: Mapped[str] = mapped_column(String(16), default="none")
    webhook_attempts: Mapped[int] = mapped_column(Integer, default=0)
    # NULL unless a delivery is due; the sweep claims a row by moving this forward
    webhook_next_at: Mapped[datetime | None] = mapped_column(default=None)
    webhook_last_error: Mapped[str | None] = mapped_column(Text, default=None)
    webhook_delivered_at: Mapped[datetime | None] = mapped_column(default=None)
