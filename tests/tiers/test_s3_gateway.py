"""The s3 driver against tierpilot's own gateway (a real S3 implementation with SigV4, aws-chunked
bodies and archive semantics), and a gateway whose bucket lives on an s3 tier served by a second one."""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.client import BaseClient

from tests.conftest import _truncate_all
from tests.gateway.conftest import start_gateway, stop
from tests.waiting import wait_until
from tierpilot.drivers.base import BlobNotFound, NotRestored, PartInfo, RestoreInProgress
from tierpilot.drivers.s3 import S3Driver

MiB = 1 << 20


@dataclass
class Backend:
    url: str
    access_key_id: str
    secret_access_key: str
    tag: str


@pytest.fixture(scope="module")
def backend(db_url: str, data_dir: Path) -> Iterator[Backend]:
    """A gateway with a hot posix tier and an offline archive tier (1-3 s recalls), and a user.

    Buckets name their tier at creation (x-tierpilot-tier): the gateway's default tier is not among these.
    """
    from tierpilot.auth import service as auth
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import RestoreDelays, TierCreate

    tag = uuid.uuid4().hex[:8]
    with transaction(write=True) as s:
        _user, key = auth.create_user(s, f"store-{tag}", "store-password-1")
        tiers.create(s, TierCreate(name=f"hot-{tag}", driver="posix", config={"path": f"s3gw-{tag}/hot"},
                                   storage_classes=["STANDARD", "STANDARD_IA"]))
        tiers.create(s, TierCreate(name=f"archive-{tag}", driver="posix", config={"path": f"s3gw-{tag}/archive"},
                                   storage_classes=["GLACIER", "DEEP_ARCHIVE"], offline=True,
                                   restore_delays=RestoreDelays(expedited=1, standard=2, bulk=3)))
    url, proc = start_gateway(db_url, data_dir / f"s3-backend-{tag}.log")
    yield Backend(url, key.access_key_id, key.secret_access_key, tag)
    stop(proc)
    _truncate_all()


def _client(backend: Backend) -> BaseClient:
    return boto3.client("s3", endpoint_url=backend.url, aws_access_key_id=backend.access_key_id,
                        aws_secret_access_key=backend.secret_access_key, region_name="us-east-1")


@pytest.fixture
def driver(backend: Backend) -> S3Driver:
    bucket = f"tier-{uuid.uuid4().hex[:12]}"
    _create_bucket_on_tier(_client(backend), bucket, f"hot-{backend.tag}")
    return S3Driver("remote", endpoint_url=backend.url, bucket=bucket, prefix="blobs/",
                    access_key_id=backend.access_key_id, secret_access_key=backend.secret_access_key,
                    part_size=8 * MiB)


def _read(driver: S3Driver, locator: str, start: int = 0, end: int | None = None) -> bytes:
    return b"".join(driver.open(locator, start, end))


LOCATORS = ["b/plain~1", "b/../up~2", "b//double~3", "b/dir/~4", "b/ünï/日本~5", "b/" + "é" * 700 + "~6",
            "b/" + "seg/" * 240 + "deep~7"]


def test_data_path_through_the_gateway(driver: S3Driver) -> None:
    data = os.urandom(2 * MiB + 3)
    for i, locator in enumerate(LOCATORS):
        result = driver.put(locator, iter([data, str(i).encode()]), "CRC32")
        assert result.md5_hex == hashlib.md5(data + str(i).encode()).hexdigest()
    assert sorted(b.locator for b in driver.list()) == sorted(LOCATORS)
    assert [b.locator for b in driver.list("b/ünï/")] == ["b/ünï/日本~5"]
    for i, locator in enumerate(LOCATORS):
        assert _read(driver, locator) == data + str(i).encode()
        assert _read(driver, locator, MiB, MiB + 9) == data[MiB:MiB + 10]
        assert driver.head(locator).size == len(data) + 1
    for locator in LOCATORS:
        driver.delete(locator)
        driver.delete(locator)
    assert list(driver.list()) == []
    with pytest.raises(BlobNotFound):
        driver.open("b/plain~1")


def test_large_put_and_server_side_part_join_through_the_gateway(driver: S3Driver) -> None:
    data = os.urandom(19 * MiB)
    assert driver.put("b/big~1", iter([data[i:i + MiB] for i in range(0, len(data), MiB)])).size == len(data)
    assert hashlib.md5(_read(driver, "b/big~1")).digest() == hashlib.md5(data).digest()

    payloads = [os.urandom(6 * MiB), os.urandom(5 * MiB), b"tail"]
    parts: list[PartInfo] = []
    for n, payload in enumerate(payloads, start=1):
        parts.append(driver.put_part("up-1", n, iter([payload]))[0])
    seen: list[str] = []
    driver.client.meta.events.register("before-call.s3", lambda model, **_: seen.append(model.name))
    assert driver.complete_multipart("up-1", "b/joined~2", parts) == sum(map(len, payloads))
    assert "UploadPartCopy" in seen and "GetObject" not in seen
    assert _read(driver, "b/joined~2") == b"".join(payloads)
    driver.abort_multipart("up-1")
    assert sorted(b.locator for b in driver.list()) == ["b/big~1", "b/joined~2"]
    copy = driver.copy_from(driver, "b/joined~2", "b/copy~3", storage_class="STANDARD_IA")
    assert copy.size == sum(map(len, payloads)) and driver.head("b/copy~3").storage_class == "STANDARD_IA"


def test_archive_restore_through_the_gateway(driver: S3Driver, backend: Backend) -> None:
    driver.put("b/cold~1", iter([b"frozen bytes"]), storage_class="GLACIER")
    assert driver.head("b/cold~1").storage_class == "GLACIER"
    with pytest.raises(NotRestored):
        driver.open("b/cold~1")
    started = time.monotonic()
    first = driver.restore("b/cold~1", 1, "standard")
    assert first.accepted and first.ongoing
    with pytest.raises(RestoreInProgress):  # 409 RestoreAlreadyInProgress
        driver.restore("b/cold~1", 1, "standard")
    assert driver.restore_status("b/cold~1").ongoing
    assert driver.restore("b/cold~1", 1, "expedited").accepted  # an upgrade is accepted
    # the gateway's HeadObject reports the catalog, which the restores worker updates; GET asks the tier
    def restored() -> bool:
        try:
            assert _read(driver, "b/cold~1") == b"frozen bytes"
            return True
        except NotRestored:
            return False

    wait_until(restored, message="the restore did not complete")
    assert time.monotonic() - started >= 0.9  # not before its delay
    again = driver.restore("b/cold~1", 3, "bulk")  # 200: already restored, expiry moved
    assert (again.accepted, again.restored) == (False, True)
    status = driver.restore_status("b/cold~1")
    assert status.restored and status.expiry is not None and (status.expiry.hour, status.expiry.minute) == (0, 0)
    assert again.expiry == status.expiry


def _create_bucket_on_tier(client: BaseClient, bucket: str, tier: str) -> None:
    def add_tier_header(request: Any, **_: Any) -> None:
        request.headers["x-tierpilot-tier"] = tier

    client.meta.events.register("before-sign.s3.CreateBucket", add_tier_header)
    try:
        client.create_bucket(Bucket=bucket)
    finally:
        client.meta.events.unregister("before-sign.s3.CreateBucket", add_tier_header)


def test_a_gateway_bucket_on_an_s3_tier_served_by_a_second_gateway(backend: Backend, db_url: str,
                                                                  data_dir: Path) -> None:
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    remote_bucket = f"remote-{backend.tag}"
    _create_bucket_on_tier(_client(backend), remote_bucket, f"hot-{backend.tag}")
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(
            name=f"remote-{backend.tag}", driver="s3", storage_classes=["STANDARD"],
            config={"endpoint_url": backend.url, "bucket": remote_bucket, "prefix": "front",
                    "access_key_id": backend.access_key_id, "secret_access_key": backend.secret_access_key,
                    "part_size": 8 * MiB}))
    url, proc = start_gateway(db_url, data_dir / f"s3-front-{backend.tag}.log")
    try:
        front = boto3.client("s3", endpoint_url=url, aws_access_key_id=backend.access_key_id,
                             aws_secret_access_key=backend.secret_access_key, region_name="us-east-1")
        _create_bucket_on_tier(front, "front-bucket", f"remote-{backend.tag}")
        data = os.urandom(12 * MiB + 1)
        front.put_object(Bucket="front-bucket", Key="dir/obj ünï", Body=data)
        got = front.get_object(Bucket="front-bucket", Key="dir/obj ünï", Range="bytes=5-104")["Body"].read()
        assert got == data[5:105]
        assert front.get_object(Bucket="front-bucket", Key="dir/obj ünï")["Body"].read() == data
        # the bytes live on the backend gateway, under the tier's prefix
        stored = _client(backend).list_objects_v2(Bucket=remote_bucket)["Contents"]
        assert [o["Size"] for o in stored] == [len(data)] and stored[0]["Key"].startswith("front/")
        front.delete_object(Bucket="front-bucket", Key="dir/obj ünï")
        assert _client(backend).list_objects_v2(Bucket=remote_bucket).get("Contents", []) == []
    finally:
        stop(proc)
