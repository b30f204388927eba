"""The fixity log (one row per check of one object's blob) and each tier's audit cursor."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow

OK, MISMATCH, MISSING = "ok", "mismatch", "missing"
RESULTS = (OK, MISMATCH, MISSING)


class FixityCheck(Base):
    """One re-read of an object's blob: what it had to match, what was found, and the verdict."""

    __tablename__ = "fixity_checks"
    __table_args__ = (
        Index("ix_fixity_checks_bucket_checked", "bucket_id", "checked_at"),
        Index("ix_fixity_checks_object", "object_id", "id"),  # an object's latest check
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str] = mapped_column(String(32))
    # a deleted bucket takes its checks along: the objects they vouched for are gone
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"))
    object_id: Mapped[int] = mapped_column(BigInteger)  # objects.id (no key: the log outlives an overwrite)
    key: Mapped[str] = mapped_column(KeyString)
    version_id: Mapped[str] = mapped_column(String(64))
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"))
    locator: Mapped[str] = mapped_column(String(2048))
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)
    result: Mapped[str] = mapped_column(String(16))  # ok | mismatch | missing
    algorithm: Mapped[str] = mapped_column(String(16))  # CRC64NVME, SHA256, …, MD5 (the ETag), SIZE
    expected: Mapped[str] = mapped_column(String(128))
    found: Mapped[str | None] = mapped_column(String(128), default=None)  # None: nothing to read
    size: Mapped[int] = mapped_column(BigInteger, default=0)  # bytes read
    detail: Mapped[str | None] = mapped_column(Text, default=None)


class FixityCursor(Base):
    """Where beat's periodic audit of a tier stands in its current cycle (objects in id order), and who runs it."""

    __tablename__ = "fixity_cursors"

    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"), primary_key=True)
    after_id: Mapped[int] = mapped_column(BigInteger, default=0)
    cycle_started_at: Mapped[datetime] = mapped_column(default=utcnow)
    checked_in_cycle: Mapped[int] = mapped_column(BigInteger, default=0)
    holder: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
