"""Sampled gateway requests and their phases: the caller's own, or everyone's for an admin."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Path, Query, Response

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.kit.inputs import RowId
from tierpilot.observability import repository, runs, service
from tierpilot.observability.models import BenchmarkRun, RequestTrace
from tierpilot.observability.schemas import (
    ActivityOut,
    BenchmarkRunCreated,
    BenchmarkRunIn,
    BenchmarkRunOut,
    BenchmarkRunsOut,
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


def _run_out(run: BenchmarkRun) -> BenchmarkRunOut:
    return BenchmarkRunOut.model_validate(runs.as_dict(run))


@router.post("/benchmarks/runs", response_model=BenchmarkRunCreated, status_code=202, tags=["benchmarks"])
def create_run(body: BenchmarkRunIn, session: SessionDep, user: CurrentUser) -> BenchmarkRunCreated:
    """Queue a sweep through the gateway with your own S3 key (one at a time; limits set by admins)."""
    size_range = (body.size_distribution.min, body.size_distribution.max) if body.size_distribution else None
    run = runs.create(session, user, runs.RunSpec(
        workload=body.workload, concurrency=body.concurrency, seconds=body.seconds_per_point,
        sizes=body.object_sizes or [], size_range=size_range, ratios=body.ratios, reservation_id=body.reservation_id))
    return BenchmarkRunCreated(id=run.id)


@router.get("/benchmarks/runs", response_model=BenchmarkRunsOut, tags=["benchmarks"])
def list_runs(session: SessionDep, user: CurrentUser, limit: int = Query(50, ge=1, le=500)) -> BenchmarkRunsOut:
    """Your runs, newest first (everyone's for an admin)."""
    return BenchmarkRunsOut(items=[_run_out(r) for r in
                                   repository.runs(session, None if user.is_admin else user.id, limit)])


@router.get("/benchmarks/runs/{run_id}", response_model=BenchmarkRunOut, tags=["benchmarks"])
def get_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> BenchmarkRunOut:
    return _run_out(runs.visible(session, user, run_id))


@router.get("/benchmarks/runs/{run_id}/export", tags=["benchmarks"])
def export_run(run_id: RowId, session: SessionDep, user: CurrentUser,
               format: Literal["csv", "json"] = "csv") -> Response:  # noqa: A002
    """The run's points as CSV (one row a point, phases as JSON) or JSON."""
    run = runs.visible(session, user, run_id)
    if format == "json":
        return Response(_run_out(run).model_dump_json(indent=2), media_type="application/json",
                        headers={"content-disposition": f'attachment; filename="benchmark-run-{run.id}.json"'})
    return Response(runs.export_csv(run), media_type="text/csv",
                    headers={"content-disposition": f'attachment; filename="benchmark-run-{run.id}.csv"'})


@router.post("/benchmarks/runs/{run_id}/cancel", response_model=BenchmarkRunOut, tags=["benchmarks"])
def cancel_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> BenchmarkRunOut:
    return _run_out(runs.cancel(session, user, run_id))


@router.delete("/benchmarks/runs/{run_id}", status_code=204, tags=["benchmarks"])
def delete_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> Response:
    runs.delete(session, user, run_id)
    return Response(status_code=204)
