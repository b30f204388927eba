"""Adopting an Azure container and a GCS bucket in place: every key, size and MD5 ETag in the catalog, a GET of an
adopted object through a real gateway with boto3, and a re-scan (beat's way) that adds new keys and deletes the
ones gone from the remote; the API queues the scan for a real worker and answers bad input with 422s."""

from __future__ import annotations

import hashlib
import subprocess
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from azure.storage.blob import BlobServiceClient, ContainerClient
from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.emulators import AZURITE_KEY, Emulator, azurite_connection_string
from tests.gateway.conftest import start_gateway, stop
from tests.waiting import wait_until
from tierpilot.adoption import repository as adoptions
from tierpilot.adoption import service as adoption
from tierpilot.catalog.models import Bucket, Object
from tierpilot.drivers import registry
from tierpilot.drivers.gcs import GCSDriver
from tierpilot.kit.db import transaction

# Azure keeps a blob name as given unless a segment is "." / ".." or ends with a dot: those stay out;
# fake-gcs-server stores a name segment as a file name (255 bytes at most)
KEYS = ["top.txt", "z", "d0/0", "d0/1zzz", "d0/~", "d0/zz/deeper/x", "d1/é-ünï", "d1/" + "a" * 200, "d1/%41 percent",
        "d1/sp ace"] + [f"p{i % 4}/k{i:04d}" for i in range(160)]


@dataclass
class Remote:
    """One remote bucket on an emulator, the tier over the same account or endpoint, and ways to change it."""

    kind: str
    tier: str
    bucket: str
    put: Any
    remove: Any


@pytest.fixture(scope="module")
def gateway(db_url: str, data_dir: Path) -> Iterator[str]:
    log = data_dir / f"adopt-gateway-{uuid.uuid4().hex[:6]}.log"
    url, proc = start_gateway(db_url, log)
    yield url
    stop(proc)


def _azure_remote(azurite: Emulator, tag: str) -> Remote:
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    service = BlobServiceClient.from_connection_string(azurite_connection_string(azurite.url))
    service.create_container(f"tier-{tag}")
    remote: ContainerClient = service.create_container(f"old-{tag}")
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=f"az-{tag}", driver="azure", storage_classes=["HOT", "COOL"], config={
            "account_url": azurite.url, "container": f"tier-{tag}", "account_key": AZURITE_KEY, "prefix": "t"}))
    return Remote("azure", f"az-{tag}", f"old-{tag}",
                  put=lambda key, body: remote.upload_blob(key, body, overwrite=True),
                  remove=lambda key: remote.delete_blob(key))


def _gcs_remote(fake_gcs: Emulator, tag: str) -> Remote:
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    client = GCSDriver("setup", bucket=f"tier-{tag}", endpoint_url=fake_gcs.url).client
    client.create_bucket(f"tier-{tag}")
    bucket = client.create_bucket(f"old-{tag}")
    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name=f"gcs-{tag}", driver="gcs", storage_classes=["STANDARD", "COLDLINE"],
                                   config={"bucket": f"tier-{tag}", "endpoint_url": fake_gcs.url, "prefix": "t"}))
    return Remote("gcs", f"gcs-{tag}", f"old-{tag}",
                  put=lambda key, body: bucket.blob(key).upload_from_string(body),
                  remove=lambda key: bucket.blob(key).delete())


@pytest.fixture(params=["azure", "gcs"])
def remote(request: pytest.FixtureRequest, db: str, azurite: Emulator, fake_gcs: Emulator) -> Remote:
    tag = uuid.uuid4().hex[:8]
    made = _azure_remote(azurite, tag) if request.param == "azure" else _gcs_remote(fake_gcs, tag)
    registry.tiers.invalidate()
    return made


def _fill(remote: Remote, keys: list[str]) -> dict[str, tuple[int, str]]:
    """Upload ``keys`` (distinct small bodies); key -> (size, MD5 hex)."""
    bodies = {key: f"{key}:{i}".encode() * (1 + i % 5) for i, key in enumerate(keys)}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda kv: remote.put(*kv), bodies.items()))
    return {key: (len(body), hashlib.md5(body).hexdigest()) for key, body in bodies.items()}


def _catalog(bucket: str) -> dict[str, tuple[int, str]]:
    with transaction() as s:
        bucket_id = s.scalar(select(Bucket.id).where(Bucket.name == bucket))
        return {k: (size, etag) for k, size, etag in s.execute(
            select(Object.key, Object.size, Object.etag).where(Object.bucket_id == bucket_id))}


def test_adopted_container_lists_every_key_size_and_md5_and_serves_them_through_the_gateway(
        remote: Remote, gateway: str) -> None:
    from tierpilot.auth import service as auth

    with transaction(write=True) as s:
        user, key = auth.create_user(s, f"adopter-{remote.kind}", "adopter-password-1")
        owner_id = user.id
    expected = _fill(remote, KEYS)
    progress = adoption.adopt(remote.tier, remote.bucket, into=f"mine-{remote.bucket}", owner_id=owner_id,
                              workers=4, page_size=25)
    assert _catalog(f"mine-{remote.bucket}") == expected
    assert progress.objects == progress.added == len(KEYS) and progress.removed == 0
    assert progress.ranges_total == progress.ranges_done == 6  # d0/ d1/ p0/ .. p3/ listed beside each other

    s3 = boto3.client("s3", endpoint_url=gateway, aws_access_key_id=key.access_key_id,
                      aws_secret_access_key=key.secret_access_key, region_name="us-east-1")
    got = s3.get_object(Bucket=f"mine-{remote.bucket}", Key="d1/é-ünï")
    body = got["Body"].read()
    assert (len(body), hashlib.md5(body).hexdigest()) == expected["d1/é-ünï"]
    assert got["ETag"].strip('"') == expected["d1/é-ünï"][1]
    ranged = s3.get_object(Bucket=f"mine-{remote.bucket}", Key="p1/k0001", Range="bytes=2-5")["Body"].read()
    assert ranged == f"p1/k0001:{KEYS.index('p1/k0001')}".encode()[2:6]

    # the remote changes; beat's re-scan (period 0: due at once) adds the new key and forgets the deleted one
    remote.remove("d0/0")
    added = _fill(remote, ["d2/new"])
    with transaction(write=True) as s:
        due = adoptions.queue_due(s, 0.0)
    assert len(due) == 1
    rescan = adoption.run_queued(due[0], workers=4, page_size=25)
    assert adoption.run_queued(due[0]) is None  # a second delivery finds it claimed
    assert rescan is not None and (rescan.added, rescan.removed) == (1, 1)
    want = {k: v for k, v in expected.items() if k != "d0/0"} | added
    assert _catalog(f"mine-{remote.bucket}") == want
    with transaction() as s:
        row = adoptions.get(s, due[0])
        assert row is not None and row.state == "done" and row.listed == len(want) and row.scanned_at is not None
        bucket = s.scalar(select(Bucket).where(Bucket.name == f"mine-{remote.bucket}"))
        assert bucket is not None and bucket.object_count == len(want)
        assert bucket.used_bytes == sum(size for size, _ in want.values())


def _wait_done(client: TestClient, tier_id: int, job_id: int) -> dict[str, Any]:
    def finished() -> dict[str, Any] | None:
        job = dict(client.get(f"/api/tiers/{tier_id}/adopt/{job_id}").json())
        return job if job["state"] in ("done", "failed") else None

    return wait_until(finished, message=f"adoption {job_id} not finished")


def test_api_queues_an_adoption_for_the_worker_and_reports_its_progress(
        client: TestClient, member_client: TestClient, fake_gcs: Emulator, redis_url: str,
        celery_worker_process: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    tag = uuid.uuid4().hex[:8]
    remote = _gcs_remote(fake_gcs, tag)
    registry.tiers.invalidate()
    expected = _fill(remote, [f"k/{i}" for i in range(30)] + ["top"])
    tier_id = next(t["id"] for t in client.get("/api/tiers").json() if t["name"] == remote.tier)

    r = client.post(f"/api/tiers/{tier_id}/adopt", json={"bucket": remote.bucket, "into": f"api-{tag}",
                                                          "owner": "member"})
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["state"] == "queued" and job["bucket"] == f"api-{tag}" and job["remote_bucket"] == remote.bucket
    # the API's own broker may be another Redis: hand the job to the test worker too (the claim runs it once)
    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis_url)
    from tierpilot.kit.jobs import make_celery
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    try:
        make_celery().send_task("tiers.adopt", args=[job["id"]])
    finally:
        get_settings.cache_clear()
    done = _wait_done(client, tier_id, job["id"])
    assert celery_worker_process.poll() is None
    assert done["state"] == "done", done
    assert (done["listed"], done["added"], done["removed"]) == (31, 31, 0)
    assert _catalog(f"api-{tag}") == expected
    assert [j["id"] for j in client.get(f"/api/tiers/{tier_id}/adopt").json()] == [job["id"]]
    # the member owns the new bucket and sees it; only admins adopt or read the jobs
    assert f"api-{tag}" in {b["name"] for b in member_client.get("/api/buckets").json()}
    assert member_client.get(f"/api/tiers/{tier_id}/adopt/{job['id']}").status_code == 403
    assert member_client.post(f"/api/tiers/{tier_id}/adopt", json={"bucket": remote.bucket}).status_code == 403


def test_bad_adoption_requests_are_422_naming_the_field_and_change_nothing(client: TestClient,
                                                                          fake_gcs: Emulator) -> None:
    tag = uuid.uuid4().hex[:8]
    remote = _gcs_remote(fake_gcs, tag)
    registry.tiers.invalidate()
    tier_id = next(t["id"] for t in client.get("/api/tiers").json() if t["name"] == remote.tier)
    GCSDriver("setup", bucket=remote.bucket, endpoint_url=fake_gcs.url).client.create_bucket(f"under_{tag}")
    cases = [
        ({"bucket": f"under_{tag}"}, "into"),  # a fine GCS name, not a local one: into must name the bucket
        ({"bucket": "Bad_Name"}, "bucket"),
        ({"bucket": "a"}, "bucket"),
        ({"bucket": f"missing-{tag}"}, "bucket"),
        ({"bucket": remote.bucket, "into": "UPPER"}, "into"),
        ({"bucket": remote.bucket, "owner": "nobody-here"}, "owner"),
        ({"bucket": remote.bucket, "extra": 1}, "extra"),
        ({}, "bucket"),
    ]
    for body, field in cases:
        r = client.post(f"/api/tiers/{tier_id}/adopt", json=body)
        assert r.status_code == 422, (body, r.text)
        assert field in r.text, (body, r.text)
    assert client.post("/api/tiers/999999/adopt", json={"bucket": remote.bucket}).status_code == 404
    assert client.get(f"/api/tiers/{tier_id}/adopt/999999").status_code == 404
    assert client.get(f"/api/tiers/{tier_id}/adopt").json() == []
    assert client.get("/api/buckets").json() == []
    # a bucket that another adoption mirrors is not pointed at a second remote bucket
    GCSDriver("setup", bucket=remote.bucket, endpoint_url=fake_gcs.url).client.create_bucket(f"two-{tag}")
    assert client.post(f"/api/tiers/{tier_id}/adopt", json={"bucket": remote.bucket, "into": f"l-{tag}"}
                       ).status_code == 202
    r = client.post(f"/api/tiers/{tier_id}/adopt", json={"bucket": f"two-{tag}", "into": f"l-{tag}"})
    assert r.status_code == 422 and "into" in r.text
