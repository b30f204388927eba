"""Actual spend: metered usage, the catalog's stored bytes and their history, restores and lifecycle transitions,
priced with each tier's catalog of the month.

Storage is billed per bucket and tier: every version the catalog holds, from when its bytes came to its tier
(creation, or the last lifecycle move), and every span the catalog's history (``storage_history``) says ended
(deleted, overwritten or moved away), up to its end; an object that left before its class's minimum storage
duration owes the rest, in the month it left. Objects bill at least the class's minimum billable size.
Requests come from the gateway's meter (data-path GETs and PUTs with their bytes; HEAD, LIST, other calls
and DELETEs by kind), shared out over a bucket's tiers by the bytes each holds; bytes read are priced as
retrieval and as egress to the destination the tier's ``price_ref`` names (``egress``: where its reads leave the
provider, as the installation reaches it; default the internet). Restores bill their requests, per-GiB fees by
speed and the restored copy's days; lifecycle transitions their fee per object moved into the target class.

The plan beside the actual is a month of what each bucket stores now plus its saved planned usage (``spend_plans``:
GiB read, GET- and PUT-class requests, GiB restored at a speed), priced in the same way as the actual usage, with
the same tier catalogs: a bucket without a saved plan plans storage only. A plan saved from a planner scenario is
the scenario's month instead (its volume, objects, reads, restores, egress destination and restored-copy days),
priced by the planner's own function, so the two agree to the cent.
"""

from __future__ import annotations

import calendar
import csv
import io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, Literal, cast

from sqlalchemy.orm import Session

from tierpilot.audit import service as audit
from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.kit.errors import DomainError, Invalid, NotFound
from tierpilot.lifecycle import repository as lifecycle_repository
from tierpilot.planner import installation
from tierpilot.planner import service as pricing
from tierpilot.planner.installation import PlanMonth
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, THOUSAND, ZERO, band_cost, pick_speed
from tierpilot.pricing.restores import restore_cost, restore_pricing
from tierpilot.pricing.schemas import DESTINATIONS, Catalog, Destination, Scenario, Speed
from tierpilot.restores import repository as restores_repository
from tierpilot.spend import repository, stored
from tierpilot.spend.models import SpendPlan
from tierpilot.spend.schemas import SpendPlanIn
from tierpilot.spend.stored import Held, Month, Priced, Stored, month_end, month_held, shift, tier_prices
from tierpilot.spend.usage import KINDS
from tierpilot.tiers import repository as tiers_repository

GroupBy = Literal["tier", "bucket", "user"]
GROUPS: tuple[GroupBy, ...] = ("tier", "bucket", "user")
COMPONENTS = ("storage", "requests", "retrieval", "egress", "restores", "restored_copy", "lifecycle",
              "early_deletion")
COUNTS = ("read_requests", "write_requests", "head_requests", "list_requests", "other_requests", "read_bytes",
          "write_bytes", "restore_requests", "restored_bytes", "transitions")
METERED = ("read_requests", "write_requests", "head_requests", "list_requests", "other_requests")
# the line's count each metered kind adds to (other GETs and PUTs and DELETEs: other_requests)
COUNTED = {"read": "read_requests", "write": "write_requests", "head": "head_requests", "list": "list_requests"}
NOT_METERED = ["requests that name no bucket (ListBuckets)",
               "which tier a request reached: a bucket's requests are shared out by the bytes each tier holds"]
HISTORY_MONTHS = 6
MIN_DIVERGENCE = Decimal("0.01")  # USD: a bucket whose projection is off its plan by less diverges from nothing
OVER: dict[str, str] = {"internet": "over the internet", "research-network": "over the research network",
                        "same-region": "within the provider's region"}
# days a planned restore's copy stays readable: the restores API's default
PLANNED_COPY_DAYS = 7
STORAGE_ONLY = "no usage planned: storage only"
MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


class NoSuchPlan(NotFound):
    """A bucket with no saved plan (it plans storage only)."""


def egress_destination(price_ref: Mapping[str, Any] | None) -> Destination:
    """Where a tier's reads leave its provider: its ``price_ref`` says (tiers validates it), else the internet."""
    dest = (price_ref or {}).get("egress")
    return next((d for d in DESTINATIONS if d == dest), "internet")


def parse_month(text: str) -> date:
    """The first day of a YYYY-MM month, or Invalid naming the field."""
    m = MONTH.match(text)
    if not m or not 1970 <= int(m.group(1)) <= 9999:
        raise Invalid("month must be YYYY-MM (e.g. 2026-11)", field="month")
    return date(int(m.group(1)), int(m.group(2)), 1)


@dataclass
class Line:
    """One group's spend in one month, by component (USD), and the counts behind it."""

    key: str
    storage: Decimal = ZERO
    requests: Decimal = ZERO
    retrieval: Decimal = ZERO
    egress: Decimal = ZERO
    restores: Decimal = ZERO  # restore requests and per-GiB restore and retrieval fees by speed
    restored_copy: Decimal = ZERO  # the restored copies' storage days
    lifecycle: Decimal = ZERO  # lifecycle transition fees
    early_deletion: Decimal = ZERO  # storage owed by bytes that left before their class's minimum duration
    gib_days: Decimal = ZERO
    read_requests: int = 0
    write_requests: int = 0
    head_requests: int = 0
    list_requests: int = 0
    other_requests: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    restore_requests: int = 0
    restored_bytes: int = 0
    transitions: int = 0
    catalogs: set[str] = field(default_factory=set)
    read_to: dict[str, Decimal] = field(default_factory=dict)  # destination -> bytes read through it

    @property
    def total(self) -> Decimal:
        return sum((getattr(self, c) for c in COMPONENTS), ZERO)

    def out(self) -> dict[str, Any]:
        return {"key": self.key, **{c: float(round(getattr(self, c), 6)) for c in COMPONENTS},
                "total": float(round(self.total, 6)), "gib_days": float(round(self.gib_days, 6)),
                **{c: getattr(self, c) for c in COUNTS}, "catalogs": sorted(self.catalogs),
                "egress_explained": self.egress_explained()}

    def egress_explained(self) -> str:
        """Where the line's read bytes left their provider: '2.00 GiB read over the research network'."""
        parts = [f"{float(n / GIB):.2f} GiB read {OVER[d]}" for d, n in sorted(self.read_to.items()) if n]
        return "; ".join(parts)


def _storage(session: Session, bucket_ids: Sequence[int], months: Sequence[Month], now: datetime,
             rolled_up: bool, held: Held, exact: int) -> dict[tuple[int, int, int], Stored]:
    """(month index, bucket, tier) -> stored bytes: the finished days the roll-up closed from its rows, the rest
    (today, days not closed yet, or every day when ``rolled_up`` is off) from the catalog and its history; ``held``
    filled on the way (``stored.by_month``)."""
    until = repository.rollup_until(session) if rolled_up else None
    if until is None:
        return stored.by_month(session, bucket_ids, months, months[0].start, now, held, exact)
    index = {m.first.isoformat()[:7]: i for i, m in enumerate(months)}
    live_from = max(months[0].start, datetime.fromisoformat(until).replace(tzinfo=UTC))
    out = stored.by_month(session, bucket_ids, months, live_from, now, held, exact)
    for month, bucket_id, tier_id, n, billable, short, objects in repository.month_totals(
            session, bucket_ids, months[0].first.isoformat(), until):
        i = index.get(month)
        if i is None:
            continue
        acc = out.setdefault((i, bucket_id, tier_id), Stored())
        acc.byte_s += n
        acc.billable_byte_s += billable
        acc.short_byte_s += short
        acc.object_s += objects
    return out


def _storage_cost(p: Priced | None, acc: Stored) -> Decimal:
    """A month of stored bytes at the class's volume bands, and the per-object overhead some classes bill at
    another class's rate (Glacier: 8 KiB per object at Standard's)."""
    if p is None:
        return ZERO
    cost = band_cost(p.cls.storage, Decimal(acc.billable_byte_s) / GIB / 86400 / DAYS_PER_MONTH)
    for o in p.cls.object_overhead:
        if o.billed_as is not None:
            gib_months = Decimal(acc.object_s * o.bytes) / GIB / 86400 / DAYS_PER_MONTH
            cost += band_cost(p.catalog.storage_class(o.billed_as).storage, gib_months)
    return cost


def _early_cost(p: Priced | None, acc: Stored) -> Decimal:
    """What leaving before the minimum duration owes, at the class's first-band rate."""
    if p is None or not p.cls.storage:
        return ZERO
    return Decimal(acc.short_byte_s) / GIB / 86400 / DAYS_PER_MONTH * p.cls.storage[0].price


@dataclass
class _Restored:
    requests: int = 0
    nbytes: int = 0
    fees: Decimal = ZERO  # restore requests, per-GiB restore and retrieval by speed
    copy: Decimal = ZERO  # the restored copy's storage at its class's rate


def _restores(session: Session, ids_by_name: Mapping[str, int], months: Sequence[Month],
              now: datetime) -> dict[tuple[int, int, int], _Restored]:
    """(month index, bucket, tier) -> restores the tiers accepted: fees in the month of the request, the restored
    copy's days in the months it was kept; priced with the tier's catalog of that month (a dated catalog carries
    its rule: in 2018 AWS billed Glacier's restored copy at the Reduced Redundancy rate). Items are summed first,
    per month, bucket, tier and speed (the fees are linear in requests and bytes) and the copies' byte-seconds per
    month, bucket and tier (priced at the copy class's volume bands, as stored bytes are), then priced once each."""
    bounds = [(int(m.start.timestamp()), int(m.stop.timestamp())) for m in months]
    until = int(now.timestamp())
    asked: dict[tuple[int, int, int, str], list[int]] = {}  # -> [requests, bytes]
    kept: dict[tuple[int, int, int], int] = {}  # -> the copies' byte-seconds
    for bucket, tier_id, speed, size, requested, ready, expires in restores_repository.items_for_spend(
            session, months[0].start, now):
        bucket_id = ids_by_name.get(bucket)
        if bucket_id is None:
            continue
        end = until if expires is None else min(int(expires), until)
        for i, (lo, hi) in enumerate(bounds):
            if lo <= requested < hi:
                counts = asked.setdefault((i, bucket_id, tier_id, speed), [0, 0])
                counts[0] += 1
                counts[1] += size
            if ready is not None:
                seconds = min(end, hi) - max(int(ready), lo)
                if seconds > 0:
                    kept[(i, bucket_id, tier_id)] = kept.get((i, bucket_id, tier_id), 0) + size * seconds
    out: dict[tuple[int, int, int], _Restored] = {}
    for (i, bucket_id, tier_id, speed), (n, nbytes) in asked.items():
        p = months[i].prices.get(tier_id)
        if p is None:
            continue
        quote = restore_cost(restore_pricing(p.catalog, p.cls.id), speed, n, nbytes, 0)
        acc = out.setdefault((i, bucket_id, tier_id), _Restored())
        acc.requests += n
        acc.nbytes += nbytes
        acc.fees += quote.restore + quote.retrieval if quote is not None else ZERO
    for (i, bucket_id, tier_id), byte_s in kept.items():
        p = months[i].prices.get(tier_id)
        if p is None or p.cls.restored_copy_class is None:
            continue
        copy = p.catalog.storage_class(p.cls.restored_copy_class).storage
        acc = out.setdefault((i, bucket_id, tier_id), _Restored())
        acc.copy += band_cost(copy, Decimal(byte_s) / GIB / 86400 / DAYS_PER_MONTH)
    return out


@dataclass
class MonthSpend:
    month: date
    lines: dict[str, Line]
    by_bucket: dict[int, Line]
    days: Decimal
    days_in_month: int
    priced: Month  # the month's tier prices
    shares: dict[int, dict[int, Decimal]]  # bucket -> tier -> its share of the bucket's bytes now
    destinations: dict[int, Destination]  # tier -> where its reads leave the provider
    tier_names: dict[int, str]


def _months(session: Session, tier_ids: set[int], first: date, last: date) -> list[Month]:
    catalogs = pricing.all_catalogs(session)
    out = []
    m = first
    while m <= last:
        out.append(stored.month_of(session, m, tier_ids, catalogs))
        m = shift(m, 1)
    return out


def _shares(buckets: Sequence[Bucket], held: Held) -> dict[int, dict[int, Decimal]]:
    """Bucket -> tier -> its share of the bucket's bytes now: metered requests and bytes name a bucket, not a tier
    (and so does a plan), so they are shared out by the bytes each tier holds."""
    out: dict[int, dict[int, Decimal]] = {}
    for b in buckets:
        usage = {t: sum((nbytes for _, nbytes, _ in groups), 0) for t, groups in held[b.id].items()}
        total = sum(usage.values(), 0)
        out[b.id] = {t: Decimal(n) / total for t, n in usage.items()} if total else {b.tier_id: Decimal(1)}
    return out


def _compute(session: Session, buckets: Sequence[Bucket], held: Held, exact: int, first_month: date,
             last_month: date, group_by: GroupBy, now: datetime, rolled_up: bool) -> list[MonthSpend]:
    """The months' spend; fills ``held`` (what the buckets store now, sizes below ``exact`` apart) from the same
    read of the catalog as the months' storage."""
    bucket_ids = [b.id for b in buckets]
    owners = auth_repository.usernames(session, {b.owner_id for b in buckets})
    all_tiers = tiers_repository.tiers_by_id(session, None)
    # every tier that holds bytes is a row of tiers (objects reference them), and an empty bucket's share is its tier's
    tier_ids = set(all_tiers) | {b.tier_id for b in buckets}
    destinations = {t.id: egress_destination(t.price_ref) for t in all_tiers.values()}
    months = _months(session, tier_ids, first_month, last_month)
    _, tier_names = tier_prices(session, tier_ids, month_end(last_month))
    storage = _storage(session, bucket_ids, months, now, rolled_up, held, exact)
    shares = _shares(buckets, held)
    restored = _restores(session, {b.name: b.id for b in buckets}, months, now)
    meters = repository.usage_between(session, first_month.isoformat(), month_end(last_month).isoformat(),
                                      bucket_ids)
    out: list[MonthSpend] = []
    for i, m in enumerate(months):
        book = _Book(group_by, {b.id: b for b in buckets}, owners, tier_names, m.prices, destinations)
        for (index, bucket_id, tier_id), acc in storage.items():
            if index != i:
                continue
            book.add(bucket_id, tier_id, storage=_storage_cost(m.prices.get(tier_id), acc),
                     early_deletion=_early_cost(m.prices.get(tier_id), acc), gib_days=Decimal(acc.byte_s) / GIB / 86400)
        for (index, bucket_id, tier_id), r in restored.items():
            if index == i:
                book.add(bucket_id, tier_id, restores=r.fees, restored_copy=r.copy, restore_requests=r.requests,
                         restored_bytes=r.nbytes)
        month_key = m.first.isoformat()[:7]
        for day, _user_id, bucket_id, kind, n, nbytes in meters:
            if day[:7] == month_key:
                for tier_id, share in shares.get(bucket_id, {}).items():
                    book.add_usage(bucket_id, tier_id, share, kind, n, nbytes)
        book.close()
        for bucket_id, tier_id, n in lifecycle_repository.transitions_by_bucket(session, m.start, m.stop, bucket_ids):
            p = m.prices.get(tier_id)
            book.add(bucket_id, tier_id, lifecycle=Decimal(n) * p.cls.transition_per_1k / THOUSAND if p else ZERO,
                     transitions=n)
        elapsed = max(ZERO, Decimal((min(now, m.stop) - m.start).total_seconds()) / 86400)
        out.append(MonthSpend(m.first, book.lines, book.per_bucket, elapsed,
                              calendar.monthrange(m.first.year, m.first.month)[1], m, shares, destinations,
                              dict(tier_names)))
    return out


class _Book:
    """One month's lines: by the requested group and by bucket (for the plan beside the actual)."""

    def __init__(self, group_by: GroupBy, buckets: Mapping[int, Any], owners: Mapping[int, str],
                 tier_names: Mapping[int, str], prices: Mapping[int, Priced],
                 destinations: Mapping[int, Destination]) -> None:
        self.group_by, self.buckets, self.owners, self.tier_names, self.prices, self.destinations = (
            group_by, buckets, owners, tier_names, prices, destinations)
        self.lines: dict[str, Line] = {}
        self.per_bucket: dict[int, Line] = {}
        # egress bands are a month's volume per catalog and destination, not a row's: read GiB are pooled
        # and the pool's cost shared out by GiB when the month closes
        self.egress_gib: dict[tuple[str, Destination], Decimal] = {}
        self.egress_bands: dict[tuple[str, Destination], Any] = {}
        self.egress_parts: list[tuple[int, int, tuple[str, Destination], Decimal]] = []

    def key_of(self, bucket_id: int, tier_id: int) -> str:
        b = self.buckets[bucket_id]
        if self.group_by == "bucket":
            return str(b.name)
        if self.group_by == "user":
            return self.owners.get(b.owner_id, f"user {b.owner_id}")
        return self.tier_names.get(tier_id, f"tier {tier_id}")

    def targets(self, bucket_id: int, tier_id: int) -> tuple[Line, Line]:
        """The group's line and the bucket's."""
        key = self.key_of(bucket_id, tier_id)
        return self.lines.setdefault(key, Line(key)), self.per_bucket.setdefault(bucket_id, Line(str(bucket_id)))

    def add(self, bucket_id: int, tier_id: int, **amounts: Any) -> None:
        for target in self.targets(bucket_id, tier_id):
            for name, value in amounts.items():
                setattr(target, name, getattr(target, name) + value)
            if tier_id in self.prices:
                target.catalogs.add(self.prices[tier_id].catalog.id)

    def add_usage(self, bucket_id: int, tier_id: int, share: Decimal, kind: str, n: int, nbytes: int) -> None:
        p = self.prices.get(tier_id)
        rate_class = KINDS.get(kind)
        per_1k, retrieval = ZERO, ZERO
        if p is not None and rate_class is not None:
            per_1k = p.cls.requests.read_per_1k if rate_class == "read" else p.cls.requests.write_per_1k
        if p is not None and kind == "read":
            gib = Decimal(nbytes) * share / GIB
            retrieval = gib * p.cls.retrieval_per_gib
            dest = self.destinations.get(tier_id, "internet")
            pool = (p.catalog.id, dest)
            self.egress_bands.setdefault(pool, p.catalog.egress_bands(dest))
            self.egress_gib[pool] = self.egress_gib.get(pool, ZERO) + gib
            self.egress_parts.append((bucket_id, tier_id, pool, gib))
            for target in self.targets(bucket_id, tier_id):
                target.read_to[dest] = target.read_to.get(dest, ZERO) + Decimal(nbytes) * share
        field_name = COUNTED.get(kind, "other_requests")
        counts: dict[str, int] = {field_name: round(n * share)}
        if kind in ("read", "write"):
            counts[f"{kind}_bytes"] = round(nbytes * share)
        self.add(bucket_id, tier_id, requests=Decimal(n) * share * per_1k / THOUSAND, retrieval=retrieval,
                 **counts)

    def close(self) -> None:
        """Price the month's pooled egress and share each pool's cost out by the GiB each line read."""
        cost = {pool: band_cost(self.egress_bands[pool], gib) for pool, gib in self.egress_gib.items()}
        for bucket_id, tier_id, pool, gib in self.egress_parts:
            self.add(bucket_id, tier_id, egress=cost[pool] * gib / self.egress_gib[pool] if gib else ZERO)
        self.egress_gib, self.egress_parts = {}, []


@dataclass
class _Plans:
    """The month's plan per bucket, what a month of the bytes stored now costs (the projection's storage), and
    the scenario month behind each scenario plan."""

    lines: dict[int, Line]
    held_storage: dict[int, Decimal]
    scenarios: dict[int, PlanMonth]


def _scenario_month(session: Session, plan: SpendPlan, catalogs: Mapping[str, Catalog]) -> PlanMonth | None:
    """A scenario plan's month, or None when it cannot be priced any more (its tier was removed or lost its
    price_ref): the plan's usage figures are priced then, as for a plan without a scenario."""
    if plan.scenario is None:
        return None
    try:
        return installation.plan_month(session, Scenario.model_validate(plan.scenario), catalogs)
    except (DomainError, ValueError):
        return None


def _scenario_line(bucket_id: int, m: PlanMonth) -> Line:
    """A scenario plan's month as a spend line: the planner's components under spend's names (per-object monitoring
    and fixed costs count with storage) and the counts behind them."""
    b = m.monthly
    return Line(str(bucket_id), storage=b.storage + b.monitoring + b.fixed, requests=b.requests,
                retrieval=b.retrieval, egress=b.egress, restores=b.restore, restored_copy=b.restored_copy,
                early_deletion=b.early_deletion, read_requests=m.read_requests, write_requests=m.write_requests,
                read_bytes=int(m.read_gib * GIB), restore_requests=m.restore_requests,
                restored_bytes=int(m.restored_gib * GIB))


def _planned(session: Session, buckets: Sequence[Bucket], held: Held, current: MonthSpend,
             plans: Mapping[int, SpendPlan], catalogs: Mapping[str, Catalog]) -> _Plans:
    """The plan per bucket for a month, as a line priced like the actual one: a month of every version it stores now
    on its tiers, current and noncurrent (a versioned bucket pays for both), billed as the actual storage is
    (minimum billable sizes, per-object overheads), plus its saved planned usage: GET- and PUT-class requests and
    the GiB read (retrieval, and egress to each tier's destination in the month's pooled bands) shared out over its
    tiers by bytes as metered usage is, restores on the tiers whose class needs them (at the planned speed or the
    nearest one offered, a copy kept ``PLANNED_COPY_DAYS``). A scenario plan is the scenario's month instead."""
    month = current.priced
    book = _Book("bucket", {b.id: b for b in buckets}, {}, current.tier_names, month.prices, current.destinations)
    held_storage: dict[int, Decimal] = {}
    scenarios: dict[int, PlanMonth] = {}
    for b in buckets:
        book.per_bucket[b.id] = Line(str(b.id))
        for t, groups in held[b.id].items():
            book.add(b.id, t, storage=_storage_cost(month.prices.get(t), month_held(groups, month.billing(t))))
        held_storage[b.id] = book.per_bucket[b.id].storage
        plan = plans.get(b.id)
        if plan is None:
            continue
        scenario = _scenario_month(session, plan, catalogs)
        if scenario is not None:
            scenarios[b.id] = scenario
            continue
        for t, share in current.shares[b.id].items():
            book.add_usage(b.id, t, share, "read", plan.read_requests, int(plan.reads_gib * GIB))
            book.add_usage(b.id, t, share, "write", plan.write_requests, 0)
        _planned_restores(book, b, held[b.id], month, plan)
    book.close()
    lines = dict(book.per_bucket)
    for bucket_id, scenario in scenarios.items():
        lines[bucket_id] = _scenario_line(bucket_id, scenario)
    return _Plans(lines, held_storage, scenarios)


def _planned_restores(book: _Book, bucket: Bucket, held: Mapping[int, Sequence[tuple[int, int, int | None]]],
                      month: Month, plan: SpendPlan) -> None:
    """A month's planned restores of a bucket, priced on its tiers whose class needs a restore (shared out by their
    bytes; requests counted at the tier's mean object size)."""
    nbytes = int(plan.restores_gib * GIB)
    if nbytes <= 0:
        return
    archived = {t: groups for t, groups in held.items() if (p := month.prices.get(t)) is not None and p.cls.restore}
    total = sum((n for groups in archived.values() for _, n, _ in groups), 0)
    if not total:  # nothing archived yet: the bucket's own tier, one request
        archived, total = {bucket.tier_id: [(1, nbytes, None)]}, nbytes
    for t, groups in archived.items():
        p = month.prices.get(t)
        stored_bytes = sum((n for _, n, _ in groups), 0)
        objects = sum((n for n, _, _ in groups), 0)
        part = nbytes * stored_bytes // total
        speed = pick_speed(p.cls, cast(Speed, plan.restore_speed)) if p is not None else None
        if p is None or part <= 0 or speed is None:
            continue
        requests = max(1, round(part * objects / stored_bytes))
        quote = restore_cost(restore_pricing(p.catalog, p.cls.id), speed, requests, part, PLANNED_COPY_DAYS)
        if quote is not None:
            book.add(bucket.id, t, restores=quote.restore + quote.retrieval, restored_copy=quote.restored_copy,
                     restore_requests=requests, restored_bytes=part)


def _amount(nbytes: int) -> str:
    """Bytes in GiB, or in MiB below a hundredth of a GiB (a restore of 300 kB is not '0.00 GiB')."""
    if not nbytes:
        return "0 GiB"
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**30 / 100 else f"{nbytes / 2**20:.2f} MiB"


def _restores_said(n: int, nbytes: int) -> str:
    return f"{n} restore request{'' if n == 1 else 's'} of {_amount(nbytes)}"


def _copy_days(plan: SpendPlan) -> str:
    days = (plan.scenario or {}).get("restored_copy_days", PLANNED_COPY_DAYS)
    return f"{Decimal(str(days)).normalize():f} day{'' if Decimal(str(days)) == 1 else 's'}"


# what a plan says of each component it plans: (the noun for more or fewer of it, what was planned)
PLANNED_AS: dict[str, Callable[[Line, SpendPlan], tuple[str, str]]] = {
    "requests": lambda _, p: ("requests", f"{p.read_requests} GET-class and {p.write_requests} PUT-class planned"),
    "retrieval": lambda line, _: ("reads", f"{_amount(line.read_bytes)} planned"),
    "egress": lambda line, _: ("reads", f"{_amount(line.read_bytes)} planned"),
    # a plan's restore requests are counted at the tier's mean object size: say how many, they may cost the most
    "restores": lambda line, p: ("restores", _restores_said(line.restore_requests, line.restored_bytes)
                                 + f" planned at {p.restore_speed} speed"),
    "restored_copy": lambda line, p: (
        "restored copy days", f"copies of {_amount(line.restored_bytes)} kept {_copy_days(p)} planned"),
}


def _reasons(line: Line, plan: Line, planned: SpendPlan | None, factor: Decimal, storage: Decimal,
             threshold: Decimal) -> list[str]:
    """Why a bucket's projected month differs from its plan: each component whose projection is off the plan's by
    more than the threshold, with the counts behind both (actual so far against the plan's month)."""
    out = []
    if plan.storage > 0 and abs(storage - plan.storage) > threshold:
        scenario = planned.scenario if planned is not None else None
        said = (f"the bucket stores another volume than the scenario's {float(scenario.get('volume_gib', 0)):,.2f} GiB"
                if scenario is not None else "the stored volume changed during the month")
        out.append(f"storage {float(storage):.4f} $ against {float(plan.storage):.4f} $ planned: {said}")
    for c in COMPONENTS[1:]:
        value, wanted = getattr(line, c) * factor, getattr(plan, c)
        if abs(value - wanted) <= threshold:
            continue
        requests = sum(getattr(line, n) for n in METERED)
        actual = {
            "requests": f"{requests} request{'' if requests == 1 else 's'} so far",
            "retrieval": f"{_amount(line.read_bytes)} read so far from a class with retrieval fees",
            "egress": (line.egress_explained() or f"{_amount(line.read_bytes)} read out of the cloud") + " so far",
            "restores": _restores_said(line.restore_requests, line.restored_bytes) + " so far",
            "restored_copy": "restored copies kept readable (billed at their copy class's rate)",
            "lifecycle": f"{line.transitions} lifecycle transitions",
            "early_deletion": "objects deleted, overwritten or moved before their class's minimum storage duration",
        }[c]
        if planned is None or c not in PLANNED_AS:
            note = f" ({STORAGE_ONLY})" if planned is None else ""
            out.append(f"{c} {float(value):.4f} $ not in the plan{note}: {actual}")
            continue
        noun, against = PLANNED_AS[c](plan, planned)
        out.append(f"{c} {float(value):.4f} $ against {float(wanted):.4f} $ planned: "
                   f"{'more' if value > wanted else 'fewer'} {noun} than planned, {actual} against {against}")
    return out


def _projected(total: Decimal, storage: Decimal, plan: Decimal, factor: Decimal,
               left: Decimal) -> tuple[Decimal, Decimal]:
    """(month's projected total, of which storage): storage so far plus the volume stored now (``plan``, a month's
    worth) for the share of the month left; the other components at the month's rate so far."""
    stored = storage + plan * left
    return stored + (total - storage) * factor, stored


def spend(session: Session, user: User, month_text: str, group_by: str, divergence: Decimal = Decimal("0.2"),
          now: datetime | None = None, rolled_up: bool = True) -> dict[str, Any]:
    """A month's spend so far, its forecast to the month's end, the months before it and the planner's forecast
    beside the actual; owners see their buckets, admins all. ``rolled_up=False`` prices every day from the
    catalog's rows (the roll-up's reference: the same figures, slower)."""
    if group_by not in GROUPS:
        raise Invalid(f"group_by must be one of {', '.join(GROUPS)}", field="group_by")
    month = parse_month(month_text)
    now = now or datetime.now(UTC)
    if month > now.date().replace(day=1):
        raise Invalid("month is in the future", field="month")
    buckets = catalog_repository.buckets_named(session, None, None if user.is_admin else user.id)
    held: Held = {b.id: {} for b in buckets}
    months = _compute(session, buckets, held, stored.exact_below(pricing.all_catalogs(session).values()),
                      shift(month, -(HISTORY_MONTHS - 1)), month, cast(GroupBy, group_by), now, rolled_up)
    current = months[-1]
    total = sum((line.total for line in current.lines.values()), ZERO)
    full = Decimal(current.days_in_month)
    ongoing = ZERO < current.days < full
    factor = full / current.days if ongoing else Decimal(1)
    left = (full - current.days) / full if ongoing else ZERO
    plans = repository.plans(session, [b.id for b in buckets])
    planned = _planned(session, buckets, held, current, plans, pricing.all_catalogs(session))
    storage = sum((line.storage for line in current.lines.values()), ZERO)
    # the month left is projected from the bytes stored now, whatever volume a plan assumes
    forecast, _ = _projected(total, storage, sum(planned.held_storage.values(), ZERO), factor, left)
    names = {b.id: b.name for b in buckets}
    comparison = []
    for bucket_id, plan in sorted(planned.lines.items(), key=lambda kv: names.get(kv[0], "")):
        line = current.by_bucket.get(bucket_id, Line(str(bucket_id)))
        projected, ahead = _projected(line.total, line.storage, planned.held_storage.get(bucket_id, ZERO), factor,
                                      left)
        # beyond the divergence share of the plan, and beyond a cent: smaller gaps explain nothing
        threshold = max(plan.total * divergence, MIN_DIVERGENCE)
        saved = plans.get(bucket_id)
        reasons = (_reasons(line, plan, saved, factor, ahead, threshold) if abs(projected - plan.total) > threshold
                   else [])
        comparison.append({"bucket": names.get(bucket_id, str(bucket_id)), "planned": float(round(plan.total, 6)),
                           "planned_storage": float(round(plan.storage, 6)),
                           "planned_components": {c: float(round(getattr(plan, c), 6)) for c in COMPONENTS},
                           "plan": (_plan_usage(saved, planned.scenarios.get(bucket_id)) if saved is not None
                                    else None),
                           "actual_so_far": float(round(line.total, 6)), "projected": float(round(projected, 6)),
                           "diverges": bool(reasons), "reasons": reasons})
    return {
        "month": month.isoformat()[:7],
        "group_by": group_by,
        "currency": "USD",
        "days_elapsed": float(round(current.days, 3)),
        "days_in_month": current.days_in_month,
        "so_far": float(round(total, 6)),
        "forecast": float(round(forecast, 6)),
        "groups": [line.out() for line in sorted(current.lines.values(), key=lambda x: x.key)],
        "history": [{"month": m.month.isoformat()[:7],
                     **{c: float(round(sum((getattr(line, c) for line in m.lines.values()), ZERO), 6))
                        for c in COMPONENTS},
                     "total": float(round(sum((line.total for line in m.lines.values()), ZERO), 6))}
                    for m in months],
        "planned": comparison,
        "divergence_share": float(divergence),
        "not_metered": NOT_METERED,
    }


def spend_csv(report: Mapping[str, Any]) -> str:
    """One row per group of the month, then the statement's totals (for spreadsheets)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([f"tierpilot spend {report['month']}", f"by {report['group_by']}", "USD"])
    w.writerow([report["group_by"], *COMPONENTS, "total", "gib_days", *COUNTS, "catalogs", "egress_explained"])
    for g in report["groups"]:
        key = str(g["key"])
        safe = "'" + key if key[:1] in ("=", "+", "-", "@", "\t", "\r") else key
        w.writerow([safe, *(g[c] for c in COMPONENTS), g["total"], g["gib_days"], *(g[c] for c in COUNTS),
                    " ".join(g["catalogs"]), g["egress_explained"]])
    w.writerow([])
    w.writerow(["so far", report["so_far"]])
    w.writerow(["forecast to month end", report["forecast"]])
    w.writerow(["not metered", "; ".join(report["not_metered"])])
    return out.getvalue()


def _plan_usage(row: SpendPlan, month: PlanMonth | None) -> dict[str, Any]:
    return {"reads_gib": row.reads_gib, "read_requests": row.read_requests, "write_requests": row.write_requests,
            "restores_gib": row.restores_gib, "restore_speed": row.restore_speed, "scenario": row.scenario,
            "priced_as": month.priced_as if month is not None else None,
            "restore_requests": month.restore_requests if month is not None else None}


def _plan_out(session: Session, bucket: Bucket, row: SpendPlan) -> dict[str, Any]:
    month = _scenario_month(session, row, pricing.all_catalogs(session)) if row.scenario is not None else None
    return {"bucket": bucket.name, **_plan_usage(row, month), "updated_at": row.updated_at,
            "updated_by": row.updated_by}


def _plannable(session: Session, user: User, name: str) -> Bucket:
    """A bucket whose plan the caller may see and change: its owner or an admin (403 for a grantee, 404 for anyone
    else: ``catalog.service.owned_bucket``; the Spend view lists only the caller's own buckets)."""
    return catalog_service.owned_bucket(session, name, user, "its spend plan")


def get_plan(session: Session, user: User, name: str) -> dict[str, Any]:
    """A bucket's planned monthly usage; NotFound when it has none (it plans storage only)."""
    bucket = _plannable(session, user, name)
    row = repository.plans(session, [bucket.id]).get(bucket.id)
    if row is None:
        raise NoSuchPlan(f"bucket {name!r} has no usage planned: storage only", BucketName=name)
    return _plan_out(session, bucket, row)


def set_plan(session: Session, user: User, name: str, body: SpendPlanIn, actor: audit.Actor) -> dict[str, Any]:
    """Save a bucket's planned monthly usage (replacing any), in the audit log as ``bucket.spend_plan_changed``.
    A scenario saved as the plan is kept whole, and the usage fields are what its month adds up to."""
    bucket = _plannable(session, user, name)
    values = body.model_dump(exclude={"scenario"})
    scenario = None
    if body.scenario is not None:
        kept = installation.plan_scenario(body.scenario)
        month = installation.plan_month(session, kept)
        scenario = kept.model_dump(mode="json", exclude_none=True)
        values.update(reads_gib=_gib(month.read_gib), read_requests=month.read_requests,
                      write_requests=month.write_requests, restores_gib=_gib(month.restored_gib),
                      restore_speed=month.restore_speed or kept.restore_speed)
    row = repository.put_plan(session, bucket.id, **values, scenario=scenario, updated_at=datetime.now(UTC),
                              updated_by=user.username)
    audit.record(session, "bucket.spend_plan_changed", actor, bucket.name, change="set",
                 **{k: str(v) if isinstance(v, Decimal) else v for k, v in values.items()},
                 **({"scenario": scenario} if scenario is not None else {}))
    return _plan_out(session, bucket, row)


def _gib(value: Decimal) -> Decimal:
    """GiB as the plans table keeps them (a millionth)."""
    return value.quantize(Decimal("0.000001"))


def delete_plan(session: Session, user: User, name: str, actor: audit.Actor) -> None:
    """Forget a bucket's planned usage (it plans storage only again); NotFound when it had none."""
    bucket = _plannable(session, user, name)
    if not repository.delete_plan(session, bucket.id):
        raise NoSuchPlan(f"bucket {name!r} has no usage planned: storage only", BucketName=name)
    audit.record(session, "bucket.spend_plan_changed", actor, bucket.name, change="deleted")
