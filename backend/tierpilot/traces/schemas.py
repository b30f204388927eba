from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class PhaseOut(BaseModel):
    name: str
    start_ms: float
    duration_ms: float


class RequestTraceOut(BaseModel):
    request_id: str
    at: datetime
    operation: str
    bucket: str
    status: int
    bytes: int
    total_ms: float
    reason: str
    phases: list[PhaseOut]


class RequestTracesOut(BaseModel):
    items: list[RequestTraceOut]


class GatewayTotals(BaseModel):
    """Counters since the gateway processes started (rates come from two readings)."""

    requests: float
    errors: float = Field(description="answered 5xx, SlowDown included")
    slowdowns: float = Field(description="answered 503 SlowDown: backpressure, the client should retry later")
    bytes_in: float
    bytes_out: float
    in_flight: float


class ActiveReservation(BaseModel):
    bucket: str
    direction: str
    booked_bps: int
    achieved_bps: int | None


class ActivityOut(BaseModel):
    at: datetime
    gateway: GatewayTotals | None = Field(description="installation-wide: admins only")
    restores_in_flight: int
    lifecycle_backlog: int | None = Field(description="queued and running moves: admins only")
    reservations: list[ActiveReservation]
