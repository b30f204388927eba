"""The spend API's answers (USD; bytes and GiB-days as named)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SpendLineOut(BaseModel):
    key: str = Field(description="the tier, bucket or user name")
    storage: float
    requests: float
    retrieval: float
    egress: float
    lifecycle: float = Field(description="transition fees and early deletion of lifecycle moves")
    total: float
    gib_days: float
    read_requests: int
    write_requests: int
    read_bytes: int
    write_bytes: int
    catalogs: list[str] = Field(description="the price catalogs (of the month) the line was priced with")


class SpendMonthOut(BaseModel):
    month: str
    storage: float
    requests: float
    retrieval: float
    egress: float
    lifecycle: float
    total: float


class PlannedOut(BaseModel):
    bucket: str
    planned: float = Field(description="the planner's monthly forecast: the current volume on its tiers, no reads")
    actual_so_far: float
    projected: float = Field(description="actual so far extended to the month's end")
    diverges: bool
    reasons: list[str]


class SpendOut(BaseModel):
    month: str
    group_by: str
    currency: str
    days_elapsed: float
    days_in_month: int
    so_far: float
    forecast: float
    groups: list[SpendLineOut]
    history: list[SpendMonthOut]
    planned: list[PlannedOut]
    divergence_share: float
    not_metered: list[str]
