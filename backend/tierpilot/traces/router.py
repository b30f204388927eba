"""Sampled gateway requests and their phases: the caller's own, or everyone's for an admin."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.traces import service
from tierpilot.traces.models import RequestTrace
from tierpilot.traces.schemas import (
    ActivityOut,
    PhaseOut,
    RequestTraceOut,
    RequestTracesOut,
)

router = APIRouter(tags=["requests"])


def _out(trace: RequestTrace) -> RequestTraceOut:
    return RequestTraceOut(
        request_id=trace.request_id, at=trace.at, operation=trace.operation, bucket=trace.bucket,
        status=trace.status, bytes=trace.bytes, total_ms=trace.total_ms, reason=trace.reason,
        phases=[PhaseOut(name=str(p[0]), start_ms=float(p[1]), duration_ms=float(p[2])) for p in trace.phases])


@router.get("/requests", response_model=RequestTracesOut)
def list_requests(session: SessionDep, user: CurrentUser,
                  operation: str | None = Query(None, max_length=64, description="e.g. 'GET object'"),
                  bucket: str | None = Query(None, max_length=63),
                  slower_than_ms: float | None = Query(None, ge=0, le=86_400_000),
                  limit: int = Query(100, ge=1, le=1000)) -> RequestTracesOut:
    """The newest sampled gateway requests (the caller's own; an admin's: everyone's)."""
    traces = service.recent(session, user.id, user.is_admin, operation, bucket, slower_than_ms, limit)
    return RequestTracesOut(items=[_out(t) for t in traces])


@router.get("/requests/{request_id}", response_model=RequestTraceOut)
def get_request(session: SessionDep, user: CurrentUser,
                request_id: str = Path(max_length=32, pattern="^[0-9A-Za-z]+$")) -> RequestTraceOut:
    """One sampled request with its phases (404 when not sampled, pruned, or someone else's)."""
    return _out(service.get_trace(session, user.id, user.is_admin, request_id))


@router.get("/activity", response_model=ActivityOut)
def get_activity(session: SessionDep, user: CurrentUser) -> ActivityOut:
    """What is happening now: gateway counters (admins), restores in flight, lifecycle backlog (admins) and the
    active reservations with achieved vs booked (the caller's own; everyone's for an admin)."""
    return service.activity(session, user.id, user.is_admin)
