"""A project's hard quota on real processes: users and projects made with the `tierpilot` command, two gateway
processes sharing the quota counter (in Redis, or in the database without one), clients writing through both at
once until both refuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.servers import ROOT, start_gateway, stop

QUOTA = 10 * 1024 * 1024
SIZE = 256 * 1024
THREADS = 8


def _cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _tier() -> None:
    from tierpilot.drivers import registry
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        service.create(s, TierCreate(name="hot-disk", driver="posix", storage_classes=["STANDARD"],
                                     config={"path": f"quota-{uuid.uuid4().hex[:8]}/hot"}))
    registry.tiers.invalidate()


def _project(env: dict[str, str], name: str) -> dict[str, object]:
    return next(p for p in json.loads(_cli(env, "projects", "list", "--json")) if p["name"] == name)


def _client(url: str, key: dict[str, str]) -> BaseClient:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=key["access_key_id"],
                        aws_secret_access_key=key["secret_access_key"], region_name="us-east-1")


@pytest.mark.parametrize("counter", ["redis", "database"])
def test_quota_stops_puts_through_two_gateways_and_deleting_frees_space(
        counter: str, db: str, data_dir: Path, request: pytest.FixtureRequest) -> None:
    redis_url = request.getfixturevalue("redis_url") if counter == "redis" else ""
    env = {**os.environ, "TIERPILOT_DATABASE_URL": db, "TIERPILOT_REDIS_URL": redis_url,
           "TIERPILOT_DEFAULT_TIER": "hot-disk"}
    _tier()
    key = json.loads(_cli(env, "users", "create", "u1", "--json"))
    _cli(env, "projects", "create", "p1", "--quota-bytes", str(QUOTA))
    _cli(env, "projects", "add-member", "p1", "u1", "--role", "member", "--default")
    gateways = [start_gateway(db, data_dir / f"quota-{counter}-{i}.log", {"TIERPILOT_REDIS_URL": redis_url})
                for i in range(2)]
    try:
        clients = [_client(url, key) for url, _proc in gateways]
        bucket = f"q-{uuid.uuid4().hex[:10]}"
        clients[0].create_bucket(Bucket=bucket)
        assert _project(env, "p1")["buckets"] == [bucket]  # created through S3: landed in the default project

        stored: list[str] = []
        refusals: list[tuple[int, str, int]] = []
        lock = threading.Lock()

        def writer(n: int) -> None:
            s3 = clients[n % 2]
            body = os.urandom(SIZE)
            for i in range(200):
                k = f"w{n}/{i}"
                try:
                    s3.put_object(Bucket=bucket, Key=k, Body=body)
                except ClientError as exc:
                    with lock:
                        refusals.append((n % 2, exc.response["Error"]["Code"],
                                         exc.response["ResponseMetadata"]["HTTPStatusCode"]))
                    return
                with lock:
                    stored.append(k)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert len(refusals) == THREADS and {(code, status) for _g, code, status in refusals} == {
            ("QuotaExceeded", 403)}
        assert {g for g, _c, _s in refusals} == {0, 1}  # both gateways refused
        used = int(_project(env, "p1")["used_bytes"])  # type: ignore[call-overload]
        assert used == len(stored) * SIZE
        # the bound: at most the quota plus the bytes in flight when it was reached (here the reservations
        # leave nothing to overshoot: every write reserved its size before its body was read)
        assert used <= QUOTA < used + THREADS * SIZE + SIZE
        assert used <= QUOTA + THREADS * SIZE

        # deleting frees the space: the next write fits again, through either gateway
        for k in stored[:4]:
            clients[1].delete_object(Bucket=bucket, Key=k)
        assert int(_project(env, "p1")["used_bytes"]) == used - 4 * SIZE  # type: ignore[call-overload]
        for n in range(2):
            clients[n].put_object(Bucket=bucket, Key=f"again-{n}", Body=os.urandom(SIZE))
        assert int(_project(env, "p1")["used_bytes"]) == used - 2 * SIZE  # type: ignore[call-overload]
    finally:
        for _url, proc in gateways:
            stop(proc)
