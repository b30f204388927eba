"""An ssbench/warp-style sweep through a gateway with one user's keys: object sizes × concurrency, counted as
the research counted (client retries and failures per point).

Each point runs ``concurrency`` threads, each with its own keep-alive connection (``s3client``: SigV4 with an
unsigned payload and no client checksum, so the client costs the shared machine little), for
``seconds``, in a scratch bucket created for the sweep and emptied and removed after (with a reservation:
under a scratch prefix of the reservation's bucket, emptied after; the reservation id goes with the requests of
its direction, PUTs for a write reservation and GETs for a read one, as the gateway refuses a request of the
other direction under it: the seeding PUTs of a GET point go best effort). A request that fails
with a connection error, a time-out or a 5xx is retried up to ``RETRIES`` times after 50 ms × attempt; each
retry counts in ``retries``, a request still failing (or answered another 4xx) in ``failures``.

Workloads: ``put``, ``get``, ``head``, ``list`` (ListObjectsV2 of the point's seed objects), ``delete`` (of
objects seeded before the point; the point ends early when they run out, and its rate is over the time it
took) and ``mixed`` (each request draws its operation by the given ratios; its deletes remove objects the same
thread put before, a delete with none left puts one instead). Sizes are fixed per point or drawn per object
from a log-uniform distribution between two bounds (as warp's random sizes); ``mb_per_s`` counts the object
bytes sent or received.

``phases_ms`` are medians, per phase, over a sample of the point's requests: every ``TRACE_EVERY``-th request
(at most ``TRACE_MAX`` a point) is sent with ``X-Tierpilot-Trace: 1``, which makes the gateway keep its full
trace; after the point the sweep reads those traces back from the trace store by their ``x-amz-request-id``
(a phase a traced request did not pass through counts as 0 ms for it). The gateway flushes traces every 2 s,
so this needs the installation's database and costs up to ``TRACE_WAIT_S`` per point; without it
(``read_phases=False`` or no database) ``phases_ms`` is empty.
"""

from __future__ import annotations

import itertools
import logging
import math
import random
import statistics
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tierpilot.benchmarks.s3client import Answer, S3Client, Unanswered

log = logging.getLogger(__name__)
RETRIES = 3
WORKLOADS = ("put", "get", "head", "list", "delete", "mixed")
MIXED_OPERATIONS = ("put", "get", "head", "list", "delete")
DEFAULT_RATIOS = {"put": 0.2, "get": 0.7, "head": 0.1}  # a mixed workload's shares when none are given
TRACE_EVERY = 4
TRACE_MAX = 200
TRACE_WAIT_S = 5.0
DELETE_SEED_BYTES = 256 << 20  # objects seeded for a delete point at most (bytes), besides the count below
DELETE_SEED_MAX = 4000


@dataclass(frozen=True)
class Sizes:
    """Object sizes of one point: ``low == high`` for a fixed size, else log-uniform in [low, high]."""

    low: int
    high: int

    def draw(self, rng: random.Random) -> int:
        if self.low == self.high:
            return self.low
        return min(self.high, max(self.low, round(math.exp(rng.uniform(math.log(self.low), math.log(self.high))))))

    @property
    def label(self) -> str:
        return "" if self.low == self.high else f"log-uniform {self.low}-{self.high}"


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
    size_distribution: str = ""
    traced: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_METHODS = {"get": "GET", "head": "HEAD", "delete": "DELETE"}
DIRECTIONS = {"put": "write", "get": "read"}  # the requests that move bytes through a flow


def sends(workload: str, ratios: Mapping[str, float] | None, direction: str) -> bool:
    """Whether a workload sends requests of a reservation's ``direction`` (PUTs for write, GETs for read)."""
    ops = (ratios or DEFAULT_RATIOS) if workload == "mixed" else {workload: 1.0}
    return any(share > 0 and DIRECTIONS.get(op) == direction for op, share in ops.items())


class _Refused(Exception):
    """An answer that is not a success (its status decides: 5xx is retried, 4xx is a failure)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def _pct(values: list[float], q: int) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def phase_medians(traces: Sequence[Sequence[Sequence[Any]]]) -> dict[str, float]:
    """Per phase, the median duration (ms) over the traces (``[[name, start_ms, duration_ms], ...]`` each)."""
    per: list[dict[str, float]] = []
    for phases in traces:
        mine: dict[str, float] = {}
        for name, _start, duration in phases:
            mine[str(name)] = mine.get(str(name), 0.0) + float(duration)
        per.append(mine)
    names = sorted({n for p in per for n in p})
    return {n: round(statistics.median(p.get(n, 0.0) for p in per), 3) for n in names}


def check_ratios(ratios: Mapping[str, float]) -> dict[str, float]:
    """Mixed-workload ratios normalised to a sum of 1 (ValueError naming the problem)."""
    unknown = set(ratios) - set(MIXED_OPERATIONS)
    if unknown:
        raise ValueError(f"ratios may name only {', '.join(MIXED_OPERATIONS)} (not {', '.join(sorted(unknown))})")
    if any(not math.isfinite(v) or v < 0 for v in ratios.values()):
        raise ValueError("ratios must be finite and not negative")
    total = sum(ratios.values())
    if total <= 0:
        raise ValueError("ratios must add up to more than 0")
    return {k: v / total for k, v in ratios.items() if v > 0}


def _stored_phases(request_ids: list[str]) -> dict[str, list[Any]]:
    from tierpilot.traces import service

    return service.phases_of(request_ids)


class Sweep:
    """One sweep against ``endpoint`` with one user's keys."""

    def __init__(self, endpoint: str, key_id: str, secret: str, reservation: str | None = None,
                 direction: str | None = None, ratios: Mapping[str, float] | None = None, read_phases: bool = True,
                 phases_of: Callable[[list[str]], dict[str, list[Any]]] | None = None,
                 bucket: str | None = None) -> None:
        self.endpoint, self.key_id, self.secret, self.reservation = endpoint, key_id, secret, reservation
        if direction not in (None, "read", "write"):
            raise ValueError("direction must be read or write")
        self.direction = direction  # of the reservation; None: its id goes with every request
        self.ratios = check_ratios(ratios) if ratios else dict(DEFAULT_RATIOS)
        self.read_phases = read_phases
        self.phases_of = phases_of or _stored_phases
        scratch = f"tierpilot-sweep-{uuid.uuid4().hex[:12]}"
        # a reservation holds for one bucket: then the sweep works under a scratch prefix of that bucket
        self.own_bucket = bucket is None
        self.bucket = bucket or scratch
        self.prefix = "" if bucket is None else f"{scratch}/"
        self.cancelled = threading.Event()

    def client(self) -> Any:
        """A boto3 client for the unmeasured set-up and clean-up (bucket, multi-object delete)."""
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.key_id,
                            aws_secret_access_key=self.secret, region_name="us-east-1",
                            config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=10,
                                          read_timeout=60))

    def headers(self, op: str, trace: bool = False) -> dict[str, str]:
        """The sweep's own headers of an ``op`` request: the reservation (for its direction's requests);
        ``trace`` asks the gateway to keep the request's trace."""
        out = {}
        if self.reservation and (self.direction is None or DIRECTIONS.get(op) == self.direction):
            out["X-Tierpilot-Reservation"] = self.reservation
        if trace:
            out["X-Tierpilot-Trace"] = "1"
        return out

    def run(self, workloads: Iterable[str], sizes: Iterable[int | tuple[int, int]], concurrency: Iterable[int],
            seconds: float, progress: Callable[[int, int, Point], None] | None = None) -> list[Point]:
        """Every (workload, size, concurrency) point in order; the scratch bucket is removed at the end.

        A size is a number of bytes or a ``(low, high)`` pair drawn log-uniformly per object."""
        ranges = [Sizes(s, s) if isinstance(s, int) else Sizes(min(s), max(s)) for s in sizes]
        plan = [(w, s, c) for w in workloads for s in ranges for c in concurrency]
        for w, _, _ in plan:
            if w not in WORKLOADS:
                raise ValueError(f"workload must be one of {', '.join(WORKLOADS)}")
        admin = self.client()
        if self.own_bucket:
            admin.create_bucket(Bucket=self.bucket)
        points: list[Point] = []
        try:
            for i, (workload, size, conc) in enumerate(plan):
                if self.cancelled.is_set():
                    break
                point = self._point(workload, size, conc, seconds, f"p{i}")
                points.append(point)
                if progress is not None:
                    progress(i + 1, len(plan), point)
        finally:
            self._empty(admin)
        return points

    def _seed(self, keys: list[str], sizes: Sizes, threads: int) -> None:
        rng = random.Random(len(keys))
        lengths = [sizes.draw(rng) for _ in keys]
        body = b"s" * sizes.high
        todo = deque(zip(keys, lengths, strict=True))

        headers = self.headers("put")
        failed: list[str] = []

        def work() -> None:
            s3 = S3Client(self.endpoint, self.key_id, self.secret)
            try:
                while not failed:
                    try:
                        key, n = todo.popleft()
                    except IndexError:
                        return
                    answer = s3.send("PUT", self.bucket, key, body=body[:n], headers=headers)
                    if answer.status != 200:
                        failed.append(f"{answer.status} for {key}")
            except Unanswered as exc:
                failed.append(str(exc))
            finally:
                s3.close()

        pool = [threading.Thread(target=work) for _ in range(max(1, min(threads, 16)))]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        if failed:
            raise RuntimeError(f"could not seed the point's objects: {failed[0]}")

    def _point(self, workload: str, sizes: Sizes, conc: int, seconds: float, tag: str) -> Point:
        body = b"s" * sizes.high
        prefix = f"{self.prefix}seed/{tag}/"
        seeds = [f"{prefix}{i}" for i in range(max(conc, 8))]
        if workload in ("get", "head", "list", "mixed"):
            self._seed(seeds, sizes, conc)
        doomed: deque[str] = deque()
        if workload == "delete":
            mean = (sizes.low + sizes.high) / 2
            n = min(DELETE_SEED_MAX, max(conc * 8, int(seconds * 400)), max(conc, int(DELETE_SEED_BYTES // mean)))
            doomed.extend(f"{self.prefix}d/{tag}/{i}" for i in range(n))
            self._seed(list(doomed), sizes, conc)
        lock = threading.Lock()
        latencies: list[float] = []
        ttfbs: list[float] = []
        traced: list[str] = []
        counts = {"ok": 0, "failures": 0, "retries": 0, "bytes": 0}
        sequence = itertools.count()
        last_end = [0.0]
        window = {"start": 0.0, "end": 0.0}

        def open_window() -> None:
            # the clock starts once every thread has its client (making 64 boto3 clients takes a while)
            window["start"] = time.monotonic()
            window["end"] = window["start"] + seconds

        ready = threading.Barrier(conc, action=open_window)

        headers = {(op, trace): self.headers(op, trace) for op in MIXED_OPERATIONS for trace in (False, True)}
        list_query = (("list-type", "2"), ("max-keys", "1000"), ("prefix", prefix))

        def request(s3: S3Client, op: str, key: str, size: int, trace: bool) -> tuple[int, Answer]:
            """One request: (object bytes moved, the answer); ``_Refused`` for an answer that is not a success."""
            sent = headers[op, trace]
            if op == "put":
                answer, moved = s3.send("PUT", self.bucket, key, body=body[:size], headers=sent), size
            elif op == "list":
                answer, moved = s3.send("GET", self.bucket, query=list_query, headers=sent), 0
            else:
                answer = s3.send(_METHODS[op], self.bucket, key, headers=sent)
                moved = answer.nbytes if op == "get" else 0
            if not 200 <= answer.status < 300:
                raise _Refused(answer.status)
            return moved, answer

        def worker(n: int) -> None:
            s3 = S3Client(self.endpoint, self.key_id, self.secret)
            rng = random.Random(n)
            ops, weights = list(self.ratios), list(self.ratios.values())
            mine: list[float] = []
            first: list[float] = []
            ids: list[str] = []
            mine_put: list[str] = []
            ok = failures = retries = moved = i = 0
            ready.wait()
            end_at = window["end"]
            while time.monotonic() < end_at and not self.cancelled.is_set():
                op = rng.choices(ops, weights)[0] if workload == "mixed" else workload
                key = seeds[(n + i) % len(seeds)]
                if op == "put":
                    key = f"{self.prefix}w/{tag}/{n}/{i % 50 if workload == 'put' else i}"
                elif op == "delete" and workload == "delete":
                    try:
                        key = doomed.popleft()
                    except IndexError:
                        break
                elif op == "delete":
                    if not mine_put:
                        op, key = "put", f"{self.prefix}w/{tag}/{n}/{i}"
                    else:
                        key = mine_put.pop()
                i += 1
                size = sizes.draw(rng)
                seq = next(sequence)
                trace = seq % TRACE_EVERY == 0 and seq // TRACE_EVERY < TRACE_MAX
                t0 = time.perf_counter()
                for attempt in range(RETRIES + 1):
                    try:
                        got, answer = request(s3, op, key, size, trace)
                        first.append(answer.ttfb_s)
                        if trace and answer.request_id:
                            ids.append(answer.request_id)
                        if op == "put" and workload == "mixed":
                            mine_put.append(key)
                        ok += 1
                        moved += got
                        break
                    except (Unanswered, _Refused) as exc:  # no answer or a 5xx: retried; other answers fail
                        if (isinstance(exc, _Refused) and exc.status < 500) or attempt == RETRIES:
                            failures += 1
                            break
                        retries += 1
                        time.sleep(0.05 * (attempt + 1))
                mine.append(time.perf_counter() - t0)
            s3.close()
            with lock:
                latencies.extend(mine)
                ttfbs.extend(first)
                traced.extend(ids)
                counts["ok"] += ok
                counts["failures"] += failures
                counts["retries"] += retries
                counts["bytes"] += moved
                last_end[0] = max(last_end[0], time.monotonic())

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(conc)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = max(min(last_end[0], window["end"]) - window["start"], 1e-9)
        return Point(workload=workload, object_size=sizes.high, concurrency=conc,
                     ops_per_s=round(counts["ok"] / elapsed, 2), mb_per_s=round(counts["bytes"] / elapsed / 1e6, 3),
                     failures=counts["failures"], retries=counts["retries"], p50_ms=round(_pct(latencies, 50), 3),
                     p90_ms=round(_pct(latencies, 90), 3), p99_ms=round(_pct(latencies, 99), 3),
                     ttfb_p50_ms=round(_pct(ttfbs, 50), 3), phases_ms=self._phases(traced),
                     size_distribution=sizes.label, traced=len(traced))

    def _phases(self, request_ids: list[str]) -> dict[str, float]:
        """Phase medians of the traced requests, waiting for the gateways' next flushes (bounded)."""
        if not self.read_phases or not request_ids:
            return {}
        deadline = time.monotonic() + TRACE_WAIT_S
        found: dict[str, list[Any]] = {}
        while True:
            try:
                found = self.phases_of(request_ids)
            except Exception:
                log.warning("could not read the sweep's request traces", exc_info=True)
                return {}
            if len(found) >= len(request_ids) or time.monotonic() >= deadline or self.cancelled.is_set():
                break
            time.sleep(0.25)
        return phase_medians(list(found.values()))

    def _empty(self, s3: Any) -> None:
        paginator = s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
        if self.own_bucket:
            s3.delete_bucket(Bucket=self.bucket)
