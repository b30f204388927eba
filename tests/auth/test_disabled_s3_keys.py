"""A disabled user's S3 keys stop at once on a gateway that had them cached.

The gateway caches credentials (TIERPILOT_GATEWAY_CACHE_S, 60 s here so the window cannot close during the
test); before, a disabled or demoted user's keys kept working for that long. Now the API bumps a generation in
Redis after committing the change and before answering; the gateway reads it per request and drops its cache
when it moved.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from fastapi.testclient import TestClient

from tests.conftest import login, make_user
from tests.gateway.conftest import start_gateway, stop
from tierpilot.kit.settings import get_settings

TRIALS = 20


@pytest.fixture
def redis_api(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The in-process API publishes on the suite's Redis."""
    monkeypatch.setenv("TIERPILOT_REDIS_URL", redis_url)
    get_settings.cache_clear()
    yield redis_url
    monkeypatch.delenv("TIERPILOT_REDIS_URL")
    get_settings.cache_clear()


@pytest.fixture
def cached_gateway(db: str, redis_api: str, data_dir: Path) -> Iterator[str]:
    from tierpilot.kit.db import transaction
    from tierpilot.tiers import service as tiers
    from tierpilot.tiers.schemas import TierCreate

    with transaction(write=True) as s:
        tiers.create(s, TierCreate(name="hot-disk", driver="posix", storage_classes=["STANDARD"],
                                   config={"path": f"keys-{uuid.uuid4().hex[:8]}/hot"}))
    log = data_dir / f"gateway-keys-{uuid.uuid4().hex[:8]}.log"
    url, proc = start_gateway(db, log, {"TIERPILOT_REDIS_URL": redis_api, "TIERPILOT_GATEWAY_CACHE_S": "60"})
    yield url
    stop(proc)


def _s3(url: str, user: dict[str, str]) -> BaseClient:
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=user["access_key_id"],
                        aws_secret_access_key=user["secret_access_key"], region_name="us-east-1")


def _code(call: object) -> str:
    with pytest.raises(ClientError) as exc:
        call()  # type: ignore[operator]
    return str(exc.value.response["Error"]["Code"])


def test_disabling_a_user_stops_their_cached_s3_keys_at_once(cached_gateway: str, app_client: TestClient,
                                                             admin_user: dict[str, str]) -> None:
    admin = login(app_client, admin_user["username"], admin_user["password"])
    carol = make_user("carol", "carol-password-1")
    s3 = _s3(cached_gateway, carol)
    refused_at_once = 0
    for _ in range(TRIALS):
        s3.list_buckets()  # cached now
        assert admin.patch(f"/api/users/{carol['id']}", json={"disabled": True}).status_code == 200
        code = _code(s3.list_buckets)  # the very next request, no wait
        assert code == "AllAccessDisabled", code
        refused_at_once += 1
        assert admin.patch(f"/api/users/{carol['id']}", json={"disabled": False}).status_code == 200
    assert refused_at_once == TRIALS
    s3.list_buckets()  # enabled again: the keys work


def test_deleted_key_and_demotion_reach_the_gateway_at_once(cached_gateway: str, app_client: TestClient,
                                                            admin_user: dict[str, str]) -> None:
    admin = login(app_client, admin_user["username"], admin_user["password"])
    dave = make_user("dave", "dave-password-1", is_admin=True)
    carol = make_user("carol", "carol-password-1")
    carol_s3, dave_s3 = _s3(cached_gateway, carol), _s3(cached_gateway, dave)
    carol_s3.create_bucket(Bucket="carols")
    assert dave_s3.list_objects_v2(Bucket="carols")["KeyCount"] == 0  # an admin reaches any bucket; cached
    assert admin.patch(f"/api/users/{dave['id']}", json={"role": "member"}).status_code == 200
    assert _code(lambda: dave_s3.list_objects_v2(Bucket="carols")) == "AccessDenied"
    assert admin.delete(f"/api/keys/{carol['access_key_id']}").status_code == 204
    assert _code(carol_s3.list_buckets) == "InvalidAccessKeyId"
