"""PutObject's catalog row in a bucket without versioning, written by Core statements: the totals and
the blobs stay exact when many writers race for one new key (on PostgreSQL their inserts really collide, and
a writer that lost the insert once deadlocked with the winner's next writer); in a versioned bucket every
racing write stays, as the current version or a noncurrent one."""

from __future__ import annotations

import threading

import pytest

from tierpilot.catalog import repository, store
from tierpilot.catalog.models import Bucket
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier
from tierpilot.tiers.repository import spec_of

WRITERS = 8


@pytest.fixture
def bucket(tiers: dict[str, Tier]) -> Bucket:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    user = make_user("race-owner", "race-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="race-test", tier_name="hot-disk")
        s.flush()
        s.expunge(b)
    return b


def _race(bucket: Bucket, tiers: dict[str, Tier]) -> list[str]:
    """WRITERS threads put the same new key at once; their ETags (every write must succeed)."""
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD")
    start = threading.Barrier(WRITERS)
    answers: list[str] = []
    errors: list[BaseException] = []

    def writer(i: int) -> None:
        body = bytes([i]) * (100 + i)
        start.wait()
        try:
            answers.append(store.put_object(bucket, "k", iter([body]), spec).etag)
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(answers) == WRITERS
    return answers


def test_writers_racing_for_a_new_key_leave_one_row_exact_totals_and_one_blob(bucket: Bucket,
                                                                              tiers: dict[str, Tier]) -> None:
    _race(bucket, tiers)
    with transaction() as s:
        obj = repository.get_object(s, bucket.id, "k")
        assert obj is not None
        assert repository.usage(s, bucket.id) == (1, obj.size)
    assert [b.locator for b in driver_for(tiers["hot-disk"]).list()] == [obj.locator]
    assert b"".join(store.open_object(obj)) == bytes([obj.size - 100]) * obj.size


def test_writers_racing_in_a_versioned_bucket_each_leave_a_version(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    from tierpilot.catalog import versions

    with transaction(write=True) as s:
        versions.set_versioning(s, bucket.id, "Enabled")
    _race(bucket, tiers)
    with transaction() as s:
        current = repository.get_object(s, bucket.id, "k")
        older = repository.versions_of_key(s, bucket.id, "k")
        assert current is not None and len(older) == WRITERS - 1
        assert len({current.version_id, *(v.version_id for v in older)}) == WRITERS
        assert repository.usage(s, bucket.id) == (WRITERS, current.size + sum(v.size for v in older))
    assert len(list(driver_for(tiers["hot-disk"]).list())) == WRITERS
