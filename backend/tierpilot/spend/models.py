"""Metered usage of the data path: requests and bytes per day, user, bucket and direction."""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base


class UsageMeter(Base):
    """One UTC day's data-path requests and bytes of one user in one bucket (written by gateways in batches)."""

    __tablename__ = "usage_meter"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    user_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bucket_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    direction: Mapped[str] = mapped_column(String(8), primary_key=True)  # read | write
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
