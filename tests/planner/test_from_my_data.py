from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog
from tierpilot.catalog.errors import NoSuchBucket
from tierpilot.planner import installation as service
from tierpilot.planner.service import parse_scenario
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def _bucket_with_objects(session: Session, tmp_path: Path, owner_id: int) -> None:
    tiers.create(session, TierCreate(name="disk", driver="posix", config={"path": str(tmp_path)}))
    bucket = catalog.create_bucket(session, owner_id=owner_id, name="belle2", tier_name="disk")
    touched: dict[int, datetime] = {}
    for i in range(40):
        age_months = i % 4  # ten objects each 0, 1, 2 and 3 months old
        size = 4 << 20 if i % 2 else 64 << 20
        obj, _ = catalog.record_object(session, bucket.id, f"run/{i:03d}", size=size, etag=f'"{i}"',
                                       tier_id=bucket.tier_id, storage_class="STANDARD", locator=f"belle2/{i}",
                                       now=NOW - timedelta(days=30.5 * age_months + 1))
        # recent reads fall off with age: 8, 4, 2 and 1 of each ten objects read in the last month
        if i // 4 < (8, 4, 2, 1)[age_months]:
            touched[obj.id] = NOW - timedelta(days=3)
    catalog_repository.touch_objects(session, touched)
    session.flush()


def test_from_my_data_prefills_volume_sizes_and_reads(session: Session, tmp_path: Path) -> None:
    user, _ = auth.create_user(session, "physicist", "physicist-pw")
    _bucket_with_objects(session, tmp_path, user.id)
    out = service.from_my_data(session, user, ["belle2"], "aws-us-east-1", now=NOW)
    s = out["scenario"]
    assert s["catalog"] == "aws-us-east-1-2026"
    assert sorted((b["size_bytes"], b["count"]) for b in s["size_histogram"]) == [(4 << 20, 20), (64 << 20, 20)]
    assert out["basis"]["objects"] == 40 and out["basis"]["bytes"] == 20 * (68 << 20)
    assert 0 < s["reads_per_month"] < 1
    decay = s["lifecycle"]["decay"]
    assert decay["kind"] == "exponential" and 0.3 < decay["half_life_months"] < 3
    assert s["lifecycle"]["initial_gib"] == pytest.approx(20 * 68 / 1024)
    # the prefilled scenario evaluates as it is
    report = service.evaluate(session, parse_scenario(s))
    assert len(report["tiers"]) == len(s["tiers"])


def test_from_my_data_sees_only_your_buckets(session: Session, tmp_path: Path) -> None:
    owner, _ = auth.create_user(session, "owner", "owner-password")
    other, _ = auth.create_user(session, "other", "other-password")
    _bucket_with_objects(session, tmp_path, owner.id)
    with pytest.raises(NoSuchBucket) as hidden:  # as for a bucket that does not exist
        service.from_my_data(session, other, ["belle2"], "aws-us-east-1", now=NOW)
    assert hidden.value.extra == {"BucketName": "belle2"}
    empty = service.from_my_data(session, other, None, "aws-us-east-1", now=NOW)
    assert empty["scenario"]["volume_gib"] == 0 and empty["basis"]["buckets"] == []


def test_from_my_data_keeps_the_installations_priceable_tiers_and_rounds_measured_rates(
        session: Session, tmp_path: Path) -> None:
    user, _ = auth.create_user(session, "physicist", "physicist-pw")
    _bucket_with_objects(session, tmp_path / "disk", user.id)
    tiers.create(session, TierCreate(name="tape", driver="posix", config={"path": str(tmp_path / "tape")},
                                     price_ref={"catalog": "onprem-example-2026", "storage_class": "TAPE"}))
    out = service.from_my_data(session, user, ["belle2"], "aws-us-east-1", now=NOW)
    s = out["scenario"]
    labels = [t["label"] for t in s["tiers"]]
    # "disk" has no price_ref and cannot be priced; "tape" leads, then the catalog's classes
    assert labels[0] == "tape" and s["tiers"][0]["tier"] == "tape" and "disk" not in labels
    assert "STANDARD" in labels[1:]
    # measured rates carry three significant digits, not the float noise of a ratio of byte counts
    for value in (s["reads_per_month"], s["lifecycle"]["decay"]["initial_reads_per_month"],
                  s["lifecycle"]["decay"]["half_life_months"]):
        assert float(f"{value:.3g}") == value
    report = service.evaluate(session, parse_scenario(s))
    assert report["tiers"][0]["installation_tier"] == "tape"
