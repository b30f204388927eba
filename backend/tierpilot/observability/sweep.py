"""An ssbench/warp-style sweep through a gateway with one user's keys: object sizes × concurrency, counted as
the research counted (client retries and failures per point).

Each point runs ``concurrency`` threads, each with its own boto3 client (no retries of boto3's own), for
``seconds``, in a scratch bucket created for the sweep and emptied and removed after. A request that fails
with a connection error, a time-out or a 5xx is retried up to ``RETRIES`` times after 50 ms × attempt; each
retry counts in ``retries``, a request still failing (or answered another 4xx) in ``failures``. ``phases_ms``
are the gateway's mean phase times for the point's operation, read from its ``/_tierpilot/metrics`` before and
after (a loopback gateway; empty when it cannot be read).
"""

from __future__ import annotations

import re
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

RETRIES = 3
WORKLOADS = ("put", "get")
_OPERATION = {"put": "PUT object", "get": "GET object"}
_SAMPLE = re.compile(r'^tierpilot_gateway_phase_duration_seconds_(sum|count)\{operation="([^"]+)",phase="([^"]+)"\} '
                     r"([0-9.e+-]+)$", re.M)


@dataclass
class Point:
    workload: str
    object_size: int
    concurrency: int
    ops_per_s: float
    mb_per_s: float
    failures: int
    retries: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    ttfb_p50_ms: float
    phases_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pct(values: list[float], q: int) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def _phase_sums(endpoint: str) -> dict[tuple[str, str, str], float]:
    try:
        text = httpx.get(f"{endpoint.rstrip('/')}/_tierpilot/metrics", timeout=5).text
    except httpx.HTTPError:
        return {}
    return {(kind, op, phase): float(value) for kind, op, phase, value in _SAMPLE.findall(text)}


def _phase_means(before: dict[tuple[str, str, str], float], after: dict[tuple[str, str, str], float],
                 operation: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for (kind, op, phase), total in after.items():
        if kind != "sum" or op != operation:
            continue
        count = after.get(("count", op, phase), 0.0) - before.get(("count", op, phase), 0.0)
        if count > 0:
            out[phase] = round((total - before.get(("sum", op, phase), 0.0)) / count * 1000, 3)
    return out


class Sweep:
    """One sweep against ``endpoint`` with one user's keys."""

    def __init__(self, endpoint: str, key_id: str, secret: str, reservation: str | None = None) -> None:
        self.endpoint, self.key_id, self.secret, self.reservation = endpoint, key_id, secret, reservation
        self.bucket = f"tierpilot-sweep-{uuid.uuid4().hex[:12]}"
        self.cancelled = threading.Event()

    def client(self) -> Any:
        import boto3
        from botocore.config import Config

        s3 = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.key_id,
                          aws_secret_access_key=self.secret, region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1, "mode": "standard"}, connect_timeout=10,
                                        read_timeout=60, max_pool_connections=2))
        if self.reservation:
            reservation = self.reservation
            s3.meta.events.register("before-sign.s3", lambda request, **_: request.headers.__setitem__(
                "X-Tierpilot-Reservation", reservation))
        return s3

    def run(self, workloads: Iterable[str], sizes: Iterable[int], concurrency: Iterable[int], seconds: float,
            progress: Callable[[int, int, Point], None] | None = None) -> list[Point]:
        """Every (workload, size, concurrency) point in order; the scratch bucket is removed at the end."""
        plan = [(w, s, c) for w in workloads for s in sizes for c in concurrency]
        for w, _, _ in plan:
            if w not in WORKLOADS:
                raise ValueError(f"workload must be one of {', '.join(WORKLOADS)}")
        admin = self.client()
        admin.create_bucket(Bucket=self.bucket)
        points: list[Point] = []
        try:
            for i, (workload, size, conc) in enumerate(plan):
                if self.cancelled.is_set():
                    break
                point = self._point(workload, size, conc, seconds)
                points.append(point)
                if progress is not None:
                    progress(i + 1, len(plan), point)
        finally:
            self._empty(admin)
        return points

    def _point(self, workload: str, size: int, conc: int, seconds: float) -> Point:
        body = b"s" * size
        seeds = [f"seed/{size}/{i}" for i in range(max(conc, 8))]
        if workload == "get":
            seeder = self.client()
            for key in seeds:
                seeder.put_object(Bucket=self.bucket, Key=key, Body=body)
        lock = threading.Lock()
        latencies: list[float] = []
        ttfbs: list[float] = []
        counts = {"ok": 0, "failures": 0, "retries": 0, "bytes": 0}
        before = _phase_sums(self.endpoint)
        start_at = time.monotonic() + 0.2
        end_at = start_at + seconds

        def worker(n: int) -> None:
            s3 = self.client()
            mine: list[float] = []
            first: list[float] = []
            ok = failures = retries = moved = i = 0
            while time.monotonic() < start_at:
                time.sleep(0.005)
            while time.monotonic() < end_at and not self.cancelled.is_set():
                key = f"w/{n}/{i % 50}" if workload == "put" else seeds[(n + i) % len(seeds)]
                i += 1
                t0 = time.perf_counter()
                for attempt in range(RETRIES + 1):
                    try:
                        if workload == "put":
                            s3.put_object(Bucket=self.bucket, Key=key, Body=body)
                            first.append(time.perf_counter() - t0)
                        else:
                            answer = s3.get_object(Bucket=self.bucket, Key=key)
                            first.append(time.perf_counter() - t0)
                            answer["Body"].read()
                        ok += 1
                        moved += size
                        break
                    except Exception as exc:  # connection errors, time-outs, 5xx: retried; other answers fail
                        status = getattr(exc, "response", {}).get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
                        if (status and status < 500) or attempt == RETRIES:
                            failures += 1
                            break
                        retries += 1
                        time.sleep(0.05 * (attempt + 1))
                mine.append(time.perf_counter() - t0)
            with lock:
                latencies.extend(mine)
                ttfbs.extend(first)
                counts["ok"] += ok
                counts["failures"] += failures
                counts["retries"] += retries
                counts["bytes"] += moved

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(conc)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = max(min(time.monotonic(), end_at) - start_at, 1e-9)
        return Point(workload=workload, object_size=size, concurrency=conc, ops_per_s=round(counts["ok"] / elapsed, 2),
                     mb_per_s=round(counts["bytes"] / elapsed / 1e6, 3), failures=counts["failures"],
                     retries=counts["retries"], p50_ms=round(_pct(latencies, 50), 3),
                     p90_ms=round(_pct(latencies, 90), 3), p99_ms=round(_pct(latencies, 99), 3),
                     ttfb_p50_ms=round(_pct(ttfbs, 50), 3),
                     phases_ms=_phase_means(before, _phase_sums(self.endpoint), _OPERATION[workload]))

    def _empty(self, s3: Any) -> None:
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
        s3.delete_bucket(Bucket=self.bucket)
