"""What is due: a rule's actions as creation-time thresholds, and the sweep that queues due objects.

The due-date index is the catalog's (bucket_id, tier_id, created_at) index. An action of a rule is due
for every object created at or before a threshold (``dates.created_threshold``); transitions look only
at tiers and classes warmer than their target. Objects leave those ranges as they move or expire, so a
sweep reads the objects that are due, not the bucket: its cost follows the work, not the bucket size.
Nothing is remembered between sweeps, so an object whose timestamps change is judged by what they say
now. A sweep queues each object version once (``LifecycleMove.dedup_key``), however often it runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Row
from sqlalchemy.orm import Session

from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog.models import Bucket
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.dates import created_threshold
from tierpilot.lifecycle.executor import owner_is_dead
from tierpilot.lifecycle.rules import (
    CLASS_ORDER,
    SMALL_OBJECT_BYTES,
    LifecycleConfig,
    LifecycleRule,
    Predicates,
    class_rank,
    small_objects_blocked,
)
from tierpilot.lifecycle.service import StoredConfigurationInvalid, configured_buckets, load
from tierpilot.lifecycle.validation import class_tier
from tierpilot.notifications import service as notifications
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers.models import Tier

log = logging.getLogger(__name__)

Kind = Literal["transition", "expiration", "nc_transition", "nc_expiration"]


@dataclass(frozen=True)
class Action:
    """One transition or expiration of an enabled rule, with the tier it sends objects to."""

    rule: LifecycleRule
    kind: Kind
    predicates: Predicates
    days: int | None
    date: datetime | None
    storage_class: str | None = None
    target: Tier | None = None
    min_size: int | None = None
    newer_versions: int | None = None  # NewerNoncurrentVersions: that many newer noncurrent ones are kept

    @property
    def noncurrent(self) -> bool:
        return self.kind.startswith("nc_")

    def threshold(self, now: datetime) -> datetime | None:
        return created_threshold(now, self.days, self.date)

    def applies(self, key: str, size: int, tags: dict[str, Any] | None, storage_class: str) -> bool:
        """Whether this action would act on an object like this (its due date aside)."""
        if not self.predicates.matches(key, size, tags):
            return False
        if self.kind in ("expiration", "nc_expiration"):
            return True
        assert self.storage_class is not None
        if class_rank(self.storage_class) <= class_rank(storage_class):
            return False  # transitions only go colder
        return self.min_size is None or size >= self.min_size


def actions_of(config: LifecycleConfig, bucket: Bucket, tiers: Sequence[Tier]) -> list[Action]:
    """The actions of the enabled rules: on current versions, and (``noncurrent``) on noncurrent ones, whose
    days count from when a newer version replaced them."""
    out: list[Action] = []
    for rule in config.rules:
        if not rule.enabled:
            continue
        preds = rule.predicates()
        for t in rule.transitions:
            target = class_tier(tiers, bucket, t.storage_class)
            if target is None:  # a tier removed after the rule was saved: nothing to move to
                continue
            min_size = SMALL_OBJECT_BYTES if small_objects_blocked(config, rule, t.storage_class) else None
            out.append(Action(rule, "transition", preds, t.days, t.date, t.storage_class, target, min_size))
        exp = rule.expiration
        if exp is not None and (exp.days is not None or exp.date is not None):
            out.append(Action(rule, "expiration", preds, exp.days, exp.date))
        for nt in rule.noncurrent_version_transitions:
            target = class_tier(tiers, bucket, nt.storage_class)
            if target is None:
                continue
            min_size = SMALL_OBJECT_BYTES if small_objects_blocked(config, rule, nt.storage_class) else None
            out.append(Action(rule, "nc_transition", preds, nt.noncurrent_days or 0, None, nt.storage_class, target,
                              min_size, nt.newer_noncurrent_versions))
        nce = rule.noncurrent_version_expiration
        if nce is not None and nce.noncurrent_days is not None:
            out.append(Action(rule, "nc_expiration", preds, nce.noncurrent_days, None,
                              newer_versions=nce.newer_noncurrent_versions))
    return out


def decide(actions: Iterable[Action], now: datetime, key: str, size: int, tags: dict[str, Any] | None,
           storage_class: str, created_at: datetime) -> Action | None:
    """The one action due now for an object, as S3 resolves overlapping rules: expiration wins over any
    transition, and of several transitions the coldest class wins."""
    best: Action | None = None
    for a in actions:
        threshold = a.threshold(now)
        if threshold is None or created_at > threshold or not a.applies(key, size, tags, storage_class):
            continue
        if a.kind in ("expiration", "nc_expiration"):
            return a
        if best is None or class_rank(a.storage_class or "") > class_rank(best.storage_class or ""):
            best = a
    return best


def scan(session: Session, bucket: Bucket, tiers: Sequence[Tier], action: Action, now: datetime,
         limit: int | None, exclude_queued: bool = True) -> list[Row[Any]]:
    """The objects an action may be due for: one index range per tier it could move objects from."""
    threshold = action.threshold(now)
    if threshold is None:
        return []
    p = action.predicates
    rows: list[Row[Any]] = []
    for tier in tiers:
        classes_below: list[str] | None = None
        if action.kind == "transition":
            assert action.storage_class is not None
            # every known class warmer than the target, plus classes this scheme does not rank
            warmer = [c for c in CLASS_ORDER if class_rank(c) < class_rank(action.storage_class)]
            served = [str(c) for c in (tier.storage_classes or []) if str(c) not in CLASS_ORDER]
            classes_below = warmer + served
        remaining = None if limit is None else limit - len(rows)
        if remaining is not None and remaining <= 0:
            break
        rows.extend(catalog_repository.due_objects(
            session, bucket.id, tier.id, threshold, prefix=p.prefix, tags=p.tags, size_gt=p.size_greater_than,
            size_lt=p.size_less_than, min_size=action.min_size, classes_below=classes_below,
            limit=remaining, leave_out=repository.has_move if exclude_queued else None))
    return rows


@dataclass
class BucketPlan:
    bucket_id: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    scanned: int = 0


def plan_bucket(session: Session, bucket: Bucket, config: LifecycleConfig, tiers: Sequence[Tier], now: datetime,
                limit: int) -> BucketPlan:
    """The moves a sweep queues for one bucket now: at most ``limit`` objects, oldest first."""
    plan = BucketPlan(bucket.id)
    every = actions_of(config, bucket, tiers)
    acts = [a for a in every if not a.noncurrent]
    seen: set[int] = set()
    for action in acts:
        if len(plan.rows) >= limit:
            break
        for row in scan(session, bucket, tiers, action, now, limit - len(plan.rows)):
            plan.scanned += 1
            if row.id in seen:
                continue
            seen.add(row.id)
            chosen = decide(acts, now, row.key, row.size, row.tags, row.storage_class, row.created_at)
            if chosen is None:
                continue
            plan.rows.append(_move_row(bucket, row, chosen, now))
    if bucket.versioning is not None:
        _plan_versions(session, bucket, config, [a for a in every if a.noncurrent], now, limit, plan)
    for rule in config.rules:
        days = rule.abort_incomplete_multipart_upload_days
        if not rule.enabled or days is None or len(plan.rows) >= limit:
            continue
        threshold = created_threshold(now, days, None)
        assert threshold is not None
        for up in catalog_repository.stale_uploads(session, bucket.id, threshold, rule.predicates().prefix,
                                                   limit - len(plan.rows)):
            plan.rows.append(dict(
                dedup_key=repository.dedup_key("abort_upload", up.upload_id, up.locator), action="abort_upload",
                rule_id=rule.id, bucket_id=bucket.id, key=up.key, upload_id=up.upload_id, src_tier_id=up.tier_id,
                src_class=up.storage_class, src_locator=up.locator, state="queued", created_at=now))
    return plan


def _plan_versions(session: Session, bucket: Bucket, config: LifecycleConfig, actions: list[Action],
                   now: datetime, limit: int, plan: BucketPlan) -> None:
    """Noncurrent versions due for a NoncurrentVersion* action, and delete markers left alone
    (ExpiredObjectDeleteMarker). Versions under object lock are queued too: the catalog's delete refuses
    them when the move runs (and a transition keeps the lock columns)."""
    seen: set[int] = set()
    for action in actions:
        threshold = action.threshold(now)
        if threshold is None or len(plan.rows) >= limit:
            continue
        p = action.predicates
        classes_below = None
        if action.kind == "nc_transition":
            assert action.storage_class is not None
            classes_below = [c for c in CLASS_ORDER if class_rank(c) < class_rank(action.storage_class)]
        rows = catalog_repository.due_versions(
            session, bucket.id, threshold, prefix=p.prefix, tags=p.tags, size_gt=p.size_greater_than,
            size_lt=p.size_less_than, min_size=action.min_size, classes_below=classes_below,
            limit=limit - len(plan.rows), leave_out=repository.has_version_move)
        newer: dict[int, int] = {}
        for row in rows:
            plan.scanned += 1
            if row.id in seen:
                continue
            seen.add(row.id)
            chosen = _decide_version(actions, now, row, newer, session, bucket.id)
            if chosen is not None:
                plan.rows.append(dict(_move_row(bucket, row, chosen, now),
                                      dedup_key=repository.dedup_key(chosen.kind, f"v{row.id}", row.locator)))
    for rule in config.rules:
        exp = rule.expiration
        if not rule.enabled or exp is None or not exp.expired_object_delete_marker or len(plan.rows) >= limit:
            continue
        for marker in catalog_repository.lone_delete_markers(session, bucket.id, rule.predicates().prefix,
                                                             limit - len(plan.rows), repository.has_version_move):
            plan.rows.append(dict(
                dedup_key=repository.dedup_key("expire_marker", f"v{marker.id}", ""), action="expire_marker",
                rule_id=rule.id, bucket_id=bucket.id, key=marker.key, object_id=marker.id, src_tier_id=0,
                src_locator="", state="queued", created_at=now))


def _decide_version(actions: list[Action], now: datetime, row: Row[Any], newer: dict[int, int], session: Session,
                    bucket_id: int) -> Action | None:
    """``decide`` for a noncurrent version: days count from ``noncurrent_since``, and a rule with
    NewerNoncurrentVersions N leaves the N newest noncurrent versions of a key alone."""
    due: list[Action] = []
    for a in actions:
        threshold = a.threshold(now)
        if threshold is None or row.noncurrent_since > threshold or not a.applies(row.key, row.size, row.tags,
                                                                                   row.storage_class):
            continue
        if a.newer_versions is not None:
            if row.id not in newer:
                newer[row.id] = catalog_repository.newer_noncurrent_versions(session, bucket_id, row.key, row.id)
            if newer[row.id] < a.newer_versions:
                continue
        due.append(a)
    # as for current versions: an expiration wins, else the coldest transition
    expiring = next((a for a in due if a.kind == "nc_expiration"), None)
    return expiring or max(due, key=lambda a: class_rank(a.storage_class or ""), default=None)


def _move_row(bucket: Bucket, row: Row[Any], action: Action, now: datetime) -> dict[str, Any]:
    kind = action.kind
    return dict(
        dedup_key=repository.dedup_key(kind, str(row.id), row.locator), action=kind, rule_id=action.rule.id,
        bucket_id=bucket.id, key=row.key, object_id=row.id, src_tier_id=row.tier_id,
        dst_tier_id=action.target.id if action.target is not None else None, src_class=row.storage_class,
        dst_class=action.storage_class, src_locator=row.locator, size=row.size, etag=row.etag, state="queued",
        created_at=now)


@dataclass(frozen=True)
class Skipped:
    """A bucket a sweep left out, and why."""

    bucket_id: int
    bucket: str
    owner_id: int
    reason: str


@dataclass
class SweepResult:
    buckets: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    scanned: int = 0
    queued: dict[str, int] = field(default_factory=dict)
    new_move_ids: list[int] = field(default_factory=list)
    resumed_move_ids: list[int] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def move_ids(self) -> list[int]:
        return self.new_move_ids + self.resumed_move_ids


def sweep(now: datetime | None = None, bucket_id: int | None = None, limit: int | None = None) -> SweepResult:
    """Queue the moves due now (per bucket, at most ``limit`` objects) and collect open moves nobody runs.

    Queuing is idempotent: objects already queued are skipped, so sweeps may overlap or repeat.
    """
    started = time.perf_counter()
    now = now or utcnow()
    limit = limit or get_settings().lifecycle_batch
    result = SweepResult()
    configured: list[tuple[int, LifecycleConfig]] = []
    with transaction() as session:
        tiers = tiers_repository.list_tiers(session)
        for t in tiers:
            session.expunge(t)
        for b, c in configured_buckets(session, bucket_id):
            try:
                configured.append((b.id, load(c)))
            except StoredConfigurationInvalid as exc:
                result.skipped.append(Skipped(b.id, b.name, b.owner_id, exc.message))
    for bid, config in configured:
        # one bucket that fails (a rule no sweep can run, a bug) is skipped; the others are still swept
        try:
            _sweep_bucket(bid, config, tiers, now, limit, result)
        except Exception as exc:
            log.exception("lifecycle sweep: bucket %d skipped", bid)
            with transaction() as session:
                bucket = catalog_repository.get_bucket(session, bid)
                if bucket is not None:
                    result.skipped.append(Skipped(bid, bucket.name, bucket.owner_id, f"{type(exc).__name__}: {exc}"))
    for skipped in result.skipped:
        _report(skipped)
    result.resumed_move_ids = resumable(now, bucket_id, exclude=set(result.new_move_ids))
    result.seconds = time.perf_counter() - started
    return result


def _sweep_bucket(bid: int, config: LifecycleConfig, tiers: Sequence[Tier], now: datetime, limit: int,
                  result: SweepResult) -> None:
    with transaction() as session:
        bucket = catalog_repository.get_bucket(session, bid)
        if bucket is None:
            return
        plan = plan_bucket(session, bucket, config, tiers, now, limit)
    result.buckets += 1
    result.scanned += plan.scanned
    if plan.rows:
        with transaction(write=True) as session:
            new = repository.insert_moves(session, plan.rows)
        result.new_move_ids.extend(new)
        for r in plan.rows:
            result.queued[r["action"]] = result.queued.get(r["action"], 0) + 1


def _report(skipped: Skipped) -> None:
    """Log a skipped bucket and tell its owner (once a day, not once a sweep)."""
    log.error("lifecycle sweep skipped bucket %r: %s", skipped.bucket, skipped.reason)
    try:
        with transaction(write=True) as session:
            notifications.notify_once(
                session, skipped.owner_id, "lifecycle.skipped",
                f"Lifecycle rules of bucket {skipped.bucket} were not run",
                f"{skipped.reason[:500]}. Replace or delete the bucket's lifecycle configuration.",
                link=f"/lifecycle?bucket={skipped.bucket}")
    except Exception:
        log.exception("lifecycle sweep: could not notify the owner of bucket %r", skipped.bucket)


def resumable(now: datetime, bucket_id: int | None = None, exclude: set[int] | None = None) -> list[int]:
    """Open moves to hand out again: never started or lost in the broker, held by a worker that died or
    whose lease ran out, failed and due for another try."""
    s = get_settings()
    with transaction() as session:
        # a queued move nobody started within a lease's time lost its message (or its worker)
        ids = repository.moves_to_resume(session, now, now - timedelta(seconds=s.lifecycle_lease_s),
                                         s.lifecycle_batch, bucket_id)
        leased = repository.leased_moves(session, now, bucket_id)
    ids += [move_id for move_id, owner in leased if owner_is_dead(owner)]
    return sorted(set(ids) - (exclude or set()))
