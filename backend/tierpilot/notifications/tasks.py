"""Webhook deliveries, swept by beat from the database (state lives there, not in the broker)."""

from __future__ import annotations

from dataclasses import asdict

from tierpilot.kit.jobs import celery_app
from tierpilot.notifications import service


@celery_app.task(name="notifications.deliver_webhooks")
def deliver_webhooks() -> dict[str, int]:
    """POST the due webhooks once each; failures are retried later with backoff."""
    return asdict(service.deliver_due())
