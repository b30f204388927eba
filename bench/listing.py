"""Gateway CPU per ListObjectsV2 page of 1,000 keys, through real gateway processes.

A SQLite catalog gets ``--objects`` keys (rows written in bulk, as ``tiers adopt`` does; 10 prefixes) and a
``tierpilot gateway`` (one process) serves it. boto3 pages through the whole bucket ``--rounds`` times;
the figure is the gateway process's CPU time (utime + stime from /proc) per page, median over rounds, with
the client's wall time per page beside it. With ``--baseline REV`` a second gateway runs the backend of
that git revision (exported with ``git archive``, put first on PYTHONPATH) against the same database,
rounds alternate between the two, every page body is compared byte for byte (the change must not alter
any answer) and the ratio is printed.

With ``--postgres URL`` (a server's admin URL, e.g. postgresql+psycopg://postgres@127.0.0.1:5432/postgres) the
catalog is a scratch database made on that server (dropped at the end) instead of SQLite.

Run: .venv/bin/python bench/listing.py [--objects 100000] [--rounds 5] [--baseline HEAD] [--postgres URL]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

from bench.figures import Run, record  # noqa: E402
from tests.servers import create_database, free_port, wait_port  # noqa: E402

PY = sys.executable
TICK = os.sysconf("SC_CLK_TCK")


def setup(url: str, objects: int) -> tuple[str, str]:
    """Tier, user and bucket "listing" holding ``objects`` rows; returns the user's (key id, secret)."""
    from tierpilot.kit.migrate import upgrade

    upgrade(url)
    from tierpilot.app import wiring

    wiring.install()
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name="disk", driver="posix", config={"path": "disk"}, storage_classes=["STANDARD"]))
        user, key = auth.create_user(s, "lister", "lister-password-1", is_admin=True)
        bucket = catalog.create_bucket(s, owner_id=user.id, name="listing", tier_name="disk")
        bucket_id, tier_id, creds = bucket.id, bucket.tier_id, (key.access_key_id, key.secret_access_key)
    now = datetime.now(UTC)
    for lo in range(0, objects, 20_000):
        # distinct times and a metadata dict per row, as real uploads leave them
        rows = [{"key": f"d{i % 10:02d}/f{i:07d}.dat", "size": 100 + i, "etag": f"{i:032x}", "tier_id": tier_id,
                 "storage_class": "STANDARD", "locator": f"listing/f{i:07d}", "created_at": now,
                 "last_modified": now.replace(microsecond=i % 1_000_000), "user_metadata": {"source": "bench"},
                 "headers": {}, "tags": {}} for i in range(lo, min(objects, lo + 20_000))]
        with transaction(write=True) as s:
            repository.adopt_objects(s, bucket_id, rows)
    return creds


def export_backend(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev, "backend"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "backend"


def start_gateway(env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "tierpilot.app.cli", "gateway", "--port", str(port), "--log-level", "warning"],
                            env=env, cwd=ROOT, stdout=open(log, "ab"), stderr=subprocess.STDOUT)  # noqa: SIM115
    wait_port(port, 60)
    return proc, f"http://127.0.0.1:{port}"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14 and 15 of stat(5))


def client(url: str, creds: tuple[str, str]) -> Any:
    c = boto3.client("s3", endpoint_url=url, aws_access_key_id=creds[0], aws_secret_access_key=creds[1],
                     region_name="us-east-1", config=Config(s3={"addressing_style": "path"}))
    bodies: list[bytes] = []
    c.meta.events.register("after-call.s3.ListObjectsV2",
                           lambda http_response, **_: bodies.append(http_response.content))
    c.bodies = bodies
    return c


def one_round(c: Any, pid: int) -> tuple[float, float, int]:
    """(gateway CPU ms per page, client wall ms per page, pages) for one pass over the bucket."""
    c.bodies.clear()
    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    pages = 0
    for page in c.get_paginator("list_objects_v2").paginate(Bucket="listing", PaginationConfig={"PageSize": 1000}):
        assert page["KeyCount"] <= 1000
        pages += 1
    wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
    return cpu * 1000 / pages, wall * 1000 / pages, pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", metavar="REV", help="also run the backend of this git revision (e.g. HEAD)")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server to hold the catalog instead of SQLite")
    args = parser.parse_args()
    run = Run()

    work = Path(tempfile.mkdtemp(prefix="tierpilot-bench-listing-"))
    url, drop = f"sqlite:///{work / 'tierpilot.db'}", None
    if args.postgres:
        url, drop = create_database(args.postgres, "tierpilot_bench_listing")
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(work), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
               TIERPILOT_SECRET_KEY="bench-listing-key", TIERPILOT_DEFAULT_TIER="disk")
    env.pop("TIERPILOT_REDIS_URL", None)
    os.environ.update({k: env[k] for k in ("TIERPILOT_DATA_DIR", "TIERPILOT_DATABASE_URL", "TIERPILOT_SEED_DEMO",
                                           "TIERPILOT_SECRET_KEY")})
    os.environ.pop("TIERPILOT_REDIS_URL", None)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        creds = setup(url, args.objects)
        gateways: dict[str, tuple[subprocess.Popen[bytes], Any]] = {}
        if args.baseline:
            old = export_backend(args.baseline, work / "baseline")
            old_env = dict(env, PYTHONPATH=os.pathsep.join([str(old), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
            proc, gw = start_gateway(old_env, work / "baseline.log")
            procs.append(proc)
            gateways[f"baseline ({args.baseline})"] = (proc, client(gw, creds))
        proc, gw = start_gateway(env, work / "current.log")
        procs.append(proc)
        gateways["working tree"] = (proc, client(gw, creds))
        for proc, c in gateways.values():  # warm: imports, caches, the first pages
            one_round(c, proc.pid)
        cpu: dict[str, list[float]] = {name: [] for name in gateways}
        wall: dict[str, list[float]] = {name: [] for name in gateways}
        pages = 0
        for _ in range(args.rounds):
            for name, (proc, c) in gateways.items():
                per_cpu, per_wall, pages = one_round(c, proc.pid)
                cpu[name].append(per_cpu)
                wall[name].append(per_wall)
            answers = {tuple(c.bodies) for _, c in gateways.values()}
            assert len(answers) == 1, "the gateways answered differently"
        print(f"{args.objects:,} objects, {pages} ListObjectsV2 pages of 1,000 per round, {args.rounds} rounds, "
              f"{'PostgreSQL' if args.postgres else 'SQLite (WAL)'}, one gateway process each")
        print("| gateway | CPU ms per page (median) | client ms per page (median) |")
        print("|---|---|---|")
        for name in gateways:
            print(f"| {name} | {statistics.median(cpu[name]):.1f} | {statistics.median(wall[name]):.1f} |")
        base = statistics.median(cpu[f"baseline ({args.baseline})"]) if args.baseline else None
        new = statistics.median(cpu["working tree"])
        if base is not None:
            print(f"CPU ratio baseline/working tree: {base / new:.2f}; answers byte-identical")
        figure = run.row(f"listing.cpu.{'postgresql' if args.postgres else 'sqlite'}", "ListObjectsV2 page of 1,000 "
                         f"keys among {args.objects:,}, gateway CPU with boto3 paging, "
                         f"{'PostgreSQL' if args.postgres else 'SQLite'}", new, "ms",
                         f"revision {args.baseline}" if args.baseline else "", base)
        print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(20)
        if drop is not None:
            drop()
        shutil.rmtree(work, ignore_errors=True)
    record([figure])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
