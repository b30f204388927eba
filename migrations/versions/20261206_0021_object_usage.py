"""catalog: usage per bucket and tier kept by triggers (the Overview reads a few rows, not every object); the
due-date index covers sizes (spend sums a bucket's stored bytes from the index alone)

``object_usage`` holds signed deltas (objects, bytes) per bucket and tier; their sums are the usage of the
current objects. Triggers on ``objects`` append a delta for every statement (PostgreSQL: one row per bucket and
tier a statement touched, from its transition tables) or row (SQLite) that adds, removes, resizes or moves an
object. Writers only append, so concurrent PUTs never wait for each other on a summary row; a fold
(``catalog.repository.fold_usage``, beat's ``catalog.fold_usage``) replaces the deltas by their sums. The upgrade
fills the table from the objects already there.

``ix_objects_bucket_tier_created`` (bucket_id, tier_id, created_at) becomes ``ix_objects_bucket_tier_created_size``
with ``size`` added: spend's grouped sums of a bucket's objects by tier, creation time and size
(``catalog.repository.stored_totals``) then read the index only; at 10 M objects PostgreSQL otherwise scanned the
whole table for a bucket of 1 M. The lifecycle's due scans read the same ranges as before.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = "bucket_id, tier_id, objects, bytes"
SQLITE = [
    f"CREATE TRIGGER object_usage_inserted AFTER INSERT ON objects BEGIN INSERT INTO object_usage ({COLUMNS}) "
    "VALUES (NEW.bucket_id, NEW.tier_id, 1, NEW.size); END",
    f"CREATE TRIGGER object_usage_deleted AFTER DELETE ON objects BEGIN INSERT INTO object_usage ({COLUMNS}) "
    "VALUES (OLD.bucket_id, OLD.tier_id, -1, -OLD.size); END",
    "CREATE TRIGGER object_usage_updated AFTER UPDATE OF bucket_id, tier_id, size ON objects "
    "WHEN OLD.bucket_id <> NEW.bucket_id OR OLD.tier_id <> NEW.tier_id OR OLD.size <> NEW.size "
    f"BEGIN INSERT INTO object_usage ({COLUMNS}) VALUES (OLD.bucket_id, OLD.tier_id, -1, -OLD.size), "
    "(NEW.bucket_id, NEW.tier_id, 1, NEW.size); END",
]
# statement triggers: a batch of 1,000 rows appends one delta per bucket and tier, not 1,000
POSTGRESQL = [
    f"""CREATE FUNCTION object_usage_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO object_usage ({COLUMNS}) SELECT bucket_id, tier_id, count(*), sum(size) FROM new_rows
      GROUP BY bucket_id, tier_id;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO object_usage ({COLUMNS}) SELECT bucket_id, tier_id, -count(*), -sum(size) FROM old_rows
      GROUP BY bucket_id, tier_id;
  ELSE
    INSERT INTO object_usage ({COLUMNS}) SELECT bucket_id, tier_id, sum(n), sum(b) FROM (
        SELECT bucket_id, tier_id, 1 AS n, size AS b FROM new_rows
        UNION ALL SELECT bucket_id, tier_id, -1, -size FROM old_rows) d
      GROUP BY bucket_id, tier_id HAVING sum(n) <> 0 OR sum(b) <> 0;
  END IF;
  RETURN NULL;
END $$""",
    "CREATE TRIGGER object_usage_inserted AFTER INSERT ON objects REFERENCING NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION object_usage_changed()",
    "CREATE TRIGGER object_usage_deleted AFTER DELETE ON objects REFERENCING OLD TABLE AS old_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION object_usage_changed()",
    "CREATE TRIGGER object_usage_updated AFTER UPDATE ON objects REFERENCING OLD TABLE AS old_rows "
    "NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION object_usage_changed()",
]
TRIGGERS = ("object_usage_inserted", "object_usage_deleted", "object_usage_updated")


def upgrade() -> None:
    op.create_table(
        "object_usage",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("bucket_id", sa.Integer(), nullable=False),
        sa.Column("tier_id", sa.Integer(), nullable=False),
        sa.Column("objects", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_object_usage")),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_object_usage_bucket_id_tier_id", "object_usage", ["bucket_id", "tier_id"])
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        # the fill and the triggers see the same rows: no write may slip between them
        op.execute("LOCK TABLE objects IN SHARE ROW EXCLUSIVE MODE")
    op.execute(f"INSERT INTO object_usage ({COLUMNS}) SELECT bucket_id, tier_id, count(*), sum(size) FROM objects "
               "GROUP BY bucket_id, tier_id")
    for statement in POSTGRESQL if postgresql else SQLITE:
        op.execute(statement)
    op.create_index("ix_objects_bucket_tier_created_size", "objects", ["bucket_id", "tier_id", "created_at", "size"])
    op.drop_index("ix_objects_bucket_tier_created", table_name="objects")


def downgrade() -> None:
    op.create_index("ix_objects_bucket_tier_created", "objects", ["bucket_id", "tier_id", "created_at"])
    op.drop_index("ix_objects_bucket_tier_created_size", table_name="objects")
    postgresql = op.get_bind().dialect.name == "postgresql"
    for name in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON objects" if postgresql else ""))
    if postgresql:
        op.execute("DROP FUNCTION IF EXISTS object_usage_changed()")
    op.drop_index("ix_object_usage_bucket_id_tier_id", table_name="object_usage")
    op.drop_table("object_usage")
