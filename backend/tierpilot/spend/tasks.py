"""Beat's ``spend.roll_up``: close the finished days of stored bytes and prune the history they no longer need."""

from __future__ import annotations

from tierpilot.kit.jobs import celery_app
from tierpilot.spend import rollup


@celery_app.task(name="spend.roll_up")
def roll_up() -> int:
    """Close the finished UTC days not closed yet (the first run closes every day since the oldest stored byte);
    returns how many were closed."""
    return rollup.roll_up()
