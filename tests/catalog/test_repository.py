"""The catalog's named queries other domains call instead of their own SQL on catalog tables."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.catalog import repository, service
from tierpilot.catalog.models import Bucket, Object
from tierpilot.tiers.models import Tier


@dataclass
class World:
    hot: Tier
    cold: Tier
    alice: User
    bob: User
    a: Bucket  # alice's, on hot
    b: Bucket  # bob's, on cold


def _tier(session: Session, name: str) -> Tier:
    t = Tier(name=f"{name}-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"},
             storage_classes=["STANDARD"])
    session.add(t)
    return t


def _user(session: Session, name: str) -> User:
    u = User(username=f"{name}-{uuid.uuid4().hex[:6]}", password_hash="x")
    session.add(u)
    return u


def _put(session: Session, bucket: Bucket, key: str, size: int, tier: Tier | None = None,
         created_at: datetime | None = None) -> Object:
    service.record_object(session, bucket.id, key, size=size, etag=f"{size:032x}",
                          tier_id=(tier.id if tier is not None else bucket.tier_id), storage_class="STANDARD",
                          locator=f"{bucket.name}/{key}~x")
    obj = repository.get_object(session, bucket.id, key)
    assert obj is not None
    if created_at is not None:
        obj.created_at = created_at
        session.flush()
    return obj


@pytest.fixture
def world(session: Session) -> World:
    hot, cold = _tier(session, "hot"), _tier(session, "cold")
    alice, bob = _user(session, "alice"), _user(session, "bob")
    session.flush()
    a = Bucket(name=f"a-{uuid.uuid4().hex[:8]}", owner_id=alice.id, tier_id=hot.id)
    b = Bucket(name=f"b-{uuid.uuid4().hex[:8]}", owner_id=bob.id, tier_id=cold.id)
    repository.add_buckets(session, [a, b])
    return World(hot, cold, alice, bob, a, b)


def test_usage_by_tier_sums_bytes_and_objects_of_all_buckets_or_one(session: Session, world: World) -> None:
    _put(session, world.a, "x", 10)
    _put(session, world.a, "y", 20, tier=world.cold)
    _put(session, world.b, "z", 5)
    everywhere = repository.usage_by_tier(session)
    assert everywhere[world.hot.id] == (10, 1)
    assert everywhere[world.cold.id] == (25, 2)
    assert repository.usage_by_tier(session, world.a.id) == {world.hot.id: (10, 1), world.cold.id: (20, 1)}


def test_tier_totals_bill_small_objects_at_the_minimum_size(session: Session, world: World) -> None:
    _put(session, world.a, "small", 10)
    _put(session, world.a, "large", 1000)
    assert repository.tier_totals(session, world.hot.id, 0, [world.a.id]) == (2, 1010, 1010)
    assert repository.tier_totals(session, world.hot.id, 100, [world.a.id]) == (2, 1010, 1100)
    assert repository.tier_totals(session, world.hot.id, 100, [world.b.id]) == (0, 0, 0)


def test_tier_references_and_bucket_counts_say_what_is_bound_to_a_tier(session: Session, world: World) -> None:
    _put(session, world.a, "x", 1, tier=world.cold)
    assert repository.tier_references(session, world.cold.id) == (1, 1, 0)
    assert repository.tier_references(session, world.hot.id) == (0, 1, 0)
    counts = repository.bucket_counts_by_tier(session)
    assert counts[world.hot.id] == 1 and counts[world.cold.id] == 1


def test_bucket_usage_lists_one_owners_buckets_with_their_sums(session: Session, world: World) -> None:
    _put(session, world.a, "x", 7)
    _put(session, world.a, "y", 8)
    assert repository.bucket_usage(session, world.alice.id) == [(world.a.name, world.alice.id, world.hot.id, 2, 15)]
    assert repository.bucket_usage(session, world.bob.id) == [(world.b.name, world.bob.id, world.cold.id, 0, 0)]


def test_buckets_with_owners_name_each_buckets_owner(session: Session, world: World) -> None:
    rows = [(b.name, owner) for b, owner in repository.buckets_with_owners(session, None)
            if b.id in (world.a.id, world.b.id)]
    assert rows == [(world.a.name, world.alice.username), (world.b.name, world.bob.username)]
    assert [b.name for b, _ in repository.buckets_with_owners(session, world.bob.id)] == [world.b.name]


def test_switch_and_delete_change_only_the_version_that_was_read(session: Session, world: World) -> None:
    obj = _put(session, world.a, "k", 3)
    assert not repository.switch_object(session, obj.id, "other~locator", obj.etag, tier_id=world.cold.id,
                                        storage_class="STANDARD_IA", locator="new~loc")
    assert repository.switch_object(session, obj.id, obj.locator, obj.etag, tier_id=world.cold.id,
                                    storage_class="STANDARD_IA", locator="new~loc")
    assert repository.object_locators(session, [obj.id]) == {obj.id: "new~loc"}
    assert not repository.delete_object(session, obj.id, "old~loc")
    assert repository.delete_object(session, obj.id, "new~loc")
    assert repository.objects_by_id(session, [obj.id]) == {}


def test_set_restore_state_skips_an_object_whose_blob_changed(session: Session, world: World) -> None:
    obj = _put(session, world.a, "k", 3)
    expiry = datetime(2030, 1, 1, tzinfo=UTC)
    repository.set_restore_state(session, [
        {"_object_id": obj.id, "_locator": "stale~loc", "restore_state": "restored", "restore_speed": "bulk",
         "restore_expiry": expiry}])
    assert session.scalar(select(Object.restore_state).where(Object.id == obj.id)) is None
    repository.set_restore_state(session, [
        {"_object_id": obj.id, "_locator": obj.locator, "restore_state": "ongoing", "restore_speed": "bulk",
         "restore_expiry": None}])
    assert session.scalar(select(Object.restore_state).where(Object.id == obj.id)) == "ongoing"


def test_has_object_at_finds_a_blob_by_locator_or_by_bucket_and_key(session: Session, world: World) -> None:
    obj = _put(session, world.a, "dir/k", 3)
    assert repository.has_object_at(session, world.hot.id, obj.locator)
    assert repository.has_object_at(session, world.hot.id, obj.locator, world.a.name, "dir/k")
    assert not repository.has_object_at(session, world.cold.id, obj.locator, world.a.name, "dir/k")
    assert not repository.has_object_at(session, world.hot.id, obj.locator, world.b.name, "dir/k")


def test_restore_candidates_by_keys_and_by_prefix(session: Session, world: World) -> None:
    for key in ("p/1", "p/2", "q/1"):
        _put(session, world.a, key, 1)
    assert sorted(r.key for r in repository.restore_candidates_by_keys(session, world.a.id, ["p/1", "q/1", "nope"],
                                                                       chunk=1)) == ["p/1", "q/1"]
    assert [r.key for r in repository.restore_candidates_by_prefix(session, world.a.id, "p/", 10)] == ["p/1", "p/2"]


def test_due_objects_leave_out_the_versions_the_filter_names(session: Session, world: World) -> None:
    old = datetime(2020, 1, 1, tzinfo=UTC)
    first = _put(session, world.a, "a", 1, created_at=old)
    _put(session, world.a, "b", 1, created_at=old + timedelta(days=1))
    _put(session, world.a, "c", 1)  # too young
    due = repository.due_objects(session, world.a.id, world.hot.id, old + timedelta(days=2))
    assert [r.key for r in due] == ["a", "b"]
    due = repository.due_objects(session, world.a.id, world.hot.id, old + timedelta(days=2),
                                 leave_out=lambda object_id, locator: (object_id == first.id)
                                 & (locator == first.locator))
    assert [r.key for r in due] == ["b"]
