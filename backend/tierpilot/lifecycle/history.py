"""Executed moves (history, failures, retries) and their metered totals, for the API."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from tierpilot.kit.db import after_commit, utcnow
from tierpilot.kit.errors import Conflict, NotFound
from tierpilot.lifecycle import repository
from tierpilot.lifecycle.models import LifecycleMove
from tierpilot.pricing.engine import from_nano
from tierpilot.tiers import repository as tiers_repository


def move_out(m: LifecycleMove, tiers: dict[int, str], buckets: dict[int, str]) -> dict[str, Any]:
    return {"id": m.id, "action": m.action, "rule_id": m.rule_id, "bucket": buckets.get(m.bucket_id, ""),
            "key": m.key, "from_tier": tiers.get(m.src_tier_id, str(m.src_tier_id)),
            "to_tier": tiers.get(m.dst_tier_id) if m.dst_tier_id else None, "from_class": m.src_class,
            "to_class": m.dst_class, "size": m.size, "state": m.state, "attempts": m.attempts, "error": m.error,
            "next_attempt_at": m.next_attempt_at, "created_at": m.created_at, "started_at": m.started_at,
            "finished_at": m.finished_at, "copy_seconds": m.copy_seconds, "bytes_moved": m.bytes_moved,
            "early_deletion_usd": from_nano(m.early_deletion_nanousd)}


def list_moves(session: Session, buckets: dict[int, str], states: Sequence[str], before_id: int | None,
               limit: int) -> dict[str, Any]:
    """Newest first, ``limit`` at a time (``before_id`` pages back), with counts per state."""
    ids = list(buckets)
    rows = repository.list_moves(session, bucket_ids=ids, states=states, before_id=before_id, limit=limit + 1)
    tiers = tiers_repository.tier_names(session)
    page = rows[:limit]
    return {"moves": [move_out(m, tiers, buckets) for m in page],
            "counts": repository.count_moves_by_state(session, ids),
            "next_before_id": page[-1].id if len(rows) > limit else None}


def retry(session: Session, buckets: dict[int, str], move_id: int | None = None) -> list[int]:
    """Make failed moves runnable now (one, or every failed one of the buckets); returns their ids.

    They go to the workers once the session commits (and not at all if it rolls back).
    """
    if move_id is not None:
        move = repository.get_move(session, move_id)
        if move is None or move.bucket_id not in buckets:
            raise NotFound(f"there is no lifecycle move {move_id}")
        if move.state != "failed":
            raise Conflict(f"move {move_id} is {move.state}, not failed")
        ids = [move_id]
    else:
        ids = [m.id for m in repository.list_moves(session, bucket_ids=list(buckets), states=["failed"],
                                                    limit=100_000)]
    if ids:
        session.execute(update(LifecycleMove).where(LifecycleMove.id.in_(ids), LifecycleMove.state == "failed")
                        .values(next_attempt_at=utcnow(), attempts=0).execution_options(synchronize_session=False))
        session.flush()
        from tierpilot.lifecycle.tasks import send

        after_commit(session, lambda: send(ids))
    return ids


def meter(session: Session, days: int | None) -> dict[str, Any]:
    """Moved objects and bytes per action and tier pair, transition requests and early-deletion charges."""
    since: date | None = (utcnow() - timedelta(days=days)).date() if days else None
    tiers = tiers_repository.tier_names(session)
    rows = []
    for action, src, dst, objects, nbytes, requests, early_nano, early_n, failures in repository.meter_totals(
            session, since.isoformat() if since else None):
        rows.append({"action": action, "from_tier": tiers.get(src, str(src)),
                     "to_tier": tiers.get(dst) if dst else None, "objects": int(objects or 0),
                     "bytes": int(nbytes or 0), "transition_requests": int(requests or 0),
                     "early_deletions": int(early_n or 0), "early_deletion_usd": from_nano(int(early_nano or 0)),
                     "failures": int(failures or 0)})
    return {"since": since, "rows": rows}
