"""Lifecycle on versioned buckets: expiring a current version makes a delete marker, noncurrent versions move
down the tiers and expire after their NoncurrentDays (keeping NewerNoncurrentVersions), lone delete markers go,
and object lock is kept on moves and refuses expirations."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from tests.lifecycle.conftest import World, age, put, set_rules
from tierpilot.catalog import repository, store, versions
from tierpilot.catalog.models import Bucket, Object, ObjectVersion
from tierpilot.kit.db import transaction, utcnow
from tierpilot.lifecycle.fsck import fsck
from tierpilot.lifecycle.runner import run_now

DATA = b"v" * 200_000  # past the 128 KB transition minimum


def _versioned(world: World) -> None:
    with transaction(write=True) as s:
        versions.set_versioning(s, world.bucket_id, "Enabled")


def _noncurrent_age(world: World, days: float) -> None:
    with transaction(write=True) as s:
        s.execute(update(ObjectVersion).where(ObjectVersion.bucket_id == world.bucket_id)
                  .values(noncurrent_since=utcnow() - timedelta(days=days)))


def _versions(world: World, key: str) -> list[tuple[str, bool, str, int | None]]:
    """(version id, delete marker, storage class, tier) of a key's noncurrent versions, newest first."""
    with transaction() as s:
        return [(v.version_id, v.delete_marker, v.storage_class, v.tier_id)
                for v in repository.versions_of_key(s, world.bucket_id, key)]


def _version_bytes(world: World, key: str, version_id: str) -> bytes:
    with transaction() as s:
        row = versions.find_version(s, world.bucket_id, key, version_id)
        assert isinstance(row, ObjectVersion)
        obj = versions.as_object(row)
    return b"".join(store.open_object(obj))


def _totals(world: World) -> tuple[int, int]:
    with transaction() as s:
        bucket = s.get(Bucket, world.bucket_id)
        assert bucket is not None
        return bucket.object_count, bucket.used_bytes


def _clean() -> None:
    report = fsck(min_age_s=0)
    assert report.clean and not report.findings, [f.line() for f in report.findings]


def test_expiring_a_current_version_leaves_a_marker_and_keeps_the_bytes(world: World) -> None:
    _versioned(world)
    put(world, "raw/a", DATA)
    set_rules(world, [{"id": "exp", "filter": {}, "expiration": {"days": 1}}])
    age(world, days=2)
    assert run_now(world.bucket_id).by_action == {"expiration": 1}
    with transaction() as s:
        assert repository.get_object(s, world.bucket_id, "raw/a") is None
    kept = _versions(world, "raw/a")
    assert [m for _, m, _, _ in kept] == [True, False]  # the marker, then the old current version
    assert _version_bytes(world, "raw/a", kept[1][0]) == DATA
    assert _totals(world) == (1, len(DATA))
    _clean()


def test_noncurrent_versions_move_down_then_expire_keeping_the_newest(world: World) -> None:
    _versioned(world)
    for i in range(4):
        put(world, "raw/a", DATA + bytes([i]))
    set_rules(world, [{"id": "old", "filter": {}, "noncurrent_version_transitions": [
        {"noncurrent_days": 30, "storage_class": "STANDARD_IA"}],
        "noncurrent_version_expiration": {"noncurrent_days": 90, "newer_noncurrent_versions": 1}}])
    _noncurrent_age(world, 10)
    assert run_now(world.bucket_id).by_action == {}
    _noncurrent_age(world, 31)
    assert run_now(world.bucket_id).by_action == {"nc_transition": 3}
    assert {(c, t) for _, _, c, t in _versions(world, "raw/a")} == {("STANDARD_IA", world.tiers["infrequent"])}
    with transaction() as s:  # the current version stays where it is
        current = repository.get_object(s, world.bucket_id, "raw/a")
        assert current is not None and current.tier_id == world.tiers["hot"]
    newest = _versions(world, "raw/a")[0][0]
    assert _version_bytes(world, "raw/a", newest) == DATA + bytes([2])
    _noncurrent_age(world, 91)
    assert run_now(world.bucket_id).by_action == {"nc_expiration": 2}
    assert [v for v, _, _, _ in _versions(world, "raw/a")] == [newest]  # one newer noncurrent version kept
    assert _totals(world) == (2, 2 * (len(DATA) + 1))
    _clean()


def test_locked_versions_keep_their_lock_on_moves_and_are_not_expired(world: World) -> None:
    _versioned(world)
    put(world, "raw/a", DATA)
    put(world, "raw/a", DATA + b"new")
    until = utcnow() + timedelta(days=365)
    with transaction(write=True) as s:
        s.execute(update(ObjectVersion).where(ObjectVersion.bucket_id == world.bucket_id)
                  .values(lock_mode="COMPLIANCE", lock_until=until))
    set_rules(world, [{"id": "old", "filter": {}, "noncurrent_version_transitions": [
        {"noncurrent_days": 1, "storage_class": "STANDARD_IA"}],
        "noncurrent_version_expiration": {"noncurrent_days": 5}}])
    _noncurrent_age(world, 2)
    assert run_now(world.bucket_id).by_action == {"nc_transition": 1}
    with transaction() as s:
        row = s.scalars(select(ObjectVersion).where(ObjectVersion.bucket_id == world.bucket_id)).one()
        assert (row.tier_id, row.lock_mode, row.lock_until) == (world.tiers["infrequent"], "COMPLIANCE", until)
    _noncurrent_age(world, 6)
    summary = run_now(world.bucket_id)
    assert summary.by_action == {} and summary.outcomes["skipped"] == 1
    assert len(_versions(world, "raw/a")) == 1
    _clean()


def test_expired_object_delete_markers_go_when_nothing_else_is_left(world: World) -> None:
    _versioned(world)
    put(world, "raw/a", DATA)
    put(world, "raw/b", DATA)
    with transaction(write=True) as s:
        for key in ("raw/a", "raw/b"):
            versions.delete_key(s, world.bucket_id, key, None)
        only = repository.versions_of_key(s, world.bucket_id, "raw/a")[1]
        # raw/a: nothing but its marker; its bytes go after the commit, as the gateway does it
        gone = versions.delete_key(s, world.bucket_id, "raw/a", only.version_id).blobs
    store.discard(gone)  # type: ignore[arg-type]
    set_rules(world, [{"id": "markers", "filter": {}, "expiration": {"expired_object_delete_marker": True}}])
    assert run_now(world.bucket_id).by_action == {"expire_marker": 1}
    assert _versions(world, "raw/a") == []
    assert [m for _, m, _, _ in _versions(world, "raw/b")] == [True, False]
    with transaction() as s:
        assert s.scalar(select(Object.id).where(Object.bucket_id == world.bucket_id)) is None
    _clean()
