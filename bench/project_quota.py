"""What a project's hard quota costs a small PUT: 1 KiB PUTs by 64 clients, A/B in one run.

One gateway process (`tierpilot gateway`) on a scratch SQLite database (`--db postgresql` for PostgreSQL) with
the quota counter in Redis (a private `redis-server` unless `--redis URL`; `--counter database`: no Redis, the
counter in the project row). Two buckets of one user: "quota" in a project with a hard quota (1 TiB and 10^9
objects: every PUT reserves, releases and settles, none is refused) and "free" in a project without one (the
commit still moves the project's counter; no reservation). Rounds alternate A, B, A, B, … so that machine load
hits both alike; a 503 is counted, not retried. Prints the medians and records the ratio with quota ÷ without.

Run: .venv/bin/python bench/project_quota.py [--clients 64] [--seconds 3] [--rounds 5] [--db postgresql]
         [--redis redis://127.0.0.1:6379/0 | --counter database]
"""

from __future__ import annotations

import argparse
import functools
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.figures import Run, record
from bench.putload import CLIENT_PROCS, round_rate
from tests.servers import free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


class Installation:
    """A scratch data dir and database, one user with a key, a posix tier, the two projects and their buckets."""

    def __init__(self, db: str, redis_url: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="tierpilot-bench-quota-"))
        self.stops: list[Callable[[], None]] = []
        url = f"sqlite:///{self.tmp / 'tierpilot.db'}"
        if db == "postgresql":
            from tests.servers import create_database, start_postgres

            server = start_postgres()
            self.stops.append(server.stop)
            url, drop = create_database(server.url, "bench_quota")
            self.stops.insert(0, drop)
        self.env = dict(os.environ, TIERPILOT_DATA_DIR=str(self.tmp), TIERPILOT_SECRET_KEY="bench-secret",
                        TIERPILOT_DATABASE_URL=url, TIERPILOT_SEED_DEMO="false", TIERPILOT_DEFAULT_TIER="bench",
                        TIERPILOT_REDIS_URL=redis_url)
        os.environ.update({k: v for k, v in self.env.items() if k.startswith("TIERPILOT_")})
        from tierpilot.app import wiring
        from tierpilot.auth import service as auth
        from tierpilot.catalog import service as catalog
        from tierpilot.kit.db import transaction
        from tierpilot.kit.migrate import upgrade
        from tierpilot.projects import service as projects
        from tierpilot.tiers import service as tiers
        from tierpilot.tiers.schemas import TierCreate

        upgrade()
        wiring.install()
        with transaction(write=True) as s:
            tiers.create(s, TierCreate(name="bench", driver="posix", config={"path": "bench"}))
            user, key = auth.create_user(s, "bench", "bench-password")
            self.key_id, self.secret = key.access_key_id, key.secret_access_key
            limited = projects.create_project(s, "limited", quota_bytes=1 << 40, quota_objects=10**9)
            unlimited = projects.create_project(s, "unlimited")
            s.flush()
            catalog.create_bucket(s, owner_id=user.id, name="quota", tier_name="bench", project_id=limited.id)
            catalog.create_bucket(s, owner_id=user.id, name="free", tier_name="bench", project_id=unlimited.id)
        port = free_port()
        self.log = open(self.tmp / "gateway.log", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "gateway", "--log-level", "warning",
                                      "--port", str(port)], env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=ROOT)
        wait_port(port, timeout=120)
        self.url = f"http://127.0.0.1:{port}"

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for stop in self.stops:
            stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--redis", default="", help="Redis URL (default: a private redis-server)")
    parser.add_argument("--counter", choices=("redis", "database"), default="redis")
    args = parser.parse_args()
    run = Run()
    redis_stop: Callable[[], None] | None = None
    redis_url = args.redis
    if args.counter == "redis" and not redis_url:
        from tests.servers import start_redis

        server = start_redis()
        redis_url, redis_stop = server.url, server.stop
    if args.counter == "database":
        redis_url = ""
    inst = Installation(args.db, redis_url)
    rates: dict[str, list[float]] = {"quota": [], "free": []}
    errors = {"quota": [0, 0], "free": [0, 0]}
    try:
        with mp.get_context("spawn").Pool(CLIENT_PROCS) as pool:
            put_round = functools.partial(round_rate, pool, inst.url, inst.key_id, inst.secret)
            put_round("free", args.clients, 1.0)  # warm-up: caches, connections, the counter seeded
            put_round("quota", args.clients, 1.0)
            for i in range(args.rounds):
                for bucket in (("quota", "free") if i % 2 == 0 else ("free", "quota")):
                    rate, slow, failed = put_round(bucket, args.clients, args.seconds)
                    rates[bucket].append(rate)
                    errors[bucket][0] += slow
                    errors[bucket][1] += failed
    finally:
        inst.close()
        if redis_stop is not None:
            redis_stop()
    quota, free = statistics.median(rates["quota"]), statistics.median(rates["free"])
    print(f"load average: {os.getloadavg()[0]:.2f}; counter: {args.counter}; database: {args.db}")
    print(f"{'bucket':24} {'median PUT/s':>12} {'rounds':>40} {'503':>5} {'failed':>6}")
    for name, label in (("free", "project without quota"), ("quota", "project with a quota")):
        print(f"{label:24} {statistics.median(rates[name]):12.0f} "
              f"{' '.join(f'{r:.0f}' for r in rates[name]):>40} {errors[name][0]:5d} {errors[name][1]:6d}")
    print(f"with quota ÷ without: {quota / free:.3f} (cost {100 * (1 - quota / free):.1f} %)")
    suffix = "" if args.counter == "redis" and args.db == "sqlite" else f"_{args.counter}_{args.db}"
    record([run.row(f"projects.quota_put{suffix}",
                    f"1 KiB PUT rate at {args.clients} clients into a project with a hard quota "
                    f"(counter: {args.counter}, {args.db})", quota, "PUT/s",
                    "the same gateway and run, a project without a quota", free)])


if __name__ == "__main__":
    main()
