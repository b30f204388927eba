"""One rule for every API endpoint that names a bucket: a bucket the caller may not see answers exactly as one that
does not exist (404, the same body), and a bucket shared with them answers 403 saying what they lack wherever its
sharing does not allow the request (``catalog.service.visible_bucket``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.conftest import login, make_user
from tierpilot.tiers.models import Tier

BUCKET, MISSING, KEY = "walk-data", "walk-nowhere", "notes/a.txt"
RULE: dict[str, Any] = {"id": "to-ia", "status": "Enabled", "filter": {"prefix": "raw/"},
                        "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}


@dataclass(frozen=True)
class Call:
    method: str
    path: str  # the route's path: {name} and {bucket} stand for the bucket's name
    reader: int  # what a read-only grantee gets
    params: dict[str, Any] = field(default_factory=dict)  # "{b}": the bucket's name
    body: Any = None  # "{b}" in a string: the bucket's name
    hidden: int = 404  # what a stranger gets, exactly as for a bucket that does not exist

    def send(self, c: TestClient, bucket: str) -> Any:
        path = self.path.format(name=bucket, bucket=bucket, username="reader", rule_id="to-ia")
        params = {k: v.replace("{b}", bucket) for k, v in self.params.items()}
        if self.method == "POST" and self.path.endswith("/objects"):
            return c.post(path, params=params, content=b"no")
        body = json.loads(json.dumps(self.body).replace("{b}", bucket)) if self.body is not None else None
        return c.request(self.method, path, params=params, json=body)


def _soon(minutes: int) -> str:
    return (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()


CALLS = [
    # catalog: the Browser's reads follow the bucket's sharing, everything else is the owner's
    Call("DELETE", "/api/buckets/{name}", 403),
    Call("GET", "/api/buckets/{name}/objects", 200),
    Call("POST", "/api/buckets/{name}/objects", 403, {"key": "notes/mine.txt"}),
    Call("GET", "/api/buckets/{name}/object", 200, {"key": KEY}),
    Call("DELETE", "/api/buckets/{name}/object", 403, {"key": KEY}),
    Call("GET", "/api/buckets/{name}/object/content", 200, {"key": KEY}),
    Call("POST", "/api/buckets/{name}/folders", 403, body={"prefix": "new/"}),
    Call("GET", "/api/buckets/{name}/settings", 403),
    Call("PUT", "/api/buckets/{name}/versioning", 403, body={"status": "Enabled"}),
    Call("PUT", "/api/buckets/{name}/lock", 403, body={"mode": None}),
    Call("PUT", "/api/buckets/{name}/cors", 403, body={"rules": [{"origins": ["*"], "methods": ["GET"]}]}),
    Call("DELETE", "/api/buckets/{name}/cors", 403),
    Call("GET", "/api/buckets/{name}/versions", 200, {"key": KEY}),
    # sharing: the owner's
    Call("GET", "/api/buckets/{name}/sharing", 403),
    Call("PUT", "/api/buckets/{name}/sharing/users/{username}", 403, body={"access": "read-write"}),
    Call("DELETE", "/api/buckets/{name}/sharing/users/{username}", 403),
    Call("POST", "/api/buckets/{name}/sharing/public", 403, body={"prefix": "pub/", "confirm": True}),
    Call("DELETE", "/api/buckets/{name}/sharing/public", 403),
    Call("POST", "/api/buckets/{name}/sharing/policy/check", 403, body={"policy": "{}"}),
    Call("PUT", "/api/buckets/{name}/sharing/policy", 403, body={"policy": "{}"}),
    Call("DELETE", "/api/buckets/{name}/sharing/policy", 403),
    # lifecycle: the owner's
    Call("GET", "/api/lifecycle/buckets/{bucket}/configuration", 403),
    Call("PUT", "/api/lifecycle/buckets/{bucket}/configuration", 403, body={"rules": [RULE]}),
    Call("DELETE", "/api/lifecycle/buckets/{bucket}/configuration", 403),
    Call("POST", "/api/lifecycle/buckets/{bucket}/rules", 403, body=RULE),
    Call("PUT", "/api/lifecycle/buckets/{bucket}/rules/{rule_id}", 403, body=RULE),
    Call("DELETE", "/api/lifecycle/buckets/{bucket}/rules/{rule_id}", 403),
    Call("POST", "/api/lifecycle/buckets/{bucket}/dry-run", 403, body={"rule": RULE}),
    Call("GET", "/api/lifecycle/preview", 403, {"bucket": "{b}"}),
    Call("GET", "/api/lifecycle/moves", 403, {"bucket": "{b}"}),
    Call("POST", "/api/lifecycle/moves/retry-failed", 403, {"bucket": "{b}"}),
    # spend plans, restores, reservations, the planner: the owner's
    Call("GET", "/api/spend/plans/{bucket}", 403),
    Call("PUT", "/api/spend/plans/{bucket}", 403, body={"reads_gib": 1}),
    Call("DELETE", "/api/spend/plans/{bucket}", 403),
    Call("POST", "/api/restores/preview", 403, body={"bucket": "{b}", "prefixes": [""]}),
    Call("POST", "/api/restores/batches", 403, body={"bucket": "{b}", "prefixes": [""], "speed": "bulk"}),
    Call("GET", "/api/pricing/from-my-data", 403, {"bucket": "{b}"}),
    # integrity: the fixity log is the owner's
    Call("GET", "/api/integrity/buckets/{name}", 403),
    Call("GET", "/api/integrity/buckets/{name}/fixity.csv", 403),
    # bucket events: the rules and their deliveries are the owner's
    Call("GET", "/api/events/buckets/{bucket}/configuration", 403),
    Call("GET", "/api/events/buckets/{bucket}/deliveries", 403),
    # a booking names its bucket in the body: a missing one is a 422 naming the field, a hidden one the same
    Call("POST", "/api/reservations", 403, body={"bucket": "{b}", "direction": "read", "rate_mbps": 1,
                                                 "start": _soon(5), "end": _soon(65)}, hidden=422),
]

# endpoints taking a bucket name only to filter a list of the caller's own rows (another's bucket: an empty list),
# or for admins alone (403 before any lookup; an adoption names the cloud's bucket)
FILTERS = {("GET", "/api/reservations"), ("GET", "/api/requests"), ("POST", "/api/lifecycle/sweep"),
           ("POST", "/api/tiers/{tier_id}/adopt")}
# walked by a test of their own below
OWN_TESTS = {("POST", "/api/projects/{project_name}/buckets")}


@dataclass(frozen=True)
class World:
    stranger: TestClient
    reader: TestClient


@pytest.fixture
def world(client: TestClient, member_client: TestClient, tiers: dict[str, Tier]) -> Iterator[World]:
    """The member's bucket with one object, read-only shared with ``reader``; ``stranger`` is named nowhere."""
    assert member_client.post("/api/buckets", json={"name": BUCKET}).status_code == 201
    assert member_client.post(f"/api/buckets/{BUCKET}/objects", params={"key": KEY},
                              content=b"shared notes").status_code == 201
    make_user("reader", "reader-password-123")
    make_user("stranger", "stranger-password-123")
    r = member_client.put(f"/api/buckets/{BUCKET}/sharing/users/reader", json={"access": "read"})
    assert r.status_code == 200, r.text
    with TestClient(client.app, base_url="http://127.0.0.1") as reader, \
            TestClient(client.app, base_url="http://127.0.0.1") as stranger:
        yield World(login(stranger, "stranger", "stranger-password-123"),
                    login(reader, "reader", "reader-password-123"))


def test_a_stranger_gets_what_a_missing_bucket_gets_word_for_word(world: World) -> None:
    for call in CALLS:
        hidden = call.send(world.stranger, BUCKET)
        missing = call.send(world.stranger, MISSING)
        where = (call.method, call.path, hidden.text)
        assert hidden.status_code == missing.status_code == call.hidden, where
        assert hidden.text.replace(BUCKET, MISSING) == missing.text, where


def test_filters_by_a_bucket_name_answer_a_stranger_alike_for_a_hidden_and_a_missing_bucket(world: World) -> None:
    for method, path in sorted(FILTERS - {("POST", "/api/tiers/{tier_id}/adopt")}):
        hidden, missing = (world.stranger.request(method, path, params={"bucket": b}) for b in (BUCKET, MISSING))
        assert (hidden.status_code, hidden.text) == (missing.status_code, missing.text), (method, path)


def test_a_read_only_grantee_reads_and_is_told_what_else_it_lacks(world: World, member_client: TestClient
                                                                  ) -> None:
    for call in CALLS:
        r = call.send(world.reader, BUCKET)
        where = (call.method, call.path, r.text)
        assert r.status_code == call.reader, where
        if r.status_code == 403:
            body = r.json()
            assert body["BucketName"] == BUCKET and body["needs"] in ("owner", "s3:PutObject", "s3:DeleteObject")
            assert "shared with you" in body["detail"], where
    # nothing the grantee was refused changed anything
    listing = member_client.get(f"/api/buckets/{BUCKET}/objects", params={"delimiter": ""}).json()
    assert [o["key"] for o in listing["objects"]] == [KEY]
    assert member_client.get(f"/api/buckets/{BUCKET}/sharing").json()["users"][0]["access"] == "read"


def test_moving_a_hidden_bucket_into_ones_project_is_answered_as_for_a_missing_one(world: World,
                                                                                   client: TestClient) -> None:
    assert client.post("/api/projects", json={"name": "lab"}).status_code == 201
    for user in ("stranger", "reader"):
        r = client.post("/api/projects/lab/members", json={"username": user, "role": "manager"})
        assert r.status_code == 201, r.text
    hidden, missing = (world.stranger.post("/api/projects/lab/buckets", json={"bucket": b}) for b in (BUCKET, MISSING))
    assert hidden.status_code == missing.status_code == 404
    assert hidden.text.replace(BUCKET, MISSING) == missing.text
    assert world.reader.post("/api/projects/lab/buckets", json={"bucket": BUCKET}).status_code == 403


def test_every_endpoint_naming_a_bucket_is_walked(client: TestClient) -> None:
    spec = client.app.openapi()
    schemas = spec["components"]["schemas"]
    walked = {(c.method, c.path) for c in CALLS} | FILTERS | OWN_TESTS
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            named = {p["name"] for p in op.get("parameters", ()) if p["in"] in ("path", "query")}
            ref = next(iter(op.get("requestBody", {}).get("content", {}).values()), {}).get("schema", {}).get("$ref")
            fields = schemas[ref.rsplit("/", 1)[-1]].get("properties", {}) if ref else {}
            if {"name", "bucket"} & named or "bucket" in fields:
                assert (method.upper(), path) in walked, f"{method.upper()} {path} names a bucket: walk it in CALLS"


def _sharing(change: Any) -> None:
    """Change the bucket's sharing through the sharing service, as the gateway's ?acl and ?publicAccessBlock do."""
    from tierpilot.catalog import service as catalog
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        change(s, catalog.get_bucket(s, BUCKET))


def test_who_sees_a_bucket_follows_its_grants_and_its_public_access_block(
        world: World, member_client: TestClient, member_user: dict[str, str]) -> None:
    """Visible to a user its sharing names: a grant to them, a public Allow or public ACL (unless its public access
    block sets those aside); a 403 then says what they lack, to anyone else the bucket does not exist."""
    from tierpilot.auth import repository as auth_repository
    from tierpilot.kit.db import transaction
    from tierpilot.sharing import service
    from tierpilot.sharing.acl import ALL_USERS, Grant

    def settings() -> int:
        return int(world.stranger.get(f"/api/buckets/{BUCKET}/settings").status_code)

    with transaction() as s:
        stranger = auth_repository.get_user_by_name(s, "stranger")
        assert stranger is not None
        stranger_id = stranger.id
    owner = Grant(f"id:{member_user['id']}", "FULL_CONTROL")
    assert settings() == 404
    _sharing(lambda s, b: service.put_bucket_acl(s, b, (owner, Grant(f"id:{stranger_id}", "READ"))))
    assert settings() == 403
    assert world.stranger.get(f"/api/buckets/{BUCKET}/objects").status_code == 200  # the ACL's READ lists
    _sharing(lambda s, b: service.put_bucket_acl(s, b, (owner, Grant(f"uri:{ALL_USERS}", "READ"))))
    assert settings() == 403
    _sharing(lambda s, b: service.set_public_block(s, b, {"IgnorePublicAcls": True}))
    assert settings() == 404
    _sharing(lambda s, b: service.put_bucket_acl(s, b, (owner,)))
    assert member_client.post(f"/api/buckets/{BUCKET}/sharing/public",
                              json={"prefix": "pub/", "confirm": True}).status_code == 200
    assert settings() == 403  # a public prefix: anyone may read there
    _sharing(lambda s, b: service.set_public_block(s, b, {"RestrictPublicBuckets": True}))
    assert settings() == 404
