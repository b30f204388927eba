"""Ids are never reused, on either database: what a cache, a queued task or a client still holds of a
deleted row can never reach a later row (the gateway's bucket cache let a former owner read a new owner's
objects on SQLite, which handed the deleted bucket's id to the next bucket)."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from sqlalchemy import Integer, delete
from sqlalchemy.orm import Session

from tierpilot.app.models import Base
from tierpilot.auth.models import User
from tierpilot.catalog import service
from tierpilot.catalog.models import Bucket, MultipartUpload, Object
from tierpilot.kit.migrate import upgrade
from tierpilot.tiers.models import Tier


def _surrogate_id_tables() -> list[str]:
    """Tables whose primary key is one integer column of their own (not a reference to another table)."""
    out = []
    for table in Base.metadata.sorted_tables:
        pk = list(table.primary_key.columns)
        if len(pk) == 1 and isinstance(pk[0].type, Integer) and not pk[0].foreign_keys:
            out.append(table.name)
    return out


def test_deleted_rows_ids_are_not_handed_out_again(session: Session) -> None:
    """The newest bucket, object and upload deleted: the next ones get new ids (SQLite reused them)."""
    tier = Tier(name=f"ids-{uuid.uuid4().hex[:6]}", driver="posix", config={"path": "/nonexistent"},
                storage_classes=["STANDARD"])
    user = User(username=f"ids-{uuid.uuid4().hex[:6]}", password_hash="x")
    session.add_all([tier, user])
    session.flush()
    seen: dict[str, list[int]] = {"buckets": [], "objects": [], "uploads": []}
    for round_ in range(2):
        bucket = Bucket(name=f"ids-{round_}-{uuid.uuid4().hex[:6]}", owner_id=user.id, tier_id=tier.id,
                        object_count=0, used_bytes=0)
        session.add(bucket)
        session.flush()
        obj, _ = service.record_object(session, bucket.id, "k", size=1, etag="e", tier_id=tier.id,
                                       storage_class="STANDARD", locator="l")
        upload = service.create_upload(session, bucket, "k", owner_id=user.id, tier_id=tier.id,
                                       storage_class="STANDARD", content_type=None, user_metadata={}, headers={},
                                       checksum_algorithm=None)
        seen["buckets"].append(bucket.id)
        seen["objects"].append(obj.id)
        seen["uploads"].append(upload.id)
        session.execute(delete(MultipartUpload).where(MultipartUpload.id == upload.id))
        session.execute(delete(Object).where(Object.id == obj.id))
        session.execute(delete(Bucket).where(Bucket.id == bucket.id))
        session.flush()
        session.expunge_all()
    for name, (first, second) in seen.items():
        assert second > first, f"{name}: id {first} was handed out again"


def test_every_surrogate_id_is_autoincrement_on_sqlite(tmp_path: Path) -> None:
    """At head, SQLite never reuses an id of any table (a later batch migration that recreates a table must
    pass table_kwargs={"sqlite_autoincrement": True}, since reflection drops the keyword)."""
    path = tmp_path / "head.db"
    upgrade(f"sqlite:///{path}")
    with sqlite3.connect(path) as conn:
        ddl = {name: sql for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")}
    missing = [t for t in _surrogate_id_tables() if "AUTOINCREMENT" not in ddl[t]]
    assert not missing, f"tables that would reuse ids on SQLite: {missing}"


def test_migration_keeps_rows_ids_and_cascading_children(tmp_path: Path) -> None:
    """An existing installation upgraded to head keeps every row and id (upload parts survive their upload
    table being recreated) and never hands out an id below the largest one it had."""
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    upgrade(url, "0001")
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            INSERT INTO users (id, username, password_hash, is_admin, created_at)
                VALUES (1, 'a', 'x', 0, '2026-01-01'), (5, 'b', 'x', 0, '2026-01-01');
            INSERT INTO tiers (id, name, driver, config, storage_classes, offline, restore_delays, price_ref,
                               min_storage_days, created_at)
                VALUES (1, 't', 'posix', '{}', '[]', 0, '{}', '{}', 0, '2026-01-01');
            INSERT INTO buckets (id, name, owner_id, tier_id, region, object_count, used_bytes, created_at)
                VALUES (3, 'b3', 1, 1, 'us-east-1', 0, 0, '2026-01-01'),
                       (7, 'b7', 5, 1, 'us-east-1', 0, 0, '2026-01-01');
            INSERT INTO multipart_uploads (id, upload_id, bucket_id, key, owner_id, tier_id, storage_class, locator,
                                           content_type, user_metadata, headers, initiated_at)
                VALUES (9, 'u9', 7, 'k', 5, 1, 'STANDARD', 'l', 'c', '{}', '{}', '2026-01-01');
            INSERT INTO upload_parts (id, upload_id, part_number, size, etag, locator, extra, last_modified)
                VALUES (11, 9, 1, 5, 'e', 'l', '{}', '2026-01-01');
        """)
    conn.close()
    upgrade(url)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        assert conn.execute("SELECT id, name FROM buckets ORDER BY id").fetchall() == [(3, "b3"), (7, "b7")]
        assert conn.execute("SELECT id, upload_id FROM upload_parts").fetchall() == [(11, 9)]
        assert conn.execute("SELECT id FROM users ORDER BY id").fetchall() == [(1,), (5,)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("DELETE FROM upload_parts")
        conn.execute("DELETE FROM multipart_uploads")
        conn.execute("DELETE FROM buckets WHERE id = 7")
        conn.execute("INSERT INTO buckets (name, owner_id, tier_id, region, object_count, used_bytes, created_at) "
                     "VALUES ('new', 1, 1, 'us-east-1', 0, 0, '2026-01-02')")
        assert conn.execute("SELECT id FROM buckets WHERE name = 'new'").fetchone() == (8,)
    conn.close()
