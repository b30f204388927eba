"""Benchmark runs: sweeps through the gateway that users start from the dashboard or the API."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Response

from tierpilot.auth.deps import CurrentUser, SessionDep
from tierpilot.benchmarks import repository, runs
from tierpilot.benchmarks.models import BenchmarkRun
from tierpilot.benchmarks.schemas import BenchmarkRunCreated, BenchmarkRunIn, BenchmarkRunOut, BenchmarkRunsOut
from tierpilot.kit.inputs import RowId

router = APIRouter(tags=["benchmarks"])


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
