"""Adopted buckets: which remote bucket of which tier a local bucket mirrors, and the state of its last scan.

One row per local bucket (``tiers adopt``, ``POST /api/tiers/{id}/adopt``). A scan is claimed by moving the row
from ``queued`` to ``running`` in one conditional UPDATE, so a task delivered twice runs once; beat's
``tiers.rescan_adopted`` queues rows whose last scan is older than ``TIERPILOT_ADOPT_RESCAN_S`` and rows whose
runner stopped reporting (a dead worker).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from tierpilot.adoption.models import AdoptedBucket
from tierpilot.kit.db import utcnow

ACTIVE = ("queued", "running")
STALE_AFTER = timedelta(minutes=10)  # a running scan reports at least every few seconds


def get(session: Session, adoption_id: int) -> AdoptedBucket | None:
    return session.get(AdoptedBucket, adoption_id)


def register(session: Session, bucket_id: int, tier_id: int, remote_bucket: str, state: str) -> AdoptedBucket:
    """The row of ``bucket_id`` (created, or pointed at ``remote_bucket`` again) in ``state``."""
    row = session.scalar(select(AdoptedBucket).where(AdoptedBucket.bucket_id == bucket_id))
    now = utcnow()
    if row is None:
        row = AdoptedBucket(bucket_id=bucket_id, tier_id=tier_id, remote_bucket=remote_bucket, state=state,
                            created_at=now, updated_at=now)
        session.add(row)
    else:
        row.tier_id, row.remote_bucket, row.state, row.updated_at = tier_id, remote_bucket, state, now
        row.error = None
    if state == "running":
        row.started_at = now
        row.listed = row.added = row.removed = row.requests = 0
    session.flush()
    return row


def claim(session: Session, adoption_id: int) -> bool:
    """Move a queued row to running; False when another runner has it or it is not queued."""
    now = utcnow()
    result = session.execute(update(AdoptedBucket)
                             .where(AdoptedBucket.id == adoption_id, AdoptedBucket.state == "queued")
                             .values(state="running", started_at=now, updated_at=now, listed=0, added=0, removed=0,
                                     requests=0, error=None)
                             .execution_options(synchronize_session=False))
    return bool(result.rowcount == 1)  # type: ignore[attr-defined]


def report(session: Session, adoption_id: int, *, listed: int, added: int, removed: int, requests: int,
           state: str | None = None, error: str | None = None) -> None:
    """Progress of a running scan; with ``state`` its end (``done`` stamps ``scanned_at``)."""
    now = utcnow()
    values: dict[str, object] = {"listed": listed, "added": added, "removed": removed, "requests": requests,
                                 "updated_at": now}
    if state is not None:
        values["state"] = state
        values["error"] = error
        if state == "done":
            values["scanned_at"] = now
    session.execute(update(AdoptedBucket).where(AdoptedBucket.id == adoption_id).values(**values)
                    .execution_options(synchronize_session=False))


def queue_due(session: Session, period_s: float, now: datetime | None = None) -> list[int]:
    """Queue the rows whose last scan ended ``period_s`` ago (or failed as long ago), and running rows whose
    runner went quiet; returns their ids."""
    now = now or utcnow()
    due = now - timedelta(seconds=period_s)
    rows = list(session.execute(select(AdoptedBucket.id, AdoptedBucket.state).where(
        ((AdoptedBucket.state.in_(("done", "failed"))) & (AdoptedBucket.updated_at <= due))
        | ((AdoptedBucket.state == "running") & (AdoptedBucket.updated_at <= now - STALE_AFTER))
        | ((AdoptedBucket.state == "queued") & (AdoptedBucket.updated_at <= now - STALE_AFTER)))))
    queued = []
    for adoption_id, state in rows:
        result = session.execute(update(AdoptedBucket)
                                 .where(AdoptedBucket.id == adoption_id, AdoptedBucket.state == state)
                                 .values(state="queued", updated_at=now)
                                 .execution_options(synchronize_session=False))
        if result.rowcount == 1:  # type: ignore[attr-defined]
            queued.append(int(adoption_id))
    return queued


def get_by_bucket(session: Session, bucket_id: int) -> AdoptedBucket | None:
    return session.scalar(select(AdoptedBucket).where(AdoptedBucket.bucket_id == bucket_id))



def of_tier(session: Session, tier_id: int) -> list[AdoptedBucket]:
    return list(session.scalars(select(AdoptedBucket).where(AdoptedBucket.tier_id == tier_id)
                                .order_by(AdoptedBucket.id)))
