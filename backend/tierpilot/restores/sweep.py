"""The worker side of restores: sweeps of due rows that submit, poll and expire (own transactions).

Every item carries its due time (``next_poll_at``). A sweep claims a chunk of due rows in one short
transaction (their due time moves to a lease end and they carry the sweep's token), calls the tiers
for the whole chunk from a bounded thread pool with no transaction open, then writes the outcomes in a
second short transaction, for the rows it still holds. So:

- two sweeps never work on one row at once (the claim is one conditional UPDATE; PostgreSQL adds
  FOR UPDATE SKIP LOCKED so concurrent sweeps take disjoint rows without waiting);
- a sweep killed mid-chunk loses nothing: its rows fall due again when the lease ends;
- nothing waits in the broker: a restarted worker or broker finds every due time in the database.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import repeat
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.catalog import events as object_events
from tierpilot.catalog import repository as catalog_repository
from tierpilot.drivers.base import (
    BlobNotFound,
    NotArchived,
    RestoreInProgress,
    RestoreStatus,
    TierDriver,
)
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings
from tierpilot.notifications import service as notifications
from tierpilot.planner.prices import tier_restore_pricing
from tierpilot.pricing.restores import RestorePricing
from tierpilot.restores import repository
from tierpilot.restores.models import ACTIVE_ITEM_STATES, RestoreBatch
from tierpilot.restores.schedule import PollSchedule, expected_ready_s, next_poll_at, tier_schedules
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier

log = logging.getLogger(__name__)

THROTTLE_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded",
                            "TooManyRequestsException", "RequestThrottled", "ServiceUnavailable",
                            "RequestThrottledException", "503"})
_IN_CALL_BACKOFF = (0.2, 0.5, 1.0)  # seconds between tries of one throttled call


def is_throttled(exc: BaseException) -> bool:
    """An endpoint asking us to slow down (botocore's error code or HTTP status, anywhere in the chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in THROTTLE_CODES or status in (429, 503):
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def call_with_backoff(fn: Callable[[], RestoreStatus], sleep: Callable[[float], None] = time.sleep) -> RestoreStatus:
    """Call ``fn``; retry a throttled call a few times with growing pauses, then give up (raise)."""
    for pause in _IN_CALL_BACKOFF:
        try:
            return fn()
        except Exception as exc:
            if not is_throttled(exc):
                raise
            sleep(pause)
    return fn()


def retry_delay(attempts: int) -> timedelta:
    """Wait before the next try after ``attempts`` failed ones: 2, 4, 8 ... seconds, at most 5 minutes."""
    return timedelta(seconds=min(2 ** max(attempts, 1), 300))


# outcomes of one tier call (computed in pool threads, no database) -------------------------------------


@dataclass(frozen=True)
class Outcome:
    item_id: int
    kind: str  # accepted | ready | ongoing | resubmit | retry | failed | expired | extended
    at: datetime
    expiry: datetime | None = None
    ready_hint: datetime | None = None
    error: str | None = None


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:1000]


def submit_one(item: Any, driver: TierDriver, clock: Callable[[], datetime] = utcnow) -> Outcome:
    """Ask the tier for a restore (new, upgrade, or extension of a readable copy)."""
    try:
        status = call_with_backoff(lambda: driver.restore(item.locator, item.days, item.speed))
    except RestoreInProgress:
        # asked before (by us before a crash, or through the gateway) at this speed or faster
        return Outcome(item.id, "accepted", clock())
    except (BlobNotFound, NotArchived, ValueError) as exc:
        return Outcome(item.id, "failed", clock(), error=_describe(exc))
    except Exception as exc:
        return Outcome(item.id, "retry", clock(), error=_describe(exc))
    now = clock()
    if status.restored:
        return Outcome(item.id, "ready", now, expiry=status.expiry)
    if status.ongoing:
        return Outcome(item.id, "accepted", now, ready_hint=status.ready_at)
    return Outcome(item.id, "retry", now, error="the tier neither started nor completed the restore")


def poll_one(item: Any, driver: TierDriver, clock: Callable[[], datetime] = utcnow) -> Outcome:
    """Ask the tier whether a running restore finished."""
    try:
        status = call_with_backoff(lambda: driver.restore_status(item.locator))
    except BlobNotFound as exc:
        return Outcome(item.id, "failed", clock(), error=_describe(exc))
    except Exception as exc:
        return Outcome(item.id, "ongoing", clock(), error=_describe(exc))
    now = clock()
    if status.restored:
        return Outcome(item.id, "ready", now, expiry=status.expiry)
    if status.ongoing:
        return Outcome(item.id, "ongoing", now, ready_hint=status.ready_at)
    # the tier forgot the request (e.g. an endpoint lost it): ask again
    return Outcome(item.id, "resubmit", now, error="the tier reports no restore in progress")


def expire_one(item: Any, driver: TierDriver, clock: Callable[[], datetime] = utcnow) -> Outcome:
    """Look at a copy past its expiry: gone (the tier drops it on this look), or extended meanwhile."""
    try:
        status = call_with_backoff(lambda: driver.restore_status(item.locator))
    except BlobNotFound:
        return Outcome(item.id, "expired", clock())
    except Exception as exc:
        return Outcome(item.id, "extended", clock(), expiry=item.expires_at, error=_describe(exc))
    now = clock()
    if status.restored and status.expiry is not None and status.expiry > now:
        return Outcome(item.id, "extended", now, expiry=status.expiry)
    return Outcome(item.id, "expired", now)


# the sweep loop -----------------------------------------------------------------------------------------


@dataclass
class SweepStats:
    claimed: int = 0
    tier_requests: int = 0
    chunks: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    dropped: int = 0  # outcomes of rows another sweep took over after our lease ran out
    batches_done: list[int] = field(default_factory=list)
    notifications: int = 0
    requests_per_chunk: list[int] = field(default_factory=list)

    def count(self, kind: str) -> None:
        self.outcomes[kind] = self.outcomes.get(kind, 0) + 1


@dataclass(frozen=True)
class TierContext:
    tier: Tier
    driver: TierDriver
    schedules: dict[str, PollSchedule]
    pricing: RestorePricing


def _tier_contexts(session: Session, tier_ids: Iterable[int]) -> dict[int, TierContext]:
    tiers = tiers_repository.tiers_by_id(session, tier_ids)
    overrides = repository.schedule_overrides(session, tiers.keys())
    out = {}
    for tid, tier in tiers.items():
        out[tid] = TierContext(tier, driver_for(tier), tier_schedules(tier.driver, tier.restore_delays,
                                                                       overrides.get(tid)),
                               tier_restore_pricing(session, tier))
    return out


def run(states: Sequence[str], *, budget_s: float = 50.0, chunk: int | None = None,
        clock: Callable[[], datetime] = utcnow) -> SweepStats:
    """Claim due items in ``states`` chunk by chunk until none is due or the time budget is spent."""
    settings = get_settings()
    chunk = chunk or settings.restore_chunk
    lease = timedelta(seconds=settings.restore_lease_s)
    token = uuid.uuid4().hex
    stats = SweepStats()
    deadline = time.monotonic() + budget_s
    with ThreadPoolExecutor(max_workers=settings.restore_concurrency, thread_name_prefix="restore") as pool:
        while time.monotonic() < deadline:
            now = clock()
            with transaction(write=True) as session:
                claimed = repository.claim_due(session, states, now, token, now + lease, chunk)
                contexts = _tier_contexts(session, {r.tier_id for r in claimed}) if claimed else {}
                for ctx in contexts.values():
                    session.expunge(ctx.tier)
            if not claimed:
                break
            stats.claimed += len(claimed)
            stats.chunks += 1
            drivers = {tid: ctx.driver for tid, ctx in contexts.items()}
            outcomes = list(pool.map(_work, claimed, [drivers[r.tier_id] for r in claimed], repeat(clock)))
            stats.tier_requests += len(outcomes)
            stats.requests_per_chunk.append(len(outcomes))
            with transaction(write=True) as session:
                _apply(session, token, outcomes, contexts, stats, clock())
            if len(claimed) < chunk:
                break
    return stats


def _work(row: Any, driver: TierDriver, clock: Callable[[], datetime]) -> Outcome:
    if row.state == "pending":
        return submit_one(row, driver, clock)
    if row.state == "ongoing":
        return poll_one(row, driver, clock)
    return expire_one(row, driver, clock)


def poll_due(**kwargs: Any) -> SweepStats:
    """Submit new items and poll running ones that are due."""
    return run(ACTIVE_ITEM_STATES, **kwargs)


def expire_due(**kwargs: Any) -> SweepStats:
    """Retire restored copies whose expiry passed (the catalog stops calling them readable)."""
    return run(("ready",), **kwargs)


# writing outcomes ---------------------------------------------------------------------------------------


@dataclass
class _Writes:
    items: list[dict[str, Any]] = field(default_factory=list)
    catalog: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[tuple[int, int], dict[str, int]] = field(default_factory=dict)
    batches: set[int] = field(default_factory=set)
    events: list[tuple[Any, str, datetime | None]] = field(default_factory=list)  # (item, event name, expiry)

    def move(self, row: Any, to_state: str) -> None:
        if row.batch_id is None or to_state == row.state:
            return
        delta = self.counters.setdefault((row.batch_id, row.tier_id), {})
        delta[row.state] = delta.get(row.state, 0) - 1
        delta[to_state] = delta.get(to_state, 0) + 1
        if "ready" in (row.state, to_state):
            sign = 1 if to_state == "ready" else -1
            delta["ready_bytes"] = delta.get("ready_bytes", 0) + sign * int(row.size)
        self.batches.add(row.batch_id)

    def set_catalog(self, row: Any, state: str | None, expiry: datetime | None) -> None:
        if row.object_id is not None:
            self.catalog.append({"_object_id": row.object_id, "_locator": row.locator, "restore_state": state,
                                 "restore_speed": row.speed if state else None, "restore_expiry": expiry})
            name = _RESTORE_EVENTS.get(state)
            if name is not None:
                self.events.append((row, name, expiry))


# the S3 event of a restore state the catalog takes (None: the restored copy expired)
_RESTORE_EVENTS = {"ongoing": "ObjectRestore:Post", "restored": "ObjectRestore:Completed",
                   None: "ObjectRestore:Delete"}


def restore_event_data(expiry: datetime | None) -> dict[str, Any]:
    """What S3 adds to a restore's event: when the restored copy expires."""
    if expiry is None:
        return {}
    return {"glacierEventData": {"restoreEventData": {
        "lifecycleRestorationExpiryTime": expiry.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "lifecycleRestoreStorageClass": "STANDARD"}}}


def restore_events(session: Session, items: Sequence[tuple[Any, str, datetime | None]]) -> None:
    """The S3 events of restore items' changes, in the transaction that makes them."""
    if not items:
        return
    objects = catalog_repository.objects_by_id(session, [item.object_id for item, _name, _expiry in items])
    changes = []
    for item, name, expiry in items:
        obj = objects.get(item.object_id)
        if obj is None or not object_events.watched(obj.bucket_id):
            continue
        changes.append(object_events.Change(obj.bucket_id, obj.key, name, obj.size, obj.etag, obj.version_id,
                                            restore_event_data(expiry)))
    object_events.emit(session, changes)


def _first_poll(requested_at: datetime, schedule: PollSchedule, hint: datetime | None) -> datetime:
    """The first grid point of the schedule at which the tier's expected completion has passed."""
    wait = (hint - requested_at).total_seconds() if hint is not None else 0.0
    return requested_at + timedelta(seconds=schedule.first_offset_at_or_after(max(wait, 0.0)))


def _apply(session: Session, token: str, outcomes: Sequence[Outcome], contexts: dict[int, TierContext],
           stats: SweepStats, now: datetime) -> None:
    settings = get_settings()
    rows = {r.id: r for r in repository.owned_items(session, [o.item_id for o in outcomes], token)}
    writes = _Writes()
    for outcome in outcomes:
        row = rows.get(outcome.item_id)
        if row is None:
            stats.dropped += 1
            continue
        ctx = contexts[row.tier_id]
        schedule = ctx.schedules[row.speed]
        # only what changes is written; the due time always (the claim's lease end is not a due time)
        values: dict[str, Any] = {"_id": row.id, "claim_token": None, "last_error": outcome.error}
        kind = outcome.kind
        if kind == "ongoing" and row.requested_at is not None \
                and (now - row.requested_at).total_seconds() > schedule.max_s:
            kind = "stuck"
        stats.count(kind)
        if kind == "accepted":
            values.update(state="ongoing", requested_at=outcome.at, attempts=row.attempts + 1,
                          next_poll_at=_first_poll(outcome.at, schedule, outcome.ready_hint),
                          expected_ready_at=outcome.ready_hint or outcome.at + timedelta(
                              seconds=expected_ready_s(ctx.tier, ctx.pricing, ctx.schedules, row.speed)))
            writes.move(row, "ongoing")
            writes.set_catalog(row, "ongoing", None)
        elif kind == "ready":
            values.update(state="ready", ready_at=outcome.at, expires_at=outcome.expiry,
                          next_poll_at=outcome.expiry, poll_count=row.poll_count + (row.state == "ongoing"))
            if row.requested_at is None:  # readable at once: the request is this moment
                values["requested_at"] = outcome.at
            writes.move(row, "ready")
            writes.set_catalog(row, "restored", outcome.expiry)
        elif kind == "ongoing":
            assert row.requested_at is not None
            at = next_poll_at(row.requested_at, now, schedule)
            if outcome.ready_hint is not None and outcome.ready_hint > at:
                at = _first_poll(row.requested_at, schedule, outcome.ready_hint)
            values.update(poll_count=row.poll_count + 1, next_poll_at=at)
        elif kind == "stuck":
            values.update(state="failed", next_poll_at=None, poll_count=row.poll_count + 1,
                          last_error=f"no progress after {schedule.max_s / 3600:g} h, the tier's maximum for "
                                     f"{row.speed} restores; retry to ask again")
            writes.move(row, "failed")
            writes.set_catalog(row, "failed", None)
        elif kind in ("retry", "resubmit"):
            attempts = row.attempts + 1
            if attempts >= settings.restore_max_attempts:
                values.update(state="failed", next_poll_at=None, attempts=attempts,
                              last_error=f"gave up after {attempts} attempts: {outcome.error}")
                writes.move(row, "failed")
                writes.set_catalog(row, "failed", None)
            else:
                values.update(state="pending", attempts=attempts, next_poll_at=now + retry_delay(attempts))
                writes.move(row, "pending")
        elif kind == "failed":
            values.update(state="failed", next_poll_at=None)
            writes.move(row, "failed")
            writes.set_catalog(row, "failed", None)
        elif kind == "extended":
            values.update(expires_at=outcome.expiry, next_poll_at=outcome.expiry)
            if outcome.error is None:
                writes.set_catalog(row, "restored", outcome.expiry)
            else:  # could not look: try again in a minute
                values.update(next_poll_at=now + timedelta(minutes=1))
        elif kind == "expired":
            values.update(state="expired", next_poll_at=None)
            writes.move(row, "expired")
            writes.set_catalog(row, None, None)
        writes.items.append(values)
    repository.write_items(session, writes.items)
    catalog_repository.set_restore_state(session, writes.catalog)
    restore_events(session, writes.events)
    repository.add_counters(session, writes.counters)
    settle_batches(session, writes.batches, now, stats)


def _derive_state(totals: dict[str, int]) -> str:
    if totals["pending"] or totals["ongoing"]:
        return "in_progress"
    if totals["failed"]:
        return "failed"
    if totals["ready"]:
        return "ready"
    return "expired"


def settle_batches(session: Session, batch_ids: Iterable[int], now: datetime, stats: SweepStats) -> None:
    """Bring batches in line with their counters; notify the owner when one completes or fails."""
    ids = sorted(set(batch_ids))
    if not ids:
        return
    totals = repository.batch_totals(session, ids)
    for batch in repository.lock_batches(session, ids):
        t = totals[batch.id]
        if batch.submitted_at is None and t["pending"] == 0:
            batch.submitted_at = now
        state = _derive_state(t)
        if state != batch.state:
            if state == "ready":
                batch.ready_at = now
                batch.expires_at = repository.earliest_expiry(session, batch.id)
                batch.error = None
            elif state == "failed":
                batch.error = f"{t['failed']} of {t['objects']} objects failed; retry them from the batch page"
            if batch.state == "in_progress" and state in ("ready", "failed"):
                _notify(session, batch, state, t, now)
                stats.notifications += 1
                stats.batches_done.append(batch.id)
            batch.state = state
        elif state == "ready":
            batch.expires_at = repository.earliest_expiry(session, batch.id)
        batch.updated_at = now
    session.flush()


def _notify(session: Session, batch: RestoreBatch, state: str, t: dict[str, int], now: datetime) -> None:
    payload = {"batch_id": batch.id, "name": batch.name, "state": state, "objects": t["objects"],
               "bytes": t["bytes"], "ready": t["ready"], "failed": t["failed"], "speed": batch.speed,
               "expires_at": batch.expires_at.isoformat() if batch.expires_at else None}
    if state == "ready":
        title = f"Restore batch “{batch.name}” is ready"
        until = f" until {batch.expires_at:%Y-%m-%d %H:%M} UTC" if batch.expires_at else ""
        body = f"All {t['objects']} objects are readable through the gateway{until}."
        kind = "restore.ready"
    else:
        title = f"Restore batch “{batch.name}” finished with failures"
        body = f"{t['failed']} of {t['objects']} objects could not be restored; {t['ready']} are readable."
        kind = "restore.failed"
    notifications.notify(session, batch.owner_id, kind, title, body, link=f"/restores?batch={batch.id}",
                         payload=payload, now=now)
