"""Group commit seen from a client: a gateway process killed (SIGKILL) during a burst of small PUTs
from many clients loses no object it acknowledged — every 200 it sent is found, byte for byte, by the next
gateway process — although concurrent PUTs shared their syncfs rounds and catalog transactions."""

from __future__ import annotations

import base64
import hashlib
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from tests.gateway.conftest import Gateway, blob_files, catalog_rows, start_gateway, stop

WRITERS = 16
KILL_AFTER_ACKS = 300


def test_sigkill_during_a_burst_of_small_puts_loses_nothing_acknowledged(gateway: Gateway, db_url: str,
                                                                         data_dir: Path) -> None:
    log = data_dir / f"gateway-crash-{uuid.uuid4().hex[:8]}.log"
    url, proc = start_gateway(db_url, log)
    bucket = f"crash-{uuid.uuid4().hex[:12]}"
    u = gateway.users["alice"]
    import boto3

    s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=u.access_key_id,
                      aws_secret_access_key=u.secret_access_key, region_name="us-east-1",
                      config=Config(retries={"max_attempts": 1}, max_pool_connections=WRITERS))
    s3.create_bucket(Bucket=bucket)
    acked: dict[str, bytes] = {}
    lock = threading.Lock()
    enough = threading.Event()

    def writer(w: int) -> None:
        for i in range(100_000):
            key, body = f"w{w:02d}/{i:05d}", uuid.uuid4().bytes * 64  # 1 KiB, distinct per object
            try:
                s3.put_object(Bucket=bucket, Key=key, Body=body)
            except (BotoCoreError, ClientError):
                return  # the gateway is gone: this PUT was not acknowledged
            with lock:
                acked[key] = body
                if len(acked) >= KILL_AFTER_ACKS:
                    enough.set()

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    try:
        for t in threads:
            t.start()
        assert enough.wait(120), f"only {len(acked)} PUTs acknowledged"
        proc.send_signal(signal.SIGKILL)  # mid-burst: every writer has a PUT in flight
        proc.wait(timeout=10)
        for t in threads:
            t.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with lock:
        survivors = dict(acked)
    assert len(survivors) >= KILL_AFTER_ACKS

    url2, proc2 = start_gateway(db_url, log)
    try:
        fresh = boto3.client("s3", endpoint_url=url2, aws_access_key_id=u.access_key_id,
                             aws_secret_access_key=u.secret_access_key, region_name="us-east-1")
        listed: set[str] = set()
        for page in fresh.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            listed.update(o["Key"] for o in page.get("Contents", []))
        missing = sorted(set(survivors) - listed)
        assert not missing, f"{len(missing)} acknowledged objects lost, e.g. {missing[:5]}"
        for key, body in survivors.items():
            assert fresh.get_object(Bucket=bucket, Key=key)["Body"].read() == body, key
        for key in listed - set(survivors):  # committed but not answered before the kill: its bytes are there too
            assert len(fresh.get_object(Bucket=bucket, Key=key)["Body"].read()) == 1024, key
    finally:
        stop(proc2)


def test_a_small_put_is_checked_before_any_byte_is_written(gateway: Gateway, s3: Any, bucket: str) -> None:
    """A body of a few KiB is read whole and checked on the event loop before its blob is queued for a syncfs
    round: one refused by its Content-MD5 leaves no file on the tier; one accepted is there and is the object."""
    tier = gateway.tier_dirs["hot-disk"]
    before = set(blob_files(tier)) | {p.name for p in (tier / "tmp").iterdir()}
    body = b"x" * 1500
    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    with pytest.raises(ClientError) as exc:
        s3.put_object(Bucket=bucket, Key="small/refused", Body=body, ContentMD5=wrong)
    assert exc.value.response["Error"]["Code"] == "BadDigest"
    assert set(blob_files(tier)) | {p.name for p in (tier / "tmp").iterdir()} == before
    s3.put_object(Bucket=bucket, Key="small/kept", Body=body,
                  ContentMD5=base64.b64encode(hashlib.md5(body).digest()).decode())
    assert s3.get_object(Bucket=bucket, Key="small/kept")["Body"].read() == body
    (row,) = [r for r in catalog_rows(bucket) if r[0] == "small/kept"]
    assert row[1] == len(body) and (tier / "blobs").exists() and len(blob_files(tier)) == len(before) + 1
