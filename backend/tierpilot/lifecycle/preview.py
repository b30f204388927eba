"""What rules will do over the next days: moves and expirations per day and target tier, and what storage
costs per month before and after.

Each object that some action reaches within the horizon is walked through its due dates with the same
decision the sweep makes (expiration wins, the coldest transition wins), so chains (IA on day 30,
GLACIER on day 90) and overlapping rules come out as the executor will run them. New data arriving
later is not forecast. The scan reads the objects due within the horizon, not the bucket.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.models import Bucket
from tierpilot.lifecycle.dates import DAY, due_at, midnight
from tierpilot.lifecycle.due import Action, actions_of, decide, scan
from tierpilot.lifecycle.rules import LifecycleConfig
from tierpilot.planner.prices import tier_prices
from tierpilot.pricing.engine import ZERO
from tierpilot.pricing.lifecycle import Prices
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier

MAX_OBJECTS = 500_000  # objects walked per preview; beyond that the answer says it is truncated
SAMPLES = 20


@dataclass
class MoveAmount:
    objects: int = 0
    bytes: int = 0

    def add(self, size: int) -> None:
        self.objects += 1
        self.bytes += size


@dataclass
class Event:
    when: datetime
    kind: str  # transition | expiration
    key: str
    size: int
    src_tier: int
    dst_tier: int | None
    storage_class: str | None
    bucket: str


@dataclass
class Forecast:
    start: date
    days: int
    moves: dict[tuple[int, int], MoveAmount] = field(default_factory=dict)  # (day, dst tier) -> amount
    expirations: dict[int, MoveAmount] = field(default_factory=dict)  # day -> amount
    placement_delta: dict[int, list[int]] = field(default_factory=dict)  # tier -> sizes in (+) / out (-)
    early_deletion: Decimal = ZERO
    transition_requests: dict[int, int] = field(default_factory=dict)  # dst tier -> count
    samples: list[Event] = field(default_factory=list)
    walked: int = 0
    truncated: bool = False


def _event_times(acts: Sequence[Action], created_at: datetime, now: datetime, horizon: datetime,
                 key: str, size: int, tags: dict[str, Any] | None, storage_class: str) -> list[datetime]:
    """Every moment within [now, horizon] at which one of the actions may fall due for this object."""
    times: set[datetime] = set()
    for a in acts:
        if not a.predicates.matches(key, size, tags):
            continue
        t = due_at(created_at, a.days) if a.days is not None else a.date
        assert t is not None
        t = max(t, now)
        if t <= horizon:
            times.add(t)
    return sorted(times)


def forecast(session: Session, buckets: Sequence[tuple[Bucket, LifecycleConfig]], tiers: Sequence[Tier],
             prices: Prices, now: datetime, days: int = 90) -> Forecast:
    """Walk the objects the actions reach within ``days`` days from ``now``."""
    horizon = midnight(now) + days * DAY - timedelta(microseconds=1)
    out = Forecast(start=midnight(now).date(), days=days)
    by_id = {t.id: t for t in tiers}
    for bucket, config in buckets:
        acts = actions_of(config, bucket, tiers)
        if not acts:
            continue
        seen: set[int] = set()
        for action in acts:
            for row in scan(session, bucket, tiers, action, horizon, None, exclude_queued=False):
                if row.id in seen:
                    continue
                seen.add(row.id)
                out.walked += 1
                if out.walked > MAX_OBJECTS:
                    out.truncated = True
                    return out
                _walk(out, acts, row, bucket.name, now, horizon, by_id, prices)
    return out


def _walk(out: Forecast, acts: Sequence[Action], row: Any, bucket: str, now: datetime, horizon: datetime,
          tiers: dict[int, Tier], prices: Prices) -> None:
    tier_id, cls, entered = int(row.tier_id), str(row.storage_class), row.created_at
    for t in _event_times(acts, row.created_at, now, horizon, row.key, row.size, row.tags, cls):
        action = decide(acts, t, row.key, row.size, row.tags, cls, row.created_at)
        if action is None:
            continue
        day = (midnight(t).date() - out.start).days
        leaving = action.kind == "expiration" or (action.target is not None and action.target.id != tier_id)
        if leaving:
            src = tiers.get(tier_id)
            price = prices.get(tier_id)
            if src is not None and src.min_storage_days and price is not None:
                short = src.min_storage_days - (t - entered).total_seconds() / 86400
                out.early_deletion += price.early_deletion(row.size, short)
        if len(out.samples) < SAMPLES and day == 0:
            out.samples.append(Event(t, action.kind, row.key, row.size, tier_id,
                                     action.target.id if action.target is not None else None,
                                     action.storage_class, bucket))
        if action.kind == "expiration":
            out.expirations.setdefault(day, MoveAmount()).add(row.size)
            out.placement_delta.setdefault(tier_id, []).append(-row.size)
            return
        assert action.target is not None and action.storage_class is not None
        out.moves.setdefault((day, action.target.id), MoveAmount()).add(row.size)
        out.transition_requests[action.target.id] = out.transition_requests.get(action.target.id, 0) + 1
        if action.target.id != tier_id:
            out.placement_delta.setdefault(tier_id, []).append(-row.size)
            out.placement_delta.setdefault(action.target.id, []).append(row.size)
            tier_id, entered = action.target.id, t
        cls = action.storage_class


# ------------------------------------------------------------------------------------------ costs


@dataclass
class TierState:
    objects: int = 0
    bytes: int = 0
    billable: int = 0


def usage(session: Session, bucket_ids: Sequence[int] | None, tiers: Sequence[Tier], prices: Prices
          ) -> dict[int, TierState]:
    """Objects, bytes and billable bytes (minimum billable size and per-object overhead applied) per tier."""
    out: dict[int, TierState] = {}
    for tier in tiers:
        price = prices.get(tier.id)
        floor = price.min_billable_bytes if price is not None else 0
        n, b, billable = catalog_repository.tier_totals(session, tier.id, floor, bucket_ids)
        overhead = price.own_overhead_bytes if price is not None else 0
        out[tier.id] = TierState(n, b, billable + n * overhead)
    return out


def monthly(state: dict[int, TierState], prices: Prices) -> dict[int, Decimal]:
    out: dict[int, Decimal] = {}
    for tier_id, s in state.items():
        price = prices.get(tier_id)
        out[tier_id] = price.monthly(max(0, s.billable), max(0, s.objects)) if price is not None else ZERO
    return out


def after(state: dict[int, TierState], fc: Forecast, prices: Prices) -> dict[int, TierState]:
    """Per-tier usage once the forecast's moves and expirations are done."""
    out = {k: TierState(v.objects, v.bytes, v.billable) for k, v in state.items()}
    for tier_id, sizes in fc.placement_delta.items():
        s = out.setdefault(tier_id, TierState())
        price = prices.get(tier_id)
        for size in sizes:
            sign = 1 if size >= 0 else -1
            billed = price.billable_bytes(abs(size)) if price is not None else abs(size)
            s.objects += sign
            s.bytes += size
            s.billable += sign * billed
    return out


def build(session: Session, buckets: Sequence[tuple[Bucket, LifecycleConfig]], usage_bucket_ids: Sequence[int] | None,
          now: datetime, days: int = 90) -> dict[str, Any]:
    """The preview as the API answers it (see schemas.PreviewOut)."""
    tiers = tiers_repository.list_tiers(session)
    prices = tier_prices(session, tiers)
    names = {t.id: t.name for t in tiers}
    fc = forecast(session, buckets, tiers, prices, now, days)
    before_state = usage(session, usage_bucket_ids, tiers, prices)
    after_state = after(before_state, fc, prices)
    before_cost, after_cost = monthly(before_state, prices), monthly(after_state, prices)
    series = []
    for d in range(days):
        moves = [{"tier": names.get(t, str(t)), "objects": a.objects, "bytes": a.bytes}
                 for (day, t), a in sorted(fc.moves.items()) if day == d]
        exp = fc.expirations.get(d, MoveAmount())
        series.append({"date": fc.start + timedelta(days=d), "moves": moves,
                       "expirations": {"objects": exp.objects, "bytes": exp.bytes}})
    move_totals: dict[int, MoveAmount] = {}
    for (_day, t), a in fc.moves.items():
        total = move_totals.setdefault(t, MoveAmount())
        total.objects += a.objects
        total.bytes += a.bytes
    exp_total = MoveAmount(sum(a.objects for a in fc.expirations.values()),
                           sum(a.bytes for a in fc.expirations.values()))
    transition_usd = sum((p.transition_requests(n) for t, n in fc.transition_requests.items()
                          if (p := prices.get(t)) is not None), ZERO)
    return {
        "generated_at": now, "days": days, "buckets": [b.name for b, _ in buckets],
        "series": series,
        "totals": {"moves": [{"tier": names.get(t, str(t)), "objects": a.objects, "bytes": a.bytes}
                             for t, a in sorted(move_totals.items())],
                   "expirations": {"objects": exp_total.objects, "bytes": exp_total.bytes}},
        "cost": {
            "before_usd_month": sum(before_cost.values(), ZERO),
            "after_usd_month": sum(after_cost.values(), ZERO),
            "transition_requests_usd": transition_usd,
            "early_deletion_usd": fc.early_deletion,
            "tiers": [{"tier": t.name, "price": p.label if (p := prices.get(t.id)) is not None else None,
                       "objects_before": before_state[t.id].objects, "bytes_before": before_state[t.id].bytes,
                       "objects_after": after_state[t.id].objects, "bytes_after": after_state[t.id].bytes,
                       "before_usd_month": before_cost[t.id], "after_usd_month": after_cost[t.id]}
                      for t in tiers],
        },
        "unpriced_tiers": prices.unpriced,
        "objects_walked": fc.walked,
        "truncated": fc.truncated,
        "samples": [{"bucket": e.bucket, "key": e.key, "action": e.kind, "size": e.size,
                     "from_tier": names.get(e.src_tier, ""), "to_tier": names.get(e.dst_tier or 0),
                     "storage_class": e.storage_class} for e in fc.samples],
    }
