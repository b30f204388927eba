"""Fixity audits: re-read objects' blobs at a bounded rate, log every check, alert the owners of what failed.

Checks are logged in small batches as they go (at most ``BATCH_S`` of work is re-done after a crash); a periodic
audit's place in its tier's cycle moves in the same transaction as the checks it logged. Nothing here writes an
object's bytes: a mismatch is reported, never repaired.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.audit.service import csv_cell
from tierpilot.catalog import repository as catalog
from tierpilot.catalog.models import Bucket
from tierpilot.drivers import registry
from tierpilot.drivers.base import BlobNotFound, NotRestored, TierError, TierUnavailable
from tierpilot.drivers.registry import TierSpec
from tierpilot.integrity import fixity
from tierpilot.integrity import repository as checks
from tierpilot.integrity.models import MISSING, OK
from tierpilot.kit import metrics
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.errors import DomainError
from tierpilot.kit.settings import get_settings
from tierpilot.notifications import service as notifications

log = logging.getLogger(__name__)

BATCH, BATCH_S = 64, 1.0  # checks logged per transaction at most, and the longest a batch stays open
PAGE = 500  # candidates read from the catalog at a time
LEASE = timedelta(minutes=10)  # a periodic audit that stops renewing this long is taken over
ARCHIVE_REASON = "offline tier: its objects are checked when recalled, never read for an audit"


class AuditError(DomainError):
    status_code = 404


class Pacer:
    """Holds a reader to ``bytes_per_s`` and ``objects_per_s`` (0: unbounded) since it started."""

    def __init__(self, bytes_per_s: float, objects_per_s: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._bps, self._ops, self._clock, self._sleep = bytes_per_s, objects_per_s, clock, sleep
        self._start = clock()
        self.bytes = self.objects = 0

    @classmethod
    def from_settings(cls) -> Pacer:
        s = get_settings()
        return cls(s.fixity_bytes_per_s, s.fixity_objects_per_s)

    def _wait(self) -> None:
        due = max(self.bytes / self._bps if self._bps else 0.0, self.objects / self._ops if self._ops else 0.0)
        ahead = due - (self._clock() - self._start)
        if ahead > 0:
            self._sleep(ahead)

    def object(self) -> None:
        self.objects += 1
        self._wait()

    def read(self, n: int) -> None:
        self.bytes += n
        self._wait()


@dataclass
class Finding:
    bucket: str
    key: str
    version_id: str
    tier: str
    result: str
    algorithm: str
    expected: str
    found: str | None
    detail: str | None = None


@dataclass
class Summary:
    run_id: str
    started_at: datetime
    finished_at: datetime | None = None
    checked: int = 0
    ok: int = 0
    mismatch: int = 0
    missing: int = 0
    skipped: int = 0  # archived objects a read would need a restore for
    bytes_read: int = 0
    backfilled: int = 0  # objects without a checksum that got one
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # tiers not audited, and why

    @property
    def failed(self) -> bool:
        return bool(self.mismatch or self.missing)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["started_at"] = self.started_at.isoformat()
        out["finished_at"] = self.finished_at.isoformat() if self.finished_at else None
        return out


class _Log:
    """Checks waiting to be logged: flushed every ``BATCH`` checks or ``BATCH_S`` seconds, with a hook that runs in
    the same transaction (a periodic audit's cursor)."""

    def __init__(self, summary: Summary, buckets: dict[int, Bucket], tiers: dict[int, TierSpec],
                 on_flush: Callable[[Session, int, int], bool] | None = None) -> None:
        self._summary, self._buckets, self._tiers, self._on_flush = summary, buckets, tiers, on_flush
        self._rows: list[dict[str, Any]] = []
        self._backfill: list[tuple[int, str, str, str]] = []
        self._opened = time.monotonic()
        self._passed = 0  # objects passed over (archived) since the last flush: the cursor moves past them too
        self.last_id = 0
        self.lost_lease = False

    def pass_over(self, row: Any) -> None:
        self.last_id = row.id
        self._passed += 1

    def add(self, row: Any, verdict: fixity.Verdict | None, now: datetime) -> None:
        result = verdict.result if verdict is not None else MISSING
        exp = fixity.Expected.of(row)
        self._rows.append({
            "run_id": self._summary.run_id, "bucket_id": row.bucket_id, "object_id": row.id, "key": row.key,
            "version_id": row.version_id, "tier_id": row.tier_id, "locator": row.locator, "checked_at": now,
            "result": result,
            "algorithm": verdict.algorithm if verdict else (exp.checksum_algorithm or "MD5"),
            "expected": verdict.expected if verdict else (exp.checksum_value or exp.etag),
            "found": verdict.found if verdict else None, "size": verdict.size if verdict else 0,
            "detail": verdict.detail if verdict else "the blob is not on its tier"})
        if verdict is not None and verdict.backfill is not None:
            self._backfill.append((row.id, row.locator, *verdict.backfill))
        self.last_id = row.id
        if len(self._rows) >= BATCH or time.monotonic() - self._opened >= BATCH_S:
            self.flush()

    def flush(self) -> None:
        rows, self._rows = self._rows, []
        backfill, self._backfill = self._backfill, []
        passed, self._passed = self._passed, 0
        self._opened = time.monotonic()
        if not rows and not passed:
            return
        failed = [r for r in rows if r["result"] != OK]
        with transaction(write=True) as session:
            seen = checks.failed_before(session, [(r["object_id"], r["locator"]) for r in failed])
            checks.add_checks(session, rows)
            for object_id, locator, algorithm, value in backfill:
                self._summary.backfilled += catalog.set_missing_checksum(session, object_id, locator, algorithm,
                                                                         value)
            _alert(session, [r for r in failed if (r["object_id"], r["locator"]) not in seen], self._buckets)
            if self._on_flush is not None and not self._on_flush(session, self.last_id, len(rows) + passed):
                self.lost_lease = True
        for r in rows:
            tier = self._tiers.get(r["tier_id"])
            metrics.FIXITY_CHECKS.labels(tier.name if tier else str(r["tier_id"]), r["result"]).inc()


def _alert(session: Session, failed: list[dict[str, Any]], buckets: dict[int, Bucket]) -> None:
    """One in-app notification per bucket owner for the failures not seen before (a webhook follows if set)."""
    by_bucket: dict[int, list[dict[str, Any]]] = {}
    for r in failed:
        by_bucket.setdefault(r["bucket_id"], []).append(r)
    for bucket_id, rows in by_bucket.items():
        bucket = buckets[bucket_id]
        keys = ", ".join(f"{r['key']} ({r['result']})" for r in rows[:5]) + (" …" if len(rows) > 5 else "")
        log.error("fixity: %d object(s) of bucket %s failed their check: %s", len(rows), bucket.name, keys)
        notifications.notify(session, bucket.owner_id, "fixity.failed",
                             f"{len(rows)} object(s) of {bucket.name} failed a fixity check",
                             f"Their stored bytes no longer match what was written, or are gone: {keys}. "
                             "tierpilot has not changed them.", link=f"/integrity?bucket={bucket.name}",
                             payload={"bucket": bucket.name,
                                      "objects": [{"key": r["key"], "version_id": r["version_id"],
                                                   "result": r["result"]} for r in rows[:100]]})


def _check_one(row: Any, spec: TierSpec, pacer: Pacer) -> fixity.Verdict | None:
    """The verdict on one object's blob, None when the blob is missing; NotRestored and TierUnavailable go up."""
    pacer.object()
    try:
        stream = registry.driver_for(spec).open(row.locator)
    except BlobNotFound:
        return None
    try:
        return fixity.check(stream, fixity.Expected.of(row), pacer.read)
    except BlobNotFound:  # removed while being read
        return None
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _audit(summary: Summary, tiers: dict[int, TierSpec], buckets: dict[int, Bucket], pacer: Pacer, *,
           bucket_id: int | None, after_id: int = 0, limit: int | None = None,
           on_flush: Callable[[Session, int, int], bool] | None = None) -> _Log:
    """Check up to ``limit`` objects of ``tiers`` after ``after_id`` in id order, logging as it goes."""
    logged = _Log(summary, buckets, tiers, on_flush)
    down: set[int] = set()
    left = math.inf if limit is None else limit
    cursor = after_id
    while left > 0 and not logged.lost_lease:
        live = [t for t in tiers if t not in down]
        if not live:
            break
        with transaction() as session:
            page = catalog.fixity_candidates(session, cursor, int(min(PAGE, left)), tier_ids=live,
                                             bucket_id=bucket_id)
            missing_buckets = {r.bucket_id for r in page} - set(buckets)
            buckets.update({b.id: b for b in catalog.buckets_by_id(session, missing_buckets)})
        if not page:
            break
        for row in page:
            cursor = row.id
            if row.tier_id in down:
                continue
            spec = tiers[row.tier_id]
            try:
                verdict = _check_one(row, spec, pacer)
            except NotRestored:
                summary.skipped += 1
                logged.pass_over(row)
                continue
            except TierUnavailable as exc:
                down.add(row.tier_id)
                summary.notes.append(f"tier {spec.name} is unavailable ({exc}): its audit waits for it")
                break
            except (TierError, OSError) as exc:
                down.add(row.tier_id)
                summary.notes.append(f"tier {spec.name} failed a read ({exc!r}): its audit waits for it")
                break
            logged.add(row, verdict, utcnow())
            _count(summary, row, verdict, spec, buckets)
            left -= 1
            if left <= 0 or logged.lost_lease:
                break
    logged.flush()
    return logged


def _count(summary: Summary, row: Any, verdict: fixity.Verdict | None, spec: TierSpec,
           buckets: dict[int, Bucket]) -> None:
    summary.checked += 1
    summary.bytes_read += verdict.size if verdict else 0
    result = verdict.result if verdict else MISSING
    if result == OK:
        summary.ok += 1
        return
    if result == MISSING:
        summary.missing += 1
    else:
        summary.mismatch += 1
    summary.findings.append(Finding(
        bucket=buckets[row.bucket_id].name, key=row.key, version_id=row.version_id, tier=spec.name, result=result,
        algorithm=verdict.algorithm if verdict else "", expected=verdict.expected if verdict else "",
        found=verdict.found if verdict else None,
        detail=verdict.detail if verdict else "the blob is not on its tier"))


def _auditable(tiers: Sequence[TierSpec], summary: Summary) -> dict[int, TierSpec]:
    out = {}
    for t in tiers:
        if t.offline:
            summary.notes.append(f"tier {t.name} skipped: {ARCHIVE_REASON}")
            log.info("fixity: tier %s skipped: %s", t.name, ARCHIVE_REASON)
        else:
            out[t.id] = t
    return out


def run_audit(*, bucket: str | None = None, tier: str | None = None, pacer: Pacer | None = None) -> Summary:
    """Check every object now (of one bucket and/or tier), at the configured rate; `tierpilot fixity run`."""
    summary = Summary(run_id=uuid.uuid4().hex, started_at=utcnow())
    specs = registry.tiers.all()
    if tier is not None:
        specs = [t for t in specs if t.name == tier]
        if not specs:
            raise AuditError(f"no tier named {tier!r}")
    buckets: dict[int, Bucket] = {}
    bucket_id = None
    if bucket is not None:
        with transaction() as session:
            found = catalog.get_bucket_by_name(session, bucket)
        if found is None:
            raise AuditError(f"no bucket named {bucket!r}")
        buckets[found.id] = found
        bucket_id = found.id
    _audit(summary, _auditable(specs, summary), buckets, pacer or Pacer.from_settings(), bucket_id=bucket_id)
    summary.finished_at = utcnow()
    return summary


def _period(spec: TierSpec) -> timedelta:
    s = get_settings()
    return timedelta(days=s.fixity_posix_days if spec.driver == "posix" else s.fixity_cloud_days)


def audit_due(now: datetime | None = None, pacer: Pacer | None = None) -> Summary:
    """Beat's sweep: each online tier checks the share of its objects its cycle has come to (objects × elapsed /
    period), from where its cursor stands; a cycle that reached the end and its period starts over."""
    now = now or utcnow()
    summary = Summary(run_id=uuid.uuid4().hex, started_at=now)
    holder = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"[:64]
    pacer = pacer or Pacer.from_settings()
    with transaction() as session:
        counts = {t: n for t, (_b, n) in catalog.usage_by_tier(session).items()}
    for spec in _auditable(registry.tiers.all(), summary).values():
        with transaction(write=True) as session:
            cursor = checks.claim_cursor(session, spec.id, holder, LEASE, now)
            if cursor is None:
                summary.notes.append(f"tier {spec.name}: another audit holds it")
                continue
            period = _period(spec)
            after, done, started = cursor.after_id, cursor.checked_in_cycle, cursor.cycle_started_at
            want: float = math.ceil(counts.get(spec.id, 0) * min(1.0, (now - started) / period)) - done
            if now - started >= period:  # the cycle is due to end: finish it, or start the next at its end
                if catalog.fixity_candidates(session, after, 1, tier_ids=[spec.id]):
                    want = math.inf
                else:
                    checks.restart_cycle(session, spec.id, holder, now)
                    want = 0
        try:
            if want > 0:
                def advance(session: Session, last_id: int, n: int, tier_id: int = spec.id) -> bool:
                    return checks.advance_cursor(session, tier_id, holder, last_id, n, LEASE)

                _audit(summary, {spec.id: spec}, {}, pacer, bucket_id=None, after_id=after,
                       limit=None if want == math.inf else int(want), on_flush=advance)
        finally:
            with transaction(write=True) as session:
                checks.release_cursor(session, spec.id, holder)
    summary.finished_at = utcnow()
    return summary


# reports -----------------------------------------------------------------------------------------------------


@dataclass
class BucketFixity:
    bucket: str
    objects: int
    checks: int
    checked_objects: int
    last_check_at: datetime | None
    failures: int
    failing: list[dict[str, Any]]


def summaries(session: Session, buckets: Sequence[Bucket], failing_limit: int = 20) -> list[BucketFixity]:
    """Per bucket: checks logged, objects checked, the last check, and the objects whose latest check failed and
    whose bytes are still the ones checked (an overwrite since is a new object to check)."""
    ids = [b.id for b in buckets]
    stats = checks.bucket_stats(session, ids)
    failed = checks.latest_failures(session, ids)
    current = catalog.object_locators(session, [f.object_id for f in failed])
    open_failures: dict[int, list[Any]] = {}
    for f in failed:
        if current.get(f.object_id) == f.locator:
            open_failures.setdefault(f.bucket_id, []).append(f)
    out = []
    for b in buckets:
        n, objects_checked, last = stats.get(b.id, (0, 0, None))
        failing = open_failures.get(b.id, [])
        out.append(BucketFixity(
            bucket=b.name, objects=b.object_count, checks=n, checked_objects=objects_checked, last_check_at=last,
            failures=len(failing),
            failing=[{"key": f.key, "version_id": f.version_id, "result": f.result, "checked_at": f.checked_at,
                      "algorithm": f.algorithm, "expected": f.expected, "found": f.found}
                     for f in failing[:failing_limit]]))
    return out


CSV_COLUMNS = ("id", "checked_at", "bucket", "key", "version_id", "tier", "locator", "result", "algorithm",
               "expected", "found", "bytes_read", "detail", "run_id")


def export_csv(bucket_id: int | None = None) -> Iterator[str]:
    """The fixity log as CSV, oldest first, after a header; read in a transaction of its own (the answer streams
    after the request's transaction ended)."""
    buf = io.StringIO()
    writer = csv.writer(buf)

    def line(values: Sequence[Any]) -> str:
        buf.seek(0)
        buf.truncate()
        writer.writerow(values)
        return buf.getvalue()

    yield line(CSV_COLUMNS)
    tier_names = {t.id: t.name for t in registry.tiers.all()}
    with transaction() as session:
        names = catalog.bucket_names(session, None if bucket_id is None else [bucket_id])
        for c in checks.stream(session, bucket_id):
            yield line((c.id, c.checked_at.isoformat(), names.get(c.bucket_id, c.bucket_id), csv_cell(c.key),
                        c.version_id, tier_names.get(c.tier_id, c.tier_id), csv_cell(c.locator), c.result, c.algorithm,
                        c.expected, c.found or "", c.size, csv_cell(c.detail or ""), c.run_id))
