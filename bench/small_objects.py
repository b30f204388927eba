"""Small objects through the gateway against the machine's own limits, in one run (issue 18).

Baselines measured in the same run, interleaved round by round with the gateway:
(a) plain 1 KiB write+fsync of new files by 64 threads straight on the tier's disk;
(b) a bare ASGI app on the gateway's server stack (uvicorn + kit/httpserver's GuardedHttpToolsProtocol +
    uvloop, one process, as `tierpilot gateway` starts it) that writes each PUT body to a file with fsync
    and serves files on GET and HEAD: the ceiling for any Python gateway here;
(c) the gateway (`tierpilot gateway`, one process; SQLite by default, `--db postgresql`).
1 KiB PUT (a new key each), GET and HEAD (of 256 seeded keys) at 1, 16, 64, 256 concurrent keep-alive
clients (SigV4-presigned, 4 client processes, no retries: a 503 SlowDown is counted, not retried). Each
point is the median of `--rounds` short rounds; next to the gateway's rates, its phase times from its own
histograms (`tierpilot_gateway_phase_duration_seconds`, differences over the rounds) and the server CPU
per request of (b) and (c). `--profile S` then records the gateway with py-spy under 64 PUT clients for S
seconds and prints the top frames by share. `--files N` then uploads a directory of N 1 KiB files with
`tierpilot cp -r` and with Debian's AWS CLI v2 (`/usr/bin/aws s3 cp --recursive`) to the gateway and to the
bare app, `--rounds` times each, interleaved, and prints the medians of the wall times and their ratio.

Run: .venv/bin/python bench/small_objects.py [--db postgresql] [--redis redis://127.0.0.1:6379/0] [--seconds 1]
         [--rounds 3] [--profile 10] [--files 10000]
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.figures import Run, record
from bench.gateway_throughput import Presigner, bare_app, tree_cpu
from tests.servers import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
BODY = 1024
SEEDS = 256
CLIENT_PROCS = 4
DISK_THREADS = 64
PHASES = ("queue", "headers", "auth", "lookup", "admission", "tier_open", "limiter_wait", "transfer", "commit",
          "response")
PHASE_METRIC = "tierpilot_gateway_phase_duration_seconds"


BARE_ROOT_ENV = "TIERPILOT_BENCH_BARE_ROOT"


def bare_factory() -> Callable[..., Any]:
    """(b) for uvicorn's worker processes, which import the app by name: its directory from the environment."""
    return bare_app(Path(os.environ[BARE_ROOT_ENV]))


def serve_bare(port: int, root: str, workers: int) -> None:
    """(b) on exactly the gateway's uvicorn options (gateway/cli.py), with as many processes as the gateway."""
    import uvicorn

    from tierpilot.kit.httpserver import GuardedHttpToolsProtocol

    os.environ[BARE_ROOT_ENV] = root
    uvicorn.run("bench.small_objects:bare_factory", factory=True, workers=workers, host="127.0.0.1", port=port,
                http=GuardedHttpToolsProtocol, loop="uvloop", log_level="warning", access_log=False,
                server_header=False, backlog=4096, timeout_keep_alive=30)


# ------------------------------------------------------------------------------------------ set-up


class Installation:
    """Scratch data dir and database, one admin with a key, one posix tier and bucket; both servers."""

    def __init__(self, db: str, postgres_url: str, max_inflight: int | None, redis_url: str, workers: int = 1) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-small-"))
        self.procs: list[subprocess.Popen[bytes]] = []
        self.drop: Callable[[], None] | None = None
        url = f"sqlite:///{self.tmp / 'tierpilot.db'}"
        if db == "postgresql":
            from tests.servers import create_database

            url, self.drop = create_database(postgres_url, "bench_small")
        self.env = dict(os.environ, TIERPILOT_DATA_DIR=str(self.tmp), TIERPILOT_SECRET_KEY="bench-secret",
                        TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false", TIERPILOT_DEFAULT_TIER="bench",
                        PROMETHEUS_MULTIPROC_DIR=str(self.tmp / "metrics"))
        if max_inflight is not None:
            self.env["TIERPILOT_GATEWAY_MAX_INFLIGHT"] = str(max_inflight)
        if redis_url:
            self.env["TIERPILOT_REDIS_URL"] = redis_url
        os.environ.update({k: v for k, v in self.env.items() if k.startswith(("TIERPILOT_", "PROMETHEUS_"))})
        from tierpilot.auth import service as auth
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade
        from tierpilot.tiers import service as tiers
        from tierpilot.tiers.schemas import TierCreate

        upgrade()
        with transaction(write=True) as s:
            tier = tiers.create(s, TierCreate(name="bench", driver="posix", config={"path": "bench"}))
            self.tier_dir = Path(tier.config["path"])
            _user, key = auth.create_user(s, "bench", "bench-password", is_admin=True)
            self.key_id, self.secret = key.access_key_id, key.secret_access_key
        self.bare_dir = self.tier_dir.parent / "bare"
        self.bare_dir.mkdir()
        self.gateway = self._start([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning",
                                    "--workers", str(workers), "--port"], "gateway")
        self.bare = self._start([sys.executable, __file__, "--serve-bare", str(self.bare_dir), "--workers",
                                 str(workers), "--port"], "bare")
        self.pids = {"gateway": self.procs[0].pid, "bare": self.procs[1].pid}
        self.urls = {"gateway": self.gateway, "bare": self.bare}
        import boto3

        boto3.client("s3", endpoint_url=self.gateway, aws_access_key_id=self.key_id,
                     aws_secret_access_key=self.secret, region_name="us-east-1").create_bucket(Bucket="bench")

    def _start(self, cmd: list[str], name: str) -> str:
        port = free_port()
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115
        self.procs.append(subprocess.Popen(cmd + [str(port)], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           cwd=ROOT))
        wait_port(port)
        return f"http://127.0.0.1:{port}"

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.drop is not None:
            self.drop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _put(endpoint: str, signer: Presigner, key: str, body: bytes) -> None:
    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("PUT", signer.path("PUT", key), body=body)
    r = conn.getresponse()
    r.read()
    conn.close()
    if r.status != 200:
        raise RuntimeError(f"PUT {key} at {endpoint}: {r.status}")


# ------------------------------------------------------------------------------------------ (a) the disk


def disk_rate(directory: Path, seconds: float) -> float:
    """1 KiB files written and fsynced per second by DISK_THREADS threads (a new file each)."""
    directory.mkdir(exist_ok=True)
    body = os.urandom(BODY)
    counts = [0] * DISK_THREADS
    end = time.monotonic() + seconds

    def run(t: int) -> None:
        i = 0
        while time.monotonic() < end:
            fd = os.open(directory / f"{t}-{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, body)
            os.fsync(fd)
            os.close(fd)
            i += 1
        counts[t] = i

    started = time.monotonic()
    threads = [threading.Thread(target=run, args=(t,)) for t in range(DISK_THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    took = time.monotonic() - started
    shutil.rmtree(directory, ignore_errors=True)
    return sum(counts) / took


# ------------------------------------------------------------------------------------------ load


def _load_worker(args: tuple[str, str, str, str, int, int, float, float, str]) -> dict[str, Any]:
    """One client process: ``threads`` keep-alive connections, each sending requests back to back."""
    endpoint, key_id, secret, op, proc, threads, start_at, seconds, tag = args
    signer = Presigner(endpoint, key_id, secret)
    host, port = endpoint.removeprefix("http://").split(":")
    body = os.urandom(BODY)
    out: dict[str, Any] = {"ok": 0, "slowdown": 0, "failed": 0, "latency": [], "last": start_at}
    lock = threading.Lock()

    def run(thread: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        ok = slowdown = failed = 0
        lat: list[float] = []
        i = 0
        while time.time() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        while time.time() < end:
            key = f"p/{tag}-{proc}-{thread}-{i}" if op == "PUT" else f"seed-{(proc * 97 + thread * 7 + i) % SEEDS}"
            i += 1
            t0 = time.perf_counter()
            try:
                conn.request(op, signer.path(op, key), body=body if op == "PUT" else None)
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    ok += 1
                elif r.status == 503:
                    slowdown += 1
                else:
                    failed += 1
            except (OSError, http.client.HTTPException):
                failed += 1
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
            lat.append(time.perf_counter() - t0)
        done = time.time()  # requests under way at the end finish late: the round lasts until the last answer
        conn.close()
        with lock:
            out["last"] = max(out["last"], done)
            out["ok"] += ok
            out["slowdown"] += slowdown
            out["failed"] += failed
            out["latency"] += lat

    pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return out


@dataclass
class Round:
    seconds: float
    ok: int
    slowdown: int
    failed: int
    latency: list[float]
    cpu: float  # server CPU seconds

    @property
    def rate(self) -> float:
        return self.ok / self.seconds

    def pct(self, q: int) -> float:
        if len(self.latency) < 2:
            return self.latency[0] * 1000 if self.latency else 0.0
        return statistics.quantiles(self.latency, n=100)[q - 1] * 1000


@dataclass
class Point:
    rounds: list[Round] = field(default_factory=list)

    def median(self, fn: Callable[[Round], float]) -> float:
        return statistics.median(fn(r) for r in self.rounds)

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.rounds)

    @property
    def slowdown(self) -> int:
        return sum(r.slowdown for r in self.rounds)

    @property
    def cpu_us(self) -> float:
        ok = sum(r.ok + r.slowdown for r in self.rounds)
        return sum(r.cpu for r in self.rounds) / ok * 1e6 if ok else 0.0


def run_round(pool: Any, inst: Installation, which: str, op: str, conc: int, seconds: float, tag: str) -> Round:
    procs = min(CLIENT_PROCS, conc)
    per = [conc // procs + (1 if p < conc % procs else 0) for p in range(procs)]
    start_at = time.time() + 0.3
    args = [(inst.urls[which], inst.key_id, inst.secret, op, p, per[p], start_at, seconds, tag) for p in range(procs)]
    cpu0 = tree_cpu(inst.pids[which])
    results = pool.map(_load_worker, args)
    cpu = tree_cpu(inst.pids[which]) - cpu0
    return Round(max(r["last"] for r in results) - start_at, sum(r["ok"] for r in results),
                 sum(r["slowdown"] for r in results), sum(r["failed"] for r in results),
                 [x for r in results for x in r["latency"]], cpu)


# ------------------------------------------------------------------------------------------ phases


Hist = dict[str, list[float]]  # phase -> [count, sum, cumulative bucket counts...]


def phase_snapshot(endpoint: str, operation: str) -> tuple[list[float], Hist]:
    """The gateway's phase histograms of one operation: (bucket bounds, per phase count/sum/buckets)."""
    from prometheus_client.parser import text_string_to_metric_families

    host, port = endpoint.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", "/_tierpilot/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    bounds: list[float] = []
    out: Hist = {}
    for family in text_string_to_metric_families(text):
        if family.name != PHASE_METRIC:
            continue
        for s in family.samples:
            if s.labels.get("operation") != operation:
                continue
            row = out.setdefault(s.labels["phase"], [0.0, 0.0])
            if s.name.endswith("_count"):
                row[0] = s.value
            elif s.name.endswith("_sum"):
                row[1] = s.value
            elif s.name.endswith("_bucket"):
                le = float(s.labels["le"])
                if le not in bounds:
                    bounds.append(le)
                row.append(s.value)
    return bounds, out


def diff(after: Hist, before: Hist) -> Hist:
    out: Hist = {}
    for phase, row in after.items():
        prev = before.get(phase, [0.0] * len(row))
        out[phase] = [a - b for a, b in zip(row, prev + [0.0] * (len(row) - len(prev)), strict=True)]
    return out


def add(total: Hist, more: Hist) -> None:
    for phase, row in more.items():
        if phase in total:
            total[phase] = [a + b for a, b in zip(total[phase], row, strict=True)]
        else:
            total[phase] = list(row)


def median_ms(bounds: list[float], row: list[float]) -> float:
    """The median from cumulative bucket counts, interpolated within its bucket."""
    count, cumulative = row[0], row[2:]
    if count <= 0:
        return 0.0
    half, prev_le, prev_n = count / 2, 0.0, 0.0
    for le, n in zip(bounds, cumulative, strict=True):
        if n >= half:
            if le == float("inf"):
                return prev_le * 1000
            return (prev_le + (le - prev_le) * (half - prev_n) / max(n - prev_n, 1e-9)) * 1000
        prev_le, prev_n = le, n
    return prev_le * 1000


def phase_text(bounds: list[float], hist: Hist, total_rate: int) -> str:
    """``phase median/mean ms`` for the phases present in at least 1 % of requests."""
    parts = []
    for phase in PHASES:
        row = hist.get(phase)
        if not row or row[0] < max(1, total_rate * 0.01):
            continue
        parts.append(f"{phase} {median_ms(bounds, row):.1f}/{row[1] / row[0] * 1000:.1f}")
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------ profile


def profile(pool: Any, inst: Installation, seconds: float, gil: bool, op: str = "PUT", keep: str = "") -> str:
    """py-spy on the gateway under 64 ``op`` clients: the top frames by share of the samples (``gil``: only
    samples of the thread holding the GIL, i.e. Python CPU; otherwise every thread not idle, disk waits too)."""
    out = inst.tmp / "pyspy.txt"
    spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(inst.pids["gateway"]),
                            "--duration", str(int(seconds)), "--rate", "100", "--format", "raw", "--nolineno",
                            "--nonblocking", "--output", str(out)] + (["--gil"] if gil else []),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # py-spy attaches
    point = run_round(pool, inst, "gateway", op, 64, seconds - 1, f"spy{gil}")
    spy.wait(timeout=seconds + 60)
    what = "samples holding the GIL (Python CPU)" if gil else "active samples (idle threads left out)"
    if keep:  # py-spy's raw stacks, for a closer look than the top frames
        shutil.copy(out, f"{keep}.{'gil' if gil else 'active'}.txt")
    return profile_text(out.read_text(), point, what, op)


def profile_text(raw: str, point: Round, what: str, op: str) -> str:
    frame_re = re.compile(r":\d+\)$")
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        count = int(n)
        frames = [frame_re.sub(")", f) for f in stack.split(";") if not f.startswith(("thread (", "process "))]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for f in set(frames):
            inclusive[f] += count
        kinds["worker threads" if any(f.startswith("_worker (") for f in frames) else "event loop"] += count
    by_thread = ", ".join(f"{k} {v / total:.0%}" for k, v in kinds.most_common())
    lines = [f"py-spy, 100 Hz, {what}: {total}; gateway at {point.rate:.0f} {op}/s "
             "during the recording", f"  by thread: {by_thread}", "  top frames, inclusive share:"]
    lines += [f"    {v / total:6.1%}  {k}" for k, v in inclusive.most_common(25)]
    lines.append("  top frames, own share (the leaf):")
    lines += [f"    {v / total:6.1%}  {k}" for k, v in own.most_common(20)]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ bulk uploads

AWS = "/usr/bin/aws"  # Debian's AWS CLI v2 (honours --endpoint-url, not AWS_ENDPOINT_URL)


def bulk_upload(inst: Installation, files: int, rounds: int) -> tuple[str, dict[tuple[str, str], float]]:
    """Wall time of uploading ``files`` 1 KiB files by each client to each server (medians of ``rounds``): the
    table, and the medians by (client, server)."""
    src = inst.tmp / "files"
    src.mkdir()
    for i in range(files):
        (src / f"f{i:06d}").write_bytes(os.urandom(BODY))
    env = dict(inst.env, AWS_ACCESS_KEY_ID=inst.key_id, AWS_SECRET_ACCESS_KEY=inst.secret,
               AWS_DEFAULT_REGION="us-east-1")
    env.pop("AWS_CA_BUNDLE", None)
    clients = {
        "tierpilot cp -r": lambda url, dst: [sys.executable, "-m", "tierpilot.app.cli", "cp", "-r", "-q", "--endpoint",
                                             url, str(src), dst],
        "aws s3 cp --recursive": lambda url, dst: [AWS, "s3", "cp", "--recursive", "--only-show-errors",
                                                   "--endpoint-url", url, str(src), dst],
    }
    times: dict[tuple[str, str], list[float]] = {}
    uploads = 0
    for _round in range(rounds):
        for client, cmd in clients.items():
            for which in ("bare", "gateway"):
                t0 = time.perf_counter()
                uploads += 1  # each upload its own prefix: new keys every time, never overwrites
                done = subprocess.run(cmd(inst.urls[which], f"s3://bench/bulk-{uploads}/"), env=env,
                                      cwd=ROOT, capture_output=True, text=True)
                took = time.perf_counter() - t0
                if done.returncode != 0:
                    raise RuntimeError(f"{client} to {which} failed: {done.stderr[-2000:]}")
                times.setdefault((client, which), []).append(took)
    medians = {point: statistics.median(took) for point, took in times.items()}
    lines = [f"| {files:,} × 1 KiB | bare app s | gateway s | gateway ÷ bare (wall time) |", "|---|---:|---:|---:|"]
    for client in clients:
        bare, gw = (medians[(client, w)] for w in ("bare", "gateway"))
        lines.append(f"| {client} | {bare:.1f} | {gw:.1f} | {gw / bare:.2f} |")
    shutil.rmtree(src, ignore_errors=True)
    return "\n".join(lines), medians


def figures(run: Run, args: argparse.Namespace, points: dict[tuple[str, int], dict[str, Point]],
            uploads: dict[tuple[str, str], float]) -> list[dict[str, Any]]:
    """The rows of the current figures this run measured: each operation at 64 clients against the bare app,
    GET and PUT p99 against their targets, PUT at 256 clients against 64, the bulk uploads against the bare app."""
    setup = ("SQLite" if args.db == "sqlite" else "PostgreSQL") + (" + Redis" if args.redis else "") + \
        (f", {args.workers} processes" if args.workers > 1 else "")
    rows = []
    for op in ("GET", "HEAD", "PUT"):
        at64 = points.get((op, 64))
        if at64 is None:
            continue
        b, g = (at64[w].median(lambda x: x.rate) for w in ("bare", "gateway"))
        bare = "bare ASGI file server, same run" if op != "PUT" else "bare ASGI app that fsyncs each body, same run"
        rows.append(run.row(f"small.{op.lower()}.{args.db}", f"1 KiB {op}, 64 clients, {setup}: gateway req/s "
                            "(target ≥ 0.8 of the bare app's)", g, "req/s", bare, b))
        if op != "HEAD":
            target = 50.0 if op == "GET" else 100.0
            rows.append(run.row(f"small.{op.lower()}_p99.{args.db}", f"1 KiB {op} p99, 64 clients, {setup} (target "
                                f"< {target:.0f} ms)", at64["gateway"].median(lambda x: x.pct(99)), "ms", "target",
                                target))
    at256 = points.get(("PUT", 256))
    if at256 is not None and ("PUT", 64) in points:
        g64 = points[("PUT", 64)]["gateway"].median(lambda x: x.rate)
        rows.append(run.row(f"small.put256.{args.db}", f"1 KiB PUT, 256 clients, {setup}: gateway req/s (target ≥ 0.9 "
                            f"of its rate at 64, no failure; {at256['gateway'].failed} failed)",
                            at256["gateway"].median(lambda x: x.rate), "req/s",
                            "the gateway's own rate at 64 clients", g64))
    for client, name in (("tierpilot cp -r", "cp"), ("aws s3 cp --recursive", "awscp")):
        if (client, "gateway") in uploads:
            rows.append(run.row(f"small.{name}.{args.db}", f"{args.files:,} × 1 KiB upload by `{client}`, {setup} "
                                "(target ≤ 1.5×)", uploads[(client, "gateway")], "s", "the same upload to the bare app",
                                uploads[(client, "bare")]))
    return rows


# ------------------------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--postgres-url", default=os.environ.get(
        "TIERPILOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--seconds", type=float, default=0.5, help="length of one round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", default="1,16,64,256")
    parser.add_argument("--ops", default="PUT,GET,HEAD")
    parser.add_argument("--max-inflight", type=int, default=None,
                        help="TIERPILOT_GATEWAY_MAX_INFLIGHT for the gateway (default: the setting's default)")
    parser.add_argument("--profile", type=float, default=0.0, help="py-spy the gateway for this many seconds")
    parser.add_argument("--profile-op", default="PUT", choices=("PUT", "GET", "HEAD"),
                        help="the operation the 64 clients send while py-spy records")
    parser.add_argument("--profile-raw", default="", help="also keep py-spy's raw stacks as PREFIX.gil.txt and "
                        "PREFIX.active.txt")
    parser.add_argument("--redis", default="", help="TIERPILOT_REDIS_URL for the gateway (production: "
                        "credentials cached under a Redis generation); default none")
    parser.add_argument("--files", type=int, default=0, help="then upload this many 1 KiB files by cp -r")
    parser.add_argument("--workers", type=int, default=1, help="processes of the gateway and of the bare app alike "
                        "(`tierpilot gateway --workers`; docker-compose.yml runs 2)")
    parser.add_argument("--serve-bare", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.port, args.serve_bare, args.workers)
        return
    run = Run()
    measured: dict[tuple[str, int], dict[str, Point]] = {}
    uploads: dict[tuple[str, str], float] = {}
    started = time.monotonic()
    print(f"uptime at the start: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    inst = Installation(args.db, args.postgres_url, args.max_inflight, args.redis, args.workers)
    try:
        concurrency = [int(c) for c in args.concurrency.split(",")]
        ops = [op for op in args.ops.split(",") if op]
        disk = statistics.median(disk_rate(inst.tier_dir.parent / "raw", args.seconds) for _ in range(args.rounds))
        print(f"(a) disk: 1 KiB write+fsync of new files by {DISK_THREADS} threads: {disk:,.0f}/s "
              f"(median of {args.rounds})", flush=True)
        body = os.urandom(BODY)
        for which in ("bare", "gateway"):
            signer = Presigner(inst.urls[which], inst.key_id, inst.secret)
            for i in range(SEEDS):
                _put(inst.urls[which], signer, f"seed-{i}", body)
        from tierpilot.kit.settings import get_settings

        inflight = args.max_inflight or get_settings().gateway_max_inflight
        print(f"gateway and bare app: {args.workers} process{'es' if args.workers > 1 else ''} each; {args.db}, "
              f"Redis {args.redis or 'none'}, max in-flight {inflight} per process; "
              f"{args.rounds} rounds of {args.seconds:g} s "
              "per point, bare and gateway interleaved; req/s and p50/p99 ms are medians over the rounds; "
              "CPU = server CPU µs per request; phases: median/mean ms from the gateway's histograms", flush=True)
        ctx = mp.get_context("spawn")
        with ctx.Pool(CLIENT_PROCS) as pool:
            for op in ops:
                print(f"\n| 1 KiB {op} | bare req/s | p50 | p99 | CPU | gateway req/s | p50 | p99 | CPU "
                      "| failed | SlowDown | gateway ÷ bare | gateway phases |")
                print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
                for conc in concurrency:
                    points = {"bare": Point(), "gateway": Point()}
                    hist: Hist = {}
                    bounds: list[float] = []
                    for r in range(args.rounds):
                        points["bare"].rounds.append(run_round(pool, inst, "bare", op, conc, args.seconds,
                                                               f"b{conc}.{r}"))
                        bounds, before = phase_snapshot(inst.gateway, f"{op} object")
                        points["gateway"].rounds.append(run_round(pool, inst, "gateway", op, conc, args.seconds,
                                                                  f"g{conc}.{r}"))
                        bounds, after = phase_snapshot(inst.gateway, f"{op} object")
                        add(hist, diff(after, before))
                    measured[(op, conc)] = points
                    b, g = points["bare"], points["gateway"]
                    brate, grate = b.median(lambda x: x.rate), g.median(lambda x: x.rate)
                    print(f"| {conc} | {brate:,.0f} | {b.median(lambda x: x.pct(50)):.1f} "
                          f"| {b.median(lambda x: x.pct(99)):.1f} | {b.cpu_us:.0f} | {grate:,.0f} "
                          f"| {g.median(lambda x: x.pct(50)):.1f} | {g.median(lambda x: x.pct(99)):.1f} "
                          f"| {g.cpu_us:.0f} | {g.failed + b.failed} | {g.slowdown} "
                          f"| {grate / brate if brate else 0:.2f} "
                          f"| {phase_text(bounds, hist, int(grate * args.seconds * args.rounds))} |", flush=True)
            if args.profile:
                for gil in (True, False):
                    print("\n" + profile(pool, inst, args.profile, gil, args.profile_op,
                                                args.profile_raw), flush=True)
        if args.files:
            text, uploads = bulk_upload(inst, args.files, args.rounds)
            print("\n" + text, flush=True)
    finally:
        inst.close()
    la = os.getloadavg()
    print(f"\nuptime at the end: {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; took {time.monotonic() - started:.0f} s; "
          f"{os.cpu_count()} CPUs")
    record(figures(run, args, measured, uploads))


if __name__ == "__main__":
    main()
