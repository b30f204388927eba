"""Lifecycle at scale: a sweep over a catalog of 1,000,000 objects, and moves between two posix tiers.

Part A (the due-date index): a bucket of ``--rows`` synthetic catalog rows (default 1,000,000) of which
``--due`` (default 10,000) are older than the rule's 30 days; those have real 1 KiB blobs on the hot
tier. Timed: the sweep that finds and queues the due objects (goal: under 2 s, i.e. independent of the
total), the same sweep over a catalog of a tenth the size (the ratio shows the independence), and a
sweep right after, with nothing new due.

Part B (moves between two posix tiers on the same disk, 8 at a time): the 10,000 queued 1 KiB moves,
then ``--large`` 64 MiB objects, each through the real executor (copy, verify, switch, delete), in two
copy modes: streamed through the move rate limiter (bytes read and written by Python, MD5 and checksum
verified; the mode used whenever a move rate is configured) and unbounded (the driver's fastest copy:
a hard link on one file system). The baseline copies the same files with the same parallelism by
read/write plus fsync of each new file.

Everything runs in a scratch directory with SQLite, or PostgreSQL with --postgres.

Run: .venv/bin/python bench/lifecycle.py [--rows 1000000] [--due 10000] [--large 16] [--postgres] [--markdown]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import Run, record  # noqa: E402 - after the repository is on the path

KIB = 1024
MIB = 1024 * 1024
WORKERS = int(os.environ.get("BENCH_WORKERS", "8"))


@dataclass
class World:
    owner_id: int
    hot: Any
    cold: Any
    bucket_id: int
    bucket: str


@dataclass
class Moves:
    label: str
    objects: int
    size: int
    seconds: float
    baseline_s: float

    @property
    def per_s(self) -> float:
        return self.objects / self.seconds

    @property
    def baseline_per_s(self) -> float:
        return self.objects / self.baseline_s


@dataclass
class Results:
    database: str
    rows: int
    due: int
    build_s: float = 0.0
    sweep_s: float = 0.0
    sweep_queued: int = 0
    sweep_scanned: int = 0
    small_rows: int = 0
    small_sweep_s: float = 0.0
    idle_sweep_s: float = 0.0
    moves: list[Moves] = field(default_factory=list)


def setup_world(tag: str) -> World:
    from tierpilot.app import wiring
    from tierpilot.auth import service as auth
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    wiring.install()  # the tier directory reads tiers through the tiers domain
    with transaction(write=True) as s:
        owner, _ = auth.create_user(s, f"bench-{tag}", "bench-password-1", is_admin=True)
        hot = tiers.create(s, TierCreate(name=f"hot-{tag}", driver="posix", config={"path": f"{tag}/hot"},
                                         storage_classes=["STANDARD"]))
        cold = tiers.create(s, TierCreate(name=f"cold-{tag}", driver="posix", config={"path": f"{tag}/cold"},
                                          storage_classes=["STANDARD_IA"]))
        bucket = catalog.create_bucket(s, owner_id=owner.id, name=f"bench-{tag}", tier_name=hot.name)
        s.flush()
        s.expunge_all()
    return World(owner.id, hot, cold, bucket.id, bucket.name)


def set_rule(world: World, extra_filter: dict[str, Any] | None = None) -> None:
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle import service
    from tierpilot.lifecycle.rules import LifecycleConfig

    # a size filter lets 1 KiB objects transition (it takes precedence over S3's 128 KB default)
    rule = {"id": "to-cold", "filter": {"object_size_greater_than": 0, **(extra_filter or {})},
            "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}
    with transaction(write=True) as s:
        bucket = catalog.get_bucket(s, world.bucket)
        service.put_config(s, bucket, LifecycleConfig.model_validate({"rules": [rule]}), "bench")


def insert_rows(world: World, rows: int, due: int, blob_size: int, progress: bool) -> list[tuple[str, str]]:
    """Synthetic catalog rows straight into the table; the due ones get real blobs. Returns (key, locator)."""
    from sqlalchemy import insert, update

    from tierpilot.catalog.models import Bucket, Object
    from tierpilot.drivers.registry import driver_for
    from tierpilot.kit.db import transaction, utcnow

    now = utcnow()
    old, recent = now - timedelta(days=45), now - timedelta(days=5)
    step = max(1, rows // max(1, due))
    due_rows: list[tuple[str, str]] = []
    chunk = 20_000
    for start in range(0, rows, chunk):
        batch = []
        for i in range(start, min(rows, start + chunk)):
            is_due = i % step == 0 and len(due_rows) < due
            key = f"run{i // 100_000:02d}/evt/{i:07d}.root"
            locator = f"{world.bucket}/{key}~{uuid.uuid4().hex}"
            created = (old if is_due else recent) + timedelta(seconds=i % 86400)
            if is_due:
                due_rows.append((key, locator))
            batch.append(dict(bucket_id=world.bucket_id, key=key, size=blob_size, etag="0" * 32,
                              tier_id=world.hot.id, storage_class="STANDARD", locator=locator, created_at=created,
                              last_modified=created, content_type="application/octet-stream", user_metadata={},
                              headers={}, tags={}))
        with transaction(write=True) as s:
            s.execute(insert(Object), batch)
        if progress:
            print(f"  rows {min(rows, start + chunk):,}/{rows:,}", end="\r", file=sys.stderr)
    with transaction(write=True) as s:
        s.execute(update(Bucket).where(Bucket.id == world.bucket_id)
                  .values(object_count=rows, used_bytes=rows * blob_size))
    # real blobs for the due objects (setup, not measured: written without the driver's fsyncs)
    hot = driver_for(world.hot)
    body = os.urandom(blob_size)
    for _key, locator in due_rows:
        path = hot.blob_path(locator)  # type: ignore[attr-defined]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    etag = hashlib.md5(body).hexdigest()
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == world.bucket_id).values(etag=etag))
    return due_rows


def timed_sweep(world: World) -> tuple[float, int, int, list[int]]:
    from tierpilot.lifecycle import due as planner

    started = time.perf_counter()
    result = planner.sweep(bucket_id=world.bucket_id)
    return time.perf_counter() - started, len(result.new_move_ids), result.scanned, result.new_move_ids


def baseline_copy(sources: list[Path], target_dir: Path) -> float:
    """Copy files by read/write and fsync each copy, ``WORKERS`` at a time; seconds taken."""
    target_dir.mkdir(parents=True, exist_ok=True)

    def copy(i_src: tuple[int, Path]) -> None:
        i, src = i_src
        dst = target_dir / f"{i:07d}"
        with open(src, "rb") as fin, open(dst, "wb") as fout:
            shutil.copyfileobj(fin, fout, MIB)
            fout.flush()
            os.fsync(fout.fileno())

    started = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(copy, enumerate(sources)))
    seconds = time.perf_counter() - started
    shutil.rmtree(target_dir, ignore_errors=True)
    return seconds


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_moves(move_ids: list[int], limiter: Any) -> float:
    from tierpilot.lifecycle.runner import execute

    started = time.perf_counter()
    outcomes = execute(move_ids, workers=WORKERS, limiter=limiter)
    seconds = time.perf_counter() - started
    bad = [o for o in outcomes if o.state != "done"]
    if bad:
        raise SystemExit(f"{len(bad)} moves did not finish: {bad[:3]}")
    return seconds


def reset_moves(world: World) -> None:
    """Put every object back on the hot tier's original blob and forget the moves (between modes)."""
    from sqlalchemy import delete

    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle.models import LifecycleMove

    with transaction(write=True) as s:
        s.execute(delete(LifecycleMove))


def part_a(res: Results, progress: bool) -> tuple[World, list[int], list[tuple[str, str]]]:
    small = setup_world("small")
    res.small_rows = max(res.due * 2, res.rows // 10)
    insert_rows(small, res.small_rows, res.due, KIB, progress)
    set_rule(small)
    res.small_sweep_s, _, _, _ = timed_sweep(small)

    world = setup_world("big")
    started = time.perf_counter()
    due_rows = insert_rows(world, res.rows, res.due, KIB, progress)
    res.build_s = time.perf_counter() - started
    set_rule(world)
    log(f"catalog of {res.rows:,} rows built in {res.build_s:.0f} s")
    res.sweep_s, res.sweep_queued, res.sweep_scanned, ids = timed_sweep(world)
    res.idle_sweep_s, _, _, _ = timed_sweep(world)
    log(f"sweep: {res.sweep_queued:,} queued in {res.sweep_s:.2f} s (idle sweep {res.idle_sweep_s:.3f} s)")
    return world, ids, due_rows


def part_b(res: Results, world: World, ids: list[int], due_rows: list[tuple[str, str]], large: int) -> None:
    from sqlalchemy import select, update

    from tierpilot.catalog import service as catalog_service
    from tierpilot.catalog import store
    from tierpilot.catalog.models import Object
    from tierpilot.drivers.registry import driver_for
    from tierpilot.kit.db import transaction, utcnow
    from tierpilot.kit.limiter import Throttle

    hot = driver_for(world.hot)
    streamed = Throttle(1e12)  # a move rate so high it never waits: the streamed, verified copy path
    unbounded = Throttle(0)
    scratch = Path(os.environ["TIERPILOT_DATA_DIR"]) / "baseline"

    sources = [hot.blob_path(loc) for _k, loc in due_rows]  # type: ignore[attr-defined]
    base_small = baseline_copy(sources, scratch)
    log(f"baseline 1 KiB: {len(sources) / base_small:,.0f}/s")
    seconds = run_moves(ids, streamed)
    res.moves.append(Moves("1 KiB, streamed + verified", len(ids), KIB, seconds, base_small))
    log(f"moves 1 KiB streamed: {len(ids) / seconds:,.0f}/s")
    # put the objects back on the hot tier and move them again the unbounded way
    with transaction(write=True) as s:
        for key, locator in due_rows:
            s.execute(update(Object).where(Object.bucket_id == world.bucket_id, Object.key == key)
                      .values(tier_id=world.hot.id, storage_class="STANDARD", locator=locator))
    for _key, locator in due_rows:
        hot.put(locator, iter([b"\0" * KIB]))  # fresh bytes (the move deleted them); ETag fixed below
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == world.bucket_id, Object.tier_id == world.hot.id,
                                       Object.key.in_([k for k, _ in due_rows]))
                  .values(etag=hashlib.md5(b"\0" * KIB).hexdigest()))
    reset_moves(world)
    _, _, _, ids2 = timed_sweep(world)
    seconds = run_moves(ids2, unbounded)
    res.moves.append(Moves("1 KiB, unbounded (hard link)", len(ids2), KIB, seconds, base_small))
    log(f"moves 1 KiB linked: {len(ids2) / seconds:,.0f}/s")

    # 64 MiB objects, written through the catalog store (real blobs, real checksums)
    if large:
        big = setup_world("large")
        set_rule(big)
        with transaction() as s:
            bucket = catalog_service.get_bucket(s, big.bucket)
            s.expunge(bucket)
        body = os.urandom(64 * MIB)
        for i in range(large):
            store.put_object(bucket, f"big/{i:03d}", iter([body]),
                             store.NewObject(tier=big.hot, storage_class="STANDARD", checksum_algorithm="CRC32C"))
        with transaction(write=True) as s:
            s.execute(update(Object).where(Object.bucket_id == big.bucket_id)
                      .values(created_at=utcnow() - timedelta(days=45)))
        with transaction() as s:
            locators = list(s.scalars(select(Object.locator).where(Object.bucket_id == big.bucket_id)))
        big_hot = driver_for(big.hot)
        base_big = baseline_copy([big_hot.blob_path(loc) for loc in locators], scratch)  # type: ignore[attr-defined]
        _, _, _, big_ids = timed_sweep(big)
        seconds = run_moves(big_ids, streamed)
        res.moves.append(Moves("64 MiB, streamed + verified", len(big_ids), 64 * MIB, seconds, base_big))


def markdown(res: Results) -> str:
    out = [f"Database: {res.database}; {os.cpu_count()} CPUs; tiers are two directories on one disk; "
           f"moves and baseline {WORKERS} at a time.", ""]
    out += ["| sweep | catalog rows | due objects found and queued | rows read | time |",
            "|---|---:|---:|---:|---:|",
            f"| first sweep | {res.small_rows:,} | {res.due:,} | — | {res.small_sweep_s:.2f} s |",
            f"| first sweep | {res.rows:,} | {res.sweep_queued:,} | {res.sweep_scanned:,} | {res.sweep_s:.2f} s |",
            f"| next sweep (nothing new due) | {res.rows:,} | 0 | — | {res.idle_sweep_s:.3f} s |", ""]
    goal = "met" if res.sweep_s < 2 else "missed"
    out += [f"Goal (10,000 due among 1,000,000 in under 2 s): **{goal}** ({res.sweep_s:.2f} s; "
            f"{res.small_rows:,} rows: {res.small_sweep_s:.2f} s). Building the catalog took {res.build_s:.0f} s.", ""]
    out += ["| moves | objects | moved/s | MB/s | baseline copy+fsync /s | baseline MB/s | ratio |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for m in res.moves:
        out.append(f"| {m.label} | {m.objects:,} | {m.per_s:,.1f} | {m.per_s * m.size / 1e6:,.1f} | "
                   f"{m.baseline_per_s:,.1f} | {m.baseline_per_s * m.size / 1e6:,.1f} | "
                   f"{m.per_s / m.baseline_per_s:.2f} |")
    return "\n".join(out)


def figures(run: Run, res: Results, postgres: bool) -> list[dict[str, Any]]:
    """The rows of the current figures: the first sweep against its goal, the streamed and verified moves against a
    plain copy + fsync of the same files."""
    name = "PostgreSQL" if postgres else "SQLite"
    rows = [run.row(f"lifecycle.sweep.{'postgresql' if postgres else 'sqlite'}", f"lifecycle sweep: {res.due:,} due "
                    f"among {res.rows:,} objects, {name}", res.sweep_s, "s", "goal", 2.0)]
    for m in res.moves:
        if m.label == "1 KiB, streamed + verified":
            rows.append(run.row("lifecycle.move_1kib", f"lifecycle moves of 1 KiB objects, copied and verified, {name}",
                                m.per_s, "moves/s", "plain copy + fsync of the same files", m.baseline_per_s))
        elif m.label == "64 MiB, streamed + verified":
            rows.append(run.row("lifecycle.move_64mib", f"lifecycle moves of 64 MiB objects, streamed and verified, "
                                f"{name}", m.per_s * m.size / 1e6, "MB/s", "buffered copy + fsync",
                                m.baseline_per_s * m.size / 1e6))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--due", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=16, help="64 MiB objects to move (0: skip)")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--markdown", action="store_true", help="print only the Markdown section")
    args = parser.parse_args()
    run = Run()

    workdir = Path(tempfile.mkdtemp(prefix="tierpilot-bench-lifecycle-"))
    server = None
    drop_database = None
    if args.postgres:
        from tests.servers import create_database, start_postgres

        server = start_postgres()
        url, drop_database = create_database(server.url, "bench_lifecycle")
    else:
        url = f"sqlite:///{workdir / 'tierpilot.db'}"
    os.environ.update(TIERPILOT_DATA_DIR=str(workdir), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
                      TIERPILOT_SECRET_KEY="bench-secret-key", TIERPILOT_LIFECYCLE_DELETE_GRACE_S="0",
                      TIERPILOT_LIFECYCLE_BATCH=str(args.due))
    os.environ.pop("TIERPILOT_REDIS_URL", None)
    try:
        from tierpilot.kit.migrate import upgrade

        upgrade(url)
        # a worker process has these loaded already: keep import time out of the timings
        import tierpilot.lifecycle.runner  # noqa: F401

        res = Results("PostgreSQL" if args.postgres else "SQLite (WAL)", args.rows, args.due)
        world, ids, due_rows = part_a(res, not args.markdown)
        if not args.markdown:
            print(f"\nsweep: {res.sweep_queued} queued of {res.rows} rows in {res.sweep_s:.2f} s", file=sys.stderr)
        part_b(res, world, ids, due_rows, args.large)
        print(markdown(res))
    finally:
        if drop_database is not None:
            drop_database()
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    # with --markdown, stdout carries the Markdown section alone
    with contextlib.redirect_stdout(sys.stderr if args.markdown else sys.stdout):
        record(figures(run, res, args.postgres))
    return 0


if __name__ == "__main__":
    sys.exit(main())
