"""The Sharing panel's API: owner-or-admin, grants and public prefixes as policy statements, the policy
checked server-side and said in words, bad input answered 422 naming the field with nothing changed."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from tests.catalog.conftest import tiers  # noqa: F401  (fixture)
from tests.conftest import login, make_user
from tierpilot.tiers.models import Tier


def _policy(bucket: str, principal: object = "*") -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "Mine", "Effect": "Allow", "Principal": principal, "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket}/data/*"}]})


def test_owner_grants_a_member_read_write_and_the_member_sees_it_shared(
        client: TestClient, member_client: TestClient, member_user: dict[str, str],
        tiers: dict[str, Tier]) -> None:  # noqa: F811
    assert member_client.post("/api/buckets", json={"name": "member-data"}).status_code == 201
    make_user("carol", "carol-password-123")
    r = member_client.put("/api/buckets/member-data/sharing/users/carol", json={"access": "read-write"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["users"] == [{"user_id": out["users"][0]["user_id"], "username": "carol", "access": "read-write"}]
    assert any("s3:PutObject" in line and "carol" in line for line in out["policy_words"])
    assert out["policy_public"] is False
    with TestClient(client.app, base_url="http://127.0.0.1") as carol:
        login(carol, "carol", "carol-password-123")
        shared = carol.get("/api/sharing/with-me").json()
        assert [s["bucket"] for s in shared] == ["member-data"] and "s3:PutObject" in shared[0]["access"]
        assert carol.get("/api/buckets/member-data/sharing").status_code == 403  # grantee is not the owner
    assert member_client.put("/api/buckets/member-data/sharing/users/carol",
                             json={"access": "read"}).json()["users"][0]["access"] == "read"
    assert member_client.delete("/api/buckets/member-data/sharing/users/carol").json()["users"] == []
    assert member_client.get("/api/buckets/member-data/sharing").json()["policy"] is None
    # an admin may manage anyone's sharing, and sees who changed it in the audit log
    assert client.get("/api/buckets/member-data/sharing").json()["owner"] == member_user["username"]
    events = client.get("/api/audit", params={"event": "bucket.sharing_changed"}).json()["events"]
    assert [(e["actor"], e["target"], e["detail"]["change"]) for e in events] == [
        (member_user["username"], "member-data", "revoke_user"),
        (member_user["username"], "member-data", "grant_user"),
        (member_user["username"], "member-data", "grant_user")]
    assert events[-1]["detail"] == {"change": "grant_user", "user": "carol", "access": "read-write"}


def test_public_prefix_needs_confirmation_and_shows_as_public(member_client: TestClient,
                                                              tiers: dict[str, Tier]) -> None:  # noqa: F811
    member_client.post("/api/buckets", json={"name": "open-data"})
    r = member_client.post("/api/buckets/open-data/sharing/public", json={"prefix": "release/", "confirm": False})
    assert r.status_code == 422 and r.json()["field"] == "confirm"
    assert member_client.get("/api/buckets/open-data/sharing").json()["policy"] is None
    out = member_client.post("/api/buckets/open-data/sharing/public",
                             json={"prefix": "release/", "confirm": True}).json()
    assert out["public_prefixes"] == ["release/"] and out["policy_public"] is True
    assert any(line.endswith("[public]") and "anonymous" in line for line in out["policy_words"])
    out = member_client.delete("/api/buckets/open-data/sharing/public", params={"prefix": "release/"}).json()
    assert out["public_prefixes"] == [] and out["policy"] is None


def test_policy_editor_checks_before_saving_and_refuses_bad_policies(member_client: TestClient,
                                                                     tiers: dict[str, Tier]) -> None:  # noqa: F811
    member_client.post("/api/buckets", json={"name": "edited"})
    check = member_client.post("/api/buckets/edited/sharing/policy/check", json={"policy": _policy("edited")}).json()
    assert check["valid"] and check["public"] and check["words"][0].startswith("Mine: allows anyone")
    assert member_client.get("/api/buckets/edited/sharing").json()["policy"] is None  # checking saves nothing
    bad = member_client.post("/api/buckets/edited/sharing/policy/check", json={"policy": _policy("other")}).json()
    assert bad == {"valid": False, "error": "Action does not apply to any resource(s) in statement", "words": [],
                   "public": False}
    r = member_client.put("/api/buckets/edited/sharing/policy", json={"policy": "{nope"})
    assert r.status_code == 422 and r.json()["field"] == "policy"
    r = member_client.put("/api/buckets/edited/sharing/policy",
                          json={"policy": _policy("edited", {"AWS": "arn:aws:iam::1:user/ghost"})})
    assert r.status_code == 422 and "ghost" in r.json()["detail"]
    assert member_client.get("/api/buckets/edited/sharing").json()["policy"] is None
    saved = member_client.put("/api/buckets/edited/sharing/policy", json={"policy": _policy("edited")}).json()
    assert json.loads(saved["policy"])["Statement"][0]["Sid"] == "Mine"
    assert member_client.delete("/api/buckets/edited/sharing/policy").status_code == 204


def test_members_cannot_see_or_change_others_sharing(client: TestClient, member_client: TestClient,
                                                     tiers: dict[str, Tier]) -> None:  # noqa: F811
    client.post("/api/buckets", json={"name": "admins-own"})
    # another's bucket answers as a missing one, word for word (its name is not known to be taken)
    hidden = member_client.get("/api/buckets/admins-own/sharing")
    missing = member_client.get("/api/buckets/missing-bucket/sharing")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json() == {**missing.json(), "BucketName": "admins-own"}
    r = member_client.post("/api/buckets/admins-own/sharing/public", json={"prefix": "", "confirm": True})
    assert r.status_code == 404
    assert client.get("/api/buckets/admins-own/sharing").json()["policy"] is None
    r = client.put("/api/buckets/admins-own/sharing/users/nobody", json={"access": "read"})
    assert r.status_code == 422 and r.json()["field"] == "username"
    r = client.put("/api/buckets/admins-own/sharing/users/admin", json={"access": "read"})
    assert r.status_code == 422 and r.json()["field"] == "username"
    r = client.put("/api/buckets/admins-own/sharing/users/nobody", json={"access": "everything"})
    assert r.status_code == 422
