"""The data path's write order: bytes on the tier first, then the catalog, then the old bytes go."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tierpilot.catalog import store
from tierpilot.catalog.errors import QuotaExceeded
from tierpilot.catalog.models import Bucket, Object
from tierpilot.drivers.base import PutResult
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import transaction
from tierpilot.tiers.models import Tier


@pytest.fixture
def bucket(tiers: dict[str, Tier]) -> Bucket:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    user = make_user("store-owner", "store-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="store-test", tier_name="hot-disk")
        s.flush()
        s.expunge(b)
    return b


def _rows(bucket: Bucket) -> list[tuple[str, str]]:
    with transaction() as s:
        return [tuple(r) for r in s.execute(select(Object.key, Object.locator)  # type: ignore[misc]
                                            .where(Object.bucket_id == bucket.id).order_by(Object.key))]


def _blobs(tier: Tier) -> list[str]:
    return sorted(b.locator for b in driver_for(tier).list())


def _spec(tier: Tier) -> store.NewObject:
    return store.NewObject(tier=tier, storage_class=tier.storage_classes[0])


def test_catalog_is_never_ahead_of_the_bytes(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    hot = tiers["hot-disk"]
    seen: dict[str, object] = {}

    def between_put_and_commit(result: PutResult) -> None:
        seen["blobs"] = _blobs(hot)
        seen["rows"] = _rows(bucket)
        seen["size"] = result.size

    store.put_object(bucket, "k", iter([b"abc", b"def"]), _spec(hot), verify=between_put_and_commit)
    assert len(seen["blobs"]) == 1 and seen["rows"] == [] and seen["size"] == 6  # type: ignore[arg-type]
    assert _rows(bucket) == [("k", seen["blobs"][0])]  # type: ignore[index]


def test_overwrite_deletes_the_old_bytes_only_after_commit(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    hot = tiers["hot-disk"]
    store.put_object(bucket, "k", iter([b"old"]), _spec(hot))
    old_locator = _rows(bucket)[0][1]
    seen: list[list[str]] = []
    store.put_object(bucket, "k", iter([b"new"]), _spec(hot), verify=lambda r: seen.append(_blobs(hot)))
    assert old_locator in seen[0] and len(seen[0]) == 2  # both exist until the catalog switched
    new_locator = _rows(bucket)[0][1]
    assert _blobs(hot) == [new_locator] and new_locator != old_locator


def test_rejected_write_leaves_nothing(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    hot = tiers["hot-disk"]
    store.put_object(bucket, "keep", iter([b"kept"]), _spec(hot))
    before = (_rows(bucket), _blobs(hot))

    def reject(result: PutResult) -> None:
        raise ValueError("digest mismatch")

    with pytest.raises(ValueError):
        store.put_object(bucket, "keep", iter([b"other"]), _spec(hot), verify=reject)
    with pytest.raises(ValueError):
        store.put_object(bucket, "fresh", iter([b"other"]), _spec(hot), verify=reject)
    assert (_rows(bucket), _blobs(hot)) == before


def test_quota_refused_at_commit_removes_the_new_bytes(tiers: dict[str, Tier]) -> None:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    hot = tiers["hot-disk"]
    user = make_user("quota-owner", "quota-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="quota-test", space_bytes=5)
        s.flush()
        s.expunge(b)
    # no size known up front (a streamed body): only the commit can refuse it
    with pytest.raises(QuotaExceeded):
        store.put_object(b, "big", iter([b"0123456789"]), _spec(hot))
    assert _rows(b) == [] and _blobs(hot) == []


def test_multipart_parts_go_after_complete(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    from tierpilot.catalog import service

    hot = tiers["hot-disk"]
    with transaction(write=True) as s:
        upload = service.create_upload(s, bucket, "mp", owner_id=bucket.owner_id, tier_id=hot.id,
                                       storage_class="STANDARD", content_type=None, user_metadata={}, headers={},
                                       checksum_algorithm=None)
        s.flush()
        s.expunge(upload)
    part1, _ = store.upload_part(upload, 1, iter([b"a" * service.MIN_PART_SIZE]))
    part2, _ = store.upload_part(upload, 2, iter([b"b" * 10]))
    obj = store.complete_upload(bucket, upload, [service.RequestedPart(1, part1.etag),
                                                 service.RequestedPart(2, part2.etag)])
    assert obj.size == service.MIN_PART_SIZE + 10 and obj.parts_count == 2
    assert list(driver_for(hot).list_uploads()) == []
    data = b"".join(store.open_object(obj))
    assert data == b"a" * service.MIN_PART_SIZE + b"b" * 10


def test_access_log_batches_last_access(bucket: Bucket, tiers: dict[str, Tier]) -> None:
    obj = store.put_object(bucket, "seen", iter([b"x"]), _spec(tiers["hot-disk"]))
    store.access_log.flush()  # reads noted by earlier tests of this process
    store.access_log.note(obj.id)
    assert store.access_log.flush() == 1
    with transaction() as s:
        assert s.scalar(select(Object.last_access_at).where(Object.id == obj.id)) is not None
    assert store.access_log.flush() == 0


def test_a_round_of_puts_commits_together_and_a_refused_row_fails_only_its_own_request(
        bucket: Bucket, tiers: dict[str, Tier]) -> None:
    """Group commit: rows of concurrent PUTs share one transaction. A precondition that fails refuses that row
    alone; the same key twice in one round ends as the later write, and each request keeps the values it wrote."""
    from tierpilot.catalog.errors import PreconditionFailed
    from tierpilot.catalog.service import Blob

    hot = tiers["hot-disk"]
    store.put_object(bucket, "exists", iter([b"0"]), _spec(hot))

    def row(key: str, etag: str, if_none_match: str | None = None) -> store._Row:
        return store._Row(bucket, key, _spec(hot), f"{bucket.name}/{key}~{etag}", size=1, etag=etag,
                          checksum_value=None, checksum_algorithm=None, if_none_match=if_none_match)

    outcomes = store._record_round([row("a", "e1"), row("exists", "e2", if_none_match="*"), row("a", "e3"),
                                    row("b", "e4")])
    first, refused, second, other = outcomes
    assert isinstance(refused, PreconditionFailed)
    assert not isinstance(first, BaseException) and not isinstance(second, BaseException)
    assert not isinstance(other, BaseException)
    assert first[0].etag == "e1" and first[1] is None  # not changed by the later write of the same key
    assert second[0].etag == "e3" and second[1] == Blob(hot.id, f"{bucket.name}/a~e1")
    assert other[0].etag == "e4"
    rows = dict(_rows(bucket))
    assert rows["a"] == f"{bucket.name}/a~e3" and rows["b"] == f"{bucket.name}/b~e4"
    assert rows["exists"] != f"{bucket.name}/exists~e2"
    with transaction() as s:
        from tierpilot.catalog import repository

        assert repository.usage(s, bucket.id) == (3, 3)  # three keys of one byte each


def test_concurrent_puts_share_rounds_and_each_answer_is_committed_and_readable(
        bucket: Bucket, tiers: dict[str, Tier]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    hot = tiers["hot-disk"]
    drv = driver_for(hot)
    before = (store._rows.rounds, store._rows.items)

    def put(i: int) -> tuple[str, str]:
        obj = store.put_object(bucket, f"k{i:03d}", iter([b"x" * 1024]), _spec(hot))
        # answered: the row is committed (a fresh transaction sees it) and the bytes are readable
        assert dict(_rows(bucket))[f"k{i:03d}"] == obj.locator
        return obj.locator, b"".join(drv.open(obj.locator)).decode()

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(put, range(64)))
    assert all(body == "x" * 1024 for _, body in results)
    rounds, items = store._rows.rounds - before[0], store._rows.items - before[1]
    assert items == 64 and 1 <= rounds <= 64  # on PostgreSQL too (see store._commit_row)


def test_a_refusal_before_writing_takes_no_savepoint_and_one_after_writing_takes_one_per_row(
        tiers: dict[str, Tier]) -> None:
    """A round is written as one plain transaction; a row refused before anything of it is written (a precondition)
    is its error at once. A refusal found after writing (the space reservation the round's rows take the bucket
    past) rolls the round back, and it is written again with a savepoint per row, so the refused row fails alone."""
    from sqlalchemy import event

    from tests.conftest import make_user
    from tierpilot.catalog import repository, service
    from tierpilot.catalog.errors import PreconditionFailed
    from tierpilot.kit.db import get_engine

    hot = tiers["hot-disk"]
    user = make_user("round-owner", "round-password-1")
    with transaction(write=True) as s:
        bucket = service.create_bucket(s, owner_id=int(user["id"]), name="round-test", tier_name="hot-disk",
                                       space_bytes=10)
        s.flush()
        s.expunge(bucket)
    store.put_object(bucket, "there", iter([b"0"]), _spec(hot))
    savepoints: list[str] = []

    def row(key: str, size: int = 1, if_none_match: str | None = None) -> store._Row:
        return store._Row(bucket, key, _spec(hot), f"{bucket.name}/{key}~sp", size=size, etag="e",
                          checksum_value=None, checksum_algorithm=None, if_none_match=if_none_match)

    def note(conn: object, name: str) -> None:
        savepoints.append(name)

    engine = get_engine()
    event.listen(engine, "savepoint", note)
    try:
        plain = store._record_round([row("p1"), row("p2"), row("p3")])
        assert not any(isinstance(o, BaseException) for o in plain) and savepoints == []
        refused = store._record_round([row("q1"), row("there", if_none_match="*"), row("q2")])
        assert isinstance(refused[1], PreconditionFailed) and savepoints == []
        assert not isinstance(refused[0], BaseException) and not isinstance(refused[2], BaseException)
        # 6 bytes used of 10: 2 more fit, 3 more do not
        over = store._record_round([row("r1", size=2), row("r2", size=3)])
    finally:
        event.remove(engine, "savepoint", note)
    assert not isinstance(over[0], BaseException) and isinstance(over[1], QuotaExceeded) and len(savepoints) == 2
    rows = dict(_rows(bucket))
    assert {k for k in rows if k[0] in "pqr"} == {"p1", "p2", "p3", "q1", "q2", "r1"}
    with transaction() as s:
        assert repository.usage(s, bucket.id) == (7, 8)
