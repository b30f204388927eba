"""The inputs real bills have: raw request counts, one-off costs, transfer destinations, read amplification,
a plan end date."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.pricing.helpers import case_study
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import DAYS_PER_MONTH, evaluate
from tierpilot.pricing.report import build_report, report_csv
from tierpilot.pricing.schemas import Scenario

CATALOGS = shipped_catalogs()


def _tier(s: Scenario, label: str) -> dict[str, Any]:
    return next(t for t in build_report(s, CATALOGS)["tiers"] if t["tier"] == label)


def test_raw_requests_per_hour_are_priced_per_type() -> None:
    # the case study's archive manager: about 350,000 file checks (HEAD) an hour
    base = _tier(case_study(), "STANDARD")["monthly"]["requests"]
    checked = _tier(case_study(requests={"per": "hour", "head": 350_000, "list": 10}), "STANDARD")
    per_month = Decimal(365 * 24) / 12
    expected = (350_000 * per_month * Decimal("0.00037") + 10 * per_month * Decimal("0.0047")) / 1000
    assert checked["monthly"]["requests"] == pytest.approx(base + float(expected), abs=1e-6)
    assert checked["monthly"]["requests"] > 90  # 255 M HEADs a month cost more than the storage


def test_one_off_costs_are_apart_from_the_monthly_ones() -> None:
    s = case_study(one_off={"initial_upload": True, "transition_in": True, "delete_at_end": True},
                   plan_start="2018-07-01", plan_end="2018-07-31")
    glacier = _tier(s, "GLACIER")
    assert glacier["one_off"]["initial_upload"] == pytest.approx(1000 * 0.05 / 1000)
    assert glacier["one_off"]["transitions"] == pytest.approx(1000 * 0.05 / 1000)
    # deleted after 31 of its 90 days: 59 days of storage still owed
    month_of_storage = Decimal(633) * Decimal("0.005") + 1000 * Decimal(32768) * Decimal("0.005") / 2**30
    assert glacier["one_off"]["early_deletion"] == pytest.approx(float(month_of_storage / DAYS_PER_MONTH * 59),
                                                                 abs=1e-6)
    assert glacier["tco"] == pytest.approx(glacier["monthly"]["total"] * 1 + glacier["one_off"]["total"], abs=1e-5)
    assert _tier(s, "STANDARD")["one_off"]["early_deletion"] == 0
    assert "one-off (USD)" in report_csv(build_report(s, CATALOGS))


def test_raw_requests_round_trip_through_the_report() -> None:
    s = case_study(requests={"per": "day", "copy": 3, "list": 4})
    again = Scenario.model_validate(build_report(s, CATALOGS)["scenario"])
    assert again.requests == s.requests


def test_plan_dates_give_the_months_of_the_total() -> None:
    s = case_study(plan_start="2026-01-01", plan_end="2030-12-31")
    assert s.months == 60
    t = _tier(s, "STANDARD_IA")
    assert t["total"]["total"] == pytest.approx(t["monthly"]["total"] * 60, rel=1e-9)


def test_transfer_to_another_region_or_cloud() -> None:
    inter = _tier(case_study(egress="inter-region", tiers=["STANDARD"]), "STANDARD")["monthly"]["egress"]
    assert inter == pytest.approx(633 * 0.09)
    cloud = _tier(case_study(egress="other-cloud", tiers=["STANDARD"]), "STANDARD")["monthly"]["egress"]
    assert cloud == pytest.approx(633 * 0.140)
    ev = evaluate(case_study(egress="inter-region", tiers=["gcp-us-central1-2026:COLDLINE"]), CATALOGS)
    assert any("lists no inter-region rate" in n for n in ev.notes)


def test_read_amplification_scales_transfer_and_retrieval_not_restores() -> None:
    plain = _tier(case_study(egress="internet"), "GLACIER")["monthly"]
    amplified = _tier(case_study(egress="internet", read_amplification=2.5), "GLACIER")["monthly"]
    assert amplified["egress"] == pytest.approx(plain["egress"] * 2.5)
    assert amplified["restore"] == plain["restore"]
    ia = _tier(case_study(read_amplification=2), "STANDARD_IA")["monthly"]
    assert ia["retrieval"] == pytest.approx(633 * 0.01 * 2)


BAD: list[tuple[dict[str, Any], str]] = [
    ({"requests": {"head": 1.5}}, "requests"),
    ({"requests": {"head": -1}}, "requests"),
    ({"requests": {"per": "week"}}, "requests"),
    ({"requests": {"fetch": 1}}, "requests"),
    ({"read_amplification": 0.5}, "read_amplification"),
    ({"plan_end": "2027-01-01"}, "plan_start"),
    ({"plan_start": "2027-01-01", "plan_end": "2026-01-01"}, "plan_end"),
    ({"plan_start": "2026-01-01", "plan_end": "2027-01-01", "months": 12}, "months"),
    ({"egress": "moon"}, "egress"),
    ({"one_off": {"initial_upload": "maybe"}}, "one_off"),
    ({"objects": 1000.5}, "objects"),
]


def test_bad_new_inputs_are_a_422_naming_the_field(member_client: TestClient) -> None:
    for change, field in BAD:
        body = {"catalog": "aws-ap-northeast-1-2018", "tiers": ["STANDARD"], "volume_gib": 633, "objects": 1000,
                **change}
        r = member_client.post("/api/pricing/evaluate", json=body)
        assert r.status_code == 422, (change, r.text)
        assert field in r.text, (change, r.text)
