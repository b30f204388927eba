"""/api/projects: who sees which project, members and roles, quotas, and bad input named by its field."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.catalog.conftest import tiers  # noqa: F401  (the posix tiers buckets are created on)
from tierpilot.tiers.models import Tier


def _upload(client: TestClient, bucket: str, key: str, data: bytes) -> None:
    r = client.post(f"/api/buckets/{bucket}/objects", params={"key": key}, content=data,
                    headers={"content-type": "application/octet-stream"})
    assert r.status_code == 201, r.text


def test_admin_creates_project_member_sees_only_theirs_and_reaches_its_buckets(
        client: TestClient, member_client: TestClient, tiers: dict[str, Tier]) -> None:  # noqa: F811
    r = client.post("/api/projects", json={"name": "belle2", "quota_bytes": 1000})
    assert r.status_code == 201, r.text
    assert member_client.post("/api/projects", json={"name": "mine"}).status_code == 403
    # a member sees their personal project only, not belle2 (a project they are not in is as a missing one)
    assert [p["name"] for p in member_client.get("/api/projects").json()] == ["~member"]
    assert member_client.get("/api/projects/belle2").status_code == 404
    assert client.post("/api/buckets", json={"name": "detector-runs"}).status_code == 201
    assert client.post("/api/projects/belle2/buckets", json={"bucket": "detector-runs"}).status_code == 200
    assert member_client.get("/api/buckets/detector-runs/objects").status_code == 404

    r = client.post("/api/projects/belle2/members", json={"username": "member", "role": "viewer"})
    assert r.status_code == 201, r.text
    assert [(m["username"], m["role"]) for m in r.json()["members"]] == [("member", "viewer")]
    assert "belle2" in [p["name"] for p in member_client.get("/api/projects").json()]
    listed = {b["name"]: b for b in member_client.get("/api/buckets").json()}
    assert listed["detector-runs"]["project"] == "belle2"
    assert member_client.get("/api/buckets/detector-runs/objects").status_code == 200  # a viewer reads
    r = member_client.post("/api/buckets/detector-runs/objects", params={"key": "k"}, content=b"x")
    assert r.status_code == 403  # … and does not write
    assert member_client.put("/api/projects/belle2/quota", json={"quota_bytes": 5}).status_code == 403

    assert client.patch("/api/projects/belle2/members/member", json={"role": "member"}).status_code == 200
    _upload(member_client, "detector-runs", "k", b"x" * 400)
    p = member_client.get("/api/projects/belle2").json()
    assert (p["used_bytes"], p["used_objects"], p["quota_bytes"], p["buckets"]) == (400, 1, 1000, ["detector-runs"])

    assert client.delete("/api/projects/belle2/members/member").status_code == 200
    assert member_client.get("/api/buckets/detector-runs/objects").status_code == 404


def test_bad_input_is_a_4xx_naming_the_field_and_changes_nothing(
        client: TestClient, member_client: TestClient, tiers: dict[str, Tier]) -> None:  # noqa: F811
    for body, field in (({"name": "p", "quota_bytes": -1}, "quota_bytes"),
                        ({"name": "p", "quota_objects": 10**15}, "quota_objects"),
                        ({"name": "p", "quota_bytes": 1 << 62}, "quota_bytes"),
                        ({"name": "Bad Name"}, "name")):
        r = client.post("/api/projects", json=body)
        assert r.status_code == 422 and r.json()["field"] == field, r.text
    assert client.get("/api/projects/p").status_code == 404
    assert client.post("/api/projects", json={"name": "p", "quota_bytes": 100}).status_code == 201
    assert client.post("/api/projects", json={"name": "p"}).status_code == 409

    r = client.post("/api/projects/p/members", json={"username": "member", "role": "owner"})
    assert r.status_code == 422 and r.json()["field"] == "role"
    r = client.post("/api/projects/p/members", json={"username": "nobody"})
    assert r.status_code == 404 and r.json()["field"] == "user"
    assert client.post("/api/projects/p/members", json={"username": "member"}).status_code == 201
    r = client.post("/api/projects/p/members", json={"username": "member", "role": "manager"})
    assert r.status_code == 409 and r.json()["field"] == "user"
    r = client.put("/api/projects/p/quota", json={"quota_bytes": -5})
    assert r.status_code == 422 and r.json()["field"] == "quota_bytes"

    # a bucket moved into a project whose quota it would exceed
    assert member_client.post("/api/buckets", json={"name": "big-one"}).status_code == 201
    _upload(member_client, "big-one", "k", b"x" * 150)
    r = member_client.post("/api/projects/p/buckets", json={"bucket": "big-one"})
    assert r.status_code == 403  # a plain member of p may not move buckets into it
    r = client.post("/api/projects/p/buckets", json={"bucket": "big-one"})
    assert r.status_code == 422 and r.json()["field"] == "bucket", r.text
    p = client.get("/api/projects/p").json()
    assert (p["buckets"], p["quota_bytes"], [m["role"] for m in p["members"]]) == ([], 100, ["member"])
    listed = {b["name"]: b["project"] for b in member_client.get("/api/buckets").json()}
    assert listed == {"big-one": "~member"}
