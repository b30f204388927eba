"""Periodic tier housekeeping (a backstop: the data path and the restore sweeps clean up as they go)."""

from __future__ import annotations

from tierpilot.kit.db import transaction
from tierpilot.kit.jobs import celery_app
from tierpilot.tiers import service


@celery_app.task(name="tiers.housekeep")
def housekeep() -> dict[str, int]:
    """Remove crashed writers' temp files, expired restored copies and stale native uploads on every tier."""
    with transaction() as session:
        tiers = service.list_tiers(session)
    return service.housekeep(tiers)
