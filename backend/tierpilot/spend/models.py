"""Metered usage of the gateway (requests and bytes per day, user, bucket and kind), the catalog's history
of stored bytes that left it, and the daily roll-up of stored bytes that prices finished days."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, Numeric, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, KeyString, utcnow


class UsageMeter(Base):
    """One UTC day's requests and bytes of one user in one bucket, per kind (written by gateways in batches).

    ``direction`` is the kind: ``read``/``write`` for data-path GETs and PUTs, ``head``, ``list``, ``get``
    (other GETs), ``put`` (other PUTs and POSTs) and ``delete`` for requests that move no object data."""

    __tablename__ = "usage_meter"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bucket_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    direction: Mapped[str] = mapped_column(String(8), primary_key=True)  # see the docstring
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)


class StorageHistory(Base):
    """A stored blob's span that ended: the catalog's history of deleted, replaced and moved object bytes.

    Rows are written by database triggers on ``objects`` and ``object_versions`` (migration 0011), so every
    path that deletes, overwrites or moves an object is recorded in its own transaction, with no code in the
    catalog. A blob that only changes table (a current version kept as noncurrent, a noncurrent one promoted
    back) leaves no row: storage is billed while the blob is in either table.
    """

    __tablename__ = "storage_history"
    __table_args__ = (
        Index("ix_storage_history_bucket_id_ended_at", "bucket_id", "ended_at"),
        # with ended_at: the triggers' "since when on this tier" lookup must seek (bucket, key), not scan the
        # bucket's history by ended_at (which made deleting N objects of one bucket O(N²))
        Index("ix_storage_history_bucket_id_key", "bucket_id", "key", "ended_at"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    bucket_id: Mapped[int] = mapped_column(Integer)
    # the current-version row's id (moves of one object chain through it); None for a noncurrent version
    object_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # the noncurrent version's row id (its moves chain through it); None for a current version
    version_pk: Mapped[int | None] = mapped_column(BigInteger, default=None)
    key: Mapped[str] = mapped_column(KeyString)
    tier_id: Mapped[int] = mapped_column(Integer)
    storage_class: Mapped[str] = mapped_column(String(32))
    locator: Mapped[str] = mapped_column(String(2048))
    size: Mapped[int] = mapped_column(BigInteger)
    # when the bytes arrived on this tier (creation, or the end of the previous move) and when they left it
    stored_from: Mapped[datetime] = mapped_column()
    ended_at: Mapped[datetime] = mapped_column()
    reason: Mapped[str] = mapped_column(String(8))  # deleted | replaced | moved (a lifecycle transition)


# byte-seconds of a day overflow 64 bits past 97 TiB in one bucket and tier: exact numerics on PostgreSQL; SQLite
# keeps 15-16 significant digits of them (a relative error of 1e-16 in a dollar figure)
ByteSeconds = Numeric(38, 0)


class SpendDaily(Base):
    """One finished UTC day of stored bytes in one bucket on one tier, as the catalog and its history said the
    day after (written once by beat's ``spend.roll_up``; ``GET /api/spend`` prices finished days from here).

    Byte-seconds rather than GiB-days keep the sums exact; ``billable_byte_s`` applies the minimum billable
    size and the per-object overhead of the tier's class in the day's month, ``short_byte_s`` is what versions
    that left the tier that day before the class's minimum storage duration still owe (billable bytes x
    seconds left), ``object_s`` counts versions x seconds (overhead billed at another class's rate)."""

    __tablename__ = "spend_daily"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    bucket_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tier_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    byte_s: Mapped[Decimal] = mapped_column(ByteSeconds, default=0)
    billable_byte_s: Mapped[Decimal] = mapped_column(ByteSeconds, default=0)
    short_byte_s: Mapped[Decimal] = mapped_column(ByteSeconds, default=0)
    object_s: Mapped[Decimal] = mapped_column(ByteSeconds, default=0)


class SpendRollup(Base):
    """How far the daily roll-up reaches: ``until`` is the first day it has not closed (None: never ran)."""

    __tablename__ = "spend_rollup"

    name: Mapped[str] = mapped_column(String(16), primary_key=True)  # "storage", the one row
    until: Mapped[str | None] = mapped_column(String(10), default=None)  # YYYY-MM-DD, UTC


class SpendPlan(Base):
    """What a bucket is planned to do each month beyond storing what it holds: GiB read, requests by class, GiB
    restored at a speed; or a planner scenario, stored volume included. ``GET /api/spend`` prices it with the tier's
    catalog (a scenario as the planner does) beside the actual."""

    __tablename__ = "spend_plans"

    bucket_id: Mapped[int] = mapped_column(ForeignKey("buckets.id", ondelete="CASCADE"), primary_key=True)
    reads_gib: Mapped[Decimal] = mapped_column(Numeric(24, 6), default=0)
    read_requests: Mapped[int] = mapped_column(BigInteger, default=0)  # GET-class (GET, HEAD)
    write_requests: Mapped[int] = mapped_column(BigInteger, default=0)  # PUT-class (PUT, COPY, POST, LIST)
    restores_gib: Mapped[Decimal] = mapped_column(Numeric(24, 6), default=0)
    restore_speed: Mapped[str] = mapped_column(String(16), default="standard")
    # a planner scenario saved as the plan (one tier), priced as the planner prices it; None: the usage above only
    scenario: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_by: Mapped[str] = mapped_column(String(64), default="")
