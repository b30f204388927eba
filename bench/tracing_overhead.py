"""What request tracing costs the gateway: tracing on vs off, A/B in one run.

Two gateway processes on the same scratch installation (SQLite, one posix tier): A with the default tracing
(phase stamps on every request, full records for a 1 % random share plus the slowest 5 a minute, flushed to
the database every 2 s), B with ``TIERPILOT_TRACING=false`` (phase histograms only: metrics stay on in both).
Rounds alternate A, B, A, B, … so machine load hits both alike; each round measures a 1 GiB PUT and GET
(boto3, one stream) and 1 KiB PUT and GET requests/s (SigV4-presigned, 16 concurrent, 2 client processes).
Reports the median of each side and A/B. First it times, in process and in CPU time, what the gateway adds to
each request (stamps, phase arithmetic, histogram writes, sampling) with tracing on and off: a figure a busy
machine cannot distort the way it distorts throughput.

Run: .venv/bin/python bench/tracing_overhead.py [--rounds 3] [--size-mib 1024] [--seconds 4] [--micro-only]
"""

from __future__ import annotations

import argparse
import io
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gateway_throughput import MB, Installation, MiB, _sweep_worker, make_payload  # noqa: E402

SMALL_CONCURRENCY = 16
SMALL_PROCS = 2


def large(inst: Installation, endpoint: str, data: bytes) -> tuple[float, float]:
    """(PUT MB/s, GET MB/s) of one object through one gateway."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=inst.key_id,
                      aws_secret_access_key=inst.secret, region_name="us-east-1")
    t0 = time.perf_counter()
    s3.put_object(Bucket="bench", Key="big", Body=io.BytesIO(data), ContentLength=len(data))
    put = len(data) / (time.perf_counter() - t0) / MB
    t0 = time.perf_counter()
    body = s3.get_object(Bucket="bench", Key="big")["Body"]
    got = 0
    while chunk := body.read(MiB):
        got += len(chunk)
    get = got / (time.perf_counter() - t0) / MB
    assert got == len(data)
    return put, get


def small(pool: mp.pool.Pool, inst: Installation, endpoint: str, op: str, seconds: float) -> float:
    """1 KiB requests/s of ``op`` at SMALL_CONCURRENCY."""
    per = SMALL_CONCURRENCY // SMALL_PROCS
    start_at = time.time() + 0.5
    results = pool.map(_sweep_worker, [(endpoint, inst.key_id, inst.secret, op, p, per, start_at, seconds)
                                       for p in range(SMALL_PROCS)])
    failed = sum(r["failed"] for r in results)
    if failed:
        print(f"  ({failed} failed {op} requests)", flush=True)
    return sum(r["ok"] for r in results) / seconds


def micro(n: int = 50_000) -> dict[str, float]:
    """CPU microseconds per request of the recorder, histograms and sampler (tracing on, off)."""
    import tempfile
    from datetime import UTC, datetime

    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="tierpilot-bench-metrics-"))
    from tierpilot.kit.metrics import RequestObserver
    from tierpilot.kit.tracing import Recorder, now_ns
    from tierpilot.observability.service import Finished, Sampler

    observer = RequestObserver()
    out: dict[str, float] = {}
    for label, enabled in (("on", True), ("off", False)):
        sampler = Sampler(rate=0.01, slowest_per_minute=5, enabled=enabled)
        t0 = time.process_time()
        for _ in range(n):
            rec = Recorder()
            rec.parsed = rec.authed = rec.admit_start = rec.admit_end = now_ns()
            rec.resp_start = rec.end = now_ns()
            observer.observe("GET object", 200, rec.end - rec.t0, rec.phases(), 0, 1024, 0)
            if sampler.enabled:
                sampler.offer(Finished("0123456789ABCDEF", datetime.now(UTC), 1, "bench", "GET object", 200, 1024,
                                       rec), forced=False)
            if len(sampler.pending) > 1000:
                sampler.pending.clear()
        out[label] = (time.process_time() - t0) / n * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--micro-only", action="store_true", help="only the in-process CPU cost per request")
    args = parser.parse_args()
    cost = micro()
    print(f"CPU per request for stamps + phases + histograms (+ sampling when on): tracing on {cost['on']:.1f} µs, "
          f"off {cost['off']:.1f} µs", flush=True)
    if args.micro_only:
        return
    inst = Installation(workers=1)  # its gateway: tracing on (the defaults)
    try:
        inst.env["TIERPILOT_TRACING"] = "false"
        off = inst._start([sys.executable, "-m", "tierpilot.cli", "gateway", "--log-level", "warning", "--port"],
                          "gateway-untraced")
        sides = {"A tracing on": inst.gateway, "B tracing off": off}
        s3 = inst.s3("gateway")
        for i in range(200):
            s3.put_object(Bucket="bench", Key=f"small/seed-{i}", Body=os.urandom(1024))
        data = make_payload(args.size_mib * MiB)
        rows = ("PUT 1 GiB MB/s", "GET 1 GiB MB/s", "PUT 1 KiB req/s", "GET 1 KiB req/s")
        results: dict[str, dict[str, list[float]]] = {s: {r: [] for r in rows} for s in sides}
        with mp.get_context("spawn").Pool(SMALL_PROCS) as pool:
            for n in range(args.rounds):
                order = list(sides.items()) if n % 2 == 0 else list(reversed(sides.items()))
                for name, endpoint in order:
                    put, get = large(inst, endpoint, data)
                    figures = (put, get, small(pool, inst, endpoint, "PUT", args.seconds),
                               small(pool, inst, endpoint, "GET", args.seconds))
                    for row, value in zip(rows, figures, strict=True):
                        results[name][row].append(value)
                    print(f"round {n + 1}/{args.rounds} {name}: " +
                          ", ".join(f"{r} {v:,.0f}" for r, v in zip(rows, figures, strict=True)), flush=True)
    finally:
        inst.close()
    load = os.getloadavg()
    print(f"\nmedian of {args.rounds} alternating rounds, {args.size_mib} MiB objects, 1 KiB at "
          f"{SMALL_CONCURRENCY} concurrent; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print("| figure | A tracing on | B tracing off | A / B |")
    print("|---|---:|---:|---:|")
    for row in rows:
        a = statistics.median(results["A tracing on"][row])
        b = statistics.median(results["B tracing off"][row])
        print(f"| {row} | {a:,.0f} | {b:,.0f} | {a / b:.3f} |")


if __name__ == "__main__":
    main()
