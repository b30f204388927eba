"""The lifecycle API's shapes. Rules themselves are ``rules.LifecycleRule`` / ``rules.LifecycleConfig`` (S3's model)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from tierpilot.lifecycle.rules import LifecycleConfig, LifecycleRule, MinSizeMode


class BucketLifecycle(BaseModel):
    bucket: str
    tier: str
    rules: int
    enabled_rules: int
    objects: int
    bytes: int
    updated_at: datetime | None
    updated_by: str


class LifecycleConfigurationOut(BaseModel):
    bucket: str
    configured: bool
    rules: list[LifecycleRule]
    transition_default_minimum_object_size: MinSizeMode
    updated_at: datetime | None = None
    updated_by: str = ""


class LifecycleDryRunIn(BaseModel):
    """An edited rule (added, or replacing ``replace_id``), or a whole configuration, to try before saving."""

    model_config = ConfigDict(extra="forbid")
    rule: LifecycleRule | None = None
    replace_id: str | None = None
    configuration: LifecycleConfig | None = None
    days: int = Field(90, ge=1, le=365)


class MoveAmount(BaseModel):
    objects: int
    bytes: int


class TierMoveAmount(MoveAmount):
    tier: str


class PreviewDay(BaseModel):
    date: date
    moves: list[TierMoveAmount]
    expirations: MoveAmount


class PreviewTotals(BaseModel):
    moves: list[TierMoveAmount]
    expirations: MoveAmount


class PreviewTierCost(BaseModel):
    tier: str
    price: str | None = Field(description="price catalog entry (catalog:CLASS); null = not priced")
    objects_before: int
    bytes_before: int
    objects_after: int
    bytes_after: int
    before_usd_month: Decimal
    after_usd_month: Decimal


class PreviewCost(BaseModel):
    before_usd_month: Decimal = Field(description="storage per month now (USD)")
    after_usd_month: Decimal = Field(description="storage per month once the previewed moves are done (USD)")
    transition_requests_usd: Decimal
    early_deletion_usd: Decimal
    tiers: list[PreviewTierCost]


class PreviewSample(BaseModel):
    bucket: str
    key: str
    action: str
    size: int
    from_tier: str
    to_tier: str | None
    storage_class: str | None


class PreviewOut(BaseModel):
    generated_at: datetime
    days: int
    buckets: list[str]
    series: list[PreviewDay]
    totals: PreviewTotals
    cost: PreviewCost
    unpriced_tiers: list[str]
    objects_walked: int
    truncated: bool
    samples: list[PreviewSample] = Field(description="first objects acted on today (the next sweep's work)")


class LifecycleDryRunOut(BaseModel):
    configuration: LifecycleConfig = Field(description="the configuration as it would be saved")
    preview: PreviewOut


class MoveOut(BaseModel):
    id: int
    action: str
    rule_id: str
    bucket: str
    key: str
    from_tier: str
    to_tier: str | None
    from_class: str
    to_class: str | None
    size: int
    state: str
    attempts: int
    error: str | None
    next_attempt_at: datetime | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    copy_seconds: float | None
    bytes_moved: int
    early_deletion_usd: Decimal


class MovesOut(BaseModel):
    moves: list[MoveOut]
    counts: dict[str, int]
    next_before_id: int | None


class MoveRetryOut(BaseModel):
    retried: int


class LifecycleMeterRow(BaseModel):
    action: str
    from_tier: str
    to_tier: str | None
    objects: int
    bytes: int
    transition_requests: int
    early_deletions: int
    early_deletion_usd: Decimal
    failures: int


class LifecycleMeterOut(BaseModel):
    since: date | None
    rows: list[LifecycleMeterRow]


class SweepQueued(BaseModel):
    task_id: str


class SweepSchedule(BaseModel):
    period_s: float = Field(description="the beat starts a sweep this often (TIERPILOT_LIFECYCLE_SWEEP_S)")
    last_run_at: datetime | None = Field(
        None, description="when beat's last sweep started; null before the first (or while Redis is unreachable)")
    next_run_at: datetime | None = Field(
        None, description="when beat starts the next sweep (last_run_at + period_s); in the past when beat "
        "or the workers are behind")
