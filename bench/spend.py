"""Spend's costs, measured in one run.

1. Metering the data path: a flow per request (open, 4 chunks, close) through the spend domain's metering
   wrapper against the bare best-effort policy, and the gateway's ``finished`` hook for a request without a
   flow (HEAD, LIST, ...).
2. Pricing a month (``--buckets N --objects M``): a scratch SQLite (or ``--postgres``) database with N buckets
   of M objects created over the last 9 months, a tenth of them deleted (their spans in the catalog's
   history, written by its triggers), a restore per 100 objects and a month of metered usage; the time of
   ``GET /api/spend``'s computation (six months, by bucket), median of ``--runs``: with the finished days from
   the daily roll-up (after beat's ``spend.roll_up`` backfilled it, timed too) against every day priced from
   the catalog's rows (the baseline, ``rolled_up=False``), alternated in the same run, answers compared.

    .venv/bin/python bench/spend.py [--flows 50000] [--runs 5] [--buckets 20] [--objects 5000] [--spread-days 270]
                                    [--postgres] [--deleted-midlife]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.figures import Run, record
from tierpilot.kit.flow import BestEffortPolicy, FlowPolicy, FlowRequest
from tierpilot.spend.usage import Meter, MeteringPolicy


async def _drive(policy: FlowPolicy, flows: int) -> float:
    requests = [FlowRequest(reservation_id=None, user_id=i % 50, is_admin=False, bucket="b", bucket_id=i % 20,
                            direction="read" if i % 3 else "write", expected_bytes=None) for i in range(flows)]
    started = time.perf_counter()
    for r in requests:
        flow = await policy.open(r)
        for _ in range(4):
            await flow.consume(1 << 20)
        await flow.close()
    return time.perf_counter() - started


@dataclass
class _Req:
    flows: list[object]
    caller: object
    bucket: str


@dataclass
class _Caller:
    user_id: int


def _hook_cost(requests: int) -> float:
    """Seconds per request of the gateway's ``finished`` hook for requests without a flow."""
    from tierpilot.spend import gateway

    reqs = [_Req([], _Caller(i % 50), f"bucket-{i % 20}") for i in range(requests)]
    ops = ("HEAD object", "GET bucket", "GET bucket?versions", "DELETE object")
    started = time.perf_counter()
    for i, r in enumerate(reqs):
        gateway.finished(r, ops[i % 4], 200)
    elapsed = time.perf_counter() - started
    gateway.meter.take()
    return elapsed / requests


def _backdate_deletions(session: object, bucket_id: int, now: datetime) -> None:
    """Move the bucket's deletions (stamped now by the triggers) to the middle of each object's life, as if they
    had happened over the months before: the daily roll-up then holds them, not the live day."""
    from sqlalchemy import Table, bindparam, select, update
    from sqlalchemy.orm import Session

    from tierpilot.spend.models import StorageHistory as H

    assert isinstance(session, Session)
    rows = session.execute(select(H.id, H.stored_from).where(H.bucket_id == bucket_id)).all()
    table = H.__table__
    assert isinstance(table, Table)
    session.execute(update(table).where(table.c.id == bindparam("row_id")).values(ended_at=bindparam("at")),
                    [{"row_id": i, "at": (start if start.tzinfo else start.replace(tzinfo=UTC)) + (now - (
                        start if start.tzinfo else start.replace(tzinfo=UTC))) / 2} for i, start in rows])


def _world(buckets: int, objects: int, now: datetime, spread_days: int, midlife: bool = False) -> None:
    """N buckets of M objects created over ``spread_days``, a tenth deleted, restores and a month of metering."""
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository as catalog_repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.restores import repository as restores_repository
    from tierpilot.spend import repository
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        admin, _ = auth.create_user(s, "bench-admin", "bench-admin-password", is_admin=True)
        tier = tiers.create(s, TierCreate(name="glacier", driver="posix", config={"path": "bench"},
                                          storage_classes=["GLACIER"], offline=True,
                                          price_ref={"catalog": "aws-us-east-1", "storage_class": "GLACIER"}))
        ids = [catalog.create_bucket(s, owner_id=admin.id, name=f"bench-{b:04d}", tier_name="glacier").id
               for b in range(buckets)]
    span = spread_days * 86400
    for b, bucket_id in enumerate(ids):
        with transaction(write=True) as s:
            catalog_repository.adopt_objects(s, bucket_id, [dict(
                key=f"k{i:07d}", size=1 << 20, etag='"e"', tier_id=tier.id, storage_class="GLACIER",
                locator=f"bench-{b}/{i}", created_at=now - timedelta(seconds=span * i // objects),
                last_modified=now) for i in range(objects)])
        with transaction(write=True) as s:
            gone = [o for o, b, *_ in catalog_repository.iter_tier_objects(s, tier.id) if b == bucket_id][::10]
            catalog_repository.delete_object_rows(s, gone)
            if midlife:
                _backdate_deletions(s, bucket_id, now)
            restores_repository.insert_items(s, [dict(
                owner_id=admin.id, bucket=f"bench-{b:04d}", key=f"k{i:07d}", size=1 << 20, tier_id=tier.id,
                locator=f"bench-{b}/{i}", speed=("bulk", "standard", "expedited")[i % 3], days=7, state="ready",
                requested_at=now - timedelta(days=i % 28), ready_at=now - timedelta(days=i % 28, hours=-5),
                expires_at=now + timedelta(days=7 - i % 28)) for i in range(0, objects, 100)])
            repository.add_usage(s, [((now - timedelta(days=d)).date().isoformat(), admin.id, bucket_id, kind,
                                      100, 1 << 30 if kind == "read" else 0)
                                     for d in range(28) for kind in ("read", "write", "head", "list")])


def _same(a: object, b: object) -> bool:
    """Equal answers: the same keys, texts and counts; money and GiB-days to the millionth."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1.5e-6
    return a == b


def _month(args: argparse.Namespace, run: Run) -> dict[str, Any]:
    """Price a month from the roll-up and from the rows; the row of the current figures."""
    workdir = Path(tempfile.mkdtemp(prefix="tierpilot-bench-spend-"))
    server = drop = None
    if args.postgres:
        from tests.servers import create_database, start_postgres

        server = start_postgres()
        url, drop = create_database(server.url, "bench_spend")
    else:
        url = f"sqlite:///{workdir / 'tierpilot.db'}"
    os.environ.update(TIERPILOT_DATA_DIR=str(workdir), TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false",
                      TIERPILOT_SECRET_KEY="bench-secret-key")
    os.environ.pop("TIERPILOT_REDIS_URL", None)
    try:
        from tierpilot.app import wiring
        from tierpilot.auth import repository as auth_repository
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade
        from tierpilot.spend import service

        upgrade(url)
        wiring.install()
        now = datetime.now(UTC)
        started = time.perf_counter()
        _world(args.buckets, args.objects, now, args.spread_days, args.deleted_midlife)
        print(f"world: {args.buckets} buckets x {args.objects} objects over {args.spread_days} days, a tenth deleted "
              f"{'in mid-life' if args.deleted_midlife else 'today'}, "
              f"{args.buckets * args.objects // 100} restores, built in {time.perf_counter() - started:.1f} s")
        from tierpilot.spend import rollup

        started = time.perf_counter()
        stored = rollup.roll_up()
        backfill = time.perf_counter() - started
        started = time.perf_counter()
        again = rollup.roll_up()
        print(f"roll-up: first run (backfill) stored {stored} day rows in {backfill:.2f} s; a second run closed "
              f"{again} in {time.perf_counter() - started:.3f} s")
        times: dict[bool, list[float]] = {False: [], True: []}
        answers: dict[bool, dict[str, object]] = {}
        for _ in range(args.runs):
            for rolled_up in (False, True):  # alternated: both see the same load
                with transaction() as s:
                    admin = auth_repository.get_user_by_name(s, "bench-admin")
                    assert admin is not None
                    started = time.perf_counter()
                    answers[rolled_up] = service.spend(s, admin, now.strftime("%Y-%m"), "bucket", now=now,
                                                       rolled_up=rolled_up)
                    times[rolled_up].append(time.perf_counter() - started)
        out = answers[True]
        groups = out["groups"]
        assert isinstance(groups, list)
        assert len(groups) == args.buckets and all(g["restore_requests"] for g in groups)
        same = _same(answers[False], answers[True])
        db = "PostgreSQL" if args.postgres else "SQLite (WAL)"
        rows, rolled = statistics.median(times[False]), statistics.median(times[True])
        for label, t in (("every day from the catalog's rows (baseline)", times[False]),
                         ("closed days from the roll-up", times[True])):
            print(f"{db}: a month (six months of history, by bucket), {label}: median {statistics.median(t):.3f} s "
                  f"(min {min(t):.3f}, max {max(t):.3f}, {args.runs} runs); "
                  f"{statistics.median(t) / (args.buckets * args.objects) * 1e6:.2f} µs per stored object")
        print(f"roll-up / rows: {rolled / rows:.3f} (x{rows / rolled:.1f} faster); answers equal to the millionth: "
              f"{same}")
        return run.row("spend.month", f"a month's spend by bucket from the daily roll-up, {args.buckets} × "
                       f"{args.objects:,} objects, {'PostgreSQL' if args.postgres else 'SQLite'}", rolled, "s",
                       "the same month priced from the rows", rows)
    finally:
        if drop is not None:
            drop()
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--buckets", type=int, default=20)
    parser.add_argument("--objects", type=int, default=5000, help="objects per bucket (0: skip the month)")
    parser.add_argument("--spread-days", type=int, default=270, help="objects created over this many days")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--deleted-midlife", action="store_true",
                        help="the deleted tenth left in the middle of its life (default: deleted today, the live day)")
    args = parser.parse_args()
    run = Run()
    print(f"load average at start: {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")
    bare, metered = [], []
    for _ in range(args.runs):
        bare.append(asyncio.run(_drive(BestEffortPolicy(), args.flows)))
        counter = Meter()
        metered.append(asyncio.run(_drive(MeteringPolicy(BestEffortPolicy(), counter), args.flows)))
        rows, _ = counter.take()
        assert sum(n for *_, n, _b in rows) == args.flows
    b, m = statistics.median(bare), statistics.median(metered)
    print(f"flows per run: {args.flows}, runs: {args.runs}")
    print(f"bare best-effort policy: median {b / args.flows * 1e6:.2f} µs per request")
    print(f"metered:                 median {m / args.flows * 1e6:.2f} µs per request")
    print(f"metering adds {(m - b) / args.flows * 1e6:.2f} µs per request (ratio {m / b:.2f}x of the bare flow path)")
    hook = statistics.median(_hook_cost(args.flows) for _ in range(args.runs))
    print(f"finished hook (a request without a flow): median {hook * 1e6:.2f} µs per request")
    figures = [run.row("spend.metering", "metering a flow (open, four 1 MiB chunks, close), per request",
                       m / args.flows * 1e6, "µs", "the bare best-effort flow", b / args.flows * 1e6)]
    if args.objects:
        figures.append(_month(args, run))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    record(figures)


if __name__ == "__main__":
    main()
