"""A COMMIT that fails without an answer one can trust (on SQLite: an I/O error reported by the commit; on
PostgreSQL: a connection lost at that moment) is looked up, not assumed: a write found committed is answered as
written and its bytes stay; one not found is refused with a retryable error and its blob stays for fsck, for
the row may point at it; nothing is retried or deleted on a guess."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.exc import OperationalError

from tierpilot.catalog import repository, store
from tierpilot.catalog.errors import CommitUnresolved
from tierpilot.catalog.models import Bucket
from tierpilot.drivers.registry import driver_for
from tierpilot.kit.db import get_engine, transaction
from tierpilot.tiers.models import Tier
from tierpilot.tiers.repository import spec_of


@pytest.fixture
def bucket(tiers: dict[str, Tier]) -> Bucket:
    from tests.conftest import make_user
    from tierpilot.catalog import service

    user = make_user("commit-owner", "commit-password-1")
    with transaction(write=True) as s:
        b = service.create_bucket(s, owner_id=int(user["id"]), name="commit-unknown", tier_name="hot-disk")
        s.flush()
        s.expunge(b)
    return b


@pytest.fixture
def failing_commits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Queue "after" (the COMMIT happens, then fails) or "before" (it never happens, and fails) for the next
    COMMITs of transactions that wrote objects."""
    queued: list[str] = []
    dialect = type(get_engine().dialect)
    real = dialect.do_commit

    def do_commit(self: object, dbapi_connection: object) -> None:
        mode = queued.pop(0) if queued else None
        if mode is None:
            real(self, dbapi_connection)  # type: ignore[arg-type]
            return
        if mode == "after":
            real(self, dbapi_connection)  # type: ignore[arg-type]
        else:
            dbapi_connection.rollback()  # type: ignore[attr-defined]
        raise OperationalError("COMMIT", {}, Exception(f"the commit's answer was lost ({mode})"))

    monkeypatch.setattr(dialect, "do_commit", do_commit)
    yield queued
    queued.clear()


def _blob_exists(tiers: dict[str, Tier], locator: str) -> bool:
    try:
        b"".join(driver_for(spec_of(tiers["hot-disk"])).open(locator, 0, None))
        return True
    except Exception:  # noqa: BLE001
        return False


def test_a_write_whose_commit_happened_unanswered_is_answered_and_its_bytes_stay(
        bucket: Bucket, tiers: dict[str, Tier], failing_commits: list[str]) -> None:
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD")
    store.put_object(bucket, "k", iter([b"first"]), spec)
    failing_commits.append("after")
    obj = store.put_object(bucket, "k", iter([b"second"]), spec)  # an overwrite whose answer was lost
    with transaction() as s:
        row = repository.get_object(s, bucket.id, "k")
        assert row is not None and row.locator == obj.locator
    assert b"".join(store.open_object(row)) == b"second"


def test_a_write_whose_commit_did_not_happen_is_refused_retryably_and_the_old_bytes_stay(
        bucket: Bucket, tiers: dict[str, Tier], failing_commits: list[str]) -> None:
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD")
    first = store.put_object(bucket, "k2", iter([b"first"]), spec)
    failing_commits.append("before")
    with pytest.raises(CommitUnresolved) as refused:
        store.put_object(bucket, "k2", iter([b"second"]), spec)
    assert refused.value.s3_status == 503
    with transaction() as s:
        row = repository.get_object(s, bucket.id, "k2")
        assert row is not None and row.locator == first.locator
    assert b"".join(store.open_object(row)) == b"first"


def test_a_round_whose_commit_happened_unanswered_is_not_retried_row_by_row(
        bucket: Bucket, tiers: dict[str, Tier], failing_commits: list[str]) -> None:
    """Retrying the rows of a round that did commit would find each row pointing at its own new blob and delete
    that blob as the one replaced."""
    spec = store.NewObject(tier=spec_of(tiers["hot-disk"]), storage_class="STANDARD")
    rows = []
    for key in ("r1", "r2"):
        store.put_object(bucket, key, iter([b"old " + key.encode()]), spec)
        locator = store.service.new_locator(bucket.name, key)
        result = driver_for(spec.tier).put(locator, iter([b"new " + key.encode()]))
        rows.append(store._Row(bucket, key, spec, locator, size=result.size, etag=result.md5_hex,
                               checksum_value=None, checksum_algorithm=None))
    failing_commits.append("after")
    outcomes = store._record_round(rows)
    assert all(not isinstance(o, BaseException) for o in outcomes), outcomes
    for row in rows:
        with transaction() as s:
            current = repository.get_object(s, bucket.id, row.key)
            assert current is not None and current.locator == row.locator
        assert _blob_exists(tiers, row.locator)
        assert b"".join(store.open_object(current)) == b"new " + row.key.encode()
