"""Celery app: Redis broker and result backend (embedded default: a local redis-server, see README)."""

from __future__ import annotations

from datetime import timedelta

from celery import Celery

from tierpilot.settings import get_settings

# Each domain's tasks module; tasks take ids, are idempotent and named `<domain>.<verb>`.
TASK_MODULES = [
    "tierpilot.auth.tasks",
    "tierpilot.notifications.tasks",
    "tierpilot.restores.tasks",
    "tierpilot.lifecycle.tasks",
    "tierpilot.reservations.tasks",
    "tierpilot.tiers.tasks",
]

BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # a backstop: walks every tier directory, so rarely
    "tiers.housekeep": {"task": "tiers.housekeep", "schedule": timedelta(hours=6), "options": {"expires": 3600}},
    "auth.purge_expired_tokens": {"task": "auth.purge_expired_tokens", "schedule": timedelta(hours=1)},
    # restore sweeps read due rows from the database; a sweep not started within a few periods is dropped
    "restores.poll_due": {"task": "restores.poll_due", "schedule": timedelta(seconds=get_settings().restore_sweep_s),
                          "options": {"expires": 5 * get_settings().restore_sweep_s}},
    "restores.expire": {"task": "restores.expire", "schedule": timedelta(minutes=1), "options": {"expires": 300}},
    "notifications.deliver_webhooks": {"task": "notifications.deliver_webhooks", "schedule": timedelta(seconds=5),
                                       "options": {"expires": 60}},
    "lifecycle.sweep": {"task": "lifecycle.sweep", "schedule": timedelta(seconds=get_settings().lifecycle_sweep_s)},
    # metering feeds the live booked-vs-achieved chart: a few seconds behind the gateways
    "reservations.rollup_metering": {"task": "reservations.rollup_metering", "schedule": timedelta(seconds=5),
                                     "options": {"expires": 30}},
    "reservations.advance_states": {"task": "reservations.advance_states", "schedule": timedelta(seconds=15),
                                    "options": {"expires": 60}},
}


def make_celery() -> Celery:
    settings = get_settings()
    app = Celery("tierpilot", broker=settings.celery_broker_url, backend=settings.celery_result_backend,
                 include=TASK_MODULES)
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
        beat_schedule=BEAT_SCHEDULE,
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
