"""The events domain's tables: targets, per-bucket configurations, the outbox, dead letters, recent deliveries."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class EventTarget(Base):
    """Where events may go: an admin's target; ``sealed`` holds its connection settings (URL with any password,
    topic, webhook secret, options) encrypted with the app key."""

    __tablename__ = "event_targets"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    type: Mapped[str] = mapped_column(String(16))  # webhook | amqp | mqtt | nats | redis
    sealed: Mapped[str] = mapped_column(Text)
    shown_url: Mapped[str] = mapped_column(String(2048))  # the URL without its password, for listings
    topic: Mapped[str] = mapped_column(String(255), default="")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class EventConfiguration(Base):
    """A bucket's notification configuration: the S3 document's entries as sent (``events.s3xml``)."""

    __tablename__ = "event_configurations"

    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"), primary_key=True)
    entries: Mapped[list[Any]] = mapped_column(default=list)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class OutboxEvent(Base):
    """One event for one target, written in the transaction of the change it describes; deleted once the target
    took it. A row is claimed by moving ``lease_until`` forward under a fresh ``lease_token``."""

    __tablename__ = "event_outbox"
    __table_args__ = (
        # the head of each (target, bucket, key) queue: per-key order
        Index("ix_event_outbox_target_id_bucket_id_key_id", "target_id", "bucket_id", "key", "id"),
        Index("ix_event_outbox_next_at", "next_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("event_targets.id", ondelete="CASCADE"))
    bucket_id: Mapped[int] = mapped_column(Integer)  # no foreign key: a deleted bucket's last events still go
    key: Mapped[str] = mapped_column(String(1024))
    name: Mapped[str] = mapped_column(String(64))
    record: Mapped[dict[str, Any]] = mapped_column()  # the S3 event record, less its sequencer
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    next_at: Mapped[datetime] = mapped_column(default=utcnow)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)
    lease_token: Mapped[str | None] = mapped_column(String(32), default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)


class DeadLetter(Base):
    """An event its target refused ``events_max_attempts`` times; an admin may replay it into the outbox."""

    __tablename__ = "event_dead_letters"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(primary_key=True)
    target_id: Mapped[int] = mapped_column(ForeignKey("event_targets.id", ondelete="CASCADE"))
    bucket_id: Mapped[int] = mapped_column(Integer)
    key: Mapped[str] = mapped_column(String(1024))
    name: Mapped[str] = mapped_column(String(64))
    record: Mapped[dict[str, Any]] = mapped_column()
    created_at: Mapped[datetime] = mapped_column()
    failed_at: Mapped[datetime] = mapped_column(default=utcnow)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)


class EventDelivery(Base):
    """A recent delivery outcome (delivered or dead-lettered), for a bucket's Events page; pruned to the newest."""

    __tablename__ = "event_deliveries"
    __table_args__ = (Index("ix_event_deliveries_bucket_id_id", "bucket_id", "id"), {"sqlite_autoincrement": True})

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    bucket_id: Mapped[int] = mapped_column(Integer)
    target_id: Mapped[int] = mapped_column(ForeignKey("event_targets.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(1024))
    name: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))  # delivered | dead
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    at: Mapped[datetime] = mapped_column(default=utcnow)
