"""The worker's metrics: Celery task outcomes and run times (``kit.metrics``), read through the API's /metrics."""

from __future__ import annotations

import time
from typing import Any

from celery import signals

from tierpilot.kit import metrics

_started: dict[str, float] = {}


@signals.worker_init.connect
@signals.worker_process_init.connect
def _configure(**_kwargs: Any) -> None:
    metrics.configure("worker")


@signals.task_prerun.connect
def _task_started(task_id: str | None = None, **_kwargs: Any) -> None:
    if task_id:
        _started[task_id] = time.monotonic()


@signals.task_postrun.connect
def _task_finished(task_id: str | None = None, task: Any = None, state: str | None = None, **_kwargs: Any) -> None:
    started = _started.pop(task_id or "", None)
    name = getattr(task, "name", None) or "unknown"
    metrics.TASKS.labels(name, (state or "unknown").lower()).inc()
    if started is not None:
        metrics.TASK_DURATION.labels(name).observe(time.monotonic() - started)
