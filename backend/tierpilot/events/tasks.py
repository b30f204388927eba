"""The worker's events tasks: drain the outbox (beat, every TIERPILOT_EVENTS_DRAIN_S) and keep it in check."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tierpilot.events import delivery
from tierpilot.kit.jobs import celery_app


@celery_app.task(name="events.deliver")
def deliver() -> dict[str, int]:
    """Send due events; a drain still running when the next starts shares the outbox with it (leases)."""
    return asdict(delivery.drain())


@celery_app.task(name="events.housekeep")
def housekeep() -> dict[str, Any]:
    return delivery.housekeep()
