from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from tierpilot.pricing.catalogs import CATALOG_DIR, shipped_catalogs
from tierpilot.pricing.report import build_report
from tierpilot.pricing.schemas import Scenario

SAMPLES = Path(__file__).parent / "samples"
MINIMAL: dict[str, Any] = {
    "catalog": "aws-ap-northeast-1-2018",
    "tiers": ["STANDARD", "STANDARD_IA", "GLACIER"],
    "volume_gib": 633,
    "objects": 1000,
    "reads_per_month": 1,
    "restore_speed": "standard",
    "egress": "same-region",
}


def _added_catalog(catalog_id: str = "aws-ap-northeast-1-2019") -> dict[str, Any]:
    data = yaml.safe_load((CATALOG_DIR / "aws-ap-northeast-1-2018.yaml").read_text())
    data["id"] = catalog_id
    data["valid_from"] = "2019-04-01"
    data["classes"][0]["storage"] = [{"price": 0.03}]
    return data


def test_catalogs_are_listed_for_members_with_their_dates(member_client: TestClient) -> None:
    r = member_client.get("/api/pricing/catalogs")
    assert r.status_code == 200
    by_id = {c["id"]: c for c in r.json()}
    assert set(shipped_catalogs()) <= set(by_id)
    tokyo = by_id["aws-ap-northeast-1-2018"]
    assert tokyo["valid_from"] == "2018-07-01" and tokyo["origin"] == "shipped" and tokyo["has_estimates"]
    one = member_client.get("/api/pricing/catalogs/aws-us-east-1")
    assert one.status_code == 200 and one.json()["id"] == "aws-us-east-1-2026"
    assert one.json()["classes"][0]["storage"][0]["price"] == 0.023
    assert member_client.get("/api/pricing/catalogs/aws-mars-1").status_code == 404


def test_signed_out_users_get_401(app_client: TestClient) -> None:
    assert app_client.get("/api/pricing/catalogs").status_code == 401
    assert app_client.post("/api/pricing/evaluate", json=MINIMAL).status_code == 401


def test_evaluate_returns_the_same_report_as_the_cli(member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/evaluate", json=MINIMAL)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body == json.loads(json.dumps(build_report(Scenario.model_validate(MINIMAL), shipped_catalogs())))
    tiers = {t["tier"]: t for t in body["tiers"]}
    assert round(tiers["STANDARD"]["monthly"]["storage"], 1) == 15.8
    assert set(tiers["GLACIER"]["monthly"]) == {"storage", "requests", "retrieval", "restore", "restored_copy",
                                                "egress", "early_deletion", "monitoring", "fixed", "total"}
    ia_vs_s3 = next(b for b in body["break_even"]
                    if b["cheaper_below"] == "STANDARD_IA" and b["cheaper_above"] == "STANDARD")
    assert abs(ia_vs_s3["reads_per_month"] - 0.60) <= 0.02
    assert len(body["sweep"]["reads_per_month"]) == 200
    assert body["cheapest"][0]["from"] == 0


def test_a_bad_scenario_is_a_422_that_says_what_is_wrong(member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/evaluate", json={**MINIMAL, "tiers": ["STANDARD", "STANDARD"]})
    assert r.status_code == 422 and "listed twice" in r.json()["detail"]
    r = member_client.post("/api/pricing/evaluate", json={**MINIMAL, "tiers": ["NEARLINE"]})
    assert r.status_code == 422 and "has no class NEARLINE" in r.json()["detail"]
    r = member_client.post("/api/pricing/evaluate", json={**MINIMAL, "catalog": "aws-mars-1"})
    assert r.status_code == 404


def test_admins_add_catalogs_as_json_or_yaml_and_members_cannot(client: TestClient,
                                                                 member_client: TestClient) -> None:
    data = _added_catalog()
    assert member_client.post("/api/pricing/catalogs", json=data).status_code == 403
    r = client.post("/api/pricing/catalogs", json=data)
    assert r.status_code == 201, r.text
    assert r.json()["origin"] == "added"
    assert client.post("/api/pricing/catalogs", json=data).status_code == 409
    shipped = json.loads(json.dumps(yaml.safe_load((CATALOG_DIR / "aws-us-east-1-2026.yaml").read_text()),
                                    default=str))
    assert client.post("/api/pricing/catalogs", json=shipped).status_code == 409
    upload = yaml.safe_dump(_added_catalog("aws-ap-northeast-1-2020"))
    r = client.post("/api/pricing/catalogs/upload", files={"file": ("tokyo.yaml", upload, "application/yaml")})
    assert r.status_code == 201, r.text
    ids = {c["id"] for c in member_client.get("/api/pricing/catalogs").json()}
    assert {"aws-ap-northeast-1-2019", "aws-ap-northeast-1-2020"} <= ids
    # an added catalog prices scenarios at once
    report = member_client.post("/api/pricing/evaluate", json={**MINIMAL, "catalog": "aws-ap-northeast-1-2019"})
    assert report.json()["tiers"][0]["monthly"]["storage"] == pytest.approx(633 * 0.03)


def test_invalid_catalog_uploads_change_nothing(client: TestClient) -> None:
    bad = _added_catalog()
    bad["classes"][0]["storage"] = [{"up_to_gib": 10, "price": 1}]
    r = client.post("/api/pricing/catalogs", json=bad)
    assert r.status_code == 422
    r = client.post("/api/pricing/catalogs/upload", files={"file": ("x.yaml", yaml.safe_dump(bad), "text/plain")})
    assert r.status_code == 422 and "only the last band" in r.json()["detail"]
    r = client.post("/api/pricing/catalogs/upload", files={"file": ("x.yaml", "id: [", "text/plain")})
    assert r.status_code == 422 and "not valid YAML" in r.json()["detail"]
    ids = {c["id"] for c in client.get("/api/pricing/catalogs").json()}
    assert "aws-ap-northeast-1-2019" not in ids


def test_added_catalogs_can_be_deleted_but_shipped_ones_cannot(client: TestClient) -> None:
    client.post("/api/pricing/catalogs", json=_added_catalog())
    assert client.delete("/api/pricing/catalogs/aws-ap-northeast-1-2019").status_code == 204
    assert client.get("/api/pricing/catalogs/aws-ap-northeast-1-2019").status_code == 404
    assert client.delete("/api/pricing/catalogs/aws-us-east-1-2026").status_code == 409


def test_price_lists_are_imported_into_catalogs(client: TestClient, member_client: TestClient) -> None:
    files = [("files", (p.name, p.read_bytes(), "application/json"))
             for p in sorted(SAMPLES.glob("aws-price-list-*.json"))]
    form = {"format": "aws-price-list", "region": "us-east-1", "catalog_id": "aws-us-east-1-imported-2026"}
    preview = client.post("/api/pricing/catalogs/import", files=files, data={**form, "dry_run": "true"})
    assert preview.status_code == 201, preview.text
    assert {c["id"] for c in preview.json()["classes"]} >= {"STANDARD", "GLACIER", "DEEP_ARCHIVE"}
    assert client.get("/api/pricing/catalogs/aws-us-east-1-imported-2026").status_code == 404
    assert member_client.post("/api/pricing/catalogs/import", files=files, data=form).status_code == 403
    saved = client.post("/api/pricing/catalogs/import", files=files, data=form)
    assert saved.status_code == 201
    assert client.get("/api/pricing/catalogs/aws-us-east-1-imported-2026").status_code == 200
    azure = [("files", (p.name, p.read_bytes(), "application/json"))
             for p in sorted(SAMPLES.glob("azure-retail-prices-*.json"))]
    r = client.post("/api/pricing/catalogs/import", files=azure,
                    data={"format": "azure-retail-prices", "region": "eastus", "catalog_id": "azure-eastus-2027"})
    assert r.status_code == 201 and r.json()["classes"][-1]["id"] == "ARCHIVE"
    r = client.post("/api/pricing/catalogs/import", files=azure, data={"format": "aws-price-list"})
    assert r.status_code == 422 and "not an AWS Price List" in r.json()["detail"]


def test_members_keep_their_own_scenarios(client: TestClient, member_client: TestClient) -> None:
    created = member_client.post("/api/pricing/scenarios", json={"name": "belle2 archive", "body": MINIMAL})
    assert created.status_code == 201, created.text
    sid = created.json()["id"]
    assert created.json()["body"]["volume_gib"] == 633
    theirs = client.post("/api/pricing/scenarios", json={"name": "admin plan", "body": MINIMAL}).json()["id"]
    listed = member_client.get("/api/pricing/scenarios").json()
    assert [s["name"] for s in listed] == ["belle2 archive"]
    assert member_client.get(f"/api/pricing/scenarios/{theirs}").status_code == 404
    assert member_client.delete(f"/api/pricing/scenarios/{theirs}").status_code == 404
    assert client.get(f"/api/pricing/scenarios/{sid}").status_code == 200  # admins may read any
    assert {s["id"] for s in client.get("/api/pricing/scenarios?all=true").json()} == {sid, theirs}
    assert member_client.get("/api/pricing/scenarios?all=true").status_code == 403

    renamed = member_client.patch(f"/api/pricing/scenarios/{sid}",
                                  json={"name": "belle2", "body": {**MINIMAL, "reads_per_month": 0.2}})
    assert renamed.status_code == 200 and renamed.json()["name"] == "belle2"
    assert renamed.json()["body"]["reads_per_month"] == 0.2
    bad = member_client.patch(f"/api/pricing/scenarios/{sid}", json={"body": {**MINIMAL, "objects": -1}})
    assert bad.status_code == 422
    assert member_client.get(f"/api/pricing/scenarios/{sid}").json()["body"]["reads_per_month"] == 0.2

    copy = member_client.post(f"/api/pricing/scenarios/{sid}/duplicate")
    assert copy.status_code == 201 and copy.json()["name"] == "belle2 (copy)" and copy.json()["id"] != sid
    report = member_client.get(f"/api/pricing/scenarios/{sid}/report")
    assert report.status_code == 200 and report.json()["reads_per_month"] == 0.2
    assert member_client.delete(f"/api/pricing/scenarios/{sid}").status_code == 204
    assert member_client.get(f"/api/pricing/scenarios/{sid}").status_code == 404


def test_a_shared_link_lets_another_user_read_until_unshared(client: TestClient, member_client: TestClient) -> None:
    sid = member_client.post("/api/pricing/scenarios", json={"name": "shared", "body": MINIMAL}).json()["id"]
    share = member_client.post(f"/api/pricing/scenarios/{sid}/share").json()
    token = share["share_token"]
    assert share["path"] == f"/planner?shared={token}"
    assert member_client.post(f"/api/pricing/scenarios/{sid}/share").json()["share_token"] == token
    seen = client.get(f"/api/pricing/shared/{token}")
    assert seen.status_code == 200 and seen.json()["name"] == "shared"
    assert client.get(f"/api/pricing/shared/{token}/report.csv").status_code == 200
    assert member_client.delete(f"/api/pricing/scenarios/{sid}/share").status_code == 204
    assert client.get(f"/api/pricing/shared/{token}").status_code == 404


def test_reports_export_to_csv(member_client: TestClient) -> None:
    r = member_client.post("/api/pricing/report.csv", json={**MINIMAL, "fixed_costs": [{"name": "ops",
                                                                                         "monthly": 5}]})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(r.text)))
    catalog_row = next(row for row in rows if row and row[0] == "aws-ap-northeast-1-2018")
    assert catalog_row[4] == "2018-07-01"
    # the source column names the sources and their date, not a path of the price notes
    assert catalog_row[6].startswith("Cloud cold storage case study (AWS Tokyo, 2018)")
    assert catalog_row[6].endswith("(prices valid from 2018-07-01)")
    assert "PRICES.md" not in catalog_row[6] and "../" not in catalog_row[6] and "section" not in catalog_row[6]
    header = rows.index(next(row for row in rows if row and row[0] == "monthly (USD)"))
    assert rows[header][4:] == ["storage", "requests", "retrieval", "restore", "restored_copy", "egress",
                                "early_deletion", "monitoring", "fixed", "total"]
    standard = rows[header + 1]
    assert standard[0] == "STANDARD" and float(standard[-2]) == 5 and float(standard[4]) == pytest.approx(15.825)
    assert any(row[:2] == ["STANDARD_IA", "STANDARD"] for row in rows)
    sweep = rows.index(next(row for row in rows if row and row[0] == "sweep: reads_per_month"))
    assert len(rows) - sweep - 1 >= 200

    sid = member_client.post("/api/pricing/scenarios", json={"name": "my plan/v2", "body": MINIMAL}).json()["id"]
    saved = member_client.get(f"/api/pricing/scenarios/{sid}/report.csv")
    assert saved.status_code == 200 and 'filename="my-plan-v2.csv"' in saved.headers["content-disposition"]
