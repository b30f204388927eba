"""Benchmark runs users start from the dashboard: checked against the admins' limits, one at a time per user,
executed by the worker (``benchmarks.run``) through the gateway with the user's own S3 key."""

from __future__ import annotations

import csv
import io
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.auth import repository as auth_repository
from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.benchmarks import repository
from tierpilot.benchmarks.models import BenchmarkRun
from tierpilot.benchmarks.sweep import WORKLOADS, Point, Sweep, check_ratios, sends
from tierpilot.kit.db import after_commit, transaction, utcnow
from tierpilot.kit.errors import Conflict, Invalid, NotFound
from tierpilot.kit.settings import get_settings
from tierpilot.reservations import service as reservations

log = logging.getLogger(__name__)
TASK = "benchmarks.run"
POINT_FIELDS = ("workload", "object_size", "size_distribution", "concurrency", "ops_per_s", "mb_per_s", "failures",
                "retries", "p50_ms", "p90_ms", "p99_ms", "ttfb_p50_ms", "traced")


@dataclass(frozen=True)
class RunSpec:
    """What a run sweeps (checked by ``check``)."""

    workload: str
    concurrency: list[int]
    seconds: float
    sizes: list[int] = field(default_factory=list)
    size_range: tuple[int, int] | None = None
    ratios: dict[str, float] | None = None
    reservation_id: str | None = None

    def params(self) -> dict[str, Any]:
        return {"workload": self.workload, "object_sizes": self.sizes,
                "size_distribution": None if self.size_range is None else
                {"min": self.size_range[0], "max": self.size_range[1]},
                "ratios": self.ratios, "reservation_id": self.reservation_id, "concurrency": self.concurrency,
                "seconds_per_point": self.seconds}


def check_limits(spec: RunSpec) -> None:
    """Refuse a run past the admins' limits (time, bytes per point, concurrency) with the field named."""
    s = get_settings()
    if spec.workload not in WORKLOADS:
        raise Invalid(f"workload must be one of {', '.join(WORKLOADS)}", field="workload")
    if spec.ratios is not None:
        if spec.workload != "mixed":
            raise Invalid("ratios are for the mixed workload only", field="ratios")
        try:
            check_ratios(spec.ratios)
        except ValueError as exc:
            raise Invalid(str(exc), field="ratios") from None
    largest = spec.size_range[1] if spec.size_range else max(spec.sizes)
    if largest > s.bench_max_object_bytes:
        raise Invalid(f"object sizes are limited to {s.bench_max_object_bytes} bytes",
                      field="size_distribution" if spec.size_range else "object_sizes")
    if max(spec.concurrency) > s.bench_max_concurrency:
        raise Invalid(f"concurrency is limited to {s.bench_max_concurrency}", field="concurrency")
    total = (1 if spec.size_range else len(spec.sizes)) * len(spec.concurrency) * spec.seconds
    if total > s.bench_max_run_s:
        raise Invalid(f"a run may take {s.bench_max_run_s:.0f} s at most (this one: {total:.0f} s)",
                      field="seconds_per_point")


def create(session: Session, user: User, spec: RunSpec) -> BenchmarkRun:
    """A queued run (409 while the user has one queued or running); the worker is told after the commit."""
    check_limits(spec)
    params = spec.params()
    if spec.reservation_id is not None:
        try:
            reservation, _owner = reservations.get_visible(session, user, spec.reservation_id)
        except NotFound:
            raise Invalid("no such reservation of yours", field="reservation_id") from None
        if reservation.owner_id != user.id:
            raise Invalid("a benchmark runs with your own keys: use one of your own reservations",
                          field="reservation_id")
        if reservation.state == "cancelled" or reservation.end_at <= utcnow():
            raise Invalid("the reservation is over or cancelled", field="reservation_id")
        if not sends(spec.workload, spec.ratios, reservation.direction):
            moving = "PUT" if reservation.direction == "write" else "GET"
            raise Invalid(f"a {reservation.direction} reservation carries {moving}s, and this run sends none",
                          field="reservation_id")
        params["reservation_bucket"] = reservation.bucket
        params["reservation_direction"] = reservation.direction
    # two simultaneous POSTs of one user: the second waits here for the first's commit, then sees its run
    repository.lock_owner_runs(session, user.id)
    if repository.active_run_of(session, user.id) is not None:
        raise Conflict("you have a benchmark run queued or running; cancel it or wait for it")
    run = repository.add_run(session, BenchmarkRun(owner_id=user.id, params=params))
    run_id = run.id
    after_commit(session, lambda: _send(run_id))
    return run


def _send(run_id: int) -> None:
    """Hand a committed run to a worker; a run the job queue did not take fails at once (its owner starts it again)
    rather than staying queued with nothing to run it."""
    from tierpilot.kit.jobs import BrokerUnavailable, enqueue

    try:
        enqueue(TASK, [run_id])
    except BrokerUnavailable:
        with transaction(write=True) as session:
            run = repository.get_run(session, run_id, for_update=True)
            if run is not None and run.state == "queued":
                run.state, run.error, run.finished_at = "failed", "the job queue was unavailable", utcnow()


def visible(session: Session, user: User, run_id: int, for_update: bool = False) -> BenchmarkRun:
    run = repository.get_run(session, run_id, for_update)
    if run is None or (not user.is_admin and run.owner_id != user.id):
        raise NotFound("no such benchmark run", run_id=run_id)
    return run


def cancel(session: Session, user: User, run_id: int) -> BenchmarkRun:
    run = visible(session, user, run_id, for_update=True)
    if run.state == "queued":
        run.state, run.finished_at = "cancelled", utcnow()
    elif run.state == "running":
        run.cancel_requested = True
    return run


def delete(session: Session, user: User, run_id: int) -> None:
    run = visible(session, user, run_id)
    if run.state in ("queued", "running"):
        raise Conflict("cancel the run before deleting it")
    repository.delete_run(session, run)


def export_csv(run: BenchmarkRun) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*POINT_FIELDS, "phases_ms"])
    for p in run.points:
        writer.writerow([*(p.get(k) for k in POINT_FIELDS), json.dumps(p.get("phases_ms", {}))])
    return out.getvalue()


def gateway_endpoint() -> str:
    """The gateway of this installation as the worker reaches it (its own port, not a public URL)."""
    s = get_settings()
    host = "127.0.0.1" if s.gateway_host in ("0.0.0.0", "::", "") else s.gateway_host
    return f"http://{host}:{s.gateway_port}"


def execute(run_id: int) -> str:
    """The worker's side: run the sweep, writing progress and points as they come; returns the final state."""
    with transaction(write=True) as session:
        run = repository.get_run(session, run_id, for_update=True)
        if run is None or run.state != "queued":
            return run.state if run is not None else "gone"
        run.state = "running"
        params, owner_id = dict(run.params), run.owner_id
        keys = [k for k in auth_repository.list_access_keys(session, owner_id) if k.active]
        credential = auth.credential_for(session, keys[0].access_key_id) if keys else None
    if credential is None:
        return _finish(run_id, "failed", "the user has no active S3 key")
    distribution = params.get("size_distribution")
    sizes: list[int | tuple[int, int]] = (
        [(int(distribution["min"]), int(distribution["max"]))] if distribution else list(params["object_sizes"]))
    sweep = Sweep(gateway_endpoint(), keys[0].access_key_id, credential.secret_access_key,
                  reservation=params.get("reservation_id"), direction=params.get("reservation_direction"),
                  ratios=params.get("ratios"),
                  bucket=params.get("reservation_bucket"))

    def progress(done: int, total: int, point: Point) -> None:
        with transaction(write=True) as s:
            row = repository.get_run(s, run_id, for_update=True)
            if row is None:
                sweep.cancelled.set()
                return
            row.points = [*row.points, point.as_dict()]
            row.progress = done / total
            if row.cancel_requested:
                sweep.cancelled.set()

    try:
        sweep.run([params["workload"]], sizes, params["concurrency"],
                  float(params["seconds_per_point"]), progress=progress)
    except Exception as exc:
        log.warning("benchmark run %s failed", run_id, exc_info=True)
        return _finish(run_id, "failed", f"{type(exc).__name__}: {exc}"[:500])
    return _finish(run_id, "cancelled" if sweep.cancelled.is_set() else "done", "")


def _finish(run_id: int, state: str, error: str) -> str:
    with transaction(write=True) as session:
        run = repository.get_run(session, run_id, for_update=True)
        if run is not None:
            run.state, run.error, run.finished_at = state, error, utcnow()
            if state == "done":
                run.progress = 1.0
    return state


def as_dict(run: BenchmarkRun) -> dict[str, Any]:
    return {"id": run.id, "state": run.state, "progress": run.progress, "params": run.params, "points": run.points,
            "error": run.error, "created_at": run.created_at, "finished_at": run.finished_at}
