"""A connection lost at COMMIT loses nothing acknowledged: a proxy between a gateway process and PostgreSQL cuts
the connection of one COMMIT a round, before it reaches the server or after the server answered it, while
writers PUT and overwrite keys with retries off. Every acknowledged write stays readable with its bytes (or a
later write's that may have committed unanswered), nothing listed is missing its blob, and fsck finds no
object without its bytes."""

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
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from sqlalchemy.engine import make_url

from tests.conftest import TEST_DB
from tests.gateway.conftest import Gateway, start_gateway, stop
from tests.pgfault import commit_cutter
from tests.servers import ROOT

ROUNDS = 100
WRITERS = 6
ROUND_TIMEOUT_S = 60.0

pytestmark = pytest.mark.skipif(TEST_DB != "postgresql", reason="a PostgreSQL connection is what is cut")


class Ledger:
    """Per key: the last acknowledged body and the bodies tried after it (any may have committed unanswered)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.acked: dict[str, bytes] = {}
        self.since: dict[str, list[bytes]] = {}
        self.acks = 0
        self.failures = 0

    def tried(self, key: str, body: bytes) -> None:
        with self.lock:
            self.since.setdefault(key, []).append(body)

    def answered(self, key: str, body: bytes, ok: bool) -> None:
        with self.lock:
            if ok:
                self.acked[key] = body
                self.since[key] = []
                self.acks += 1
            else:
                self.failures += 1

    def allowed(self, key: str) -> set[bytes]:
        return {self.acked[key], *self.since.get(key, [])}


def _fsck(db_url: str) -> dict[str, object]:
    env = dict(os.environ, TIERPILOT_DATABASE_URL=db_url)
    out = subprocess.run([sys.executable, "-m", "tierpilot.app.cli", "fsck", "--json", "--min-age", "0"], env=env,
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_connections_cut_at_commit_lose_no_acknowledged_write(gateway: Gateway, db_url: str,
                                                              data_dir: Path) -> None:
    upstream = make_url(db_url)
    assert upstream.port is not None
    with commit_cutter(upstream.port, upstream.host or "127.0.0.1") as cutter:
        proxied = upstream.set(host="127.0.0.1", port=cutter.port).render_as_string(hide_password=False)
        log = data_dir / f"gateway-commit-cut-{uuid.uuid4().hex[:8]}.log"
        url, proc = start_gateway(proxied, log)
        u = gateway.users["alice"]
        s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=u.access_key_id,
                          aws_secret_access_key=u.secret_access_key, region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1}, max_pool_connections=WRITERS))
        bucket = f"cut-{uuid.uuid4().hex[:12]}"
        s3.create_bucket(Bucket=bucket)
        ledger = Ledger()
        stop_writing = threading.Event()

        def writer(w: int) -> None:
            i = 0
            while not stop_writing.is_set():
                key = f"w{w}/k{i // 2:06d}"  # each key written twice, then left: a new key and an overwrite
                body = uuid.uuid4().bytes * 64  # 1 KiB, distinct per write
                ledger.tried(key, body)
                try:
                    s3.put_object(Bucket=bucket, Key=key, Body=body)
                    ledger.answered(key, body, True)
                except (BotoCoreError, ClientError):
                    ledger.answered(key, body, False)
                i += 1

        threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(WRITERS)]
        try:
            for t in threads:
                t.start()
            for n in range(ROUNDS):
                cutter.arm("before" if n % 2 else "after")
                with ledger.lock:
                    acks_before = ledger.acks
                # the round ends when its cut was made and writes were acknowledged after it
                deadline = threading.Event()
                timer = threading.Timer(ROUND_TIMEOUT_S, deadline.set)
                timer.start()
                try:
                    while not deadline.is_set():
                        with ledger.lock:
                            progressed = ledger.acks >= acks_before + WRITERS
                        if not cutter.armed and progressed:
                            break
                        deadline.wait(0.02)
                finally:
                    timer.cancel()
                assert not cutter.armed and ledger.acks >= acks_before + WRITERS, (
                    f"round {n}: no cut or no progress within {ROUND_TIMEOUT_S}s\n{log.read_text()[-3000:]}")
        finally:
            stop_writing.set()
            for t in threads:
                t.join(60)
        assert cutter.cuts["before"] + cutter.cuts["after"] == ROUNDS

        # read through a gateway on the database itself (nothing cut), after this gateway's caches
        stop(proc)
        url2, proc2 = start_gateway(db_url, log)
        try:
            fresh = boto3.client("s3", endpoint_url=url2, aws_access_key_id=u.access_key_id,
                                 aws_secret_access_key=u.secret_access_key, region_name="us-east-1")
            listed: set[str] = set()
            for page in fresh.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                listed.update(o["Key"] for o in page.get("Contents", []))
            wrong: list[str] = []
            for key in ledger.acked:
                try:
                    body = fresh.get_object(Bucket=bucket, Key=key)["Body"].read()
                except ClientError as exc:
                    wrong.append(f"{key}: {exc.response['Error']['Code']}")
                    continue
                if body not in ledger.allowed(key):
                    wrong.append(f"{key}: bytes of no write acknowledged or tried since")
            for key in listed - set(ledger.acked):  # committed unanswered: its bytes are there too
                fresh.get_object(Bucket=bucket, Key=key)["Body"].read()
            assert not wrong, f"{len(wrong)} of {len(ledger.acked)} acknowledged keys wrong: {wrong[:10]}"
        finally:
            stop(proc2)
    report = _fsck(db_url)
    kinds = {f["kind"] for f in report["findings"]}  # type: ignore[union-attr]
    assert not kinds - {"orphan"}, f"fsck: {report['counts']}"
