"""Run a sweep and its moves in this process (``tierpilot lifecycle run-now``, tests, the benchmark)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select

from tierpilot.kit.db import transaction, utcnow
from tierpilot.kit.limiter import Throttle
from tierpilot.lifecycle import due
from tierpilot.lifecycle.executor import Outcome, batches, run_moves
from tierpilot.lifecycle.models import LifecycleMove

Progress = Callable[[int, int], None]


@dataclass
class RunSummary:
    sweep: due.SweepResult
    outcomes: Counter[str] = field(default_factory=Counter)
    by_action: Counter[str] = field(default_factory=Counter)
    bytes_moved: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        s = self.sweep
        queued = ", ".join(f"{n} {a}" for a, n in sorted(s.queued.items())) or "nothing"
        out = [f"swept {s.buckets} bucket(s) in {s.seconds:.2f} s: queued {queued}; "
               f"{len(s.resumed_move_ids)} earlier move(s) resumed"]
        done = ", ".join(f"{n} {a}" for a, n in sorted(self.by_action.items())) or "none"
        out.append(f"executed in {self.seconds:.2f} s: {done}; {self.bytes_moved} bytes copied")
        states = ", ".join(f"{n} {st}" for st, n in sorted(self.outcomes.items()))
        if states:
            out.append(f"moves: {states}")
        out.extend(f"skipped bucket {k.bucket}: {k.reason}" for k in s.skipped)
        out.extend(f"error: {e}" for e in self.errors[:20])
        return out


def execute(move_ids: Sequence[int], workers: int = 4, limiter: Throttle | None = None,
            progress: Progress | None = None) -> list[Outcome]:
    """Run moves to the end (waiting out the grace before deleting old copies), ``workers`` batches at a time."""
    outcomes: list[Outcome] = []
    total = len(move_ids)

    def one(batch: list[int]) -> list[Outcome]:
        return run_moves(batch, limiter=limiter, wait_grace=False)

    pending = batches(list(move_ids))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while pending:
            deferred: list[Outcome] = []
            for result in pool.map(one, pending):
                for outcome in result:
                    if outcome.state == "deferred":
                        deferred.append(outcome)
                    else:
                        outcomes.append(outcome)
                if progress is not None:
                    progress(len(outcomes), total)
            if not deferred:
                break
            # one wait for the whole run, then the old copies go
            latest = max(o.delete_after for o in deferred if o.delete_after is not None)
            wait = (latest - utcnow()).total_seconds()
            if wait > 0:
                time.sleep(wait)
            pending = batches([o.move_id for o in deferred])
    return outcomes


def run_now(bucket_id: int | None = None, now: datetime | None = None, workers: int = 4,
            limiter: Throttle | None = None, progress: Progress | None = None) -> RunSummary:
    """One sweep, then every move it queued or found unfinished, synchronously."""
    result = due.sweep(now=now, bucket_id=bucket_id)
    summary = RunSummary(sweep=result)
    started = time.perf_counter()
    outcomes = execute(result.move_ids, workers, limiter, progress)
    summary.seconds = time.perf_counter() - started
    ids = [o.move_id for o in outcomes]
    summary.outcomes.update(o.state for o in outcomes)
    summary.errors.extend(f"move {o.move_id}: {o.error}" for o in outcomes if o.error)
    if ids:
        with transaction() as session:
            for action, state, n, nbytes in session.execute(
                    select(LifecycleMove.action, LifecycleMove.state, func.count(LifecycleMove.id),
                           func.coalesce(func.sum(LifecycleMove.bytes_moved), 0))
                    .where(LifecycleMove.id.in_(ids)).group_by(LifecycleMove.action, LifecycleMove.state)):
                if state == "done":
                    summary.by_action[action] += int(n)
                    summary.bytes_moved += int(nbytes)
    return summary
