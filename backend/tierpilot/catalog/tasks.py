"""Beat's ``catalog.fold_usage``: keep the usage deltas the Overview sums down to a row per bucket and tier."""

from __future__ import annotations

from tierpilot.catalog import repository
from tierpilot.kit.db import transaction
from tierpilot.kit.jobs import celery_app


@celery_app.task(name="catalog.fold_usage")
def fold_usage() -> int:
    """Fold the deltas writers appended since the last run; returns how many rows were folded."""
    with transaction(write=True) as session:
        return repository.fold_usage(session)
