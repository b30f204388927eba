"""Scans of adopted buckets: one queued scan per task, and beat's re-scan of those due."""

from __future__ import annotations

from tierpilot.adoption import repository as adoptions
from tierpilot.adoption import service as adoption
from tierpilot.kit.db import transaction
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings


@celery_app.task(name="tiers.adopt")
def adopt(adoption_id: int) -> dict[str, int] | None:
    """Scan one queued adoption (a duplicate delivery finds it claimed and does nothing)."""
    done = adoption.run_queued(adoption_id)
    return None if done is None else {"listed": done.objects, "added": done.added, "removed": done.removed}


@celery_app.task(name="tiers.rescan_adopted")
def rescan_adopted() -> list[int]:
    """Queue the adopted buckets due a re-scan (and scans whose worker went quiet) and send each a ``tiers.adopt``."""
    with transaction(write=True) as session:
        ids = adoptions.queue_due(session, get_settings().adopt_rescan_s)
    for adoption_id in ids:
        adopt.delay(adoption_id)
    return ids
