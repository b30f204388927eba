"""The catalog's history of stored bytes (``storage_history``, written by triggers) and what spend bills from
it: deleted, overwritten and moved objects' GiB-days up to when they left, and minimum-duration charges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog
from tierpilot.catalog import versions
from tierpilot.catalog.models import Bucket
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import DAYS_PER_MONTH
from tierpilot.spend import repository, service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

GIB = 2**30
TOKYO = "aws-ap-northeast-1"


def _world(session: Session, tmp_path: Path) -> tuple[User, Bucket, dict[str, int]]:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    ids = {}
    for name, cls in (("ia", "STANDARD_IA"), ("glacier", "GLACIER")):
        ids[name] = tiers.create(session, TierCreate(
            name=name, driver="posix", config={"path": str(tmp_path / name)}, storage_classes=[cls],
            price_ref={"catalog": TOKYO, "storage_class": cls})).id
    return owner, catalog.create_bucket(session, owner_id=owner.id, name="belle2", tier_name="ia"), ids


def _put(session: Session, bucket: Bucket, key: str, size: int, when: datetime | None, tier_id: int,
         locator: str) -> None:
    catalog.record_object(session, bucket.id, key, size=size, etag=f'"{locator}"', tier_id=tier_id,
                          storage_class="STANDARD_IA", locator=locator, now=when)
    session.flush()


def _spans(session: Session, bucket: Bucket) -> list[tuple[str, int, int, str]]:
    far = datetime(2100, 1, 1, tzinfo=UTC)
    return sorted((why, tier, size, "") for _, _, tier, _, size, _, _, why in repository.ended_spans(
        session, [bucket.id], datetime(2000, 1, 1, tzinfo=UTC), far))


def test_history_keeps_bytes_that_left_and_not_versions_that_only_changed_table(session: Session,
                                                                                 tmp_path: Path) -> None:
    _, bucket, tier = _world(session, tmp_path)
    then = datetime.now(UTC) - timedelta(days=10)
    _put(session, bucket, "gone", 1, then, tier["ia"], "l-gone")
    versions.delete_key(session, bucket.id, "gone", None)
    _put(session, bucket, "over", 2, then, tier["ia"], "l-over-1")
    _put(session, bucket, "over", 3, None, tier["ia"], "l-over-2")  # the old bytes are replaced
    _put(session, bucket, "moved", 4, then, tier["ia"], "l-moved")
    moved = catalog_repository.get_object(session, bucket.id, "moved")
    assert moved is not None
    assert catalog_repository.switch_object(session, moved.id, "l-moved", '"l-moved"', tier_id=tier["glacier"],
                                            storage_class="GLACIER", locator="l-moved-2")
    # a class change in place (same blob, another tier row) is a move too
    _put(session, bucket, "in-place", 7, then, tier["ia"], "l-in-place")
    in_place = catalog_repository.get_object(session, bucket.id, "in-place")
    assert in_place is not None
    assert catalog_repository.switch_object(session, in_place.id, "l-in-place", '"l-in-place"',
                                            tier_id=tier["glacier"], storage_class="GLACIER", locator="l-in-place")
    assert _spans(session, bucket) == [("deleted", tier["ia"], 1, ""), ("moved", tier["ia"], 4, ""),
                                       ("moved", tier["ia"], 7, ""), ("replaced", tier["ia"], 2, "")]
    # a versioned bucket keeps the replaced version: its bytes stay billed until that version is deleted
    catalog_repository.set_bucket_settings(session, bucket.id, versioning="Enabled")
    _put(session, bucket, "kept", 5, then, tier["ia"], "l-kept-1")
    _put(session, bucket, "kept", 6, None, tier["ia"], "l-kept-2")
    versions.delete_key(session, bucket.id, "kept", None)  # a delete marker: both versions stay
    assert len(_spans(session, bucket)) == 4
    old = next(v for v in catalog_repository.versions_of_key(session, bucket.id, "kept") if v.size == 5)
    versions.delete_key(session, bucket.id, "kept", old.version_id)
    assert ("deleted", tier["ia"], 5, "") in _spans(session, bucket)


def test_deleted_objects_bill_up_to_their_deletion_and_the_rest_of_their_minimum_duration(
        session: Session, tmp_path: Path) -> None:
    owner, bucket, tier = _world(session, tmp_path)
    now = datetime.now(UTC)
    born = now - timedelta(days=10)
    _put(session, bucket, "short-lived", 3 * GIB, born, tier["ia"], "l-short")
    versions.delete_key(session, bucket.id, "short-lived", None)
    _put(session, bucket, "small", 1000, now - timedelta(days=1), tier["ia"], "l-small")
    later = now + timedelta(minutes=1)
    out = service.spend(session, owner, later.strftime("%Y-%m"), "bucket", now=later)
    line = out["groups"][0]
    month_start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    stored_days = (now - max(born, month_start)).total_seconds() / 86400
    assert line["gib_days"] == pytest.approx(3 * stored_days + 1000 / GIB, abs=0.01)
    ia = shipped_catalogs()[f"{TOKYO}-2026"].storage_class("STANDARD_IA")
    price = float(ia.storage[0].price)
    # 10 of Standard-IA's 30 days stored: 20 days still owed, in the month the object left
    assert line["early_deletion"] == pytest.approx(3 * price * 20 / float(DAYS_PER_MONTH), rel=1e-3)
    # the small object bills as 128 KiB: storage is priced on the billable volume
    billable_gib_days = 3 * stored_days + 131072 / GIB * min(1, (later - month_start).total_seconds() / 86400)
    assert line["storage"] == pytest.approx(billable_gib_days * price / float(DAYS_PER_MONTH), rel=1e-3)
    assert any("minimum storage duration" in r for r in out["planned"][0]["reasons"])


def test_a_moved_object_bills_its_source_tier_until_the_move_and_the_target_from_then(
        session: Session, tmp_path: Path) -> None:
    owner, bucket, tier = _world(session, tmp_path)
    now = datetime.now(UTC)
    born = now - timedelta(days=5)
    _put(session, bucket, "cold", 2 * GIB, born, tier["ia"], "l-cold")
    obj = catalog_repository.get_object(session, bucket.id, "cold")
    assert obj is not None
    assert catalog_repository.switch_object(session, obj.id, "l-cold", '"l-cold"', tier_id=tier["glacier"],
                                            storage_class="GLACIER", locator="l-cold-2")
    later = now + timedelta(hours=12)
    by_tier = {g["key"]: g for g in service.spend(session, owner, later.strftime("%Y-%m"), "tier",
                                                  now=later)["groups"]}
    month_start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    before = (now - max(born, month_start)).total_seconds() / 86400
    assert by_tier["ia"]["gib_days"] == pytest.approx(2 * before, abs=0.01)
    after = (later - max(now, month_start)).total_seconds() / 86400
    assert by_tier["glacier"]["gib_days"] == pytest.approx(2 * after, abs=0.01)
    # Standard-IA's 30 days were cut short by 25: that is owed on the source tier, not the target
    ia = shipped_catalogs()[f"{TOKYO}-2026"].storage_class("STANDARD_IA")
    assert by_tier["ia"]["early_deletion"] == pytest.approx(
        2 * float(ia.storage[0].price) * 25 / float(DAYS_PER_MONTH), rel=1e-3)
    assert by_tier["glacier"]["early_deletion"] == 0
    assert Decimal(str(by_tier["glacier"]["storage"])) > 0


def test_small_archived_objects_bill_their_overhead_and_some_of_it_at_standard(session: Session,
                                                                                 tmp_path: Path) -> None:
    owner, bucket, tier = _world(session, tmp_path)
    born = datetime(2026, 9, 1, tzinfo=UTC)
    catalog_repository.adopt_objects(session, bucket.id, [dict(
        key=f"small-{i}", size=1024, etag='"e"', tier_id=tier["glacier"], storage_class="GLACIER",
        locator=f"small-{i}", created_at=born, last_modified=born) for i in range(10_000)])
    session.flush()
    now = datetime(2026, 11, 16, tzinfo=UTC)
    line = service.spend(session, owner, "2026-11", "tier", now=now)["groups"][0]
    assert line["key"] == "glacier" and line["gib_days"] == pytest.approx(10_000 * 1024 / GIB * 15, abs=1e-5)
    # Glacier (Tokyo 2026): each object with 32 KiB more at its 0.0045 $ and 8 KiB at Standard's 0.025 $
    per_month = 10_000 * (33 * 1024 / GIB * 0.0045 + 8 * 1024 / GIB * 0.025)
    assert line["storage"] == pytest.approx(per_month * 15 / float(DAYS_PER_MONTH), rel=1e-4)


def test_a_noncurrent_version_moved_by_lifecycle_bills_each_tier_for_its_time_there(session: Session,
                                                                                     tmp_path: Path) -> None:
    owner, bucket, tier = _world(session, tmp_path)
    catalog_repository.set_bucket_settings(session, bucket.id, versioning="Enabled")
    now = datetime.now(UTC)
    born = now - timedelta(days=4)
    _put(session, bucket, "run", 2 * GIB, born, tier["ia"], "l-run-1")
    _put(session, bucket, "run", 1, None, tier["ia"], "l-run-2")  # the 2 GiB version becomes noncurrent
    old = next(v for v in catalog_repository.versions_of_key(session, bucket.id, "run") if v.size == 2 * GIB)
    assert catalog_repository.switch_version(session, old.id, "l-run-1", '"l-run-1"', tier_id=tier["glacier"],
                                             storage_class="GLACIER", locator="l-run-1-cold")
    later = now + timedelta(days=1)
    by_tier = {g["key"]: g for g in service.spend(session, owner, later.strftime("%Y-%m"), "tier",
                                                  now=later)["groups"]}
    month_start = later.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    before = (now - max(born, month_start)).total_seconds() / 86400
    after = (later - max(now, month_start)).total_seconds() / 86400
    assert by_tier["glacier"]["gib_days"] == pytest.approx(2 * after, abs=0.01)
    assert by_tier["ia"]["gib_days"] == pytest.approx(2 * before + (later - max(now, month_start)).total_seconds()
                                                      / 86400 / GIB, abs=0.01)
    assert by_tier["ia"]["early_deletion"] > 0  # 4 of Standard-IA's 30 days
    # deleting the moved version ends its time on the archive tier, counted from the move
    versions.delete_key(session, bucket.id, "run", old.version_id)
    spans = {why: (t, start) for _, _, t, _, _, start, _, why in repository.ended_spans(
        session, [bucket.id], born - timedelta(days=1), later + timedelta(days=1))}
    assert spans.keys() == {"moved", "deleted"} and spans["moved"][0] == tier["ia"]
    assert spans["deleted"][0] == tier["glacier"] and spans["deleted"][1] >= now - timedelta(minutes=5)
