"""Price catalogs and scenarios: the validated inputs of the cost engine, and the API's shapes.

Units: storage in $/GiB-month (cloud bills count a "GB" as 2^30 bytes), transfer and retrieval
in $/GiB, requests per 1,000, durations in days or hours as the field names say.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, field_validator, model_validator

Speed = Literal["expedited", "standard", "bulk"]
ImportFormat = Literal["aws-price-list", "azure-retail-prices"]
Destination = Literal["internet", "research-network", "same-region", "inter-region", "other-cloud"]
SPEEDS: tuple[Speed, ...] = ("expedited", "standard", "bulk")
# every catalog prices these; "inter-region" is optional (else internet rates), "other-cloud" is internet egress
DESTINATIONS: tuple[Destination, ...] = ("internet", "research-network", "same-region")
OPTIONAL_DESTINATIONS: tuple[Destination, ...] = ("inter-region",)
COMPONENTS = ("storage", "requests", "retrieval", "restore", "restored_copy", "egress", "early_deletion",
              "monitoring", "fixed")

# Decimals in, plain JSON numbers out (pydantic would write strings)
_AsNumber = PlainSerializer(float, return_type=float, when_used="json")
NonNeg = Annotated[Decimal, Field(ge=0), _AsNumber]
Positive = Annotated[Decimal, Field(gt=0), _AsNumber]
Share = Annotated[Decimal, Field(ge=0, le=1), _AsNumber]
Fraction = Annotated[Decimal, Field(gt=0, le=1), _AsNumber]
CATALOG_ID = r"^[a-z0-9][a-z0-9-]{1,79}$"
CLASS_ID = r"^[A-Z0-9][A-Z0-9_]{0,47}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------- catalogs


class Band(_Strict):
    """One volume tier of a price: applies to the quantity up to `up_to_gib` (cumulative)."""

    up_to_gib: Positive | None = None
    price: NonNeg


def _check_bands(bands: list[Band], what: str) -> list[Band]:
    if not bands:
        raise ValueError(f"{what}: at least one price band")
    bounds = [b.up_to_gib for b in bands]
    if any(b is None for b in bounds[:-1]) or bounds[-1] is not None:
        raise ValueError(f"{what}: only the last band is unbounded (up_to_gib omitted), and it must be")
    limits = [b for b in bounds if b is not None]
    if any(lo >= hi for lo, hi in zip(limits, limits[1:], strict=False)):
        raise ValueError(f"{what}: band limits must increase")
    return bands


class Requests(_Strict):
    write_per_1k: NonNeg = Decimal(0)  # PUT, COPY, POST, LIST (AWS tier 1, GCP/Azure class A)
    read_per_1k: NonNeg = Decimal(0)  # GET, HEAD (tier 2, class B)


class Restore(_Strict):
    """One restore speed of an archive class: what it costs and how long it takes."""

    per_gib: NonNeg
    per_1k_requests: NonNeg
    typical_hours: NonNeg
    max_hours: NonNeg

    @model_validator(mode="after")
    def _typical_within_max(self) -> Restore:
        if self.typical_hours > self.max_hours:
            raise ValueError("typical_hours exceeds max_hours")
        return self


class Overhead(_Strict):
    """Bytes billed per object on top of its size (Glacier: 32 KiB at its rate, 8 KiB at Standard)."""

    bytes: int = Field(gt=0)
    billed_as: str | None = Field(None, description="another class of the catalog; omitted = this class")


class AccessTier(_Strict):
    """An automatic access tier (Intelligent-Tiering): objects idle this long are billed at its price."""

    name: str
    after_idle_days: int = Field(ge=0)
    storage: list[Band]

    @field_validator("storage")
    @classmethod
    def _bands(cls, v: list[Band]) -> list[Band]:
        return _check_bands(v, "access tier storage")


class OnPremCost(_Strict):
    """What one TiB-month of on-premises capacity costs, from hardware (amortised), power and staff."""

    hardware: NonNeg
    power: NonNeg
    staff: NonNeg
    other: NonNeg = Decimal(0)

    @property
    def per_tib_month(self) -> Decimal:
        return self.hardware + self.power + self.staff + self.other


class StorageClass(_Strict):
    id: str = Field(pattern=CLASS_ID)
    name: str
    storage: list[Band] = Field(default_factory=list, description="$/GiB-month by volume band")
    requests: Requests = Requests()
    retrieval_per_gib: NonNeg = Decimal(0)
    restore: dict[Speed, Restore] = Field(default_factory=dict, description="empty: readable without restore")
    restored_copy_class: str | None = Field(None, description="class whose rate bills the restored copy")
    min_storage_days: int = Field(0, ge=0)
    min_billable_bytes: int = Field(0, ge=0)
    object_overhead: list[Overhead] = Field(default_factory=list)
    monitoring_per_1k_objects: NonNeg = Decimal(0)
    monitoring_min_object_bytes: int = Field(0, ge=0, description="smaller objects are not monitored")
    transition_per_1k: NonNeg = Decimal(0)
    access_tiers: list[AccessTier] = Field(default_factory=list)
    cost_per_tib_month: OnPremCost | None = None
    estimated: list[str] = Field(default_factory=list, description="fields whose figures are estimates")
    notes: str = ""

    @model_validator(mode="before")
    @classmethod
    def _derive_onprem_storage(cls, data: Any) -> Any:
        # on-premises prices come from their cost components; a stale `storage` must not win
        if isinstance(data, dict) and data.get("cost_per_tib_month") is not None:
            parts = OnPremCost.model_validate(data["cost_per_tib_month"])
            data = {**data, "storage": [{"price": parts.per_tib_month / 1024}]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> StorageClass:
        _check_bands(self.storage, f"{self.id}.storage")
        if self.access_tiers:
            idle = [t.after_idle_days for t in self.access_tiers]
            if idle[0] != 0 or any(a >= b for a, b in zip(idle, idle[1:], strict=False)):
                raise ValueError(f"{self.id}: access tiers start at 0 idle days and increase")
        if self.restored_copy_class is not None and not self.restore:
            raise ValueError(f"{self.id}: restored_copy_class without any restore speed")
        known = set(StorageClass.model_fields)
        for path in self.estimated:
            if path.split(".")[0] not in known:
                raise ValueError(f"{self.id}: estimated names unknown field {path!r}")
        return self

    @property
    def needs_restore(self) -> bool:
        return bool(self.restore)


class Catalog(_Strict):
    """One provider/region/date price list."""

    id: str = Field(pattern=CATALOG_ID)
    provider: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    region: str
    currency: Literal["USD"] = "USD"
    valid_from: date
    source: list[str] = Field(min_length=1, description="where the figures come from")
    estimated: list[str] = Field(default_factory=list, description="catalog-level fields that are estimates")
    notes: str = ""
    egress: dict[Destination, list[Band]]
    classes: list[StorageClass] = Field(min_length=1)

    @field_validator("egress")
    @classmethod
    def _egress(cls, v: dict[Destination, list[Band]]) -> dict[Destination, list[Band]]:
        missing = [d for d in DESTINATIONS if d not in v]
        if missing:
            raise ValueError(f"egress prices missing for {', '.join(missing)}")
        for dest, bands in v.items():
            _check_bands(bands, f"egress.{dest}")
        return v

    @model_validator(mode="after")
    def _references(self) -> Catalog:
        ids = [c.id for c in self.classes]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate class ids: {', '.join(dupes)}")
        for c in self.classes:
            refs = [o.billed_as for o in c.object_overhead if o.billed_as] + (
                [c.restored_copy_class] if c.restored_copy_class else [])
            for ref in refs:
                if ref not in ids:
                    raise ValueError(f"{c.id} refers to unknown class {ref!r}")
        for path in self.estimated:
            head = path.split(".")[0]
            if head not in {"egress", "classes"} and head not in Catalog.model_fields:
                raise ValueError(f"estimated names unknown field {path!r}")
        return self

    def egress_bands(self, destination: Destination) -> list[Band]:
        """Transfer prices to a destination: a transfer to another cloud, or between regions where the
        catalog lists no such rate, leaves over the internet."""
        return self.egress.get(destination) or self.egress["internet"]

    def storage_class(self, class_id: str) -> StorageClass:
        for c in self.classes:
            if c.id == class_id:
                return c
        raise KeyError(class_id)


class CatalogSummary(BaseModel):
    id: str
    provider: str
    region: str
    currency: str
    valid_from: date
    source: list[str]
    classes: list[str]
    has_estimates: bool
    origin: Literal["shipped", "added"]


# ---------------------------------------------------------------------------- scenarios

_REF = re.compile(r"^(?:(?P<catalog>[a-z0-9][a-z0-9-]*):)?(?P<cls>[A-Z0-9][A-Z0-9_]*)(?:@(?P<speed>[a-z]+))?$")
_TIER_REF = re.compile(r"^tier:(?P<tier>[A-Za-z0-9][A-Za-z0-9._-]*)(?:@(?P<speed>[a-z]+))?$")
TIER_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class TierRef(_Strict):
    """A storage class to price: `CLASS`, `catalog-id:CLASS`, or `tier:NAME` (one of this installation's
    tiers, priced by its price_ref), optionally `@speed` of its restores."""

    storage_class: str | None = Field(None, pattern=CLASS_ID)
    catalog: str | None = Field(None, pattern=CATALOG_ID)
    tier: str | None = Field(None, pattern=TIER_NAME, description="an installation tier's name")
    restore_speed: Speed | None = None
    label: str = ""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        if isinstance(data, str):
            return parse_tier_ref(data)
        if isinstance(data, dict) and "class" in data and "storage_class" not in data:
            data = {**{k: v for k, v in data.items() if k != "class"}, "storage_class": data["class"]}
        return data

    @model_validator(mode="after")
    def _default_label(self) -> TierRef:
        if self.tier is None and self.storage_class is None:
            raise ValueError("a tier reference names a storage_class or an installation tier")
        if not self.label:
            if self.tier is not None:
                text = self.tier  # the tier's own name; the report adds the class behind it
            else:
                text = f"{self.catalog}:{self.storage_class}" if self.catalog else str(self.storage_class)
            object.__setattr__(self, "label", f"{text}@{self.restore_speed}" if self.restore_speed else text)
        return self


def parse_tier_ref(text: str) -> dict[str, Any]:
    mine = _TIER_REF.match(text.strip())
    m = mine or _REF.match(text.strip())
    if not m:
        raise ValueError(f"tier {text!r}: write CLASS, catalog-id:CLASS, tier:NAME (one of your tiers) "
                         "or any of them @bulk|standard|expedited")
    speed = m.group("speed")
    if speed is not None and speed not in SPEEDS:
        raise ValueError(f"tier {text!r}: restore speed must be one of {', '.join(SPEEDS)}")
    if mine:
        name = mine.group("tier")
        return {"tier": name, "restore_speed": speed, "label": f"{name}@{speed}" if speed else name}
    return {"storage_class": m.group("cls"), "catalog": m.group("catalog"), "restore_speed": speed,
            "label": text.strip()}


class SizeBin(_Strict):
    size_bytes: int = Field(gt=0)
    count: NonNeg


class FixedCost(_Strict):
    name: str = Field(min_length=1, max_length=80)
    monthly: NonNeg
    tiers: list[str] | None = Field(None, description="tier labels it applies to; omitted = every tier")


class EarlyDeletion(_Strict):
    """Data deleted before the class's minimum duration: a share of the data set per month, at an age."""

    share_per_month: Share
    age_days: NonNeg


class Measured(_Strict):
    """Per-access charges from a bill, in $ per full read of the data set.

    They replace every computed per-read charge of the tier; a charge the bill does not list
    counts as zero. Egress stays computed from the destination unless given here.
    """

    requests: NonNeg = Decimal(0)
    retrieval: NonNeg = Decimal(0)
    restore: NonNeg = Decimal(0)
    restored_copy: NonNeg = Decimal(0)
    egress: NonNeg | None = None


class FrequencyRange(_Strict):
    min: Positive = Decimal("0.01")
    max: Positive = Field(Decimal("100"), le=10**6)
    points: int = Field(200, ge=2, le=2000)

    @model_validator(mode="after")
    def _ordered(self) -> FrequencyRange:
        if self.min >= self.max:
            raise ValueError("frequency_range: min must be below max")
        return self


class Decay(_Strict):
    """Full reads per month of data of a given age: exponential with a floor, or a table by age month."""

    kind: Literal["exponential", "table"] = "exponential"
    initial_reads_per_month: NonNeg = Decimal(1)
    half_life_months: Positive = Decimal(3)
    floor: NonNeg = Decimal(0)
    table: list[NonNeg] = Field(default_factory=list, description="reads/month at age 0, 1, …; last repeats")

    @model_validator(mode="after")
    def _table(self) -> Decay:
        if self.kind == "table" and not self.table:
            raise ValueError("decay: a table decay needs at least one value")
        return self


class Rule(_Strict):
    after_days: int = Field(ge=0, le=36500)
    to: str


class Lifecycle(_Strict):
    """A tiering policy simulated month by month over a horizon, with new data arriving each month."""

    horizon_months: int = Field(36, ge=1, le=240)
    ingest_gib_per_month: NonNeg | list[NonNeg] = Decimal(0)
    initial_gib: NonNeg = Decimal(0)
    start: str | None = Field(None, description="tier where new data lands; default: the first tier")
    rules: list[Rule] = Field(default_factory=list)
    expire_after_days: int | None = Field(None, ge=1, le=36500)
    decay: Decay = Decay()
    search: bool = Field(True, description="search the transition days that minimise the total")
    search_step_days: int = Field(30, ge=1, le=365)

    @model_validator(mode="after")
    def _ordered(self) -> Lifecycle:
        days = [r.after_days for r in self.rules]
        if any(a >= b for a, b in zip(days, days[1:], strict=False)):
            raise ValueError("lifecycle rules: after_days must increase")
        if self.expire_after_days is not None and days and self.expire_after_days <= days[-1]:
            raise ValueError("lifecycle: expire_after_days must come after the last transition")
        return self


class HybridPart(_Strict):
    tier: str
    data_share: Share | None = None
    max_age_days: int | None = Field(None, ge=1)
    read_share: Share | None = Field(None, description="share of downloads served here; default = data share")


class HybridPlan(_Strict):
    """Data split across tiers by share or by age, each part serving a share of the downloads."""

    name: str = Field(min_length=1, max_length=80)
    by: Literal["share", "age"] = "share"
    retention_days: int | None = Field(None, ge=1, description="age span of the data (by age)")
    parts: list[HybridPart] = Field(min_length=1, max_length=10)

    @model_validator(mode="after")
    def _shares(self) -> HybridPlan:
        if self.by == "share":
            if any(p.data_share is None for p in self.parts):
                raise ValueError(f"hybrid {self.name!r}: every part needs data_share")
            total = sum((p.data_share or Decimal(0) for p in self.parts), Decimal(0))
            if abs(total - 1) > Decimal("0.0001"):
                raise ValueError(f"hybrid {self.name!r}: data shares add up to {total}, not 1")
        else:
            if self.retention_days is None:
                raise ValueError(f"hybrid {self.name!r}: by age needs retention_days")
            ages = [p.max_age_days for p in self.parts]
            if ages[-1] is not None or any(a is None for a in ages[:-1]):
                raise ValueError(f"hybrid {self.name!r}: every part but the last needs max_age_days")
            bounded = [a for a in ages if a is not None]
            if any(a >= b for a, b in zip(bounded, bounded[1:], strict=False)):
                raise ValueError(f"hybrid {self.name!r}: max_age_days must increase")
        reads = [p.read_share for p in self.parts]
        if any(r is not None for r in reads):
            if any(r is None for r in reads):
                raise ValueError(f"hybrid {self.name!r}: give read_share for every part or for none")
            total = sum((r or Decimal(0) for r in reads), Decimal(0))
            if abs(total - 1) > Decimal("0.0001"):
                raise ValueError(f"hybrid {self.name!r}: read shares add up to {total}, not 1")
        return self


class RawRequests(_Strict):
    """Request counts on top of the reads and writes of whole objects (a catalogue checker's HEADs, listings),
    per month, day or hour. PUT, COPY, POST and LIST are priced as writes, GET and HEAD as reads."""

    per: Literal["month", "day", "hour"] = "month"
    put: NonNeg = Field(Decimal(0), le=10**15)
    copy_: NonNeg = Field(Decimal(0), le=10**15, alias="copy")
    post: NonNeg = Field(Decimal(0), le=10**15)
    list_: NonNeg = Field(Decimal(0), le=10**15, alias="list")
    get: NonNeg = Field(Decimal(0), le=10**15)
    head: NonNeg = Field(Decimal(0), le=10**15)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True)

    @model_validator(mode="after")
    def _whole(self) -> RawRequests:
        for name in ("put", "copy_", "post", "list_", "get", "head"):
            value: Decimal = getattr(self, name)
            if value != value.to_integral_value():
                raise ValueError(f"requests.{name.rstrip('_')} must be a whole number, not {value}")
        return self

    @property
    def per_month(self) -> Decimal:
        return {"month": Decimal(1), "day": Decimal(365) / 12, "hour": Decimal(365) * 24 / 12}[self.per]

    @property
    def writes(self) -> Decimal:
        return (self.put + self.copy_ + self.post + self.list_) * self.per_month

    @property
    def reads(self) -> Decimal:
        return (self.get + self.head) * self.per_month


class OneOff(_Strict):
    """Costs paid once and shown apart from the monthly ones."""

    initial_upload: bool = Field(True, description="one PUT per object to put the data set in place")
    transition_in: bool = Field(False, description="a lifecycle transition fee per object moved into the class")
    delete_at_end: bool = Field(False, description="the data is deleted when the plan ends (early deletion fees)")


class Scenario(_Strict):
    """A what-if input: the same schema for `tierpilot plan FILE`, the API and saved scenarios."""

    catalog: str = Field(pattern=CATALOG_ID, description="catalog of tiers written without a catalog id")
    tiers: list[TierRef] = Field(min_length=1, max_length=40)
    volume_gib: NonNeg | None = Field(None, le=10**12, description="stored volume in GiB (2^30 bytes)")
    objects: NonNeg | None = Field(None, le=10**15, description="number of objects")
    mean_object_size_mib: Positive | None = None
    size_histogram: list[SizeBin] | None = Field(None, max_length=200)
    months: int = Field(12, ge=1, le=1200)
    reads_per_month: NonNeg = Field(Decimal(0), le=10**6, description="full reads of the data set per month")
    read_fraction: Fraction = Field(
        Decimal(1), description="share of the data set one read touches")
    get_part_size_mib: Positive | None = Field(None, description="ranged GET size; omitted = one GET per object")
    read_amplification: Annotated[Decimal, Field(ge=1, le=1000), _AsNumber] = Field(
        Decimal(1), description="bytes a client transfers per byte it needs (a FUSE client's read-ahead: > 1)")
    requests: RawRequests | None = Field(None, description="request counts besides whole-object reads and writes")
    one_off: OneOff = OneOff()
    plan_start: date | None = Field(None, description="first day of the plan (with plan_end)")
    plan_end: date | None = Field(None, description="last day of the plan: the total covers start to end")
    writes_per_month: NonNeg = Field(Decimal(0), le=10**6, description="full overwrites of the data set per month")
    early_deletion: EarlyDeletion | None = None
    egress: Destination = "internet"
    egress_share: Share = Decimal(1)
    restore_speed: Speed = "standard"
    restored_copy_days: NonNeg = Field(Decimal(1), le=3650, description="days a restored copy is kept")
    fixed_costs: list[FixedCost] = Field(default_factory=list, max_length=50)
    price_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    measured: dict[str, Measured] = Field(default_factory=dict)
    frequency_range: FrequencyRange = FrequencyRange()
    lifecycle: Lifecycle | None = None
    hybrid: list[HybridPlan] = Field(default_factory=list, max_length=10)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        labels = [t.label for t in self.tiers]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(f"tiers listed twice: {', '.join(dupes)}")
        given = [k for k in ("objects", "mean_object_size_mib", "size_histogram") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of objects, mean_object_size_mib or size_histogram")
        if self.size_histogram is None and self.volume_gib is None:
            raise ValueError("volume_gib is required (unless a size_histogram gives it)")
        if self.size_histogram is not None and not any(b.count > 0 for b in self.size_histogram):
            raise ValueError("size_histogram has no objects")
        if self.objects is not None and self.objects == 0 and self.volume_gib:
            raise ValueError("objects must be positive when volume_gib is")
        if self.objects is not None and self.objects != self.objects.to_integral_value():
            raise ValueError(f"objects must be a whole number, not {self.objects}")
        if self.size_histogram is not None and any(b.count != b.count.to_integral_value()
                                                   for b in self.size_histogram):
            raise ValueError("size_histogram counts must be whole numbers")
        if self.plan_end is not None or self.plan_start is not None:
            if self.plan_end is None or self.plan_start is None:
                raise ValueError("plan_start and plan_end go together")
            if self.plan_end <= self.plan_start:
                raise ValueError("plan_end must come after plan_start")
            if "months" in self.model_fields_set:
                raise ValueError("give months or plan_start/plan_end, not both")
            days = (self.plan_end - self.plan_start).days + 1
            if days > 1200 * 31:
                raise ValueError("plan_end: a plan lasts at most 100 years")
            object.__setattr__(self, "months", max(1, round(days * 12 / 365)))
        for key in list(self.price_overrides) + list(self.measured):
            if key not in labels:
                raise ValueError(f"override for {key!r}, which is not one of the tiers ({', '.join(labels)})")
        for item in self.fixed_costs:
            for label in item.tiers or []:
                if label not in labels:
                    raise ValueError(f"fixed cost {item.name!r} names unknown tier {label!r}")
        return self


# ---------------------------------------------------------------------------- persisted scenarios (API)


class ScenarioCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=120)
    body: Scenario


class ScenarioUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(None, min_length=1, max_length=120)
    body: Scenario | None = None


class ScenarioOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    owner_id: int
    name: str
    body: dict[str, Any]
    share_token: str | None
    created_at: datetime
    updated_at: datetime


class ShareOut(BaseModel):
    share_token: str
    path: str


# ---------------------------------------------------------------------------- reports (API answers)


class BreakdownOut(BaseModel):
    """USD per component; `total` is their sum."""

    storage: float
    requests: float
    retrieval: float
    restore: float
    restored_copy: float
    egress: float
    early_deletion: float
    monitoring: float
    fixed: float
    total: float


class RestoreHoursOut(BaseModel):
    typical: float
    max: float


class OneOffOut(BaseModel):
    """USD paid once: the initial upload's PUTs, transition fees into the class, early deletion at the plan's end."""

    initial_upload: float
    transitions: float
    early_deletion: float
    total: float


class TierReportOut(BaseModel):
    tier: str
    installation_tier: str | None = Field(None, description="the installation tier priced here, if any")
    catalog: str
    storage_class: str
    name: str
    restore_speed: Speed | None
    restore_hours: RestoreHoursOut | None
    min_storage_days: int
    min_billable_bytes: int
    billable_gib: float
    estimated: list[str]
    measured: bool
    monthly: BreakdownOut
    total: BreakdownOut
    annual: float
    one_off: OneOffOut
    tco: float = Field(description="monthly total over the plan's months plus the one-off costs")


class CatalogRefOut(BaseModel):
    id: str
    provider: str
    region: str
    currency: str
    valid_from: str
    source: list[str]
    has_estimates: bool


class BreakEvenOut(BaseModel):
    cheaper_below: str
    cheaper_above: str
    reads_per_month: float


class DominanceOut(BaseModel):
    cheaper: str
    costlier: str
    equal: bool


class CheapestOut(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: float = Field(alias="from")
    to: float | None
    tier: str


class SweepOut(BaseModel):
    reads_per_month: list[float]
    totals: dict[str, list[float]]


class HybridPartOut(BaseModel):
    tier: str
    data_share: float
    read_share: float
    monthly: BreakdownOut


class HybridOut(BaseModel):
    name: str
    parts: list[HybridPartOut]
    fixed_monthly: float
    monthly_total: float
    annual_total: float


class SimulationMonthOut(BaseModel):
    month: int
    stored_gib: dict[str, float]
    cost: BreakdownOut


class SimulationOut(BaseModel):
    rules: list[Rule]
    total: float
    months: list[SimulationMonthOut]


class LifecycleOut(BaseModel):
    policy: SimulationOut
    keep_hot: SimulationOut
    best: SimulationOut | None
    savings: float


class ReportOut(BaseModel):
    """What `tierpilot plan --json` prints and POST /api/pricing/evaluate returns."""

    scenario: dict[str, Any]
    units: dict[str, str]
    catalogs: list[CatalogRefOut]
    months: int
    reads_per_month: float
    tiers: list[TierReportOut]
    break_even: list[BreakEvenOut]
    dominance: list[DominanceOut]
    cheapest: list[CheapestOut]
    sweep: SweepOut
    hybrid: list[HybridOut]
    lifecycle: LifecycleOut | None
    notes: list[str]


class InstallationTierOut(BaseModel):
    """One of the installation's tiers as a planner candidate: the class it is priced at, or why it is not."""

    id: int
    name: str
    ref: str = Field(description="what to put in a scenario's tiers: tier:NAME")
    priceable: bool
    catalog: str | None
    storage_class: str | None
    class_name: str | None
    offline: bool
    driver: str = Field("posix", description="where its bytes live: posix (on premises), s3, azure, gcs")
    reason: str | None = Field(None, description="why the tier cannot be priced")
    warning: str | None = Field(None, description="what to know about its price: an on-premises tier priced as a "
                                                  "cloud class")


class FromMyDataOut(BaseModel):
    scenario: dict[str, Any]
    basis: dict[str, Any]
