"""Actual spend: metered usage and stored volume priced with each tier's catalog of the month.

Storage is GiB-days of the objects the catalog holds (an object counts from its creation; objects deleted
before now are not in the catalog and not counted), on the bucket's tiers in the shares they hold now.
Requests and bytes come from the gateway's metering (`usage_meter`): GETs and PUTs of object data
(HEAD, LIST and other metadata requests are not metered). Bytes read are priced as retrieval and as egress
to the internet. Restores and lifecycle transitions are billed by their own domains and not counted here.
"""

from __future__ import annotations

import calendar
import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal, cast

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.kit.errors import Invalid
from tierpilot.lifecycle import repository as lifecycle_repository
from tierpilot.pricing import service as pricing
from tierpilot.pricing.engine import DAYS_PER_MONTH, GIB, THOUSAND, ZERO, band_cost
from tierpilot.pricing.schemas import Catalog, StorageClass
from tierpilot.spend import repository
from tierpilot.tiers import repository as tiers_repository

GroupBy = Literal["tier", "bucket", "user"]
GROUPS: tuple[GroupBy, ...] = ("tier", "bucket", "user")
COMPONENTS = ("storage", "requests", "retrieval", "egress", "lifecycle")
NOT_METERED = ["restores", "HEAD, LIST and other metadata requests"]
LIFECYCLE_KEY = "(lifecycle moves, all buckets)"
HISTORY_MONTHS = 6
MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")


def parse_month(text: str) -> date:
    """The first day of a YYYY-MM month, or Invalid naming the field."""
    m = MONTH.match(text)
    if not m or not 1970 <= int(m.group(1)) <= 9999:
        raise Invalid("month must be YYYY-MM (e.g. 2026-11)", field="month")
    return date(int(m.group(1)), int(m.group(2)), 1)


def _month_end(first: date) -> date:
    return first.replace(day=calendar.monthrange(first.year, first.month)[1])


def _shift(first: date, months: int) -> date:
    index = first.year * 12 + first.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


@dataclass
class Line:
    """One group's spend in one month, by component (USD)."""

    key: str
    storage: Decimal = ZERO
    requests: Decimal = ZERO
    retrieval: Decimal = ZERO
    egress: Decimal = ZERO
    lifecycle: Decimal = ZERO  # transition fees and early deletion of executed moves (admins: not per bucket)
    gib_days: Decimal = ZERO
    read_requests: int = 0
    write_requests: int = 0
    read_bytes: int = 0
    write_bytes: int = 0
    catalogs: set[str] = field(default_factory=set)

    @property
    def total(self) -> Decimal:
        return self.storage + self.requests + self.retrieval + self.egress + self.lifecycle

    def out(self) -> dict[str, Any]:
        return {"key": self.key, **{c: float(round(getattr(self, c), 6)) for c in COMPONENTS},
                "total": float(round(self.total, 6)), "gib_days": float(round(self.gib_days, 6)),
                "read_requests": self.read_requests, "write_requests": self.write_requests,
                "read_bytes": self.read_bytes, "write_bytes": self.write_bytes, "catalogs": sorted(self.catalogs)}


@dataclass(frozen=True)
class _Priced:
    catalog: Catalog
    cls: StorageClass


def catalog_of_month(catalogs: Mapping[str, Catalog], ref: str, last_day: date) -> Catalog | None:
    """The catalog a tier's price_ref names, as it stood in a month: of the same provider and region, the
    newest valid by the month's last day (the referenced one when none was)."""
    named = catalogs.get(ref)
    base = ref[:-5] if named is not None and re.search(r"-\d{4}$", ref) else ref
    dated = [c for c in catalogs.values()
             if (c.id == base or (c.id.startswith(base + "-") and c.id[len(base) + 1:].isdigit()))
             and c.valid_from <= last_day]
    if dated:
        return max(dated, key=lambda c: (c.valid_from, c.id))
    if named is not None:
        return named
    undated = [c for c in catalogs.values() if c.id.startswith(base + "-") and c.id[len(base) + 1:].isdigit()]
    return min(undated, key=lambda c: (c.valid_from, c.id)) if undated else None


def _tier_prices(session: Session, tier_ids: Iterable[int],
                 last_day: date) -> tuple[dict[int, _Priced], dict[int, str]]:
    catalogs = pricing.all_catalogs(session)
    tiers = tiers_repository.tiers_by_id(session, tier_ids)
    out: dict[int, _Priced] = {}
    names = {t.id: t.name for t in tiers.values()}
    for tier in tiers.values():
        ref = tier.price_ref or {}
        catalog = catalog_of_month(catalogs, str(ref.get("catalog") or ""), last_day) if ref.get("catalog") else None
        class_id = str(ref.get("storage_class") or (tier.storage_classes or ["STANDARD"])[0])
        if catalog is None:
            continue
        try:
            out[tier.id] = _Priced(catalog, catalog.storage_class(class_id))
        except KeyError:
            continue
    return out, names


def _gib_days(session: Session, bucket_ids: Sequence[int], first: date, last: date,
              now: datetime) -> dict[tuple[int, date], Decimal]:
    """GiB-days per bucket and month from `first` to `last` month, of the objects the catalog holds now."""
    out: dict[tuple[int, date], Decimal] = {}
    months: list[tuple[date, datetime, datetime]] = []
    m = first
    while m <= last:
        start = datetime(m.year, m.month, m.day, tzinfo=UTC)
        end = min(datetime.combine(_month_end(m) + timedelta(days=1), datetime.min.time(), UTC), now)
        months.append((m, start, end))
        m = _shift(m, 1)
    for bucket_id in bucket_ids:
        for size, created, _ in catalog_repository.iter_object_stats(session, [bucket_id]):
            born = created if created.tzinfo else created.replace(tzinfo=UTC)
            for month, start, end in months:
                seconds = (end - max(start, born)).total_seconds()
                if seconds > 0:
                    key = (bucket_id, month)
                    out[key] = out.get(key, ZERO) + Decimal(size) / GIB * Decimal(seconds) / 86400
    return out


@dataclass
class MonthSpend:
    month: date
    lines: dict[str, Line]
    by_bucket: dict[int, Line]
    days: Decimal
    days_in_month: int


def _compute(session: Session, user: User, first_month: date, last_month: date, group_by: GroupBy,
             now: datetime) -> list[MonthSpend]:
    buckets = catalog_repository.buckets_named(session, None, None if user.is_admin else user.id)
    bucket_ids = [b.id for b in buckets]
    owners = auth_repository.usernames(session, {b.owner_id for b in buckets})
    shares: dict[int, dict[int, Decimal]] = {}
    tier_ids: set[int] = set()
    for b in buckets:
        usage = catalog_repository.usage_by_tier(session, b.id)
        total = sum((n for n, _ in usage.values()), 0)
        shares[b.id] = ({t: Decimal(n) / total for t, (n, _) in usage.items()} if total
                        else {b.tier_id: Decimal(1)})
        tier_ids.update(shares[b.id])
    gib_days = _gib_days(session, bucket_ids, first_month, last_month, now)
    first_day, last_day = first_month.isoformat(), _month_end(last_month).isoformat()
    meters = repository.usage_between(session, first_day, last_day, bucket_ids)
    out: list[MonthSpend] = []
    month = first_month
    while month <= last_month:
        moves = _lifecycle_of_month(session, month) if user.is_admin else []
        prices, tier_names = _tier_prices(session, tier_ids | {r[2] for r in moves}, _month_end(month))
        book = _Book(group_by, {b.id: b for b in buckets}, owners, tier_names, prices)
        for b in buckets:
            gd = gib_days.get((b.id, month), ZERO)
            for tier_id, share in shares[b.id].items():
                p = prices.get(tier_id)
                cost = band_cost(p.cls.storage, gd * share / DAYS_PER_MONTH) if p is not None else ZERO
                book.add(b.id, tier_id, storage=cost, gib_days=gd * share)
        month_key = month.isoformat()[:7]
        for day, _user_id, bucket_id, direction, n, nbytes in meters:
            if day[:7] != month_key:
                continue
            for tier_id, share in shares.get(bucket_id, {}).items():
                book.add_usage(bucket_id, tier_id, share, direction == "read", n, nbytes)
        for _action, _src, dst, transition_requests, early_nano in moves:
            p = prices.get(dst)
            fee = Decimal(transition_requests) * p.cls.transition_per_1k / THOUSAND if p is not None else ZERO
            book.add_moves(dst, fee + Decimal(early_nano) / Decimal(10**9))
        month_start = datetime(month.year, month.month, 1, tzinfo=UTC)
        month_stop = datetime.combine(_month_end(month) + timedelta(days=1), datetime.min.time(), UTC)
        elapsed = max(ZERO, Decimal((min(now, month_stop) - month_start).total_seconds()) / 86400)
        out.append(MonthSpend(month, book.lines, book.per_bucket, elapsed,
                              calendar.monthrange(month.year, month.month)[1]))
        month = _shift(month, 1)
    return out


def _lifecycle_of_month(session: Session, month: date) -> list[tuple[str, int, int, int, int]]:
    """(action, source tier, target tier, transition requests, early-deletion nano-USD) of the moves executed
    in a month: the totals from its first day less those from the next month's."""
    def totals(since: date) -> dict[tuple[str, int, int], tuple[int, int]]:
        return {(str(r[0]), int(r[1]), int(r[2])): (int(r[5] or 0), int(r[6] or 0))
                for r in lifecycle_repository.meter_totals(session, since.isoformat())}
    start, after = totals(month), totals(_shift(month, 1))
    out = []
    for key, (requests, nano) in start.items():
        later = after.get(key, (0, 0))
        if requests - later[0] or nano - later[1]:
            out.append((*key, requests - later[0], nano - later[1]))
    return out


class _Book:
    """One month's lines: by the requested group and by bucket (for the plan beside the actual)."""

    def __init__(self, group_by: GroupBy, buckets: Mapping[int, Any], owners: Mapping[int, str],
                 tier_names: Mapping[int, str], prices: Mapping[int, _Priced]) -> None:
        self.group_by, self.buckets, self.owners, self.tier_names, self.prices = (
            group_by, buckets, owners, tier_names, prices)
        self.lines: dict[str, Line] = {}
        self.per_bucket: dict[int, Line] = {}

    def key_of(self, bucket_id: int, tier_id: int) -> str:
        b = self.buckets[bucket_id]
        if self.group_by == "bucket":
            return str(b.name)
        if self.group_by == "user":
            return self.owners.get(b.owner_id, f"user {b.owner_id}")
        return self.tier_names.get(tier_id, f"tier {tier_id}")

    def add(self, bucket_id: int, tier_id: int, **amounts: Any) -> None:
        key = self.key_of(bucket_id, tier_id)
        for target in (self.lines.setdefault(key, Line(key)),
                       self.per_bucket.setdefault(bucket_id, Line(str(bucket_id)))):
            for name, value in amounts.items():
                setattr(target, name, getattr(target, name) + value)
            if tier_id in self.prices:
                target.catalogs.add(self.prices[tier_id].catalog.id)

    def add_moves(self, tier_id: int, cost: Decimal) -> None:
        """Lifecycle charges: on the target tier's line, else on one line for every bucket (not per bucket)."""
        key = self.tier_names.get(tier_id, f"tier {tier_id}") if self.group_by == "tier" else LIFECYCLE_KEY
        line = self.lines.setdefault(key, Line(key))
        line.lifecycle += cost
        if tier_id in self.prices:
            line.catalogs.add(self.prices[tier_id].catalog.id)

    def add_usage(self, bucket_id: int, tier_id: int, share: Decimal, reads: bool, n: int, nbytes: int) -> None:
        p = self.prices.get(tier_id)
        if p is None:
            per_1k, retrieval, egress = ZERO, ZERO, ZERO
        else:
            per_1k = p.cls.requests.read_per_1k if reads else p.cls.requests.write_per_1k
            gib = Decimal(nbytes) * share / GIB
            retrieval = gib * p.cls.retrieval_per_gib if reads else ZERO
            egress = band_cost(p.catalog.egress_bands("internet"), gib) if reads else ZERO
        counts = (dict(read_requests=round(n * share), read_bytes=round(nbytes * share)) if reads
                  else dict(write_requests=round(n * share), write_bytes=round(nbytes * share)))
        self.add(bucket_id, tier_id, requests=Decimal(n) * share * per_1k / THOUSAND, retrieval=retrieval,
                 egress=egress, **counts)


def _planned(session: Session, user: User, month: date, now: datetime) -> dict[int, Decimal]:
    """The planner's forecast per bucket for a month: its current volume stored on its tiers, no reads."""
    buckets = catalog_repository.buckets_named(session, None, None if user.is_admin else user.id)
    prices, _ = _tier_prices(session, {t for b in buckets for t in catalog_repository.usage_by_tier(session, b.id)}
                             | {b.tier_id for b in buckets}, _month_end(month))
    out: dict[int, Decimal] = {}
    for b in buckets:
        cost = ZERO
        for tier_id, (nbytes, _) in catalog_repository.usage_by_tier(session, b.id).items():
            p = prices.get(tier_id)
            if p is not None:
                cost += band_cost(p.cls.storage, Decimal(nbytes) / GIB)
        out[b.id] = cost
    return out


def spend(session: Session, user: User, month_text: str, group_by: str, divergence: Decimal = Decimal("0.2"),
          now: datetime | None = None) -> dict[str, Any]:
    """A month's spend so far, its forecast to the month's end, the months before it and the planner's forecast
    beside the actual; owners see their buckets, admins all."""
    if group_by not in GROUPS:
        raise Invalid(f"group_by must be one of {', '.join(GROUPS)}", field="group_by")
    month = parse_month(month_text)
    now = now or datetime.now(UTC)
    if month > now.date().replace(day=1):
        raise Invalid("month is in the future", field="month")
    months = _compute(session, user, _shift(month, -(HISTORY_MONTHS - 1)), month, cast(GroupBy, group_by), now)
    current = months[-1]
    total = sum((line.total for line in current.lines.values()), ZERO)
    full = Decimal(current.days_in_month)
    factor = full / current.days if current.days > 0 else ZERO
    forecast = total * factor if current.days < full else total
    planned = _planned(session, user, month, now)
    names = {b.id: b.name for b in catalog_repository.buckets_named(session, None, None if user.is_admin else user.id)}
    comparison = []
    for bucket_id, plan in sorted(planned.items(), key=lambda kv: names.get(kv[0], "")):
        line = current.by_bucket.get(bucket_id, Line(str(bucket_id)))
        projected = line.total * factor if current.days < full else line.total
        reasons = []
        if plan > 0 and abs(projected - plan) > plan * divergence or plan == 0 and projected > 0:
            for c in COMPONENTS:
                value = getattr(line, c) * (factor if current.days < full else 1)
                if c == "storage" and plan > 0 and abs(value - plan) > plan * divergence:
                    reasons.append(f"storage {float(value):.4f} $ against {float(plan):.4f} $ planned: the stored "
                                   "volume changed during the month")
                elif c != "storage" and value > 0 and value > plan * divergence:
                    what = {"requests": "more requests", "retrieval": "reads of a class with retrieval fees",
                            "egress": "reads leaving the cloud", "lifecycle": "lifecycle moves"}[c]
                    reasons.append(f"{c} {float(value):.4f} $ not in the plan ({what} than planned: the plan "
                                   "assumed no reads)")
        comparison.append({"bucket": names.get(bucket_id, str(bucket_id)), "planned": float(round(plan, 6)),
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
    w.writerow([report["group_by"], *COMPONENTS, "total", "gib_days", "read_requests", "write_requests",
                "read_bytes", "write_bytes", "catalogs"])
    for g in report["groups"]:
        key = str(g["key"])
        safe = "'" + key if key[:1] in ("=", "+", "-", "@", "\t", "\r") else key
        w.writerow([safe, *(g[c] for c in COMPONENTS), g["total"], g["gib_days"], g["read_requests"],
                    g["write_requests"], g["read_bytes"], g["write_bytes"], " ".join(g["catalogs"])])
    w.writerow([])
    w.writerow(["so far", report["so_far"]])
    w.writerow(["forecast to month end", report["forecast"]])
    w.writerow(["not metered", "; ".join(report["not_metered"])])
    return out.getvalue()
