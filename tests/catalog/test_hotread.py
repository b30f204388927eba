"""The GET/HEAD lookup without a session (``catalog.hotread``): the same row the ORM reads, and no stale one."""

from __future__ import annotations

from datetime import UTC

import pytest
from sqlalchemy import update

from tierpilot.catalog import hotread, repository, store
from tierpilot.catalog.models import Bucket, Object
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier
from tierpilot.tiers.repository import spec_of


@pytest.fixture
def bucket(tiers: dict[str, Tier]) -> Bucket:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    user = make_user("hotread-owner", "hotread-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="hotread-test", tier_name="hot-disk")
        s.flush()
        s.expunge(b)
    return b


def _put(bucket: Bucket, tier: Tier, key: str, body: bytes, **meta: str) -> None:
    spec = store.NewObject(tier=spec_of(tier), storage_class="STANDARD", content_type="text/plain", user_metadata=meta,
                           headers={"cache-control": "no-cache"}, tags={"t": "1"})
    store.put_object(bucket, key, iter([body]), spec)


def _lookups(bucket_id: int, key: str) -> list[Object | None]:
    found = [hotread.current(bucket_id, key)]
    if hotread.inline_capable():
        now = hotread.current_nowait(bucket_id, key)
        assert now is not hotread.BUSY
        found.append(now)  # type: ignore[arg-type]
    return found


def test_lookup_reads_every_column_the_orm_reads(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    _put(bucket, tiers["hot-disk"], "a/ü key", b"hello", colour="blue")
    with transaction() as s:
        orm = repository.get_object(s, bucket.id, "a/ü key")
        assert orm is not None
        expected = {col.key: getattr(orm, col.key) for col in Object.__table__.columns}
    for obj in _lookups(bucket.id, "a/ü key"):
        assert obj is not None
        assert {col.key: getattr(obj, col.key) for col in Object.__table__.columns} == expected
        assert obj.last_modified.tzinfo is not None and obj.user_metadata == {"colour": "blue"}


def test_lookup_sees_a_commit_made_after_its_previous_read(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # the inline reader keeps its connection between requests: it must not keep a snapshot with it
    _put(bucket, tiers["hot-disk"], "k", b"one")
    first = _lookups(bucket.id, "k")
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == bucket.id, Object.key == "k").values(etag="changed"))
    assert [o.etag if o else None for o in _lookups(bucket.id, "k")] == ["changed"] * len(first)
    with transaction(write=True) as s:
        repository.delete_object_rows(s, [first[0].id])  # type: ignore[union-attr]
    assert _lookups(bucket.id, "k") == [None] * len(first)


def test_lookup_of_an_absent_key_is_none(bucket: Bucket) -> None:
    assert _lookups(bucket.id, "never-written") == [None] * (2 if hotread.inline_capable() else 1)


def test_empty_json_columns_read_as_new_values_each_time(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    # "{}", "null" and "[]" are made without json.loads on SQLite: still equal to the ORM's, and never shared
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD", content_type="text/plain")
    store.put_object(bucket, "plain", iter([b"x"]), spec)
    with transaction(write=True) as s:
        s.execute(update(Object).where(Object.bucket_id == bucket.id, Object.key == "plain").values(part_sizes=[]))
    with transaction() as s:
        orm = repository.get_object(s, bucket.id, "plain")
        assert orm is not None
        expected = {col.key: getattr(orm, col.key) for col in Object.__table__.columns}
    assert expected["user_metadata"] == {} and expected["part_checksums"] is None and expected["part_sizes"] == []
    first, second = _lookups(bucket.id, "plain")[-1], _lookups(bucket.id, "plain")[-1]
    assert first is not None and second is not None
    assert {col.key: getattr(first, col.key) for col in Object.__table__.columns} == expected
    assert first.last_modified.tzinfo is UTC and first.created_at.tzinfo is UTC
    first.user_metadata["changed"] = "yes"
    first.part_sizes.append(1)  # type: ignore[union-attr]
    assert second.user_metadata == {} and second.part_sizes == []
