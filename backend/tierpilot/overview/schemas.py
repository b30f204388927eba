from __future__ import annotations

from pydantic import BaseModel


class TierUsage(BaseModel):
    id: int
    name: str
    driver: str
    offline: bool
    storage_classes: list[str]
    capacity_bytes: int | None
    used_bytes: int
    object_count: int


class BucketUsage(BaseModel):
    name: str
    owner: str
    tier: str
    object_count: int
    used_bytes: int


class Totals(BaseModel):
    buckets: int
    objects: int
    bytes: int


class OverviewOut(BaseModel):
    tiers: list[TierUsage]
    buckets: list[BucketUsage]
    totals: Totals
    gateway_url: str
