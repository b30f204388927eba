"""The Celery app every process shares: domains register their tasks on it and enqueue by task name.

The broker is Redis (embedded default: a local redis-server, or the documented SQLite transport); the
worker and beat processes run it through ``worker.app``, which adds the task modules and the schedule.
"""

from __future__ import annotations

from datetime import timedelta

from celery import Celery

from tierpilot.kit.settings import get_settings


def make_celery() -> Celery:
    settings = get_settings()
    app = Celery("tierpilot", broker=settings.celery_broker_url, backend=settings.celery_result_backend)
    app.conf.update(
        task_acks_late=True,  # a worker killed mid-task leaves it queued for another
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_expires=timedelta(days=1),
        timezone="UTC",
        enable_utc=True,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
    )
    if settings.redis_url:
        # Redis redelivers an unacknowledged task after this; the SQLAlchemy fallback has no such option
        app.conf.broker_transport_options = {"visibility_timeout": 3600}
    return app


celery_app = make_celery()


def broker_reachable() -> str:
    """'ok' when the broker answers within a second, else the error."""
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=1)
        return "ok"
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"[:300]
