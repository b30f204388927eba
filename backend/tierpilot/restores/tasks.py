"""Beat-driven sweeps of due restore rows (the due times live in the database, never in the broker)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tierpilot.kit.jobs import celery_app
from tierpilot.restores import sweep


def _report(stats: sweep.SweepStats) -> dict[str, Any]:
    return asdict(stats)


@celery_app.task(name="restores.poll_due")
def poll_due() -> dict[str, Any]:
    """Submit new restore requests and poll the running ones that are due; complete finished batches."""
    stats = sweep.poll_due()
    if stats.notifications:
        celery_app.send_task("notifications.deliver_webhooks")
    return _report(stats)


@celery_app.task(name="restores.expire")
def expire() -> dict[str, Any]:
    """Retire restored copies past their expiry and update the catalog."""
    return _report(sweep.expire_due())
