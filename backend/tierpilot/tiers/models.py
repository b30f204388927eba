from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow


class Tier(Base):
    """A storage location plus its cost and access rules."""

    __tablename__ = "tiers"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    driver: Mapped[str] = mapped_column(String(16))  # posix | s3
    # driver settings: posix {"path"}; s3 {"endpoint_url","region","bucket","prefix",
    # "access_key_id","secret_access_key","storage_class"}
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # S3 storage classes this tier serves, e.g. ["GLACIER", "DEEP_ARCHIVE"]
    storage_classes: Mapped[list[Any]] = mapped_column(default=list)
    offline: Mapped[bool] = mapped_column(Boolean, default=False)
    # seconds until a restore completes, per speed: {"expedited": 5, "standard": 30, "bulk": 60}
    restore_delays: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # price catalog entry: {"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD_IA"}
    price_ref: Mapped[dict[str, Any]] = mapped_column(default=dict)
    capacity_bytes: Mapped[int | None] = mapped_column(BigInteger, default=None)
    min_storage_days: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
