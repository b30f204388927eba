"""Far tiers: read-ahead, adoption and the mount against an s3 tier behind a 25 ms, 1 Gbit/s link.

Set-up, all on 127.0.0.1 in one run: a second ``tierpilot gateway`` (own database, a posix tier,
``--cloud-workers`` processes) stands for the cloud — moto copies a whole object for every ranged GET, which
drowns any read-ahead in large objects;
the delaying proxy (``tests/netem.py``, its own process) sits in front of it with 12.5 ms each way and a
1 Gbit/s cap per connection and in total; two ``tierpilot gateway`` processes serve a bucket on an s3 tier
that reaches the cloud through the proxy, one with read-ahead (the default) and one with
``TIERPILOT_READAHEAD_ENABLED=false``.

Figures (ratios are within this run):
- link: a bulk transfer through a second proxy of the same parameters into a local sink (what the link
  gives on this machine now), and the nominal 125 MB/s;
- sequential: one whole-object GET of ``--size-mb`` through each gateway, MB/s and ratio to the link;
- strided: 1 MiB read, 3 MiB skipped, one client in order through the read-ahead gateway, against an
  "oracle" that knows every offset and fetches them 8 at a time through the plain gateway;
- random: ``--random`` 1 MiB reads at random offsets through each gateway; extra bytes fetched by
  read-ahead (prefetched − used, from /metrics) against the bytes read;
- adoption: a bucket of ``--objects`` keys in ``--prefixes`` prefixes (rows written into the cloud's catalog
  in bulk) listed by ``tierpilot tiers adopt`` (up to ``--adopt-workers`` requests in flight) against one
  sequential ListObjectsV2 pager (boto3's paginator, timed once before and once after the adoption; with
  ``--pager-pages`` on that many pages, extrapolated per page), both across the link, the parallel listing
  alone (no catalog inserts), and the CPU this process and the cloud's processes spent during the adoption;
- mount: ``find`` over the adopted bucket warm, ``grep -r`` over 1,000 small files warm against the same
  files in a local directory, and a sequential read of the large object through the mount against a
  direct GET of it through the same gateway just before and after.

Run: .venv/bin/python bench/far_tiers.py [--size-mb 1024] [--objects 100000] [--markdown]
     [--only adoption] [--pager-pages 100]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
import httpx  # noqa: E402
from boto3.s3.transfer import TransferConfig  # noqa: E402
from botocore.config import Config  # noqa: E402

from bench.figures import Run, record  # noqa: E402
from tests.servers import free_port, wait_port  # noqa: E402

MiB = 1 << 20
PY = sys.executable
LINK_MBIT = 1000.0
DELAY_MS = 12.5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def start_proxy(upstream: int) -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen([PY, "-m", "tests.netem", str(upstream), "--delay-ms", str(DELAY_MS), "--rate-mbit",
                             str(LINK_MBIT), "--total-mbit", str(LINK_MBIT)], cwd=ROOT, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


REMOTE_SETUP = """
import json, sys
from tierpilot.kit.migrate import upgrade
upgrade(sys.argv[1])
from tierpilot.app import wiring
wiring.install()
from tierpilot.auth import service as auth
from tierpilot.catalog import service as catalog
from tierpilot.kit.db import transaction
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate
with transaction(write=True) as s:
    tiers.create(s, TierCreate(name="disk", driver="posix", config={"path": "disk"}, storage_classes=["STANDARD"]))
    user, key = auth.create_user(s, "cloud", "cloud-password-1", is_admin=True)
    for name in ("cloud", "legacy"):
        catalog.create_bucket(s, owner_id=user.id, name=name, tier_name="disk")
    legacy = catalog.get_bucket(s, "legacy")
    disk_id, legacy_id = legacy.tier_id, legacy.id
# the legacy bucket's keys go into the cloud's catalog in bulk (rows only: its ListObjectsV2 reads the catalog,
# and nothing GETs them); through PUTs, 20,000 took 156 s here
from datetime import UTC, datetime
from tierpilot.catalog import repository
objects, prefixes = int(sys.argv[2]), int(sys.argv[3])
now = datetime.now(UTC)
for lo in range(0, objects, 20000):
    rows = [{"key": f"d{i % prefixes:04d}/f{i:07d}.dat", "size": 100, "etag": f"{i:032x}", "tier_id": disk_id,
             "storage_class": "STANDARD", "locator": f"legacy/f{i:07d}", "created_at": now, "last_modified": now,
             "user_metadata": {}, "headers": {}, "tags": {}} for i in range(lo, min(objects, lo + 20000))]
    with transaction(write=True) as s:
        repository.adopt_objects(s, legacy_id, rows)
print(json.dumps([key.access_key_id, key.secret_access_key]))
"""


def start_remote(work: Path, objects: int, prefixes: int, workers: int) -> tuple[subprocess.Popen[bytes], str, str,
                                                                               str]:
    """The cloud: a tierpilot gateway of its own (database, posix tier, ``workers`` processes) with buckets
    "cloud" and "legacy" (the latter holding ``objects`` keys in ``prefixes`` prefixes)."""
    home = work / "cloud"
    home.mkdir()
    url = f"sqlite:///{home / 'cloud.db'}"
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(home), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
               TIERPILOT_SECRET_KEY="bench-cloud-key", TIERPILOT_DEFAULT_TIER="disk")
    env.pop("TIERPILOT_REDIS_URL", None)
    out = subprocess.run([PY, "-c", REMOTE_SETUP, url, str(objects), str(prefixes)], env=env, cwd=ROOT,
                         capture_output=True, check=True).stdout
    key, secret = __import__("json").loads(out.splitlines()[-1])
    proc, gw = start_gateway(env, work / "cloud.log", workers)
    return proc, gw, key, secret


def start_gateway(env: dict[str, str], logfile: Path, workers: int = 1) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "tierpilot.app.cli", "gateway", "--port", str(port), "--log-level", "warning",
                             "--workers", str(workers)],
                            env=env, cwd=ROOT, stdout=open(logfile, "ab"), stderr=subprocess.STDOUT)  # noqa: SIM115
    wait_port(port, 60)
    return proc, f"http://127.0.0.1:{port}"


def stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def s3(url: str, key: str, secret: str, pool: int = 16) -> Any:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=key, aws_secret_access_key=secret,
                        region_name="us-east-1", config=Config(max_pool_connections=pool,
                                                               s3={"addressing_style": "path"}))


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (the cloud gateway's worker processes)."""
    kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *(int(k) for k in kids)]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of ``pids`` so far."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def link_rate(nbytes: int = 256 * MiB) -> float:
    """MB/s of one bulk transfer through a proxy of the link's parameters into a local sink."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    got = [0]

    def sink() -> None:
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(1 << 20):
                got[0] += len(data)
            conn.sendall(b"k")

    t = threading.Thread(target=sink, daemon=True)
    t.start()
    proc, pport = start_proxy(port)
    try:
        block = b"\0" * (1 << 20)
        with socket.create_connection(("127.0.0.1", pport)) as c:
            t0 = time.perf_counter()
            for _ in range(nbytes // len(block)):
                c.sendall(block)
            c.shutdown(socket.SHUT_WR)
            c.recv(1)
            elapsed = time.perf_counter() - t0
    finally:
        stop(proc)
        server.close()
    return nbytes / elapsed / 1e6


def readahead_bytes(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/_tierpilot/metrics", timeout=30).text
    return {k: float(v) for k, v in
            re.findall(r'^tierpilot_gateway_readahead_bytes_total\{kind="(\w+)"\} (\S+)$', text, re.M)}


def get_all(client: Any, bucket: str, key: str) -> tuple[int, float]:
    t0 = time.perf_counter()
    body = client.get_object(Bucket=bucket, Key=key)["Body"]
    n = 0
    while chunk := body.read(8 * MiB):
        n += len(chunk)
    return n, time.perf_counter() - t0


def get_range(client: Any, bucket: str, key: str, lo: int, n: int) -> int:
    return len(client.get_object(Bucket=bucket, Key=key, Range=f"bytes={lo}-{lo + n - 1}")["Body"].read())


def main() -> int:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--random", type=int, default=64)
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--prefixes", type=int, default=100)
    parser.add_argument("--cloud-workers", type=int, default=2, help="processes of the gateway standing for the "
                        "cloud (its listing is CPU-bound: one process answers one page at a time)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--adopt-workers", type=int, default=64, help="most list requests in flight")
    parser.add_argument("--pager-pages", type=int, default=0, help="time the baseline pager on this many pages "
                        "and extrapolate per page (0: the whole bucket)")
    parser.add_argument("--only", choices=("all", "adoption"), default="all", help="adoption: only the adoption "
                        "figures (no upload, reads or mount)")
    args = parser.parse_args()
    run = Run()
    recorded: list[dict[str, Any]] = []  # the rows of the current figures
    size = args.size_mb * MiB
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="tierpilot-bench-far-"))
    procs: list[subprocess.Popen[Any]] = []
    mnt = work / "mnt"
    rows: list[tuple[str, str, str]] = []
    try:
        cloud_proc, cloud_url, cloud_key, cloud_secret = start_remote(work, args.objects, args.prefixes,
                                                                      args.cloud_workers)
        procs.append(cloud_proc)
        proxy, proxy_port = start_proxy(int(cloud_url.rsplit(":", 1)[1]))
        procs.append(proxy)
        far_url = f"http://127.0.0.1:{proxy_port}"
        url = f"sqlite:///{work / 'tierpilot.db'}"
        env = dict(os.environ, TIERPILOT_DATA_DIR=str(work), TIERPILOT_DATABASE_URL=url,
                   TIERPILOT_SEED_DEMO="false", TIERPILOT_SECRET_KEY="bench-secret-key")
        env.pop("TIERPILOT_REDIS_URL", None)
        os.environ.update({k: v for k, v in env.items() if k.startswith("TIERPILOT_")})
        os.environ.pop("TIERPILOT_REDIS_URL", None)
        from tierpilot.app import wiring
        from tierpilot.auth import service as auth
        from tierpilot.catalog import service as catalog
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade
        from tierpilot.tiers import service as tiers
        from tierpilot.tiers.schemas import TierCreate

        upgrade(url)
        wiring.install()
        with transaction(write=True) as s:
            tiers.create(s, TierCreate(name="cloud", driver="s3", storage_classes=["STANDARD"], config={
                "endpoint_url": far_url, "bucket": "cloud", "access_key_id": cloud_key,
                "secret_access_key": cloud_secret, "max_pool_connections": 64}))
            user, key = auth.create_user(s, "bench", "bench-password-1", is_admin=True)
            catalog.create_bucket(s, owner_id=user.id, name="far", tier_name="cloud")
            ak, sk, owner_id = key.access_key_id, key.secret_access_key, user.id
        gw_proc, gw = start_gateway(env, work / "gw-ra.log")
        procs.append(gw_proc)
        plain_proc, gw_plain = start_gateway(dict(env, TIERPILOT_READAHEAD_ENABLED="false"), work / "gw-plain.log")
        procs.append(plain_proc)
        c_ra, c_plain = s3(gw, ak, sk), s3(gw_plain, ak, sk)

        if args.only != "adoption":
            link = link_rate()
            log(f"link through the proxy: {link:.1f} MB/s (nominal {LINK_MBIT / 8:.0f})")
            rows.append(("link: bulk TCP through the proxy", f"{link:.1f} MB/s", f"nominal {LINK_MBIT / 8:.0f} MB/s"))

            src = work / "big.bin"
            with open(src, "wb") as f:
                for _ in range(args.size_mb):
                    f.write(os.urandom(MiB))
            t0 = time.perf_counter()
            c_ra.upload_file(str(src), "far", "big.bin", Config=TransferConfig(multipart_chunksize=64 * MiB,
                                                                                max_concurrency=8))
            log(f"uploaded {args.size_mb} MiB in {time.perf_counter() - t0:.1f} s")

            # sequential ------------------------------------------------------------------------------------
            seq: dict[str, float] = {}
            for name, client in (("read-ahead", c_ra), ("no read-ahead", c_plain)):
                n, elapsed = get_all(client, "far", "big.bin")
                assert n == size
                seq[name] = n / elapsed / 1e6
                log(f"sequential GET {name}: {seq[name]:.1f} MB/s")
                rows.append((f"sequential GET of {args.size_mb} MiB, {name}", f"{seq[name]:.1f} MB/s",
                             f"{seq[name] / (LINK_MBIT / 8):.2f} of the nominal link, {seq[name] / link:.2f} of one "
                             "measured connection"))
            recorded.append(run.row("far.sequential", f"sequential {args.size_mb} MiB GET from an s3 tier 25 ms away, "
                                    "read-ahead (target ≥ 0.85 of the link)", seq["read-ahead"], "MB/s",
                                    "nominal link", LINK_MBIT / 8))

            # strided ---------------------------------------------------------------------------------------
            offsets = list(range(0, size - MiB, 4 * MiB))
            t0 = time.perf_counter()
            for lo in offsets:
                get_range(c_ra, "far", "big.bin", lo, MiB)
            strided = time.perf_counter() - t0
            t0 = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda lo: get_range(c_plain, "far", "big.bin", lo, MiB), offsets))
            oracle = time.perf_counter() - t0
            t0 = time.perf_counter()
            for lo in offsets[:32]:
                get_range(c_plain, "far", "big.bin", lo, MiB)
            plain_strided = (time.perf_counter() - t0) * len(offsets) / 32
            log(f"strided: read-ahead {strided:.2f} s, oracle {oracle:.2f} s, plain ~{plain_strided:.2f} s")
            rows.append((f"strided 1 MiB/3 MiB gap, {len(offsets)} reads, read-ahead", f"{strided:.2f} s",
                         f"{oracle / strided:.2f} of the oracle ({oracle:.2f} s; "
                         f"no read-ahead ~{plain_strided:.2f} s)"))
            read = len(offsets) * MiB / 1e6
            recorded.append(run.row("far.strided", "strided 1 MiB read / 3 MiB skipped, read-ahead (target ≥ 0.85 of "
                                    "the oracle)", read / strided, "MB/s", "oracle: 8 offsets at a time",
                                    read / oracle))

            # random ----------------------------------------------------------------------------------------
            rng = random.Random(15)
            picks = [rng.randrange(0, size - MiB) for _ in range(args.random)]
            before = readahead_bytes(gw)
            times = {"read-ahead": 0.0, "no read-ahead": 0.0}
            for i, lo in enumerate(picks):  # interleaved, alternating who goes first: neither warms the other
                pair = [("read-ahead", c_ra), ("no read-ahead", c_plain)]
                for name, client in pair if i % 2 else reversed(pair):
                    t0 = time.perf_counter()
                    get_range(client, "far", "big.bin", lo, MiB)
                    times[name] += time.perf_counter() - t0
            after = readahead_bytes(gw)
            extra = (after.get("prefetched", 0) - before.get("prefetched", 0)) - \
                (after.get("used", 0) - before.get("used", 0))
            log(f"random: {times}, extra {extra / MiB:.1f} MiB")
            rows.append((f"random 1 MiB reads x{args.random}", f"{times['read-ahead']:.2f} s vs "
                         f"{times['no read-ahead']:.2f} s without", f"{extra / (args.random * MiB) * 100:.1f} % extra "
                         "bytes fetched"))

        # adoption --------------------------------------------------------------------------------------
        from tierpilot.adoption.listing import S3Lister, S3Source, list_parallel
        from tierpilot.adoption.service import adopt

        keys = [f"d{i % args.prefixes:04d}/f{i:07d}.dat" for i in range(args.objects)]
        far_client = s3(far_url, cloud_key, cloud_secret)
        cloud_pids = process_tree(cloud_proc.pid)
        sample = args.pager_pages * 1000 if args.pager_pages else None

        pager_cpu: list[float] = []

        def pager_run() -> tuple[float, int]:
            """Seconds per 1,000-key page of boto3's paginator (the whole bucket, or its first pages)."""
            t0, c0 = time.perf_counter(), time.process_time()
            pages = listed = 0
            config = {"PageSize": 1000} | ({"MaxItems": sample} if sample else {})
            for p in far_client.get_paginator("list_objects_v2").paginate(Bucket="legacy",
                                                                           PaginationConfig=config):
                pages += 1
                listed += len(p.get("Contents", []))
            assert listed == (sample or len(keys))
            pager_cpu.append((time.process_time() - c0) / pages)
            return (time.perf_counter() - t0) / pages, pages

        per_page_before, _ = pager_run()
        t0 = time.perf_counter()  # the parallel listing alone, no catalog insert: what the remote allows
        lister = S3Lister(S3Source(far_url, access_key_id=cloud_key, secret_access_key=cloud_secret))
        n_listed = sum(len(page) for page in list_parallel(lister, "legacy", workers=args.adopt_workers))
        parallel = time.perf_counter() - t0
        assert n_listed == len(keys)
        ours0, cloud0, t0 = time.process_time(), cpu_seconds(cloud_pids), time.perf_counter()
        done = adopt("cloud", "legacy", owner_id=owner_id, workers=args.adopt_workers)
        adopted = time.perf_counter() - t0
        ours, cloud_cpu = time.process_time() - ours0, cpu_seconds(cloud_pids) - cloud0
        assert done.added == len(keys)
        per_page_after, pages = pager_run()
        per_page = (per_page_before + per_page_after) / 2
        whole = math.ceil(len(keys) / 1000)
        pager = per_page * whole
        how = (f"{pages} of {whole} pages, extrapolated per page" if sample else "the whole bucket")
        log(f"adoption {adopted:.1f} s (listing alone {parallel:.1f} s) vs pager {pager:.1f} s "
            f"({per_page_before * 1000:.0f} / {per_page_after * 1000:.0f} ms per page before / after; {how})")
        log(f"CPU during the adoption: ours {ours:.2f} s, the cloud's {cloud_cpu:.2f} s "
            f"({ours / whole * 1000:.1f} / {cloud_cpu / whole * 1000:.1f} ms per page)")
        rows.append((f"adoption of {len(keys)} objects ({args.prefixes} prefixes), up to {args.adopt_workers} "
                     "requests in flight", f"{adopted:.1f} s",
                     f"{pager / adopted:.1f}x faster than one ListObjectsV2 pager ({pager:.1f} s: "
                     f"{per_page * 1000:.0f} ms per page, mean of one run before and one after, {how}); "
                     f"{done.requests} list requests; the parallel listing alone (no inserts) {parallel:.1f} s, "
                     f"{pager / parallel:.1f}x; CPU per 1,000-key page during the adoption: ours "
                     f"{ours / whole * 1000:.1f} ms, the cloud's {cloud_cpu / whole * 1000:.1f} ms; the pager's "
                     f"own {statistics.mean(pager_cpu) * 1000:.1f} ms"))
        recorded.append(run.row("far.adoption", f"adoption of {len(keys):,} objects from an s3 tier; ratio: the "
                                "speed-up over one ListObjectsV2 pager (target ≥ 8×)", adopted, "s",
                                "boto3's paginator", pager, pager / adopted))

        if args.only != "adoption":
            # mount -----------------------------------------------------------------------------------------
            small = work / "small"
            small.mkdir()
            texts = {f"small/t{i:04d}.txt": (f"line {i}\n" * 50 + ("needle\n" if i % 97 == 0 else "")).encode()
                     for i in range(1000)}
            with ThreadPoolExecutor(16) as pool:
                list(pool.map(lambda kv: c_ra.put_object(Bucket="far", Key=kv[0], Body=kv[1]), texts.items()))
            for k, v in texts.items():
                (work / k).write_bytes(v)
            mnt.mkdir()
            menv = dict(env, AWS_ACCESS_KEY_ID=ak, AWS_SECRET_ACCESS_KEY=sk)
            figures: dict[str, float] = {}
            for bucket in ("legacy", "far"):
                here = mnt
                mproc = subprocess.Popen([PY, "-m", "tierpilot.app.cli", "mount", bucket, str(here), "--endpoint", gw,
                                          "--cache-mb", "256"], env=menv, cwd=ROOT, stderr=subprocess.DEVNULL)
                try:
                    deadline = time.monotonic() + 120
                    while not os.path.ismount(here):
                        assert mproc.poll() is None and time.monotonic() < deadline, "mount failed"
                        time.sleep(0.1)
                    if bucket == "legacy":
                        subprocess.run(["find", str(here)], capture_output=True, check=True)
                        runs = []
                        for _ in range(3):
                            t0 = time.perf_counter()
                            out = subprocess.run(["find", str(here)], capture_output=True, check=True).stdout
                            runs.append(time.perf_counter() - t0)
                        figures["find"] = statistics.median(runs)
                        figures["entries"] = out.count(b"\n")
                    else:
                        for target, name in ((here / "small", "grep_mount"), (small, "grep_local")):
                            subprocess.run(["grep", "-r", "-c", "needle", str(target)], capture_output=True)
                            runs = []
                            for _ in range(7):  # ~10 ms each: more runs than find, as a loaded machine's noise is ms
                                t0 = time.perf_counter()
                                subprocess.run(["grep", "-r", "-l", "needle", str(target)], capture_output=True)
                                runs.append(time.perf_counter() - t0)
                            figures[name] = statistics.median(runs)
                        # the direct GET just before and after the read through the mount: the same moment's load
                        n, before_s = get_all(c_ra, "far", "big.bin")
                        t0 = time.perf_counter()
                        with open(here / "big.bin", "rb") as f:
                            n = 0
                            while chunk := f.read(8 * MiB):
                                n += len(chunk)
                        assert n == size
                        figures["mount_seq"] = n / (time.perf_counter() - t0) / 1e6
                        n, after_s = get_all(c_ra, "far", "big.bin")
                        figures["direct_seq"] = 2 * n / (before_s + after_s) / 1e6
                finally:
                    mproc.send_signal(signal.SIGINT)
                    mproc.wait(30)
            rows.append((f"mount: find over {int(figures['entries'])} entries, warm",
                         f"{figures['find'] * 1000:.0f} ms", "median of 3"))
            rows.append(("mount: grep -r over 1,000 small files, warm (median of 7)",
                         f"{figures['grep_mount'] * 1000:.0f} ms",
                         f"{figures['grep_mount'] / figures['grep_local']:.1f}x the local directory "
                         f"({figures['grep_local'] * 1000:.0f} ms)"))
            rows.append((f"mount: sequential read of {args.size_mb} MiB", f"{figures['mount_seq']:.1f} MB/s",
                         f"{figures['mount_seq'] / figures['direct_seq']:.2f} of a direct GET through the same gateway "
                         f"just before and after ({figures['direct_seq']:.1f} MB/s)"))
            recorded.append(run.row("far.mount_sequential", f"mount: sequential read of {args.size_mb} MiB (target "
                                    "≥ 0.85 of a direct GET)", figures["mount_seq"], "MB/s",
                                    "direct GET through the same gateway", figures["direct_seq"]))
    finally:
        if os.path.ismount(mnt):
            subprocess.run(["fusermount3", "-u", "-z", str(mnt)], check=False)
        for p in reversed(procs):
            stop(p)
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    command = " ".join(["bench/far_tiers.py", *sys.argv[1:]])  # every option given, as run
    print(f"\n## Far tiers (issue 15)\n\n`.venv/bin/python {command}`; 25 ms RTT, 1 Gbit/s proxy in front of a "
          f"second gateway ({args.cloud_workers} processes); load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after (2 cores, shared).\n")
    print("| figure | value | ratio / note |\n|---|---|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")
    record(recorded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
