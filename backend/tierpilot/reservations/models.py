"""Throughput reservations, the capacity they are booked against, and their metered bytes.

Rates are stored in bytes per second (integers, so admission sums are exact); the API speaks MB/s.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from tierpilot.kit.db import Base, utcnow

DIRECTIONS = ("read", "write")
STATES = ("booked", "active", "finished", "cancelled")


class CapacityPool(Base):
    """What the gateway pool delivers per direction; one row (``default``) per pool."""

    __tablename__ = "capacity_pools"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    read_bps: Mapped[int] = mapped_column(BigInteger)
    write_bps: Mapped[int] = mapped_column(BigInteger)
    # this share of each direction is never bookable, so best-effort traffic never starves
    unbookable_share: Mapped[float] = mapped_column(Float, default=0.1)
    # last `tierpilot gateway calibrate` proposal, shown next to the admin's figures
    calibrated_read_bps: Mapped[int | None] = mapped_column(BigInteger, default=None)
    calibrated_write_bps: Mapped[int | None] = mapped_column(BigInteger, default=None)
    calibrated_at: Mapped[datetime | None] = mapped_column(default=None)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class Reservation(Base):
    """A booked rate for one bucket and direction during [start_at, end_at)."""

    __tablename__ = "reservations"
    __table_args__ = (
        # admission control and the gateway's snapshot scan windows of one direction
        Index("ix_reservations_direction_start_end", "direction", "start_at", "end_at"),
    )

    # opaque and unguessable: it is the credential a client presents in X-Tierpilot-Reservation
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    bucket: Mapped[str] = mapped_column(String(63))
    direction: Mapped[str] = mapped_column(String(8))
    rate_bps: Mapped[int] = mapped_column(BigInteger)
    start_at: Mapped[datetime] = mapped_column()
    end_at: Mapped[datetime] = mapped_column()
    note: Mapped[str] = mapped_column(String(500), default="")
    # booked -> active -> finished, or cancelled; advanced by the beat task, derived from times on read
    state: Mapped[str] = mapped_column(String(16), default="booked", index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    cancelled_at: Mapped[datetime | None] = mapped_column(default=None)
    # achieved throughput from the metering roll-up (over the seconds that carried traffic)
    achieved_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    active_seconds: Mapped[int] = mapped_column(Integer, default=0)
    achieved_mean_bps: Mapped[int | None] = mapped_column(BigInteger, default=None)
    achieved_p5_bps: Mapped[int | None] = mapped_column(BigInteger, default=None)


class ReservationSample(Base):
    """Bytes moved under one reservation during one UTC second (rolled up from the gateways)."""

    __tablename__ = "reservation_samples"

    reservation_id: Mapped[str] = mapped_column(
        ForeignKey("reservations.id", ondelete="CASCADE"), primary_key=True
    )
    second: Mapped[int] = mapped_column(BigInteger, primary_key=True)  # Unix time, whole seconds
    nbytes: Mapped[int] = mapped_column(BigInteger, default=0)
