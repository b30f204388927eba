"""Data-path usage counted in the gateway and written in batches.

The gateway's flow policy is wrapped once at start (``spend.gateway``): each data-path request (GET, PUT,
upload part) opens a flow, its chunks add to an integer on that flow, and its close adds one request and
its bytes to an in-memory counter keyed by day, user, bucket and direction. A background task writes
the counters every ``FLUSH_S`` in one upsert; no database call happens per request or per chunk.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime

from tierpilot.kit.db import transaction
from tierpilot.kit.flow import Flow, FlowPolicy, FlowRequest
from tierpilot.spend import repository
from tierpilot.spend.repository import MeterRow

log = logging.getLogger(__name__)

FLUSH_S = 2.0
MAX_KEYS = 100_000  # counters kept while the database does not answer; beyond, usage is dropped (and logged)


class Meter:
    """Per-process counters; ``add`` touches only a dict."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int, int, str], list[int]] = {}
        self._lock = threading.Lock()
        self.dropped = 0
        self._day_index = -1
        self._day = ""

    def _today(self) -> str:
        # the UTC day's name, formatted once a day rather than per request
        index = int(time.time() // 86400)
        if index != self._day_index:
            self._day = datetime.fromtimestamp(index * 86400, UTC).date().isoformat()
            self._day_index = index
        return self._day

    def add(self, user_id: int, bucket_id: int, direction: str, nbytes: int, requests: int = 1,
            day: str | None = None) -> None:
        key = (day or self._today(), user_id, bucket_id, direction)
        with self._lock:
            counts = self._counts.get(key)
            if counts is None:
                if len(self._counts) >= MAX_KEYS:
                    self.dropped += requests
                    return
                counts = self._counts[key] = [0, 0]
            counts[0] += requests
            counts[1] += nbytes

    def take(self) -> list[MeterRow]:
        with self._lock:
            counts, self._counts = self._counts, {}
        return [(d, u, b, r, n, nb) for (d, u, b, r), (n, nb) in counts.items()]

    def flush(self) -> int:
        """Write what was counted (one transaction); on failure the counts wait for the next flush."""
        rows = self.take()
        if not rows:
            return 0
        try:
            with transaction(write=True) as session:
                repository.add_usage(session, rows)
        except Exception:
            for d, u, b, r, n, nb in rows:
                self.add(u, b, r, nb, n, day=d)
            raise
        return len(rows)


meter = Meter()


class MeteredFlow:
    """A request's flow that counts its bytes and reports them once, at close."""

    __slots__ = ("_flow", "_meter", "_request", "_bytes", "headers")

    def __init__(self, flow: Flow, request: FlowRequest, counter: Meter) -> None:
        self._flow, self._request, self._meter, self.headers = flow, request, counter, flow.headers
        self._bytes = 0

    async def consume(self, nbytes: int) -> None:
        self._bytes += nbytes
        await self._flow.consume(nbytes)

    async def close(self) -> None:
        r = self._request
        self._meter.add(r.user_id, r.bucket_id, r.direction, self._bytes)
        await self._flow.close()


class MeteringPolicy:
    """Wraps the gateway's flow policy: every flow it opens is metered."""

    def __init__(self, inner: FlowPolicy, counter: Meter = meter) -> None:
        self.inner = inner
        self.meter = counter

    async def open(self, request: FlowRequest) -> Flow:
        return MeteredFlow(await self.inner.open(request), request, self.meter)
