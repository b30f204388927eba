"""The Browser's API on a bucket shared with the caller: exactly the rights the sharing grants, decided by the
sharing domain as the gateway decides them (a grant to read lists and downloads; read-write also uploads and
deletes), and for a user the bucket is not shared with, the answers of a bucket that does not exist.

(Named to run before the gateway tests of this package: their package-scoped gateways keep their tiers until
the package ends, and the catalog's ``tiers`` fixture makes tiers of the same names.)"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.catalog.conftest import tiers  # noqa: F401  (fixture)
from tests.conftest import login, make_user
from tests.sharing.conftest import store_policy_directly
from tierpilot.tiers.models import Tier

PASSWORD = "grantee-password-123"


@pytest.fixture
def shared(member_client: TestClient, tiers: dict[str, Tier]) -> str:  # noqa: F811
    """The member's bucket with two objects, shared with nobody yet; users carol and dave exist."""
    assert member_client.post("/api/buckets", json={"name": "team-data"}).status_code == 201
    for key, body in (("runs/a.csv", b"1,2,3"), ("readme.txt", b"hello")):
        r = member_client.post("/api/buckets/team-data/objects", params={"key": key}, content=body)
        assert r.status_code == 201, r.text
    make_user("carol", PASSWORD)
    make_user("dave", PASSWORD)
    return "team-data"


@pytest.fixture
def carol(member_client: TestClient) -> Iterator[TestClient]:
    with TestClient(member_client.app, base_url="http://127.0.0.1") as c:
        yield login(c, "carol", PASSWORD)


@pytest.fixture
def dave(member_client: TestClient) -> Iterator[TestClient]:
    with TestClient(member_client.app, base_url="http://127.0.0.1") as c:
        yield login(c, "dave", PASSWORD)


def _statuses(c: TestClient, bucket: str) -> dict[str, int]:
    """One call of each Browser operation on the bucket, by its HTTP status."""
    return {
        "list": c.get(f"/api/buckets/{bucket}/objects", params={"prefix": "runs/"}).status_code,
        "detail": c.get(f"/api/buckets/{bucket}/object", params={"key": "runs/a.csv"}).status_code,
        "download": c.get(f"/api/buckets/{bucket}/object/content", params={"key": "runs/a.csv"}).status_code,
        "versions": c.get(f"/api/buckets/{bucket}/versions", params={"key": "runs/a.csv"}).status_code,
        "upload": c.post(f"/api/buckets/{bucket}/objects", params={"key": "runs/new.csv"},
                         content=b"4,5").status_code,
        "folder": c.post(f"/api/buckets/{bucket}/folders", json={"prefix": "more/"}).status_code,
        "delete": c.delete(f"/api/buckets/{bucket}/object", params={"key": "readme.txt"}).status_code,
        "settings": c.get(f"/api/buckets/{bucket}/settings").status_code,
    }


def test_a_read_grant_lets_the_grantee_list_and_download_and_nothing_more(
        member_client: TestClient, shared: str, carol: TestClient, dave: TestClient) -> None:
    assert member_client.put(f"/api/buckets/{shared}/sharing/users/carol", json={"access": "read"}).status_code == 200
    assert _statuses(carol, shared) == {"list": 200, "detail": 200, "download": 200, "versions": 200,
                                        "upload": 403, "folder": 403, "delete": 403, "settings": 403}
    listing = carol.get(f"/api/buckets/{shared}/objects").json()
    assert listing["folders"] == ["runs/"] and [o["key"] for o in listing["objects"]] == ["readme.txt"]
    assert carol.get(f"/api/buckets/{shared}/object/content", params={"key": "readme.txt"}).content == b"hello"
    [entry] = carol.get("/api/sharing/with-me").json()
    assert (entry["bucket"], entry["may_list"], entry["may_read"], entry["may_write"], entry["may_delete"]) == (
        shared, True, True, False, False)
    # a user the bucket is not shared with gets what a missing bucket answers, and no entry
    assert set(_statuses(dave, shared).values()) == {404}
    assert dave.get("/api/sharing/with-me").json() == []
    assert dave.get("/api/buckets/no-such-bucket/objects").status_code == 404


def test_read_write_adds_upload_and_delete_and_a_revoke_takes_everything_back(
        member_client: TestClient, shared: str, carol: TestClient) -> None:
    r = member_client.put(f"/api/buckets/{shared}/sharing/users/carol", json={"access": "read-write"})
    assert r.status_code == 200
    assert _statuses(carol, shared) == {"list": 200, "detail": 200, "download": 200, "versions": 200,
                                        "upload": 201, "folder": 201, "delete": 204, "settings": 403}
    [entry] = carol.get("/api/sharing/with-me").json()
    assert entry["may_write"] and entry["may_delete"]
    keys = [o["key"] for o in member_client.get(f"/api/buckets/{shared}/objects",
                                                params={"prefix": "runs/"}).json()["objects"]]
    assert keys == ["runs/a.csv", "runs/new.csv"]  # the grantee's upload is in the owner's bucket
    assert member_client.delete(f"/api/buckets/{shared}/sharing/users/carol").status_code == 200
    assert set(_statuses(carol, shared).values()) == {404}  # no longer shared: as if it did not exist


def test_a_policy_deny_binds_the_browser_as_it_binds_the_gateway(
        member_client: TestClient, shared: str, carol: TestClient) -> None:
    member_client.put(f"/api/buckets/{shared}/sharing/users/carol", json={"access": "read-write"})
    policy = json.loads(member_client.get(f"/api/buckets/{shared}/sharing").json()["policy"])
    policy["Statement"].append({"Effect": "Deny", "Principal": "*", "Action": ["s3:GetObject", "s3:DeleteObject"],
                                "Resource": f"arn:aws:s3:::{shared}/runs/*"})
    assert member_client.put(f"/api/buckets/{shared}/sharing/policy",
                             json={"policy": json.dumps(policy)}).status_code == 200
    assert carol.get(f"/api/buckets/{shared}/object/content", params={"key": "runs/a.csv"}).status_code == 403
    assert carol.get(f"/api/buckets/{shared}/object/content", params={"key": "readme.txt"}).status_code == 200
    assert carol.delete(f"/api/buckets/{shared}/object", params={"key": "runs/a.csv"}).status_code == 403
    # the owner's dashboard is the owner's: the API does not bind the owner (the gateway's policy does)
    assert member_client.get(f"/api/buckets/{shared}/object/content",
                             params={"key": "runs/a.csv"}).status_code == 200


def test_a_stored_policy_that_no_longer_parses_fails_closed_and_its_owner_sees_why_and_fixes_it(
        client: TestClient, member_client: TestClient, shared: str, carol: TestClient, dave: TestClient) -> None:
    member_client.put(f"/api/buckets/{shared}/sharing/users/carol", json={"access": "read-write"})
    member_client.put(f"/api/buckets/{shared}/sharing/users/dave", json={"access": "read"})
    policy = json.loads(member_client.get(f"/api/buckets/{shared}/sharing").json()["policy"])
    # stored by an older version: operators this one no longer knows. As written the Deny bound only a user
    # "nobody"; unreadable, it binds everyone but the owner. The unreadable Allow grants nothing.
    policy["Statement"] += [
        {"Sid": "LegacyDeny", "Effect": "Deny", "Principal": "*", "Action": ["s3:GetObject", "s3:DeleteObject"],
         "Resource": f"arn:aws:s3:::{shared}/runs/*", "Condition": {"StringEqualsLegacy": {"aws:username": "nobody"}}},
        {"Sid": "LegacyAllow", "Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{shared}/*", "Condition": {"LegacyOperator": {"aws:username": "dave"}}}]
    store_policy_directly(shared, json.dumps(policy))

    assert _statuses(carol, shared) == {"list": 200, "detail": 403, "download": 403, "versions": 200,
                                        "upload": 201, "folder": 201, "delete": 204, "settings": 403}
    assert carol.get(f"/api/buckets/{shared}/object/content", params={"key": "runs/new.csv"}).status_code == 403
    assert carol.delete(f"/api/buckets/{shared}/object", params={"key": "runs/a.csv"}).status_code == 403
    assert dave.post(f"/api/buckets/{shared}/objects", params={"key": "d.txt"}, content=b"x").status_code == 403
    assert [e["bucket"] for e in carol.get("/api/sharing/with-me").json()] == [shared]
    out = member_client.get(f"/api/buckets/{shared}/sharing").json()
    assert out["policy_problems"] == [
        "LegacyDeny cannot be read (Invalid Condition type: StringEqualsLegacy): it denies everything it could "
        "match to anyone but the bucket owner and admins",
        "LegacyAllow cannot be read (Invalid Condition type: LegacyOperator): an Allow, it grants nothing"]
    assert f"LegacyDeny (unreadable, read at its widest): denies everyone but the bucket owner s3:GetObject, " \
           f"s3:DeleteObject on {shared}/runs/*" in out["policy_words"]
    assert [u["username"] for u in out["users"]] == ["carol", "dave"]
    assert client.get(f"/api/buckets/{shared}/sharing").json()["policy_problems"] == out["policy_problems"]
    # the owner keeps the bucket, and changes through the panel wait until the policy is replaced
    assert member_client.get(f"/api/buckets/{shared}/object/content", params={"key": "runs/a.csv"}).content \
        == b"1,2,3"
    r = member_client.put(f"/api/buckets/{shared}/sharing/users/dave", json={"access": "read-write"})
    assert r.status_code == 422 and r.json()["field"] == "policy" and "replace or delete it first" in r.text

    store_policy_directly(shared, '{"Version": "2012-10-17", "Statement": [')  # not even JSON
    assert set(_statuses(carol, shared).values()) == {404}  # nothing is shared with her any more
    out = member_client.get(f"/api/buckets/{shared}/sharing").json()
    assert out["policy_problems"] == ["the policy cannot be read (Policies must be valid JSON): every request of "
                                      "anyone but the bucket owner and admins is denied"]
    assert out["users"] == [] and out["public_prefixes"] == []
    assert _statuses(member_client, shared) == {"list": 200, "detail": 200, "download": 200, "versions": 200,
                                                "upload": 201, "folder": 409, "delete": 204, "settings": 200}
    carol_only = {"Version": "2012-10-17", "Statement": policy["Statement"][:1]}  # the panel's grant to carol
    r = member_client.put(f"/api/buckets/{shared}/sharing/policy", json={"policy": json.dumps(carol_only)})
    assert r.status_code == 200 and r.json()["policy_problems"] == []
    assert carol.get(f"/api/buckets/{shared}/object/content", params={"key": "runs/a.csv"}).status_code == 200
    store_policy_directly(shared, "[]")
    assert member_client.delete(f"/api/buckets/{shared}/sharing/policy").status_code == 204
    assert member_client.get(f"/api/buckets/{shared}/sharing").json()["policy"] is None
