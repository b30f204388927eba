"""A full data-dir disk: a gateway whose data dir (its metric files) and tier share a small file system the test
makes (tmpfs) and fills. Reads go on, writes are refused with an error that names the cause, the process lives
(metric files never take the data path down: no SIGBUS), a gateway started while the disk is full serves reads,
and writes work again once space is freed."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, start_gateway, stop

SIZE_MIB = 24


@pytest.fixture
def small_fs() -> Iterator[Path]:
    """A tmpfs of SIZE_MIB mounted for the test and removed after it (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    where = Path(tempfile.mkdtemp(prefix="tierpilot-fullfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MIB}m", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        where.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
        where.rmdir()


def _fill(path: Path) -> None:
    """Write ``path`` until the file system has no byte left."""
    chunk = b"\0" * (64 << 10)
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0")
        except OSError:
            pass


def test_a_full_data_dir_keeps_reads_and_refuses_writes_by_name(gateway: Gateway, db_url: str, data_dir: Path,
                                                                small_fs: Path) -> None:
    from tierpilot.drivers import registry
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    tier_name = f"small-{uuid.uuid4().hex[:8]}"
    with transaction(write=True) as s:
        tier = tiers.create(s, TierCreate(name=tier_name, driver="posix", config={"path": str(small_fs / "tier")},
                                          storage_classes=["STANDARD"]))
        registry.claim_location(tier)
    env = {"TIERPILOT_DATA_DIR": str(small_fs / "data"), "TIERPILOT_DEFAULT_TIER": tier_name}
    log = data_dir / f"gateway-fullfs-{uuid.uuid4().hex[:8]}.log"
    saved_multiproc = os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)  # the gateway's own: under its data dir
    try:
        url, proc = start_gateway(db_url, log, env)
        u = gateway.users["alice"]

        def client(endpoint: str) -> Any:
            return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=u.access_key_id,
                                aws_secret_access_key=u.secret_access_key, region_name="us-east-1",
                                config=Config(retries={"max_attempts": 1}))

        s3 = client(url)
        bucket = f"full-{uuid.uuid4().hex[:10]}"
        s3.create_bucket(Bucket=bucket)
        stored = {f"k{i}": os.urandom(40_000 + i) for i in range(5)}
        for key, body in stored.items():
            s3.put_object(Bucket=bucket, Key=key, Body=body)

        _fill(small_fs / "filler")
        codes = set()
        for i in range(20):  # small and larger bodies: the tier's write and the metric files both meet the full disk
            with pytest.raises(ClientError) as refused:
                s3.put_object(Bucket=bucket, Key=f"new{i}", Body=os.urandom(1 << (10 + i % 8)))
            codes.add((refused.value.response["ResponseMetadata"]["HTTPStatusCode"],
                       refused.value.response["Error"]["Code"]))
        assert codes == {(507, "InsufficientCapacity")}
        for key, body in stored.items():
            assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body
            s3.head_object(Bucket=bucket, Key=key)
        assert proc.poll() is None, log.read_text()[-3000:]

        # killed and started again while the disk is still full: it serves reads
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        url, proc = start_gateway(db_url, log, env)
        s3 = client(url)
        for key, body in stored.items():
            assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == body
        assert proc.poll() is None, log.read_text()[-3000:]

        (small_fs / "filler").unlink()
        s3.put_object(Bucket=bucket, Key="after", Body=b"space again")
        assert s3.get_object(Bucket=bucket, Key="after")["Body"].read() == b"space again"
        for key in [*stored, "after"]:
            s3.delete_object(Bucket=bucket, Key=key)
        s3.delete_bucket(Bucket=bucket)
        stop(proc)
    finally:
        if saved_multiproc is not None:
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = saved_multiproc
