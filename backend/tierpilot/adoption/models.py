from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class AdoptedBucket(Base):
    """A local bucket whose objects live in place in a remote bucket of its tier."""

    __tablename__ = "adopted_buckets"
    __table_args__ = (Index("ix_adopted_buckets_state_scanned", "state", "scanned_at"),
                      {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(primary_key=True)
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"), unique=True)
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"), index=True)
    remote_bucket: Mapped[str] = mapped_column(String(255))
    state: Mapped[str] = mapped_column(String(16), default="queued")  # queued | running | done | failed
    listed: Mapped[int] = mapped_column(BigInteger, default=0)
    added: Mapped[int] = mapped_column(BigInteger, default=0)
    removed: Mapped[int] = mapped_column(BigInteger, default=0)
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    scanned_at: Mapped[datetime | None] = mapped_column(default=None)  # end of the last complete scan
