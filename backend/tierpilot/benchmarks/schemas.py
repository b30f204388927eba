from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator


class SizeDistribution(BaseModel):
    """Object sizes drawn per object, log-uniformly between ``min`` and ``max`` bytes (warp's random sizes)."""

    min: int = Field(ge=1, description="bytes")
    max: int = Field(ge=1, description="bytes")

    @model_validator(mode="after")
    def _ordered(self) -> SizeDistribution:
        if self.max < self.min:
            raise ValueError("size_distribution.max must be at least size_distribution.min")
        return self


class BenchmarkRunIn(BaseModel):
    workload: str = Field(description="put | get | head | list | delete | mixed")
    object_sizes: list[int] | None = Field(None, min_length=1, max_length=8,
                                           description="bytes; one point per size (or give size_distribution)")
    size_distribution: SizeDistribution | None = Field(None, description="instead of object_sizes: one size range")
    ratios: dict[str, float] | None = Field(
        None, max_length=5, description='mixed only: share of each operation, e.g. {"put": 0.2, "get": 0.7, '
        '"head": 0.1} (put, get, head, list, delete)')
    concurrency: list[int] = Field(min_length=1, max_length=12)
    seconds_per_point: float = Field(gt=0, le=600)
    reservation_id: str | None = Field(None, max_length=64, pattern="^rsv_[A-Za-z0-9_-]+$",
                                       description="sent with every request; the sweep then runs in the "
                                       "reservation's bucket, under a scratch prefix")

    @field_validator("object_sizes", "concurrency")
    @classmethod
    def _positive(cls, values: list[int] | None) -> list[int] | None:
        if values is not None and any(v < 1 for v in values):
            raise ValueError("every value must be at least 1")
        return values

    @model_validator(mode="after")
    def _one_size_source(self) -> BenchmarkRunIn:
        if (self.object_sizes is None) == (self.size_distribution is None):
            raise ValueError("give either object_sizes or size_distribution")
        return self


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
    phases_ms: dict[str, float] = Field(description="per phase, the median over the point's traced requests")
    size_distribution: str = ""
    traced: int = Field(0, description="requests of the point whose phases were read back")


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
