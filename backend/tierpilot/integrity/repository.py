"""The fixity log and the audit cursors: the only queries of ``fixity_checks`` and ``fixity_cursors``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from tierpilot.integrity.models import MISMATCH, MISSING, FixityCheck, FixityCursor
from tierpilot.kit.db import utcnow

FAILED = (MISMATCH, MISSING)


def add_checks(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Log a batch of checks (one INSERT)."""
    if rows:
        session.execute(insert(FixityCheck), list(rows))


def failed_before(session: Session, pairs: Sequence[tuple[int, str]]) -> set[tuple[int, str]]:
    """Which (object id, locator) pairs already have a failed check: a finding seen before is not news."""
    if not pairs:
        return set()
    rows = session.execute(select(FixityCheck.object_id, FixityCheck.locator).where(
        FixityCheck.object_id.in_([p[0] for p in pairs]), FixityCheck.result.in_(FAILED)))
    return {(int(o), str(loc)) for o, loc in rows} & set(pairs)


def _latest_ids(bucket_ids: Sequence[int] | None) -> Any:
    q = select(func.max(FixityCheck.id)).group_by(FixityCheck.object_id)
    if bucket_ids is not None:
        q = q.where(FixityCheck.bucket_id.in_(list(bucket_ids)))
    return q


def bucket_stats(session: Session, bucket_ids: Sequence[int] | None = None
                 ) -> dict[int, tuple[int, int, datetime | None]]:
    """Bucket id -> (checks, objects ever checked, last check) of the given buckets or all."""
    q = select(FixityCheck.bucket_id, func.count(FixityCheck.id), func.count(func.distinct(FixityCheck.object_id)),
               func.max(FixityCheck.checked_at)).group_by(FixityCheck.bucket_id)
    if bucket_ids is not None:
        q = q.where(FixityCheck.bucket_id.in_(list(bucket_ids)))
    return {int(b): (int(n), int(o), at) for b, n, o, at in session.execute(q)}


def latest_failures(session: Session, bucket_ids: Sequence[int] | None = None) -> list[FixityCheck]:
    """Each object's latest check where it failed (the caller drops those whose object was rewritten since)."""
    q = (select(FixityCheck).where(FixityCheck.id.in_(_latest_ids(bucket_ids)), FixityCheck.result.in_(FAILED))
         .order_by(FixityCheck.bucket_id, FixityCheck.key))
    return list(session.scalars(q))


def stream(session: Session, bucket_id: int | None, batch: int = 2000) -> Iterator[FixityCheck]:
    """The log oldest first, of one bucket or all, read in batches (keyset by id)."""
    last = 0
    while True:
        q = select(FixityCheck).where(FixityCheck.id > last).order_by(FixityCheck.id).limit(batch)
        if bucket_id is not None:
            q = q.where(FixityCheck.bucket_id == bucket_id)
        rows = list(session.scalars(q))
        if not rows:
            return
        yield from rows
        last = rows[-1].id
        session.expunge_all()


def claim_cursor(session: Session, tier_id: int, holder: str, lease: timedelta, now: datetime | None = None
                 ) -> FixityCursor | None:
    """The tier's cursor leased to ``holder`` (created on first use), or None while another holder's lease runs:
    two sweeps never audit one tier at once."""
    now = now or utcnow()
    if session.get(FixityCursor, tier_id) is None:
        session.add(FixityCursor(tier_id=tier_id, after_id=0, cycle_started_at=now, checked_in_cycle=0,
                                 updated_at=now))
        session.flush()
    taken = session.execute(update(FixityCursor).where(
        FixityCursor.tier_id == tier_id,
        (FixityCursor.lease_until.is_(None)) | (FixityCursor.lease_until < now) | (FixityCursor.holder == holder))
        .values(holder=holder, lease_until=now + lease, updated_at=now)
        .execution_options(synchronize_session=False))
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        return None
    cursor = session.get(FixityCursor, tier_id)
    if cursor is not None:
        session.refresh(cursor)
    return cursor


def advance_cursor(session: Session, tier_id: int, holder: str, after_id: int, checked: int, lease: timedelta,
                   now: datetime | None = None) -> bool:
    """Move the holder's cursor past ``after_id`` (``checked`` more objects this cycle) and renew its lease, in the
    transaction that logs those checks; False when the lease was lost."""
    now = now or utcnow()
    moved = session.execute(update(FixityCursor).where(FixityCursor.tier_id == tier_id,
                                                       FixityCursor.holder == holder)
                            .values(after_id=after_id, checked_in_cycle=FixityCursor.checked_in_cycle + checked,
                                    lease_until=now + lease, updated_at=now)
                            .execution_options(synchronize_session=False))
    return bool(moved.rowcount == 1)  # type: ignore[attr-defined]


def restart_cycle(session: Session, tier_id: int, holder: str, now: datetime | None = None) -> None:
    now = now or utcnow()
    session.execute(update(FixityCursor).where(FixityCursor.tier_id == tier_id, FixityCursor.holder == holder)
                    .values(after_id=0, checked_in_cycle=0, cycle_started_at=now, updated_at=now)
                    .execution_options(synchronize_session=False))


def release_cursor(session: Session, tier_id: int, holder: str) -> None:
    session.execute(update(FixityCursor).where(FixityCursor.tier_id == tier_id, FixityCursor.holder == holder)
                    .values(holder=None, lease_until=None).execution_options(synchronize_session=False))

