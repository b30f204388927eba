"""Restore batches, their items, per-(batch, tier) counters and per-tier poll schedules.

Counters live in ``restore_batch_tiers`` and move in the same transaction as the item rows, so the
Restores page reads a few hundred counter rows instead of aggregating millions of items.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, Numeric, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow

SPEEDS = ("expedited", "standard", "bulk")
# faster first: a restore may move to a lower index (upgrade), never to a higher one
SPEED_RANK = {"expedited": 0, "standard": 1, "bulk": 2}

# item states: pending = not yet accepted by the tier (new, or waiting to retry after throttling);
# ongoing = accepted, polled on the schedule; ready = readable until expires_at; failed = retryable;
# expired = the restored copy is gone again
ITEM_STATES = ("pending", "ongoing", "ready", "failed", "expired")
ACTIVE_ITEM_STATES = ("pending", "ongoing")

# batch states: in_progress until no item is active; then ready (all readable), failed (some failed,
# retryable) or expired (every restored copy gone)
BATCH_STATES = ("in_progress", "ready", "failed", "expired")


class RestoreBatch(Base):
    __tablename__ = "restore_batches"
    __table_args__ = (
        Index("ix_restore_batches_owner_id_created_at", "owner_id", "created_at"),
        Index("ix_restore_batches_state_created_at", "state", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    speed: Mapped[str] = mapped_column(String(16))
    days: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="in_progress")
    # what was asked for: {"bucket": ..., "prefixes": [...], "keys": n}
    source: Mapped[dict[str, Any]] = mapped_column(default=dict)
    object_count: Mapped[int] = mapped_column(BigInteger, default=0)
    total_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    cost_estimate: Mapped[Decimal | None] = mapped_column(Numeric(18, 6), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # every item accepted by its tier
    submitted_at: Mapped[datetime | None] = mapped_column(default=None)
    estimated_ready_at: Mapped[datetime | None] = mapped_column(default=None)
    ready_at: Mapped[datetime | None] = mapped_column(default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    # moves on every change: the list's ETag, so polling clients get 304 while nothing happens
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class RestoreBatchTier(Base):
    """Item counts of one batch on one tier (the counters the queue pages read)."""

    __tablename__ = "restore_batch_tiers"

    batch_id: Mapped[int] = mapped_column(ForeignKey("restore_batches.id", ondelete="CASCADE"), primary_key=True)
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"), primary_key=True)
    objects: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    pending: Mapped[int] = mapped_column(BigInteger, default=0)
    ongoing: Mapped[int] = mapped_column(BigInteger, default=0)
    ready: Mapped[int] = mapped_column(BigInteger, default=0)
    ready_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    failed: Mapped[int] = mapped_column(BigInteger, default=0)
    expired: Mapped[int] = mapped_column(BigInteger, default=0)


class RestoreItem(Base):
    """One object of a batch (or, with no batch, one RestoreObject call through the gateway)."""

    __tablename__ = "restore_items"
    __table_args__ = (
        Index("ix_restore_items_batch_id_state", "batch_id", "state"),
        # the sweeps: due rows in time order (a ready row is due at its expiry; others carry NULL)
        Index("ix_restore_items_next_poll_at", "next_poll_at"),
        Index("ix_restore_items_object_id", "object_id"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    batch_id: Mapped[int | None] = mapped_column(ForeignKey("restore_batches.id", ondelete="CASCADE"),
                                                 default=None)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # the catalog row; NULL once the object is deleted (bucket and key stay for the export)
    object_id: Mapped[int | None] = mapped_column(ForeignKey("objects.id", ondelete="SET NULL"), default=None)
    bucket: Mapped[str] = mapped_column(String(63))
    key: Mapped[str] = mapped_column(KeyString)
    size: Mapped[int] = mapped_column(BigInteger)
    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"))
    # the blob the restore is for: an overwrite makes a new locator, and this restore no longer applies
    locator: Mapped[str] = mapped_column(String(2048))
    speed: Mapped[str] = mapped_column(String(16))
    days: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default="pending")
    # when the tier accepted the request (the poll schedule counts from here)
    requested_at: Mapped[datetime | None] = mapped_column(default=None)
    next_poll_at: Mapped[datetime | None] = mapped_column(default=None)
    # the sweep that holds this row until next_poll_at (its lease); results of another sweep are dropped
    claim_token: Mapped[str | None] = mapped_column(String(32), default=None)
    poll_count: Mapped[int] = mapped_column(Integer, default=0)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    expected_ready_at: Mapped[datetime | None] = mapped_column(default=None)
    ready_at: Mapped[datetime | None] = mapped_column(default=None)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)


class RestoreSchedule(Base):
    """A tier's own poll schedule, per speed, replacing the defaults (see restores.schedule)."""

    __tablename__ = "restore_schedules"

    tier_id: Mapped[int] = mapped_column(ForeignKey("tiers.id", ondelete="CASCADE"), primary_key=True)
    # {"standard": {"phases": [[3600, 3600], [10800, 300]], "max_s": 43200}, ...}
    speeds: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
