"""The spend API's answers (USD; bytes and GiB-days as named)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SpendLineOut(BaseModel):
    key: str = Field(description="the tier, bucket or user name")
    storage: float
    requests: float
    retrieval: float
    egress: float
    restores: float = Field(description="restore requests and per-GiB restore and retrieval fees by speed")
    restored_copy: float = Field(description="the restored copies' storage days, at their copy class's rate")
    lifecycle: float = Field(description="lifecycle transition fees")
    early_deletion: float = Field(description="storage owed by objects deleted, overwritten or moved before their "
                                              "class's minimum storage duration")
    total: float
    gib_days: float = Field(description="GiB-days stored, deleted objects up to their deletion")
    read_requests: int = Field(description="data-path GETs")
    write_requests: int = Field(description="data-path PUTs and upload parts")
    head_requests: int
    list_requests: int = Field(description="LIST requests (objects, versions, uploads, parts)")
    other_requests: int = Field(description="other GETs, PUTs and POSTs that move no object data, and DELETEs")
    read_bytes: int
    write_bytes: int
    restore_requests: int = Field(description="objects restored (requests the tiers accepted)")
    restored_bytes: int
    transitions: int = Field(description="objects moved by lifecycle transitions")
    catalogs: list[str] = Field(description="the price catalogs (of the month) the line was priced with")
    egress_explained: str = Field(description="where the read bytes left their provider, as each tier's price_ref "
                                              "says (e.g. '2.00 GiB read over the research network')")


class SpendMonthOut(BaseModel):
    month: str
    storage: float
    requests: float
    retrieval: float
    egress: float
    restores: float
    restored_copy: float
    lifecycle: float
    early_deletion: float
    total: float


class PlannedOut(BaseModel):
    bucket: str
    planned: float = Field(description="the planner's monthly forecast: a month of every version stored now on its "
                                       "tiers (current and noncurrent), no reads")
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
