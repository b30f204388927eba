"""The Browser page's API: buckets with usage, folders, object details, uploads and downloads."""

from __future__ import annotations

import hashlib
import os

from fastapi.testclient import TestClient

from tierpilot.tiers.models import Tier


def _upload(client: TestClient, bucket: str, key: str, data: bytes, **params: str) -> dict[str, object]:
    r = client.post(f"/api/buckets/{bucket}/objects", params={"key": key, **params}, content=data,
                    headers={"content-type": "application/octet-stream"})
    assert r.status_code == 201, r.text
    return dict(r.json())


def test_buckets_list_with_usage_members_see_their_own(client: TestClient, member_client: TestClient,
                                                       tiers: dict[str, Tier]) -> None:
    assert client.post("/api/buckets", json={"name": "admin-bucket"}).status_code == 201
    r = member_client.post("/api/buckets", json={"name": "member-bucket", "tier": "infrequent",
                                                 "space_bytes": 10_000})
    assert r.status_code == 201, r.text
    assert r.json()["tier"] == "infrequent" and r.json()["space_bytes"] == 10_000
    assert member_client.post("/api/buckets", json={"name": "member-bucket"}).status_code == 409
    assert member_client.post("/api/buckets", json={"name": "Bad_Name"}).status_code == 422
    _upload(member_client, "member-bucket", "a", b"x" * 100)
    _upload(member_client, "member-bucket", "b/c", b"y" * 50)
    mine = member_client.get("/api/buckets").json()
    assert [(b["name"], b["object_count"], b["used_bytes"], b["owner"]) for b in mine] == [
        ("member-bucket", 2, 150, "member")]
    everything = client.get("/api/buckets").json()
    assert sorted(b["name"] for b in everything) == ["admin-bucket", "member-bucket"]
    # others' buckets are off limits to members (as missing ones), open to admins
    assert member_client.get("/api/buckets/admin-bucket/objects").status_code == 404
    assert client.get("/api/buckets/member-bucket/objects").status_code == 200
    assert member_client.get("/api/buckets/nope/objects").status_code == 404


def test_folder_listing_pagination_details_download(client: TestClient, tiers: dict[str, Tier]) -> None:
    client.post("/api/buckets", json={"name": "browse"})
    keys = ["top.txt", "runs/2026/a.root", "runs/2026/b.root", "runs/2027/c.root", "runs/readme", "zz/last"]
    payloads = {k: os.urandom(1000 + i) for i, k in enumerate(keys)}
    for k, data in payloads.items():
        _upload(client, "browse", k, data)
    root = client.get("/api/buckets/browse/objects").json()
    assert root["folders"] == ["runs/", "zz/"] and [o["key"] for o in root["objects"]] == ["top.txt"]
    runs = client.get("/api/buckets/browse/objects", params={"prefix": "runs/"}).json()
    assert runs["folders"] == ["runs/2026/", "runs/2027/"]
    assert [o["key"] for o in runs["objects"]] == ["runs/readme"]
    assert runs["objects"][0]["tier"] == "hot-disk" and runs["objects"][0]["storage_class"] == "STANDARD"
    seen: list[str] = []
    cursor = None
    while True:
        params = {"delimiter": "", "limit": "2", **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/buckets/browse/objects", params=params).json()
        seen += [o["key"] for o in page["objects"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == sorted(keys)
    detail = client.get("/api/buckets/browse/object", params={"key": "runs/2026/a.root"}).json()
    data = payloads["runs/2026/a.root"]
    assert detail["size"] == len(data) and detail["etag"] == hashlib.md5(data).hexdigest()
    assert detail["readable"] is True and detail["tier_offline"] is False
    assert detail["s3_uri"] == "s3://browse/runs/2026/a.root"
    r = client.get("/api/buckets/browse/object/content", params={"key": "runs/2026/a.root"})
    assert r.status_code == 200 and r.content == data
    assert 'filename="a.root"' in r.headers["content-disposition"]
    assert client.get("/api/buckets/browse/object", params={"key": "missing"}).status_code == 404
    assert client.delete("/api/buckets/browse/object", params={"key": "top.txt"}).status_code == 204
    assert client.get("/api/buckets/browse/object", params={"key": "top.txt"}).status_code == 404


def test_browser_form_upload_and_archived_download(client: TestClient, tiers: dict[str, Tier]) -> None:
    client.post("/api/buckets", json={"name": "forms"})
    r = client.post("/api/buckets/forms/objects", data={"prefix": "in/"},
                    files={"file": ("résumé.pdf", b"%PDF-1.4 body", "application/pdf")})
    assert r.status_code == 201, r.text
    assert r.json()["key"] == "in/résumé.pdf"
    detail = client.get("/api/buckets/forms/object", params={"key": "in/résumé.pdf"}).json()
    assert detail["content_type"] == "application/pdf"
    r = client.get("/api/buckets/forms/object/content", params={"key": "in/résumé.pdf"})
    assert r.content == b"%PDF-1.4 body" and "filename*=UTF-8''r%C3%A9sum%C3%A9.pdf" in r.headers["content-disposition"]
    _upload(client, "forms", "cold/data", b"frozen", storage_class="GLACIER")
    detail = client.get("/api/buckets/forms/object", params={"key": "cold/data"}).json()
    assert detail["tier"] == "archive" and detail["readable"] is False
    r = client.get("/api/buckets/forms/object/content", params={"key": "cold/data"})
    assert r.status_code == 403
    bad = client.post("/api/buckets/forms/objects", params={"key": "a/../b"}, content=b"x")
    assert bad.status_code == 422
    assert client.delete("/api/buckets/forms").status_code == 409  # not empty
    for key in ("in/résumé.pdf", "cold/data"):
        client.delete("/api/buckets/forms/object", params={"key": key})
    assert client.delete("/api/buckets/forms").status_code == 204
    assert client.get("/api/buckets/forms/objects").status_code == 404


def test_quota_applies_to_api_uploads(client: TestClient, tiers: dict[str, Tier]) -> None:
    client.post("/api/buckets", json={"name": "small", "space_bytes": 100})
    _upload(client, "small", "a", b"x" * 80)
    r = client.post("/api/buckets/small/objects", params={"key": "b"}, content=b"x" * 30)
    assert r.status_code == 403 and "space reservation" in r.json()["detail"]
    assert [b["used_bytes"] for b in client.get("/api/buckets").json() if b["name"] == "small"] == [80]


def test_buckets_with_archived_objects_for_the_restore_picker(client: TestClient, tiers: dict[str, Tier]) -> None:
    from tierpilot.catalog import service
    from tierpilot.kit.db import transaction

    owner = int(client.get("/api/auth/me").json()["id"])
    with transaction(write=True) as s:  # the buckets as the API makes them, in one transaction
        for name, tier in (("warm", "hot-disk"), ("mixed", "hot-disk"), ("on-archive", "archive")):
            service.create_bucket(s, owner_id=owner, name=name, tier_name=tier)
    _upload(client, "warm", "a", b"x")
    _upload(client, "mixed", "a", b"x")
    _upload(client, "mixed", "cold/b", b"y", storage_class="GLACIER")
    # "on-archive": its default tier is the archive, but it holds nothing yet, so nothing to restore
    assert [b["name"] for b in client.get("/api/buckets", params={"archived": "true"}).json()] == ["mixed"]
    assert len(client.get("/api/buckets").json()) == 3
    assert client.get("/api/buckets", params={"archived": "maybe"}).status_code == 422


def test_create_folder_writes_the_marker_object_on_the_buckets_tier(client: TestClient, member_client: TestClient,
                                                                    tiers: dict[str, Tier]) -> None:
    from tierpilot.catalog import repository, service, store
    from tierpilot.kit.db import transaction

    assert client.post("/api/buckets", json={"name": "folders", "tier": "infrequent"}).status_code == 201
    r = client.post("/api/buckets/folders/folders", json={"prefix": "runs/2026"})
    assert r.status_code == 201, r.text
    assert r.json() == {"key": "runs/2026/"}
    assert client.post("/api/buckets/folders/folders", json={"prefix": "runs/2026/"}).status_code == 409
    # the empty folder shows in the listing like any other, and its marker is a real blob on the tier
    assert client.get("/api/buckets/folders/objects", params={"prefix": "runs/"}).json()["folders"] == [
        "runs/2026/"]
    detail = client.get("/api/buckets/folders/object", params={"key": "runs/2026/"}).json()
    assert (detail["size"], detail["tier"], detail["storage_class"]) == (0, "infrequent", "STANDARD_IA")
    assert detail["content_type"] == "application/x-directory"
    with transaction() as s:
        obj = repository.get_object(s, service.get_bucket(s, "folders").id, "runs/2026/")
        assert obj is not None
        assert store.driver(obj.tier_id).head(obj.locator).size == 0
    # bad names: 422 naming the field, nothing stored
    for bad in ("", "/abs", "a//b", "a/../b", "./x", "x\u0000y", "tab\there", "k" * 1100):
        r = client.post("/api/buckets/folders/folders", json={"prefix": bad})
        assert r.status_code == 422, (bad, r.text)
        assert "prefix" in r.json()["detail"], r.text
    assert client.post("/api/buckets/folders/folders", json={}).status_code == 422
    listing = client.get("/api/buckets/folders/objects", params={"delimiter": ""}).json()
    assert [o["key"] for o in listing["objects"]] == ["runs/2026/"]
    # members cannot add folders to others' buckets (they do not see them); unknown buckets are 404 alike
    assert member_client.post("/api/buckets/folders/folders", json={"prefix": "x"}).status_code == 404
    assert client.post("/api/buckets/nope/folders", json={"prefix": "x"}).status_code == 404
