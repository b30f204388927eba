"""The only queries of the events domain's tables."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, exists, func, insert, or_, select, update
from sqlalchemy.orm import Session, aliased

from tierpilot.events.models import DeadLetter, EventConfiguration, EventDelivery, EventTarget, OutboxEvent

# targets ---------------------------------------------------------------------------------------------


def get_target(session: Session, target_id: int) -> EventTarget | None:
    return session.get(EventTarget, target_id)


def target_by_name(session: Session, name: str) -> EventTarget | None:
    return session.scalars(select(EventTarget).where(EventTarget.name == name)).first()


def list_targets(session: Session) -> list[EventTarget]:
    return list(session.scalars(select(EventTarget).order_by(EventTarget.name)))


def add_target(session: Session, target: EventTarget) -> EventTarget:
    session.add(target)
    session.flush()
    return target


def delete_target(session: Session, target_id: int) -> None:
    session.execute(delete(EventTarget).where(EventTarget.id == target_id))


# configurations ----------------------------------------------------------------------------------------


def get_config(session: Session, bucket_id: int) -> EventConfiguration | None:
    return session.get(EventConfiguration, bucket_id)


def all_configs(session: Session) -> list[tuple[int, list[Any]]]:
    return [(r[0], r[1]) for r in session.execute(select(EventConfiguration.bucket_id, EventConfiguration.entries))]


def put_config(session: Session, bucket_id: int, entries: list[Any], now: datetime) -> None:
    row = session.get(EventConfiguration, bucket_id, with_for_update=True)
    if row is None:
        session.add(EventConfiguration(bucket_id=bucket_id, entries=entries, updated_at=now))
    else:
        row.entries, row.updated_at = entries, now
    session.flush()


def delete_config(session: Session, bucket_id: int) -> None:
    session.execute(delete(EventConfiguration).where(EventConfiguration.bucket_id == bucket_id))


# the outbox --------------------------------------------------------------------------------------------


def insert_events(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """One statement for a round's events."""
    session.execute(insert(OutboxEvent), list(rows))


def outbox_size(session: Session, cap: int) -> int:
    """Rows in the outbox, counted up to ``cap`` (a full count of a long outbox costs what the cap saves)."""
    capped = select(OutboxEvent.id).limit(cap).subquery()
    return int(session.scalar(select(func.count()).select_from(capped)) or 0)


def claim(session: Session, now: datetime, lease_until: datetime, token: str, limit: int) -> list[OutboxEvent]:
    """Lease up to ``limit`` due rows that head their (target, bucket, key) queue, oldest first: a row is sent only
    once every earlier event of its key for that target is gone (delivered or dead-lettered). PostgreSQL skips
    rows another worker is claiming; the conditional update makes a second claimant of the same row find none."""
    earlier = aliased(OutboxEvent)
    free = or_(OutboxEvent.lease_until.is_(None), OutboxEvent.lease_until < now)
    head = ~exists().where(and_(earlier.target_id == OutboxEvent.target_id, earlier.bucket_id == OutboxEvent.bucket_id,
                                earlier.key == OutboxEvent.key, earlier.id < OutboxEvent.id))
    query = (select(OutboxEvent.id).where(OutboxEvent.next_at <= now, free, head)
             .order_by(OutboxEvent.id).limit(limit))
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True, of=OutboxEvent)
    ids = list(session.scalars(query))
    if not ids:
        return []
    session.execute(update(OutboxEvent).where(OutboxEvent.id.in_(ids), free)
                    .values(lease_until=lease_until, lease_token=token).execution_options(synchronize_session=False))
    rows = list(session.scalars(select(OutboxEvent).where(OutboxEvent.lease_token == token)
                                .order_by(OutboxEvent.id)))
    for row in rows:
        session.expunge(row)
    return rows


def remove_delivered(session: Session, ids: Sequence[int], token: str) -> int:
    result = session.execute(delete(OutboxEvent).where(OutboxEvent.id.in_(ids), OutboxEvent.lease_token == token)
                             .execution_options(synchronize_session=False))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def retry_later(session: Session, row_id: int, token: str, attempts: int, next_at: datetime, error: str) -> None:
    session.execute(update(OutboxEvent).where(OutboxEvent.id == row_id, OutboxEvent.lease_token == token)
                    .values(attempts=attempts, next_at=next_at, lease_until=None, lease_token=None, last_error=error)
                    .execution_options(synchronize_session=False))


def move_to_dead_letters(session: Session, row: OutboxEvent, token: str, attempts: int, error: str,
                         now: datetime) -> bool:
    gone = remove_delivered(session, [row.id], token)
    if gone:
        session.add(DeadLetter(target_id=row.target_id, bucket_id=row.bucket_id, key=row.key, name=row.name,
                               record=row.record, created_at=row.created_at, failed_at=now, attempts=attempts,
                               last_error=error))
        session.flush()
    return bool(gone)


def outbox_stats(session: Session) -> tuple[int, datetime | None, int]:
    """(rows queued, when the oldest was written, rows being retried)."""
    count, oldest = session.execute(select(func.count(), func.min(OutboxEvent.created_at))).one()
    retrying = session.scalar(select(func.count()).where(OutboxEvent.attempts > 0)) or 0
    return int(count), oldest, int(retrying)


# dead letters ------------------------------------------------------------------------------------------


def list_dead_letters(session: Session, limit: int = 1000) -> list[DeadLetter]:
    return list(session.scalars(select(DeadLetter).order_by(DeadLetter.id).limit(limit)))


def count_dead_letters(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(DeadLetter)) or 0)


def replay_dead_letters(session: Session, ids: Sequence[int] | None, now: datetime) -> int:
    """Dead letters (all, or those of ``ids``) back into the outbox, due now, in their order."""
    query = select(DeadLetter).order_by(DeadLetter.id)
    if ids is not None:
        query = query.where(DeadLetter.id.in_(ids))
    letters = list(session.scalars(query.with_for_update()))
    if letters:
        insert_events(session, [{"target_id": d.target_id, "bucket_id": d.bucket_id, "key": d.key, "name": d.name,
                                 "record": d.record, "created_at": d.created_at, "next_at": now} for d in letters])
        session.execute(delete(DeadLetter).where(DeadLetter.id.in_([d.id for d in letters])))
    return len(letters)


# recent deliveries -------------------------------------------------------------------------------------


def add_deliveries(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(insert(EventDelivery), list(rows))


def recent_deliveries(session: Session, bucket_id: int, limit: int) -> list[EventDelivery]:
    return list(session.scalars(select(EventDelivery).where(EventDelivery.bucket_id == bucket_id)
                                .order_by(EventDelivery.id.desc()).limit(limit)))


def prune_deliveries(session: Session, keep: int) -> None:
    """Keep the newest ``keep`` delivery records (of all buckets)."""
    newest = session.scalar(select(func.max(EventDelivery.id)))
    if newest is not None and newest > keep:
        session.execute(delete(EventDelivery).where(EventDelivery.id <= newest - keep))
