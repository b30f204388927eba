"""Audit retention: beat's ``audit.prune`` deletes events older than ``TIERPILOT_AUDIT_RETENTION_DAYS``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime

from tierpilot.audit import service
from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings

log = logging.getLogger(__name__)
# between batches: SQLite's busy handler retries in steps of up to 100 ms, so a writer waiting for the lock
# (a login recording its event) needs a gap to get in before the next batch takes the lock again
PAUSE_S = 0.1


def prune_expired(clock: Callable[[], datetime] = utcnow, batch: int = service.PRUNE_BATCH,
                  pause_s: float = PAUSE_S) -> int:
    """Delete every event past the retention period, one short transaction per batch; returns the count."""
    now, days = clock(), get_settings().audit_retention_days
    total = 0
    while True:
        with transaction(write=True) as session:
            deleted = service.prune(session, now, days, batch)
        total += deleted
        if deleted < batch:
            break
        time.sleep(pause_s)
    if total:
        log.info("audit retention: deleted %d events older than %d days", total, days)
    return total


@celery_app.task(name="audit.prune")
def prune() -> int:
    """Delete audit events older than the retention period; returns how many went."""
    return prune_expired()
