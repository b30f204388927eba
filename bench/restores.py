"""Restore batches at scale: submit, poll and complete 10,000 archived objects; the queue page's API time.

Part A: 10,000 objects on an offline posix tier whose recalls take 5 s. One POST to a `tierpilot api`
process creates the batch; a `tierpilot worker --concurrency 2` with its embedded beat (Redis broker)
runs ``restores.poll_due`` every ``TIERPILOT_RESTORE_SWEEP_S`` (default 2 s); a client polls the
Restores page's data (GET /api/restores/queue) every 100 ms. Per-sweep figures come from the worker's
log (Celery logs each task's result). Reported: time to submit (POST until the tier accepted every
request), tier requests per sweep, and the time from the tier completing the last recall to the API
showing the batch ready (goal: at most one poll interval + 2 s).

Part B: 100 batches with 1,000,000 restore rows in all (mostly finished, some running, some failed);
p50/p95/p99 of GET /api/restores/queue (the whole Restores page: summary by state and tier, oldest
running batch, 100 newest batches with progress) over 300 requests to a real `tierpilot api` process
(goal: p95 under 100 ms), and of one batch's detail (10,000 objects, timeline, first page of objects).

Everything runs in a scratch directory on 127.0.0.1 with SQLite, or PostgreSQL with --postgres
(a throwaway cluster from Debian's binaries).

Run: .venv/bin/python bench/restores.py [--objects 10000] [--rows 1000000] [--postgres] [--markdown]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.figures import Run, record  # noqa: E402 - after the repository is on the path
from tests.servers import free_port, wait_port  # noqa: E402 - after the repository is on the path

DELAY_S = 5.0


@dataclass
class SweepRecord:
    started: float
    seconds: float
    claimed: int
    requests_per_chunk: list[int]
    outcomes: dict[str, int]


@dataclass
class PartA:
    objects: int
    setup_s: float
    post_ms: float
    submit_s: float
    sweep_period_s: float
    poll_every_s: float
    completion_to_ready_s: float
    completion_to_shown_s: float
    item_lag_p50_s: float
    item_lag_p95_s: float
    item_lag_max_s: float
    sweeps: list[SweepRecord] = field(default_factory=list)


@dataclass
class Timing:
    name: str
    n: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class Api:
    """A `tierpilot api` process and a signed-in HTTP client (keep-alive)."""

    def __init__(self, env: dict[str, str], workdir: Path, username: str, password: str) -> None:
        import httpx

        self.port = free_port()
        self.log = open(workdir / "api.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "api", "--port", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT)
        wait_port(self.port)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        r = self.http.post("/api/auth/login", json={"username": username, "password": password})
        r.raise_for_status()
        self.http.headers["x-csrf-token"] = self.http.cookies["tierpilot_csrf"]

    def stop(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def setup_archive(objects: int) -> tuple[Any, Any, str]:
    """An admin, an offline posix tier (every speed 5 s) and a bucket of ``objects`` archived objects."""
    from tierpilot.auth import service as auth
    from tierpilot.catalog import service as catalog
    from tierpilot.catalog import store
    from tierpilot.catalog.store import NewObject
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    with transaction(write=True) as s:
        admin, _key = auth.create_user(s, "bench-admin", "bench-password-1", is_admin=True)
        tier = tiers.create(s, TierCreate(name="archive", driver="posix", config={"path": "archive"},
                                          storage_classes=["GLACIER"], offline=True,
                                          restore_delays=RestoreDelays(expedited=DELAY_S, standard=DELAY_S,
                                                                       bulk=DELAY_S),
                                          price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"}))
        bucket = catalog.create_bucket(s, owner_id=admin.id, name="telescope", tier_name="archive")
        s.flush()
        s.expunge_all()
    spec = NewObject(tier=tier, storage_class="GLACIER")
    body = b"x" * 4096

    def put(i: int) -> None:
        store.put_object(bucket, f"survey/{i // 1000:02d}/frame-{i:06d}.fits", iter([body]), spec)

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, range(objects)))
    return admin, tier, bucket.name


def _sweeps_from_log(log: Path) -> list[SweepRecord]:
    """Per-sweep figures from the worker's log: Celery logs each task's return value."""
    records = []
    pattern = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): INFO/[^\]]+\] Task restores\.poll_due\[[^\]]+\] "
                         r"succeeded in (?P<secs>[\d.]+)s: (?P<result>\{.*\})$")
    for line in log.read_text(errors="replace").splitlines():
        m = pattern.match(line)
        if not m:
            continue
        result = ast.literal_eval(m["result"])
        if not result["claimed"]:
            continue
        at = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
        records.append(SweepRecord(at - float(m["secs"]), float(m["secs"]), result["claimed"],
                                   result["requests_per_chunk"], result["outcomes"]))
    return sorted(records, key=lambda r: r.started)


def part_a(env: dict[str, str], workdir: Path, objects: int) -> PartA:
    """The product's path: the API creates the batch, a real worker with its beat sweeps (Redis broker)."""
    from sqlalchemy import func, select

    from tests.servers import start_redis
    from tierpilot.kit.db import transaction
    from tierpilot.kit.settings import get_settings
    from tierpilot.restores.models import RestoreBatch, RestoreItem
    from tierpilot.restores.schedule import schedule_for_known_delay

    t0 = time.monotonic()
    _admin, _tier, bucket = setup_archive(objects)
    setup_s = time.monotonic() - t0
    redis = start_redis()
    worker_env = dict(env, TIERPILOT_REDIS_URL=redis.url)
    log = workdir / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "tierpilot.app.cli", "worker", "--concurrency", "2", "-B", "-s",
             str(workdir / "beat-schedule")], env=worker_env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
            start_new_session=True)
    api = Api(worker_env, workdir, "bench-admin", "bench-password-1")
    try:
        time.sleep(3)  # the worker and its beat are up
        started = time.monotonic()
        r = api.http.post("/api/restores/batches", json={"bucket": bucket, "prefixes": [""], "speed": "standard",
                                                         "days": 1, "name": "10k frames"})
        post_ms = (time.monotonic() - started) * 1000
        r.raise_for_status()
        batch_id = r.json()["id"]
        shown_at_wall = None
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            queue = api.http.get("/api/restores/queue").json()
            batch = next(b for b in queue["batches"]["items"] if b["id"] == batch_id)
            if batch["state"] == "ready":
                shown_at_wall = time.time()
                break
            time.sleep(0.1)
        if shown_at_wall is None:
            raise RuntimeError("the batch did not become ready within 15 minutes")
    finally:
        api.stop()
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
        redis.stop()

    with transaction() as s:
        b = s.get(RestoreBatch, batch_id)
        assert b is not None and b.submitted_at is not None and b.ready_at is not None
        completed = s.scalar(select(func.max(RestoreItem.expected_ready_at)).where(RestoreItem.batch_id == batch_id))
        lags = [(ready - expected).total_seconds() for ready, expected in s.execute(
            select(RestoreItem.ready_at, RestoreItem.expected_ready_at).where(RestoreItem.batch_id == batch_id))
            if ready is not None and expected is not None]
    assert completed is not None
    return PartA(objects=objects, setup_s=setup_s, post_ms=post_ms,
                 submit_s=(b.submitted_at - b.created_at).total_seconds(),
                 sweep_period_s=get_settings().restore_sweep_s,
                 poll_every_s=schedule_for_known_delay(DELAY_S).phases[0][1],
                 completion_to_ready_s=(b.ready_at - completed).total_seconds(),
                 completion_to_shown_s=shown_at_wall - completed.timestamp(),
                 item_lag_p50_s=statistics.median(lags), item_lag_p95_s=pct(lags, 0.95), item_lag_max_s=max(lags),
                 sweeps=_sweeps_from_log(log))


def fill_rows(rows: int, batches: int = 100) -> int:
    """``batches`` batches of ``rows`` items in all (a realistic mix of states); returns one batch's id."""
    from sqlalchemy import select

    from tierpilot.auth import service as auth
    from tierpilot.auth.models import User
    from tierpilot.kit.db import transaction, utcnow
    from tierpilot.restores import repository
    from tierpilot.restores.models import RestoreBatch
    from tierpilot.tiers.models import Tier

    per = rows // batches
    now = utcnow()
    with transaction(write=True) as s:
        tier_id = s.scalar(select(Tier.id).where(Tier.name == "archive"))
        member, _ = auth.create_user(s, "bench-member", "bench-password-1")
        admin_id = s.scalar(select(User.id).where(User.username == "bench-admin"))
        owners = [member.id, admin_id]
    assert tier_id is not None
    first_id = 0
    for b in range(batches):
        running = b >= batches - 5  # the 5 newest are still running, one older one has failures
        failed = per // 100 if b == batches // 2 else 0
        created = now - timedelta(hours=batches - b)
        with transaction(write=True) as s:
            batch = repository.add_batch(s, RestoreBatch(
                owner_id=owners[b % 2], name=f"run {b:03d}", speed=("standard", "bulk", "expedited")[b % 3], days=7,
                state="in_progress" if running else ("failed" if failed else "ready"),
                source={"bucket": "telescope", "prefixes": [f"survey/{b:03d}/"], "keys": 0},
                object_count=per, total_bytes=per * 4096, created_at=created, submitted_at=created,
                estimated_ready_at=created + timedelta(hours=4), updated_at=created,
                ready_at=None if running else created + timedelta(hours=4)))
            first_id = first_id or batch.id
            items = []
            for i in range(per):
                state = ("ongoing" if i % 3 else "pending") if running else ("failed" if i < failed else "ready")
                ready_at = created + timedelta(hours=3, seconds=i) if state == "ready" else None
                items.append(dict(batch_id=batch.id, owner_id=owners[b % 2], object_id=None, bucket="telescope",
                                  key=f"survey/{b:03d}/frame-{i:06d}.fits", size=4096, tier_id=tier_id,
                                  locator=f"telescope/survey/{b:03d}/frame-{i:06d}.fits~bench", speed="standard",
                                  days=7, state=state, requested_at=created,
                                  next_poll_at=(created + timedelta(days=365)) if state in ("pending", "ongoing")
                                  else (ready_at + timedelta(days=7) if ready_at else None),
                                  poll_count=3, attempts=1, ready_at=ready_at,
                                  expires_at=ready_at + timedelta(days=7) if ready_at else None))
            repository.insert_items(s, items, chunk=10_000)
            counts = {k: sum(1 for it in items if it["state"] == k) for k in ("pending", "ongoing", "ready", "failed")}
            repository.insert_counters(s, [dict(batch_id=batch.id, tier_id=tier_id, objects=per, bytes=per * 4096,
                                                 pending=counts["pending"], ongoing=counts["ongoing"],
                                                 ready=counts["ready"], ready_bytes=counts["ready"] * 4096,
                                                 failed=counts["failed"], expired=0)])
    return first_id


def measure(api: Api, path: str, n: int, params: dict[str, Any] | None = None, warmup: int = 20) -> Timing:
    for _ in range(warmup):
        api.http.get(path, params=params).raise_for_status()
    times = []
    for _ in range(n):
        started = time.perf_counter()
        r = api.http.get(path, params=params)
        times.append((time.perf_counter() - started) * 1000)
        r.raise_for_status()
    return Timing(path + (f"?{'&'.join(f'{k}={v}' for k, v in params.items())}" if params else ""), n,
                  statistics.median(times), pct(times, 0.95), pct(times, 0.99), max(times))


def part_b(env: dict[str, str], workdir: Path, rows: int) -> tuple[int, float, list[Timing]]:
    from sqlalchemy import func, select

    from tierpilot.kit.db import transaction
    from tierpilot.restores.models import RestoreItem

    started = time.monotonic()
    batch_id = fill_rows(rows)
    fill_s = time.monotonic() - started
    with transaction() as s:
        total = int(s.scalar(select(func.count(RestoreItem.id))) or 0)
    api = Api(env, workdir, "bench-admin", "bench-password-1")
    try:
        timings = [measure(api, "/api/restores/queue", 300, {"scope": "everyone"}),
                   measure(api, "/api/restores/queue", 300),
                   measure(api, f"/api/restores/batches/{batch_id}", 100)]
    finally:
        api.stop()
    return total, fill_s, timings


def markdown(a: PartA | None, b: tuple[int, float, list[Timing]] | None, database: str) -> str:
    out = [f"Database: {database}. Offline posix tier, every recall {DELAY_S:g} s; sweep period "
           f"{a.sweep_period_s if a else '-'} s (TIERPILOT_RESTORE_SWEEP_S).", ""]
    if a:
        requests = [sum(r.requests_per_chunk) for r in a.sweeps]
        out += [
            f"**A. One batch of {a.objects:,} archived objects** (setup, not timed: {a.setup_s:.0f} s)", "",
            "| figure | value | goal |", "|---|---|---|",
            f"| POST /api/restores/batches ({a.objects:,} objects) | {a.post_ms:.0f} ms | |",
            f"| time to submit (POST until the tier accepted all {a.objects:,} requests) | {a.submit_s:.2f} s | "
            "all at once, not one after another |",
            f"| sweeps that did work / tier requests in all | {len(a.sweeps)} / {sum(requests):,} | "
            f"≈ 2 per object (submit + 1 poll) |",
            f"| tier requests per sweep (max / median) | {max(requests):,} / {statistics.median(requests):,.0f} | "
            "only objects still pending |",
            f"| requests per claimed chunk (max) | {max(max(r.requests_per_chunk) for r in a.sweeps):,} | "
            "bounded (TIERPILOT_RESTORE_CHUNK) |",
            f"| last recall completed → batch ready in the database | {a.completion_to_ready_s:.2f} s | "
            f"≤ poll interval ({a.poll_every_s:g} s) + 2 s |",
            f"| last recall completed → API shows the batch ready (client polls every 0.1 s) | "
            f"{a.completion_to_shown_s:.2f} s | ≤ poll interval + 2 s |",
            f"| per object, recall completed → marked ready: p50 / p95 / max | {a.item_lag_p50_s:.2f} / "
            f"{a.item_lag_p95_s:.2f} / {a.item_lag_max_s:.2f} s | |",
            "",
            "Sweeps (start relative to the first, duration, tier requests, outcomes):", "",
        ]
        t0 = a.sweeps[0].started if a.sweeps else 0.0
        out += [f"- +{r.started - t0:5.1f} s, {r.seconds:5.2f} s: {sum(r.requests_per_chunk):,} requests in "
                f"{len(r.requests_per_chunk)} chunks → {', '.join(f'{k} {v:,}' for k, v in sorted(r.outcomes.items()))}"
                for r in a.sweeps]
        out.append("")
    if b:
        total, fill_s, timings = b
        out += [f"**B. The Restores page's data with 100 batches and {total:,} restore rows** "
                f"(rows written in {fill_s:.0f} s, not timed)", "",
                "| request | n | p50 | p95 | p99 | max |", "|---|---|---|---|---|---|"]
        out += [f"| GET {t.name} | {t.n} | {t.p50_ms:.1f} ms | {t.p95_ms:.1f} ms | {t.p99_ms:.1f} ms | "
                f"{t.max_ms:.1f} ms |" for t in timings]
        out.append("")
    return "\n".join(out)


def figures(run: Run, a: PartA | None, b: tuple[int, float, list[Timing]] | None,
            postgres: bool) -> list[dict[str, Any]]:
    """The rows of the current figures: completion → shown against its goal, the page's p95 against 100 ms."""
    db, name = ("postgresql", "PostgreSQL") if postgres else ("sqlite", "SQLite")
    rows = []
    if a:
        rows.append(run.row(f"restores.ready.{db}", f"last recall done → API shows the {a.objects:,}-object batch "
                            f"ready, {name}", a.completion_to_shown_s, "s", "goal: poll interval + 2 s",
                            a.poll_every_s + 2))
    if b:
        total, _fill_s, timings = b
        rows.append(run.row(f"restores.page.{db}", f"Restores page data (everyone's) p95, {total:,} restore rows, "
                            f"{name}", timings[0].p95_ms, "ms", "goal", 100.0))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--skip-a", action="store_true")
    parser.add_argument("--skip-b", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="print only the Markdown section")
    args = parser.parse_args()
    run = Run()

    workdir = Path(tempfile.mkdtemp(prefix="tierpilot-bench-restores-"))
    server = None
    drop_database = None
    if args.postgres:
        from tests.servers import create_database, start_postgres

        server = start_postgres()
        url, drop_database = create_database(server.url, "bench_restores")
    else:
        url = f"sqlite:///{workdir / 'tierpilot.db'}"
    env = dict(os.environ, TIERPILOT_DATA_DIR=str(workdir), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
               TIERPILOT_SECRET_KEY="bench-secret-key")
    env.pop("TIERPILOT_REDIS_URL", None)
    os.environ.update(env)
    try:
        from tierpilot.kit.migrate import upgrade

        upgrade(url)
        a = None if args.skip_a else part_a(env, workdir, args.objects)
        if not args.markdown and a:
            print(f"part A done: submit {a.submit_s:.2f} s, completion→shown {a.completion_to_shown_s:.2f} s",
                  file=sys.stderr)
        b = None if args.skip_b else part_b(env, workdir, args.rows)
        print(markdown(a, b, "PostgreSQL" if args.postgres else "SQLite (WAL)"))
    finally:
        if drop_database is not None:
            drop_database()
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    # with --markdown, stdout carries the Markdown section alone
    with contextlib.redirect_stdout(sys.stderr if args.markdown else sys.stdout):
        record(figures(run, a, b, args.postgres))
    return 0


if __name__ == "__main__":
    sys.exit(main())
