"""Gateway usage counted in memory and written in batches.

The gateway's flow policy is wrapped once at start (``spend.gateway``): each data-path request (GET, PUT,
upload part) opens a flow, its chunks add to an integer on that flow, and its close adds one request and
its bytes to an in-memory counter keyed by day, user, bucket and kind (``read``/``write``). Every other
request to a bucket (HEAD, LIST, other GETs and PUTs, DELETE) is counted by kind when it ends, keyed by the
bucket's name (the gateway does not look its id up for them); the names become ids when the counters are
written. A background task writes the counters every ``FLUSH_S`` in one upsert; no database call happens
per request or per chunk.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, datetime

from tierpilot.catalog import repository as catalog_repository
from tierpilot.kit.db import transaction
from tierpilot.kit.flow import Flow, FlowPolicy, FlowRequest
from tierpilot.spend import repository
from tierpilot.spend.repository import MeterRow

log = logging.getLogger(__name__)

FLUSH_S = 2.0
MAX_KEYS = 100_000  # counters kept while the database does not answer; beyond, usage is dropped (and logged)

# the price class each kind bills at: S3 bills PUT, COPY, POST and LIST at the write rate (its tier 1), GET,
# HEAD and the rest at the read rate (tier 2); DELETE is free
KINDS: dict[str, str | None] = {"read": "read", "write": "write", "head": "read", "get": "read", "list": "write",
                                "put": "write", "delete": None}
# GETs that list: objects (V1, V2), versions, multipart uploads, parts of an upload
_LISTS = {("bucket", ""), ("bucket", "versions"), ("bucket", "uploads"), ("object", "uploadId")}


def kind_of(method: str, level: str, subresource: str) -> str:
    """The kind a request that moved no object data is metered as."""
    if method == "HEAD":
        return "head"
    if method == "DELETE" or (method, subresource) == ("POST", "delete"):
        return "delete"
    if method == "GET":
        return "list" if (level, subresource) in _LISTS else "get"
    return "put"


class Meter:
    """Per-process counters; ``add`` touches only a dict."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int, int, str], list[int]] = {}
        self._named: dict[tuple[str, int, str, str], int] = {}  # requests by day, user, bucket name, kind
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

    def add_request(self, user_id: int, bucket: str, kind: str, day: str | None = None, requests: int = 1) -> None:
        """Count a request that moved no object data, by bucket name (``kind`` one of ``KINDS``)."""
        key = (day or self._today(), user_id, bucket, kind)
        with self._lock:
            named = self._named
            count = named.get(key)
            if count is None and len(named) >= MAX_KEYS:
                self.dropped += requests
                return
            named[key] = (count or 0) + requests

    def take(self) -> tuple[list[MeterRow], dict[tuple[str, int, str, str], int]]:
        with self._lock:
            counts, self._counts = self._counts, {}
            named, self._named = self._named, {}
        return [(d, u, b, r, n, nb) for (d, u, b, r), (n, nb) in counts.items()], named

    def flush(self) -> int:
        """Write what was counted (one transaction; bucket names become ids, a bucket deleted meanwhile is
        dropped); on failure the counts wait for the next flush."""
        rows, named = self.take()
        if not rows and not named:
            return 0
        try:
            with transaction(write=True) as session:
                ids = {b.name: b.id for b in catalog_repository.buckets_named(
                    session, sorted({name for _, _, name, _ in named}), None)} if named else {}
                merged = rows + [(d, u, ids[name], kind, n, 0) for (d, u, name, kind), n in named.items()
                                 if name in ids]
                repository.add_usage(session, _summed(merged))
        except Exception:
            for d, u, b, r, n, nb in rows:
                self.add(u, b, r, nb, n, day=d)
            for (d, u, name, kind), n in named.items():
                self.add_request(u, name, kind, day=d, requests=n)
            raise
        return len(rows) + len(named)


def _summed(rows: list[MeterRow]) -> list[MeterRow]:
    """One row per key (an upsert batch may not touch a row twice on PostgreSQL)."""
    out: dict[tuple[str, int, int, str], list[int]] = {}
    for d, u, b, r, n, nb in rows:
        counts = out.setdefault((d, u, b, r), [0, 0])
        counts[0] += n
        counts[1] += nb
    return [(d, u, b, r, n, nb) for (d, u, b, r), (n, nb) in out.items()]


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
