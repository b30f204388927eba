"""Restores in actual spend: requests and per-GiB fees by speed in the month asked, the restored copy's days
at the copy class of the tier's catalog of that month (2018: Reduced Redundancy, now: Standard)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import service as catalog
from tierpilot.pricing.engine import DAYS_PER_MONTH
from tierpilot.restores import repository as restores_repository
from tierpilot.spend import service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import RestoreDelays, TierCreate

GIB = 2**30


def _world(session: Session, tmp_path: Path) -> tuple[User, User, int]:
    owner, _ = auth.create_user(session, "physicist", "physicist-pw")
    other, _ = auth.create_user(session, "astronomer", "astronomer-pw")
    tier = tiers.create(session, TierCreate(
        name="glacier", driver="posix", config={"path": str(tmp_path)}, storage_classes=["GLACIER"], offline=True,
        restore_delays=RestoreDelays(expedited=1, standard=2, bulk=3),
        price_ref={"catalog": "aws-ap-northeast-1", "storage_class": "GLACIER"}))
    catalog.create_bucket(session, owner_id=owner.id, name="belle2", tier_name="glacier")
    catalog.create_bucket(session, owner_id=other.id, name="telescope", tier_name="glacier")
    return owner, other, tier.id


def _restore(owner: User, bucket: str, tier_id: int, speed: str, size: int, requested: datetime,
             ready: datetime | None, expires: datetime | None, state: str) -> dict[str, Any]:
    return dict(owner_id=owner.id, bucket=bucket, key=f"{bucket}/{speed}/{requested.isoformat()}", size=size,
                tier_id=tier_id, locator=f"l-{bucket}-{speed}-{requested.timestamp()}", speed=speed, days=10,
                state=state, requested_at=requested, ready_at=ready, expires_at=expires)


def test_restores_bill_fees_by_speed_in_the_month_asked_and_the_copy_for_the_days_kept(
        session: Session, tmp_path: Path) -> None:
    owner, other, tier = _world(session, tmp_path)
    nov = lambda day, hour=0: datetime(2026, 11, day, hour, tzinfo=UTC)  # noqa: E731
    restores_repository.insert_items(session, [
        # asked in October, copy kept from Oct 31 to Nov 3: fees in October, two copy days in November
        _restore(owner, "belle2", tier, "standard", 10 * GIB, datetime(2026, 10, 30, tzinfo=UTC),
                 datetime(2026, 10, 31, tzinfo=UTC), nov(3), "expired"),
        _restore(owner, "belle2", tier, "standard", 100 * GIB, nov(5), nov(5, 4), nov(15, 4), "ready"),
        _restore(owner, "belle2", tier, "expedited", GIB, nov(10), None, None, "ongoing"),
        _restore(owner, "belle2", tier, "bulk", 50 * GIB, nov(11), None, None, "failed"),  # nothing billed
        _restore(other, "telescope", tier, "standard", 7 * GIB, nov(6), None, None, "ongoing"),
    ])
    session.flush()
    now = datetime(2026, 11, 16, tzinfo=UTC)
    out = service.spend(session, owner, "2026-11", "bucket", now=now)
    (line,) = out["groups"]
    assert (line["key"], line["restore_requests"], line["restored_bytes"]) == ("belle2", 2, 101 * GIB)
    # Tokyo 2026: standard 0.011 $/GiB + 0.0571 $ per 1,000 requests, expedited 0.033 $/GiB + 11 $ per 1,000
    assert line["restores"] == pytest.approx(100 * 0.011 + 0.0571 / 1000 + 0.033 + 11 / 1000)
    # the copies at Standard's 0.025 $/GiB-month: 100 GiB for 10 days, 10 GiB for the 2 November days
    assert line["restored_copy"] == pytest.approx((100 * 10 + 10 * 2) * 0.025 / float(DAYS_PER_MONTH))
    october = next(h for h in out["history"] if h["month"] == "2026-10")
    assert october["restores"] == pytest.approx(10 * 0.011 + 0.0571 / 1000)
    assert any(r.startswith("restores") and "2 restore requests" in r for r in out["planned"][0]["reasons"])
    theirs = service.spend(session, other, "2026-11", "bucket", now=now)
    other_line = theirs["groups"][0]
    assert (other_line["key"], other_line["restore_requests"]) == ("telescope", 1)
    (beside,) = theirs["planned"]
    # no plan saved for the bucket: its restores are not in the plan, and the reason says the plan is storage only
    assert any(r.startswith("restores") and "not in the plan (no usage planned: storage only): 1 restore request of "
               "7.00 GiB so far" in r for r in beside["reasons"])


def test_a_2018_restore_copy_is_billed_at_the_reduced_redundancy_rate(session: Session, tmp_path: Path) -> None:
    owner, _, tier = _world(session, tmp_path)
    asked = datetime(2018, 11, 5, tzinfo=UTC)
    ready = asked + timedelta(minutes=200)  # the case study's measured Standard restore
    restores_repository.insert_items(session, [
        _restore(owner, "belle2", tier, "bulk", 633 * GIB, asked, ready, ready + timedelta(days=7), "expired")])
    session.flush()
    line = service.spend(session, owner, "2018-11", "tier", now=datetime(2018, 12, 1, tzinfo=UTC))["groups"][0]
    assert line["catalogs"] == ["aws-ap-northeast-1-2018"]
    assert line["restores"] == pytest.approx(633 * 0.00275 + 0.0275 / 1000)
    # 2018's rule: the temporary copy at Reduced Redundancy (0.024), not Standard (0.025)
    assert line["restored_copy"] == pytest.approx(633 * 0.024 * 7 / float(DAYS_PER_MONTH))
