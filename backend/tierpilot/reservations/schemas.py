"""API shapes of reservations and capacity; rates in MB/s (10^6 bytes/s), times ISO 8601 UTC."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from tierpilot.reservations import service
from tierpilot.reservations.models import CapacityPool, Reservation

Direction = Literal["read", "write"]
MAX_RATE_MBPS = 1e9  # a rate or capacity past this (1 PB/s) is a typo, and its bytes/s would not fit the database
State = Literal["booked", "active", "finished", "cancelled"]


def _mbps(bps: int | None) -> float | None:
    return None if bps is None else service.mbps(bps)


class CapacityIn(BaseModel):
    read_mbps: float = Field(gt=0, le=MAX_RATE_MBPS, description="read capacity of the gateway pool, MB/s")
    write_mbps: float = Field(gt=0, le=MAX_RATE_MBPS, description="write capacity of the gateway pool, MB/s")
    unbookable_share: float | None = Field(
        None, ge=0, lt=1, description="share of each direction never bookable (kept for best-effort); "
        "omitted = unchanged")


class OverbookingOut(BaseModel):
    direction: Direction
    at: datetime
    booked_mbps: float
    bookable_mbps: float


class CapacityOut(BaseModel):
    read_mbps: float
    write_mbps: float
    unbookable_share: float
    bookable_read_mbps: float
    bookable_write_mbps: float
    calibrated_read_mbps: float | None
    calibrated_write_mbps: float | None
    calibrated_at: datetime | None
    updated_at: datetime
    overbooked: list[OverbookingOut] = Field(
        default_factory=list, description="where existing bookings exceed the bookable capacity")

    @classmethod
    def of(cls, pool: CapacityPool, overbooked: list[service.Overbooking] | None = None) -> CapacityOut:
        return cls(
            read_mbps=service.mbps(pool.read_bps), write_mbps=service.mbps(pool.write_bps),
            unbookable_share=pool.unbookable_share,
            bookable_read_mbps=service.mbps(service.bookable(pool, "read")),
            bookable_write_mbps=service.mbps(service.bookable(pool, "write")),
            calibrated_read_mbps=_mbps(pool.calibrated_read_bps),
            calibrated_write_mbps=_mbps(pool.calibrated_write_bps),
            calibrated_at=pool.calibrated_at, updated_at=pool.updated_at,
            overbooked=[OverbookingOut(direction=o.direction, at=o.at,  # type: ignore[arg-type]
                                       booked_mbps=service.mbps(o.booked_bps),
                                       bookable_mbps=service.mbps(o.bookable_bps)) for o in overbooked or []],
        )


class ReservationIn(BaseModel):
    bucket: str = Field(min_length=3, max_length=63)
    direction: Direction
    rate_mbps: float = Field(gt=0, le=MAX_RATE_MBPS, description="booked rate, MB/s")
    start: datetime = Field(description="ISO 8601; without an offset it is UTC")
    end: datetime
    note: str = Field("", max_length=500)


class ReservationOut(BaseModel):
    id: str = Field(description="send it as the X-Tierpilot-Reservation request header")
    owner: str
    bucket: str
    direction: Direction
    rate_mbps: float
    start: datetime
    end: datetime
    note: str
    state: State
    created_at: datetime
    cancelled_at: datetime | None
    achieved_bytes: int
    active_seconds: int
    achieved_mean_mbps: float | None = Field(description="mean over the seconds that carried traffic, without "
                                             "the first and last (partial) ones when there are more than four")
    achieved_p5_mbps: float | None = Field(description="5th percentile of per-second throughput")

    @classmethod
    def of(cls, r: Reservation, owner: str, now: datetime) -> ReservationOut:
        return cls(
            id=r.id, owner=owner, bucket=r.bucket, direction=r.direction,  # type: ignore[arg-type]
            rate_mbps=service.mbps(r.rate_bps), start=r.start_at, end=r.end_at, note=r.note,
            state=service.effective_state(r, now),  # type: ignore[arg-type]
            created_at=r.created_at, cancelled_at=r.cancelled_at, achieved_bytes=r.achieved_bytes,
            active_seconds=r.active_seconds, achieved_mean_mbps=_mbps(r.achieved_mean_bps),
            achieved_p5_mbps=_mbps(r.achieved_p5_bps),
        )


class AvailabilityOut(BaseModel):
    direction: Direction
    start: datetime
    end: datetime
    capacity_mbps: float
    bookable_mbps: float
    booked_peak_mbps: float = Field(description="highest load already booked at any instant of the window")
    max_rate_mbps: float = Field(description="largest rate a booking of this window can get")
    rate_mbps: float | None = None
    fits: bool | None = Field(None, description="whether rate_mbps fits (when given)")
    earliest_start: datetime | None = Field(
        None, description="earliest start (not before `start`) of a window this long where rate_mbps fits")
    earliest_end: datetime | None = None

    @classmethod
    def of(cls, a: service.Availability) -> AvailabilityOut:
        return cls(
            direction=a.direction, start=a.start, end=a.end,  # type: ignore[arg-type]
            capacity_mbps=service.mbps(a.capacity_bps), bookable_mbps=service.mbps(a.bookable_bps),
            booked_peak_mbps=service.mbps(a.booked_peak_bps), max_rate_mbps=service.mbps(a.max_rate_bps),
            rate_mbps=_mbps(a.rate_bps), fits=a.fits, earliest_start=a.earliest_start,
            earliest_end=a.earliest_start + (a.end - a.start) if a.earliest_start else None,
        )


class LoadStepOut(BaseModel):
    at: datetime
    booked_mbps: float


class DirectionLoadOut(BaseModel):
    direction: Direction
    capacity_mbps: float
    bookable_mbps: float
    steps: list[LoadStepOut] = Field(description="booked load (everyone's) from each `at` until the next")


class TimelineOut(BaseModel):
    start: datetime
    end: datetime
    now: datetime
    directions: list[DirectionLoadOut]
    reservations: list[ReservationOut] = Field(description="the reservations you may see in the span")


class ThroughputPointOut(BaseModel):
    at: datetime
    achieved_mbps: float


class ThroughputOut(BaseModel):
    id: str
    direction: Direction
    state: State
    start: datetime
    end: datetime
    booked_mbps: float
    step_s: int = Field(description="seconds per point")
    points: list[ThroughputPointOut]
    achieved_mean_mbps: float | None
    achieved_p5_mbps: float | None
