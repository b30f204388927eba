"""Lifecycle tables: each bucket's configuration, the moves it caused (history and work queue), metering."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow

# the nc_* actions and expire_marker act on object_versions rows (noncurrent versions, delete markers)
ACTIONS = ("transition", "expiration", "abort_upload", "nc_transition", "nc_expiration", "expire_marker")
# queued -> running -> (transition: switched ->) done; or skipped (object changed meanwhile) or failed
STATES = ("queued", "running", "switched", "done", "skipped", "failed")
OPEN_STATES = ("queued", "running", "switched")


class LifecycleConfiguration(Base):
    """A bucket's lifecycle configuration: the S3 document as validated JSON (``rules.LifecycleConfig``).

    The gateway (XML) and the API (JSON) read and write this one row, so both always show the same rules.
    """

    __tablename__ = "lifecycle_configurations"

    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"), primary_key=True)
    rules: Mapped[list[Any]] = mapped_column(default=list)
    transition_default_minimum_object_size: Mapped[str] = mapped_column(String(32),
                                                                        default="all_storage_classes_128K")
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(64), default="")


class LifecycleMove(Base):
    """One transition, expiration or upload abort: work item while open, history afterwards.

    ``dedup_key`` (action, object id and the object's locator at the time) makes a sweep that runs twice,
    or two sweeps at once, find the existing row instead of queueing the same work again. The lease
    (``lease_owner`` host:pid, ``lease_until``) lets exactly one worker run it; a dead worker's lease is
    taken over.
    """

    __tablename__ = "lifecycle_moves"
    __table_args__ = (
        Index("ix_lifecycle_moves_state_next_attempt_at", "state", "next_attempt_at"),
        Index("ix_lifecycle_moves_bucket_id_created_at", "bucket_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    dedup_key: Mapped[str] = mapped_column(String(64), unique=True)
    action: Mapped[str] = mapped_column(String(16))
    rule_id: Mapped[str] = mapped_column(String(255), default="")
    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(KeyString)
    # no foreign key: the history outlives an expired object
    object_id: Mapped[int | None] = mapped_column(BigInteger, default=None, index=True)
    upload_id: Mapped[str | None] = mapped_column(String(64), default=None)
    src_tier_id: Mapped[int] = mapped_column(Integer)
    dst_tier_id: Mapped[int | None] = mapped_column(Integer, default=None)
    src_class: Mapped[str] = mapped_column(String(32), default="")
    dst_class: Mapped[str | None] = mapped_column(String(32), default=None)
    src_locator: Mapped[str] = mapped_column(String(2048))
    dst_locator: Mapped[str | None] = mapped_column(String(2048), default=None)
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    etag: Mapped[str] = mapped_column(String(80), default="")
    state: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    # a failed move with next_attempt_at is retried by the sweep from then on; None = given up
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    # last time the move was sent to the workers: a queued move not started a lease later is sent again
    handed_out_at: Mapped[datetime | None] = mapped_column(default=None)
    lease_owner: Mapped[str | None] = mapped_column(String(128), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    switched_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)
    # seconds spent copying (last attempt) and bytes written to the target tier
    copy_seconds: Mapped[float | None] = mapped_column(Float, default=None)
    bytes_moved: Mapped[int] = mapped_column(BigInteger, default=0)
    # what the source tier charges for the object leaving before its minimum storage duration
    early_deletion_nanousd: Mapped[int] = mapped_column(BigInteger, default=0)


class LifecycleMeter(Base):
    """Daily totals of executed moves per action and tier pair (``dst_tier_id`` 0: none, e.g. expiration)."""

    __tablename__ = "lifecycle_meter"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    action: Mapped[str] = mapped_column(String(16), primary_key=True)
    src_tier_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dst_tier_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    objects: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    # requests sent to the target tier to put the objects there (S3 bills lifecycle transitions per 1,000)
    transition_requests: Mapped[int] = mapped_column(BigInteger, default=0)
    early_deletion_nanousd: Mapped[int] = mapped_column(BigInteger, default=0)
    early_deletions: Mapped[int] = mapped_column(BigInteger, default=0)
    failures: Mapped[int] = mapped_column(BigInteger, default=0)
