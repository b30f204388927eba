"""Which gateway requests keep a full trace, how traces reach the table, and who may read them.

Every request's phases feed the histograms (``kit.metrics``); a full record is kept for a sample: every
request sent with ``X-Tierpilot-Trace: 1``, a random share (``TIERPILOT_TRACE_SAMPLE_RATE``) and the slowest
``TIERPILOT_TRACE_SLOWEST_PER_MINUTE`` of each minute of each gateway process. Records wait in a bounded
in-process queue that the gateway flushes to ``request_traces`` every couple of seconds, off the request
path (no database round trip per request); the table keeps the newest ``TIERPILOT_TRACE_KEEP``.
"""

from __future__ import annotations

import heapq
import logging
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.kit import metrics
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import NotFound
from tierpilot.kit.settings import get_settings
from tierpilot.kit.tracing import Recorder
from tierpilot.traces import gauges, repository
from tierpilot.traces.models import RequestTrace
from tierpilot.traces.schemas import ActiveReservation, ActivityOut, GatewayTotals

log = logging.getLogger(__name__)
QUEUE_MAX = 5000  # records waiting for a flush at most; past it the oldest are dropped


@dataclass(slots=True)
class Finished:
    """A finished request as the sampler sees it."""

    request_id: str
    at: datetime
    user_id: int | None
    bucket: str
    operation: str
    status: int
    nbytes: int
    recorder: Recorder

    def row(self, reason: str) -> dict[str, Any]:
        phases = [[name, round(start / 1e6, 3), round(duration / 1e6, 3)]
                  for name, start, duration in self.recorder.phases()]
        return {"request_id": self.request_id, "at": self.at, "user_id": self.user_id, "bucket": self.bucket[:63],
                "operation": self.operation[:64], "status": self.status, "bytes": self.nbytes,
                "total_ms": round(self.recorder.total_ns() / 1e6, 3), "reason": reason, "phases": phases}


@dataclass(slots=True)
class Sampler:
    """Picks the requests whose traces are kept and queues their rows (one per gateway process)."""

    rate: float
    slowest_per_minute: int
    enabled: bool = True
    rng: Callable[[], float] = random.random
    clock: Callable[[], float] = time.monotonic
    pending: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=QUEUE_MAX))
    # also given every kept request (OpenTelemetry export), when set
    export: Callable[[Finished], None] | None = None
    _minute: int = -1
    _slowest: list[tuple[int, int, Finished]] = field(default_factory=list)
    _seq: int = 0

    @classmethod
    def from_settings(cls) -> Sampler:
        s = get_settings()
        return cls(rate=s.trace_sample_rate, slowest_per_minute=s.trace_slowest_per_minute, enabled=s.tracing)

    def decide(self, total_ns: int, forced: bool) -> str | None:
        """Whether a request that took ``total_ns`` is kept ("asked", "random") or is among the slowest of its
        minute so far ("slowest"): the gateway builds the request's ``Finished`` only then (``admit``)."""
        if not self.enabled:
            return None
        if forced:
            return "asked"
        rate = self.rate
        if rate and self.rng() < rate:
            return "random"
        keep = self.slowest_per_minute
        if not keep:
            return None
        minute = int(self.clock() // 60)
        if minute != self._minute:
            self._roll(minute)
        slowest = self._slowest
        if len(slowest) < keep or total_ns > slowest[0][0]:
            return "slowest"
        return None

    def admit(self, done: Finished, reason: str) -> None:
        """Keep ``done`` for ``reason`` as ``decide`` answered it."""
        if reason != "slowest":
            self._keep(done, reason)
            return
        self._seq += 1
        entry = (done.recorder.total_ns(), self._seq, done)
        if len(self._slowest) < self.slowest_per_minute:
            heapq.heappush(self._slowest, entry)
        else:
            heapq.heapreplace(self._slowest, entry)

    def _roll(self, minute: int | None = None) -> None:
        if minute is None:
            minute = int(self.clock() // 60)
        if minute != self._minute:
            for _, _, done in self._slowest:
                self._keep(done, "slowest")
            self._slowest.clear()
            self._minute = minute

    def _keep(self, done: Finished, reason: str) -> None:
        self.pending.append(done.row(reason))
        metrics.TRACES_SAMPLED.labels(reason).inc()
        if self.export is not None:
            try:
                self.export(done)
            except Exception:
                log.warning("could not export a request trace", exc_info=True)

    def take(self) -> list[dict[str, Any]]:
        """The rows to write now (the slowest of a minute once the minute is over)."""
        self._roll()
        rows = list(self.pending)
        self.pending.clear()
        return rows


def store(rows: list[dict[str, Any]], keep: int | None = None) -> None:
    """Write sampled rows and prune the table to the newest ``keep`` (a gateway's flush, in a thread)."""
    if not rows:
        return
    with transaction(write=True) as session:
        repository.add_many(session, rows)
        repository.prune(session, keep if keep is not None else get_settings().trace_keep)


def phases_of(request_ids: list[str]) -> dict[str, list[Any]]:
    """The stored phases of those sampled requests that reached the table (a sweep reads its own back)."""
    with transaction() as session:
        return repository.phases_by_request_id(session, request_ids[:1000])


def _visible(user_id: int, is_admin: bool) -> int | None:
    return None if is_admin else user_id


def get_trace(session: Session, user_id: int, is_admin: bool, request_id: str) -> RequestTrace:
    """A trace of the caller's (any, for an admin); someone else's is as absent as a missing one."""
    trace = repository.get(session, request_id[:32])
    if trace is None or (not is_admin and trace.user_id != user_id):
        raise NotFound("no such traced request", request_id=request_id[:32])
    return trace


def recent(session: Session, user_id: int, is_admin: bool, operation: str | None, bucket: str | None,
           slower_than_ms: float | None, limit: int) -> list[RequestTrace]:
    """The newest sampled requests the caller may see."""
    return repository.recent(session, _visible(user_id, is_admin), operation, bucket, slower_than_ms, limit)


def activity(session: Session, user_id: int, is_admin: bool) -> ActivityOut:
    """The Overview's live figures; installation-wide counters only for admins."""
    owner = _visible(user_id, is_admin)
    gateway = None
    if is_admin:
        t = metrics.totals("gateway")
        gateway = GatewayTotals(requests=t.get("tierpilot_gateway_requests_total", 0.0),
                                errors=t.get("tierpilot_gateway_requests_total:5xx", 0.0),
                                slowdowns=t.get("tierpilot_gateway_slowdowns_total", 0.0),
                                bytes_in=t.get("tierpilot_gateway_received_bytes_total", 0.0),
                                bytes_out=t.get("tierpilot_gateway_sent_bytes_total", 0.0),
                                in_flight=t.get("tierpilot_gateway_requests_in_flight", 0.0))
    items = gauges.restore_items(session, owner)
    backlog = None
    if is_admin:
        moves = gauges.lifecycle_moves(session)
        backlog = moves.get("queued", 0) + moves.get("running", 0)
    return ActivityOut(
        at=datetime.now(UTC), gateway=gateway, restores_in_flight=items["pending"] + items["ongoing"],
        lifecycle_backlog=backlog,
        reservations=[ActiveReservation(bucket=r.bucket, direction=r.direction, booked_bps=r.rate_bps,
                                        achieved_bps=r.achieved_mean_bps)
                      for r in gauges.active_reservations(session, owner)])
