"""What request tracing costs the gateway: tracing on vs off, A/B in one run.

Two gateway processes on the same scratch installation (SQLite, one posix tier): A with the default tracing
(phase stamps on every request, full records for a 1 % random share plus the slowest 5 a minute, flushed to
the database every 2 s), B with ``TIERPILOT_TRACING=false`` (phase histograms only: metrics stay on in both).
Rounds alternate A, B, A, B, … so machine load hits both alike; each round measures a 1 GiB PUT and GET
(boto3, one stream) and 1 KiB PUT and GET requests/s (SigV4-presigned, 16 concurrent, 2 client processes).
Reports the median of each side and A/B. First it times, in process and in CPU time, what the gateway adds to
each request (stamps, phase arithmetic, histogram writes, sampling) with tracing on and off: a figure a busy
machine cannot distort the way it distorts throughput.

``--instructions N`` measures what no load can distort: both gateways run under ``valgrind --tool=callgrind``
with instrumentation off; for each window (N 1 KiB PUTs, N 1 KiB GETs, or one ``--size-mib`` PUT and GET, one
client on a keep-alive connection, presigned) ``callgrind_control`` switches counting on in one gateway, the
requests run, and the instructions its process executed in every thread (event loop, thread pool: SQLite,
fsync, tier I/O; trace flushes that fell in the window) are read from the dump. Windows alternate A, B, B, A…
(perf's hardware counters are not available on this VM; callgrind counts instructions in software).

Run: .venv/bin/python bench/tracing_overhead.py [--rounds 3] [--size-mib 1024] [--seconds 4] [--micro-only]
     .venv/bin/python bench/tracing_overhead.py --instructions 300 [--rounds 3] [--size-mib 64]
"""

from __future__ import annotations

import argparse
import http.client
import io
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import Run, record  # noqa: E402
from bench.gateway_throughput import MB, Installation, MiB, Presigner, _sweep_worker, make_payload  # noqa: E402

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
    from tierpilot.traces.service import Finished, Sampler

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
            if sampler.enabled:  # as the gateway does: the record is made only for a request the sampler keeps
                reason = sampler.decide(rec.end - rec.t0, forced=False)
                if reason is not None:
                    sampler.admit(Finished("0123456789ABCDEF", datetime.now(UTC), 1, "bench", "GET object", 200, 1024,
                                           rec), reason)
            if len(sampler.pending) > 1000:
                sampler.pending.clear()
        out[label] = (time.process_time() - t0) / n * 1e6
    return out


class Counted:
    """A gateway process under callgrind with counting off until a window opens."""

    def __init__(self, inst: Installation, name: str, tracing: bool) -> None:
        self.out = inst.tmp / f"callgrind-{name}"
        inst.env["TIERPILOT_TRACING"] = "true" if tracing else "false"
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}.%p",
               sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning", "--port"]
        port = _free_port()
        log = open(inst.tmp / f"{name}.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([*cmd, str(port)], env=inst.env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        inst.procs.append(self.proc)
        _wait_port(port, timeout=600)  # a Python start-up under valgrind takes a minute or more
        self.endpoint = f"http://127.0.0.1:{port}"
        self.dumps = 0

    def window(self, run: Callable[[], None]) -> int:
        """Instructions the gateway executed while ``run()`` ran (all of its threads)."""
        pid = str(self.proc.pid)
        subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
        run()
        subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
        self.dumps += 1
        dump = Path(f"{self.out}.{pid}.{self.dumps}")
        for line in dump.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                dump.unlink()
                return int(line.split()[1])
        raise RuntimeError(f"no instruction total in {dump}")


def _record(into: dict[str, list[float]], label: str, rows: tuple[str, ...], values: tuple[float, ...]) -> None:
    for row, value in zip(rows, values, strict=True):
        into[row].append(value)
    print(f"{label}: " + ", ".join(f"{row} {v:,.0f}" for row, v in zip(rows, values, strict=True)), flush=True)


def _table(results: dict[str, dict[str, list[float]]], what: str, rows: tuple[str, ...]) -> None:
    """The A/B table of the medians."""
    print(f"| {what} | A tracing on | B tracing off | A / B |")
    print("|---|---:|---:|---:|")
    for row in rows:
        a = statistics.median(results["A tracing on"][row])
        b = statistics.median(results["B tracing off"][row])
        print(f"| {row} | {a:,.0f} | {b:,.0f} | {a / b:.3f} |")


def _free_port() -> int:
    from tests.servers import free_port

    return free_port()


def _wait_port(port: int, timeout: float) -> None:
    from tests.servers import wait_port

    wait_port(port, timeout=timeout)


def _requests(endpoint: str, signer: Presigner, method: str, keys: list[str], body: bytes | None) -> None:
    """``method`` on each key, one after the other on one keep-alive connection; every answer must be 200."""
    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=600)
    try:
        for key in keys:
            conn.request(method, signer.path(method, key), body=body)
            answer = conn.getresponse()
            got = 0
            while chunk := answer.read(MiB):
                got += len(chunk)
            if answer.status != 200:
                raise RuntimeError(f"{method} {key}: {answer.status}")
    finally:
        conn.close()


def instructions(n: int, rounds: int, size_mib: int) -> dict[str, dict[str, list[float]]]:
    """Instructions per request with tracing on (A) vs off (B), counted by callgrind, windows alternating: each
    side's counts by request."""
    inst = Installation(workers=1)
    try:
        sides = {"A tracing on": Counted(inst, "traced", True), "B tracing off": Counted(inst, "untraced", False)}
        small = os.urandom(1024)
        large = make_payload(size_mib * MiB)
        rows = ("PUT 1 KiB", "GET 1 KiB", f"PUT {size_mib} MiB", f"GET {size_mib} MiB")
        per: dict[str, dict[str, list[float]]] = {s: {r: [] for r in rows} for s in sides}
        for name, side in sides.items():  # warm both: imports, caches, connection pools, the seeded keys
            signer = Presigner(side.endpoint, inst.key_id, inst.secret)
            _requests(side.endpoint, signer, "PUT", [f"{name[0]}/w{i}" for i in range(20)], small)
            _requests(side.endpoint, signer, "GET", [f"{name[0]}/w{i}" for i in range(20)], None)
        for r in range(rounds):
            order = list(sides.items()) if r % 2 == 0 else list(reversed(sides.items()))
            for name, side in order:
                signer = Presigner(side.endpoint, inst.key_id, inst.secret)
                keys = [f"{name[0]}/r{r}-{i}" for i in range(n)]
                big = [f"{name[0]}/big{r}"]
                send = partial(_requests, side.endpoint, signer)
                counts = (side.window(partial(send, "PUT", keys, small)) / n,
                          side.window(partial(send, "GET", keys, None)) / n,
                          side.window(partial(send, "PUT", big, large)), side.window(partial(send, "GET", big, None)))
                _record(per[name], f"round {r + 1}/{rounds} {name}", rows, counts)
    finally:
        inst.close()
    load = os.getloadavg()
    print(f"\ninstructions per request (callgrind, every thread of the gateway process), median of {rounds} "
          f"alternating rounds of {n} small requests and one {size_mib} MiB PUT and GET; "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (instruction counts do not depend on it)")
    _table(per, "request", rows)
    return per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--micro-only", action="store_true", help="only the in-process CPU cost per request")
    parser.add_argument("--instructions", type=int, metavar="N", default=0,
                        help="count instructions per request under callgrind (N small requests a window)")
    args = parser.parse_args()
    run = Run()
    if args.instructions:
        per = instructions(args.instructions, args.rounds, args.size_mib)
        traced, untraced = (statistics.median(per[side]["PUT 1 KiB"]) for side in ("A tracing on", "B tracing off"))
        record([run.row("tracing.instructions_put", "1 KiB PUT, instructions per request with tracing on (callgrind)",
                        traced, "instructions", "tracing off", untraced)])
        return
    cost = micro()
    print(f"CPU per request for stamps + phases + histograms (+ sampling when on): tracing on {cost['on']:.1f} µs, "
          f"off {cost['off']:.1f} µs", flush=True)
    recorded = [run.row("tracing.cpu", "the gateway's per-request tracing work (stamps, phases, histograms, "
                        "sampling) with tracing on, CPU in process", cost["on"], "µs", "tracing off", cost["off"])]
    if args.micro_only:
        record(recorded)
        return
    inst = Installation(workers=1)  # its gateway: tracing on (the defaults)
    try:
        inst.env["TIERPILOT_TRACING"] = "false"
        off = inst._start([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning", "--port"],
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
                    _record(results[name], f"round {n + 1}/{args.rounds} {name}", rows, figures)
    finally:
        inst.close()
    load = os.getloadavg()
    print(f"\nmedian of {args.rounds} alternating rounds, {args.size_mib} MiB objects, 1 KiB at "
          f"{SMALL_CONCURRENCY} concurrent; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    _table(results, "figure", rows)
    record(recorded)


if __name__ == "__main__":
    main()
