"""tierpilot's gateway against a real S3 peer, Ceph's RADOS Gateway, with the same client and workloads in one run.

Targets: the RGW peer (``/work/shared/peers/rgw/start.sh``: one mon, mgr, BlueStore OSD and radosgw on
127.0.0.1:7480; started here when it does not answer and stopped at the end if this run started it), and
``tierpilot gateway`` on SQLite and on PostgreSQL + Redis (a private throwaway cluster and redis-server, so their
CPU is this run's alone). Each round runs every workload on every target, the targets' order rotating from
round to round; a figure is the median over the rounds. Workloads:

- 1 KiB PUT (a new key each), GET and HEAD (of 256 seeded keys) at each ``--concurrency``: req/s, p50/p99/p99.9;
- one stream of ``--size-mib`` PUT, then GET of it: MB/s;
- a multipart upload of ``--size-mib`` in 16 parts, 8 at a time (create, parts, complete): MB/s;
- ListObjectsV2 pages of 1,000 keys at random ``start-after`` in a bucket of ``--list-keys`` keys
  (``dNNNN/kNNNNNNN``, 100 keys per folder), and with ``delimiter=/`` (1,000 common prefixes a page): pages/s,
  p50/p99 ms;
- DeleteObjects of 1,000 keys (one request; keys seeded before the round): ms;
- a mixed load at the first concurrency: 70 % GET, 20 % PUT, 10 % ListObjectsV2 (100 keys from a random
  folder of the listing bucket): req/s, p99.

The client is the same for every target and cheap: every request is a SigV4-presigned URL made before its timed
phase (no signing inside the timed loops), keep-alive ``http.client`` connections, ``--procs`` processes of
threads; a 503 is counted, not retried. Server CPU per request comes from ``/proc``: tierpilot's gateway process
tree plus its PostgreSQL cluster and Redis; RGW's four daemons (pid files under ``/tmp/peer-rgw/run``). The load
average is printed at the start and the end of each round.

``--quick``: 1 round, 1 s points, 128 MiB streams (parts of 8 MiB: S3's minimum is 5), 5,000 listed keys, 64
clients only: a check that everything runs, not figures. Without it the figures are recorded through
bench/figures.py.

Run: .venv/bin/python bench/peer.py [--quick] [--rounds 3] [--seconds 3] [--concurrency 64,256]
     [--size-mib 1024] [--list-keys 100000] [--targets rgw,sqlite,postgresql] [--keep-rgw]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from base64 import b64encode
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "backend"))

from bench.figures import Run, record  # noqa: E402
from tests.servers import free_port, start_postgres, start_redis, wait_port  # noqa: E402

PEER_DIR = Path("/work/shared/peers/rgw")
RGW_RUN = Path("/tmp/peer-rgw/run")
RGW = ("http://127.0.0.1:7480", "S3MAINACCESSKEY00001", "s3mainSecretKey0000000000000000000000001")
BODY = 1024
SEEDS = 256
PER_FOLDER = 100
MIB = 2**20
NAMES = {"rgw": "RGW", "sqlite": "SQLite", "postgresql": "PostgreSQL"}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}", file=sys.stderr, flush=True)


class Signer:
    """SigV4 presigned URLs (query string, host signed, unsigned payload), with the day's signing key cached."""

    def __init__(self, endpoint: str, key_id: str, secret: str) -> None:
        self.host = endpoint.removeprefix("http://")
        self.key_id = key_id
        self.day = datetime.now(UTC).strftime("%Y%m%d")
        key = hmac.digest(f"AWS4{secret}".encode(), self.day.encode(), "sha256")
        for part in ("us-east-1", "s3", "aws4_request"):
            key = hmac.digest(key, part.encode(), "sha256")
        self.key = key

    def url(self, method: str, bucket: str, key: str = "", query: dict[str, str] | None = None) -> str:
        amz = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        scope = f"{self.day}/us-east-1/s3/aws4_request"
        params = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{self.key_id}/{scope}",
                  "X-Amz-Date": amz, "X-Amz-Expires": "3600", "X-Amz-SignedHeaders": "host", **(query or {})}
        canonical = "&".join(f"{quote(k, safe='-_.~')}={quote(v, safe='-_.~')}" for k, v in sorted(params.items()))
        path = f"/{bucket}/{quote(key, safe='/-_.~')}" if key else f"/{bucket}"
        creq = f"{method}\n{path}\n{canonical}\nhost:{self.host}\n\nhost\nUNSIGNED-PAYLOAD"
        sts = f"AWS4-HMAC-SHA256\n{amz}\n{scope}\n{hashlib.sha256(creq.encode()).hexdigest()}"
        return f"{path}?{canonical}&X-Amz-Signature={hmac.new(self.key, sts.encode(), hashlib.sha256).hexdigest()}"


def connect(endpoint: str, timeout: float = 120) -> http.client.HTTPConnection:
    host, port = endpoint.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=timeout)


def call(conn: http.client.HTTPConnection, method: str, url: str, body: Any = None,
         headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn.request(method, url, body=body, headers=headers or {})
    r = conn.getresponse()
    return r.status, r.read()


# ------------------------------------------------------------------------------------------ targets


@dataclass
class Target:
    name: str
    endpoint: str
    key_id: str
    secret: str
    cpu: Callable[[], float]
    stop: Callable[[], None] = lambda: None

    def signer(self) -> Signer:
        return Signer(self.endpoint, self.key_id, self.secret)


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its descendants, from /proc: user + system of each live one, plus what their
    exited children had used (a PostgreSQL backend's time moves into the postmaster's once it exits)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = fields
            children.setdefault(int(fields[1]), []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        if p in stats:
            total += sum(int(x) for x in stats[p][11:15]) / tick
        todo += children.get(p, [])
    return total


def rgw_cpu() -> float:
    total = 0.0
    for pidfile in RGW_RUN.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            total += tree_cpu(int(pidfile.read_text().strip()))
    return total


def start_rgw(keep: bool) -> Target:
    started = False
    try:
        conn = connect(RGW[0], 3)
        conn.request("GET", "/")
        conn.getresponse().read()
    except OSError:
        log("starting the RGW peer")
        subprocess.run([str(PEER_DIR / "start.sh")], check=True, stdout=subprocess.DEVNULL)
        started = True

    def stop() -> None:
        if started and not keep:
            subprocess.run([str(PEER_DIR / "stop.sh")], check=False, capture_output=True)
            log("stopped the RGW peer")

    return Target("rgw", *RGW, cpu=rgw_cpu, stop=stop)


def setup_installation() -> None:
    """In a child process with the installation's environment: migrations, a tier, an admin and their key."""
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction
    from tierpilot.kit.migrate import upgrade
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    upgrade()
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name="bench", driver="posix", config={"path": "bench"}))
        _user, key = auth.create_user(s, "bench", "bench-password", is_admin=True)
        print(json.dumps([key.access_key_id, key.secret_access_key]))


def postmaster_pid(tmpdir: str) -> int:
    return int((Path(tmpdir) / "data" / "postmaster.pid").read_text().split()[0])


def start_tierpilot(db: str) -> Target:
    tmp = Path(tempfile.mkdtemp(prefix=f"tierpilot-bench-peer-{db}-"))
    (tmp / "metrics").mkdir()
    servers: list[Any] = []
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(tmp), TIERPILOT_SECRET_KEY="bench-secret",
               TIERPILOT_SEED_DEMO="false", TIERPILOT_DEFAULT_TIER="bench",
               PROMETHEUS_MULTIPROC_DIR=str(tmp / "metrics"), PYTHONPATH=str(ROOT / "backend"))
    env.pop("TIERPILOT_TEST_POSTGRES_URL", None)
    extra: list[int] = []
    if db == "postgresql":
        # a private cluster and Redis: their CPU is this gateway's alone
        saved = os.environ.pop("TIERPILOT_TEST_POSTGRES_URL", None)
        pg = start_postgres()
        if saved is not None:
            os.environ["TIERPILOT_TEST_POSTGRES_URL"] = saved
        redis = start_redis()
        servers += [pg, redis]
        env.update(TIERPILOT_DATABASE_URL=pg.url, TIERPILOT_REDIS_URL=redis.url)
        extra = [postmaster_pid(pg.tmpdir), redis.procs[0].pid]
    else:
        env["TIERPILOT_DATABASE_URL"] = f"sqlite:///{tmp / 'tierpilot.db'}"
    key_id, secret = json.loads(subprocess.run([sys.executable, __file__, "--setup"], env=env, cwd=ROOT, check=True,
                                               capture_output=True, text=True).stdout.strip().splitlines()[-1])
    port = free_port()
    logf = open(tmp / "gateway.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning", "--port",
                             str(port)], env=env, cwd=ROOT, stdout=logf, stderr=subprocess.STDOUT)

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    try:
        wait_port(port, 120, proc)
    except RuntimeError:
        print((tmp / "gateway.log").read_text(errors="replace")[-3000:], file=sys.stderr)
        stop()
        raise

    return Target(db, f"http://127.0.0.1:{port}", key_id, secret,
                  cpu=lambda: tree_cpu(proc.pid) + sum(tree_cpu(p) for p in extra), stop=stop)


# ------------------------------------------------------------------------------------------ seeding


def _seed_worker(args: tuple[str, str, str, str, list[str], int]) -> int:
    """One seeding process: 4 keep-alive connections PUTting its keys."""
    endpoint, key_id, secret, bucket, keys, size = args
    signer = Signer(endpoint, key_id, secret)
    body = os.urandom(size)
    errors: list[str] = []

    def run(part: list[str]) -> None:
        conn = connect(endpoint)
        for k in part:
            status, _ = call(conn, "PUT", signer.url("PUT", bucket, k), body)
            if status != 200:
                errors.append(f"seeding {bucket}/{k}: {status}")
                return
        conn.close()

    threads = [threading.Thread(target=run, args=(keys[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return len(keys)


def seed(pool: Any, t: Target, bucket: str, keys: list[str], procs: int = 8) -> None:
    chunks = [keys[i::procs] for i in range(procs)]
    list(pool.imap_unordered(_seed_worker, [(t.endpoint, t.key_id, t.secret, bucket, c, BODY) for c in chunks if c]))


def list_key(i: int) -> str:
    return f"d{i // PER_FOLDER:04d}/k{i:07d}"


def prepare(pool: Any, t: Target, list_keys: int, rounds: int, run_id: str) -> None:
    signer = t.signer()
    conn = connect(t.endpoint)
    for bucket in (f"peer-small-{run_id}", f"peer-list-{run_id}", f"peer-big-{run_id}"):
        status, body = call(conn, "PUT", signer.url("PUT", bucket))
        if status != 200:
            raise RuntimeError(f"{t.name}: CreateBucket {bucket}: {status} {body[:200]!r}")
    conn.close()
    t0 = time.perf_counter()
    seed(pool, t, f"peer-small-{run_id}", [f"seed-{i}" for i in range(SEEDS)]
         + [f"del/r{r}/{i:04d}" for r in range(rounds) for i in range(1000)])
    seed(pool, t, f"peer-list-{run_id}", [list_key(i) for i in range(list_keys)])
    log(f"{t.name}: seeded {SEEDS + 1000 * rounds + list_keys:,} objects in {time.perf_counter() - t0:.0f} s")


# ------------------------------------------------------------------------------------------ load


@dataclass
class Sample:
    ok: int = 0
    slowdown: int = 0
    failed: int = 0
    seconds: float = 0.0
    latency: list[float] = field(default_factory=list)
    cpu: float = 0.0
    nbytes: int = 0

    @property
    def rate(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    def pct(self, q: float) -> float:
        if not self.latency:
            return 0.0
        lat = sorted(self.latency)
        return lat[min(len(lat) - 1, int(q / 100 * len(lat)))] * 1000

    @property
    def cpu_ms(self) -> float:
        n = self.ok + self.slowdown
        return self.cpu / n * 1000 if n else 0.0


def _plan(signer: Signer, bucket: str, list_bucket: str, op: str, proc: int, thread: int, n: int, tag: str,
          list_keys: int) -> list[tuple[str, str]]:
    """The thread's requests, presigned: (method, url)."""
    rng = random.Random(f"{tag}-{proc}-{thread}")
    out = []
    for i in range(n):
        kind = op
        if op == "MIX":
            x = rng.random()
            kind = "GET" if x < 0.7 else "PUT" if x < 0.9 else "LIST"
        if kind == "PUT":
            out.append(("PUT", signer.url("PUT", bucket, f"p/{tag}-{proc}-{thread}-{i}")))
        elif kind == "LIST":
            folder = rng.randrange(max(1, list_keys // PER_FOLDER))
            out.append(("GET", signer.url("GET", list_bucket, query={
                "list-type": "2", "max-keys": "100", "prefix": f"d{folder:04d}/"})))
        else:
            out.append((kind, signer.url(kind, bucket, f"seed-{rng.randrange(SEEDS)}")))
    return out


def _load_worker(args: tuple[Any, ...]) -> dict[str, Any]:
    """One client process: threads on keep-alive connections, each sending its presigned requests back to back."""
    endpoint, key_id, secret, bucket, list_bucket, op, proc, threads, per_thread, start_at, seconds, tag, list_keys \
        = args
    signer = Signer(endpoint, key_id, secret)
    plans = [_plan(signer, bucket, list_bucket, op, proc, t, per_thread, tag, list_keys) for t in range(threads)]
    body = os.urandom(BODY)
    out: dict[str, Any] = {"ok": 0, "slowdown": 0, "failed": 0, "latency": [], "last": start_at}
    lock = threading.Lock()

    def run(thread: int) -> None:
        conn = connect(endpoint, 60)
        ok = slowdown = failed = 0
        lat: list[float] = []
        while time.time() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        for method, url in plans[thread]:
            if time.time() >= end:
                break
            t0 = time.perf_counter()
            try:
                conn.request(method, url, body=body if method == "PUT" else None)
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
                conn = connect(endpoint, 60)
            lat.append(time.perf_counter() - t0)
        done = time.time()
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


def load(pool: Any, procs: int, t: Target, run_id: str, op: str, conc: int, seconds: float, tag: str,
         list_keys: int, per_thread: int) -> Sample:
    n = min(procs, conc)
    per = [conc // n + (1 if p < conc % n else 0) for p in range(n)]
    # presigning takes a moment per process: the timed phase starts after it
    start_at = time.time() + 0.5 + per_thread * conc / n * 25e-6
    args = [(t.endpoint, t.key_id, t.secret, f"peer-small-{run_id}", f"peer-list-{run_id}", op, p, per[p],
             per_thread, start_at, seconds, tag, list_keys) for p in range(n)]
    res = pool.map_async(_load_worker, args)
    while time.time() < start_at:
        time.sleep(0.005)
    cpu0 = t.cpu()
    results = res.get()
    cpu = t.cpu() - cpu0
    return Sample(sum(r["ok"] for r in results), sum(r["slowdown"] for r in results),
                  sum(r["failed"] for r in results), max(r["last"] for r in results) - start_at,
                  [x for r in results for x in r["latency"]], cpu)


class Chunks:
    """A body of ``size`` bytes sent from one reused 1 MiB buffer (no allocation per chunk)."""

    def __init__(self, size: int, block: bytes) -> None:
        self.size, self.block = size, block

    def __iter__(self) -> Iterator[bytes]:
        left = self.size
        while left > 0:
            piece = self.block if left >= len(self.block) else self.block[:left]
            left -= len(piece)
            yield piece


def stream_put(t: Target, bucket: str, key: str, size: int, block: bytes) -> Sample:
    url = t.signer().url("PUT", bucket, key)
    conn = connect(t.endpoint, 600)
    cpu0, t0 = t.cpu(), time.perf_counter()
    status, body = call(conn, "PUT", url, Chunks(size, block), {"Content-Length": str(size)})
    took = time.perf_counter() - t0
    conn.close()
    if status != 200:
        raise RuntimeError(f"{t.name}: PUT {size} bytes: {status} {body[:200]!r}")
    return Sample(ok=1, seconds=took, cpu=t.cpu() - cpu0, nbytes=size, latency=[took])


def stream_get(t: Target, bucket: str, key: str, size: int) -> Sample:
    url = t.signer().url("GET", bucket, key)
    conn = connect(t.endpoint, 600)
    buf = memoryview(bytearray(MIB))
    cpu0, t0 = t.cpu(), time.perf_counter()
    conn.request("GET", url)
    r = conn.getresponse()
    got = 0
    while True:
        n = r.readinto(buf)
        if not n:
            break
        got += n
    took = time.perf_counter() - t0
    conn.close()
    if r.status != 200 or got != size:
        raise RuntimeError(f"{t.name}: GET {size} bytes: {r.status}, {got} bytes")
    return Sample(ok=1, seconds=took, cpu=t.cpu() - cpu0, nbytes=size, latency=[took])


def multipart(t: Target, bucket: str, key: str, size: int, block: bytes, parts: int = 16, at_once: int = 8) -> Sample:
    signer = t.signer()
    conn = connect(t.endpoint, 600)
    part = size // parts
    cpu0, t0 = t.cpu(), time.perf_counter()
    status, body = call(conn, "POST", signer.url("POST", bucket, key, {"uploads": ""}))
    m = re.search(rb"<UploadId>([^<]+)</UploadId>", body)
    if status != 200 or m is None:
        raise RuntimeError(f"{t.name}: CreateMultipartUpload: {status} {body[:200]!r}")
    upload = m.group(1).decode()
    etags: dict[int, str] = {}
    numbers = list(range(1, parts + 1))
    lock = threading.Lock()

    def worker() -> None:
        c = connect(t.endpoint, 600)
        while True:
            with lock:
                if not numbers:
                    break
                n = numbers.pop(0)
            size_n = part if n < parts else size - part * (parts - 1)
            c.request("PUT", signer.url("PUT", bucket, key, {"partNumber": str(n), "uploadId": upload}),
                      body=Chunks(size_n, block), headers={"Content-Length": str(size_n)})
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise RuntimeError(f"{t.name}: UploadPart {n}: {r.status}")
            etags[n] = r.getheader("ETag") or ""
        c.close()

    threads = [threading.Thread(target=worker) for _ in range(at_once)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if len(etags) != parts:
        raise RuntimeError(f"{t.name}: {len(etags)} of {parts} parts uploaded")
    doc = "<CompleteMultipartUpload>" + "".join(
        f"<Part><PartNumber>{n}</PartNumber><ETag>{etags[n]}</ETag></Part>" for n in sorted(etags)) \
        + "</CompleteMultipartUpload>"
    status, body = call(conn, "POST", signer.url("POST", bucket, key, {"uploadId": upload}), doc.encode())
    took = time.perf_counter() - t0
    conn.close()
    if status != 200 or b"Error" in body:
        raise RuntimeError(f"{t.name}: CompleteMultipartUpload: {status} {body[:300]!r}")
    return Sample(ok=1, seconds=took, cpu=t.cpu() - cpu0, nbytes=size, latency=[took])


def list_pages(t: Target, run_id: str, list_keys: int, pages: int, delimiter: bool, rng: random.Random) -> Sample:
    signer = t.signer()
    urls = []
    for _ in range(pages):
        q = {"list-type": "2", "max-keys": "1000"}
        if delimiter:
            q.update(delimiter="/", **{"start-after": f"d{rng.randrange(max(1, list_keys // PER_FOLDER // 2)):04d}/"})
        else:
            q["start-after"] = list_key(rng.randrange(max(1, list_keys - 1000)))
        urls.append(signer.url("GET", f"peer-list-{run_id}", query=q))
    conn = connect(t.endpoint)
    s = Sample()
    cpu0 = t.cpu()
    t_all = time.perf_counter()
    for url in urls:
        t0 = time.perf_counter()
        status, body = call(conn, "GET", url)
        s.latency.append(time.perf_counter() - t0)
        if status != 200 or (b"<Key>" not in body and b"<Prefix>d" not in body):
            s.failed += 1
        else:
            s.ok += 1
    s.seconds = time.perf_counter() - t_all
    s.cpu = t.cpu() - cpu0
    conn.close()
    return s


def delete_objects(t: Target, run_id: str, round_no: int) -> Sample:
    doc = ("<Delete><Quiet>true</Quiet>" + "".join(f"<Object><Key>del/r{round_no}/{i:04d}</Key></Object>"
                                                   for i in range(1000)) + "</Delete>").encode()
    url = t.signer().url("POST", f"peer-small-{run_id}", query={"delete": ""})
    headers = {"Content-MD5": b64encode(hashlib.md5(doc).digest()).decode(), "Content-Type": "application/xml"}
    conn = connect(t.endpoint)
    cpu0, t0 = t.cpu(), time.perf_counter()
    status, body = call(conn, "POST", url, doc, headers)
    took = time.perf_counter() - t0
    conn.close()
    if status != 200 or b"<Error>" in body:
        raise RuntimeError(f"{t.name}: DeleteObjects: {status} {body[:300]!r}")
    return Sample(ok=1, seconds=took, cpu=t.cpu() - cpu0, latency=[took])


# ------------------------------------------------------------------------------------------ rounds


Results = dict[str, dict[str, list[Sample]]]  # figure key -> target -> one sample per round


def one_round(pool: Any, args: argparse.Namespace, targets: list[Target], r: int, run_id: str, res: Results,
              block: bytes) -> None:
    size = args.size_mib * MIB
    order = targets[r % len(targets):] + targets[:r % len(targets)]

    def put(key: str, t: Target, s: Sample) -> None:
        res.setdefault(key, {}).setdefault(t.name, []).append(s)
        if s.failed:
            log(f"  {t.name} {key}: {s.failed} failed")

    log(f"round {r + 1}: order {', '.join(t.name for t in order)}")
    for conc in args.concurrency:
        for op in ("PUT", "GET", "HEAD"):
            for t in order:
                s = load(pool, args.procs, t, run_id, op, conc, args.seconds, f"r{r}c{conc}", args.list_keys,
                         args.per_thread)
                put(f"{op}@{conc}", t, s)
                log(f"  {t.name:10s} {op:4s} x{conc}: {s.rate:7.0f} req/s p50 {s.pct(50):6.1f} p99 {s.pct(99):6.1f} "
                    f"p99.9 {s.pct(99.9):6.1f} ms, CPU {s.cpu_ms:.2f} ms/req, 503s {s.slowdown}")
    for t in order:
        s = load(pool, args.procs, t, run_id, "MIX", args.concurrency[0], args.seconds, f"r{r}mix", args.list_keys,
                 args.per_thread)
        put(f"MIX@{args.concurrency[0]}", t, s)
        log(f"  {t.name:10s} mixed x{args.concurrency[0]}: {s.rate:7.0f} req/s p99 {s.pct(99):6.1f} ms, "
            f"CPU {s.cpu_ms:.2f} ms/req")
    for t in order:
        key = f"big-{r}"
        sp = stream_put(t, f"peer-big-{run_id}", key, size, block)
        sg = stream_get(t, f"peer-big-{run_id}", key, size)
        sm = multipart(t, f"peer-big-{run_id}", f"mp-{r}", size, block)
        put("stream PUT", t, sp)
        put("stream GET", t, sg)
        put("multipart", t, sm)
        log(f"  {t.name:10s} {args.size_mib} MiB: PUT {size / sp.seconds / 1e6:.0f} MB/s, GET "
            f"{size / sg.seconds / 1e6:.0f} MB/s, multipart 16x8 {size / sm.seconds / 1e6:.0f} MB/s")
        conn = connect(t.endpoint)
        signer = t.signer()
        for k in (key, f"mp-{r}"):
            call(conn, "DELETE", signer.url("DELETE", f"peer-big-{run_id}", k))
        conn.close()
    rng = random.Random(r)
    for t in order:
        for delim in (False, True):
            s = list_pages(t, run_id, args.list_keys, args.pages, delim, random.Random(rng.random()))
            put("LIST/" if delim else "LIST", t, s)
            log(f"  {t.name:10s} ListObjectsV2{' delimiter=/' if delim else ''}: {s.rate:.0f} pages/s p50 "
                f"{s.pct(50):.1f} p99 {s.pct(99):.1f} ms, CPU {s.cpu_ms:.1f} ms/page")
        s = delete_objects(t, run_id, r)
        put("DeleteObjects", t, s)
        log(f"  {t.name:10s} DeleteObjects of 1,000: {s.seconds * 1000:.0f} ms, CPU {s.cpu * 1000:.0f} ms")


def med(samples: list[Sample], fn: Callable[[Sample], float]) -> float:
    return statistics.median(fn(s) for s in samples)


def summary(args: argparse.Namespace, res: Results, run: Run) -> list[dict[str, Any]]:
    size = args.size_mib * MIB
    ours = [n for n in ("sqlite", "postgresql") if any(n in v for v in res.values())]
    lines = ["", "| figure | " + " | ".join(NAMES[n] for n in ("rgw", *ours)) + " | "
             + " | ".join(f"{NAMES[n]} ÷ RGW" for n in ours) + " |",
             "|---|" + "---:|" * (1 + 2 * len(ours))]

    # the page has room for a few rows: per database the weakest throughput and the worst tail against RGW
    worst: dict[tuple[str, bool], tuple[float, str, float, float, str]] = {}

    def line(what: str, key: str, fn: Callable[[Sample], float], unit: str, higher_better: bool,
             tail: bool = False) -> None:
        by = res.get(key, {})
        if "rgw" not in by:
            return
        peer = med(by["rgw"], fn)
        vals = {n: med(by[n], fn) for n in ours if n in by}
        ratios = {n: v / peer if peer else float("nan") for n, v in vals.items()}
        lines.append(f"| {what} ({unit}) | {peer:.3g} | " + " | ".join(f"{vals[n]:.3g}" for n in vals) + " | "
                     + " | ".join(f"{ratios[n]:.2f}" for n in vals) + " |")
        if not (higher_better or tail):
            return
        for n, r in ratios.items():
            badness = 1 / r if higher_better else r
            if badness > worst.get((n, higher_better), (float("-inf"),))[0]:
                worst[(n, higher_better)] = (badness, what, vals[n], peer, unit)

    for conc in args.concurrency:
        for op in ("PUT", "GET", "HEAD"):
            k = f"{op}@{conc}"
            line(f"1 KiB {op}, {conc} clients", k, lambda s: s.rate, "req/s", True)
            for q in (50, 99, 99.9):
                line(f"1 KiB {op} p{q:g}, {conc} clients", k, lambda s, q=q: s.pct(q), "ms", False, q == 99)
            line(f"1 KiB {op} server CPU per request, {conc} clients", k, lambda s: s.cpu_ms, "ms", False)
    c0 = args.concurrency[0]
    line(f"mixed 70/20/10 GET/PUT/LIST, {c0} clients", f"MIX@{c0}", lambda s: s.rate, "req/s", True)
    line(f"mixed 70/20/10 GET/PUT/LIST p99, {c0} clients", f"MIX@{c0}", lambda s: s.pct(99), "ms", False, True)
    line(f"{args.size_mib} MiB single-stream PUT", "stream PUT", lambda s: size / s.seconds / 1e6, "MB/s", True)
    line(f"{args.size_mib} MiB single-stream GET", "stream GET", lambda s: size / s.seconds / 1e6, "MB/s", True)
    line(f"{args.size_mib} MiB multipart upload, 16 parts 8 at a time", "multipart",
         lambda s: size / s.seconds / 1e6, "MB/s", True)
    for key, what in (("LIST", "ListObjectsV2 page of 1,000 keys"),
                      ("LIST/", "ListObjectsV2 page of common prefixes (delimiter=/)")):
        line(f"{what} among {args.list_keys:,}", key, lambda s: s.rate, "pages/s", True)
        line(f"{what} among {args.list_keys:,} p99", key, lambda s: s.pct(99), "ms", False, True)
    line("DeleteObjects of 1,000 keys", "DeleteObjects", lambda s: 1 / s.seconds, "requests/s", True)
    print("\n".join(lines), flush=True)
    rows = []
    for (n, higher_better), (_, what, value, peer, unit) in sorted(worst.items()):
        db = NAMES[n] + (" + Redis" if n == "postgresql" else "")
        kind = "throughput" if higher_better else "p99"
        rows.append(run.row(f"peer.worst_{kind}.{n}", f"{db} against Ceph RGW, the weakest {kind} of "
                            f"{len(lines) - 3} figures: {what} (target {'≥' if higher_better else '≤'} 1.0 × RGW)",
                            value, unit, "Ceph RGW 16.2.15, same run", peer))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setup", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="1 round of short points and small sizes, not recorded")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", default="64,256")
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--list-keys", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=100, help="list pages per shape and round")
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--targets", default="rgw,sqlite,postgresql")
    parser.add_argument("--keep-rgw", action="store_true", help="leave the RGW peer running if this run started it")
    args = parser.parse_args()
    if args.setup:
        setup_installation()
        return 0
    if args.quick:
        args.rounds, args.seconds, args.size_mib, args.list_keys, args.pages = 1, 1.0, 128, 5000, 20
        args.concurrency = "64"
        os.environ["TIERPILOT_BENCH_NO_RECORD"] = "1"
    args.concurrency = [int(c) for c in str(args.concurrency).split(",")]
    # enough presigned requests per thread for the fastest target at the highest rate seen here (~4,000 req/s)
    args.per_thread = int(max(200, 4000 * args.seconds * 1.5 / min(args.concurrency)))
    run = Run()
    log(f"machine: {os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    run_id = datetime.now(UTC).strftime("%H%M%S")
    targets: list[Target] = []
    ctx = mp.get_context("fork")
    try:
        for name in args.targets.split(","):
            targets.append(start_rgw(args.keep_rgw) if name == "rgw" else start_tierpilot(name))
        with ctx.Pool(max(args.procs, 8)) as pool:
            for t in targets:
                prepare(pool, t, args.list_keys, args.rounds, run_id)
            res: Results = {}
            block = os.urandom(MIB)
            for r in range(args.rounds):
                one_round(pool, args, targets, r, run_id, res, block)
        log(f"done; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        record(summary(args, res, run))
    finally:
        for t in targets:
            t.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
