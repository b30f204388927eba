"""What authorization costs a gateway request (issue 14): the sharing decision in the gateway's process, in µs.

In one process on a scratch SQLite data dir (the generation is the installation's file, as without Redis):
(a) the owner of a private bucket: ``gate.state_for`` on the cached "owner only" state (the hot path of
    every request of a bucket that shares nothing), (b) a grantee on a bucket whose policy has N statements
    (the request context built as the gateway builds it, then the policy evaluated), for N = 1, 10, 50
    (50 is near S3's 20 KiB limit for a policy),
(c) for scale, a SQLite point read of one catalog row (what a cache miss would add at least).
Medians of ``--rounds`` rounds of ``--calls`` calls each, interleaved; the load average is printed.

Run: .venv/bin/python bench/sharing_overhead.py [--calls 20000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bench.figures import Run, record


def _setup(data_dir: Path) -> None:
    os.environ.update(TIERPILOT_DATA_DIR=str(data_dir), TIERPILOT_DATABASE_URL="", TIERPILOT_REDIS_URL="",
                      TIERPILOT_SECRET_KEY="bench-sharing-secret-key-0123456789abcdef")
    subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "db", "upgrade"], check=True, capture_output=True)


def _policy(bucket: str, statements: int, grantee: int) -> str:
    body = [{"Sid": f"S{i}", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{grantee}:user/bob"},
             "Action": ["s3:GetObject", "s3:ListBucket"],
             "Resource": [f"arn:aws:s3:::{bucket}/prefix-{i}/*", f"arn:aws:s3:::{bucket}"],
             "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}} for i in range(statements)]
    return json.dumps({"Version": "2012-10-17", "Statement": body})


async def _time(calls: int, one: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await one()
    return (time.perf_counter() - start) / calls * 1e6


async def main(calls: int, rounds: int) -> dict[str, float]:
    """Time each case, print the table; the median µs per call by case."""
    from tierpilot.app import wiring
    from tierpilot.app.bootstrap import demo_tiers
    from tierpilot.auth import service as auth
    from tierpilot.catalog import repository as catalog_repository
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction
    from tierpilot.sharing import access, gate, service
    from tierpilot.sharing.policy import Caller, Context

    wiring.install()
    with transaction(write=True) as s:
        s.add_all(demo_tiers())
        s.flush()
        alice, _ = auth.create_user(s, "alice", "alice-password-123")
        bob, _ = auth.create_user(s, "bob", "bob-password-123")
        private = catalog.create_bucket(s, owner_id=alice.id, name="private-data")
        shared = {n: catalog.create_bucket(s, owner_id=alice.id, name=f"shared-{n}") for n in (1, 10, 50)}
        for n, bucket in shared.items():
            service.put_policy(s, bucket, _policy(bucket.name, n, bob.id))
        for b in (private, *shared.values()):
            s.expunge(b)
    gate.states.start("")
    owner, grantee = Caller(alice.id, "alice"), Caller(bob.id, "bob")

    async def owner_private() -> object:
        return await gate.state_for(private, owner, is_admin=False)

    def grantee_on(n: int) -> Callable[[], Awaitable[object]]:
        bucket = shared[n]

        async def one() -> bool:
            state = await gate.state_for(bucket, grantee, is_admin=False)
            assert state is not None
            # what gateway/auth.py builds per request: action, resource and the condition keys
            ctx = Context(access.action_for("GET", "object", "", False), f"arn:aws:s3:::{bucket.name}/prefix-{n - 1}/k",
                          {"aws:sourceip": ["127.0.0.1"], "aws:securetransport": ["false"], "aws:username": ["bob"],
                           "aws:userid": [str(bob.id)], "aws:useragent": ["bench"]})
            ok = await gate.allowed(bucket, state, grantee, ctx=ctx, key=f"prefix-{n - 1}/k", version_id=None)
            assert ok
            return ok

        return one

    async def point_read() -> object:
        def read() -> object:
            with transaction() as s:
                return catalog_repository.get_bucket(s, private.id)
        return read()

    cases: dict[str, Callable[[], Awaitable[object]]] = {"owner, private bucket": owner_private}
    cases.update({f"grantee, policy of {n}": grantee_on(n) for n in (1, 10, 50)})
    cases["SQLite point read (scale)"] = point_read
    results: dict[str, list[float]] = {name: [] for name in cases}
    for one in cases.values():  # warm the caches
        await _time(100, one)
    for _ in range(rounds):
        for name, one in cases.items():
            results[name].append(await _time(calls if "SQLite" not in name else calls // 10, one))
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(f"{'case':32} {'median µs/call':>15} {'min':>8} {'max':>8}")
    for name, values in results.items():
        print(f"{name:32} {statistics.median(values):15.1f} {min(values):8.1f} {max(values):8.1f}")
    await gate.states.stop()
    return {name: statistics.median(values) for name, values in results.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run = Run()
    with tempfile.TemporaryDirectory(prefix="bench-sharing-") as tmp:
        _setup(Path(tmp))
        medians = asyncio.run(main(args.calls, args.rounds))
    record([run.row("sharing.policy_1", "authorization under a 1-statement bucket policy, per request",
                    medians["grantee, policy of 1"], "µs", "one SQLite point read of a catalog row",
                    medians["SQLite point read (scale)"])])
