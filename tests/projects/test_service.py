"""Projects' rules without HTTP: placement of new buckets, roles, soft thresholds, the database quota counter."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service as auth
from tierpilot.catalog import service as catalog
from tierpilot.kit.db import transaction
from tierpilot.notifications import service as notifications
from tierpilot.projects import quota, roles, service
from tierpilot.projects.quota import DatabaseCounter, Limits, QuotaRefused
from tierpilot.tiers.models import Tier


@pytest.fixture
def tier(session: Session) -> Tier:
    t = Tier(name=f"p-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"},
             storage_classes=["STANDARD"])
    session.add(t)
    session.flush()
    return t


_names: dict[int, str] = {}


def _user(session: Session, name: str) -> int:
    user, _key = auth.create_user(session, f"{name}-{uuid.uuid4().hex[:6]}", "project-password-1")
    _names[user.id] = user.username
    return user.id


def _name(_session: Session, user_id: int) -> str:
    return _names[user_id]


def test_new_buckets_land_in_the_default_project_else_the_personal_one(session: Session, tier: Tier) -> None:
    uid = _user(session, "u")
    first = catalog.create_bucket(session, owner_id=uid, name=f"b-{uuid.uuid4().hex[:8]}", tier_name=tier.name)
    personal = service.personal_project(session, uid)
    assert first.project_id == personal.id and personal.name.startswith("~u-")
    group = service.create_project(session, f"g-{uuid.uuid4().hex[:6]}")
    service.add_member(session, group, _name(session, uid), "member", default=True)
    second = catalog.create_bucket(session, owner_id=uid, name=f"b-{uuid.uuid4().hex[:8]}", tier_name=tier.name)
    assert second.project_id == group.id


def test_roles_grant_reading_writing_and_managing_in_steps() -> None:
    assert roles.permits("viewer", "s3:GetObject") and not roles.permits("viewer", "s3:PutObject")
    assert roles.permits("member", "s3:PutObject") and roles.permits("member", "s3:RestoreObject")
    assert not roles.permits("member", "s3:PutLifecycleConfiguration")
    assert roles.permits("manager", "s3:PutLifecycleConfiguration")
    assert not roles.permits("manager", "s3:PutBucketPolicy") and not roles.permits("manager", "s3:DeleteBucket")
    assert not roles.permits(None, "s3:GetObject")


def test_soft_thresholds_tell_the_managers_once_each(session: Session, tier: Tier) -> None:
    manager, member = _user(session, "m"), _user(session, "n")
    project = service.create_project(session, f"s-{uuid.uuid4().hex[:6]}", quota_bytes=1000)
    service.add_member(session, project, _name(session, manager), "manager")
    service.add_member(session, project, _name(session, member), "member")
    assert service.check_thresholds(session, project, 700, 1) == 0
    assert service.check_thresholds(session, project, 850, 2) == 80
    assert service.check_thresholds(session, project, 860, 2) == 80  # told once
    assert service.check_thresholds(session, project, 960, 3) == 95
    session.refresh(project)
    told = notifications.list_notifications(session, manager)[0]
    assert [n.title for n in told] == [f"Project {project.name} reached 95 % of its quota",
                                       f"Project {project.name} reached 80 % of its quota"]
    assert notifications.list_notifications(session, member)[0] == []
    assert service.check_thresholds(session, project, 100, 3) == 0  # dropped below: told again next time
    session.refresh(project)
    assert project.alerted_percent == 0


def test_database_counter_refuses_past_the_quota_and_commits_move_it(db: str, tier_db: str) -> None:
    """Without Redis: a reservation is a conditional UPDATE; what a write commits moves the committed use."""
    with transaction(write=True) as s:
        uid = _user(s, "c")
        project = service.create_project(s, f"c-{uuid.uuid4().hex[:6]}", quota_bytes=1000, quota_objects=3)
        pid = project.id
        bucket = catalog.create_bucket(s, owner_id=uid, name=f"c-{uuid.uuid4().hex[:8]}", tier_name=tier_db,
                                       project_id=pid)
        bucket_id = bucket.id
    counter, limits = DatabaseCounter(), Limits(1000, 3)
    asyncio.run(counter.reserve(pid, limits, 600, 1))
    with pytest.raises(QuotaRefused) as refused:
        asyncio.run(counter.reserve(pid, limits, 500, 1))
    assert refused.value.what == "bytes"
    with transaction(write=True) as s:  # the write commits its 600 bytes, then its reservation is released
        catalog.record_object(s, bucket_id, "k", size=600, etag="e", tier_id=_tier_id(s, tier_db),
                              storage_class="STANDARD", locator="l")
    asyncio.run(counter.release(pid, 600, 1))
    assert counter.in_flight(pid) == (0, 0)
    asyncio.run(counter.reserve(pid, limits, 400, 1))  # exactly to the quota
    with pytest.raises(QuotaRefused):
        asyncio.run(counter.reserve(pid, limits, 1, 1))
    asyncio.run(counter.release(pid, 400, 1))
    with transaction(write=True) as s:  # deleting frees the space
        catalog.remove_objects(s, bucket_id, ["k"])
    asyncio.run(counter.reserve(pid, limits, 1000, 1))
    asyncio.run(counter.release(pid, 1000, 1))
    assert quota.reconcile_one(pid)


def _tier_id(session: Session, name: str) -> int:
    from tierpilot.drivers import registry

    tier = registry.tiers.by_name(name, session)
    assert tier is not None
    return tier.id


@pytest.fixture
def tier_db(db: str) -> str:
    from tierpilot.drivers import registry

    name = f"p-{uuid.uuid4().hex[:6]}"
    with transaction(write=True) as s:
        s.add(Tier(name=name, driver="posix", config={"path": "/nonexistent"}, storage_classes=["STANDARD"]))
    registry.tiers.invalidate()
    return name
