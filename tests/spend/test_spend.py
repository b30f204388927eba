"""Actual spend: stored GiB-days and metered requests priced with each tier's catalog of the month."""

from __future__ import annotations

import asyncio
import csv
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog
from tierpilot.kit.db import transaction
from tierpilot.kit.errors import Invalid
from tierpilot.kit.flow import BestEffortPolicy, FlowRequest
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.spend import repository, service, stored
from tierpilot.spend.usage import Meter, MeteringPolicy
from tierpilot.tiers import repository as tiers_repository
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

GIB = 2**30
NOW = datetime(2026, 11, 16, tzinfo=UTC)  # half of November gone


def _setup(session: Session, tmp_path: Path) -> User:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    other, _ = auth.create_user(session, "astronomer", "astronomer-pw")
    tiers.create(session, TierCreate(name="ia", driver="posix", config={"path": str(tmp_path)},
                                     storage_classes=["STANDARD_IA"],
                                     price_ref={"catalog": "aws-ap-northeast-1", "storage_class": "STANDARD_IA"}))
    mine = catalog.create_bucket(session, owner_id=owner.id, name="belle2", tier_name="ia")
    theirs = catalog.create_bucket(session, owner_id=other.id, name="telescope", tier_name="ia")
    # 10 GiB stored since before the month, 4 GiB from the 11th
    catalog.record_object(session, mine.id, "old", size=10 * GIB, etag='"a"', tier_id=mine.tier_id,
                          storage_class="STANDARD_IA", locator="belle2/old", now=datetime(2026, 9, 1, tzinfo=UTC))
    catalog.record_object(session, mine.id, "new", size=4 * GIB, etag='"b"', tier_id=mine.tier_id,
                          storage_class="STANDARD_IA", locator="belle2/new", now=datetime(2026, 11, 11, tzinfo=UTC))
    # stored before the six months the answer covers: summed with the bucket's other old objects
    catalog.record_object(session, mine.id, "ancient", size=GIB, etag='"d"', tier_id=mine.tier_id,
                          storage_class="STANDARD_IA", locator="belle2/ancient", now=datetime(2025, 1, 1, tzinfo=UTC))
    catalog.record_object(session, theirs.id, "sky", size=GIB, etag='"c"', tier_id=theirs.tier_id,
                          storage_class="STANDARD_IA", locator="telescope/sky", now=datetime(2026, 9, 1, tzinfo=UTC))
    repository.add_usage(session, [("2026-11-12", owner.id, mine.id, "read", 2000, 20 * GIB),
                                   ("2026-11-12", owner.id, mine.id, "write", 10, 4 * GIB),
                                   ("2026-10-03", owner.id, mine.id, "read", 1000, GIB)])
    session.flush()
    return owner


def test_month_so_far_prices_gib_days_and_metered_requests_with_the_catalog_of_the_month(
        session: Session, tmp_path: Path) -> None:
    owner = _setup(session, tmp_path)
    out = service.spend(session, owner, "2026-11", "bucket", now=NOW)
    assert [g["key"] for g in out["groups"]] == ["belle2"]  # an owner sees only their buckets
    line = out["groups"][0]
    ia = shipped_catalogs()["aws-ap-northeast-1-2026"].storage_class("STANDARD_IA")
    gib_days = 10 * 15 + 4 * 5 + 1 * 15
    assert line["gib_days"] == pytest.approx(gib_days)
    assert line["storage"] == pytest.approx(gib_days * 12 / 365 * float(ia.storage[0].price), abs=1e-6)
    assert line["requests"] == pytest.approx(2000 * 0.001 / 1000 + 10 * 0.01 / 1000)
    assert line["retrieval"] == pytest.approx(20 * 0.01)
    assert line["egress"] == 0  # the first 100 GiB of the month leave free in the 2026 Tokyo list
    assert line["catalogs"] == ["aws-ap-northeast-1-2026"]
    # the month ahead: a month of the 15 GiB stored now for the half month left, the rest at the rate so far
    storage_ahead = 15 * float(ia.storage[0].price) * 15 / 30
    assert out["forecast"] == pytest.approx(line["storage"] + storage_ahead + (out["so_far"] - line["storage"]) * 2,
                                            abs=1e-5)
    # October is priced with the catalog of October 2026: 2018's is long superseded, 2026's began in July
    october = next(h for h in out["history"] if h["month"] == "2026-10")
    assert october["retrieval"] == pytest.approx(0.01)
    beside = out["planned"][0]
    assert beside["bucket"] == "belle2" and beside["diverges"]
    assert any(r.startswith("retrieval") for r in beside["reasons"])


def test_a_month_before_2026_uses_the_2018_catalog(session: Session, tmp_path: Path) -> None:
    cat = stored.catalog_of_month(shipped_catalogs(), "aws-ap-northeast-1", datetime(2019, 1, 31).date())
    assert cat is not None and cat.id == "aws-ap-northeast-1-2018"
    cat = stored.catalog_of_month(shipped_catalogs(), "aws-ap-northeast-1-2026", datetime(2019, 1, 31).date())
    assert cat is not None and cat.id == "aws-ap-northeast-1-2018"
    assert stored.catalog_of_month(shipped_catalogs(), "aws-mars-1", datetime(2019, 1, 31).date()) is None


def test_admins_see_every_owner_grouped_by_user_and_tier(session: Session, tmp_path: Path) -> None:
    _setup(session, tmp_path)
    admin, _ = auth.create_user(session, "root", "root-password", is_admin=True)
    by_user = service.spend(session, admin, "2026-11", "user", now=NOW)
    assert [g["key"] for g in by_user["groups"]] == ["astronomer", "physicist"]
    by_tier = service.spend(session, admin, "2026-11", "tier", now=NOW)
    assert [g["key"] for g in by_tier["groups"]] == ["ia"]
    assert by_tier["so_far"] == pytest.approx(by_user["so_far"])
    text = service.spend_csv(by_user)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1][0] == "user" and {r[0] for r in rows[2:4]} == {"astronomer", "physicist"}


@pytest.mark.parametrize("month,group_by,field", [("2026-13", "tier", "month"), ("26-11", "tier", "month"),
                                                  ("2099-01", "tier", "month"), ("2026-11", "colour", "group_by")])
def test_bad_month_or_grouping_is_refused(session: Session, month: str, group_by: str, field: str) -> None:
    user, _ = auth.create_user(session, "someone", "someone-pw")
    with pytest.raises(Invalid) as caught:
        service.spend(session, user, month, group_by, now=NOW)
    assert caught.value.extra["field"] == field


def test_the_metering_policy_counts_each_flow_once_at_close() -> None:
    counter = Meter()
    policy = MeteringPolicy(BestEffortPolicy(), counter)

    async def two_requests() -> None:
        for direction, sizes in (("read", [100, 200]), ("write", [50])):
            flow = await policy.open(FlowRequest(reservation_id=None, user_id=7, is_admin=False, bucket="b",
                                                 bucket_id=3, direction=direction,  # type: ignore[arg-type]
                                                 expected_bytes=None))
            for n in sizes:
                await flow.consume(n)
            await flow.close()

    asyncio.run(two_requests())
    rows, named = counter.take()
    assert [r[1:] for r in sorted(rows)] == [(7, 3, "read", 1, 300), (7, 3, "write", 1, 50)]
    assert named == {}
    assert counter.take() == ([], {})


def test_flushed_counters_add_up_in_the_database(db: str) -> None:
    counter = Meter()
    counter.add(1, 2, "read", 10, day="2026-11-01")
    counter.add(1, 2, "read", 5, day="2026-11-01")
    assert counter.flush() == 1
    counter.add(1, 2, "read", 7, day="2026-11-01")
    counter.flush()
    with transaction() as session:
        assert repository.usage_between(session, "2026-11-01", "2026-11-30", None) == [
            ("2026-11-01", 1, 2, "read", 3, 22)]


def test_spend_api_answers_owners_and_refuses_bad_input(member_client: TestClient) -> None:
    r = member_client.get("/api/spend", params={"month": datetime.now(UTC).strftime("%Y-%m"), "group_by": "bucket"})
    assert r.status_code == 200, r.text
    assert r.json()["groups"] == [] and r.json()["so_far"] == 0
    for params, field in (({"month": "2026-1"}, "month"), ({"month": "2026-11", "group_by": "x"}, "group_by"),
                          ({"month": "2026-11", "divergence": "nan"}, "divergence"), ({}, "month")):
        r = member_client.get("/api/spend", params=params)
        assert r.status_code == 422 and field in r.text, (params, r.text)
    r = member_client.get("/api/spend.csv", params={"month": datetime.now(UTC).strftime("%Y-%m")})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")


def test_lifecycle_transitions_are_charged_to_their_bucket_and_target_tier(session: Session, tmp_path: Path) -> None:
    from tierpilot.lifecycle import repository as lifecycle_repository

    owner = _setup(session, tmp_path)
    ia = next(t for t in tiers_repository.list_tiers(session) if t.name == "ia")
    buckets = {b.name: b.id for b in catalog.list_buckets(session, owner.id, is_admin=True)}

    def moves(bucket: str, n: int, switched: datetime, state: str = "done", action: str = "transition") -> None:
        lifecycle_repository.insert_moves(session, [dict(
            dedup_key=f"{bucket}-{switched.isoformat()}-{i}", action=action, bucket_id=buckets[bucket],
            key=f"k{i}", object_id=None, src_tier_id=ia.id, dst_tier_id=ia.id, src_locator=f"l{i}", size=1,
            state=state, switched_at=switched, created_at=switched) for i in range(n)])

    moves("belle2", 2000, datetime(2026, 11, 3, tzinfo=UTC))
    moves("belle2", 1000, datetime(2026, 10, 30, tzinfo=UTC))
    moves("telescope", 500, datetime(2026, 11, 4, tzinfo=UTC))
    moves("telescope", 700, datetime(2026, 11, 5, tzinfo=UTC), state="skipped")  # never switched: no fee
    moves("telescope", 300, datetime(2026, 11, 6, tzinfo=UTC), action="nc_transition")  # noncurrent versions
    session.flush()
    mine = service.spend(session, owner, "2026-11", "bucket", now=NOW)
    # 2,000 transitions at 0.01 $ per 1,000 into Standard-IA (Tokyo 2026), on the bucket's own line
    belle2 = mine["groups"][0]
    assert (belle2["key"], belle2["transitions"]) == ("belle2", 2000)
    assert belle2["lifecycle"] == pytest.approx(0.02)
    assert next(h for h in mine["history"] if h["month"] == "2026-10")["lifecycle"] == pytest.approx(0.01)
    admin, _ = auth.create_user(session, "root", "root-password", is_admin=True)
    by_bucket = {g["key"]: g for g in service.spend(session, admin, "2026-11", "bucket", now=NOW)["groups"]}
    assert by_bucket["telescope"]["transitions"] == 800
    assert by_bucket["telescope"]["lifecycle"] == pytest.approx(0.008)
    by_tier = service.spend(session, admin, "2026-11", "tier", now=NOW)["groups"]
    assert [(g["key"], g["transitions"]) for g in by_tier] == [("ia", 2800)]
