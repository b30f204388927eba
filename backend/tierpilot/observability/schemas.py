from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator


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
    errors: float
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


class BenchmarkRunIn(BaseModel):
    workload: str = Field(description="put | get")
    object_sizes: list[int] = Field(min_length=1, max_length=8, description="bytes")
    concurrency: list[int] = Field(min_length=1, max_length=12)
    seconds_per_point: float = Field(gt=0, le=600)

    @field_validator("object_sizes", "concurrency")
    @classmethod
    def _positive(cls, values: list[int]) -> list[int]:
        if any(v < 1 for v in values):
            raise ValueError("every value must be at least 1")
        return values


class BenchmarkRunCreated(BaseModel):
    id: int


class BenchmarkPointOut(BaseModel):
    workload: str
    object_size: int
    concurrency: int
    ops_per_s: float
    mb_per_s: float
    failures: int
    retries: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    ttfb_p50_ms: float
    phases_ms: dict[str, float]


class BenchmarkRunOut(BaseModel):
    id: int
    state: str
    progress: float
    params: dict[str, Any]
    points: list[BenchmarkPointOut]
    error: str
    created_at: datetime
    finished_at: datetime | None


class BenchmarkRunsOut(BaseModel):
    items: list[BenchmarkRunOut]
