"""The lifecycle API: rules per bucket, validation messages, preview, dry run, history, retries, metering."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import select

from tests.lifecycle.conftest import World, age, placement, put
from tierpilot.kit.db import transaction, utcnow
from tierpilot.lifecycle.dates import midnight
from tierpilot.lifecycle.models import LifecycleConfiguration
from tierpilot.lifecycle.runner import run_now

BIG = b"b" * (256 * 1024)
IA_RULE: dict[str, Any] = {"id": "to-ia", "status": "Enabled", "filter": {"prefix": "raw/"},
                           "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}]}


def _url(world: World, tail: str = "configuration") -> str:
    return f"/api/lifecycle/buckets/{world.bucket}/{tail}"


def test_rules_crud_through_the_api(client: TestClient, world: World) -> None:
    r = client.get(_url(world))
    assert r.status_code == 200 and r.json()["configured"] is False
    r = client.put(_url(world), json={"rules": [IA_RULE]})
    assert r.status_code == 200, r.text
    assert r.json()["rules"][0]["transitions"] == [{"days": 30, "date": None, "storage_class": "STANDARD_IA"}]
    assert r.json()["updated_by"] == "api:admin"
    glacier = {"id": "to-glacier", "filter": {"and": {"prefix": "raw/", "tags": [{"key": "k", "value": "v"}]}},
               "transitions": [{"days": 200, "storage_class": "GLACIER"}]}
    r = client.post(_url(world, "rules"), json=glacier)
    assert r.status_code == 201, r.text
    assert [x["id"] for x in r.json()["rules"]] == ["to-ia", "to-glacier"]
    assert r.json()["rules"][1]["filter"]["and"]["tags"] == [{"key": "k", "value": "v"}]
    assert client.post(_url(world, "rules"), json=glacier).status_code == 409
    r = client.put(_url(world, "rules/to-ia"), json={**IA_RULE, "status": "Disabled"})
    assert r.status_code == 200 and r.json()["rules"][0]["status"] == "Disabled"
    r = client.delete(_url(world, "rules/to-glacier"))
    assert [x["id"] for x in r.json()["rules"]] == ["to-ia"]
    assert client.delete(_url(world, "rules/nope")).status_code == 404
    assert client.get("/api/lifecycle/buckets").json()[0]["rules"] == 1
    assert client.delete(_url(world)).status_code == 204
    assert client.get(_url(world)).json()["configured"] is False


def test_invalid_rules_are_refused_with_the_reason_and_change_nothing(client: TestClient, world: World) -> None:
    assert client.put(_url(world), json={"rules": [IA_RULE]}).status_code == 200
    cases = [
        ({"id": "x", "filter": {}, "transitions": [{"days": 30, "storage_class": "GLACIER_IR"}]},
         "no tier of bucket"),
        ({"id": "x", "filter": {}, "transitions": [{"days": 30, "storage_class": "STANDARD_IA"},
                                                   {"days": 45, "storage_class": "GLACIER"}]},
         "minimum storage duration 30 days) only 15 days before the Transition to GLACIER at day 45; move that "
         "step to day 60 or later"),
        ({"id": "x", "filter": {}, "transitions": [{"days": 100, "storage_class": "GLACIER"}],
          "expiration": {"days": 150}}, "minimum storage duration 90 days) only 50 days before the Expiration"),
        ({"id": "x", "filter": {}, "transitions": [{"days": 90, "storage_class": "STANDARD_IA"},
                                                   {"days": 30, "storage_class": "GLACIER"}]}, "must come after"),
        ({"id": "to-ia", "filter": {}, "expiration": {"days": 3}}, "has a rule 'to-ia' already"),
    ]
    for rule, message in cases:
        r = client.post(_url(world, "rules"), json=rule)
        assert r.status_code in (409, 422), r.text
        assert message in r.json()["detail"], (message, r.json()["detail"])
    assert [x["id"] for x in client.get(_url(world)).json()["rules"]] == ["to-ia"]


def test_members_see_only_their_own_buckets(member_client: TestClient, client: TestClient, world: World) -> None:
    assert client.put(_url(world), json={"rules": [IA_RULE]}).status_code == 200
    assert member_client.get(_url(world)).status_code == 404  # as a missing bucket: members do not see it
    assert member_client.put(_url(world), json={"rules": [IA_RULE]}).status_code == 404
    assert world.bucket not in [b["bucket"] for b in member_client.get("/api/lifecycle/buckets").json()]
    assert member_client.get("/api/lifecycle/meter").status_code == 403


def test_preview_shows_what_moves_when_and_the_cost_before_and_after(client: TestClient, world: World) -> None:
    today = midnight(utcnow())
    for i in range(3):
        put(world, f"raw/now-{i}", BIG)
    put(world, "raw/day10", BIG)
    put(world, "raw/day50", BIG)
    put(world, "raw/fresh", BIG)
    put(world, "tmp/x", b"t" * 1000)
    age(world, [f"raw/now-{i}" for i in range(3)], created_at=today - timedelta(days=40))
    age(world, ["raw/day10"], created_at=today - timedelta(days=20, hours=-1))
    age(world, ["raw/day50"], created_at=today + timedelta(days=20) - timedelta(days=30, hours=1))
    age(world, ["raw/fresh"], created_at=today)
    age(world, ["tmp/x"], created_at=today - timedelta(days=2))
    rules = [{"id": "chain", "filter": {"prefix": "raw/"},
              "transitions": [{"days": 30, "storage_class": "STANDARD_IA"}, {"days": 60, "storage_class": "GLACIER"}]},
             {"id": "tmp", "filter": {"prefix": "tmp/"}, "expiration": {"days": 7}}]
    assert client.put(_url(world), json={"rules": rules}).status_code == 200
    r = client.get("/api/lifecycle/preview", params={"bucket": world.bucket})
    assert r.status_code == 200, r.text
    p = r.json()
    assert len(p["series"]) == 90
    ia, glacier = f"infrequent-{world.tag}", f"archive-{world.tag}"
    moves = {(i, m["tier"]): m["objects"] for i, d in enumerate(p["series"]) for m in d["moves"]}
    assert moves == {(0, ia): 3, (11, ia): 1, (20, glacier): 3, (20, ia): 1, (30, ia): 1, (41, glacier): 1,
                     (50, glacier): 1, (60, glacier): 1}
    assert {i: d["expirations"]["objects"] for i, d in enumerate(p["series"]) if d["expirations"]["objects"]} == {5: 1}
    assert {t["tier"]: t["objects"] for t in p["totals"]["moves"]} == {ia: 6, glacier: 6}
    cost = p["cost"]
    assert float(cost["after_usd_month"]) < float(cost["before_usd_month"])
    tiers = {t["tier"]: t for t in cost["tiers"]}
    assert tiers[f"hot-{world.tag}"]["objects_before"] == 7 and tiers[f"hot-{world.tag}"]["objects_after"] == 0
    assert tiers[glacier]["objects_after"] == 6 and tiers[glacier]["price"] == "aws-us-east-1-2026:GLACIER"
    assert [s["key"] for s in p["samples"]] == ["raw/now-0", "raw/now-1", "raw/now-2"]
    everything = client.get("/api/lifecycle/preview").json()
    assert everything["totals"] == p["totals"]


def test_dry_run_shows_an_edited_rule_without_saving_it(client: TestClient, world: World) -> None:
    put(world, "raw/a", BIG)
    age(world, days=40)
    assert client.put(_url(world), json={"rules": [IA_RULE]}).status_code == 200
    edited = {**IA_RULE, "transitions": [{"days": 30, "storage_class": "GLACIER"}]}
    r = client.post(_url(world, "dry-run"), json={"rule": edited, "replace_id": "to-ia"})
    assert r.status_code == 200, r.text
    assert r.json()["preview"]["totals"]["moves"] == [{"tier": f"archive-{world.tag}", "objects": 1,
                                                       "bytes": len(BIG)}]
    with transaction() as s:
        stored = s.scalars(select(LifecycleConfiguration)).one()
        assert stored.rules[0]["transitions"][0]["storage_class"] == "STANDARD_IA"
    bad = client.post(_url(world, "dry-run"),
                      json={"rule": {"id": "b", "filter": {}, "transitions": [{"days": 1, "storage_class": "X"}]}})
    assert bad.status_code == 422 and "not a storage class" in bad.json()["detail"]


def test_history_failures_and_retry(client: TestClient, world: World) -> None:
    from tierpilot.drivers.posix import PosixDriver

    put(world, "raw/a", BIG)
    age(world, days=40)
    assert client.put(_url(world), json={"rules": [IA_RULE]}).status_code == 200
    blobs = PosixDriver(world.dirs["infrequent"]).root / "blobs"
    blobs.rename(blobs.with_name("away"))
    blobs.write_bytes(b"in the way")
    run_now(world.bucket_id)
    r = client.get("/api/lifecycle/moves", params={"bucket": world.bucket})
    [move] = r.json()["moves"]
    assert move["state"] == "failed" and move["error"] and move["attempts"] == 1
    assert r.json()["counts"] == {"failed": 1}
    blobs.unlink()
    blobs.with_name("away").rename(blobs)
    r = client.post(f"/api/lifecycle/moves/{move['id']}/retry")
    assert r.status_code == 200 and r.json() == {"retried": 1}
    assert client.post(f"/api/lifecycle/moves/{move['id']}/retry").status_code in (200, 409)
    run_now(world.bucket_id)
    [move] = client.get("/api/lifecycle/moves").json()["moves"]
    assert move["state"] == "done" and move["bytes_moved"] == len(BIG) and move["copy_seconds"] is not None
    assert placement(world)["raw/a"][0] == "infrequent"
    meter = client.get("/api/lifecycle/meter").json()["rows"]
    assert [(m["action"], m["objects"], m["bytes"], m["failures"]) for m in meter] == [
        ("transition", 1, len(BIG), 1)]
