"""The Planner's "save as this bucket's plan": a scenario's month as the bucket's planned usage, saved through the
Spend plans API (its owner-or-admin rule), and priced beside the actual there."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient

from tests.catalog.conftest import tiers  # noqa: F401  (fixture: the tiers buckets are created on)
from tierpilot.tiers.models import Tier

SCENARIO: dict[str, Any] = {
    "catalog": "aws-us-east-1-2026", "tiers": ["STANDARD", "GLACIER@bulk"], "volume_gib": 100, "objects": 1000,
    "reads_per_month": 2, "read_fraction": 0.5, "read_amplification": 1.5, "writes_per_month": 0.1,
    "requests": {"per": "day", "get": 10, "head": 2, "put": 1, "list": 3}, "restore_speed": "expedited",
}


def test_a_scenario_month_becomes_the_usage_fields_of_a_bucket_plan(member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/plan-usage", json=SCENARIO)
    assert r.status_code == 200, r.text
    usage = r.json()
    # 2 reads of half of 100 GiB with 1.5x read-ahead; 500 GETs a read plus 12 a day; 100 PUTs plus 4 a day
    assert {k: v for k, v in usage.items() if k != "basis"} == {
        "reads_gib": 150.0, "read_requests": round(1000 + 12 * 365 / 12), "write_requests": round(100 + 4 * 365 / 12),
        "restores_gib": 100.0, "restore_speed": "expedited"}
    assert usage["basis"][-1] == "restores: what the reads restore from GLACIER@bulk"
    # ranged GETs multiply the requests of each read; without an archive tier nothing is restored
    ranged = {**SCENARIO, "tiers": ["STANDARD"], "get_part_size_mib": 16, "volume_gib": 1000, "requests": None}
    usage = member_client.post("/api/pricing/plan-usage", json=ranged).json()
    assert usage["read_requests"] == 1000 * 64 * 0.5 * 2 and usage["restores_gib"] == 0
    assert usage["basis"][-1] == "restores: none (no tier of the scenario is an archive)"
    r = member_client.post("/api/pricing/plan-usage", json={**SCENARIO, "tiers": ["tier:nowhere"]})
    assert r.status_code == 422 and "no tier named nowhere" in r.json()["detail"]


def test_the_usage_saves_as_the_owners_bucket_plan_and_shows_beside_the_actual(
        client: TestClient, member_client: TestClient, tiers: dict[str, Tier]) -> None:  # noqa: F811
    assert member_client.post("/api/buckets", json={"name": "member-data"}).status_code == 201
    assert client.post("/api/buckets", json={"name": "admin-data"}).status_code == 201
    usage = member_client.post("/api/pricing/plan-usage", json=SCENARIO).json()
    body = {k: usage[k] for k in ("reads_gib", "read_requests", "write_requests", "restores_gib", "restore_speed")}
    r = member_client.put("/api/spend/plans/member-data", json=body)
    assert r.status_code == 200, r.text
    assert {k: r.json()[k] for k in body} == body
    month = datetime.now(UTC).strftime("%Y-%m")
    (beside,) = member_client.get("/api/spend", params={"month": month, "group_by": "bucket"}).json()["planned"]
    assert beside["bucket"] == "member-data" and {k: beside["plan"][k] for k in body} == body
    assert beside["plan"]["scenario"] is None
    # the plans API's rule: another member's bucket is not there for them
    assert member_client.put("/api/spend/plans/admin-data", json=body).status_code == 404
