"""Celery tasks: the beat-driven sweep queues due moves; ``lifecycle.move`` runs a few moves by id."""

from __future__ import annotations

import logging
from typing import Any

from tierpilot.lifecycle import planner
from tierpilot.lifecycle.executor import run_move
from worker.app import celery_app

log = logging.getLogger(__name__)

# moves per task message: small objects share a message, large ones spread over the workers
CHUNK_OBJECTS = 32
CHUNK_BYTES = 256 * 1024 * 1024


def chunks(move_ids: list[int], sizes: dict[int, int]) -> list[list[int]]:
    out: list[list[int]] = []
    current: list[int] = []
    size = 0
    for move_id in move_ids:
        s = sizes.get(move_id, 0)
        if current and (len(current) >= CHUNK_OBJECTS or size + s > CHUNK_BYTES):
            out.append(current)
            current, size = [], 0
        current.append(move_id)
        size += s
    if current:
        out.append(current)
    return out


def enqueue(move_ids: list[int]) -> int:
    """Send the moves to the workers (after the sweep committed them); returns the messages sent."""
    if not move_ids:
        return 0
    from sqlalchemy import select

    from tierpilot.kit.db import transaction, utcnow
    from tierpilot.lifecycle import repository
    from tierpilot.lifecycle.models import LifecycleMove

    with transaction(write=True) as session:
        sizes = {int(i): int(s) for i, s in session.execute(
            select(LifecycleMove.id, LifecycleMove.size).where(LifecycleMove.id.in_(move_ids)))}
        repository.mark_handed_out(session, move_ids, utcnow())
    messages = chunks(move_ids, sizes)
    for ids in messages:
        move.apply_async(args=[ids])
    return len(messages)


def send(move_ids: list[int]) -> None:
    """Send moves to the workers without touching the database (after a commit); a broker that is down
    only delays them until the next sweep hands them out."""
    try:
        for start in range(0, len(move_ids), CHUNK_OBJECTS):
            move.apply_async(args=[move_ids[start:start + CHUNK_OBJECTS]], retry=False)
    except Exception:
        log.warning("could not send %d lifecycle moves; the next sweep hands them out", len(move_ids),
                    exc_info=True)


@celery_app.task(name="lifecycle.sweep")
def sweep(bucket_id: int | None = None) -> dict[str, Any]:
    """Queue what is due and hand out unfinished moves; idempotent, so overlapping sweeps are harmless."""
    result = planner.sweep(bucket_id=bucket_id)
    messages = enqueue(result.move_ids)
    return {"buckets": result.buckets, "queued": result.queued, "resumed": len(result.resumed_move_ids),
            "messages": messages, "seconds": round(result.seconds, 3)}


@celery_app.task(name="lifecycle.move")
def move(move_ids: list[int]) -> dict[str, str]:
    """Advance each move; ones waiting out the grace before deleting the old copy come back later."""
    states: dict[str, str] = {}
    deferred: list[int] = []
    latest = None
    for move_id in move_ids:
        outcome = run_move(int(move_id))
        states[str(move_id)] = outcome.state
        if outcome.state == "deferred" and outcome.delete_after is not None:
            deferred.append(int(move_id))
            latest = outcome.delete_after if latest is None else max(latest, outcome.delete_after)
    if deferred and latest is not None:
        from tierpilot.kit.db import utcnow

        countdown = max(0.0, (latest - utcnow()).total_seconds()) + 0.1
        move.apply_async(args=[deferred], countdown=countdown)
    return states
