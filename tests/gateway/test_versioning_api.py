"""The dashboard's API for versions: bucket settings, versioning switched on and off, an object's versions
and delete markers; a delete through the API makes a marker and respects object lock. The data comes in
through a real gateway (boto3), the API is the app in process, signed in as the same user."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from botocore.client import BaseClient
from fastapi.testclient import TestClient

from tests.conftest import login


@pytest.fixture(scope="module")
def api(gateway: object) -> Iterator[TestClient]:
    """alice (the gateway tests' member) signed in to the API; no table is emptied afterwards."""
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield login(c, "alice", "alice-password-1")


def test_versions_of_an_object_and_versioning_switch(api: TestClient, s3: BaseClient, bucket: str) -> None:
    assert api.get(f"/api/buckets/{bucket}/settings").json()["versioning"] is None
    r = api.put(f"/api/buckets/{bucket}/versioning", json={"status": "Enabled"})
    assert r.status_code == 200 and r.json()["versioning"] == "Enabled"
    assert api.put(f"/api/buckets/{bucket}/versioning", json={"status": "Maybe"}).status_code == 422
    ids = [s3.put_object(Bucket=bucket, Key="data/x", Body=b"v" * n)["VersionId"] for n in (1, 2)]
    s3.put_object(Bucket=bucket, Key="data/x2", Body=b"other key")
    assert api.delete(f"/api/buckets/{bucket}/object", params={"key": "data/x"}).status_code == 204
    listed = api.get(f"/api/buckets/{bucket}/versions", params={"key": "data/x"}).json()
    assert [(v["delete_marker"], v["is_latest"]) for v in listed] == [(True, True), (False, False), (False, False)]
    assert [v["version_id"] for v in listed[1:]] == ids[::-1] and [v["size"] for v in listed[1:]] == [2, 1]
    assert api.get(f"/api/buckets/{bucket}/versions", params={"key": ""}).status_code == 422


def test_api_delete_in_a_lock_bucket_leaves_the_held_version(api: TestClient, s3: BaseClient) -> None:
    locked = f"t-lock-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=locked, ObjectLockEnabledForBucket=True)
    s3.put_bucket_versioning(Bucket=locked, VersioningConfiguration={"Status": "Enabled"})
    vid = s3.put_object(Bucket=locked, Key="k", Body=b"x", ObjectLockLegalHoldStatus="ON")["VersionId"]
    settings = api.get(f"/api/buckets/{locked}/settings").json()
    assert settings["object_lock"] is True
    assert api.put(f"/api/buckets/{locked}/versioning", json={"status": "Suspended"}).status_code == 409
    assert api.delete(f"/api/buckets/{locked}/object", params={"key": "k"}).status_code == 204  # a marker only
    assert s3.get_object(Bucket=locked, Key="k", VersionId=vid)["Body"].read() == b"x"
