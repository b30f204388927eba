"""The worker's benchmark task: takes a run id, runs its sweep (``observability.runs.execute``)."""

from __future__ import annotations

from tierpilot.benchmarks import runs
from tierpilot.kit.jobs import celery_app


@celery_app.task(name=runs.TASK, acks_late=False)
def run_benchmark(run_id: int) -> str:
    """Not redelivered when a worker dies mid-run: a half-run sweep is not repeated, its row says where it got."""
    return runs.execute(run_id)
