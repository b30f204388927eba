"""spend: restores, lifecycle charges and deleted-object storage in actual spend (issue 17)

The catalog's history of stored bytes that left it (``storage_history``, owned by spend) is written by
triggers on ``objects`` and ``object_versions``: every path that deletes, overwrites or moves an object
records the span its bytes were billed, in the same transaction, without code in the catalog.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import tierpilot.kit.db

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("bucket_id, object_id, version_pk, key, tier_id, storage_class, locator, size, stored_from, ended_at, "
           "reason")
# a blob still held as another version of the key is still stored (kept as noncurrent, or promoted back)
IN_VERSIONS = ("EXISTS (SELECT 1 FROM object_versions v WHERE v.bucket_id = OLD.bucket_id AND v.key = OLD.key "
               "AND v.locator = OLD.locator)")
IN_OBJECTS = ("EXISTS (SELECT 1 FROM objects o WHERE o.bucket_id = OLD.bucket_id AND o.key = OLD.key "
              "AND o.locator = OLD.locator)")
# since when the bytes were on their tier: a lifecycle move keeps created_at, so the last move's end
ENTERED = ("COALESCE((SELECT MAX(h.ended_at) FROM storage_history h WHERE h.bucket_id = OLD.bucket_id "
           "AND h.key = OLD.key AND h.object_id = OLD.id AND h.reason = 'moved' AND h.ended_at >= OLD.created_at), "
           "OLD.created_at)")
ENTERED_VERSION = ("COALESCE((SELECT MAX(h.ended_at) FROM storage_history h WHERE h.bucket_id = OLD.bucket_id "
                   "AND h.key = OLD.key AND h.version_pk = OLD.id AND h.reason = 'moved' "
                   "AND h.ended_at >= OLD.created_at), OLD.created_at)")
FORGET = "DELETE FROM storage_history WHERE bucket_id = NEW.bucket_id AND key = NEW.key AND locator = NEW.locator"

SQLITE_NOW = "strftime('%Y-%m-%d %H:%M:%f000', 'now')"  # SQLAlchemy's text form: microseconds, UTC
SQLITE = [
    f"""CREATE TRIGGER storage_history_object_deleted AFTER DELETE ON objects WHEN NOT {IN_VERSIONS}
BEGIN INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, OLD.id, NULL, OLD.key, OLD.tier_id,
OLD.storage_class, OLD.locator, OLD.size, {ENTERED}, {SQLITE_NOW}, 'deleted'); END""",
    f"""CREATE TRIGGER storage_history_object_replaced AFTER UPDATE OF locator, tier_id ON objects
WHEN (OLD.locator <> NEW.locator OR OLD.tier_id <> NEW.tier_id) AND NOT {IN_VERSIONS}
BEGIN INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, OLD.id, NULL, OLD.key, OLD.tier_id,
OLD.storage_class, OLD.locator, OLD.size, {ENTERED}, {SQLITE_NOW},
CASE WHEN NEW.created_at = OLD.created_at THEN 'moved' ELSE 'replaced' END); END""",
    f"""CREATE TRIGGER storage_history_version_deleted AFTER DELETE ON object_versions
WHEN OLD.tier_id IS NOT NULL AND NOT {IN_OBJECTS}
BEGIN INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, NULL, OLD.id, OLD.key, OLD.tier_id,
OLD.storage_class, OLD.locator, OLD.size, {ENTERED_VERSION}, {SQLITE_NOW}, 'deleted'); END""",
    f"""CREATE TRIGGER storage_history_version_moved AFTER UPDATE OF locator, tier_id ON object_versions
WHEN OLD.tier_id IS NOT NULL AND (OLD.locator <> NEW.locator OR OLD.tier_id <> NEW.tier_id) AND NOT {IN_OBJECTS}
BEGIN INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, NULL, OLD.id, OLD.key, OLD.tier_id,
OLD.storage_class, OLD.locator, OLD.size, {ENTERED_VERSION}, {SQLITE_NOW}, 'moved'); END""",
    f"CREATE TRIGGER storage_history_object_back AFTER INSERT ON objects BEGIN {FORGET}; END",
    f"CREATE TRIGGER storage_history_version_back AFTER INSERT ON object_versions BEGIN {FORGET}; END",
]

POSTGRESQL = [
    f"""CREATE FUNCTION storage_history_object_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE why text := 'deleted';
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD.locator = NEW.locator AND OLD.tier_id = NEW.tier_id THEN RETURN NULL; END IF;
    why := CASE WHEN NEW.created_at = OLD.created_at THEN 'moved' ELSE 'replaced' END;
  END IF;
  IF {IN_VERSIONS} THEN RETURN NULL; END IF;
  INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, OLD.id, NULL, OLD.key, OLD.tier_id,
    OLD.storage_class, OLD.locator, OLD.size, {ENTERED}, now(), why);
  RETURN NULL;
END $$""",
    f"""CREATE FUNCTION storage_history_version_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE why text := 'deleted';
BEGIN
  IF TG_OP = 'UPDATE' THEN
    IF OLD.locator = NEW.locator AND OLD.tier_id = NEW.tier_id THEN RETURN NULL; END IF;
    why := 'moved';
  END IF;
  IF OLD.tier_id IS NULL OR {IN_OBJECTS} THEN RETURN NULL; END IF;
  INSERT INTO storage_history ({COLUMNS}) VALUES (OLD.bucket_id, NULL, OLD.id, OLD.key, OLD.tier_id,
    OLD.storage_class, OLD.locator, OLD.size, {ENTERED_VERSION}, now(), why);
  RETURN NULL;
END $$""",
    f"""CREATE FUNCTION storage_history_back() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN {FORGET}; RETURN NULL; END $$""",
    "CREATE TRIGGER storage_history_object_deleted AFTER DELETE ON objects FOR EACH ROW "
    "EXECUTE FUNCTION storage_history_object_ended()",
    "CREATE TRIGGER storage_history_object_replaced AFTER UPDATE OF locator, tier_id ON objects FOR EACH ROW "
    "WHEN (OLD.locator IS DISTINCT FROM NEW.locator OR OLD.tier_id IS DISTINCT FROM NEW.tier_id) "
    "EXECUTE FUNCTION storage_history_object_ended()",
    "CREATE TRIGGER storage_history_version_deleted AFTER DELETE ON object_versions FOR EACH ROW "
    "EXECUTE FUNCTION storage_history_version_ended()",
    "CREATE TRIGGER storage_history_version_moved AFTER UPDATE OF locator, tier_id ON object_versions FOR EACH ROW "
    "WHEN (OLD.locator IS DISTINCT FROM NEW.locator OR OLD.tier_id IS DISTINCT FROM NEW.tier_id) "
    "EXECUTE FUNCTION storage_history_version_ended()",
    "CREATE TRIGGER storage_history_object_back AFTER INSERT ON objects FOR EACH ROW "
    "EXECUTE FUNCTION storage_history_back()",
    "CREATE TRIGGER storage_history_version_back AFTER INSERT ON object_versions FOR EACH ROW "
    "EXECUTE FUNCTION storage_history_back()",
]
TRIGGERS = {"storage_history_object_deleted": "objects", "storage_history_object_replaced": "objects",
            "storage_history_version_deleted": "object_versions", "storage_history_version_moved": "object_versions",
            "storage_history_object_back": "objects",
            "storage_history_version_back": "object_versions"}
FUNCTIONS = ("storage_history_object_ended", "storage_history_version_ended", "storage_history_back")


def upgrade() -> None:
    op.create_table(
        "storage_history",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("object_id", sa.BigInteger(), nullable=True),
        sa.Column("version_pk", sa.BigInteger(), nullable=True),
        sa.Column("key", sa.String(1024).with_variant(sa.String(1024, collation="C"), "postgresql"), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("storage_class", sa.String(32), nullable=False),
        sa.Column("locator", sa.String(2048), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("stored_from", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("ended_at", tierpilot.kit.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column("reason", sa.String(8), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_storage_history")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_storage_history_bucket_id_ended_at", "storage_history", ["bucket_id", "ended_at"])
    op.create_index("ix_storage_history_bucket_id_key", "storage_history", ["bucket_id", "key", "ended_at"])
    for statement in SQLITE if op.get_bind().dialect.name == "sqlite" else POSTGRESQL:
        op.execute(statement)


def downgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name, table in TRIGGERS.items():
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgresql else ""))
    if postgresql:
        for function in FUNCTIONS:
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    op.drop_index("ix_storage_history_bucket_id_key", table_name="storage_history")
    op.drop_index("ix_storage_history_bucket_id_ended_at", table_name="storage_history")
    op.drop_table("storage_history")
