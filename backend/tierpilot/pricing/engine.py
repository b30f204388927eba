"""The cost engine: pure functions from a scenario and price catalogs to monthly costs per tier.

Money is Decimal. Every tier's monthly cost is a continuous, piecewise-linear function of the
access frequency f (full reads of the data set per month): per-read charges are linear, and
the only kinks come from volume price bands (egress, restored copies, automatic access tiers)
and from restored copies that overlap. The engine finds those kinks analytically, so
break-even frequencies are solved in closed form on each linear piece and a frequency sweep
is two Decimal operations per point.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from decimal import Decimal
from functools import partial
from typing import Any

from pydantic import ValidationError

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import resolve_catalog_id
from tierpilot.pricing.schemas import (
    SPEEDS,
    Band,
    Catalog,
    Destination,
    EarlyDeletion,
    HybridPlan,
    Measured,
    OneOff,
    RawRequests,
    Restore,
    Scenario,
    Speed,
    StorageClass,
    TierRef,
)

ZERO = Decimal(0)
ONE = Decimal(1)
GIB = Decimal(2**30)
MIB = Decimal(2**20)
# Clouds bill storage per hour of the month; an average month has 365/12 days.
DAYS_PER_MONTH = Decimal(365) / Decimal(12)
THOUSAND = Decimal(1000)
NANO = Decimal(10**9)
MAX_FREQUENCY = Decimal(10**9)  # reads per month; scenarios allow up to 10^6


# ---------------------------------------------------------------------------- money pieces


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One month's cost of one tier, by component (USD)."""

    storage: Decimal = ZERO
    requests: Decimal = ZERO
    retrieval: Decimal = ZERO
    restore: Decimal = ZERO
    restored_copy: Decimal = ZERO
    egress: Decimal = ZERO
    early_deletion: Decimal = ZERO
    monitoring: Decimal = ZERO
    fixed: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        return (self.storage + self.requests + self.retrieval + self.restore + self.restored_copy + self.egress
                + self.early_deletion + self.monitoring + self.fixed)

    def __add__(self, other: Breakdown) -> Breakdown:
        return Breakdown(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def scaled(self, k: Decimal) -> Breakdown:
        return Breakdown(*(getattr(self, f.name) * k for f in fields(self)))

    def as_dict(self) -> dict[str, Decimal]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["total"] = self.total
        return out


def band_cost(bands: Sequence[Band], quantity: Decimal) -> Decimal:
    """Cost of `quantity` GiB (or GiB-months) under volume bands priced per GiB."""
    cost = ZERO
    lower = ZERO
    for band in bands:
        if quantity <= lower:
            break
        upper = band.up_to_gib
        amount = quantity - lower if upper is None or quantity < upper else upper - lower
        cost += amount * band.price
        if upper is None:
            break
        lower = upper
    return cost


def to_nano(amount: Decimal) -> int:
    """USD as whole nano-dollars (how metering stores money)."""
    return int((amount * NANO).to_integral_value())


def from_nano(nano: int) -> Decimal:
    """Nano-dollars back to USD."""
    return Decimal(nano) / NANO


def own_overhead_bytes(cls: StorageClass) -> int:
    """Bytes per object the class bills at its own rate (other overhead is billed at another class's rate)."""
    return sum((o.bytes for o in cls.object_overhead if o.billed_as is None), 0)


# ---------------------------------------------------------------------------- what is stored


@dataclass(frozen=True, slots=True)
class Objects:
    """The stored objects as a size distribution: (size in bytes, count) bins; counts may be fractional."""

    bins: tuple[tuple[Decimal, Decimal], ...]

    @property
    def count(self) -> Decimal:
        return sum((c for _, c in self.bins), ZERO)

    @property
    def volume_gib(self) -> Decimal:
        return sum((s * c for s, c in self.bins), ZERO) / GIB

    def scaled(self, share: Decimal) -> Objects:
        return Objects(tuple((s, c * share) for s, c in self.bins))

    def billable_gib(self, min_bytes: int, overhead_bytes: int) -> Decimal:
        floor = Decimal(min_bytes)
        return sum((max(s, floor) * c for s, c in self.bins), ZERO) / GIB + self.count * overhead_bytes / GIB

    def split_at(self, min_bytes: int) -> tuple[Objects, Objects]:
        """(objects smaller than min_bytes, the rest)."""
        floor = Decimal(min_bytes)
        return (Objects(tuple(b for b in self.bins if b[0] < floor)),
                Objects(tuple(b for b in self.bins if b[0] >= floor)))

    def requests_per_read(self, part_bytes: Decimal | None) -> Decimal:
        if part_bytes is None:
            return self.count
        return sum((Decimal(max(1, math.ceil(s / part_bytes))) * c for s, c in self.bins), ZERO)


def scenario_objects(s: Scenario) -> Objects:
    """The scenario's objects: one bin of the mean size, or its histogram scaled to its volume."""
    if s.size_histogram is not None:
        hist = Objects(tuple((Decimal(b.size_bytes), b.count) for b in s.size_histogram if b.count > 0))
        if s.volume_gib is None:
            return hist
        return hist.scaled(s.volume_gib / hist.volume_gib)
    volume = s.volume_gib or ZERO
    if volume == 0:
        # empty objects still bill their minimum size and per-object overhead
        return Objects(((ZERO, s.objects),)) if s.objects else Objects(())
    if s.objects is not None:
        count = s.objects
    else:
        assert s.mean_object_size_mib is not None
        count = volume * 1024 / s.mean_object_size_mib
    return Objects(((volume * GIB / count, count),))


@dataclass(frozen=True, slots=True)
class Usage:
    """How the data is used each month, apart from the read frequency (the sweep variable)."""

    objects: Objects
    read_fraction: Decimal = ONE
    get_part_bytes: Decimal | None = None
    writes_per_month: Decimal = ZERO
    early_deletion: EarlyDeletion | None = None
    egress: Destination = "internet"
    egress_share: Decimal = ONE
    restored_copy_days: Decimal = ONE
    read_amplification: Decimal = ONE
    raw_requests: RawRequests | None = None


def scenario_usage(s: Scenario) -> Usage:
    return Usage(objects=scenario_objects(s), read_fraction=s.read_fraction,
                 get_part_bytes=s.get_part_size_mib * MIB if s.get_part_size_mib else None,
                 writes_per_month=s.writes_per_month, early_deletion=s.early_deletion, egress=s.egress,
                 egress_share=s.egress_share, restored_copy_days=s.restored_copy_days,
                 read_amplification=s.read_amplification, raw_requests=s.requests)


def plan_days(s: Scenario) -> Decimal:
    """Days the plan lasts: its dates, else its months."""
    if s.plan_start is not None and s.plan_end is not None:
        return Decimal((s.plan_end - s.plan_start).days + 1)
    return s.months * DAYS_PER_MONTH


@dataclass(frozen=True, slots=True)
class OneOffCost:
    """USD paid once, apart from the monthly costs."""

    initial_upload: Decimal = ZERO
    transitions: Decimal = ZERO
    early_deletion: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        return self.initial_upload + self.transitions + self.early_deletion


# ---------------------------------------------------------------------------- what it is priced at


@dataclass(frozen=True, slots=True)
class Pricing:
    """A tier resolved against its catalog: class (overrides applied), restore speed, bill overrides."""

    label: str
    catalog: Catalog
    cls: StorageClass
    speed: Speed | None
    measured: Measured | None = None
    fixed_monthly: Decimal = ZERO

    @property
    def restore(self) -> Restore | None:
        return self.cls.restore[self.speed] if self.speed is not None else None


def _deep_merge(base: dict[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def apply_overrides(catalog: Catalog, class_id: str, patch: Mapping[str, Any]) -> StorageClass:
    """The class with some of its prices replaced (e.g. measured from a bill, or a site's own costs)."""
    original = catalog.storage_class(class_id).model_dump(mode="python")
    if "cost_per_tib_month" in patch and "storage" not in patch:
        original.pop("storage", None)
    if "id" in patch and patch["id"] != class_id:
        raise Invalid(f"price_overrides cannot rename class {class_id}")
    merged = _deep_merge(original, patch)
    try:
        classes = [merged if c.id == class_id else c.model_dump(mode="python") for c in catalog.classes]
        patched = Catalog.model_validate({**catalog.model_dump(mode="python"), "classes": classes})
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:3])
        raise Invalid(f"price_overrides for {class_id}: {msg}") from exc
    return patched.storage_class(class_id)


def pick_speed(cls: StorageClass, wanted: Speed) -> Speed | None:
    """The wanted restore speed, or the nearest one the class offers (None: no restore needed)."""
    if not cls.restore:
        return None
    if wanted in cls.restore:
        return wanted
    order = sorted(SPEEDS, key=lambda s: abs(SPEEDS.index(s) - SPEEDS.index(wanted)))
    return next(s for s in order if s in cls.restore)


def resolve_tier(ref: TierRef, s: Scenario, catalogs: Mapping[str, Catalog]) -> Pricing:
    if ref.storage_class is None:
        # installation tiers are looked up in the database by pricing.service before the engine runs
        raise Invalid(f"tier {ref.label}: an installation tier (tier:{ref.tier}) is priced only when it is "
                      "one of the scenario's tiers and evaluated through the API")
    catalog = catalogs[resolve_catalog_id(ref.catalog or s.catalog, catalogs)]
    try:
        cls = catalog.storage_class(ref.storage_class)
    except KeyError:
        known = ", ".join(c.id for c in catalog.classes)
        raise Invalid(f"tier {ref.label}: catalog {catalog.id} has no class {ref.storage_class} "
                      f"(it has {known})") from None
    if ref.label in s.price_overrides:
        cls = apply_overrides(catalog, cls.id, s.price_overrides[ref.label])
    fixed = sum((f.monthly for f in s.fixed_costs if f.tiers is None or ref.label in f.tiers), ZERO)
    speed = pick_speed(cls, ref.restore_speed or s.restore_speed)
    return Pricing(label=ref.label, catalog=catalog, cls=cls, speed=speed, measured=s.measured.get(ref.label),
                   fixed_monthly=fixed)


def scenario_ref(text: str, s: Scenario) -> TierRef:
    """A tier a lifecycle rule or hybrid part names: one of the scenario's tiers (by label or by the
    same reference, `tier:NAME` included), else a catalog class."""
    by_label = {t.label: t for t in s.tiers}
    if text in by_label:
        return by_label[text]
    ref = TierRef.model_validate(text)
    return by_label.get(ref.label, ref)


def resolve_tiers(s: Scenario, catalogs: Mapping[str, Catalog]) -> list[Pricing]:
    return [resolve_tier(t, s, catalogs) for t in s.tiers]


# ---------------------------------------------------------------------------- one tier as a function of f


def _crossings(fn: Callable[[Decimal], Decimal], breaks: Sequence[Decimal],
               targets: Iterable[Decimal]) -> list[Decimal]:
    """Frequencies f > 0 where the continuous piecewise-linear fn (kinks at `breaks`) equals a target."""
    points = sorted({ZERO, *breaks})
    out: list[Decimal] = []
    wanted = list(targets)
    if not wanted:
        return out
    for i, lo in enumerate(points):
        hi = points[i + 1] if i + 1 < len(points) else lo + ONE
        y0, y1 = fn(lo), fn(hi)
        slope = (y1 - y0) / (hi - lo)
        if slope == 0:
            continue
        for t in wanted:
            x = lo + (t - y0) / slope
            if x > 0 and x >= lo and (x < hi or i + 1 == len(points)):
                out.append(x)
    return out


@dataclass(frozen=True, slots=True)
class Curve:
    """Total monthly cost of one tier against f: linear between breakpoints, `breaks[0] == 0`."""

    label: str
    breaks: tuple[Decimal, ...]
    intercepts: tuple[Decimal, ...]
    slopes: tuple[Decimal, ...]

    def at(self, f: Decimal) -> Decimal:
        i = bisect_right(self.breaks, f) - 1
        return self.intercepts[i] + self.slopes[i] * f

    def values(self, frequencies: Sequence[Decimal]) -> list[Decimal]:
        """Totals at ascending frequencies: one walk along the pieces (the sweep's inner loop)."""
        breaks, intercepts, slopes = self.breaks, self.intercepts, self.slopes
        last = len(breaks) - 1
        i = 0
        out = []
        for f in frequencies:
            while i < last and breaks[i + 1] <= f:
                i += 1
            out.append(intercepts[i] + slopes[i] * f)
        return out


class TierModel:
    """One tier's monthly cost for one usage, as a function of the read frequency f."""

    def __init__(self, pricing: Pricing, usage: Usage) -> None:
        self.pricing = pricing
        self.usage = usage
        cls = pricing.cls
        objects = usage.objects
        p = usage.read_fraction
        self.read_gib = objects.volume_gib * p
        # a client that reads more bytes than it needs (read-ahead) pays transfer and retrieval on all of them
        self.transfer_gib = self.read_gib * usage.read_amplification
        self.egress_gib_per_read = self.transfer_gib * usage.egress_share
        self.egress_bands = pricing.catalog.egress_bands(usage.egress)

        own_overhead = own_overhead_bytes(cls)
        self.billable_gib = objects.billable_gib(cls.min_billable_bytes, own_overhead)
        other = ZERO
        for o in cls.object_overhead:
            if o.billed_as is not None:
                other += band_cost(pricing.catalog.storage_class(o.billed_as).storage, objects.count * o.bytes / GIB)
        small, monitored = objects.split_at(cls.monitoring_min_object_bytes)
        if cls.access_tiers:
            self.small_gib = small.billable_gib(cls.min_billable_bytes, own_overhead)
            self.monitored_gib = self.billable_gib - self.small_gib
            base_storage = ZERO
        else:
            self.small_gib = self.monitored_gib = ZERO
            base_storage = band_cost(cls.storage, self.billable_gib)
        self.base_storage = base_storage + other
        # a month of the class's storage at the current volume: what early deletions are charged against
        self.month_of_storage = band_cost(cls.storage, self.billable_gib)

        count = objects.count
        self.writes = usage.writes_per_month * count * cls.requests.write_per_1k / THOUSAND
        raw = usage.raw_requests
        if raw is not None:
            self.writes += (raw.writes * cls.requests.write_per_1k + raw.reads * cls.requests.read_per_1k) / THOUSAND
        self.monitoring = monitored.count * cls.monitoring_per_1k_objects / THOUSAND
        self.early_deletion = self._early_deletion(usage)

        restore = pricing.restore
        gets = objects.requests_per_read(usage.get_part_bytes) * p
        self.requests_per_read = gets * cls.requests.read_per_1k / THOUSAND
        self.retrieval_per_read = self.transfer_gib * cls.retrieval_per_gib
        self.restore_per_read = (self.read_gib * restore.per_gib + count * p * restore.per_1k_requests / THOUSAND
                                 if restore is not None else ZERO)
        self.copy_bands: Sequence[Band] | None = None
        if restore is not None and cls.restored_copy_class is not None and usage.restored_copy_days > 0:
            self.copy_bands = pricing.catalog.storage_class(cls.restored_copy_class).storage
        m = pricing.measured
        if m is not None:
            self.requests_per_read, self.retrieval_per_read, self.restore_per_read = m.requests, m.retrieval, m.restore
            self.copy_bands = None
        self._curve: Curve | None = None

    def one_off(self, wanted: OneOff, days: Decimal) -> OneOffCost:
        """What is paid once: the initial upload, moving the data into the class, deleting it at the plan's end."""
        cls = self.pricing.cls
        count = self.usage.objects.count
        upload = count * cls.requests.write_per_1k / THOUSAND if wanted.initial_upload else ZERO
        transitions = count * cls.transition_per_1k / THOUSAND if wanted.transition_in else ZERO
        early = ZERO
        if wanted.delete_at_end and cls.min_storage_days > days:
            early = self.month_of_storage / DAYS_PER_MONTH * (Decimal(cls.min_storage_days) - days)
        return OneOffCost(upload, transitions, early)

    def _early_deletion(self, usage: Usage) -> Decimal:
        """Storage still owed for the days short of the minimum duration, pro rata per day."""
        min_days = Decimal(self.pricing.cls.min_storage_days)
        if min_days == 0:
            return ZERO
        per_day = self.month_of_storage / DAYS_PER_MONTH
        owed = ZERO
        e = usage.early_deletion
        if e is not None and e.share_per_month > 0:
            owed += e.share_per_month * per_day * max(ZERO, min_days - e.age_days)
        w = usage.writes_per_month
        if w > 0:
            # each overwrite deletes the previous version at the age of the overwrite interval
            owed += w * per_day * max(ZERO, min_days - DAYS_PER_MONTH / w)
        return owed

    # -- the parts that are not linear in f

    def _rate(self, f: Decimal) -> Decimal:
        return f * self.usage.read_fraction

    def _access_tier_volumes(self, f: Decimal) -> list[Decimal]:
        """GiB in each automatic access tier when every object is read at rate f·p per month."""
        tiers = self.pricing.cls.access_tiers
        rate = self._rate(f)
        vols: list[Decimal] = []
        for i, tier in enumerate(tiers):
            lo = Decimal(tier.after_idle_days)
            hi = Decimal(tiers[i + 1].after_idle_days) if i + 1 < len(tiers) else None
            if rate == 0:
                frac = ONE if hi is None else ZERO
            else:
                # objects re-read every `interval` days spend each cycle's idle days lo..hi in this tier
                interval = DAYS_PER_MONTH / rate
                span = interval - lo if hi is None else min(interval, hi) - lo
                frac = max(ZERO, span) / interval
            vols.append(frac * self.monitored_gib + (self.small_gib if i == 0 else ZERO))
        return vols

    def _access_tier_volume(self, i: int, f: Decimal) -> Decimal:
        return self._access_tier_volumes(f)[i]

    def _copy_gib_months(self, f: Decimal) -> Decimal:
        # a copy lives restored_copy_days after each read; copies of back-to-back reads overlap
        return self.read_gib * min(f * self.usage.restored_copy_days / DAYS_PER_MONTH, ONE)

    def breaks(self) -> list[Decimal]:
        """Frequencies where the monthly total may change slope."""
        out: list[Decimal] = []
        m = self.pricing.measured
        if self.egress_gib_per_read > 0 and (m is None or m.egress is None):
            out += [b.up_to_gib / self.egress_gib_per_read for b in self.egress_bands if b.up_to_gib is not None]
        if self.copy_bands is not None and self.read_gib > 0:
            knee = DAYS_PER_MONTH / self.usage.restored_copy_days
            out.append(knee)
            limits = [b.up_to_gib for b in self.copy_bands if b.up_to_gib is not None]
            out += _crossings(self._copy_gib_months, [knee], limits)
        tiers = self.pricing.cls.access_tiers
        if tiers and self.monitored_gib > 0:
            knees = [DAYS_PER_MONTH / (Decimal(t.after_idle_days) * self.usage.read_fraction)
                     for t in tiers if t.after_idle_days > 0]
            out += knees
            for i, tier in enumerate(tiers):
                limits = [b.up_to_gib for b in tier.storage if b.up_to_gib is not None]
                out += _crossings(partial(self._access_tier_volume, i), knees, limits)
        # kinks beyond any meaningful frequency come from rounding in flat pieces: drop them
        return sorted({b for b in out if 0 < b <= MAX_FREQUENCY})

    def at(self, f: Decimal) -> Breakdown:
        """The monthly breakdown at f full reads of the data set per month."""
        cls = self.pricing.cls
        storage = self.base_storage
        if cls.access_tiers:
            storage += sum((band_cost(t.storage, v) for t, v in zip(cls.access_tiers, self._access_tier_volumes(f),
                                                                       strict=True)), ZERO)
        m = self.pricing.measured
        if m is not None:
            copy = m.restored_copy * f
        elif self.copy_bands is not None:
            copy = band_cost(self.copy_bands, self._copy_gib_months(f))
        else:
            copy = ZERO
        if m is not None and m.egress is not None:
            egress = m.egress * f
        else:
            egress = band_cost(self.egress_bands, f * self.egress_gib_per_read)
        return Breakdown(storage=storage, requests=self.writes + f * self.requests_per_read,
                         retrieval=f * self.retrieval_per_read, restore=f * self.restore_per_read,
                         restored_copy=copy, egress=egress, early_deletion=self.early_deletion,
                         monitoring=self.monitoring, fixed=self.pricing.fixed_monthly)

    def total(self, f: Decimal) -> Decimal:
        return self.at(f).total

    def curve(self) -> Curve:
        if self._curve is None:
            points = [ZERO, *self.breaks()]
            intercepts, slopes = [], []
            for i, lo in enumerate(points):
                hi = points[i + 1] if i + 1 < len(points) else lo + ONE
                y0, y1 = self.total(lo), self.total(hi)
                slope = (y1 - y0) / (hi - lo)
                slopes.append(slope)
                intercepts.append(y0 - slope * lo)
            self._curve = Curve(self.pricing.label, tuple(points), tuple(intercepts), tuple(slopes))
        return self._curve


# ---------------------------------------------------------------------------- comparing tiers


@dataclass(frozen=True, slots=True)
class BreakEven:
    cheaper_below: str
    cheaper_above: str
    reads_per_month: Decimal


@dataclass(frozen=True, slots=True)
class Dominance:
    """`cheaper` costs no more than `costlier` at every frequency (equal: the same everywhere)."""

    cheaper: str
    costlier: str
    equal: bool = False


@dataclass(frozen=True, slots=True)
class FrequencyBand:
    """The cheapest tier between two frequencies (`to` None: and above)."""

    start: Decimal
    to: Decimal | None
    tier: str


def _sign(x: Decimal) -> int:
    return (x > 0) - (x < 0)


def compare(a: Curve, b: Curve) -> list[BreakEven] | Dominance:
    """Where a and b cross (closed form on each linear piece), or which one is never dearer."""
    points = sorted(set(a.breaks) | set(b.breaks))
    values = [x - y for x, y in zip(a.values(points), b.values(points), strict=True)]
    tail = a.slopes[-1] - b.slopes[-1]
    tail_sign = _sign(tail) or _sign(values[-1])
    crossings: list[BreakEven] = []
    prev: tuple[Decimal, Decimal] | None = None  # last point with a nonzero difference
    zero_at: Decimal | None = None  # first zero after it
    for x, d in zip(points, values, strict=True):
        if d == 0:
            if prev is not None and zero_at is None:
                zero_at = x
            continue
        if prev is not None and _sign(d) != _sign(prev[1]):
            root = zero_at if zero_at is not None else prev[0] + prev[1] * (x - prev[0]) / (prev[1] - d)
            crossings.append(_crossing(a, b, prev[1], root))
        prev, zero_at = (x, d), None
    if prev is not None and tail_sign != 0 and tail_sign != _sign(prev[1]):
        root = zero_at if zero_at is not None else prev[0] - prev[1] / tail
        if root <= MAX_FREQUENCY:
            crossings.append(_crossing(a, b, prev[1], root))
        else:
            tail_sign = 0  # a crossing beyond any meaningful frequency is rounding noise on parallel lines
    if crossings:
        return crossings
    signs = {_sign(v) for v in values} | {tail_sign}
    if signs <= {0}:
        return Dominance(a.label, b.label, equal=True)
    return Dominance(a.label, b.label) if max(signs) <= 0 else Dominance(b.label, a.label)


def _crossing(a: Curve, b: Curve, diff_before: Decimal, root: Decimal) -> BreakEven:
    below, above = (a.label, b.label) if diff_before < 0 else (b.label, a.label)
    return BreakEven(cheaper_below=below, cheaper_above=above, reads_per_month=root)


def compare_all(curves: Sequence[Curve]) -> tuple[list[BreakEven], list[Dominance]]:
    """Break-even frequencies between every pair of tiers, and the pairs where one always wins."""
    crossings: list[BreakEven] = []
    dominance: list[Dominance] = []
    for i, a in enumerate(curves):
        for b in curves[i + 1:]:
            result = compare(a, b)
            if isinstance(result, Dominance):
                dominance.append(result)
            else:
                crossings.extend(result)
    return crossings, dominance


def cheapest_bands(curves: Sequence[Curve], crossings: Iterable[BreakEven]) -> list[FrequencyBand]:
    """The cheapest tier in each frequency band from 0 upwards (ties go to the tier listed first)."""
    points = sorted({ZERO, *(x for c in curves for x in c.breaks), *(c.reads_per_month for c in crossings)})
    probes = [(lo + hi) / 2 for lo, hi in zip(points, points[1:], strict=False)] + [points[-1] + ONE]
    table = [c.values(probes) for c in curves]
    bands: list[FrequencyBand] = []
    for i, lo in enumerate(points):
        hi = points[i + 1] if i + 1 < len(points) else None
        best = curves[min(range(len(curves)), key=lambda k: table[k][i])].label
        if bands and bands[-1].tier == best:
            bands[-1] = replace(bands[-1], to=hi)
        else:
            bands.append(FrequencyBand(lo, hi, best))
    return bands


def log_frequencies(lo: Decimal, hi: Decimal, points: int) -> list[Decimal]:
    """`points` frequencies spaced evenly on a log axis from lo to hi (6 significant digits)."""
    a, b = math.log(float(lo)), math.log(float(hi))
    return [Decimal(f"{math.exp(a + (b - a) * i / (points - 1)):.6g}") for i in range(points)]


def sweep(curves: Sequence[Curve], frequencies: Sequence[Decimal]) -> dict[str, list[Decimal]]:
    """Monthly total of every tier at every frequency."""
    ordered = sorted(frequencies)
    if list(frequencies) != ordered:
        raise ValueError("sweep frequencies must ascend")
    return {c.label: c.values(ordered) for c in curves}


# ---------------------------------------------------------------------------- hybrid plans


@dataclass(frozen=True, slots=True)
class HybridPartResult:
    tier: str
    data_share: Decimal
    read_share: Decimal
    monthly: Breakdown


@dataclass(frozen=True, slots=True)
class HybridResult:
    name: str
    parts: list[HybridPartResult]
    fixed_monthly: Decimal
    monthly_total: Decimal
    annual_total: Decimal


def hybrid_shares(plan: HybridPlan) -> list[tuple[Decimal, Decimal]]:
    """(data share, read share) per part; by age, data of uniformly spread ages up to retention_days."""
    if plan.by == "share":
        data = [p.data_share or ZERO for p in plan.parts]
    else:
        assert plan.retention_days is not None
        span = Decimal(plan.retention_days)
        data, lower = [], ZERO
        for part in plan.parts:
            upper = min(Decimal(part.max_age_days), span) if part.max_age_days is not None else span
            data.append(max(ZERO, upper - lower) / span)
            lower = max(lower, upper)
    reads = [p.read_share if p.read_share is not None else d for p, d in zip(plan.parts, data, strict=True)]
    return list(zip(data, reads, strict=True))


def evaluate_hybrid(plan: HybridPlan, s: Scenario, catalogs: Mapping[str, Catalog], usage: Usage) -> HybridResult:
    """Annual cost of a split of the data across tiers, each part serving its share of the reads."""
    parts: list[HybridPartResult] = []
    refs = [scenario_ref(p.tier, s) for p in plan.parts]
    for part, ref, (data_share, read_share) in zip(plan.parts, refs, hybrid_shares(plan), strict=True):
        if data_share == 0 and read_share > 0:
            raise Invalid(f"hybrid {plan.name!r}: part {part.tier} serves reads but holds no data")
        pricing = replace(resolve_tier(ref, s, catalogs), fixed_monthly=ZERO)
        part_usage = replace(usage, objects=usage.objects.scaled(data_share))
        # the part's own reads: its share of the downloads, as full reads of the part's data
        f = s.reads_per_month * read_share / data_share if data_share > 0 else ZERO
        monthly = TierModel(pricing, part_usage).at(f) if data_share > 0 else Breakdown()
        parts.append(HybridPartResult(part.tier, data_share, read_share, monthly))
    labels = {ref.label for ref in refs}
    fixed = sum((c.monthly for c in s.fixed_costs if c.tiers is None or labels & set(c.tiers)), ZERO)
    monthly_total = sum((p.monthly.total for p in parts), ZERO) + fixed
    return HybridResult(plan.name, parts, fixed, monthly_total, monthly_total * 12)


# ---------------------------------------------------------------------------- one call for a scenario


@dataclass(frozen=True)
class TierResult:
    pricing: Pricing
    monthly: Breakdown
    model: TierModel


@dataclass(frozen=True)
class Evaluation:
    scenario: Scenario
    tiers: list[TierResult]
    one_off: dict[str, OneOffCost]
    curves: list[Curve]
    break_even: list[BreakEven]
    dominance: list[Dominance]
    cheapest: list[FrequencyBand]
    frequencies: list[Decimal]
    sweep: dict[str, list[Decimal]]
    hybrid: list[HybridResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def evaluate(s: Scenario, catalogs: Mapping[str, Catalog]) -> Evaluation:
    """Every tier's monthly breakdown at the scenario's frequency, break-evens, bands, sweep, hybrids."""
    usage = scenario_usage(s)
    tiers: list[TierResult] = []
    notes: list[str] = []
    one_off: dict[str, OneOffCost] = {}
    days = plan_days(s)
    for pricing in resolve_tiers(s, catalogs):
        model = TierModel(pricing, usage)
        tiers.append(TierResult(pricing, model.at(s.reads_per_month), model))
        one_off[pricing.label] = model.one_off(s.one_off, days)
        if s.egress == "inter-region" and "inter-region" not in pricing.catalog.egress:
            notes.append(f"{pricing.label}: {pricing.catalog.id} lists no inter-region rate; priced at internet egress")
        given = next(t.restore_speed for t in s.tiers if t.label == pricing.label)
        asked = given or s.restore_speed
        if given is not None and pricing.speed is None:
            notes.append(f"{pricing.label}: {pricing.cls.id} needs no restore; @{given} has no effect")
        if pricing.speed is not None and pricing.speed != asked:
            notes.append(f"{pricing.label}: no {asked} restores in {pricing.catalog.id}; priced at {pricing.speed}")
    curves = [t.model.curve() for t in tiers]
    crossings, dominance = compare_all(curves)
    r = s.frequency_range
    frequencies = log_frequencies(r.min, r.max, r.points)
    hybrids = [evaluate_hybrid(plan, s, catalogs, usage) for plan in s.hybrid]
    return Evaluation(scenario=s, tiers=tiers, one_off=one_off, curves=curves, break_even=crossings,
                      dominance=dominance, cheapest=cheapest_bands(curves, crossings), frequencies=frequencies,
                      sweep=sweep(curves, frequencies), hybrid=hybrids, notes=notes)
