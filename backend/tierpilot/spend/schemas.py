"""The spend API's answers (USD; bytes and GiB-days as named)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer

from tierpilot.pricing.schemas import Scenario, Speed

# a month's GiB: Decimals in, plain JSON numbers out; counts are whole numbers (10.5 requests is a 422)
Gib = Annotated[Decimal, Field(ge=0, le=10**12, allow_inf_nan=False), PlainSerializer(float, return_type=float,
                                                                                        when_used="json")]
Count = Annotated[int, Field(ge=0, le=10**15)]


class SpendPlanIn(BaseModel):
    """What a bucket is planned to do each month beyond storing what it holds (priced with its tiers' catalogs)."""

    model_config = ConfigDict(extra="forbid")

    reads_gib: Gib = Field(Decimal(0), description="GiB read out of the bucket per month (retrieval and egress)")
    read_requests: Count = Field(0, description="GET-class requests per month (GET, HEAD)")
    write_requests: Count = Field(0, description="PUT-class requests per month (PUT, COPY, POST, LIST)")
    restores_gib: Gib = Field(Decimal(0), description="GiB restored from archive per month")
    restore_speed: Speed = Field("standard", description="the speed of the planned restores (the nearest one a "
                                                         "tier offers is priced when it lacks this one)")
    scenario: Scenario | None = Field(None, description="a planner scenario of one tier saved as the plan: it keeps "
                                                        "the scenario's volume, objects, reads, restores, egress "
                                                        "destination and restored-copy days and is priced as the "
                                                        "planner prices it; the usage fields are then derived from it")


class SpendPlanUsageOut(BaseModel):
    """A bucket's saved planned monthly usage."""

    reads_gib: float
    read_requests: int
    write_requests: int
    restores_gib: float
    restore_speed: Speed
    # a plain object, not Scenario: an answer typed as the scenario would split its schema into input and output
    scenario: dict[str, Any] | None = Field(None, description="the planner scenario the plan is, as saved (null: "
                                                              "usage figures only)")
    priced_as: str | None = Field(None, description="a scenario plan's tier and catalog, e.g. 'GLACIER "
                                                    "(aws-us-east-1-2026)'")
    restore_requests: int | None = Field(None, description="a scenario plan's restore requests a month (one per "
                                                           "object read from a class that needs a restore)")


class SpendPlanOut(SpendPlanUsageOut):
    bucket: str
    updated_at: datetime
    updated_by: str


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
    planned: float = Field(description="the plan for the month: a scenario plan's month as the planner prices it "
                                       "(its volume and usage); else a month of every version stored now on its "
                                       "tiers (current and noncurrent) and the bucket's planned usage (reads, "
                                       "requests, restores), priced with the tiers' catalogs")
    planned_storage: float = Field(description="of which storage")
    planned_components: dict[str, float] = Field(description="the planned month by component (the keys of a spend "
                                                             "line: storage, requests, retrieval, egress, restores, "
                                                             "restored_copy, lifecycle, early_deletion)")
    plan: SpendPlanUsageOut | None = Field(description="the bucket's planned monthly usage; null: none saved, "
                                                       "storage only")
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
