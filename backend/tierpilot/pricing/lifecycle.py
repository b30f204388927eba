"""Lifecycle costs: the planner's simulation of policies, and what real tiers' lifecycle moves cost.

Simulation: data arriving every month, moving down the tiers with age, month by month. Each month's
new data is a cohort entering at the start of the month. A policy is a list of stages (tier from day N
of an object's age) and an optional expiry. Within a month a cohort's volume is split between stages
by the days it spends in each, reads follow an access-decay curve by age, transitions pay the target's
transition fee, and leaving a stage before its minimum duration pays the remaining days (as the
providers bill it).

Tier prices: the storage price of each of the installation's tiers from the catalog class its
``price_ref`` names, for the lifecycle preview and the executor's early-deletion fees. Callers hand in
the references as values (``PriceRef``); a tier naming no known catalog or class is unpriced, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import find_catalog
from tierpilot.pricing.engine import (
    DAYS_PER_MONTH,
    GIB,
    ONE,
    THOUSAND,
    ZERO,
    Breakdown,
    Pricing,
    TierModel,
    Usage,
    band_cost,
    own_overhead_bytes,
    resolve_tier,
    scenario_ref,
)
from tierpilot.pricing.schemas import Catalog, Decay, Lifecycle, Rule, Scenario, StorageClass

HALF = Decimal("0.5")


def decay_rates(decay: Decay, months: int) -> list[Decimal]:
    """Full reads per month of data aged 0, 1, … months."""
    if decay.kind == "table":
        return [decay.table[min(a, len(decay.table) - 1)] for a in range(months)]
    return [max(decay.floor, decay.initial_reads_per_month * HALF ** (Decimal(a) / decay.half_life_months))
            for a in range(months)]


def fit_decay(samples: Sequence[tuple[Decimal, Decimal]]) -> Decay:
    """An exponential decay fitted (least squares on the log) to (age in months, reads per month) samples."""
    points = [(float(a), math.log(float(r))) for a, r in samples if r > 0]
    if not points:
        return Decay(kind="exponential", initial_reads_per_month=ZERO, half_life_months=ONE)
    if len(points) == 1 or len({a for a, _ in points}) == 1:
        mean = sum(y for _, y in points) / len(points)
        return Decay(kind="exponential", initial_reads_per_month=Decimal(f"{math.exp(mean):.6g}"),
                     half_life_months=Decimal(1200))
    n = len(points)
    mx = sum(a for a, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((a - mx) ** 2 for a, _ in points)
    slope = sum((a - mx) * (y - my) for a, y in points) / sxx
    intercept = my - slope * mx
    # a flat or rising curve has no half-life: cap it at a century
    half_life = min(1200.0, math.log(2) / -slope) if slope < 0 else 1200.0
    return Decay(kind="exponential", initial_reads_per_month=Decimal(f"{math.exp(intercept):.6g}"),
                 half_life_months=Decimal(f"{half_life:.6g}"))


@dataclass(frozen=True, slots=True)
class Stage:
    start_day: Decimal
    pricing: Pricing


@dataclass(frozen=True, slots=True)
class Month:
    month: int
    stored_gib: dict[str, Decimal]
    cost: Breakdown


@dataclass(frozen=True, slots=True)
class Simulation:
    rules: list[Rule]
    months: list[Month]

    @property
    def total(self) -> Decimal:
        return sum((m.cost.total for m in self.months), ZERO)


@dataclass(frozen=True, slots=True)
class LifecycleResult:
    policy: Simulation
    keep_hot: Simulation
    best: Simulation | None

    @property
    def savings(self) -> Decimal:
        return self.keep_hot.total - self.policy.total


class Simulator:
    """Runs one lifecycle spec for any transition days (the search varies only those)."""

    def __init__(self, spec: Lifecycle, s: Scenario, catalogs: Mapping[str, Catalog], usage: Usage) -> None:
        self.spec = spec
        self.scenario = s
        labels = [t.label for t in s.tiers]
        self.start = self._pricing(spec.start or labels[0], s, catalogs)
        self.targets = [self._pricing(r.to, s, catalogs) for r in spec.rules]
        volume = usage.objects.volume_gib
        if volume == 0:
            raise Invalid("lifecycle: the scenario's volume and objects give the object sizes; volume_gib is 0")
        # object sizes as a shape per GiB: every cohort has the scenario's size distribution
        self.unit = usage.objects.scaled(ONE / volume)
        self.usage = replace(usage, egress_share=ZERO, early_deletion=None, writes_per_month=ZERO)
        self.egress_share = usage.egress_share
        self.egress = usage.egress
        h = spec.horizon_months
        ingest = spec.ingest_gib_per_month
        per_month = list(ingest) if isinstance(ingest, list) else [ingest] * h
        if len(per_month) < h:
            per_month += [per_month[-1] if per_month else ZERO] * (h - len(per_month))
        self.cohorts = per_month[:h]
        self.cohorts[0] += spec.initial_gib
        # without a decay curve every age is read at the scenario's own frequency (0 means never)
        decay = spec.decay if "decay" in spec.model_fields_set else Decay(kind="table", table=[s.reads_per_month])
        self.rates = decay_rates(decay, h)
        self.expire = Decimal(spec.expire_after_days) if spec.expire_after_days is not None else None

    @staticmethod
    def _pricing(text: str, s: Scenario, catalogs: Mapping[str, Catalog]) -> Pricing:
        return replace(resolve_tier(scenario_ref(text, s), s, catalogs), fixed_monthly=ZERO)

    def _fixed(self, stages: Sequence[Stage]) -> Decimal:
        labels = {st.pricing.label for st in stages}
        return sum((c.monthly for c in self.scenario.fixed_costs if c.tiers is None or labels & set(c.tiers)), ZERO)

    def run(self, days: Sequence[int]) -> Simulation:
        """Simulate the spec with its rules at `days` (one per rule)."""
        stages = [Stage(ZERO, self.start)] + [Stage(Decimal(d), p) for d, p in zip(days, self.targets, strict=True)]
        rules = [Rule(after_days=d, to=r.to) for d, r in zip(days, self.spec.rules, strict=True)]
        return Simulation(rules, self._months(stages))

    def run_keep_hot(self) -> Simulation:
        return Simulation([], self._months([Stage(ZERO, self.start)]))

    def _months(self, stages: Sequence[Stage]) -> list[Month]:
        ends = [st.start_day for st in stages[1:]] + [self.expire]
        per_day_price = [band_cost(st.pricing.cls.storage, ONE) / DAYS_PER_MONTH for st in stages]
        billable_per_gib = [self.unit.billable_gib(st.pricing.cls.min_billable_bytes,
                                                   own_overhead_bytes(st.pricing.cls)) for st in stages]
        count_per_gib = self.unit.count
        fixed = self._fixed(stages)
        out: list[Month] = []
        for m in range(self.spec.horizon_months):
            vol = [ZERO] * len(stages)
            reads = [ZERO] * len(stages)
            transitions = ZERO
            early = ZERO
            for k in range(m + 1):
                g = self.cohorts[k]
                if g == 0:
                    continue
                a0 = (m - k) * DAYS_PER_MONTH
                a1 = a0 + DAYS_PER_MONTH
                rate = self.rates[m - k]
                for j, st in enumerate(stages):
                    lo, hi = st.start_day, ends[j]
                    top = a1 if hi is None else min(a1, hi)
                    days_in = top - max(a0, lo)
                    if days_in > 0:
                        w = days_in / DAYS_PER_MONTH
                        vol[j] += g * w
                        reads[j] += g * w * rate
                    if hi is not None and a0 <= hi < a1:
                        # the cohort leaves stage j this month: pay what its minimum duration still asks
                        owed_days = max(ZERO, Decimal(st.pricing.cls.min_storage_days) - (hi - lo))
                        early += g * billable_per_gib[j] * per_day_price[j] * owed_days
                        if j + 1 < len(stages):
                            nxt = stages[j + 1].pricing.cls
                            transitions += g * count_per_gib * nxt.transition_per_1k / THOUSAND
            cost = Breakdown(requests=transitions, early_deletion=early, fixed=fixed)
            egress_gib: dict[str, Decimal] = {}
            stored: dict[str, Decimal] = {}
            for j, st in enumerate(stages):
                label = st.pricing.label
                stored[label] = stored.get(label, ZERO) + vol[j]
                if vol[j] == 0:
                    continue
                model = TierModel(st.pricing, replace(self.usage, objects=self.unit.scaled(vol[j])))
                cost = cost + model.at(reads[j] / vol[j] / self.usage.read_fraction)
                cat = st.pricing.catalog.id
                egress_gib[cat] = egress_gib.get(cat, ZERO) + reads[j] * self.egress_share
            catalogs = {st.pricing.catalog.id: st.pricing.catalog for st in stages}
            pooled = sum((band_cost(catalogs[c].egress_bands(self.egress), gib) for c, gib in egress_gib.items()), ZERO)
            out.append(Month(m, stored, replace(cost, egress=cost.egress + pooled)))
        return out

    def search(self, start_days: Sequence[int]) -> Simulation:
        """Transition days minimising the total: exhaustive for one rule, coordinate descent for more."""
        step = self.spec.search_step_days
        limit = self.spec.horizon_months * 31
        if self.expire is not None:
            limit = min(limit, int(self.expire) - 1)
        # keep the search bounded on long horizons: at most ~48 candidate days per rule
        step = max(step, math.ceil(limit / 48 / step) * step)
        grid = list(range(0, limit + 1, step))
        days = list(start_days)
        best = self.run(days)
        for _ in range(4):
            improved = False
            for j in range(len(days)):
                lo = days[j - 1] + 1 if j > 0 else 0
                hi = days[j + 1] - 1 if j + 1 < len(days) else limit
                for d in grid:
                    if d < lo or d > hi or d == days[j]:
                        continue
                    trial = self.run([*days[:j], d, *days[j + 1:]])
                    if trial.total < best.total:
                        best, days, improved = trial, [*days[:j], d, *days[j + 1:]], True
            if not improved or len(days) == 1:
                break
        return best


def simulate(spec: Lifecycle, s: Scenario, catalogs: Mapping[str, Catalog], usage: Usage) -> LifecycleResult:
    """The policy as given, keep-everything-in-the-first-tier, and (when asked) the best transition days."""
    sim = Simulator(spec, s, catalogs, usage)
    days = [r.after_days for r in spec.rules]
    policy = sim.run(days)
    best = sim.search(days) if spec.search and spec.rules else None
    return LifecycleResult(policy=policy, keep_hot=sim.run_keep_hot(), best=best)


# ---------------------------------------------------------------------------- prices of the installation's tiers


@dataclass(frozen=True, slots=True)
class PriceRef:
    """Which catalog class prices one tier (empty catalog: the tier names none)."""

    tier_id: int
    tier_name: str
    catalog: str
    storage_class: str


@dataclass(frozen=True)
class TierPrice:
    tier_id: int
    label: str  # "catalog:CLASS"
    cls: StorageClass
    catalog: Catalog

    @property
    def min_billable_bytes(self) -> int:
        return self.cls.min_billable_bytes

    @property
    def own_overhead_bytes(self) -> int:
        return own_overhead_bytes(self.cls)

    def billable_bytes(self, size: int) -> int:
        """What one object is billed as: at least the class's minimum, plus its per-object overhead."""
        return max(size, self.min_billable_bytes) + self.own_overhead_bytes

    def monthly(self, billable_bytes: int, objects: int) -> Decimal:
        """A month of storage for this much billable volume (volume bands applied), plus overhead billed
        at other classes' rates (Glacier's 8 KiB per object at Standard)."""
        cost = band_cost(self.cls.storage, Decimal(billable_bytes) / GIB)
        for o in self.cls.object_overhead:
            if o.billed_as is not None:
                cost += band_cost(self.catalog.storage_class(o.billed_as).storage, Decimal(objects * o.bytes) / GIB)
        return cost

    def per_gib_month(self) -> Decimal:
        """The class's storage price per GiB-month in its first volume band."""
        return self.cls.storage[0].price

    def early_deletion(self, size: int, days_short: float) -> Decimal:
        """Storage still owed when an object leaves ``days_short`` days before the minimum duration."""
        if days_short <= 0:
            return ZERO
        month = Decimal(self.billable_bytes(size)) / GIB * self.per_gib_month()
        return month * Decimal(str(round(days_short, 6))) / DAYS_PER_MONTH

    def transition_requests(self, objects: int) -> Decimal:
        """The transition fee of moving ``objects`` objects into this class."""
        return self.cls.transition_per_1k * objects / 1000


@dataclass
class Prices:
    by_tier: dict[int, TierPrice] = field(default_factory=dict)
    unpriced: list[str] = field(default_factory=list)

    def get(self, tier_id: int) -> TierPrice | None:
        """The tier's price, None when it is unpriced."""
        return self.by_tier.get(tier_id)


def price_tiers(catalogs: Mapping[str, Catalog], refs: Sequence[PriceRef]) -> Prices:
    """The price of each tier whose reference names a known catalog and class; the others by name."""
    out = Prices()
    for ref in refs:
        catalog = find_catalog(catalogs, ref.catalog)
        if catalog is None:
            out.unpriced.append(ref.tier_name)
            continue
        try:
            cls = catalog.storage_class(ref.storage_class)
        except KeyError:
            out.unpriced.append(ref.tier_name)
            continue
        out.by_tier[ref.tier_id] = TierPrice(tier_id=ref.tier_id, label=f"{catalog.id}:{cls.id}", cls=cls,
                                             catalog=catalog)
    return out
