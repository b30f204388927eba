"""The Cost planner prices the installation's own tiers (`tier:NAME`) by their price_ref."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.report import build_report
from tierpilot.pricing.schemas import Scenario

SCENARIO: dict[str, Any] = {
    "catalog": "aws-us-east-1-2026",
    "volume_gib": 500,
    "objects": 2000,
    "reads_per_month": 0.5,
    "egress": "same-region",
}


def _tier(client: TestClient, name: str, **extra: object) -> dict[str, Any]:
    r = client.post("/api/tiers", json={"name": name, "driver": "posix", "config": {"path": f"plan-{name}"},
                                        **extra})
    assert r.status_code == 201, r.text
    return r.json()


@pytest.fixture
def tiers(client: TestClient) -> dict[str, dict[str, Any]]:
    """A hot tier, an offline archive, a tier priced by an undated catalog id, and one without a price."""
    return {
        "hot": _tier(client, "hot", price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD"}),
        "vault": _tier(client, "vault", offline=True, storage_classes=["GLACIER"],
                       price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "GLACIER"}),
        "cool": _tier(client, "cool", price_ref={"catalog": "aws-us-east-1", "storage_class": "STANDARD_IA"}),
        "scratch": _tier(client, "scratch"),
    }


def test_members_list_every_tier_with_the_class_behind_it_or_why_it_has_none(
        tiers: dict[str, dict[str, Any]], member_client: TestClient) -> None:
    r = member_client.get("/api/pricing/installation-tiers")
    assert r.status_code == 200, r.text
    by_name = {t["name"]: t for t in r.json()}
    assert set(by_name) == {"hot", "vault", "cool", "scratch"}
    assert by_name["hot"] == {"id": tiers["hot"]["id"], "name": "hot", "ref": "tier:hot", "priceable": True,
                              "catalog": "aws-us-east-1-2026", "storage_class": "STANDARD",
                              "class_name": by_name["hot"]["class_name"], "offline": False, "reason": None,
                              "driver": "posix", "warning": by_name["hot"]["warning"]}
    assert by_name["vault"]["offline"] and by_name["vault"]["storage_class"] == "GLACIER"
    # a catalog id without its date means the newest, as the tier form accepts it
    assert by_name["cool"]["catalog"] == "aws-us-east-1-2026" and by_name["cool"]["priceable"]
    scratch = by_name["scratch"]
    assert not scratch["priceable"] and scratch["catalog"] is None
    assert "has no price_ref" in scratch["reason"]


def test_an_on_premises_tier_priced_as_a_cloud_class_is_flagged(client: TestClient,
                                                                tiers: dict[str, dict[str, Any]]) -> None:
    _tier(client, "tape", offline=True, price_ref={"catalog": "onprem-example-2026", "storage_class": "TAPE"})
    by_name = {t["name"]: t for t in client.get("/api/pricing/installation-tiers").json()}
    assert by_name["hot"]["warning"] == (
        "hot is an on-premises (posix) tier priced as a cloud class (STANDARD of aws-us-east-1-2026): its figures "
        "are that cloud's, not this site's; an admin can price it from an on-premises catalog (Settings → Tiers)")
    assert by_name["tape"]["warning"] is None and by_name["scratch"]["warning"] is None


def test_the_demo_tiers_are_priced_from_the_on_premises_catalog() -> None:
    from tierpilot.app.bootstrap import demo_tiers

    onprem = shipped_catalogs()["onprem-example-2026"]
    refs = {t.name: t.price_ref for t in demo_tiers()}
    assert refs == {"hot-disk": {"catalog": "onprem-example-2026", "storage_class": "DISK"},
                    "infrequent": {"catalog": "onprem-example-2026", "storage_class": "DISK"},
                    "archive": {"catalog": "onprem-example-2026", "storage_class": "TAPE"}}
    assert all(ref["storage_class"] in {c.id for c in onprem.classes} for ref in refs.values())


def test_installation_tiers_are_priced_as_their_catalog_class_and_labelled_by_name(
        tiers: dict[str, dict[str, Any]], member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/evaluate", json={
        **SCENARIO, "tiers": ["tier:hot", "tier:vault@bulk", "STANDARD_IA"],
        "hybrid": [{"name": "split", "parts": [{"tier": "hot", "data_share": 0.2},
                                               {"tier": "tier:vault@bulk", "data_share": 0.8}]}],
        "lifecycle": {"horizon_months": 6, "ingest_gib_per_month": 10, "start": "tier:hot",
                      "rules": [{"after_days": 30, "to": "vault@bulk"}], "search": False},
    })
    assert r.status_code == 200, r.text
    report = r.json()
    by_label = {t["tier"]: t for t in report["tiers"]}
    assert list(by_label) == ["hot", "vault@bulk", "STANDARD_IA"]
    hot, vault = by_label["hot"], by_label["vault@bulk"]
    assert (hot["installation_tier"], hot["catalog"], hot["storage_class"]) == ("hot", "aws-us-east-1-2026",
                                                                               "STANDARD")
    assert (vault["installation_tier"], vault["storage_class"], vault["restore_speed"]) == ("vault", "GLACIER",
                                                                                            "bulk")
    assert by_label["STANDARD_IA"]["installation_tier"] is None
    assert set(report["sweep"]["totals"]) == {"hot", "vault@bulk", "STANDARD_IA"}
    assert [p["tier"] for p in report["hybrid"][0]["parts"]] == ["hot", "tier:vault@bulk"]
    # lifecycle rules and hybrid parts may name an installation tier by its label or as tier:NAME
    assert set(report["lifecycle"]["policy"]["months"][-1]["stored_gib"]) <= {"hot", "vault@bulk"}
    assert report["lifecycle"]["policy"]["months"][-1]["stored_gib"]["vault@bulk"] > 0

    plain = member_client.post("/api/pricing/evaluate",
                               json={**SCENARIO, "tiers": ["STANDARD", "GLACIER@bulk"]}).json()
    assert hot["monthly"] == plain["tiers"][0]["monthly"]
    assert vault["monthly"] == plain["tiers"][1]["monthly"]


def test_a_saved_scenario_keeps_the_tier_names_and_follows_a_changed_price_ref(
        tiers: dict[str, dict[str, Any]], client: TestClient) -> None:
    r = client.post("/api/pricing/scenarios", json={"name": "mine", "body": {**SCENARIO, "tiers": ["tier:cool"]}})
    assert r.status_code == 201, r.text
    saved = r.json()
    assert saved["body"]["tiers"] == [{"tier": "cool", "label": "cool"}]
    first = client.get(f"/api/pricing/scenarios/{saved['id']}/report").json()["tiers"][0]
    assert first["storage_class"] == "STANDARD_IA"
    client.patch(f"/api/tiers/{tiers['cool']['id']}",
                 json={"price_ref": {"catalog": "aws-us-east-1-2026", "storage_class": "STANDARD"}})
    again = client.get(f"/api/pricing/scenarios/{saved['id']}/report").json()["tiers"][0]
    assert (again["tier"], again["storage_class"]) == ("cool", "STANDARD")


def test_unknown_or_unpriced_tiers_are_a_422_that_says_why(
        tiers: dict[str, dict[str, Any]], member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/evaluate", json={**SCENARIO, "tiers": ["STANDARD", "tier:nope"]})
    assert r.status_code == 422
    assert "no tier named nope" in r.json()["detail"] and "hot" in r.json()["detail"]
    r = member_client.post("/api/pricing/evaluate", json={**SCENARIO, "tiers": ["tier:scratch"]})
    assert r.status_code == 422 and "'scratch' has no price_ref" in r.json()["detail"]
    r = member_client.post("/api/pricing/report.csv", json={**SCENARIO, "tiers": ["tier:scratch"]})
    assert r.status_code == 422
    r = member_client.post("/api/pricing/evaluate", json={**SCENARIO, "tiers": ["tier:bad name"]})
    assert r.status_code == 422 and "tier:NAME" in r.json()["detail"]


def test_the_engine_alone_refuses_an_installation_tier_it_cannot_look_up() -> None:
    scenario = Scenario.model_validate({**SCENARIO, "tiers": ["STANDARD", "tier:hot"]})
    with pytest.raises(Invalid, match="installation tier"):
        build_report(scenario, shipped_catalogs())
