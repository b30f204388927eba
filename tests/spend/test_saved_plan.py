"""A bucket's saved planned usage beside the actual: restores planned at a speed are priced with the tier's catalog,
so a month with more restores diverges for that reason and a month within its plan does not; the API lets the
bucket's owner and admins set it, with 422s naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tests.catalog.conftest import tiers  # noqa: F401  (fixture: the tiers buckets are created on)
from tierpilot.audit.service import Actor
from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog
from tierpilot.pricing.engine import DAYS_PER_MONTH
from tierpilot.restores import repository as restores_repository
from tierpilot.spend import service
from tierpilot.spend.schemas import SpendPlanIn
from tierpilot.tiers import service as tier_service
from tierpilot.tiers.models import Tier
from tierpilot.tiers.schemas import RestoreDelays, TierCreate

GIB = 2**30
NOW = datetime(2026, 11, 16, tzinfo=UTC)  # 15 of November's 30 days gone: the month so far counts twice
# Tokyo 2026 Glacier: standard restores 0.011 $/GiB + 0.0571 $ per 1,000; the copy at Standard's 0.025 $/GiB-month
STANDARD_RESTORE, PER_REQUEST, COPY = 0.011, 0.0571 / 1000, 0.025


def _archive(session: Session, tmp_path: Path) -> tuple[User, int, int]:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    tier = tier_service.create(session, TierCreate(
        name="glacier", driver="posix", config={"path": str(tmp_path / "glacier")}, storage_classes=["GLACIER"],
        offline=True, restore_delays=RestoreDelays(expedited=1, standard=2, bulk=3),
        price_ref={"catalog": "aws-ap-northeast-1", "storage_class": "GLACIER"}))
    bucket = catalog.create_bucket(session, owner_id=owner.id, name="belle2", tier_name="glacier")
    catalog.record_object(session, bucket.id, "runs.tar", size=100 * GIB, etag='"r"', tier_id=tier.id,
                          storage_class="GLACIER", locator="runs", now=datetime(2026, 9, 1, tzinfo=UTC))
    return owner, bucket.id, tier.id


def _restores(session: Session, owner: User, tier_id: int, sizes_gib: list[int], kept: bool) -> None:
    items: list[dict[str, Any]] = []
    for i, size in enumerate(sizes_gib):
        asked = datetime(2026, 11, 2 + i, tzinfo=UTC)
        ready = asked + timedelta(hours=4) if kept else None
        items.append(dict(owner_id=owner.id, bucket="belle2", key=f"runs-{i}", size=size * GIB, tier_id=tier_id,
                          locator=f"l-{i}", speed="standard", days=7, state="expired" if kept else "ongoing",
                          requested_at=asked, ready_at=ready, expires_at=ready + timedelta(days=7) if ready else None))
    restores_repository.insert_items(session, items)
    session.flush()


def _plan(session: Session, owner: User, **usage: Any) -> None:
    service.set_plan(session, owner, "belle2", SpendPlanIn(**usage), Actor(owner.id, owner.username))


def test_more_restores_than_planned_make_the_month_diverge_for_that_reason(session: Session,
                                                                          tmp_path: Path) -> None:
    owner, _, tier = _archive(session, tmp_path)
    _plan(session, owner, restores_gib=10, restore_speed="standard")
    _restores(session, owner, tier, [20, 10, 10], kept=False)

    (beside,) = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"]
    assert beside["plan"]["restores_gib"] == 10 and beside["plan"]["restore_speed"] == "standard"
    # 10 GiB of the bucket's one 100 GiB object: one restore request; its copy kept the restores' default 7 days
    restores = 10 * STANDARD_RESTORE + PER_REQUEST
    copy = 10 * COPY * 7 / float(DAYS_PER_MONTH)
    assert beside["planned"] == pytest.approx(beside["planned_storage"] + restores + copy, abs=2e-6)
    assert beside["diverges"]
    (reason,) = beside["reasons"]
    assert reason.startswith("restores ") and (
        "more restores than planned, 3 restore requests of 40.00 GiB so far against 1 restore request of 10.00 GiB "
        "planned at standard speed") in reason, reason
    # projected: 40 GiB of standard restores so far, twice over by the month's end
    assert f"{2 * (40 * STANDARD_RESTORE + 3 * PER_REQUEST):.4f} $ against {restores:.4f} $ planned" in reason


def test_a_month_within_its_planned_restores_does_not_diverge(session: Session, tmp_path: Path) -> None:
    owner, _, tier = _archive(session, tmp_path)
    _plan(session, owner, restores_gib=80, restore_speed="standard")
    _restores(session, owner, tier, [20, 20], kept=True)  # 40 GiB in half the month, copies kept 7 days

    (beside,) = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"]
    assert beside["projected"] == pytest.approx(beside["planned"], rel=0.01)
    assert not beside["diverges"] and beside["reasons"] == []


def test_without_a_saved_plan_the_plan_is_storage_only_and_says_so(session: Session, tmp_path: Path) -> None:
    owner, bucket_id, tier = _archive(session, tmp_path)
    _restores(session, owner, tier, [40], kept=False)
    (beside,) = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"]
    assert beside["plan"] is None and beside["planned"] == beside["planned_storage"]
    assert any(r.startswith("restores ") and "not in the plan (no usage planned: storage only)" in r
               for r in beside["reasons"]), beside["reasons"]
    # a plan deleted is storage only again
    _plan(session, owner, restores_gib=40)
    service.delete_plan(session, owner, "belle2", Actor(owner.id, owner.username))
    (again,) = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"]
    assert again["plan"] is None and again["planned"] == beside["planned"]


def test_planned_reads_and_requests_are_priced_like_metered_ones(session: Session, tmp_path: Path) -> None:
    owner, _, _ = _archive(session, tmp_path)
    tier_service.create(session, TierCreate(name="ia", driver="posix", config={"path": str(tmp_path / "ia")},
                                     storage_classes=["STANDARD_IA"],
                                     price_ref={"catalog": "aws-ap-northeast-1", "storage_class": "STANDARD_IA",
                                                "egress": "research-network"}))
    ia = catalog.create_bucket(session, owner_id=owner.id, name="ntuples", tier_name="ia")
    catalog.record_object(session, ia.id, "n.root", size=GIB, etag='"n"', tier_id=ia.tier_id,
                          storage_class="STANDARD_IA", locator="n", now=datetime(2026, 9, 1, tzinfo=UTC))
    service.set_plan(session, owner, "ntuples", SpendPlanIn(reads_gib=Decimal(50), read_requests=2_000_000,
                                                           write_requests=1_000), Actor(owner.id, owner.username))
    out = service.spend(session, owner, "2026-11", "bucket", now=NOW)
    beside = {p["bucket"]: p for p in out["planned"]}["ntuples"]
    # Tokyo 2026 Standard-IA: GET 0.001 $ and PUT 0.01 $ per 1,000, retrieval 0.01 $/GiB; the tier's reads leave
    # over the research network, 0.0342 $/GiB in its first band
    usage = 2_000_000 * 0.001 / 1000 + 1_000 * 0.01 / 1000 + 50 * 0.01 + 50 * 0.0342
    assert beside["planned"] - beside["planned_storage"] == pytest.approx(usage, abs=2e-6)
    assert beside["plan"]["read_requests"] == 2_000_000 and beside["plan"]["reads_gib"] == 50
    # none of it has happened: the month diverges, each planned component says what was planned
    reasons = " | ".join(beside["reasons"])
    assert "fewer requests than planned, 0 requests so far against 2000000 GET-class and 1000 PUT-class planned" in (
        reasons), reasons
    assert "fewer reads than planned" in reasons and "against 50.00 GiB planned" in reasons


def test_plans_api_owner_or_admin_others_404_and_422s_naming_the_field(
        client: TestClient, member_client: TestClient, tiers: dict[str, Tier]) -> None:  # noqa: F811
    for who, name in ((member_client, "member-data"), (client, "admin-data")):
        r = who.post("/api/buckets", json={"name": name})
        assert r.status_code == 201, r.text
    url = "/api/spend/plans/member-data"
    assert member_client.get(url).status_code == 404  # nothing saved: storage only
    body = {"reads_gib": 12.5, "read_requests": 30000, "write_requests": 200, "restores_gib": 40,
            "restore_speed": "bulk"}
    r = member_client.put(url, json=body)
    assert r.status_code == 200, r.text
    saved = r.json()
    assert {k: saved[k] for k in body} == body and saved["updated_by"] == "member" and saved["bucket"] == "member-data"
    assert member_client.get(url).json() == saved
    assert client.get(url).json()["restores_gib"] == 40  # admins see every bucket's plan
    month = datetime.now(UTC).strftime("%Y-%m")
    (beside,) = member_client.get("/api/spend", params={"month": month, "group_by": "bucket"}).json()["planned"]
    assert beside["plan"]["reads_gib"] == 12.5
    for bad, field in (({"read_requests": 1.5}, "read_requests"), ({"write_requests": -1}, "write_requests"),
                       ({"reads_gib": -0.1}, "reads_gib"), ({"restores_gib": "NaN"}, "restores_gib"),
                       ({"restore_speed": "warp"}, "restore_speed"), ({"reads": 3}, "reads")):
        r = member_client.put(url, json={**body, **bad})
        assert r.status_code == 422 and field in r.json()["detail"], (bad, r.text)
    assert member_client.get(url).json() == saved  # refused changes leave the plan as it was
    # another member's bucket is not there for them, whatever the method; nor is a bucket that does not exist
    for method in ("get", "put", "delete"):
        for name in ("admin-data", "nowhere"):
            kwargs: dict[str, Any] = {"json": body} if method == "put" else {}
            r = getattr(member_client, method)(f"/api/spend/plans/{name}", **kwargs)
            assert r.status_code == 404, (method, name, r.text)
    assert client.put("/api/spend/plans/member-data", json={**body, "restores_gib": 5}).json()["updated_by"] == "admin"
    assert member_client.delete(url).status_code == 204
    assert member_client.get(url).status_code == 404 and member_client.delete(url).status_code == 404
    events = client.get("/api/audit", params={"event": "bucket.spend_plan_changed"}).json()["events"]
    assert [(e["actor"], e["target"], e["detail"]["change"]) for e in reversed(events)] == [
        ("member", "member-data", "set"), ("admin", "member-data", "set"), ("member", "member-data", "deleted")]
