"""Restore batches: pick archived objects, preview time and cost per speed, create, upgrade, retry,
the queue views and the per-tier poll schedules (a batch's exports: restores.exports). Services flush;
the caller commits. Tier requests are made by the sweep (restores.sweep), never here: a batch is issued
by marking its items due now.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.models import Bucket
from tierpilot.drivers.offline import MAX_RESTORE_DAYS
from tierpilot.drivers.registry import TierLike
from tierpilot.kit.db import after_commit, utcnow
from tierpilot.kit.errors import Conflict, Invalid, NotFound
from tierpilot.kit.settings import get_settings
from tierpilot.planner.prices import tier_restore_pricing
from tierpilot.pricing.restores import ZERO_COST, Cost, restore_cost, speeds_offered
from tierpilot.restores import repository
from tierpilot.restores.models import SPEED_RANK, SPEEDS, RestoreBatch, RestoreItem
from tierpilot.restores.schedule import PollSchedule, expected_ready_s, parse_override, tier_schedules
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier
from tierpilot.tiers.schemas import S3_ARCHIVE_CLASSES

log = logging.getLogger(__name__)

MAX_KEYS = 100_000
MAX_PREFIXES = 1000


def is_archived(tier: TierLike, storage_class: str) -> bool:
    """Reads of this object need a restore first."""
    return tier.offline or (tier.driver == "s3" and storage_class in S3_ARCHIVE_CLASSES)


def check_speed(speed: str) -> None:
    if speed not in SPEEDS:
        raise Invalid(f"speed must be one of {', '.join(SPEEDS)}, not {speed!r}")


def check_days(days: int) -> None:
    if not 1 <= days <= MAX_RESTORE_DAYS:
        raise Invalid(f"days must be between 1 and {MAX_RESTORE_DAYS}")


def schedules_for(session: Session, tiers: Sequence[Tier]) -> dict[int, dict[str, PollSchedule]]:
    overrides = repository.schedule_overrides(session, [t.id for t in tiers])
    return {t.id: tier_schedules(t.driver, t.restore_delays, overrides.get(t.id)) for t in tiers}


# selection -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    """Objects of one bucket: listed keys and every key under the given prefixes."""

    bucket: str
    keys: Sequence[str] = ()
    prefixes: Sequence[str] = ()


@dataclass
class Resolved:
    bucket: Bucket
    objects: list[Any]  # catalog rows (id, key, size, tier_id, storage_class, locator, restore_*)
    tiers: dict[int, Tier]
    not_archived: int = 0
    missing_keys: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(int(o.size) for o in self.objects)


def resolve(session: Session, user: User, selection: Selection) -> Resolved:
    """The archived objects a selection names (the user must own the bucket, or be an admin: 403 for a grantee,
    404 for anyone else)."""
    if not selection.keys and not selection.prefixes:
        raise Invalid("give keys or prefixes to restore (a prefix of \"\" is the whole bucket)")
    if len(selection.keys) > MAX_KEYS:
        raise Invalid(f"at most {MAX_KEYS} keys per request; use a prefix for more")
    if len(selection.prefixes) > MAX_PREFIXES:
        raise Invalid(f"at most {MAX_PREFIXES} prefixes per request")
    bucket = catalog_service.owned_bucket(session, selection.bucket, user, "restoring its objects")
    limit = get_settings().restore_max_objects
    rows: dict[int, Any] = {}
    keys = list(dict.fromkeys(selection.keys))
    for row in catalog_repository.restore_candidates_by_keys(session, bucket.id, keys):
        rows[row.id] = row
    found = {row.key for row in rows.values()}
    missing = [k for k in keys if k not in found]
    for prefix in dict.fromkeys(selection.prefixes):
        for row in catalog_repository.restore_candidates_by_prefix(session, bucket.id, prefix, limit + 1):
            rows[row.id] = row
        if len(rows) > limit:
            break
    if len(rows) > limit:
        raise Invalid(f"the selection holds more than {limit} objects; restore it in smaller batches")
    tiers = tiers_repository.tiers_by_id(session, {r.tier_id for r in rows.values()})
    archived = [r for r in rows.values() if is_archived(tiers[r.tier_id], r.storage_class)]
    archived.sort(key=lambda r: r.key)
    return Resolved(bucket=bucket, objects=archived, tiers=tiers, not_archived=len(rows) - len(archived),
                    missing_keys=missing)


# preview ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TierShare:
    tier: Tier
    objects: int
    bytes: int


@dataclass(frozen=True)
class SpeedOption:
    speed: str
    available: bool
    expected_ready_s: float
    expected_ready_at: datetime
    cost: Cost | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Preview:
    bucket: str
    objects: int
    bytes: int
    already_restored: int
    not_archived: int
    missing_keys: list[str]
    days: int
    tiers: list[TierShare]
    speeds: list[SpeedOption]
    sample_keys: list[str]


def _shares(resolved: Resolved) -> list[TierShare]:
    per: dict[int, list[int]] = {}
    for row in resolved.objects:
        acc = per.setdefault(row.tier_id, [0, 0])
        acc[0] += 1
        acc[1] += int(row.size)
    return [TierShare(resolved.tiers[tid], n, b) for tid, (n, b) in sorted(per.items())]


def _options(session: Session, shares: Sequence[TierShare], days: int, now: datetime) -> list[SpeedOption]:
    schedules = schedules_for(session, [s.tier for s in shares])
    pricing = {s.tier.id: tier_restore_pricing(session, s.tier) for s in shares}
    options = []
    for speed in SPEEDS:
        notes: list[str] = []
        ready_s = 0.0
        total: Cost | None = ZERO_COST
        available = True
        for share in shares:
            tp = pricing[share.tier.id]
            if speed not in speeds_offered(tp):
                available = False
                notes.append(f"{share.tier.name} offers no {speed} restores")
                continue
            ready_s = max(ready_s, expected_ready_s(share.tier, tp, schedules[share.tier.id], speed))
            cost = restore_cost(tp, speed, share.objects, share.bytes, days)
            if cost is None:
                if tp.note:
                    notes.append(tp.note)
                total = None
            elif total is not None:
                total = total + cost
        options.append(SpeedOption(speed, available and bool(shares), ready_s, now + timedelta(seconds=ready_s),
                                   total if shares else None, tuple(dict.fromkeys(notes))))
    return options


def preview(session: Session, user: User, selection: Selection, days: int) -> Preview:
    """What restoring a selection means: objects, bytes, and per speed the ready time and the cost."""
    check_days(days)
    resolved = resolve(session, user, selection)
    now = utcnow()
    shares = _shares(resolved)
    restored = sum(1 for r in resolved.objects if r.restore_state == "restored"
                   and r.restore_expiry is not None and r.restore_expiry > now)
    return Preview(bucket=resolved.bucket.name, objects=len(resolved.objects), bytes=resolved.total_bytes,
                   already_restored=restored, not_archived=resolved.not_archived,
                   missing_keys=resolved.missing_keys[:50], days=days, tiers=shares,
                   speeds=_options(session, shares, days, now), sample_keys=[r.key for r in resolved.objects[:20]])


# batches ---------------------------------------------------------------------------------------------


def kick_sweep() -> None:
    """Ask a worker to sweep now instead of at the next beat; harmless when the broker is down."""
    from tierpilot.kit.jobs import kick

    kick("restores.poll_due")


def _default_name(selection: Selection, objects: int) -> str:
    what = selection.prefixes[0] if len(selection.prefixes) == 1 and not selection.keys else (
        selection.keys[0] if len(selection.keys) == 1 and not selection.prefixes else "selection")
    return f"{selection.bucket}/{what or ''} ({objects} objects)"[:200]


def create_batch(session: Session, user: User, selection: Selection, speed: str, days: int,
                 name: str | None = None, now: datetime | None = None) -> RestoreBatch:
    """A batch of every archived object of the selection; all its items are due for submission now."""
    check_speed(speed)
    check_days(days)
    now = now or utcnow()
    resolved = resolve(session, user, selection)
    if not resolved.objects:
        raise Invalid(f"nothing to restore: the selection holds no archived objects "
                      f"({resolved.not_archived} not archived, {len(resolved.missing_keys)} keys not found)")
    shares = _shares(resolved)
    option = next(o for o in _options(session, shares, days, now) if o.speed == speed)
    if not option.available:
        raise Invalid(f"{speed} restores are not offered: {'; '.join(option.notes)}")
    batch = repository.add_batch(session, RestoreBatch(
        owner_id=user.id, name=(name or "").strip()[:200] or _default_name(selection, len(resolved.objects)),
        speed=speed, days=days, state="in_progress",
        source={"bucket": resolved.bucket.name, "prefixes": list(selection.prefixes)[:20],
                "keys": len(selection.keys)},
        object_count=len(resolved.objects), total_bytes=resolved.total_bytes,
        cost_estimate=option.cost.total if option.cost is not None else None,
        created_at=now, estimated_ready_at=option.expected_ready_at, updated_at=now))
    repository.insert_items(session, [
        dict(batch_id=batch.id, owner_id=user.id, object_id=r.id, bucket=resolved.bucket.name, key=r.key,
             size=int(r.size), tier_id=r.tier_id, locator=r.locator, speed=speed, days=days, state="pending",
             next_poll_at=now, poll_count=0, attempts=0)
        for r in resolved.objects])
    repository.insert_counters(session, [
        dict(batch_id=batch.id, tier_id=s.tier.id, objects=s.objects, bytes=s.bytes, pending=s.objects,
             ongoing=0, ready=0, ready_bytes=0, failed=0, expired=0)
        for s in shares])
    after_commit(session, kick_sweep)
    return batch


def own_batch(session: Session, user: User, batch_id: int, for_update: bool = False) -> RestoreBatch:
    """The user's batch (an admin's: any batch); someone else's is reported missing."""
    batch = repository.get_batch(session, batch_id, for_update=for_update)
    if batch is None or (batch.owner_id != user.id and not user.is_admin):
        raise NotFound(f"restore batch {batch_id} not found")
    return batch


def _move(session: Session, batch: RestoreBatch, items: Sequence[Any], to_state: str, values: dict[str, Any]
          ) -> int:
    """Send items of a batch back to ``to_state`` (due now), keeping the counters."""
    if not items:
        return 0
    deltas: dict[tuple[int, int], dict[str, int]] = {}
    for item in items:
        delta = deltas.setdefault((batch.id, item.tier_id), {})
        delta[item.state] = delta.get(item.state, 0) - 1
        delta[to_state] = delta.get(to_state, 0) + 1
    repository.reset_items(session, [i.id for i in items], {"state": to_state, **values})
    repository.add_counters(session, deltas)
    return len(items)


def upgrade_speed(session: Session, user: User, batch_id: int, speed: str) -> RestoreBatch:
    """Raise a running batch's speed: every object not yet readable is asked again at the new speed."""
    check_speed(speed)
    batch = own_batch(session, user, batch_id, for_update=True)
    if batch.state != "in_progress":
        raise Conflict(f"batch {batch.id} is {batch.state}: only a running batch can be sped up")
    if SPEED_RANK[speed] >= SPEED_RANK[batch.speed]:
        raise Conflict(f"batch {batch.id} runs at {batch.speed}: a speed can only be raised "
                       f"(expedited > standard > bulk), never lowered or kept")
    now = utcnow()
    items = repository.items_of_batch_in(session, batch.id, ("pending", "ongoing"))
    # a sweep holding some of these drops its results for them (its claim token is cleared)
    _move(session, batch, items, "pending", {"speed": speed, "next_poll_at": now, "claim_token": None,
                                             "attempts": 0})
    tiers = list(tiers_repository.tiers_by_id(session, {i.tier_id for i in items}).values())
    schedules = schedules_for(session, tiers)
    if tiers:
        ready_s = max(expected_ready_s(t, tier_restore_pricing(session, t), schedules[t.id], speed)
                      for t in tiers)
        batch.estimated_ready_at = now + timedelta(seconds=ready_s)
    batch.speed = speed
    batch.updated_at = now
    session.flush()
    after_commit(session, kick_sweep)
    return batch


def retry_failed(session: Session, user: User, batch_id: int) -> int:
    """Ask the tier again for every failed (or stuck) object of a batch; returns how many."""
    batch = own_batch(session, user, batch_id, for_update=True)
    items = repository.items_of_batch_in(session, batch.id, ("failed",))
    if not items:
        raise Conflict(f"batch {batch.id} has no failed objects to retry")
    now = utcnow()
    count = _move(session, batch, items, "pending", {"next_poll_at": now, "claim_token": None, "attempts": 0,
                                                     "last_error": None, "requested_at": None})
    batch.state = "in_progress"
    batch.error = None
    batch.ready_at = None
    batch.updated_at = now
    session.flush()
    after_commit(session, kick_sweep)
    return count


# queue views -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchView:
    batch: Any  # a RestoreBatch or a row of its columns
    owner: str
    totals: dict[str, int]
    tiers: list[dict[str, Any]]


def _views(session: Session, batches: Sequence[Any]) -> list[BatchView]:
    """Batches with their owner's name and counters: three small queries for any number of batches."""
    rows = repository.counter_rows(session, [b.id for b in batches])
    names = auth_repository.usernames(session, {b.owner_id for b in batches})
    tier_names = tiers_repository.tier_names(session)
    totals: dict[int, dict[str, int]] = {}
    tiers: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        sums = totals.setdefault(row.batch_id, dict.fromkeys(repository.COUNTER_COLUMNS, 0))
        for name in repository.COUNTER_COLUMNS:
            sums[name] += int(getattr(row, name))
        tiers.setdefault(row.batch_id, []).append(
            {"tier": tier_names.get(row.tier_id, str(row.tier_id)), "objects": row.objects, "bytes": row.bytes,
             "ready": row.ready, "failed": row.failed})
    empty = dict.fromkeys(repository.COUNTER_COLUMNS, 0)
    return [BatchView(b, names.get(b.owner_id, "?"), totals.get(b.id, empty), tiers.get(b.id, []))
            for b in batches]


def list_batches(session: Session, user: User, everyone: bool, state: str | None, limit: int,
                 before_id: int | None) -> list[BatchView]:
    """Own batches; an admin asking for ``everyone`` sees the whole queue."""
    owner = None if (everyone and user.is_admin) else user.id
    return _views(session, repository.list_batches(session, owner, state, limit, before_id))


def queue_etag(session: Session, user: User, everyone: bool, suffix: str = "") -> str:
    owner = None if (everyone and user.is_admin) else user.id
    count, last = repository.queue_version(session, owner)
    loose, _ = repository.loose_items_active(session, owner)
    stamp = last.timestamp() if last else 0
    return f'W/"q{owner or 0}-{count}-{stamp:.6f}-{loose}{suffix}"'


@dataclass(frozen=True)
class Summary:
    batches_by_state: dict[str, int]
    tiers: list[dict[str, Any]]
    oldest_in_progress: BatchView | None
    loose_active: int
    loose_oldest: datetime | None


def summary(session: Session, user: User, everyone: bool) -> Summary:
    """Counts by batch state and by tier, the oldest running batch, and loose (gateway) restores."""
    owner = None if (everyone and user.is_admin) else user.id
    names = tiers_repository.tier_names(session)
    tiers = [{"tier": names.get(tid, str(tid)), "objects": int(n or 0), "bytes": int(b or 0),
              "pending": int(p or 0), "ongoing": int(o or 0), "ready": int(r or 0), "failed": int(f or 0),
              "expired": int(e or 0)}
             for tid, n, b, p, o, r, f, e in repository.tier_counts(session, owner)]
    oldest = repository.oldest_in_progress(session, owner)
    loose, loose_oldest = repository.loose_items_active(session, owner)
    return Summary(batches_by_state=repository.batch_state_counts(session, owner), tiers=tiers,
                   oldest_in_progress=_views(session, [oldest])[0] if oldest else None,
                   loose_active=loose, loose_oldest=loose_oldest)


def get_batch(session: Session, user: User, batch_id: int) -> BatchView:
    return _views(session, [own_batch(session, user, batch_id)])[0]


def timeline(session: Session, batch: Any, points: int = 200) -> list[tuple[datetime, int]]:
    """Cumulative objects ready over time, about ``points`` steps (the detail page's chart)."""
    return repository.ready_curve(session, batch.id, points)


def list_items(session: Session, user: User, batch_id: int, state: str | None, after_id: int | None,
               limit: int) -> list[RestoreItem]:
    batch = own_batch(session, user, batch_id)
    return repository.list_items(session, batch.id, state, after_id, limit)


# per-tier schedules ----------------------------------------------------------------------------------


def tier_schedule(session: Session, tier_id: int) -> tuple[Tier, dict[str, PollSchedule], bool]:
    tiers = tiers_repository.tiers_by_id(session, [tier_id])
    if tier_id not in tiers:
        raise NotFound(f"tier {tier_id} not found")
    tier = tiers[tier_id]
    override = repository.get_schedule(session, tier_id)
    return tier, tier_schedules(tier.driver, tier.restore_delays, override.speeds if override else None), \
        override is not None


def set_tier_schedule(session: Session, tier_id: int, speeds: dict[str, Any] | None) -> None:
    """Replace a tier's poll schedule per speed (None: back to the defaults). Affects later polls."""
    if tier_id not in tiers_repository.tiers_by_id(session, [tier_id]):
        raise NotFound(f"tier {tier_id} not found")
    if speeds is None:
        repository.delete_schedule(session, tier_id)
        return
    try:
        clean = parse_override(speeds)
    except ValueError as exc:
        raise Invalid(str(exc)) from exc
    repository.save_schedule(session, tier_id, clean, utcnow())
