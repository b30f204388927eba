"""A scenario saved as a bucket's plan keeps the scenario's quantities (objects and their size, reads, restores,
egress destination, restored-copy days) and its stored volume, and is priced by the planner's own function: the
Spend view's planned month equals the planner's monthly figure to the cent, whatever the bucket holds."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from tierpilot.audit.service import Actor
from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog
from tierpilot.kit.errors import Invalid
from tierpilot.planner import installation
from tierpilot.pricing.schemas import Scenario
from tierpilot.spend import service
from tierpilot.spend.schemas import SpendPlanIn
from tierpilot.tiers import service as tier_service
from tierpilot.tiers.schemas import RestoreDelays, TierCreate

GIB = 2**30
NOW = datetime(2026, 11, 16, tzinfo=UTC)

# 200 TiB in 2 GiB objects; a twentieth read once a month over the research network, each copy kept a day
ARCHIVE_200_TIB: dict[str, Any] = {
    "catalog": "aws-us-east-1-2026", "tiers": ["GLACIER"], "volume_gib": 204800, "objects": 102400,
    "reads_per_month": 1, "read_fraction": 0.05, "egress": "research-network", "restored_copy_days": 1,
    "restore_speed": "standard",
}
SCENARIOS: list[dict[str, Any]] = [
    ARCHIVE_200_TIB,
    # the installation's own tier, bulk restores, internet egress past the free band, a week's copies
    {"catalog": "aws-us-east-1-2026", "tiers": ["tier:deep@bulk"], "volume_gib": 633, "objects": 1000,
     "reads_per_month": 2, "read_fraction": 0.5, "restored_copy_days": 7},
    # small objects (minimum billable size), ranged GETs, raw requests, overwrites and read-ahead
    {"catalog": "aws-us-east-1-2026", "tiers": ["STANDARD_IA"], "volume_gib": 50, "mean_object_size_mib": 0.05,
     "reads_per_month": 3, "get_part_size_mib": 8, "read_amplification": 1.5, "writes_per_month": 0.1,
     "requests": {"per": "day", "head": 20000, "list": 300}, "egress": "same-region"},
    # per-object monitoring of Intelligent-Tiering and a fixed monthly cost
    {"catalog": "aws-us-east-1-2026", "tiers": ["INTELLIGENT_TIERING"], "volume_gib": 5000, "objects": 2_000_000,
     "reads_per_month": 0.2, "fixed_costs": [{"name": "staff", "monthly": 40}]},
]


def _bucket(session: Session, tmp_path: Path) -> User:
    owner, _ = auth.create_user(session, "astronomer", "astronomer-pw")
    tier_service.create(session, TierCreate(
        name="deep", driver="posix", config={"path": str(tmp_path / "deep")}, storage_classes=["DEEP_ARCHIVE"],
        offline=True, restore_delays=RestoreDelays(expedited=1, standard=2, bulk=3),
        price_ref={"catalog": "aws-us-east-1-2026", "storage_class": "DEEP_ARCHIVE"}))
    # the bucket holds one small object: the plan is the scenario's volume, not what the bucket holds now
    bucket = catalog.create_bucket(session, owner_id=owner.id, name="survey", tier_name="deep")
    catalog.record_object(session, bucket.id, "a.fits", size=300_000, etag='"a"', tier_id=bucket.tier_id,
                          storage_class="DEEP_ARCHIVE", locator="a", now=datetime(2026, 9, 1, tzinfo=UTC))
    return owner


def _planner(session: Session, body: dict[str, Any]) -> dict[str, Any]:
    (tier,) = installation.evaluate(session, Scenario.model_validate(body))["tiers"]
    return dict(tier["monthly"])


def _planned(session: Session, owner: User, body: dict[str, Any]) -> dict[str, Any]:
    service.set_plan(session, owner, "survey", SpendPlanIn(scenario=Scenario.model_validate(body)),
                     Actor(owner.id, owner.username))
    (beside,) = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"]
    return dict(beside)


def test_the_200_tib_archive_plan_is_the_planners_month_to_the_cent(session: Session, tmp_path: Path) -> None:
    owner = _bucket(session, tmp_path)
    planner = _planner(session, ARCHIVE_200_TIB)
    assert round(Decimal(str(planner["total"])), 2) == Decimal("1124.19")
    beside = _planned(session, owner, ARCHIVE_200_TIB)
    assert round(Decimal(str(beside["planned"])), 2) == Decimal("1124.19")
    # storage is the scenario's 200 TiB at Glacier's rate with its per-object overheads, not the bucket's 300 kB
    assert beside["planned_storage"] == pytest.approx(planner["storage"], abs=1e-6)
    assert beside["planned_storage"] > 737
    plan = beside["plan"]
    assert plan["scenario"]["egress"] == "research-network" and plan["scenario"]["restored_copy_days"] == 1
    assert plan["restores_gib"] == 10240 and plan["reads_gib"] == 10240
    assert plan["restore_requests"] == 5120 and plan["priced_as"] == "GLACIER (aws-us-east-1-2026)"


@pytest.mark.parametrize("body", SCENARIOS, ids=["archive-200tib", "own-tier-bulk", "small-objects", "intelligent"])
def test_a_saved_scenario_plans_what_the_planner_prices_component_by_component(
        session: Session, tmp_path: Path, body: dict[str, Any]) -> None:
    owner = _bucket(session, tmp_path)
    planner = _planner(session, body)
    beside = _planned(session, owner, body)
    assert round(Decimal(str(beside["planned"])), 2) == round(Decimal(str(planner["total"])), 2)
    for spend_name, planner_names in (("storage", ("storage", "monitoring", "fixed")), ("requests", ("requests",)),
                                      ("retrieval", ("retrieval",)), ("egress", ("egress",)),
                                      ("restores", ("restore",)), ("restored_copy", ("restored_copy",)),
                                      ("early_deletion", ("early_deletion",))):
        wanted = sum(planner[n] for n in planner_names)
        assert beside["planned_components"][spend_name] == pytest.approx(wanted, abs=1e-6)


def test_a_scenario_plan_is_priced_at_one_of_its_tiers(session: Session, tmp_path: Path) -> None:
    owner = _bucket(session, tmp_path)
    with pytest.raises(Invalid) as refused:
        _planned(session, owner, {**ARCHIVE_200_TIB, "tiers": ["GLACIER", "STANDARD"]})
    assert refused.value.extra["field"] == "scenario.tiers"
    with pytest.raises(Invalid) as unknown:
        _planned(session, owner, {**ARCHIVE_200_TIB, "tiers": ["tier:nowhere"]})
    assert "no tier named nowhere" in str(unknown.value)
