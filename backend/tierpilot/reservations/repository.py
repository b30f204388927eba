"""Only this module queries the reservation tables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from tierpilot.kit.db import utcnow
from tierpilot.reservations.models import CapacityPool, Reservation, ReservationSample

DEFAULT_POOL = "default"


def get_pool(session: Session, name: str = DEFAULT_POOL, lock: bool = False) -> CapacityPool | None:
    """The pool row; ``lock`` serialises bookings on PostgreSQL (SQLite callers take the write lock)."""
    q = select(CapacityPool).where(CapacityPool.name == name)
    if lock:
        q = q.with_for_update()
    return session.scalar(q)


def ensure_pool(session: Session, name: str, read_bps: int, write_bps: int, unbookable_share: float) -> None:
    """Create the pool row unless it exists; concurrent first uses must not collide on the name."""
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(insert(CapacityPool).values(
        name=name, read_bps=read_bps, write_bps=write_bps, unbookable_share=unbookable_share,
        updated_at=utcnow()).on_conflict_do_nothing(index_elements=[CapacityPool.name]))


def overlapping(session: Session, direction: str, start: datetime, end: datetime,
                exclude_id: str | None = None) -> list[Reservation]:
    """Reservations of a direction, not cancelled, whose window overlaps [start, end)."""
    q = select(Reservation).where(
        Reservation.direction == direction,
        Reservation.state != "cancelled",
        Reservation.start_at < end,
        Reservation.end_at > start,
    )
    if exclude_id is not None:
        q = q.where(Reservation.id != exclude_id)
    return list(session.scalars(q))


def get(session: Session, reservation_id: str) -> Reservation | None:
    """One reservation by id."""
    return session.get(Reservation, reservation_id)


def state_condition(state: str, now: datetime) -> Any:
    """SQL for a state derived from the clock, so the answer never waits for the beat task."""
    live = Reservation.state != "cancelled"
    return {
        "cancelled": Reservation.state == "cancelled",
        "booked": and_(live, Reservation.start_at > now),
        "active": and_(live, Reservation.start_at <= now, Reservation.end_at > now),
        "finished": and_(live, Reservation.end_at <= now),
    }[state]


def list_reservations(session: Session, *, owner_id: int | None, states: Sequence[str], now: datetime,
                      direction: str | None = None, bucket: str | None = None,
                      overlapping_window: tuple[datetime, datetime] | None = None,
                      limit: int = 200, offset: int = 0) -> list[Reservation]:
    """Reservations matching the filters (states as the clock says), latest start first, paged."""
    q = select(Reservation)
    if owner_id is not None:
        q = q.where(Reservation.owner_id == owner_id)
    if states:
        q = q.where(or_(*(state_condition(s, now) for s in states)))
    if direction is not None:
        q = q.where(Reservation.direction == direction)
    if bucket is not None:
        q = q.where(Reservation.bucket == bucket)
    if overlapping_window is not None:
        q = q.where(Reservation.start_at < overlapping_window[1], Reservation.end_at > overlapping_window[0])
    q = q.order_by(Reservation.start_at.desc(), Reservation.id).limit(limit).offset(offset)
    return list(session.scalars(q))


def due_transitions(session: Session, now: datetime) -> list[Reservation]:
    """Reservations whose stored state lags the clock."""
    return list(session.scalars(select(Reservation).where(or_(
        and_(Reservation.state == "booked", Reservation.start_at <= now),
        and_(Reservation.state == "active", Reservation.end_at <= now),
    ))))


def existing_ids(session: Session, ids: Iterable[str]) -> set[str]:
    wanted = list(set(ids))
    if not wanted:
        return set()
    return set(session.scalars(select(Reservation.id).where(Reservation.id.in_(wanted))))


def add_samples(session: Session, rows: Sequence[tuple[str, int, int]]) -> None:
    """Add (reservation id, second, bytes) to the per-second table; a repeated second accumulates."""
    if not rows:
        return
    values = [{"reservation_id": r, "second": s, "nbytes": n} for r, s, n in rows]
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(ReservationSample).values(values)
    stmt = stmt.on_conflict_do_update(
        index_elements=[ReservationSample.reservation_id, ReservationSample.second],
        set_={"nbytes": ReservationSample.nbytes + stmt.excluded.nbytes},
    )
    session.execute(stmt)


def samples(session: Session, reservation_id: str, first: int | None = None,
            last: int | None = None) -> dict[int, int]:
    """Bytes per second of one reservation within [first, last] (Unix seconds)."""
    q = select(ReservationSample.second, ReservationSample.nbytes).where(
        ReservationSample.reservation_id == reservation_id)
    if first is not None:
        q = q.where(ReservationSample.second >= first)
    if last is not None:
        q = q.where(ReservationSample.second <= last)
    return {int(s): int(n) for s, n in session.execute(q)}

