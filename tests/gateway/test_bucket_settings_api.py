"""The dashboard's bucket settings API: CORS rules edited as JSON take effect in the gateway's preflight, bad
rules are 422s naming the rule, default retention of a lock bucket, and another member's bucket is not theirs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import requests
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from fastapi.testclient import TestClient

from tests.conftest import login
from tests.gateway.conftest import Gateway


@pytest.fixture(scope="module")
def api(gateway: object) -> Iterator[TestClient]:
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield login(c, "alice", "alice-password-1")


def test_cors_rules_from_the_api_answer_the_gateways_preflight(api: TestClient, gateway: Gateway, s3: BaseClient,
                                                              bucket: str) -> None:
    assert api.get(f"/api/buckets/{bucket}/settings").json()["cors"] is None
    rules = [{"origins": ["https://*.example.org"], "methods": ["GET", "PUT"], "headers": ["*"],
              "expose": ["ETag"], "max_age": 300, "id": "lab"}]
    r = api.put(f"/api/buckets/{bucket}/cors", json={"rules": rules})
    assert r.status_code == 200 and r.json()["cors"] == rules
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"][0]["AllowedOrigins"] == ["https://*.example.org"]
    preflight = requests.options(f"{gateway.url}/{bucket}/k", timeout=10, headers={
        "Origin": "https://lab.example.org", "Access-Control-Request-Method": "PUT"})
    assert preflight.status_code == 200 and preflight.headers["access-control-max-age"] == "300"
    assert api.delete(f"/api/buckets/{bucket}/cors").json()["cors"] is None


@pytest.mark.parametrize(("rules", "names"), [
    ([{"origins": ["*"], "methods": ["PATCH"]}], "rules[0].methods"),
    ([{"origins": ["*"], "methods": ["GET"]}, {"origins": ["a*b*"], "methods": ["GET"]}], "rules[1].origins"),
    ([{"origins": [], "methods": ["GET"]}], "origins"),
    ([], "rules"),
])
def test_bad_cors_rules_are_422_naming_the_field(api: TestClient, bucket: str, rules: list[object],
                                                 names: str) -> None:
    r = api.put(f"/api/buckets/{bucket}/cors", json={"rules": rules})
    assert r.status_code == 422 and names in r.text
    assert api.get(f"/api/buckets/{bucket}/settings").json()["cors"] is None


def test_default_retention_only_on_a_lock_bucket(api: TestClient, s3: BaseClient, bucket: str) -> None:
    assert api.put(f"/api/buckets/{bucket}/lock", json={"mode": "GOVERNANCE", "days": 1}).status_code == 409
    locked = f"t-lock-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=locked, ObjectLockEnabledForBucket=True)
    r = api.put(f"/api/buckets/{locked}/lock", json={"mode": "COMPLIANCE", "years": 2})
    assert r.status_code == 200
    assert (r.json()["default_retention_mode"], r.json()["default_retention_years"]) == ("COMPLIANCE", 2)
    rule = s3.get_object_lock_configuration(Bucket=locked)["ObjectLockConfiguration"]["Rule"]
    assert rule["DefaultRetention"] == {"Mode": "COMPLIANCE", "Years": 2}
    assert api.put(f"/api/buckets/{locked}/lock", json={"mode": "GOVERNANCE", "days": 1, "years": 1}).status_code == 422
    assert api.put(f"/api/buckets/{locked}/lock", json={"mode": "FOREVER", "days": 1}).status_code == 422


def test_another_members_bucket_settings_are_refused(gateway: Gateway, api: TestClient) -> None:
    theirs = f"t-bob-{uuid.uuid4().hex[:8]}"
    gateway.client("bob").create_bucket(Bucket=theirs)
    for method, path, body in (("get", "settings", None), ("put", "cors", {"rules": [{"origins": ["*"],
                                                                                     "methods": ["GET"]}]}),
                               ("put", "lock", {"mode": None})):
        r = api.request(method.upper(), f"/api/buckets/{theirs}/{path}", json=body)
        assert r.status_code in (403, 404), (path, r.status_code)
    with pytest.raises(ClientError) as e:  # bob's bucket still has no CORS
        gateway.client("bob").get_bucket_cors(Bucket=theirs)
    assert e.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"
