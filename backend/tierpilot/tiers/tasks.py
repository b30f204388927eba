"""Periodic tier housekeeping (a backstop: the data path and the restore sweeps clean up as they go) and the scans
of adopted buckets."""

from __future__ import annotations

from tierpilot.kit.db import transaction
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings
from tierpilot.tiers import adopt as adoption
from tierpilot.tiers import adoptions, service


@celery_app.task(name="tiers.housekeep")
def housekeep() -> dict[str, int]:
    """Remove crashed writers' temp files, expired restored copies and stale native uploads on every tier."""
    with transaction() as session:
        tiers = service.list_tiers(session)
    return service.housekeep(tiers)


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
