"""Booking, cancelling and reading reservations; capacity of the pool. Services flush, callers commit."""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog_service
from tierpilot.catalog.errors import NoSuchBucket
from tierpilot.kit.db import utcnow
from tierpilot.kit.errors import Conflict, Invalid, NotFound
from tierpilot.reservations import admission, changes, repository
from tierpilot.reservations.admission import Booking, Step
from tierpilot.reservations.models import DIRECTIONS, STATES, CapacityPool, Reservation

MB = 1_000_000
# a fresh install's pool until an admin sets (or calibrates) the real figures
DEFAULT_READ_BPS = 1_000 * MB
DEFAULT_WRITE_BPS = 500 * MB
DEFAULT_UNBOOKABLE_SHARE = 0.1
MAX_WINDOW = timedelta(days=31)
MAX_HORIZON = timedelta(days=366)
# a form filled in at "now" reaches the server a little later
START_GRACE = timedelta(minutes=5)
MAX_RATE_BPS = 10**6 * MB
_BUCKET_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def new_reservation_id() -> str:
    """192 random bits: the id is the credential a client presents, so it must not be guessable."""
    return "rsv_" + secrets.token_urlsafe(24)


def mbps(bps: int | float) -> float:
    return round(bps / MB, 6)


def bps_of(rate_mbps: float) -> int:
    return int(round(rate_mbps * MB))


def as_utc(value: datetime) -> datetime:
    """ISO 8601 without an offset is taken as UTC, as the API documents."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---------------------------------------------------------------- capacity


def capacity(session: Session) -> CapacityPool:
    """The pool's figures for reading: the row, or the defaults (unsaved) before an admin set any."""
    pool = repository.get_pool(session)
    if pool is None:
        return CapacityPool(name=repository.DEFAULT_POOL, read_bps=DEFAULT_READ_BPS, write_bps=DEFAULT_WRITE_BPS,
                            unbookable_share=DEFAULT_UNBOOKABLE_SHARE, updated_at=utcnow())
    return pool


def locked_capacity(session: Session) -> CapacityPool:
    """The pool's row for changing it or booking against it, created with the defaults on first use;
    locked on PostgreSQL so concurrent bookings are admitted one after the other."""
    pool = repository.get_pool(session, lock=True)
    if pool is None:
        repository.ensure_pool(session, repository.DEFAULT_POOL, DEFAULT_READ_BPS, DEFAULT_WRITE_BPS,
                               DEFAULT_UNBOOKABLE_SHARE)
        pool = repository.get_pool(session, lock=True)
        assert pool is not None
    return pool


def capacity_bps(pool: CapacityPool, direction: str) -> int:
    return pool.read_bps if direction == "read" else pool.write_bps


def bookable(pool: CapacityPool, direction: str) -> int:
    return admission.bookable_bps(capacity_bps(pool, direction), pool.unbookable_share)


@dataclass(frozen=True)
class Overbooking:
    """Where already booked load exceeds what a (lowered) capacity leaves bookable."""

    direction: str
    at: datetime
    booked_bps: int
    bookable_bps: int


def set_capacity(session: Session, read_bps: int, write_bps: int, unbookable_share: float | None = None,
                 now: datetime | None = None) -> tuple[CapacityPool, list[Overbooking]]:
    """Set the pool's figures. Existing bookings stay; where they no longer fit, the gateway scales
    them down proportionally, and the answer lists those places so the admin can act."""
    if read_bps <= 0 or write_bps <= 0:
        raise Invalid("read_mbps and write_mbps must be positive")
    if unbookable_share is not None and not 0.0 <= unbookable_share < 1.0:
        raise Invalid("unbookable_share must be at least 0 and below 1")
    pool = locked_capacity(session)
    pool.read_bps, pool.write_bps = read_bps, write_bps
    if unbookable_share is not None:
        pool.unbookable_share = unbookable_share
    session.flush()
    changes.announce(session, changes.pool_message(pool))
    return pool, overbookings(session, pool, now or utcnow())


def overbookings(session: Session, pool: CapacityPool, now: datetime) -> list[Overbooking]:
    out = []
    for direction in DIRECTIONS:
        limit = bookable(pool, direction)
        rows = repository.overlapping(session, direction, now, now + MAX_HORIZON)
        for step in admission.load_steps(_bookings(rows), now, now + MAX_HORIZON):
            if step.load_bps > limit:
                out.append(Overbooking(direction, step.at, step.load_bps, limit))
                break
    return out


def record_calibration(session: Session, read_bps: int, write_bps: int) -> CapacityPool:
    """Keep `tierpilot gateway calibrate`'s proposal next to the figures in force."""
    pool = locked_capacity(session)
    pool.calibrated_read_bps, pool.calibrated_write_bps, pool.calibrated_at = read_bps, write_bps, utcnow()
    session.flush()
    return pool


# ---------------------------------------------------------------- booking


def _bookings(rows: Sequence[Reservation]) -> list[Booking]:
    return [Booking(r.start_at, r.end_at, r.rate_bps) for r in rows]


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise Invalid("direction must be 'read' or 'write'")


def _check_window(start: datetime, end: datetime) -> None:
    if end <= start:
        raise Invalid("end must be after start")
    if end - start > MAX_WINDOW:
        raise Invalid(f"a window may last at most {MAX_WINDOW.days} days")


def effective_state(r: Reservation, now: datetime) -> str:
    """The state the clock says, so answers never wait for the beat task."""
    if r.state == "cancelled":
        return "cancelled"
    if now < r.start_at:
        return "booked"
    return "active" if now < r.end_at else "finished"


def book(session: Session, owner: User, *, bucket: str, direction: str, rate_bps: int, start: datetime,
         end: datetime, note: str = "", now: datetime | None = None) -> Reservation:
    """Admit a reservation or raise Conflict(409) with the largest rate that fits and the earliest window.

    The pool row is locked first, so concurrent bookings are admitted one after the other.
    """
    now = now or utcnow()
    start, end = as_utc(start), as_utc(end)
    _check_direction(direction)
    _check_window(start, end)
    if not _BUCKET_NAME.match(bucket) or ".." in bucket:
        raise Invalid("bucket must be a valid S3 bucket name (3-63 lowercase letters, digits, '.', '-')")
    if rate_bps <= 0 or rate_bps > MAX_RATE_BPS:
        raise Invalid("rate_mbps must be positive")
    if start < now - START_GRACE:
        raise Invalid("start is in the past")
    if end > now + MAX_HORIZON:
        raise Invalid(f"reservations may be booked at most {MAX_HORIZON.days} days ahead")
    if len(note) > 500:
        raise Invalid("note must be at most 500 characters")
    # a booking names the bucket its traffic goes to: one that does not exist is a typo, not a plan, and one the
    # caller may not see answers the same (a grantee's: 403, booking is the owner's)
    try:
        catalog_service.owned_bucket(session, bucket, owner, "booking a reservation on it")
    except NoSuchBucket:
        raise Invalid(f"bucket: no bucket named {bucket!r}; create it first", field="bucket") from None

    pool = locked_capacity(session)
    limit = bookable(pool, direction)
    existing = _bookings(repository.overlapping(session, direction, start, end))
    fitting = admission.max_rate_that_fits(existing, limit, start, end)
    if rate_bps > fitting:
        later = _bookings(repository.overlapping(session, direction, start, start + MAX_HORIZON + MAX_WINDOW))
        earliest = admission.earliest_start(later, limit, start, end - start, rate_bps)
        raise Conflict(
            f"{mbps(rate_bps)} MB/s does not fit: at most {mbps(fitting)} MB/s of {direction} is free "
            f"in that window (bookable {mbps(limit)} MB/s)",
            max_rate_mbps=mbps(fitting), earliest_start=earliest, bookable_mbps=mbps(limit),
            capacity_mbps=mbps(capacity_bps(pool, direction)),
        )
    r = Reservation(id=new_reservation_id(), owner_id=owner.id, bucket=bucket, direction=direction,
                    rate_bps=rate_bps, start_at=start, end_at=end, note=note,
                    state="active" if start <= now else "booked")
    session.add(r)
    session.flush()
    changes.announce(session, changes.reservation_message(r))
    return r


def get_visible(session: Session, actor: User, reservation_id: str) -> tuple[Reservation, str]:
    """A reservation and its owner's name; another user's is as unknown as a missing one."""
    r = repository.get(session, reservation_id)
    if r is None or (r.owner_id != actor.id and not actor.is_admin):
        raise NotFound("no such reservation")
    return _with_owner_names(session, [r])[0]


def _with_owner_names(session: Session, rows: Sequence[Reservation]) -> list[tuple[Reservation, str]]:
    names = auth_repository.usernames(session, {r.owner_id for r in rows})
    return [(r, names[r.owner_id]) for r in rows if r.owner_id in names]


def cancel(session: Session, actor: User, reservation_id: str, now: datetime | None = None) -> Reservation:
    """Cancel a booked or active reservation (its remaining window becomes free); repeating is harmless."""
    now = now or utcnow()
    r, _ = get_visible(session, actor, reservation_id)
    if r.state == "cancelled":
        return r
    if effective_state(r, now) == "finished":
        raise Conflict("the reservation has finished; it can no longer be cancelled")
    r.state, r.cancelled_at = "cancelled", now
    session.flush()
    changes.announce(session, changes.reservation_message(r))
    return r


def list_visible(session: Session, actor: User, *, states: Sequence[str] = (), direction: str | None = None,
                 bucket: str | None = None, owner: str | None = None, limit: int = 200, offset: int = 0,
                 now: datetime | None = None) -> list[tuple[Reservation, str]]:
    """Members list their own reservations, admins everyone's (optionally one owner's)."""
    for s in states:
        if s not in STATES:
            raise Invalid(f"state must be one of {', '.join(STATES)}")
    if direction is not None:
        _check_direction(direction)
    owner_id = None if actor.is_admin else actor.id
    if actor.is_admin and owner is not None:
        named = auth_repository.get_user_by_name(session, owner)
        if named is None:
            return []
        owner_id = named.id
    return _with_owner_names(session, repository.list_reservations(
        session, owner_id=owner_id, states=states, now=now or utcnow(), direction=direction, bucket=bucket,
        limit=limit, offset=offset))


# ---------------------------------------------------------------- availability and timeline


@dataclass(frozen=True)
class Availability:
    direction: str
    start: datetime
    end: datetime
    capacity_bps: int
    bookable_bps: int
    booked_peak_bps: int
    max_rate_bps: int
    rate_bps: int | None
    fits: bool | None
    earliest_start: datetime | None


def availability(session: Session, direction: str, start: datetime, end: datetime,
                 rate_bps: int | None = None) -> Availability:
    """How much of a direction is free in a window; with a rate, whether it fits and where it would."""
    start, end = as_utc(start), as_utc(end)
    _check_direction(direction)
    _check_window(start, end)
    if rate_bps is not None and rate_bps <= 0:
        raise Invalid("rate_mbps must be positive")
    pool = capacity(session)
    limit = bookable(pool, direction)
    existing = _bookings(repository.overlapping(session, direction, start, end))
    peak = admission.peak_load(existing, start, end)
    free = max(0, limit - peak)
    fits = earliest = None
    if rate_bps is not None:
        fits = rate_bps <= free
        if fits:
            earliest = start
        else:
            later = _bookings(repository.overlapping(session, direction, start, start + MAX_HORIZON + MAX_WINDOW))
            earliest = admission.earliest_start(later, limit, start, end - start, rate_bps)
    return Availability(direction, start, end, capacity_bps(pool, direction), limit, peak, free, rate_bps, fits,
                        earliest)


@dataclass(frozen=True)
class DirectionLoad:
    direction: str
    capacity_bps: int
    bookable_bps: int
    steps: list[Step]


def timeline(session: Session, actor: User, start: datetime, end: datetime,
             now: datetime | None = None) -> tuple[list[DirectionLoad], list[tuple[Reservation, str]]]:
    """Booked load per direction (everyone's, as plain numbers) and the reservations the actor may see."""
    start, end = as_utc(start), as_utc(end)
    if end <= start:
        raise Invalid("end must be after start")
    if end - start > timedelta(days=92):
        raise Invalid("a timeline spans at most 92 days")
    pool = capacity(session)
    loads = []
    for direction in DIRECTIONS:
        rows = repository.overlapping(session, direction, start, end)
        loads.append(DirectionLoad(direction, capacity_bps(pool, direction), bookable(pool, direction),
                                   admission.load_steps(_bookings(rows), start, end)))
    visible = _with_owner_names(session, repository.list_reservations(
        session, owner_id=None if actor.is_admin else actor.id, states=("booked", "active", "finished"),
        now=now or utcnow(), overlapping_window=(start, end), limit=2000))
    return loads, visible


# ---------------------------------------------------------------- metering and achieved throughput


@dataclass(frozen=True)
class Achieved:
    total_bytes: int
    active_seconds: int
    mean_bps: int | None
    p5_bps: int | None


def achieved(per_second: Mapping[int, int]) -> Achieved:
    """Mean and 5th percentile of throughput over the seconds that carried traffic.

    The first and last of those seconds are usually partial (a transfer starts or stops within
    them), so both figures leave them out when there are enough others: a 4 s transfer at the
    booked rate would otherwise show a mean well under it.
    """
    busy = sorted(s for s, n in per_second.items() if n > 0)
    total = sum(per_second[s] for s in busy)
    if not busy:
        return Achieved(total, 0, None, None)
    core = busy[1:-1] if len(busy) > 4 else busy
    values = sorted(per_second[s] for s in core)
    p5 = values[max(0, math.ceil(0.05 * len(values)) - 1)]
    return Achieved(total, len(busy), sum(values) // len(values), p5)


def record_samples(session: Session, rows: Sequence[tuple[str, int, int]]) -> int:
    """Store per-second byte counts (rows of reservation id, second, bytes) and refresh the
    achieved figures of the reservations they belong to; unknown ids are dropped. Returns rows kept."""
    known = repository.existing_ids(session, (r for r, _, _ in rows))
    kept = [row for row in rows if row[0] in known]
    repository.add_samples(session, kept)
    for rid in known:
        refresh_achieved(session, rid)
    return len(kept)


def refresh_achieved(session: Session, reservation_id: str) -> None:
    r = session.get(Reservation, reservation_id)
    if r is None:
        return
    first, last = int(r.start_at.timestamp()), math.ceil(r.end_at.timestamp())
    a = achieved(repository.samples(session, reservation_id, first, last))
    r.achieved_bytes, r.active_seconds = a.total_bytes, a.active_seconds
    r.achieved_mean_bps, r.achieved_p5_bps = a.mean_bps, a.p5_bps
    session.flush()


@dataclass(frozen=True)
class Series:
    step_s: int
    points: list[tuple[datetime, float]]  # (start of bucket, bytes/s averaged over the bucket)


def throughput(session: Session, actor: User, reservation_id: str, max_points: int = 600,
               now: datetime | None = None) -> tuple[Reservation, str, Series]:
    """Achieved bytes/s of a reservation from its start until now (or its end), at most ``max_points``."""
    now = now or utcnow()
    r, owner = get_visible(session, actor, reservation_id)
    first = int(r.start_at.timestamp())
    stop = min(r.end_at, r.cancelled_at or r.end_at, now)
    last = max(first, math.ceil(stop.timestamp()) - 1)
    seconds = last - first + 1
    step = max(1, math.ceil(seconds / max(1, max_points)))
    per_second = repository.samples(session, reservation_id, first, last) if stop > r.start_at else {}
    buckets: dict[int, int] = {}
    for s, n in per_second.items():
        b = first + (s - first) // step * step
        buckets[b] = buckets.get(b, 0) + n
    points = []
    if stop > r.start_at:
        for b in range(first, last + 1, step):
            width = min(step, last + 1 - b)
            points.append((datetime.fromtimestamp(b, UTC), buckets.get(b, 0) / width))
    return r, owner, Series(step, points)


def advance_states(session: Session, now: datetime | None = None) -> dict[str, int]:
    """Move stored states along the clock (booked -> active -> finished); finished ones get final figures."""
    now = now or utcnow()
    moved = {"active": 0, "finished": 0}
    for r in repository.due_transitions(session, now):
        new = effective_state(r, now)
        if new == r.state:
            continue
        r.state = new
        moved[new] = moved.get(new, 0) + 1
        if new == "finished":
            refresh_achieved(session, r.id)
    session.flush()
    return moved
