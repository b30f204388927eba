"""Celery tasks: the beat-driven sweep queues due moves; ``lifecycle.move`` runs a few moves by id."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.jobs import celery_app
from tierpilot.kit.settings import get_settings
from tierpilot.lifecycle import due, repository, sweep_clock
from tierpilot.lifecycle.executor import BATCH_OBJECTS, batches, run_moves

log = logging.getLogger(__name__)


def enqueue(move_ids: list[int]) -> int:
    """Send the moves to the workers in batches (after the sweep committed them); returns the messages sent."""
    if not move_ids:
        return 0
    messages = batches(move_ids)
    with transaction(write=True) as session:
        repository.mark_handed_out(session, move_ids, utcnow())
    for ids in messages:
        move.apply_async(args=[ids])
    return len(messages)


def send(move_ids: list[int]) -> None:
    """Send moves to the workers without touching the database (after a commit); a broker that is down
    only delays them until the next sweep hands them out."""
    try:
        for start in range(0, len(move_ids), BATCH_OBJECTS):
            move.apply_async(args=[move_ids[start:start + BATCH_OBJECTS]], retry=False)
    except Exception:
        log.warning("could not send %d lifecycle moves; the next sweep hands them out", len(move_ids),
                    exc_info=True)


@celery_app.task(name="lifecycle.sweep")
def sweep(bucket_id: int | None = None, scheduled: bool = True) -> dict[str, Any]:
    """Queue what is due and hand out unfinished moves; idempotent, so overlapping sweeps are harmless.

    Beat sends no arguments: its sweeps (``scheduled``) record their start, from which the API tells when
    the next one comes; a sweep an admin asked for does not move beat's schedule, so it records nothing."""
    if scheduled and bucket_id is None:
        sweep_clock.record_start(utcnow())
    result = due.sweep(bucket_id=bucket_id)
    messages = enqueue(result.move_ids)
    return {"buckets": result.buckets, "skipped": len(result.skipped), "queued": result.queued,
            "resumed": len(result.resumed_move_ids),
            "messages": messages, "seconds": round(result.seconds, 3)}


@celery_app.task(name="lifecycle.resume")
def resume(before: str | None = None) -> dict[str, int]:
    """Hand out at once the open moves no live worker runs, not a lease and a sweep later: a worker sends this
    when it connects to the broker (``worker/steps.py``). Besides what a sweep resumes (moves of dead workers,
    leases run out, retries due), the moves handed out before ``before`` that nobody holds: a broker outage may
    have lost their messages. A message sent twice is harmless: its moves' leases let one worker run them."""
    now = utcnow()
    ids = set(due.resumable(now))
    with transaction() as session:
        ids.update(repository.moves_to_resume(session, now, datetime.fromisoformat(before) if before else now,
                                              get_settings().lifecycle_batch))
    return {"resumed": len(ids), "messages": enqueue(sorted(ids))}


@celery_app.task(name="lifecycle.move")
def move(move_ids: list[int]) -> dict[str, str]:
    """Advance a batch of moves; ones waiting out the grace before deleting the old copy come back later."""
    outcomes = run_moves([int(i) for i in move_ids])
    deferred = [o for o in outcomes if o.state == "deferred" and o.delete_after is not None]
    if deferred:
        latest = max(o.delete_after for o in deferred if o.delete_after is not None)
        countdown = max(0.0, (latest - utcnow()).total_seconds()) + 0.1
        move.apply_async(args=[[o.move_id for o in deferred]], countdown=countdown)
    return {str(o.move_id): o.state for o in outcomes}
