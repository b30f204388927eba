"""The daily roll-up of stored bytes: finished days priced from its rows answer what the catalog's rows answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.auth.models import User
from tierpilot.catalog import repository as catalog_repository
from tierpilot.catalog import service as catalog
from tierpilot.catalog import versions
from tierpilot.catalog.models import Bucket
from tierpilot.spend import repository, rollup, service
from tierpilot.tiers import service as tiers
from tierpilot.tiers.schemas import TierCreate

GIB = 2**30
TOKYO = "aws-ap-northeast-1"


def _world(session: Session, tmp_path: Path) -> tuple[User, datetime]:
    """Two owners' buckets on Standard-IA and Glacier over eight months: small and large objects, noncurrent
    versions, and objects deleted, overwritten and moved by lifecycle today (the triggers stamp the wall clock)."""
    admin, _ = auth.create_user(session, "rollup-admin", "rollup-admin-pw", is_admin=True)
    other, _ = auth.create_user(session, "rollup-other", "rollup-other-pw")
    tier = {}
    for name, cls in (("ia", "STANDARD_IA"), ("glacier", "GLACIER")):
        tier[name] = tiers.create(session, TierCreate(
            name=name, driver="posix", config={"path": str(tmp_path / name)}, storage_classes=[cls],
            price_ref={"catalog": TOKYO, "storage_class": cls})).id
    mine = catalog.create_bucket(session, owner_id=admin.id, name="belle2", tier_name="ia")
    theirs = catalog.create_bucket(session, owner_id=other.id, name="telescope", tier_name="glacier")
    catalog_repository.set_bucket_settings(session, mine.id, versioning="Enabled")
    today = datetime.now(UTC)

    def put(bucket: Bucket, key: str, size: int, days_ago: float | None, where: str) -> None:
        when = None if days_ago is None else today - timedelta(days=days_ago)
        catalog.record_object(session, bucket.id, key, size=size, etag=f'"{key}"', tier_id=tier[where],
                              storage_class="GLACIER" if where == "glacier" else "STANDARD_IA",
                              locator=f"{bucket.name}/{key}/{days_ago}", now=when)
        session.flush()

    for i, days_ago in enumerate((250.3, 170.7, 100.1, 40.9, 5.5, 0.2)):
        put(mine, f"big-{i}", (i + 1) * GIB, days_ago, "ia")
        put(mine, f"small-{i}", 1000 * (i + 1), days_ago, "ia")  # billed as 128 KiB each
        put(theirs, f"tiny-{i}", 2048, days_ago, "glacier")  # 40 KiB of overhead, 8 KiB at Standard's rate
        put(theirs, f"large-{i}", GIB // (i + 1), days_ago, "glacier")
    put(mine, "big-2", 3 * GIB, 30.2, "ia")  # a versioned overwrite: the first version stays, noncurrent
    put(theirs, "short", 5 * GIB, 20.4, "glacier")
    versions.delete_key(session, theirs.id, "short", None)  # 70 of Glacier's 90 days still owed
    put(theirs, "large-1", GIB, None, "glacier")  # overwritten: its first bytes' span ends now
    put(mine, "young", GIB, 3.3, "ia")
    for key in ("big-3", "young"):  # lifecycle moves to Glacier: the young one owes Standard-IA 26.7 days
        moved = catalog_repository.get_object(session, mine.id, key)
        assert moved is not None
        assert catalog_repository.switch_object(session, moved.id, moved.locator, moved.etag,
                                                tier_id=tier["glacier"], storage_class="GLACIER", locator=f"{key}-2")
    session.flush()
    return admin, today


def _same(a: Any, b: Any, path: str = "") -> None:
    """Equal answers: the same keys, texts and counts; money and GiB-days to the millionth."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, abs=1.5e-6), path
    else:
        assert a == b, path


def test_finished_days_priced_from_the_roll_up_answer_what_the_rows_answer(session: Session,
                                                                          tmp_path: Path) -> None:
    admin, today = _world(session, tmp_path)
    # two days on: the day of today's deletions and moves is finished, the next one is live
    now = today + timedelta(days=2)
    # the month of today's deletions and moves (two days on may be the next month: it would hold none of them)
    month_text = today.strftime("%Y-%m")
    by_rows = {g: service.spend(session, admin, month_text, g, now=now, rolled_up=False) for g in service.GROUPS}
    assert repository.rollup_until(session) is None
    until, rows = rollup.close_finished_days(session, None, now)
    assert until == now.date().isoformat() and all(r[0] < until for r in rows)
    assert min(r[0] for r in rows) == (today - timedelta(days=250.3)).date().isoformat()
    assert repository.store_days(session, None, until, rows)
    for group_by, expected in by_rows.items():
        _same(service.spend(session, admin, month_text, group_by, now=now), expected, group_by)
    month = by_rows["tier"]["groups"]
    assert {g["key"] for g in month} == {"ia", "glacier"}
    assert all(g["early_deletion"] > 0 for g in month) and all(g["storage"] > 0 for g in month)
    # a past month comes from the roll-up alone
    past = (now.replace(day=1) - timedelta(days=40)).strftime("%Y-%m")
    _same(service.spend(session, admin, past, "bucket", now=now),
          service.spend(session, admin, past, "bucket", now=now, rolled_up=False), past)


def test_the_roll_up_closes_only_the_days_since_its_mark_and_a_second_delivery_stores_nothing(
        session: Session, tmp_path: Path) -> None:
    admin, today = _world(session, tmp_path)
    first_until, first = rollup.close_finished_days(session, None, today + timedelta(days=1))
    assert repository.store_days(session, None, first_until, first)
    now = today + timedelta(days=3)
    until, rows = rollup.close_finished_days(session, first_until, now)
    assert {r[0] for r in rows} == {(today + timedelta(days=d)).date().isoformat() for d in (1, 2)}
    assert repository.store_days(session, first_until, until, rows)
    # the same task delivered twice: the mark has moved, the duplicate stores nothing
    assert not repository.store_days(session, first_until, until, rows)
    assert repository.rollup_until(session) == until
    assert rollup.close_finished_days(session, until, now) == (until, [])
    _same(service.spend(session, admin, now.strftime("%Y-%m"), "bucket", now=now),
          service.spend(session, admin, now.strftime("%Y-%m"), "bucket", now=now, rolled_up=False))


def test_history_is_pruned_only_before_the_closed_days_and_the_retention_period(session: Session,
                                                                                 tmp_path: Path) -> None:
    _world(session, tmp_path)
    now = datetime.now(UTC)
    assert repository.prune_history(session, now - timedelta(days=1), 100) == 0
    assert repository.prune_history(session, now + timedelta(minutes=5), 3) == 3  # batches of the limit
    assert repository.prune_history(session, now + timedelta(minutes=5), 100) == 1
    old = (now - timedelta(days=500)).date()  # the roll-up stopped long ago: rows after its mark stay
    assert rollup.prune_before(now, old.isoformat()) == datetime(old.year, old.month, old.day, tzinfo=UTC)
    assert rollup.prune_before(now, now.date().isoformat()) == now - timedelta(days=400)


def test_beat_runs_the_roll_up_hourly_on_the_worker() -> None:
    from tierpilot.kit.jobs import celery_app
    from tierpilot.spend import tasks  # noqa: F401  (registers the task)
    from worker.app import BEAT_SCHEDULE, TASK_MODULES

    assert "tierpilot.spend.tasks" in TASK_MODULES
    assert BEAT_SCHEDULE["spend.roll_up"]["task"] == "spend.roll_up" and "spend.roll_up" in celery_app.tasks
