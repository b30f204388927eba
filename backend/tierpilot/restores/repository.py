"""Only this module queries the restore tables (the catalog's restore columns are the catalog repository's)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.orm import Session

from tierpilot.kit.db import epoch_s
from tierpilot.restores.models import (
    ACTIVE_ITEM_STATES,
    RestoreBatch,
    RestoreBatchTier,
    RestoreItem,
    RestoreSchedule,
)

ITEMS = cast(Table, RestoreItem.__table__)
BATCHES = cast(Table, RestoreBatch.__table__)
COUNTERS = cast(Table, RestoreBatchTier.__table__)

# what a sweep's tier call needs of a claimed item, and what writing its outcome needs (few datetimes:
# converting them dominates the cost of a chunk)
CLAIM_COLUMNS = (RestoreItem.id, RestoreItem.tier_id, RestoreItem.locator, RestoreItem.speed, RestoreItem.days,
                 RestoreItem.state, RestoreItem.expires_at)
OWNED_COLUMNS = (RestoreItem.id, RestoreItem.batch_id, RestoreItem.object_id, RestoreItem.tier_id,
                 RestoreItem.locator, RestoreItem.speed, RestoreItem.state, RestoreItem.size,
                 RestoreItem.requested_at, RestoreItem.poll_count, RestoreItem.attempts)


# poll schedules --------------------------------------------------------------------------------------


def schedule_overrides(session: Session, tier_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    rows = session.execute(select(RestoreSchedule.tier_id, RestoreSchedule.speeds)
                           .where(RestoreSchedule.tier_id.in_(list(set(tier_ids)))))
    return {tier_id: dict(speeds) for tier_id, speeds in rows}


def get_schedule(session: Session, tier_id: int) -> RestoreSchedule | None:
    return session.get(RestoreSchedule, tier_id)


def save_schedule(session: Session, tier_id: int, speeds: dict[str, Any], now: datetime) -> None:
    row = session.get(RestoreSchedule, tier_id)
    if row is None:
        session.add(RestoreSchedule(tier_id=tier_id, speeds=speeds, updated_at=now))
    else:
        row.speeds = speeds
        row.updated_at = now
    session.flush()


def delete_schedule(session: Session, tier_id: int) -> None:
    row = session.get(RestoreSchedule, tier_id)
    if row is not None:
        session.delete(row)
        session.flush()


# creation --------------------------------------------------------------------------------------------


def add_batch(session: Session, batch: RestoreBatch) -> RestoreBatch:
    session.add(batch)
    session.flush()
    return batch


def insert_items(session: Session, rows: Sequence[dict[str, Any]], chunk: int = 5000) -> None:
    for start in range(0, len(rows), chunk):
        session.execute(ITEMS.insert(), list(rows[start:start + chunk]))


def insert_counters(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(COUNTERS.insert(), list(rows))


def add_counters(session: Session, deltas: Mapping[tuple[int, int], Mapping[str, int]]) -> None:
    """Move per-(batch, tier) counters by the given deltas (one UPDATE per pair)."""
    table = COUNTERS
    for (batch_id, tier_id), delta in deltas.items():
        values = {name: table.c[name] + amount for name, amount in delta.items() if amount}
        if values:
            session.execute(update(table).where(table.c.batch_id == batch_id, table.c.tier_id == tier_id)
                            .values(**values))


# the sweep -------------------------------------------------------------------------------------------


def claim_due(session: Session, states: Sequence[str], now: datetime, token: str, lease_until: datetime,
              limit: int) -> list[Any]:
    """Claim up to ``limit`` due items in ``states``: their due time moves to the lease end and they carry
    ``token`` (a ready item is due when its copy expires).

    PostgreSQL skips rows another sweep has locked (FOR UPDATE SKIP LOCKED); SQLite runs one writer
    at a time, and the outer ``next_poll_at <= now`` makes the UPDATE a conditional claim either way.
    """
    due = (select(RestoreItem.id).where(RestoreItem.next_poll_at <= now, RestoreItem.state.in_(list(states)))
           .order_by(RestoreItem.next_poll_at).limit(limit).with_for_update(skip_locked=True))
    stmt = (update(RestoreItem)
            .where(RestoreItem.id.in_(due.scalar_subquery()), RestoreItem.next_poll_at <= now)
            .values(claim_token=token, next_poll_at=lease_until)
            .returning(*CLAIM_COLUMNS)
            .execution_options(synchronize_session=False))
    return list(session.execute(stmt))


def owned_items(session: Session, ids: Sequence[int], token: str) -> list[Any]:
    """The items of ``ids`` still claimed by ``token``, locked until the transaction ends."""
    rows: list[Any] = []
    for start in range(0, len(ids), 1000):
        part = list(ids[start:start + 1000])
        rows.extend(session.execute(select(*OWNED_COLUMNS)
                                    .where(RestoreItem.id.in_(part), RestoreItem.claim_token == token)
                                    .with_for_update()))
    return rows


def write_items(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    """Write outcomes (``_id`` plus the columns that change), one executemany per set of columns."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(sorted(k for k in row if k != "_id")), []).append(row)
    table = ITEMS
    for columns, group in groups.items():
        stmt = update(table).where(table.c.id == bindparam("_id")).values({c: bindparam(c) for c in columns})
        session.execute(stmt, group)


COUNTER_COLUMNS = ("objects", "bytes", "pending", "ongoing", "ready", "ready_bytes", "failed", "expired")


def counter_rows(session: Session, batch_ids: Sequence[int]) -> list[Any]:
    """(batch_id, tier_id, objects, bytes, pending, ongoing, ready, ready_bytes, failed, expired) rows."""
    if not batch_ids:
        return []
    c = RestoreBatchTier
    return list(session.execute(
        select(c.batch_id, c.tier_id, *(getattr(c, name) for name in COUNTER_COLUMNS))
        .where(c.batch_id.in_(list(batch_ids))).order_by(c.batch_id, c.tier_id)))


def batch_totals(session: Session, batch_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Summed counters per batch (a handful of rows each)."""
    if not batch_ids:
        return {}
    c = RestoreBatchTier
    rows = session.execute(
        select(c.batch_id, func.sum(c.objects), func.sum(c.bytes), func.sum(c.pending), func.sum(c.ongoing),
               func.sum(c.ready), func.sum(c.ready_bytes), func.sum(c.failed), func.sum(c.expired))
        .where(c.batch_id.in_(list(batch_ids))).group_by(c.batch_id))
    return {row[0]: {n: int(v or 0) for n, v in zip(COUNTER_COLUMNS, row[1:], strict=True)} for row in rows}


def lock_batches(session: Session, batch_ids: Sequence[int]) -> list[RestoreBatch]:
    if not batch_ids:
        return []
    return list(session.scalars(select(RestoreBatch).where(RestoreBatch.id.in_(list(batch_ids)))
                                .order_by(RestoreBatch.id).with_for_update()))


def earliest_expiry(session: Session, batch_id: int) -> datetime | None:
    return session.scalar(select(func.min(RestoreItem.expires_at))
                          .where(RestoreItem.batch_id == batch_id, RestoreItem.state == "ready"))


# API reads -------------------------------------------------------------------------------------------


def get_batch(session: Session, batch_id: int, for_update: bool = False) -> RestoreBatch | None:
    q = select(RestoreBatch).where(RestoreBatch.id == batch_id)
    if for_update:
        q = q.with_for_update()
    return session.scalar(q)


def list_batches(session: Session, owner_id: int | None, state: str | None, limit: int,
                 before_id: int | None) -> list[Any]:
    """Newest first (by id, which follows creation), keyset-paged by ``before_id``; plain rows (a page
    is read many times a minute: no ORM identity work)."""
    q = select(*BATCHES.columns)
    if owner_id is not None:
        q = q.where(RestoreBatch.owner_id == owner_id)
    if state is not None:
        q = q.where(RestoreBatch.state == state)
    if before_id is not None:
        q = q.where(RestoreBatch.id < before_id)
    return list(session.execute(q.order_by(RestoreBatch.id.desc()).limit(limit)))


def queue_version(session: Session, owner_id: int | None) -> tuple[int, datetime | None]:
    """(batches, last change) of a user's (or everyone's) queue: the list's ETag."""
    q = select(func.count(RestoreBatch.id), func.max(RestoreBatch.updated_at))
    if owner_id is not None:
        q = q.where(RestoreBatch.owner_id == owner_id)
    count, last = session.execute(q).one()
    return int(count), last


def batch_state_counts(session: Session, owner_id: int | None) -> dict[str, int]:
    q = select(RestoreBatch.state, func.count(RestoreBatch.id)).group_by(RestoreBatch.state)
    if owner_id is not None:
        q = q.where(RestoreBatch.owner_id == owner_id)
    return {state: int(n) for state, n in session.execute(q)}


def tier_counts(session: Session, owner_id: int | None) -> list[Any]:
    """Objects per tier and state over every batch (counter rows, not items)."""
    c = RestoreBatchTier
    q = (select(c.tier_id, func.sum(c.objects), func.sum(c.bytes), func.sum(c.pending), func.sum(c.ongoing),
                func.sum(c.ready), func.sum(c.failed), func.sum(c.expired))
         .group_by(c.tier_id).order_by(c.tier_id))
    if owner_id is not None:
        q = q.join(RestoreBatch, RestoreBatch.id == c.batch_id).where(RestoreBatch.owner_id == owner_id)
    return list(session.execute(q))


def oldest_in_progress(session: Session, owner_id: int | None) -> Any | None:
    q = select(*BATCHES.columns).where(RestoreBatch.state == "in_progress")
    if owner_id is not None:
        q = q.where(RestoreBatch.owner_id == owner_id)
    return session.execute(q.order_by(RestoreBatch.created_at, RestoreBatch.id).limit(1)).first()


def loose_items_active(session: Session, owner_id: int | None) -> tuple[int, datetime | None]:
    """Restores asked through the gateway (no batch) still running: (count, oldest request)."""
    q = select(func.count(RestoreItem.id), func.min(RestoreItem.requested_at)).where(
        RestoreItem.batch_id.is_(None), RestoreItem.state.in_(ACTIVE_ITEM_STATES))
    if owner_id is not None:
        q = q.where(RestoreItem.owner_id == owner_id)
    count, oldest = session.execute(q).one()
    return int(count), oldest


def list_items(session: Session, batch_id: int, state: str | None, after_id: int | None, limit: int
               ) -> list[RestoreItem]:
    q = select(RestoreItem).where(RestoreItem.batch_id == batch_id)
    if state is not None:
        q = q.where(RestoreItem.state == state)
    if after_id is not None:
        q = q.where(RestoreItem.id > after_id)
    return list(session.scalars(q.order_by(RestoreItem.id).limit(limit)))


def iter_items(session: Session, batch_id: int, states: Sequence[str] | None = None) -> Iterator[Any]:
    """(bucket, key, size, state, expires_at) of a batch in key order, streamed."""
    q = select(RestoreItem.bucket, RestoreItem.key, RestoreItem.size, RestoreItem.state, RestoreItem.expires_at
               ).where(RestoreItem.batch_id == batch_id)
    if states:
        q = q.where(RestoreItem.state.in_(list(states)))
    yield from session.execute(q.order_by(RestoreItem.bucket, RestoreItem.key).execution_options(yield_per=5000))


def ready_curve(session: Session, batch_id: int, points: int) -> list[tuple[datetime, int]]:
    """(time, objects ready by then) at most ``points`` steps plus the last: thinned in the database."""
    readied = (RestoreItem.batch_id == batch_id, RestoreItem.ready_at.is_not(None))
    total = int(session.scalar(select(func.count(RestoreItem.id)).where(*readied)) or 0)
    if total == 0:
        return []
    step = max(1, total // points)
    rank = func.row_number().over(order_by=(RestoreItem.ready_at, RestoreItem.id)).label("rank")
    ranked = select(RestoreItem.ready_at, rank).where(*readied).subquery()
    rows = session.execute(select(ranked.c.ready_at, ranked.c.rank)
                           .where((ranked.c.rank % step == 0) | (ranked.c.rank == total)).order_by(ranked.c.rank))
    return [(at, int(n)) for at, n in rows]


def items_of_batch_in(session: Session, batch_id: int, states: Sequence[str]) -> list[Any]:
    return list(session.execute(select(RestoreItem.id, RestoreItem.tier_id, RestoreItem.size, RestoreItem.state,
                                       RestoreItem.claim_token)
                                .where(RestoreItem.batch_id == batch_id, RestoreItem.state.in_(list(states)))))


def reset_items(session: Session, ids: Sequence[int], values: dict[str, Any]) -> None:
    for start in range(0, len(ids), 1000):
        session.execute(update(RestoreItem).where(RestoreItem.id.in_(list(ids[start:start + 1000])))
                        .values(**values).execution_options(synchronize_session=False))


def active_item_for_object(session: Session, object_id: int, locator: str) -> RestoreItem | None:
    """The newest running restore of this blob, locked (the gateway's RestoreObject upgrades it)."""
    return session.scalar(select(RestoreItem)
                          .where(RestoreItem.object_id == object_id, RestoreItem.locator == locator,
                                 RestoreItem.state.in_(ACTIVE_ITEM_STATES))
                          .order_by(RestoreItem.id.desc()).limit(1).with_for_update())


def ready_items_for_object(session: Session, object_id: int, locator: str) -> list[RestoreItem]:
    return list(session.scalars(select(RestoreItem)
                                .where(RestoreItem.object_id == object_id, RestoreItem.locator == locator,
                                       RestoreItem.state == "ready").with_for_update()))


def touch_batches(session: Session, batch_ids: Iterable[int], now: datetime) -> None:
    ids = list(set(batch_ids))
    if ids:
        session.execute(update(RestoreBatch).where(RestoreBatch.id.in_(ids)).values(updated_at=now)
                        .execution_options(synchronize_session=False))



def items_for_spend(session: Session, since: datetime, until: datetime) -> Iterator[Any]:
    """Restores the tier accepted that bill in [since, until): requested then, or whose restored copy was
    kept then (bucket, tier_id, speed, size, requested_at, ready_at, expires_at; times in whole epoch seconds,
    computed by the database: a datetime per row cost most of the read), streamed; failed ones are left out."""
    i = RestoreItem
    kept = (i.ready_at.is_not(None)) & (i.ready_at < until) & ((i.expires_at.is_(None)) | (i.expires_at >= since))
    q = (select(i.bucket, i.tier_id, i.speed, i.size, epoch_s(session, i.requested_at),
                epoch_s(session, i.ready_at), epoch_s(session, i.expires_at))
         .where(i.requested_at.is_not(None), i.requested_at < until, (i.requested_at >= since) | kept,
                i.state != "failed")
         .execution_options(yield_per=10_000))
    yield from session.execute(q)
