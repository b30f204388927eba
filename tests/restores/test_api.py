"""The restores API as the dashboard uses it: preview, create, queue, detail, exports, speed-up, retry,
per-tier schedules; members see their own batches, admins everyone's; bad input changes nothing."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from tests.clocks import WallClock
from tests.restores.conftest import Archive
from tierpilot.kit.db import transaction
from tierpilot.restores import sweep
from tierpilot.restores.models import RestoreBatch, RestoreItem

GIB = Decimal(2**30)
KEYS = [f"exp/run{i}.root" for i in range(10)]


@pytest.fixture
def filled(archive: Archive) -> Archive:
    archive.put(archive.buckets["member"], KEYS)
    archive.put(archive.buckets["member"], ["exp/readme.txt"], tier="hot", storage_class="STANDARD")
    archive.put(archive.buckets["admin"], ["adm/1", "adm/2"])
    return archive


def _counts() -> tuple[int, int]:
    with transaction() as s:
        return (s.scalar(select(func.count(RestoreBatch.id))) or 0, s.scalar(select(func.count(RestoreItem.id))) or 0)


def test_preview_shows_objects_bytes_ready_time_and_cost_per_speed(filled: Archive, member_client: TestClient) -> None:
    r = member_client.post("/api/restores/preview", json={
        "bucket": filled.buckets["member"], "prefixes": ["exp/"], "keys": ["exp/missing"], "days": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["objects"], body["bytes"], body["not_archived"]) == (10, 1000, 1)
    assert body["missing_keys"] == ["exp/missing"]
    assert body["tiers"] == [{"tier": f"archive-{filled.tag}", "offline": True, "objects": 10, "bytes": 1000}]
    speeds = {s["speed"]: s for s in body["speeds"]}
    # delays of the offline tier: 1, 2, 3 s; the first poll falls exactly on them
    assert {k: v["expected_ready_s"] for k, v in speeds.items()} == {"expedited": 1.0, "standard": 2.0, "bulk": 3.0}
    gib = Decimal(1000) / GIB
    copy = gib * Decimal("0.023") * 2 / (Decimal(365) / 12)  # the restored copy at Standard's rate for 2 days
    for speed, per_gib, per_1k in (("expedited", "0.03", "10"), ("standard", "0.01", "0.05"), ("bulk", "0", "0")):
        cost = speeds[speed]["cost_usd"]
        restore = gib * Decimal(per_gib) + 10 * Decimal(per_1k) / 1000
        assert Decimal(cost["restore"]) == restore.quantize(Decimal("0.000001"))
        assert Decimal(cost["restored_copy"]) == copy.quantize(Decimal("0.000001"))
        assert Decimal(cost["total"]) == (restore + copy).quantize(Decimal("0.000001"))
    assert Decimal(speeds["expedited"]["cost_usd"]["total"]) > Decimal(speeds["bulk"]["cost_usd"]["total"])
    assert _counts() == (0, 0)  # a preview changes nothing


def test_batch_runs_to_ready_and_exports_a_download_list(filled: Archive, member_client: TestClient,
                                                        clock: WallClock) -> None:
    r = member_client.post("/api/restores/batches", json={
        "bucket": filled.buckets["member"], "keys": KEYS[:4], "prefixes": ["exp/run9"], "speed": "expedited",
        "days": 3, "name": "calibration"})
    assert r.status_code == 201, r.text
    batch = r.json()
    assert (batch["name"], batch["state"], batch["speed"], batch["days"]) == ("calibration", "in_progress",
                                                                               "expedited", 3)
    assert batch["progress"]["objects"] == 5 and batch["progress"]["pending"] == 5
    assert Decimal(batch["cost_estimate_usd"]) >= Decimal("0.05")  # 5 expedited requests at $10 per 1,000
    assert batch["estimated_ready_at"] is not None
    sweep.poll_due(clock=clock)
    clock.advance(seconds=1.1)  # past the expedited delay
    sweep.poll_due(clock=clock)

    detail = member_client.get(f"/api/restores/batches/{batch['id']}").json()
    assert detail["batch"]["state"] == "ready" and detail["batch"]["progress"]["ready_bytes"] == 500
    assert detail["timeline"][-1]["ready"] == 5 and len(detail["items"]) == 5
    assert {i["state"] for i in detail["items"]} == {"ready"}
    assert all(i["expires_at"] and i["next_poll_at"] is None for i in detail["items"])

    exported = member_client.get(f"/api/restores/batches/{batch['id']}/export.csv")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [r["key"] for r in rows] == [*KEYS[:4], "exp/run9.root"] and {r["state"] for r in rows} == {"ready"}

    aws = member_client.get(f"/api/restores/batches/{batch['id']}/commands.sh", params={"tool": "aws",
                                                                                      "dest": "/data/in"}).text
    lines = [line for line in aws.splitlines() if line.startswith("aws ")]
    bucket = filled.buckets["member"]
    assert lines[0] == (f"aws s3 cp s3://{bucket}/exp/run0.root /data/in/{bucket}/exp/run0.root "
                        "--endpoint-url http://127.0.0.1:9000")
    tp = member_client.get(f"/api/restores/batches/{batch['id']}/commands.sh").text
    assert sum(1 for line in tp.splitlines() if line.startswith("tierpilot cp s3://")) == 5

    notes = member_client.get("/api/notifications").json()
    assert notes["unread"] == 1 and notes["items"][0]["kind"] == "restore.ready"
    assert notes["items"][0]["link"] == f"/restores?batch={batch['id']}"
    assert member_client.post("/api/notifications/read", json={}).json() == {"marked": 1}
    assert member_client.get("/api/notifications", params={"unread": True}).json() == {"items": [], "unread": 0}


def test_members_see_their_own_batches_and_admins_the_whole_queue(
        filled: Archive, client: TestClient, member_client: TestClient) -> None:
    mine = member_client.post("/api/restores/batches", json={
        "bucket": filled.buckets["member"], "prefixes": ["exp/"], "speed": "bulk"}).json()
    theirs = client.post("/api/restores/batches", json={
        "bucket": filled.buckets["admin"], "prefixes": [""], "speed": "standard"}).json()
    listed = member_client.get("/api/restores/batches").json()["items"]
    assert [b["id"] for b in listed] == [mine["id"]]
    assert member_client.get(f"/api/restores/batches/{theirs['id']}").status_code == 404
    assert member_client.get("/api/restores/queue", params={"scope": "everyone"}).status_code == 403
    # a member cannot restore from someone else's bucket, and learns nothing about it
    r = member_client.post("/api/restores/preview", json={"bucket": filled.buckets["admin"], "prefixes": [""]})
    assert r.status_code == 404

    queue = client.get("/api/restores/queue", params={"scope": "everyone"}).json()
    assert {b["id"] for b in queue["batches"]["items"]} == {mine["id"], theirs["id"]}
    assert {b["owner"] for b in queue["batches"]["items"]} == {"member", "admin"}
    summary = queue["summary"]
    assert summary["batches_by_state"] == {"in_progress": 2}
    assert summary["tiers"] == [{"tier": f"archive-{filled.tag}", "objects": 12, "bytes": 1200, "pending": 12,
                                 "ongoing": 0, "ready": 0, "failed": 0, "expired": 0}]
    assert summary["oldest_in_progress"]["id"] == mine["id"]
    assert client.get(f"/api/restores/batches/{mine['id']}").status_code == 200
    assert client.get("/api/restores/queue").json()["summary"]["batches_by_state"] == {"in_progress": 1}


def test_the_queue_answers_304_until_something_moves(filled: Archive, member_client: TestClient) -> None:
    member_client.post("/api/restores/batches", json={"bucket": filled.buckets["member"], "keys": KEYS[:2],
                                                      "speed": "expedited"})
    first = member_client.get("/api/restores/queue")
    etag = first.headers["etag"]
    again = member_client.get("/api/restores/queue", headers={"if-none-match": etag})
    assert again.status_code == 304 and again.content == b""
    sweep.poll_due()  # the items are submitted: the batch changed
    moved = member_client.get("/api/restores/queue", headers={"if-none-match": etag})
    assert moved.status_code == 200 and moved.headers["etag"] != etag
    assert moved.json()["batches"]["items"][0]["progress"]["ongoing"] == 2


def test_speed_can_be_raised_but_never_lowered(filled: Archive, member_client: TestClient, clock: WallClock) -> None:
    batch = member_client.post("/api/restores/batches", json={
        "bucket": filled.buckets["member"], "prefixes": ["exp/"], "speed": "bulk"}).json()
    sweep.poll_due(clock=clock)
    r = member_client.post(f"/api/restores/batches/{batch['id']}/speed", json={"speed": "standard"})
    assert r.status_code == 200 and r.json()["speed"] == "standard" and r.json()["progress"]["pending"] == 10
    for slower in ("standard", "bulk"):
        r = member_client.post(f"/api/restores/batches/{batch['id']}/speed", json={"speed": slower})
        assert r.status_code == 409 and "only be raised" in r.json()["detail"]
    sweep.poll_due(clock=clock)
    clock.advance(seconds=2.1)  # past the standard delay
    sweep.poll_due(clock=clock)
    done = member_client.get(f"/api/restores/batches/{batch['id']}").json()["batch"]
    assert done["state"] == "ready" and done["speed"] == "standard"
    r = member_client.post(f"/api/restores/batches/{batch['id']}/speed", json={"speed": "expedited"})
    assert r.status_code == 409 and "only a running batch" in r.json()["detail"]
    r = member_client.post(f"/api/restores/batches/{batch['id']}/retry")
    assert r.status_code == 409 and "no failed objects" in r.json()["detail"]


@pytest.mark.parametrize("body, status, message", [
    ({"bucket": "no-such-bucket", "keys": ["a"]}, 404, "does not exist"),
    ({"bucket": "{member}", "keys": [], "prefixes": []}, 422, "give keys or prefixes"),
    ({"bucket": "{member}", "keys": ["exp/readme.txt"]}, 422, "no archived objects"),
    ({"bucket": "{member}", "keys": ["exp/run0.root"], "speed": "ludicrous"}, 422, "speed"),
    ({"bucket": "{member}", "keys": ["exp/run0.root"], "days": 0}, 422, "days"),
    ({"bucket": "{member}", "keys": ["exp/run0.root"], "extra": 1}, 422, "extra"),
    ({"bucket": "{member}", "keys": "exp/run0.root"}, 422, "keys"),
])
def test_bad_input_gets_a_clear_error_and_changes_nothing(
        filled: Archive, member_client: TestClient, body: dict[str, object], status: int, message: str) -> None:
    if body.get("bucket") == "{member}":
        body = {**body, "bucket": filled.buckets["member"]}
    r = member_client.post("/api/restores/batches", json=body)
    assert r.status_code == status, r.text
    assert message in r.json()["detail"]
    assert _counts() == (0, 0)


def test_unknown_batches_and_bad_queries_are_4xx(filled: Archive, member_client: TestClient) -> None:
    assert member_client.get("/api/restores/batches/999999").status_code == 404
    assert member_client.get("/api/restores/batches/999999/export.csv").status_code == 404
    assert member_client.post("/api/restores/batches/999999/retry").status_code == 404
    assert member_client.get("/api/restores/batches", params={"state": "bogus"}).status_code == 422
    assert member_client.get("/api/restores/batches", params={"limit": 0}).status_code == 422


def test_poll_schedules_are_set_per_tier_by_admins(filled: Archive, client: TestClient,
                                                   member_client: TestClient) -> None:
    tier_id = filled.tiers["archive"]
    default = member_client.get(f"/api/restores/schedules/{tier_id}").json()
    assert default["custom"] is False and default["speeds"]["standard"] == {"phases": [[2.0, 1.0]], "max_s": 64.0}
    new = {"standard": {"phases": [[10, 5], [60, 1]], "max_s": 600}}
    assert member_client.put(f"/api/restores/schedules/{tier_id}", json={"speeds": new}).status_code == 403
    r = client.put(f"/api/restores/schedules/{tier_id}", json={"speeds": new})
    assert r.status_code == 200 and r.json()["custom"] is True
    assert r.json()["speeds"]["standard"] == {"phases": [[10.0, 5.0], [60.0, 1.0]], "max_s": 600.0}
    assert r.json()["speeds"]["bulk"] == default["speeds"]["bulk"]
    bad = client.put(f"/api/restores/schedules/{tier_id}", json={"speeds": {"standard": {"phases": [[5, 0]],
                                                                                           "max_s": 10}}})
    assert bad.status_code == 422 and "positive" in bad.json()["detail"]
    assert client.get(f"/api/restores/schedules/{tier_id}").json()["speeds"]["standard"]["max_s"] == 600.0
    assert client.put(f"/api/restores/schedules/{tier_id}", json={"speeds": None}).json()["custom"] is False
    assert client.get("/api/restores/schedules/999999").status_code == 404


def test_webhook_url_is_validated(member_client: TestClient) -> None:
    r = member_client.put("/api/notifications/webhook", json={"url": "ftp://example.org/hook"})
    assert r.status_code == 422 and "http" in r.json()["detail"]
    assert member_client.get("/api/notifications/webhook").json()["url"] is None
    # a public address (loopback and private ones are refused: tests/notifications/test_ssrf.py)
    assert member_client.put("/api/notifications/webhook", json={"url": "http://93.184.215.14:9/x"}).json()["url"] == (
        "http://93.184.215.14:9/x")
    assert member_client.put("/api/notifications/webhook", json={"url": ""}).json()["url"] is None
