"""API shapes of restores. Bytes and seconds; money as decimal strings (USD); times UTC."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tierpilot.pricing.restores import Cost
from tierpilot.restores import service
from tierpilot.restores.models import RestoreItem

Speed = Literal["expedited", "standard", "bulk"]
BatchState = Literal["in_progress", "ready", "failed", "expired"]
ItemState = Literal["pending", "ongoing", "ready", "failed", "expired"]


def usd(value: Decimal) -> str:
    """Money as the API writes it: USD, a decimal string to a millionth."""
    return f"{value:.6f}"


class RestoreSelectionIn(BaseModel):
    """Objects of one bucket: listed keys (a Browser selection) and/or every key under prefixes."""

    model_config = ConfigDict(extra="forbid")

    bucket: str = Field(min_length=1, max_length=63)
    keys: list[str] = Field(default_factory=list, max_length=service.MAX_KEYS)
    prefixes: list[str] = Field(default_factory=list, max_length=service.MAX_PREFIXES,
                                description='"" selects the whole bucket')

    def selection(self) -> service.Selection:
        return service.Selection(self.bucket, self.keys, self.prefixes)


class RestorePreviewIn(RestoreSelectionIn):
    days: int = Field(7, ge=1, le=30000, description="days the restored copies stay readable")


class RestoreBatchCreate(RestoreSelectionIn):
    speed: Speed = "standard"
    days: int = Field(7, ge=1, le=30000)
    name: str | None = Field(None, max_length=200)


class RestoreSpeedIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    speed: Speed


class RestoreCostOut(BaseModel):
    restore: str
    retrieval: str
    restored_copy: str
    total: str

    @classmethod
    def of(cls, cost: Cost) -> RestoreCostOut:
        return cls(restore=usd(cost.restore), retrieval=usd(cost.retrieval), restored_copy=usd(cost.restored_copy),
                   total=usd(cost.total))


class RestoreSpeedOption(BaseModel):
    speed: Speed
    available: bool
    expected_ready_s: float = Field(description="until the poll that sees a typical recall done")
    expected_ready_at: datetime
    cost_usd: RestoreCostOut | None = Field(description="None when a tier of the selection has no price sheet")
    notes: list[str]


class RestoreTierShare(BaseModel):
    tier: str
    offline: bool
    objects: int
    bytes: int


class RestorePreviewOut(BaseModel):
    bucket: str
    objects: int
    bytes: int
    already_restored: int = Field(description="readable now; a restore extends their expiry")
    not_archived: int = Field(description="selected but readable without a restore (left out)")
    missing_keys: list[str]
    days: int
    tiers: list[RestoreTierShare]
    speeds: list[RestoreSpeedOption]
    sample_keys: list[str]

    @classmethod
    def of(cls, p: service.Preview) -> RestorePreviewOut:
        return cls(bucket=p.bucket, objects=p.objects, bytes=p.bytes, already_restored=p.already_restored,
                   not_archived=p.not_archived, missing_keys=p.missing_keys, days=p.days,
                   tiers=[RestoreTierShare(tier=s.tier.name, offline=s.tier.offline, objects=s.objects, bytes=s.bytes)
                          for s in p.tiers],
                   speeds=[RestoreSpeedOption(speed=o.speed, available=o.available,  # type: ignore[arg-type]
                                          expected_ready_s=o.expected_ready_s, expected_ready_at=o.expected_ready_at,
                                          cost_usd=RestoreCostOut.of(o.cost) if o.cost is not None else None,
                                          notes=list(o.notes)) for o in p.speeds],
                   sample_keys=p.sample_keys)


class RestoreProgress(BaseModel):
    objects: int
    bytes: int
    pending: int
    ongoing: int
    ready: int
    ready_bytes: int
    failed: int
    expired: int


class RestoreBatchTierOut(BaseModel):
    tier: str
    objects: int
    bytes: int
    ready: int
    failed: int


class RestoreBatchOut(BaseModel):
    id: int
    name: str
    owner: str
    speed: Speed
    days: int
    state: BatchState
    source: dict[str, Any]
    progress: RestoreProgress
    tiers: list[RestoreBatchTierOut]
    cost_estimate_usd: str | None
    created_at: datetime
    submitted_at: datetime | None
    estimated_ready_at: datetime | None
    ready_at: datetime | None
    expires_at: datetime | None
    error: str | None
    updated_at: datetime

    @classmethod
    def of(cls, v: service.BatchView) -> RestoreBatchOut:
        return cls.model_validate(cls.data(v))

    @staticmethod
    def data(v: service.BatchView) -> dict[str, Any]:
        """The fields as plain data: a page of batches is validated in one pass, not model by model."""
        b = v.batch
        return {"id": b.id, "name": b.name, "owner": v.owner, "speed": b.speed, "days": b.days, "state": b.state,
                "source": b.source, "progress": v.totals, "tiers": v.tiers,
                "cost_estimate_usd": usd(b.cost_estimate) if b.cost_estimate is not None else None,
                "created_at": b.created_at, "submitted_at": b.submitted_at, "estimated_ready_at": b.estimated_ready_at,
                "ready_at": b.ready_at, "expires_at": b.expires_at, "error": b.error, "updated_at": b.updated_at}


class RestoreBatchListOut(BaseModel):
    items: list[RestoreBatchOut]
    next_before_id: int | None = Field(description="pass as before_id for the next page")


class RestoreTierCountOut(BaseModel):
    tier: str
    objects: int
    bytes: int
    pending: int
    ongoing: int
    ready: int
    failed: int
    expired: int


class RestoreSummaryOut(BaseModel):
    scope: Literal["mine", "everyone"]
    batches_by_state: dict[str, int]
    tiers: list[RestoreTierCountOut]
    oldest_in_progress: RestoreBatchOut | None
    single_restores_active: int = Field(description="RestoreObject calls through the gateway still running")
    single_restores_oldest: datetime | None


class RestoreQueueOut(BaseModel):
    """Everything the Restores page shows, in one response (polled for live updates)."""

    summary: RestoreSummaryOut
    batches: RestoreBatchListOut


class RestoreTimelinePoint(BaseModel):
    at: datetime
    ready: int


class RestoreItemOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    bucket: str
    key: str
    size: int
    tier_id: int
    speed: Speed
    state: ItemState
    requested_at: datetime | None
    next_poll_at: datetime | None
    poll_count: int
    attempts: int
    last_error: str | None
    expected_ready_at: datetime | None
    ready_at: datetime | None
    expires_at: datetime | None

    @classmethod
    def of(cls, item: RestoreItem) -> RestoreItemOut:
        out = cls.model_validate(item)
        if item.state not in ("pending", "ongoing"):
            out.next_poll_at = None  # a ready item's due time is its expiry, shown as expires_at
        return out


class RestoreBatchDetailOut(BaseModel):
    batch: RestoreBatchOut
    timeline: list[RestoreTimelinePoint]
    items: list[RestoreItemOut] = Field(description="the first page; more from /items")


class RestoreItemPageOut(BaseModel):
    items: list[RestoreItemOut]
    next_after_id: int | None


class RestoreRetryOut(BaseModel):
    retried: int
    batch: RestoreBatchOut


class RestoreScheduleOut(BaseModel):
    tier_id: int
    tier: str
    custom: bool = Field(description="False: the defaults for this kind of tier")
    speeds: dict[str, dict[str, Any]] = Field(description="per speed: phases [[from_s, every_s], ...], max_s")


class RestoreScheduleIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    speeds: dict[str, dict[str, Any]] | None = Field(
        description="per speed {phases: [[from_s, every_s], ...], max_s}; null restores the defaults")
