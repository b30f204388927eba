"""Gateway throughput against the machine's own limits, in one run on one posix tier.

(a) baseline: the same bytes written (with fsync, as the tier does) and read straight in the tier's
    directory, with the same parallelism;
(b) a bare ASGI app on the gateway's server stack (uvicorn + httptools + uvloop, one process) that
    only streams request bodies to a file and files to the socket: the ceiling for any Python
    gateway here;
(c) the gateway (`tierpilot gateway`, one process) with boto3 (default settings, i.e. SHA-256 payload
    signing and CRC32 over plain HTTP): one stream and 8 parallel streams, PUT and GET, 1 GiB.
    (b) and (c) get the same boto3 requests (1 stream: one 1 GiB object; 8 streams: eight 128 MiB
    PUTs or eight 128 MiB ranged GETs); boto3's own multipart transfer is reported for (c) too.
Then a small-object sweep: 1 KiB PUTs and GETs per second at 1, 4, 16, 64, 256 concurrent
requests (SigV4-presigned, keep-alive connections, 4 client processes), with failures and retries.

Everything runs on 127.0.0.1 in a scratch directory (SQLite). MB/s = 10^6 bytes/s.

Then single-stream GETs of the 1 GiB object, bare app and gateway alternating, medians of ``--rounds``: cold
(both files dropped from the page cache with ``POSIX_FADV_DONTNEED``) and cached.

Run: .venv/bin/python bench/gateway_throughput.py [--size-mib 1024] [--sweep-seconds 4] [--workers 1]
     .venv/bin/python bench/gateway_throughput.py --get-only --rounds 3   # the single-stream GET rows only
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import hashlib
import hmac
import http.client
import io
import multiprocessing as mp
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.figures import Run, record
from tests.servers import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000
MiB = 1 << 20
CHUNK = MiB
PARALLEL = 8
SWEEP = (1, 4, 16, 64, 256)
CLIENT_PROCS = 4


# ------------------------------------------------------------------------------------------ (b) bare ASGI


def bare_app(root: Path) -> Callable[..., Any]:
    """Streams PUT bodies into files (fsync, rename) and files (or a range) out: nothing else, but for the one
    header a client validates: a PUT's ``x-amz-checksum-crc32`` (CRC32 computed while writing when the client sent
    none) is answered to a whole-object GET that asks with ``x-amz-checksum-mode: ENABLED``, as the gateway (and S3)
    does. Without it boto3's default validation would checksum the gateway's download only, in the client, on the
    same two cores, and the ratio would measure the client.

    A file goes out with the headers an ASGI file server gives it (Starlette's ``FileResponse``: content-type,
    accept-ranges, content-length, last-modified from its ``stat``, an etag) for the same reason: each header
    costs the server and, more, the client that parses it on the same cores. Measured at 64 HEAD clients
    (2026-11-29): the gateway's six further headers cost the bare app ~15 µs and its clients ~45 µs a request
    when added to it; a baseline without them counted that client work against the gateway."""
    crc32s: dict[str, bytes] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        loop = asyncio.get_running_loop()
        name = scope["path"].strip("/").replace("/", "_") or "root"
        path = root / name
        if scope["method"] == "PUT":
            tmp = root / f".{name}.{os.getpid()}.{id(scope)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            sent = dict(scope["headers"]).get(b"x-amz-checksum-crc32")
            crc, more = 0, True
            while more:
                message = await receive()
                more = message.get("more_body", False)
                body = message.get("body", b"")
                if body:
                    os.write(fd, body)
                    if sent is None:
                        crc = zlib.crc32(body, crc)
            await loop.run_in_executor(None, os.fsync, fd)
            os.close(fd)
            os.rename(tmp, path)
            crc32s[name] = sent or base64.b64encode(crc.to_bytes(4, "big"))
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"etag", b'"bare"'), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        try:
            stat = path.stat()
            size, modified = stat.st_size, formatdate(stat.st_mtime, usegmt=True).encode()
        except FileNotFoundError:
            size, modified = 0, formatdate(0, usegmt=True).encode()
        start, end = 0, size - 1
        headers = dict(scope["headers"])
        status = 200
        if b"range" in headers:
            first, _, last = headers[b"range"].decode().removeprefix("bytes=").partition("-")
            start, end, status = int(first), min(int(last) if last else size - 1, size - 1), 206
        out = [(b"content-type", b"application/octet-stream"), (b"accept-ranges", b"bytes"),
               (b"content-length", str(end - start + 1).encode()), (b"last-modified", modified), (b"etag", b'"bare"')]
        if status == 206:
            out.append((b"content-range", f"bytes {start}-{end}/{size}".encode()))
        elif headers.get(b"x-amz-checksum-mode", b"").upper() == b"ENABLED" and name in crc32s:
            out.append((b"x-amz-checksum-crc32", crc32s[name]))
        await send({"type": "http.response.start", "status": status, "headers": out})
        if scope["method"] == "GET":
            fd = os.open(path, os.O_RDONLY)
            try:
                pos = start
                while pos <= end:
                    data = await loop.run_in_executor(None, os.pread, fd, min(CHUNK, end - pos + 1), pos)
                    pos += len(data)
                    await send({"type": "http.response.body", "body": data, "more_body": pos <= end})
            finally:
                os.close(fd)
        else:
            await send({"type": "http.response.body", "body": b""})

    return app


def serve_bare(port: int, root: str) -> None:
    import uvicorn

    uvicorn.run(bare_app(Path(root)), host="127.0.0.1", port=port, http="httptools", loop="uvloop",
                log_level="warning", access_log=False)


# ------------------------------------------------------------------------------------------ set-up


class Installation:
    """Scratch data dir, SQLite, one user, one posix tier and bucket; gateway and bare servers."""

    def __init__(self, workers: int) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-gw-"))
        self.procs: list[subprocess.Popen[bytes]] = []
        self.env = dict(os.environ, TIERPILOT_DATA_DIR=str(self.tmp), TIERPILOT_SECRET_KEY="bench-secret",
                        TIERPILOT_DATABASE_URL=f"sqlite:///{self.tmp / 'tierpilot.db'}", TIERPILOT_SEED_DEMO="false",
                        TIERPILOT_DEFAULT_TIER="bench")
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("TIERPILOT_")})
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
        self.raw_dir = self.tier_dir.parent / "raw"
        self.raw_dir.mkdir()
        self.gateway = self._start([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning",
                                    "--workers", str(workers), "--port"], "gateway")
        self.bare = self._start([sys.executable, __file__, "--serve-bare", str(self.bare_dir), "--port"], "bare")
        self.pids = {"gateway": self.procs[0].pid, "bare": self.procs[1].pid}
        self.s3("gateway").create_bucket(Bucket="bench")

    def _start(self, cmd: list[str], name: str) -> str:
        port = free_port()
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115
        self.procs.append(subprocess.Popen(cmd + [str(port)], env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           cwd=ROOT))
        wait_port(port)
        return f"http://127.0.0.1:{port}"

    def s3(self, which: str, pool: int = 16, validate: bool = True) -> Any:
        import boto3
        from botocore.config import Config

        validation = "when_supported" if validate else "when_required"
        return boto3.client("s3", endpoint_url=self.gateway if which == "gateway" else self.bare,
                            aws_access_key_id=self.key_id, aws_secret_access_key=self.secret, region_name="us-east-1",
                            config=Config(max_pool_connections=pool,
                                          response_checksum_validation=validation))

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)


# ------------------------------------------------------------------------------------------ large transfers


@dataclass
class Result:
    name: str
    nbytes: int
    seconds: float
    server_cpu: float | None = None  # CPU seconds the server process(es) used
    client_cpu: float = 0.0  # CPU seconds this (client) process used

    @property
    def mbps(self) -> float:
        return self.nbytes / self.seconds / MB

    @property
    def cpu_per_gib(self) -> float | None:
        return None if self.server_cpu is None else self.server_cpu / (self.nbytes / (1 << 30))

    @property
    def client_cpu_per_gib(self) -> float:
        return self.client_cpu / (self.nbytes / (1 << 30))


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children, from /proc (robust to other load)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
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
            total += (int(stats[p][11]) + int(stats[p][12])) / tick
        todo += children.get(p, [])
    return total


def timed(name: str, nbytes: int, fn: Callable[[], Any], server_pid: int | None = None) -> Result:
    cpu0 = tree_cpu(server_pid) if server_pid else 0.0
    client0 = time.process_time()
    t0 = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t0
    client = time.process_time() - client0
    return Result(name, nbytes, elapsed, tree_cpu(server_pid) - cpu0 if server_pid else None, client)


def make_payload(size: int) -> bytes:
    block = os.urandom(64 * MiB)
    return (block * (size // len(block) + 1))[:size]


def baseline(inst: Installation, data: bytes) -> dict[str, Result]:
    """(a): the same bytes through the file system directly, fsynced like the tier's writes."""
    size = len(data)
    view = memoryview(data)

    def write(path: Path, part: memoryview) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for off in range(0, len(part), CHUNK):
            os.write(fd, part[off:off + CHUNK])
        os.fsync(fd)
        os.close(fd)

    def read(path: Path, start: int, length: int) -> None:
        fd = os.open(path, os.O_RDONLY)
        pos = start
        while pos < start + length:
            pos += len(os.pread(fd, min(CHUNK, start + length - pos), pos))
        os.close(fd)

    share = size // PARALLEL
    out = {
        "put1": timed("write 1 stream", size, lambda: write(inst.raw_dir / "one", view)),
        "get1": timed("read 1 stream", size, lambda: read(inst.raw_dir / "one", 0, size)),
    }

    def parallel(fn: Callable[[int], None]) -> None:
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(fn, range(PARALLEL)))

    out["put8"] = timed("write 8 streams", size, lambda: parallel(
        lambda i: write(inst.raw_dir / f"part{i}", view[i * share:(i + 1) * share])))
    out["get8"] = timed("read 8 streams", size, lambda: parallel(
        lambda i: read(inst.raw_dir / "one", i * share, share)))
    return out


def raw_put(endpoint: str, path: str, data: bytes) -> None:
    """A PUT from a plain socket in 1 MiB sends (a presigned, UNSIGNED-PAYLOAD URL): no client-side hashing."""
    host, port = endpoint.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"PUT {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {len(data)}\r\n\r\n".encode())
        view = memoryview(data)
        for off in range(0, len(data), CHUNK):
            sock.sendall(view[off:off + CHUNK])
        answer = sock.recv(4096)
    if not answer.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"raw PUT failed: {answer[:200]!r}")


def raw_get(endpoint: str, path: str, size: int) -> None:
    """A GET read from a plain socket into one reused 1 MiB buffer (the cheapest client Python has)."""
    host, port = endpoint.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        buf = bytearray(CHUNK)
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(65536)
        got = len(head.split(b"\r\n\r\n", 1)[1])
        while got < size:
            n = sock.recv_into(buf)
            if n == 0:
                raise RuntimeError(f"raw GET ended after {got} of {size} bytes")
            got += n


def through(inst: Installation, which: str, data: bytes) -> dict[str, Result]:
    """(b) or (c): the same boto3 requests against the bare app or the gateway."""
    s3 = inst.s3(which)
    size = len(data)
    share = size // PARALLEL
    view = memoryview(data)
    pid = inst.pids[which]

    def get_all(key: str, rng: str | None = None) -> int:
        kwargs = {"Range": rng} if rng else {}
        body = s3.get_object(Bucket="bench", Key=key, **kwargs)["Body"]
        n = 0
        while chunk := body.read(CHUNK):
            n += len(chunk)
        return n

    out = {"put1": timed("PUT 1 stream", size, lambda: s3.put_object(Bucket="bench", Key="one", Body=data), pid)}
    out["get1"] = timed("GET 1 stream", size, lambda: get_all("one"), pid)

    def parallel(fn: Callable[[int], Any]) -> None:
        with ThreadPoolExecutor(PARALLEL) as pool:
            list(pool.map(fn, range(PARALLEL)))

    out["put8"] = timed("PUT 8 streams", size, lambda: parallel(
        lambda i: s3.put_object(Bucket="bench", Key=f"part{i}", Body=bytes(view[i * share:(i + 1) * share]))), pid)
    out["get8"] = timed("GET 8 streams", size, lambda: parallel(
        lambda i: get_all("one", f"bytes={i * share}-{(i + 1) * share - 1}")), pid)
    endpoint = inst.gateway if which == "gateway" else inst.bare
    signer = Presigner(endpoint, inst.key_id, inst.secret)
    out["rawput1"] = timed("PUT 1 stream, plain socket client", size,
                           lambda: raw_put(endpoint, signer.path("PUT", "raw"), data), pid)
    out["rawget1"] = timed("GET 1 stream, plain socket client", size,
                           lambda: raw_get(endpoint, signer.path("GET", "raw"), size), pid)
    if which == "gateway":
        from boto3.s3.transfer import TransferConfig

        config = TransferConfig(multipart_threshold=64 * MiB, multipart_chunksize=64 * MiB, max_concurrency=PARALLEL)
        out["mpput"] = timed("boto3 upload_fileobj (8 x 64 MiB parts)", size, lambda: s3.upload_fileobj(
            io.BytesIO(data), "bench", "multipart", Config=config), pid)
        sink = _Sink()
        out["mpget"] = timed("boto3 download_fileobj (8 x 64 MiB ranges)", size, lambda: s3.download_fileobj(
            "bench", "multipart", sink, Config=config), pid)
        assert sink.n == size
    return out


def drop_cache(*dirs: Path) -> None:
    """Evict every file under ``dirs`` from the page cache (``POSIX_FADV_DONTNEED``): the next read is cold."""
    for top in dirs:
        for root, _subdirs, files in os.walk(top):
            for name in files:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                finally:
                    os.close(fd)


def single_get(inst: Installation, size: int, rounds: int) -> list[tuple[str, list[Result], list[Result]]]:
    """One-stream GETs of the 1-stream object ("one"), bare app and gateway alternating, ``rounds`` each:
    cold (both files dropped from the page cache first), then cached. The gateway keeps a large object's pages
    from its second read on (drivers/posix.py, drop-behind), so both servers read it twice before the cached
    rounds; the bare app's file is in the cache from its write anyway."""
    clients = {which: inst.s3(which) for which in ("bare", "gateway")}
    unchecked = {which: inst.s3(which, validate=False) for which in ("bare", "gateway")}
    paths = {which: Presigner(inst.gateway if which == "gateway" else inst.bare, inst.key_id, inst.secret)
             for which in ("bare", "gateway")}
    dirs = {"bare": inst.bare_dir, "gateway": inst.tier_dir}

    def boto(which: str, s3: dict[str, Any] = clients) -> None:
        body = s3[which].get_object(Bucket="bench", Key="one")["Body"]
        n = 0
        while chunk := body.read(CHUNK):
            n += len(chunk)
        assert n == size, (which, n)

    def plain(which: str) -> None:
        endpoint = inst.gateway if which == "gateway" else inst.bare
        raw_get(endpoint, paths[which].path("GET", "one"), size)

    rows: list[tuple[str, list[Result], list[Result]]] = []
    for cold in (True, False):
        if not cold:
            for which in ("bare", "gateway"):
                boto(which)
                boto(which)
        # boto3 validates the CRC32 both servers return (bare_app keeps the one sent with the PUT)
        for label, fn in (("boto3", boto), ("boto3 without checksum validation",
                                            functools.partial(boto, s3=unchecked)), ("plain socket client", plain)):
            got: dict[str, list[Result]] = {"bare": [], "gateway": []}
            for _ in range(rounds):
                for which in ("bare", "gateway"):
                    if cold:
                        drop_cache(dirs[which])
                    got[which].append(timed(which, size, functools.partial(fn, which), inst.pids[which]))
            name = f"GET 1 stream, {'cold (page cache dropped)' if cold else 'cached'}, {label}"
            rows.append((name, got["bare"], got["gateway"]))
            b, g = (statistics.median(r.mbps for r in got[w]) for w in ("bare", "gateway"))
            print(f"  {name:58s} bare {b:7.0f}  gateway {g:7.0f} MB/s  ({g / b:.2f})", flush=True)
    return rows


def single_get_report(rows: list[tuple[str, list[Result], list[Result]]], rounds: int) -> str:
    lines = [f"Single-stream GET, median of {rounds} (bare and gateway alternating); load average "
             f"{os.getloadavg()[0]:.1f} at the end:", "",
             "| GET | bare MB/s | gateway MB/s | gateway ÷ bare | server CPU s/GiB bare / gateway "
             "| client CPU s/GiB bare / gateway | runs bare / gateway |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for name, bare, gw in rows:
        b, g = statistics.median(r.mbps for r in bare), statistics.median(r.mbps for r in gw)
        bc, gc = (statistics.median(r.cpu_per_gib or 0 for r in rs) for rs in (bare, gw))
        bk, gk = (statistics.median(r.client_cpu_per_gib for r in rs) for rs in (bare, gw))
        runs = f"{', '.join(f'{r.mbps:.0f}' for r in bare)} / {', '.join(f'{r.mbps:.0f}' for r in gw)}"
        lines.append(f"| {name.removeprefix('GET 1 stream, ')} | {b:,.0f} | {g:,.0f} | {g / b:.2f} | {bc:.2f} / "
                     f"{gc:.2f} | {bk:.2f} / {gk:.2f} | {runs} |")
    return "\n".join(lines)


class _Sink(io.RawIOBase):
    """A writable, seekable file that keeps only the byte count (download_fileobj needs seek)."""

    def __init__(self) -> None:
        self.n = 0
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return offset

    def write(self, b: Any) -> int:
        with self._lock:
            self.n += len(b)
        return len(b)


# ------------------------------------------------------------------------------------------ small objects


class Presigner:
    """SigV4 query-string signing with a cached signing key (cheap enough for thousands of requests/s)."""

    def __init__(self, endpoint: str, key_id: str, secret: str) -> None:
        self.host = endpoint.removeprefix("http://")
        self.key_id = key_id
        self.day = datetime.now(UTC).strftime("%Y%m%d")
        key = hmac.digest(f"AWS4{secret}".encode(), self.day.encode(), "sha256")
        for part in ("us-east-1", "s3", "aws4_request"):
            key = hmac.digest(key, part.encode(), "sha256")
        self.key = key

    def path(self, method: str, key: str, bucket: str = "bench") -> str:
        amz = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        scope = f"{self.day}/us-east-1/s3/aws4_request"
        query = (f"X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential={quote(self.key_id + '/' + scope, safe='')}"
                 f"&X-Amz-Date={amz}&X-Amz-Expires=900&X-Amz-SignedHeaders=host")
        path = f"/{bucket}/{key}"
        creq = f"{method}\n{path}\n{query}\nhost:{self.host}\n\nhost\nUNSIGNED-PAYLOAD"
        sts = f"AWS4-HMAC-SHA256\n{amz}\n{scope}\n{hashlib.sha256(creq.encode()).hexdigest()}"
        return f"{path}?{query}&X-Amz-Signature={hmac.new(self.key, sts.encode(), hashlib.sha256).hexdigest()}"


def _sweep_worker(args: tuple[Any, ...]) -> dict[str, Any]:
    """One client process of a sweep point: (endpoint, key_id, secret, op, proc, threads, start_at, seconds
    [, size, key prefix]) — 1 KiB objects under ``small/`` unless a size and prefix are given."""
    endpoint, key_id, secret, op, proc, threads, start_at, seconds, *rest = args
    size, prefix = rest if rest else (1024, "small")
    signer = Presigner(endpoint, key_id, secret)
    host, port = endpoint.removeprefix("http://").split(":")
    body = os.urandom(size)
    stats: dict[str, Any] = {"ok": 0, "failed": 0, "retries": 0, "latency": []}
    lock = threading.Lock()

    def run(thread: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        i = 0
        ok = failed = retries = 0
        lat: list[float] = []
        while time.time() < start_at:
            time.sleep(0.001)
        end = start_at + seconds
        while time.time() < end:
            n = i % 200 if op == "PUT" else (proc * 997 + thread + i) % 200
            key = f"{prefix}/{proc}-{thread}-{n}" if op == "PUT" else f"{prefix}/seed-{n}"
            i += 1
            t0 = time.perf_counter()
            for attempt in range(4):
                try:
                    conn.request(op, signer.path(op, key), body=body if op == "PUT" else None)
                    r = conn.getresponse()
                    r.read()
                    if r.status in (500, 502, 503, 504) and attempt < 3:
                        retries += 1
                        time.sleep(0.05 * (attempt + 1))
                        continue
                    if r.status == 200:
                        ok += 1
                    else:
                        failed += 1
                    break
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection(host, int(port), timeout=30)
                    if attempt == 3:
                        failed += 1
                    else:
                        retries += 1
                        time.sleep(0.05 * (attempt + 1))
            lat.append(time.perf_counter() - t0)
        conn.close()
        with lock:
            stats["ok"] += ok
            stats["failed"] += failed
            stats["retries"] += retries
            stats["latency"] += lat

    cpu0 = time.process_time()
    pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    stats["cpu_s"] = time.process_time() - cpu0  # this client process's CPU (bench/sweep_vs_gateway.py)
    return stats


@dataclass
class SweepPoint:
    op: str
    concurrency: int
    seconds: float
    ok: int
    failed: int
    retries: int
    latency: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.ok / self.seconds

    def pct(self, q: float) -> float:
        if not self.latency:
            return 0.0
        return statistics.quantiles(self.latency, n=100)[int(q) - 1] * 1000 if len(self.latency) > 1 else \
            self.latency[0] * 1000


def sweep(inst: Installation, seconds: float) -> list[SweepPoint]:
    s3 = inst.s3("gateway")
    for i in range(200):
        s3.put_object(Bucket="bench", Key=f"small/seed-{i}", Body=os.urandom(1024))
    points: list[SweepPoint] = []
    ctx = mp.get_context("spawn")
    with ctx.Pool(CLIENT_PROCS) as pool:
        for op in ("PUT", "GET"):
            for conc in SWEEP:
                procs = min(CLIENT_PROCS, conc)
                per = [conc // procs + (1 if p < conc % procs else 0) for p in range(procs)]
                start_at = time.time() + 1.0
                args = [(inst.gateway, inst.key_id, inst.secret, op, p, per[p], start_at, seconds)
                        for p in range(procs)]
                results = pool.map(_sweep_worker, args)
                point = SweepPoint(op, conc, seconds, sum(r["ok"] for r in results),
                                   sum(r["failed"] for r in results), sum(r["retries"] for r in results),
                                   [x for r in results for x in r["latency"]])
                points.append(point)
                print(f"  {op} x{conc:<3d} {point.rate:8.0f} req/s  failed {point.failed}  retries {point.retries}"
                      f"  p50 {point.pct(50):6.1f} ms  p99 {point.pct(99):6.1f} ms", flush=True)
    return points


# ------------------------------------------------------------------------------------------ report


def report(base: dict[str, Result], bare: dict[str, Result], gw: dict[str, Result], points: list[SweepPoint],
           size: int, workers: int) -> str:
    lines = [
        f"Object {size // MiB} MiB; gateway: {workers} process(es); client: boto3 {_boto3_version()} "
        f"(default settings); {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the end; "
        "MB/s = 10^6 B/s; CPU = server CPU seconds per GiB moved.",
        "",
        "| transfer | (a) file system MB/s | (b) bare ASGI MB/s | (c) gateway MB/s | (c)/(a) | (c)/(b) "
        "| (b) CPU s/GiB | (c) CPU s/GiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = {"put1": "PUT, 1 stream", "get1": "GET, 1 stream", "put8": "PUT, 8 streams", "get8": "GET, 8 streams",
             "rawput1": "PUT, 1 stream, plain socket client", "rawget1": "GET, 1 stream, plain socket client"}
    for k, label in names.items():
        a, b, c = base[k.removeprefix("raw")].mbps, bare[k].mbps, gw[k].mbps
        lines.append(f"| {label} | {a:,.0f} | {b:,.0f} | {c:,.0f} | {c / a:.2f} | {c / b:.2f} "
                     f"| {bare[k].cpu_per_gib or 0:.2f} | {gw[k].cpu_per_gib or 0:.2f} |")
    for k in ("mpput", "mpget"):
        if k in gw:
            lines.append(f"| {gw[k].name} | | | {gw[k].mbps:,.0f} | | | | {gw[k].cpu_per_gib or 0:.2f} |")
    if not points:
        return "\n".join(lines)
    lines += ["", "Small objects (1 KiB), gateway:", "",
              "| op | concurrency | requests/s | failed | retries | p50 ms | p99 ms |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for p in points:
        lines.append(f"| {p.op} | {p.concurrency} | {p.rate:,.0f} | {p.failed} | {p.retries} | {p.pct(50):.1f} | "
                     f"{p.pct(99):.1f} |")
    for op in ("PUT", "GET"):
        ops = [p for p in points if p.op == op]
        peak = max(p.rate for p in ops)
        last = ops[-1]
        lines.append("")
        lines.append(f"{op}: peak {peak:,.0f} req/s; at {last.concurrency} concurrent requests "
                     f"{last.rate / peak:.0%} of peak, {sum(p.failed for p in ops)} failed requests.")
    return "\n".join(lines)


def figures(run: Run, size_mib: int, gets: list[tuple[str, list[Result], list[Result]]],
            bare: dict[str, Result] | None = None, gw: dict[str, Result] | None = None) -> list[dict[str, Any]]:
    """The rows of the current figures: the single-stream boto3 PUT (full runs) and the plain-socket GETs, cold and
    cached, each against the bare app of the same run."""
    rows = []
    if bare is not None and gw is not None:
        rows.append(run.row("gateway.put_1gib", f"{size_mib} MiB PUT, one boto3 stream (target ≥ 0.7 of the bare "
                            "app)", gw["put1"].mbps, "MB/s", "bare ASGI app on the same server stack",
                            bare["put1"].mbps))
    for name, b, g in gets:
        if name.endswith("plain socket client"):
            cold = "cold" in name
            rows.append(run.row(f"gateway.get_1gib.{'cold' if cold else 'cached'}",
                                f"{size_mib} MiB GET, one stream, {'page cache dropped' if cold else 'cached'}, plain "
                                "socket client (target ≥ 0.7)", statistics.median(r.mbps for r in g), "MB/s",
                                "bare ASGI app, same run", statistics.median(r.mbps for r in b)))
    return rows


def _boto3_version() -> str:
    import boto3

    return str(boto3.__version__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--sweep-seconds", type=float, default=4.0)
    parser.add_argument("--workers", type=int, default=1, help="gateway processes")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="single-stream GET rounds (cold and cached)")
    parser.add_argument("--get-only", action="store_true",
                        help="only the single-stream GET rounds (the object is PUT once to each server)")
    parser.add_argument("--serve-bare", metavar="DIR", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.port, args.serve_bare)
        return
    run = Run()
    size = args.size_mib * MiB
    inst = Installation(args.workers)
    try:
        data = make_payload(size)
        if args.get_only:
            for which in ("bare", "gateway"):
                inst.s3(which).put_object(Bucket="bench", Key="one", Body=data)
            del data
            gets = single_get(inst, size, args.rounds)
            print(single_get_report(gets, args.rounds))
            rows = figures(run, args.size_mib, gets)
        else:
            print(f"(a) file system, {args.size_mib} MiB", flush=True)
            base = baseline(inst, data)
            print("(b) bare ASGI app", flush=True)
            bare = through(inst, "bare", data)
            print("(c) gateway", flush=True)
            gw = through(inst, "gateway", data)
            for label, res in (("a", base), ("b", bare), ("c", gw)):
                for r in res.values():
                    print(f"  ({label}) {r.name:45s} {r.mbps:8.0f} MB/s", flush=True)
            gets = single_get(inst, size, args.rounds)
            points = [] if args.skip_sweep else sweep(inst, args.sweep_seconds)
            print()
            print(report(base, bare, gw, points, size, args.workers))
            print()
            print(single_get_report(gets, args.rounds))
            rows = figures(run, args.size_mib, gets, bare, gw)
    finally:
        inst.close()
    record(rows)

if __name__ == "__main__":
    main()
