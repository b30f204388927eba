"""Throughput reservations under load: does every reserved client get its booked rate?

The reference experiment: read capacity 300 MB/s and write capacity 150 MB/s; five client
processes hold reservations in the ratio 5:4:3:2:1 of the bookable capacity (90 % of it) and use
3 parallel streams each, while a sixth client without a reservation pushes 8 greedy streams.
20 s per run, with one gateway process and with two (each client's streams alternate between
them). Then a 1 GiB object is uploaded and downloaded in parallel parts with boto3 under a
single 300 MB/s reservation (the pool's whole bookable capacity).

Everything runs on 127.0.0.1 in a scratch directory: a throwaway redis-server, SQLite, two
`tierpilot gateway` processes and a posix tier. Rates are measured by the clients (bytes moved
in a common 20 s window after a 2 s warm-up); MB/s = 10^6 bytes/s.

Run: .venv/bin/python bench/reservations.py [--seconds 20] [--skip-multipart]   (about 4 minutes)
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.figures import Run, record
from tests.servers import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
MiB = 1 << 20
RATIOS = (5, 4, 3, 2, 1)
OBJECT = 64 * MiB  # each reader's object (served from the page cache: the pool's capacity is the question)
RANGE = 8 * MiB  # one ranged GET
PUT_SIZE = 16 * MiB  # one PUT of a writer (one tier fsync and one catalog commit each)
BUCKET_S = 0.1  # resolution of the clients' byte counters


# ---------------------------------------------------------------- client processes


@dataclass
class Stream:
    url: str  # presigned GET or PUT URL
    method: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ClientSpec:
    name: str
    streams: list[Stream]
    start_at: float  # Unix time the streams start (t0 - warm-up)
    t0: float  # start of the measured window
    stop_at: float


def _stream(stream: Stream, spec: ClientSpec, counts: list[int], index: int, errors: list[str]) -> None:
    u = urllib.parse.urlsplit(stream.url)
    host = u.hostname or "127.0.0.1"
    target = u.path + ("?" + u.query if u.query else "")
    conn = http.client.HTTPConnection(host, u.port, timeout=60)
    buf = memoryview(bytearray(MiB))
    body = memoryview(os.urandom(MiB) * (PUT_SIZE // MiB) if stream.method == "PUT" else b"")

    def count(n: int) -> None:
        slot = int((time.time() - spec.t0 + 10) / BUCKET_S)  # 10 s of warm-up slots before t0
        if 0 <= slot < len(counts):
            counts[slot] += n

    offset = (index * RANGE) % OBJECT
    while time.time() < spec.stop_at:
        try:
            if stream.method == "GET":
                end = offset + RANGE - 1
                conn.request("GET", target, headers={**stream.headers, "Range": f"bytes={offset}-{end}"})
                resp = conn.getresponse()
                if resp.status != 206:
                    errors.append(f"GET {resp.status} {resp.read()[:200]!r}")
                    continue
                while time.time() < spec.stop_at:
                    n = resp.readinto(buf)
                    if not n:
                        break
                    count(n)
                else:
                    conn.close()  # window over: drop the rest of the response
                offset = (offset + RANGE) % OBJECT
            else:
                conn.putrequest("PUT", target, skip_accept_encoding=True)
                for k, v in {**stream.headers, "Content-Length": str(PUT_SIZE)}.items():
                    conn.putheader(k, v)
                conn.endheaders()
                for i in range(0, PUT_SIZE, MiB):
                    conn.send(body[i:i + MiB])
                    count(MiB)
                resp = conn.getresponse()
                resp.read()
                if resp.status != 200:
                    errors.append(f"PUT {resp.status}")
        except (OSError, http.client.HTTPException) as exc:
            if time.time() < spec.stop_at:
                errors.append(f"{type(exc).__name__}: {exc}")
            conn.close()
            conn = http.client.HTTPConnection(host, u.port, timeout=60)


def client_main(spec: ClientSpec, out: Any) -> None:
    """One client process: its streams as threads, bytes counted per 0.1 s slot."""
    import threading

    slots = int((spec.stop_at - spec.t0 + 10) / BUCKET_S) + 1
    per_stream = [[0] * slots for _ in spec.streams]
    errors: list[str] = []
    time.sleep(max(0.0, spec.start_at - time.time()))
    threads = [threading.Thread(target=_stream, args=(s, spec, per_stream[i], i, errors), daemon=True)
               for i, s in enumerate(spec.streams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(1.0, spec.stop_at - time.time() + 30))
    out.put((spec.name, [sum(col) for col in zip(*per_stream, strict=True)], errors[:5]))


def run_clients(specs: list[ClientSpec]) -> dict[str, tuple[list[int], list[str]]]:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=client_main, args=(s, queue)) for s in specs]
    for p in procs:
        p.start()
    results = {}
    for _ in procs:
        name, counts, errors = queue.get(timeout=max(s.stop_at for s in specs) - time.time() + 120)
        results[name] = (counts, errors)
    for p in procs:
        p.join(timeout=30)
    return results


def window_bytes(counts: list[int], seconds: float) -> tuple[int, list[float]]:
    """Bytes in the measured window [t0, t0 + seconds) and the per-second rates in it."""
    first = int(10 / BUCKET_S)
    per_slot = counts[first:first + int(seconds / BUCKET_S)]
    per_second = [sum(per_slot[i:i + int(1 / BUCKET_S)]) for i in range(0, len(per_slot), int(1 / BUCKET_S))]
    return sum(per_slot), [b / MB for b in per_second]


# ---------------------------------------------------------------- the installation under test


class Installation:
    """Redis, SQLite, a posix tier and gateway processes in a scratch directory."""

    def __init__(self, gateways: int = 2) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-res-"))
        self.procs: list[subprocess.Popen[bytes]] = []
        redis_port = free_port()
        self.procs.append(subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(redis_port), "--save", "", "--appendonly", "no",
             "--dir", str(self.tmp)], stdout=subprocess.DEVNULL))
        wait_port(redis_port)
        self.env = dict(os.environ, TIERPILOT_DATA_DIR=str(self.tmp),
                        TIERPILOT_DATABASE_URL=f"sqlite:///{self.tmp / 'tierpilot.db'}",
                        TIERPILOT_REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
                        TIERPILOT_SEED_DEMO="false", TIERPILOT_DEFAULT_TIER="bench-hot",
                        TIERPILOT_SECRET_KEY="bench-secret")
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("TIERPILOT_")})
        from tierpilot.kit.migrate import upgrade

        upgrade(self.env["TIERPILOT_DATABASE_URL"])
        self._create_tier()
        self.gateway_pids: list[int] = []
        self.gateways = [self._start_gateway(i) for i in range(gateways)]

    def _create_tier(self) -> None:
        from tierpilot.kit.db import transaction
        from tierpilot.tiers import service as tiers
        from tierpilot.tiers.schemas import TierCreate

        with transaction(write=True) as s:
            tiers.create(s, TierCreate(name="bench-hot", driver="posix", config={"path": "bench-hot"},
                                       storage_classes=["STANDARD"]))

    def _start_gateway(self, index: int) -> str:
        port = free_port()
        log = open(self.tmp / f"gateway-{index}.log", "wb")  # noqa: SIM115
        self.procs.append(subprocess.Popen(
            [sys.executable, "-m", "tierpilot.app.cli", "gateway", "--port", str(port), "--log-level", "warning"],
            env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT))
        self.gateway_pids.append(self.procs[-1].pid)
        wait_port(port)
        return f"http://127.0.0.1:{port}"

    def user(self, name: str) -> tuple[int, str, str]:
        from tierpilot.auth import service as auth
        from tierpilot.kit.db import transaction

        with transaction(write=True) as s:
            user, key = auth.create_user(s, name, f"{name}-password-1")
            return user.id, key.access_key_id, key.secret_access_key

    def close(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


@dataclass
class Client:
    name: str
    user_id: int
    key_id: str
    secret: str
    bucket: str

    def s3(self, url: str, **config: Any) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=url, aws_access_key_id=self.key_id,
                            aws_secret_access_key=self.secret, region_name="us-east-1",
                            config=Config(max_pool_connections=32, **config))

    def url(self, gateway: str, method: str, key: str) -> str:
        op = "get_object" if method == "GET" else "put_object"
        return str(self.s3(gateway).generate_presigned_url(op, Params={"Bucket": self.bucket, "Key": key},
                                                           ExpiresIn=3600))


def set_capacity(read_mbps: float, write_mbps: float) -> None:
    from tierpilot.kit.db import transaction
    from tierpilot.reservations import service

    with transaction(write=True) as s:
        service.set_capacity(s, int(read_mbps * MB), int(write_mbps * MB), 0.1)


def book(client: Client, direction: str, rate_bps: int, minutes: int = 30) -> str:
    from tierpilot.auth.models import User
    from tierpilot.kit.db import transaction
    from tierpilot.reservations import service

    start = datetime.now(UTC) - timedelta(seconds=1)
    with transaction(write=True) as s:
        owner = s.get(User, client.user_id)
        assert owner is not None
        return service.book(s, owner, bucket=client.bucket, direction=direction, rate_bps=rate_bps, start=start,
                            end=start + timedelta(minutes=minutes)).id


def cancel(client: Client, rid: str) -> None:
    from tierpilot.auth.models import User
    from tierpilot.kit.db import transaction
    from tierpilot.reservations import service

    with transaction(write=True) as s:
        owner = s.get(User, client.user_id)
        assert owner is not None
        service.cancel(s, owner, rid)


# ---------------------------------------------------------------- the experiments


@dataclass
class Row:
    client: str
    booked_mbps: float | None
    achieved_mbps: float
    p5_mbps: float
    errors: list[str]

    @property
    def ratio(self) -> float | None:
        return self.achieved_mbps / self.booked_mbps if self.booked_mbps else None


def ratio_run(inst: Installation, clients: list[Client], greedy: Client, direction: str, capacity_mbps: float,
              gateways: int, seconds: float) -> list[Row]:
    """Five reserved clients (3 streams each) and one greedy best-effort client (8 streams)."""
    bookable = capacity_mbps * 0.9
    rates = [bookable * r / sum(RATIOS) for r in RATIOS]
    rids = [book(c, direction, int(rate * MB)) for c, rate in zip(clients, rates, strict=True)]
    time.sleep(2.5)  # every gateway's snapshot (refreshed each second) sees the reservations
    method = "GET" if direction == "read" else "PUT"
    urls = inst.gateways[:gateways]
    t0 = time.time() + 6  # spawning clients imports Python: start together well after that
    warmup = 2.0

    def streams(c: Client, n: int, rid: str | None) -> list[Stream]:
        headers = {"X-Tierpilot-Reservation": rid} if rid else {}
        key = "object" if method == "GET" else "upload"
        return [Stream(c.url(urls[i % len(urls)], method, key if method == "GET" else f"{key}-{i}"), method,
                       headers) for i in range(n)]

    specs = [ClientSpec(c.name, streams(c, 3, rid), t0 - warmup, t0, t0 + seconds)
             for c, rid in zip(clients, rids, strict=True)]
    specs.append(ClientSpec(greedy.name, streams(greedy, 8, None), t0 - warmup, t0, t0 + seconds))
    results = run_clients(specs)
    for c, rid in zip(clients, rids, strict=True):
        cancel(c, rid)
    rows = []
    for spec, rate in zip(specs, [*rates, None], strict=True):
        counts, errors = results[spec.name]
        total, per_second = window_bytes(counts, seconds)
        ordered = sorted(per_second)
        rows.append(Row(spec.name, rate, total / seconds / MB, ordered[max(0, int(len(ordered) * 0.05) - 1)],
                        errors))
    return rows


def _lean_transfer(client: Client, gateway: str, rid: str, direction: str, path: Path, out: Path) -> None:
    """The same 16 x 64 MiB parts, 10 at a time, with nothing but http.client on presigned URLs: parts are
    sent from the file with one read per MiB, ranged GETs read into one reused buffer and pwrite the file."""
    from concurrent.futures import ThreadPoolExecutor

    s3 = client.s3(gateway)
    size = path.stat().st_size
    part = 64 * MiB
    parts = [(n, (n - 1) * part, min(part, size - (n - 1) * part)) for n in range(1, -(-size // part) + 1)]
    headers = {"X-Tierpilot-Reservation": rid}
    upload_id = ""
    if direction == "write":
        upload_id = s3.create_multipart_upload(Bucket=client.bucket, Key="one-gib-lean")["UploadId"]
    else:
        out_fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    src_fd = os.open(path, os.O_RDONLY)

    def one(part: tuple[int, int, int]) -> tuple[int, str]:
        number, offset, length = part
        if direction == "write":
            url = s3.generate_presigned_url("upload_part", Params={
                "Bucket": client.bucket, "Key": "one-gib-lean", "UploadId": upload_id, "PartNumber": number})
        else:
            url = s3.generate_presigned_url("get_object", Params={"Bucket": client.bucket, "Key": "one-gib"})
        u = urllib.parse.urlsplit(url)
        conn = http.client.HTTPConnection(u.hostname or "127.0.0.1", u.port, timeout=60)
        target = u.path + "?" + u.query
        try:
            if direction == "write":
                conn.putrequest("PUT", target, skip_accept_encoding=True)
                for k, v in {**headers, "Content-Length": str(length)}.items():
                    conn.putheader(k, v)
                conn.endheaders()
                for at in range(offset, offset + length, MiB):
                    conn.send(os.pread(src_fd, min(MiB, offset + length - at), at))
                resp = conn.getresponse()
                resp.read()
                assert resp.status == 200, resp.status
                return number, str(resp.getheader("ETag"))
            conn.request("GET", target, headers={**headers, "Range": f"bytes={offset}-{offset + length - 1}"})
            resp = conn.getresponse()
            assert resp.status == 206, resp.status
            buf = memoryview(bytearray(MiB))
            at = offset
            while n := resp.readinto(buf):
                os.pwrite(out_fd, buf[:n], at)
                at += n
            return number, ""
        finally:
            conn.close()

    try:
        with ThreadPoolExecutor(10) as pool:
            etags = list(pool.map(one, parts))
        if direction == "write":
            s3.complete_multipart_upload(Bucket=client.bucket, Key="one-gib-lean", UploadId=upload_id,
                                         MultipartUpload={"Parts": [{"PartNumber": n, "ETag": e} for n, e in etags]})
    finally:
        os.close(src_fd)
        if direction == "read":
            os.close(out_fd)


def multipart_run(inst: Installation, client: Client, repeat: int) -> tuple[list[str], dict[tuple[str, str], float]]:
    """1 GiB up and down in parallel parts under one 300 MB/s reservation per direction, by two clients:
    boto3 (upload_file / download_file, default settings) and a lean http.client one (see _lean_transfer),
    ``repeat`` times each (the median run is reported, with the range of achieved/booked).
    The pool's bookable capacity is exactly 300 MB/s, so capacity nobody uses adds at most the 10 %
    unbookable share on top of the reservation. CPU seconds of the gateway and of the client are
    reported: both share the machine's cores. Returns the table's rows and the median MB/s by (client, direction)."""
    from boto3.s3.transfer import TransferConfig

    set_capacity(300 / 0.9 + 0.01, 300 / 0.9 + 0.01)
    path = inst.tmp / "one-gib.bin"
    block = os.urandom(64 * MiB)
    with open(path, "wb") as f:
        for _ in range(16):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())  # the source file's write-back is not part of the run
    config = TransferConfig(multipart_threshold=64 * MiB, multipart_chunksize=64 * MiB, max_concurrency=10)
    lines = []
    rates: dict[tuple[str, str], float] = {}
    for client_kind in ("boto3", "lean"):
        for direction in ("write", "read"):
            runs = sorted(_transfer(inst, client, client_kind, direction, path, config) for _ in range(repeat))
            rate, elapsed, gateway_cpu, client_cpu = runs[len(runs) // 2]
            rates[(client_kind, direction)] = rate
            what = ("upload, multipart" if direction == "write" else "download, ranged GETs") + \
                f" ({client_kind})"
            spread = f" ({runs[0][0] / 300:.3f}–{runs[-1][0] / 300:.3f})" if repeat > 1 else ""
            lines.append(f"| 1 GiB {what} | 300 | {rate:.1f} | {rate / 300:.3f}{spread} | {elapsed:.2f} s | "
                         f"{gateway_cpu:.1f} | {client_cpu:.1f} |")
    return lines, rates


def _transfer(inst: Installation, client: Client, client_kind: str, direction: str, path: Path,
              config: Any) -> tuple[float, float, float, float]:
    """One 1 GiB transfer under a fresh reservation: (MB/s, seconds, gateway CPU s, client CPU s)."""
    size = path.stat().st_size
    gateway_pid = inst.gateway_pids[0]
    rid = book(client, direction, 300 * MB)
    time.sleep(2.5)
    s3 = client.s3(inst.gateways[0])

    def add_header(params: dict[str, Any], _rid: str = rid, **_: Any) -> None:
        params["headers"]["X-Tierpilot-Reservation"] = _rid

    s3.meta.events.register("before-call.s3", add_header)
    out = inst.tmp / f"one-gib.{client_kind}.out"
    gateway_cpu, client_cpu = _cpu_seconds(gateway_pid), time.process_time()
    started = time.monotonic()
    if client_kind == "lean":
        _lean_transfer(client, inst.gateways[0], rid, direction, path, out)
    elif direction == "write":
        s3.upload_file(str(path), client.bucket, "one-gib", Config=config)
    else:
        s3.download_file(client.bucket, "one-gib", str(out), Config=config)
    elapsed = time.monotonic() - started
    gateway_cpu, client_cpu = _cpu_seconds(gateway_pid) - gateway_cpu, time.process_time() - client_cpu
    cancel(client, rid)
    if direction == "read":
        with open(out, "rb") as got, open(path, "rb") as want:
            same = all(got.read(64 * MiB) == want.read(64 * MiB) for _ in range(16))
        out.unlink()
        if not same:
            raise SystemExit(f"the {client_kind} download differs from the upload")
    return size / elapsed / MB, elapsed, gateway_cpu, client_cpu


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def prepare_clients(inst: Installation) -> tuple[list[Client], Client, Client]:
    tag = uuid.uuid4().hex[:6]
    clients = []
    for i in range(6):
        name = f"client{i + 1}" if i < 5 else "greedy"
        uid, key, secret = inst.user(f"{name}-{tag}")
        c = Client(name, uid, key, secret, f"bench-{name}-{tag}")
        s3 = c.s3(inst.gateways[0])
        s3.create_bucket(Bucket=c.bucket)
        s3.put_object(Bucket=c.bucket, Key="object", Body=os.urandom(1 * MiB) * (OBJECT // MiB))
        clients.append(c)
    uid, key, secret = inst.user(f"mp-{tag}")
    mp_client = Client("multipart", uid, key, secret, f"bench-mp-{tag}")
    mp_client.s3(inst.gateways[0]).create_bucket(Bucket=mp_client.bucket)
    return clients[:5], clients[5], mp_client


def table(title: str, rows: list[Row], capacity: float) -> list[str]:
    out = [f"**{title}**", "", "| client | streams | booked MB/s | achieved MB/s | achieved/booked | "
           "p5 of 1 s MB/s |", "|---|---|---|---|---|---|"]
    for r in rows:
        booked = f"{r.booked_mbps:.1f}" if r.booked_mbps else "best-effort"
        ratio = f"{r.ratio:.3f}" if r.ratio is not None else "-"
        streams = 8 if r.booked_mbps is None else 3
        out.append(f"| {r.client} | {streams} | {booked} | {r.achieved_mbps:.1f} | {ratio} | {r.p5_mbps:.1f} |")
        for e in r.errors:
            out.append(f"| {r.client} error | {e[:80]} | | | | |")
    total = sum(r.achieved_mbps for r in rows)
    worst = min(r.ratio for r in rows if r.ratio is not None)
    out.append(f"| **total** | 23 | capacity {capacity:.0f} | {total:.1f} | total/capacity {total / capacity:.3f} | "
               f"worst reserved {worst:.3f} |")
    return [*out, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window of each run")
    parser.add_argument("--skip-multipart", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each 1 GiB transfer (median reported)")
    parser.add_argument("--directions", default="read,write", help="which runs, in this order")
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        print("redis-server not found (make setup installs it)", file=sys.stderr)
        return 2
    run = Run()
    figures = []
    inst = Installation(gateways=2)
    try:
        clients, greedy, mp_client = prepare_clients(inst)
        lines = [f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {os.cpu_count()} CPUs "
                 f"(load average before: {os.getloadavg()[0]:.1f}).", ""]
        capacities = {"read": 300.0, "write": 150.0}
        for direction in [d for d in args.directions.split(",") if d]:
            capacity = capacities[direction]
            for gateways in (1, 2):
                set_capacity(300, 150)
                rows = ratio_run(inst, clients, greedy, direction, capacity, gateways, args.seconds)
                title = (f"{direction}, capacity {capacity:.0f} MB/s, {gateways} gateway process"
                         f"{'es' if gateways > 1 else ''}, {args.seconds:.0f} s")
                block = table(title, rows, capacity)
                print("\n".join(block), flush=True)
                lines += block
                if gateways == 2:
                    worst = min((r for r in rows if r.ratio is not None), key=lambda r: r.ratio or 0.0)
                    figures.append(run.row(f"reservations.{direction}.worst", f"{direction}, 5 reserved clients + 1 "
                                           f"greedy, 2 gateways, {args.seconds:g} s: the worst reserved client's rate "
                                           "(target ≥ 0.95 of its booking)", worst.achieved_mbps, "MB/s",
                                           "its booked rate", worst.booked_mbps))
        if not args.skip_multipart:
            transfers, rates = multipart_run(inst, mp_client, args.repeat)
            mp_lines = ["**1 GiB object under one 300 MB/s reservation** (bookable capacity 300 MB/s per "
                        "direction, 16 x 64 MiB parts, 10 in parallel, one gateway process)", "",
                        "| transfer | booked MB/s | achieved MB/s | achieved/booked | time | gateway CPU s | "
                        "client CPU s |", "|---|---|---|---|---|---|---|", *transfers, ""]
            print("\n".join(mp_lines), flush=True)
            lines += mp_lines
            for direction, name, what in (("write", "upload_1gib", "multipart upload"),
                                          ("read", "download_1gib", "ranged-GET download")):
                figures.append(run.row(f"reservations.{name}", f"1 GiB {what} (boto3) under one 300 MB/s "
                                       f"reservation, median of {args.repeat} (target ≥ 0.97)",
                                       rates[("boto3", direction)], "MB/s", "booked rate", 300.0))
        print("\n".join(lines))
    finally:
        inst.close()
    record(figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
