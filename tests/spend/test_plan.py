"""The planner's forecast beside the actual spend: a month of what each bucket stores now, billed as the actual
storage is (noncurrent versions, minimum billable sizes, per-object overheads), so a bucket that only stores
data is on plan."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.spend import service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

GIB = 2**30
KIB = 1024
TOKYO = "aws-ap-northeast-1"
BORN = datetime(2026, 9, 1, tzinfo=UTC)
NOW = datetime(2026, 11, 16, tzinfo=UTC)  # half of November gone


def test_a_bucket_that_only_stores_data_is_on_plan_with_its_noncurrent_versions_and_small_objects(
        session: Session, tmp_path: Path) -> None:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    for name, cls in (("ia", "STANDARD_IA"), ("glacier", "GLACIER")):
        tiers.create(session, TierCreate(name=name, driver="posix", config={"path": str(tmp_path / name)},
                                         storage_classes=[cls], price_ref={"catalog": TOKYO, "storage_class": cls}))
    runs = catalog.create_bucket(session, owner_id=owner.id, name="runs", tier_name="ia")
    catalog_repository.set_bucket_settings(session, runs.id, versioning="Enabled")
    for size, locator in ((4 * GIB, "run-1"), (2 * GIB, "run-2")):  # the 4 GiB version stays, noncurrent
        catalog.record_object(session, runs.id, "run", size=size, etag=f'"{locator}"', tier_id=runs.tier_id,
                              storage_class="STANDARD_IA", locator=locator, now=BORN)
    catalog.record_object(session, runs.id, "tiny", size=KIB, etag='"t"', tier_id=runs.tier_id,
                          storage_class="STANDARD_IA", locator="tiny", now=BORN)  # bills Standard-IA's 128 KiB
    cold = catalog.create_bucket(session, owner_id=owner.id, name="cold", tier_name="glacier")
    catalog_repository.adopt_objects(session, cold.id, [dict(
        key=f"small-{i}", size=KIB, etag='"e"', tier_id=cold.tier_id, storage_class="GLACIER", locator=f"small-{i}",
        created_at=BORN, last_modified=BORN) for i in range(10_000)])
    session.flush()

    out = service.spend(session, owner, "2026-11", "bucket", now=NOW)
    planned = {p["bucket"]: p for p in out["planned"]}
    tokyo = shipped_catalogs()["aws-ap-northeast-1-2026"]
    ia = float(tokyo.storage_class("STANDARD_IA").storage[0].price)
    glacier = float(tokyo.storage_class("GLACIER").storage[0].price)
    standard = float(tokyo.storage_class("STANDARD").storage[0].price)
    # both versions of "run" are stored bytes, and "tiny" bills its class's minimum size
    assert planned["runs"]["planned"] == pytest.approx((6 * GIB + 128 * KIB) / GIB * ia, abs=1e-6)
    # Glacier: each object with 32 KiB more at its own rate and 8 KiB at Standard's
    assert planned["cold"]["planned"] == pytest.approx(
        10_000 * ((1 + 32) * KIB / GIB * glacier + 8 * KIB / GIB * standard), abs=1e-6)
    for bucket in ("runs", "cold"):
        line = planned[bucket]
        assert not line["diverges"], line
        assert line["projected"] == pytest.approx(line["planned"], rel=0.01)  # 15 of 30.4 days, then 15 of 30
    assert out["forecast"] == pytest.approx(sum(p["planned"] for p in planned.values()), rel=0.01)
    # what the month actually billed so far is the same stored bytes
    by_bucket = {g["key"]: g for g in out["groups"]}
    assert by_bucket["runs"]["gib_days"] == pytest.approx((6 * GIB + KIB) / GIB * 15, abs=1e-6)
    assert by_bucket["runs"]["storage"] == pytest.approx(planned["runs"]["planned"] * 15 * 12 / 365, abs=2e-6)


def test_a_bucket_that_grew_during_the_month_says_its_stored_volume_changed(session: Session,
                                                                            tmp_path: Path) -> None:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    tiers.create(session, TierCreate(name="ia", driver="posix", config={"path": str(tmp_path)},
                                     storage_classes=["STANDARD_IA"],
                                     price_ref={"catalog": TOKYO, "storage_class": "STANDARD_IA"}))
    bucket = catalog.create_bucket(session, owner_id=owner.id, name="runs", tier_name="ia")
    catalog.record_object(session, bucket.id, "old", size=GIB, etag='"a"', tier_id=bucket.tier_id,
                          storage_class="STANDARD_IA", locator="old", now=BORN)
    catalog.record_object(session, bucket.id, "new", size=9 * GIB, etag='"b"', tier_id=bucket.tier_id,
                          storage_class="STANDARD_IA", locator="new", now=datetime(2026, 11, 15, tzinfo=UTC))
    session.flush()
    line = service.spend(session, owner, "2026-11", "bucket", now=NOW)["planned"][0]
    assert line["diverges"] and line["projected"] < line["planned"] * 0.8
    assert [r.split(" ")[0] for r in line["reasons"]] == ["storage"]
    assert "the stored volume changed" in line["reasons"][0]
