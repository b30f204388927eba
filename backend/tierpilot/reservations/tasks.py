"""Periodic reservation work: metering roll-up from Redis into the database, state transitions.

Both are idempotent and safe to run twice at once: the roll-up takes each counter atomically,
and a transition only moves a state the clock has already passed.
"""

from __future__ import annotations

import redis

from tierpilot.kit.db import transaction
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings
from tierpilot.reservations import achieved, service


@celery_app.task(name="reservations.rollup_metering")
def rollup_metering() -> int:
    """Move the gateways' per-second byte counters into the database; returns reservation-seconds stored.

    Without Redis the gateways write their counters to the database themselves: nothing to do.
    """
    url = get_settings().redis_url
    if not url:
        return 0
    client = redis.Redis.from_url(url, socket_timeout=10)
    try:
        return achieved.rollup(client)
    finally:
        client.close()


@celery_app.task(name="reservations.advance_states")
def advance_states() -> dict[str, int]:
    """booked -> active -> finished along the clock; finished reservations get their final figures."""
    with transaction(write=True) as session:
        return service.advance_states(session)
