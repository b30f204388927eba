"""Capacity, booking, availability, timeline and achieved throughput of reservations."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Request, status

from tierpilot.audit import service as audit
from tierpilot.auth.deps import AdminUser, CurrentUser, SessionDep, client_of
from tierpilot.kit.db import utcnow
from tierpilot.reservations import service
from tierpilot.reservations.schemas import (
    MAX_RATE_MBPS,
    AvailabilityOut,
    CapacityIn,
    CapacityOut,
    Direction,
    DirectionLoadOut,
    LoadStepOut,
    ReservationIn,
    ReservationOut,
    State,
    ThroughputOut,
    ThroughputPointOut,
    TimelineOut,
)

router = APIRouter(tags=["reservations"])


@router.get("/capacity", response_model=CapacityOut)
def get_capacity(session: SessionDep, user: CurrentUser) -> CapacityOut:
    pool = service.capacity(session)
    return CapacityOut.of(pool, service.overbookings(session, pool, utcnow()))


@router.put("/capacity", response_model=CapacityOut)
def put_capacity(body: CapacityIn, request: Request, admin: AdminUser, session: SessionDep) -> CapacityOut:
    before = service.capacity(session)
    old = {"read_bps": before.read_bps, "write_bps": before.write_bps, "unbookable_share": before.unbookable_share}
    pool, over = service.set_capacity(session, service.bps_of(body.read_mbps), service.bps_of(body.write_mbps),
                                      body.unbookable_share)
    audit.record(session, "capacity.changed", audit.Actor(admin.id, admin.username, client_of(request)),
                 f"pool:{pool.name}", before=old, after={"read_bps": pool.read_bps, "write_bps": pool.write_bps,
                                                          "unbookable_share": pool.unbookable_share})
    return CapacityOut.of(pool, over)


@router.post("/reservations", response_model=ReservationOut, status_code=status.HTTP_201_CREATED,
             responses={409: {"description": "does not fit; body holds max_rate_mbps and earliest_start"}})
def create_reservation(body: ReservationIn, user: CurrentUser, session: SessionDep) -> ReservationOut:
    r = service.book(session, user, bucket=body.bucket, direction=body.direction,
                     rate_bps=service.bps_of(body.rate_mbps), start=body.start, end=body.end, note=body.note)
    return ReservationOut.of(r, user.username, utcnow())


@router.get("/reservations", response_model=list[ReservationOut])
def list_reservations(
    session: SessionDep, user: CurrentUser,
    state: Annotated[list[State] | None, Query(description="repeatable")] = None,
    direction: Direction | None = None, bucket: str | None = None,
    owner: Annotated[str | None, Query(description="admins: one user's reservations")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200, offset: Annotated[int, Query(ge=0)] = 0,
) -> list[ReservationOut]:
    now = utcnow()
    rows = service.list_visible(session, user, states=state or (), direction=direction, bucket=bucket,
                                owner=owner, limit=limit, offset=offset, now=now)
    return [ReservationOut.of(r, name, now) for r, name in rows]


@router.get("/reservations/availability", response_model=AvailabilityOut)
def get_availability(
    session: SessionDep, user: CurrentUser, direction: Direction, start: datetime, end: datetime,
    rate_mbps: Annotated[float | None, Query(gt=0, le=MAX_RATE_MBPS,
                                             description="also say whether this rate fits")] = None,
) -> AvailabilityOut:
    rate = service.bps_of(rate_mbps) if rate_mbps is not None else None
    return AvailabilityOut.of(service.availability(session, direction, start, end, rate))


@router.get("/reservations/timeline", response_model=TimelineOut)
def get_timeline(session: SessionDep, user: CurrentUser, start: datetime | None = None,
                 end: datetime | None = None) -> TimelineOut:
    now = utcnow()
    start = service.as_utc(start) if start else now - timedelta(hours=1)
    end = service.as_utc(end) if end else start + timedelta(days=7)
    loads, visible = service.timeline(session, user, start, end, now)
    return TimelineOut(
        start=start, end=end, now=now,
        directions=[DirectionLoadOut(
            direction=d.direction,  # type: ignore[arg-type]
            capacity_mbps=service.mbps(d.capacity_bps), bookable_mbps=service.mbps(d.bookable_bps),
            steps=[LoadStepOut(at=s.at, booked_mbps=service.mbps(s.load_bps)) for s in d.steps],
        ) for d in loads],
        reservations=[ReservationOut.of(r, name, now) for r, name in visible],
    )


@router.get("/reservations/{reservation_id}", response_model=ReservationOut)
def get_reservation(reservation_id: str, session: SessionDep, user: CurrentUser) -> ReservationOut:
    r, owner = service.get_visible(session, user, reservation_id)
    return ReservationOut.of(r, owner, utcnow())


@router.delete("/reservations/{reservation_id}", status_code=status.HTTP_204_NO_CONTENT)
def cancel_reservation(reservation_id: str, user: CurrentUser, session: SessionDep) -> None:
    service.cancel(session, user, reservation_id)


@router.get("/reservations/{reservation_id}/throughput", response_model=ThroughputOut)
def get_throughput(reservation_id: str, session: SessionDep, user: CurrentUser,
                   max_points: Annotated[int, Query(ge=10, le=5000)] = 600) -> ThroughputOut:
    now = utcnow()
    r, _owner, series = service.throughput(session, user, reservation_id, max_points, now)
    return ThroughputOut(
        id=r.id, direction=r.direction, state=service.effective_state(r, now),  # type: ignore[arg-type]
        start=r.start_at, end=r.end_at, booked_mbps=service.mbps(r.rate_bps), step_s=series.step_s,
        points=[ThroughputPointOut(at=at, achieved_mbps=service.mbps(v)) for at, v in series.points],
        achieved_mean_mbps=None if r.achieved_mean_bps is None else service.mbps(r.achieved_mean_bps),
        achieved_p5_mbps=None if r.achieved_p5_bps is None else service.mbps(r.achieved_p5_bps),
    )
