"""A PostgreSQL catalog of ``--objects`` objects in ``--buckets`` buckets, and how fast its hot statements answer.

The rows are generated in the database (``INSERT … SELECT generate_series``, triggers and foreign-key checks off
for the fill: the rows are consistent by construction), not written through the gateway. Layout:

- bucket 0 (``scale-spend``, owned by a user of its own): ``--big`` objects (1,000,000; half the catalog when it
  holds fewer than twice that), every 10th created 400 days ago (due for its lifecycle rule: 30 days to
  STANDARD_IA), the others spread over the last 25 days at distinct seconds (what a month of uploads looks like
  to spend);
- bucket 1 (``scale-versioned``): versioning on, ``--versioned`` objects with one noncurrent version each and a
  delete marker on every 50th key;
- the other buckets share the rest evenly. Keys are ``dNNNNN/oNNNNNNNNN`` (1,000 keys per folder).

Measured with the service functions the API and the gateway call (same statements, no HTTP), wall time (and this
process's CPU time in the log: on a loaded machine the two differ by the wait for a core):

- a ListObjectsV2 page of 1,000 keys at random markers in bucket 0 (``catalog.service.list_objects_s3``) and in
  the versioned bucket, a ListObjectVersions page there (``catalog.versions.list_versions_s3``), and a page with
  ``delimiter=/`` from a random folder of bucket 0 (1,000 common prefixes): p50/p99;
- a HEAD's catalog read of a random key of a random bucket (``catalog.hotread.current``, the statement of the
  gateway's reader): p50/p99;
- the lifecycle sweep's scan of bucket 0 (``lifecycle.due.plan_bucket``: 100,000 due objects at 10 M), median of
  ``--repeat``; then one real ``lifecycle.due.sweep`` that queues them (logged);
- this month's spend for bucket 0 (``spend.service.spend`` as its owner) after beat's roll-up closed this month's
  finished days (as if it had closed the days before; its time is logged; ``--live-spend`` first prices this month
  and the one before from the catalog's rows, no roll-up);
- the Overview as an admin (``overview.service.overview``).

Recorded: the slowest of the three plain listing shapes' p99, the delimiter page's p99, HEAD p99, the due scan,
the month of spend and the Overview, each naming the catalog's size and the database's. ``--keep NAME`` fills (once)
and keeps a database NAME for the next run (``--fill-only`` stops there); without it a scratch database is made and
dropped at the end. Migrations run on the filled catalog at every start (their time is printed), so an index a new
revision adds is built on the data.

Run: .venv/bin/python bench/catalog_scale.py [--objects 10000000] [--buckets 1000] [--keep NAME] [--drop]
     [--fill-only] [--server postgresql+psycopg://postgres@127.0.0.1:5432/postgres] [--pages 300] [--heads 3000]
     [--repeat 3] [--live-spend]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "backend"))

from bench.figures import Run, record  # noqa: E402

PER_FOLDER = 1000
SERIES = "generate_series(CAST(:lo AS bigint), CAST(:hi AS bigint))"
SPEND_USER = "scale-spender"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {message}", file=sys.stderr, flush=True)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def key_sql(i: str) -> str:
    return f"'d' || lpad(({i} / {PER_FOLDER})::text, 5, '0') || '/o' || lpad(({i})::text, 9, '0')"


def key_of(i: int) -> str:
    return f"d{i // PER_FOLDER:05d}/o{i:09d}"


class Layout:
    def __init__(self, objects: int, buckets: int, big: int, versioned: int) -> None:
        self.big = min(big, objects // 2)
        self.versioned = min(versioned, (objects - self.big) // 2)
        self.buckets = buckets
        self.each = (objects - self.big - self.versioned) // max(1, buckets - 2)

    def count(self, index: int) -> int:
        return self.big if index == 0 else self.versioned if index == 1 else self.each


def ensure_database(server: str, name: str) -> tuple[str, bool]:
    """The database's URL and whether it was made now."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        made = conn.scalar(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}) is None
        if made:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return make_url(server).set(database=name).render_as_string(hide_password=False), made


def drop_database(server: str, name: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def setup(layout: Layout) -> list[int]:
    """Users, two tiers and the buckets through the services; the lifecycle rule on bucket 0. Bucket ids in order."""
    from tierpilot.app import wiring
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle import service as lifecycle
    from tierpilot.lifecycle.rules import LifecycleConfig
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    wiring.install()
    with transaction(write=True) as s:
        admin, _ = auth.create_user(s, "scale-admin", "bench-password-1", is_admin=True)
        spender, _ = auth.create_user(s, SPEND_USER, "bench-password-1", is_admin=False)
        hot = tiers.create(s, TierCreate(name="hot", driver="posix", config={"path": "hot"},
                                         storage_classes=["STANDARD"]))
        tiers.create(s, TierCreate(name="cold", driver="posix", config={"path": "cold"},
                                   storage_classes=["STANDARD_IA"]))
        ids = []
        for n in range(layout.buckets):
            name = "scale-spend" if n == 0 else "scale-versioned" if n == 1 else f"scale-{n:04d}"
            b = catalog.create_bucket(s, owner_id=spender.id if n == 0 else admin.id, name=name, tier_name=hot.name)
            s.flush()
            ids.append(b.id)
        repository.set_bucket_settings(s, ids[1], versioning="Enabled")
        rule = {"id": "to-cold", "filter": {"object_size_greater_than": 0},
                "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}
        bucket = catalog.get_bucket(s, "scale-spend")
        lifecycle.put_config(s, bucket, LifecycleConfig.model_validate({"rules": [rule]}), "bench")
    return ids


def fill(url: str, layout: Layout, bucket_ids: list[int], now: datetime) -> None:
    """The objects (and bucket 1's versions) as generated rows, one statement per bucket or slice of one."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        tier = conn.scalar(text("SELECT id FROM tiers WHERE name = 'hot'"))
    cols = ("bucket_id, key, size, etag, content_type, user_metadata, headers, tags, tier_id, storage_class, "
            "locator, created_at, last_modified, version_id, legal_hold")
    # bucket 0: every 10th object due (400 days old), the rest at distinct seconds of the last 40 days
    created = {0: "CASE WHEN i % 10 = 0 THEN :now - interval '400 days' "
                  "ELSE :now - (i * 7919 % 2160000) * interval '1 second' END",
               1: ":now - (i % 365) * interval '1 day'"}
    slice_rows = 250_000
    done = 0
    started = time.perf_counter()
    for n, bucket_id in enumerate(bucket_ids):
        count = layout.count(n)
        for lo in range(0, count, slice_rows):
            hi = min(count, lo + slice_rows) - 1
            when = created.get(n, ":now - (i % 365) * interval '1 day'")
            sql = (f"INSERT INTO objects ({cols}) SELECT :b, {key_sql('i')}, 1024 + i % 4096, md5(i::text), "
                   f"'application/octet-stream', '{{}}', '{{}}', '{{}}', :tier, 'STANDARD', "
                   f"'b' || :b || '/' || i || '~' || md5(i::text), {when}, {when}, "
                   f"{'md5(:b || i::text)' if n == 1 else repr('null')}, false "
                   f"FROM {SERIES} AS i")
            with engine.begin() as conn:
                conn.execute(text("SET LOCAL session_replication_role = replica"))
                conn.execute(text(sql), {"b": bucket_id, "tier": tier, "now": now, "lo": lo, "hi": hi})
            done += hi - lo + 1
        if n < 2 or n % 100 == 0:
            rate = done / max(1e-9, time.perf_counter() - started)
            log(f"filled bucket {n}: {done:,} objects, {rate:,.0f}/s")
    vcols = ("bucket_id, key, delete_marker, size, etag, content_type, user_metadata, headers, tags, tier_id, "
             "storage_class, locator, created_at, last_modified, noncurrent_since, version_id, legal_hold")
    versioned = bucket_ids[1]
    for lo in range(0, layout.versioned, slice_rows):
        hi = min(layout.versioned, lo + slice_rows) - 1
        with engine.begin() as conn:
            conn.execute(text("SET LOCAL session_replication_role = replica"))
            conn.execute(text(
                f"INSERT INTO object_versions ({vcols}) SELECT :b, {key_sql('i')}, false, 1024, md5(i::text), "
                "'application/octet-stream', '{}', '{}', '{}', :tier, 'STANDARD', 'v' || i || '~' || md5(i::text), "
                f":old, :old, :now - interval '3 days', md5('v' || i::text), false FROM {SERIES} i"),
                {"b": versioned, "tier": tier, "now": now, "old": now - timedelta(days=400), "lo": lo, "hi": hi})
            conn.execute(text(
                f"INSERT INTO object_versions ({vcols}) SELECT :b, {key_sql('i')}, true, 0, '', "
                "'application/octet-stream', '{}', '{}', '{}', NULL, 'STANDARD', '', :old, :old, "
                f":now - interval '2 days', md5('m' || i::text), false FROM {SERIES} i "
                "WHERE i % 50 = 0"),
                {"b": versioned, "tier": tier, "now": now, "old": now - timedelta(days=2), "lo": lo, "hi": hi})
    with engine.begin() as conn:
        # the usage counters the gateway keeps per bucket
        conn.execute(text("UPDATE buckets b SET object_count = u.n, used_bytes = u.s FROM "
                          "(SELECT bucket_id, count(*) n, sum(size) s FROM objects GROUP BY bucket_id) u "
                          "WHERE u.bucket_id = b.id"))
        # the usage deltas the triggers would have appended (they were off for the fill)
        if conn.scalar(text("SELECT to_regclass('object_usage')")) is not None:
            conn.execute(text("INSERT INTO object_usage (bucket_id, tier_id, objects, bytes) "
                              "SELECT bucket_id, tier_id, count(*), sum(size) FROM objects GROUP BY 1, 2"))
    log(f"filled {done:,} objects in {time.perf_counter() - started:.0f} s")
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        t0 = time.perf_counter()
        conn.execute(text("VACUUM ANALYZE"))
        log(f"VACUUM ANALYZE {time.perf_counter() - t0:.0f} s")
    engine.dispose()


def timed(fn: Callable[[], Any], times: int) -> tuple[list[float], list[float]]:
    """Wall and this process's CPU milliseconds of each call (on a loaded machine the two differ by its wait)."""
    wall, cpu = [], []
    for _ in range(times):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return wall, cpu


def measure(args: argparse.Namespace, layout: Layout, run: Run) -> list[dict[str, Any]]:
    from sqlalchemy import text

    from tierpilot.auth import repository as auth_repository
    from tierpilot.catalog import hotread, versions
    from tierpilot.catalog import repository as catalog_repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.lifecycle import due
    from tierpilot.lifecycle import repository as lifecycle_repository
    from tierpilot.lifecycle import service as lifecycle
    from tierpilot.overview import service as overview
    from tierpilot.spend import rollup
    from tierpilot.spend import service as spend
    from tierpilot.tiers import repository as tiers_repository

    rng = random.Random(38)
    with transaction() as s:
        names = {b.name: b.id for b in catalog_repository.buckets_named(s, None, None)}
        admin = auth_repository.get_user_by_name(s, "scale-admin")
        spender = auth_repository.get_user_by_name(s, SPEND_USER)
        size = s.scalar(text("SELECT pg_database_size(current_database())"))
        s.expunge_all()
    big, ver = names["scale-spend"], names["scale-versioned"]
    others = [bid for name, bid in names.items() if name not in ("scale-spend", "scale-versioned")]
    total = layout.big + layout.versioned + layout.each * len(others)
    log(f"database size {size / 2**30:.2f} GiB")
    scale = f"{total / 1e6:.3g} M objects in {len(names):,} buckets, PostgreSQL ({size / 2**30:.1f} GiB)"
    figures: list[dict[str, Any]] = []

    def pages(bucket_id: int, count: int, delimiter: str = "", list_fn: Callable[..., Any] | None = None,
              ) -> list[float]:
        out = []
        for _ in range(args.pages):
            i = rng.randrange(max(1, count - 1000))
            marker = key_of(i) if not delimiter else f"d{i // PER_FOLDER:05d}/"
            with transaction() as s:
                t0 = time.perf_counter()
                (list_fn or catalog.list_objects_s3)(s, bucket_id, "", delimiter, marker, 1000)
                out.append((time.perf_counter() - t0) * 1000)
        return out

    shapes = {"ListObjectsV2 page of 1,000 keys": pages(big, layout.big),
              "ListObjectsV2 page of 1,000 keys, versioned bucket": pages(ver, layout.versioned),
              "ListObjectVersions page of 1,000 entries": pages(ver, layout.versioned,
                                                                list_fn=versions.list_versions_s3),
              "ListObjectsV2 page with delimiter=/ (1,000 common prefixes)": pages(big, layout.big, "/")}
    for what, ms in shapes.items():
        log(f"{what}: p50 {pct(ms, 50):.2f} ms, p99 {pct(ms, 99):.2f} ms ({len(ms)} pages)")
    worst = max(list(shapes)[:3], key=lambda w: pct(shapes[w], 99))
    figures.append(run.row("scale.list_p99.postgresql", f"listing page p99, the slowest of ListObjectsV2, versioned "
                           f"ListObjectsV2 and ListObjectVersions ({worst}), {scale} (target < 20 ms)",
                           pct(shapes[worst], 99), "ms", "target", 20))
    delimited = shapes[list(shapes)[3]]
    figures.append(run.row("scale.list_delimiter_p99.postgresql", f"ListObjectsV2 page of 1,000 common prefixes "
                           f"(delimiter=/) p99, {scale} (target < 20 ms)", pct(delimited, 99), "ms", "target", 20))

    heads = []
    for _ in range(args.heads):
        n = rng.randrange(len(names))
        bucket_id = big if n == 0 else ver if n == 1 else others[n - 2]
        k = key_of(rng.randrange(layout.count(min(n, 2))))
        t0 = time.perf_counter()
        row = hotread.current(bucket_id, k)
        heads.append((time.perf_counter() - t0) * 1000)
        assert row is not None, (bucket_id, k)
    log(f"HEAD catalog read: p50 {pct(heads, 50):.2f} ms, p99 {pct(heads, 99):.2f} ms")
    figures.append(run.row("scale.head_p99.postgresql", f"HEAD's catalog read of a random key p99, {scale} "
                           "(target < 10 ms)", pct(heads, 99), "ms", "target", 10))

    now = datetime.now(UTC)
    with transaction(write=True) as s:
        # a kept catalog measured again: the last run's sweep queued these objects already
        s.execute(text("DELETE FROM lifecycle_moves WHERE bucket_id = :b"), {"b": big})
    with transaction() as s:
        tiers = tiers_repository.list_tiers(s)
        bucket = catalog_repository.get_bucket(s, big)
        config = lifecycle.load(lifecycle_repository.get_configuration(s, big))
        s.expunge_all()
    due_n = min(100_000, layout.big // 10)

    def plan() -> None:
        with transaction() as s:
            got = due.plan_bucket(s, bucket, config, tiers, now, 100_000)
        assert len(got.rows) == due_n, len(got.rows)

    scans, scan_cpu = timed(plan, args.repeat)
    t0, c0 = time.perf_counter(), time.process_time()
    swept = due.sweep(now, bucket_id=big, limit=100_000)
    sweep_s, sweep_cpu = time.perf_counter() - t0, time.process_time() - c0
    log(f"due scan of {due_n:,}: median {statistics.median(scans):.0f} ms (CPU {statistics.median(scan_cpu):.0f} ms); "
        f"sweep that queued {len(swept.new_move_ids):,}: {sweep_s:.2f} s (CPU {sweep_cpu:.2f} s)")
    figures.append(run.row("scale.due_scan.postgresql", f"lifecycle sweep's due scan of {due_n:,} due objects, "
                           f"{scale} (target < 5 s)", statistics.median(scans) / 1000, "s", "target", 5))

    months = [now.date().replace(day=1), (now.date().replace(day=1) - timedelta(days=1)).replace(day=1)]

    def month_of_spend(month: str, rolled: bool) -> Callable[[], None]:
        def go() -> None:
            with transaction() as s:
                spend.spend(s, spender, month, "tier", now=now, rolled_up=rolled)
        return go

    if args.live_spend:
        live = [timed(month_of_spend(m.isoformat()[:7], False), 1) for m in months]
        log("month of spend from the catalog rows (no roll-up): "
            + ", ".join(f"{w[0]:.0f} ms (CPU {c[0]:.0f} ms)" for w, c in live))
    with transaction(write=True) as s:
        # as if beat had closed every day before this month: a first roll-up of the whole catalog prices each
        # small object's every month in Python (over ten minutes at 10 M), once in an installation's life
        s.execute(text("UPDATE spend_rollup SET until = :d WHERE until IS NULL OR until < :d"),
                  {"d": months[0].isoformat()})
    t0 = time.perf_counter()
    rollup.roll_up(lambda: now)
    log(f"roll-up of the days since {months[0]}: {time.perf_counter() - t0:.1f} s")
    rolled, rolled_cpu = timed(month_of_spend(months[0].isoformat()[:7], True), args.repeat)
    worst_rolled = statistics.median(rolled)
    log(f"this month's spend after the roll-up: {worst_rolled:.0f} ms (CPU {statistics.median(rolled_cpu):.0f} ms)")
    figures.append(run.row("scale.spend_month.postgresql", f"this month's spend for a bucket of {layout.big:,} objects "
                           f"(finished days rolled up), {scale} (target < 2 s)", worst_rolled / 1000, "s", "target",
                           2))

    def show() -> None:
        with transaction() as s:
            overview.overview(s, admin)

    ov, ov_cpu = timed(show, args.repeat)
    log(f"Overview: median {statistics.median(ov):.0f} ms (CPU {statistics.median(ov_cpu):.0f} ms), "
        f"max {max(ov):.0f} ms")
    figures.append(run.row("scale.overview.postgresql", f"Overview as an admin, {scale} (target < 200 ms)",
                           statistics.median(ov), "ms", "target", 200))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000_000)
    parser.add_argument("--buckets", type=int, default=1000)
    parser.add_argument("--big", type=int, default=1_000_000, help="objects of bucket 0 (spend, lifecycle, listing)")
    parser.add_argument("--versioned", type=int, default=200_000, help="objects of the versioned bucket")
    parser.add_argument("--server", default=os.environ.get(
        "TIERPILOT_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"))
    parser.add_argument("--keep", metavar="NAME", help="fill a database NAME once and keep it for the next run")
    parser.add_argument("--drop", action="store_true", help="drop the --keep database at the end")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--heads", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fill-only", action="store_true")
    parser.add_argument("--live-spend", action="store_true", help="also price the months from the catalog's rows "
                        "before the roll-up (minutes at 1 M objects)")
    args = parser.parse_args()
    run = Run()
    layout = Layout(args.objects, args.buckets, args.big, args.versioned)
    name = args.keep or f"bench_scale_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    url, made = ensure_database(args.server, name)
    os.environ.update(TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
                      TIERPILOT_DATA_DIR=os.environ.get("TIERPILOT_DATA_DIR", f"/tmp/tierpilot-{name}"))
    try:
        from tierpilot.kit import migrate

        t0 = time.perf_counter()
        migrate.upgrade(url)
        log(f"migrations {time.perf_counter() - t0:.1f} s")
        if made:
            bucket_ids = setup(layout)
            fill(url, layout, bucket_ids, datetime.now(UTC))
        if not args.fill_only:
            from tierpilot.app import wiring

            wiring.install()
            record(measure(args, layout, run))
    finally:
        if not args.keep or args.drop:
            drop_database(args.server, name)
            log(f"dropped {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
