"""The usage per bucket and tier the Overview reads: deltas appended by triggers on objects, folded by beat."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from tierpilot.auth.models import User
from tierpilot.catalog import repository, service
from tierpilot.catalog.models import Bucket, Object, ObjectUsage
from tierpilot.kit.migrate import upgrade
from tierpilot.tiers.models import Tier


def _world(session: Session) -> tuple[Tier, Tier, User, Bucket, Bucket]:
    hot = Tier(name=f"hot-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"})
    cold = Tier(name=f"cold-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"})
    owner = User(username=f"u-{uuid.uuid4().hex[:6]}", password_hash="x")
    session.add_all([hot, cold, owner])
    session.flush()
    a = Bucket(name=f"a-{uuid.uuid4().hex[:8]}", owner_id=owner.id, tier_id=hot.id)
    b = Bucket(name=f"b-{uuid.uuid4().hex[:8]}", owner_id=owner.id, tier_id=hot.id)
    repository.add_buckets(session, [a, b])
    return hot, cold, owner, a, b


def _put(session: Session, bucket: Bucket, key: str, size: int) -> None:
    service.record_object(session, bucket.id, key, size=size, etag=f"{size:032x}", tier_id=bucket.tier_id,
                          storage_class="STANDARD", locator=f"{bucket.name}/{key}~{uuid.uuid4().hex}")


def _scanned(session: Session, bucket_ids: list[int]) -> dict[tuple[int, int], tuple[int, int]]:
    """What the deltas must add up to: the objects themselves, grouped."""
    rows = session.execute(select(Object.bucket_id, Object.tier_id, func.sum(Object.size), func.count())
                           .where(Object.bucket_id.in_(bucket_ids)).group_by(Object.bucket_id, Object.tier_id))
    return {(b, t): (int(n), int(c)) for b, t, n, c in rows}


def _summed(session: Session, bucket_ids: list[int]) -> dict[tuple[int, int], tuple[int, int]]:
    out = {}
    for bid in bucket_ids:
        for tier, totals in repository.usage_by_tier(session, bid).items():
            out[(bid, tier)] = totals
    return out


def test_usage_follows_puts_overwrites_moves_and_deletes_and_survives_a_fold(session: Session) -> None:
    hot, cold, owner, a, b = _world(session)
    for i in range(30):
        _put(session, a, f"k{i}", 10 + i)
    _put(session, b, "x", 7)
    _put(session, a, "k0", 1000)  # an overwrite changes the size, not the count
    moved = repository.get_object(session, a.id, "k1")
    assert moved is not None
    assert repository.switch_object(session, moved.id, moved.locator, moved.etag, tier_id=cold.id,
                                    storage_class="STANDARD_IA", locator="moved~1")
    service.remove_objects(session, a.id, ["k2", "k3"])
    session.execute(update(Object).where(Object.bucket_id == a.id).values(last_access_at=func.now()))
    ids = [a.id, b.id]
    assert _summed(session, ids) == _scanned(session, ids)
    assert _summed(session, ids)[(a.id, cold.id)] == (11, 1)

    assert repository.fold_usage(session) > 0
    assert session.scalar(select(func.count()).select_from(ObjectUsage)
                          .where(ObjectUsage.bucket_id.in_(ids))) == 3  # a on hot and cold, b on hot
    assert _summed(session, ids) == _scanned(session, ids)
    rows = {r[0]: r for r in repository.bucket_usage(session, owner.id)}
    assert rows[a.name][3:] == (28, sum(10 + i for i in range(4, 30)) + 1000 + 11)
    assert rows[b.name][3:] == (1, 7)

    service.remove_objects(session, b.id, ["x"])
    repository.fold_usage(session)
    assert repository.usage_by_tier(session, b.id) == {}
    assert session.scalar(select(func.count()).select_from(ObjectUsage).where(ObjectUsage.bucket_id == b.id)) == 0


def test_upgrade_counts_the_objects_already_there(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    upgrade(url, "0020")
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            INSERT INTO users (id, username, password_hash, is_admin, created_at)
                VALUES (1, 'a', 'x', 0, '2026-01-01');
            INSERT INTO tiers (id, name, driver, config, storage_classes, offline, restore_delays, price_ref,
                               min_storage_days, created_at)
                VALUES (1, 't', 'posix', '{}', '[]', 0, '{}', '{}', 0, '2026-01-01'),
                       (2, 'u', 'posix', '{}', '[]', 0, '{}', '{}', 0, '2026-01-01');
            INSERT INTO buckets (id, name, owner_id, tier_id, region, object_count, used_bytes, created_at)
                VALUES (3, 'b3', 1, 1, 'us-east-1', 3, 60, '2026-01-01');
        """)
        for i, (tier, size) in enumerate([(1, 10), (1, 20), (2, 30)]):
            conn.execute("INSERT INTO objects (bucket_id, key, size, etag, content_type, user_metadata, headers, tags, "
                         "tier_id, storage_class, locator, created_at, last_modified) VALUES (3, ?, ?, 'e', 'x', "
                         "'{}', '{}', '{}', ?, 'STANDARD', ?, '2026-01-01', '2026-01-01')", (f"k{i}", size, tier,
                                                                                             f"l{i}"))
    conn.close()
    upgrade(url)
    with sqlite3.connect(path) as conn:
        assert sorted(conn.execute("SELECT tier_id, objects, bytes FROM object_usage WHERE bucket_id = 3")) == [
            (1, 2, 30), (2, 1, 30)]
        indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'objects'")}
        assert "ix_objects_bucket_tier_created_size" in indexes and "ix_objects_bucket_tier_created" not in indexes
        conn.execute("DELETE FROM objects WHERE key = 'k2'")
        assert conn.execute("SELECT sum(objects), sum(bytes) FROM object_usage WHERE tier_id = 2").fetchone() == (0, 0)
    conn.close()
