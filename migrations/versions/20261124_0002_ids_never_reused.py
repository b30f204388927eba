"""ids are never reused: AUTOINCREMENT on every SQLite table with a surrogate integer id

SQLite hands a new row the largest id in the table plus one, so deleting the newest bucket (user, key,
object, upload, …) and creating another gave the new row the old id, and anything still holding the old
id (the gateway's bucket cache, a queued task, an API client's URL) reached the new row: the gateway let
a bucket's former owner read a new owner's objects. With AUTOINCREMENT SQLite never hands out an id
again. PostgreSQL's sequences never go back: nothing to do there.

SQLite cannot add AUTOINCREMENT to a table, so each table is recreated (batch mode: copy, drop, rename)
with foreign-key enforcement off meanwhile, since dropping a referenced table would otherwise run its
ON DELETE actions (upload parts are deleted with their upload); the copy keeps every id, and the check
at the end refuses to commit a dangling reference. Ids of rows deleted before this revision, above the
largest id left, can still come back once.

Later batch migrations of these tables on SQLite must pass ``table_kwargs={"sqlite_autoincrement": True}``
(reflection does not see the keyword): tests/catalog/test_ids.py checks every table at head.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24 20:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# every table whose primary key is one surrogate integer id (parents before children)
TABLES = (
    "capacity_pools", "tiers", "users", "access_keys", "api_tokens", "buckets", "notifications",
    "pricing_scenarios", "restore_batches", "lifecycle_moves", "multipart_uploads", "objects", "restore_items",
    "upload_parts",
)


def _recreate(autoincrement: bool) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    raw = bind.connection.dbapi_connection
    assert raw is not None
    # PRAGMA foreign_keys is ignored inside a transaction: end Alembic's (what ran before is kept), switch
    # enforcement off, and do the work in a transaction of our own, which Alembic then commits as its own
    raw.execute("COMMIT")
    raw.execute("PRAGMA foreign_keys=OFF")
    raw.execute("BEGIN IMMEDIATE")
    try:
        for table in TABLES:
            with op.batch_alter_table(table, recreate="always",
                                      table_kwargs={"sqlite_autoincrement": autoincrement}):
                pass
        dangling = raw.execute("PRAGMA foreign_key_check").fetchall()
        if dangling:
            raise RuntimeError(f"foreign keys dangling after recreating the tables: {dangling[:5]}")
    except BaseException:
        raw.execute("ROLLBACK")
        raw.execute("PRAGMA foreign_keys=ON")
        raw.execute("BEGIN")
        raise
    raw.execute("COMMIT")
    raw.execute("PRAGMA foreign_keys=ON")
    raw.execute("BEGIN IMMEDIATE")


def upgrade() -> None:
    _recreate(True)


def downgrade() -> None:
    _recreate(False)
